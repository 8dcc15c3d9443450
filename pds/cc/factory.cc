#include "pds/cc/factory.h"

#include <array>

namespace uet::pds::cc {
namespace {

using Maker = Result<std::unique_ptr<Controller>> (*)(const ControllerConfig&);

Result<std::unique_ptr<Controller>> MakeFixed(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(FixedWindow fw, FixedWindow::Create(config.fixed));
  return std::unique_ptr<Controller>(std::make_unique<FixedWindow>(std::move(fw)));
}

struct Entry {
  std::string_view name;
  Maker make;
};

// One row per controller. Keep the error text in MakeController in step.
constexpr std::array kControllers = {
    Entry{FixedWindow::kName, &MakeFixed},
};

constexpr std::array<std::string_view, kControllers.size()> kNames = [] {
  std::array<std::string_view, kControllers.size()> names{};
  for (size_t i = 0; i < kControllers.size(); ++i) names[i] = kControllers[i].name;
  return names;
}();

}  // namespace

std::span<const std::string_view> ControllerNames() { return kNames; }

Result<std::unique_ptr<Controller>> MakeController(std::string_view name,
                                                   const ControllerConfig& config) {
  for (const Entry& e : kControllers) {
    if (e.name == name) return e.make(config);
  }
  return Error::InvalidArgument("pds.cc", "controller name (known: fixed)");
}

}  // namespace uet::pds::cc
