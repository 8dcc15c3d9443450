// The PDS codec tests use the helpers every sublayer's codec tests share.
#pragma once

#include "tests/codec_test_util.h"

namespace uet::pds::testutil {
using namespace uet::testutil;  // NOLINT: test helpers
}  // namespace uet::pds::testutil
