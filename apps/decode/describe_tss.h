#pragma once

#include "apps/decode/description.h"
#include "tss/header.h"

namespace uet::decode {

void DescribeTss(const tss::SecurityHeader& header, size_t encrypted_bytes, Description& d);

}  // namespace uet::decode
