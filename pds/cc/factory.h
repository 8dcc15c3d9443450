// Controllers chosen by name (picoquic style), so the provider and the
// simulator never name NSCC or RCCC: a new algorithm adds its config to
// ControllerConfig and one row to the table in factory.cc. The engine knows
// none of this: it is handed a Factory (controller.h), which MakeFactory and
// DefaultFactory build here (spec-notes/pds.md "CC boundary").
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "pds/cc/controller.h"
#include "pds/cc/fixed_window.h"
#include "pds/cc/nscc.h"
#include "pds/cc/rccc.h"
#include "pds/cc/receiver.h"
#include "uet/result.h"

namespace uet::pds::cc {

// Each controller's settings; MakeController reads only the one it builds.
struct ControllerConfig {
  FixedWindowConfig fixed;
  NsccConfig nscc;  // "nscc" and the window part of "nscc+rccc"
  RcccConfig rccc;  // "rccc" and the credit part of "nscc+rccc", both sides
};

// The names MakeController accepts, in table order.
std::span<const std::string_view> ControllerNames();

// Builds the controller called `name` from its part of `config`. Errors:
// an unknown name gives kInvalidArgument "pds.cc: invalid controller name
// (known: fixed, nscc, rccc, nscc+rccc)" (Error holds only static text: the
// caller, who has the name, prints it next to the message); an invalid config
// gives that controller's Validate() error.
Result<std::unique_ptr<Controller>> MakeController(std::string_view name,
                                                   const ControllerConfig& config);

// The receiver side that goes with controller `name` (receiver.h): an
// RcccReceiver for "rccc" and "nscc+rccc", nullptr for the sender-only ones
// (the engine then sends plain ACKs / ACK_CC as before). Errors as
// MakeController's.
Result<std::unique_ptr<ReceiverCc>> MakeReceiverCc(std::string_view name,
                                                   const ControllerConfig& config);

// The Factory an engine is given (EngineConfig::cc_factory): controller
// `name` from a copy of `config`, for every CCC, and its receiver side.
// Checked here, by building one of each, so that an engine made with it
// cannot fail for its CC; errors as MakeController's.
Result<std::shared_ptr<const Factory>> MakeFactory(std::string_view name,
                                                   const ControllerConfig& config);

// MakeFactory("fixed", ControllerConfig{}): a 512 KiB constant window and no
// receiver side, what tests and tools take when CC is not their subject. One
// shared instance.
std::shared_ptr<const Factory> DefaultFactory();

}  // namespace uet::pds::cc
