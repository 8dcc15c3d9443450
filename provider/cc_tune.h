// FI_UET_CC_TUNE: every constant of the congestion controllers, settable from
// the environment (docs/fi_uet.7.md "CONGESTION CONTROL"; spec-notes/cc.md
// lists what each one means and its default). The text is a comma-separated
// list of CONTROLLER.FIELD=VALUE, e.g.
//   FI_UET_CC_TUNE=nscc.md_gamma=0.5,nscc.base_rtt_us=200,rccc.target_bdp=2
// CONTROLLER is fixed, nscc or rccc (nscc+rccc uses the nscc and rccc parts).
// Values: integers, decimals, true/false; durations are FIELD_us in
// microseconds (decimals allowed). A key given twice: the last wins.
#pragma once

#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "pds/cc/factory.h"

namespace uet::prov {

// Applies `text` to `config`. An empty text changes nothing. Errors
// (kInvalidArgument, naming the item): an item without '=', an unknown key,
// a value that does not parse as the field's type or does not fit it. Ranges
// (e.g. md_gamma in (0, 1]) are the controllers' own Validate's business:
// the engine refuses a bad config when the endpoint is enabled.
absl::Status ApplyCcTune(std::string_view text, pds::cc::ControllerConfig& config);

// Every key ApplyCcTune accepts, in table order.
std::span<const std::string_view> CcTuneKeys();

}  // namespace uet::prov
