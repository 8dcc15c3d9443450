#include "pds/cc/factory.h"

#include <array>

#include "pds/cc/nscc_rccc.h"

namespace uet::pds::cc {
namespace {

using Maker = Result<std::unique_ptr<Controller>> (*)(const ControllerConfig&);
using ReceiverMaker = Result<std::unique_ptr<ReceiverCc>> (*)(const ControllerConfig&);

Result<std::unique_ptr<Controller>> MakeFixed(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(FixedWindow fw, FixedWindow::Create(config.fixed));
  return std::unique_ptr<Controller>(std::make_unique<FixedWindow>(std::move(fw)));
}

Result<std::unique_ptr<Controller>> MakeNscc(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(Nscc c, Nscc::Create(config.nscc));
  return std::unique_ptr<Controller>(std::make_unique<Nscc>(std::move(c)));
}

Result<std::unique_ptr<Controller>> MakeRccc(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(RcccSender c, RcccSender::Create(config.rccc));
  return std::unique_ptr<Controller>(std::make_unique<RcccSender>(std::move(c)));
}

Result<std::unique_ptr<Controller>> MakeNsccRccc(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(NsccRccc c, NsccRccc::Create(config.nscc, config.rccc));
  return std::unique_ptr<Controller>(std::make_unique<NsccRccc>(std::move(c)));
}

Result<std::unique_ptr<ReceiverCc>> NoReceiver(const ControllerConfig&) {
  return std::unique_ptr<ReceiverCc>();
}

Result<std::unique_ptr<ReceiverCc>> MakeCreditReceiver(const ControllerConfig& config) {
  UET_ASSIGN_OR_RETURN(RcccReceiver r, RcccReceiver::Create(config.rccc));
  return std::unique_ptr<ReceiverCc>(std::make_unique<RcccReceiver>(std::move(r)));
}

struct Entry {
  std::string_view name;
  Maker make;
  ReceiverMaker make_receiver;
};

// One row per controller. Keep the error text in UnknownName in step.
constexpr std::array kControllers = {
    Entry{FixedWindow::kName, &MakeFixed, &NoReceiver},
    Entry{Nscc::kName, &MakeNscc, &NoReceiver},
    Entry{RcccSender::kName, &MakeRccc, &MakeCreditReceiver},
    Entry{NsccRccc::kName, &MakeNsccRccc, &MakeCreditReceiver},
};

constexpr std::array<std::string_view, kControllers.size()> kNames = [] {
  std::array<std::string_view, kControllers.size()> names{};
  for (size_t i = 0; i < kControllers.size(); ++i) names[i] = kControllers[i].name;
  return names;
}();

// The table's row named `name`, or null.
const Entry* FindEntry(std::string_view name) {
  for (const Entry& e : kControllers) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// Keep the list in step with the table.
Error UnknownName() {
  return Error::InvalidArgument("pds.cc", "controller name (known: fixed, nscc, rccc, nscc+rccc)");
}

// MakeFactory's Factory: one row of the table and its settings.
class NamedFactory final : public Factory {
 public:
  NamedFactory(const Entry& entry, const ControllerConfig& config)
      : entry_(entry), config_(config) {}

  Result<std::unique_ptr<Controller>> MakeController() const override {
    return entry_.make(config_);
  }
  Result<std::unique_ptr<ReceiverCc>> MakeReceiver() const override {
    return entry_.make_receiver(config_);
  }
  uint32_t CreditQuantumBytes() const override { return config_.rccc.quantum_bytes; }

 private:
  const Entry& entry_;  // a row of kControllers: static storage
  ControllerConfig config_;
};

}  // namespace

std::span<const std::string_view> ControllerNames() { return kNames; }

Result<std::unique_ptr<Controller>> MakeController(std::string_view name,
                                                   const ControllerConfig& config) {
  const Entry* e = FindEntry(name);
  if (e == nullptr) return UnknownName();
  return e->make(config);
}

Result<std::unique_ptr<ReceiverCc>> MakeReceiverCc(std::string_view name,
                                                   const ControllerConfig& config) {
  const Entry* e = FindEntry(name);
  if (e == nullptr) return UnknownName();
  return e->make_receiver(config);
}

Result<std::shared_ptr<const Factory>> MakeFactory(std::string_view name,
                                                   const ControllerConfig& config) {
  const Entry* e = FindEntry(name);
  if (e == nullptr) return UnknownName();
  auto factory = std::make_shared<const NamedFactory>(*e, config);
  // One of each now: a config its controller refuses fails here, not in an engine.
  if (auto c = factory->MakeController(); !c.ok()) return c.error();
  if (auto r = factory->MakeReceiver(); !r.ok()) return r.error();
  return std::shared_ptr<const Factory>(std::move(factory));
}

std::shared_ptr<const Factory> DefaultFactory() {
  static const std::shared_ptr<const Factory> fixed =
      MakeFactory(FixedWindow::kName, ControllerConfig{}).value();
  return fixed;
}

}  // namespace uet::pds::cc
