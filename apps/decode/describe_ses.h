#pragma once

#include "apps/decode/description.h"
#include "ses/ses_header.h"

namespace uet::decode {

void DescribeSes(const ses::SesHeader& header, Description& d);

}  // namespace uet::decode
