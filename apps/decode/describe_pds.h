#pragma once

#include "apps/decode/description.h"
#include "pds/pds_header.h"

namespace uet::decode {

void DescribePds(const pds::PdsHeader& header, Description& d);

}  // namespace uet::decode
