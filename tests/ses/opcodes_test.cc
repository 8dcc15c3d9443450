#include "ses/opcodes.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace uet::ses {
namespace {

// Tables copied from protocol-facts §3.1, §3.5, §3.6, §3.7.
const std::vector<std::pair<int, std::string>> kRequestOpcodes = {
    {0x00, "UET_NO_OP"},
    {0x01, "UET_WRITE"},
    {0x02, "UET_READ"},
    {0x03, "UET_ATOMIC"},
    {0x04, "UET_FETCHING_ATOMIC"},
    {0x05, "UET_SEND"},
    {0x06, "UET_RENDEZVOUS_SEND"},
    {0x07, "UET_DATAGRAM_SEND"},
    {0x08, "UET_DEFERRABLE_SEND"},
    {0x09, "UET_TAGGED_SEND"},
    {0x0A, "UET_RENDEZVOUS_TSEND"},
    {0x0B, "UET_DEFERRABLE_TSEND"},
    {0x0C, "UET_DEFERRABLE_RTR"},
    {0x0D, "UET_TSEND_ATOMIC"},
    {0x0E, "UET_TSEND_FETCH_ATOMIC"},
    {0x0F, "UET_MSG_ERROR"},
    {0x10, "UET_INC_PUSH"},
};

const std::vector<std::pair<int, std::string>> kResponseOpcodes = {
    {0x00, "UET_DEFAULT_RESPONSE"}, {0x01, "UET_RESPONSE"},          {0x02, "UET_RESPONSE_W_DATA"},
    {0x03, "UET_NO_RESPONSE"},      {0x04, "UET_INC_ERROR_RESPONSE"},
};

const std::vector<std::pair<int, std::string>> kReturnCodes = {
    {0x00, "RC_NULL"},
    {0x01, "RC_OK"},
    {0x02, "RC_BAD_GENERATION"},
    {0x03, "RC_DISABLED"},
    {0x04, "RC_DISABLED_GEN"},
    {0x05, "RC_NO_MATCH"},
    {0x06, "RC_UNSUPPORTED_OP"},
    {0x07, "RC_UNSUPPORTED_SIZE"},
    {0x08, "RC_AT_INVALID"},
    {0x09, "RC_AT_PERM"},
    {0x0A, "RC_AT_ATS_ERROR"},
    {0x0B, "RC_AT_NO_TRANS"},
    {0x0C, "RC_AT_OUT_OF_RANGE"},
    {0x0D, "RC_HOST_POISONED"},
    {0x0E, "RC_HOST_UNSUCCESS_CMPL"},
    {0x0F, "RC_AMO_UNSUPPORTED_OP"},
    {0x10, "RC_AMO_UNSUPPORTED_DT"},
    {0x11, "RC_AMO_UNSUPPORTED_SIZE"},
    {0x12, "RC_AMO_UNALIGNED"},
    {0x13, "RC_AMO_FP_NAN"},
    {0x14, "RC_AMO_FP_UNDERFLOW"},
    {0x15, "RC_AMO_FP_OVERFLOW"},
    {0x16, "RC_AMO_FP_INEXACT"},
    {0x17, "RC_PERM_VIOLATION"},
    {0x18, "RC_OP_VIOLATION"},
    {0x19, "RC_BAD_INDEX"},
    {0x1A, "RC_BAD_PID"},
    {0x1B, "RC_BAD_JOB_ID"},
    {0x1C, "RC_BAD_MKEY"},
    {0x1D, "RC_BAD_ADDR"},
    {0x1E, "RC_CANCELLED"},
    {0x1F, "RC_UNDELIVERABLE"},
    {0x20, "RC_UNCOR"},
    {0x21, "RC_UNCOR_TRNSNT"},
    {0x22, "RC_TOO_LONG"},
    {0x23, "RC_INITIATOR_ERR"},
    {0x24, "RC_DROPPED"},
};

const std::vector<std::pair<int, std::string>> kAtomicOpcodes = {
    {0x00, "MIN"},      {0x01, "MAX"},      {0x02, "SUM"},      {0x03, "DIFF"},
    {0x04, "PROD"},     {0x05, "LOR"},      {0x06, "LAND"},     {0x07, "BOR"},
    {0x08, "BAND"},     {0x09, "LXOR"},     {0x0A, "BXOR"},     {0x0B, "READ"},
    {0x0C, "WRITE"},    {0x0D, "CSWAP"},    {0x0E, "CSWAP_NE"}, {0x0F, "CSWAP_LE"},
    {0x10, "CSWAP_LT"}, {0x11, "CSWAP_GE"}, {0x12, "CSWAP_GT"}, {0x13, "MSWAP"},
    {0x14, "INVAL"},
};

struct DatatypeRow {
  int value;
  std::string name;
  size_t bytes;
};
const std::vector<DatatypeRow> kDatatypes = {
    {0x00, "INT8", 1},          {0x01, "UINT8", 1},
    {0x02, "INT16", 2},         {0x03, "UINT16", 2},
    {0x04, "INT32", 4},         {0x05, "UINT32", 4},
    {0x06, "INT64", 8},         {0x07, "UINT64", 8},
    {0x08, "INT128", 16},       {0x09, "UINT128", 16},
    {0x0A, "FLOAT", 4},         {0x0B, "DOUBLE", 8},
    {0x0C, "FLOAT_COMPLEX", 8}, {0x0D, "DOUBLE_COMPLEX", 16},
    {0x0E, "LONG_DOUBLE", 16},  {0x0F, "LONG_DOUBLE_COMPLEX", 32},
    {0x10, "BF16", 2},          {0x11, "FP16", 2},
};

TEST(SesOpcodes, EveryRequestOpcodeHasItsValueAndName) {
  for (const auto& [v, name] : kRequestOpcodes) {
    EXPECT_TRUE(IsKnownRequestOpcode(static_cast<uint8_t>(v))) << name;
    EXPECT_EQ(RequestOpcodeName(static_cast<RequestOpcode>(v)), name);
  }
  EXPECT_EQ(static_cast<int>(RequestOpcode::kIncPush), 0x10);
  for (int v = static_cast<int>(kRequestOpcodes.size()); v < 64; ++v) {
    EXPECT_FALSE(IsKnownRequestOpcode(static_cast<uint8_t>(v))) << v;
  }
}

TEST(SesOpcodes, OpcodeSixteenIsIncPushNotSyncWrite) {
  EXPECT_EQ(kIncPushOpcodeValue, 0x10);
  EXPECT_STREQ(RequestOpcodeName(static_cast<RequestOpcode>(0x10)), "UET_INC_PUSH");
  EXPECT_FALSE(IsKnownRequestOpcode(0x11)) << "REF's experimental SYNC_ATOMIC is not adopted";
}

TEST(SesOpcodes, EveryResponseOpcodeHasItsValueAndName) {
  for (const auto& [v, name] : kResponseOpcodes) {
    EXPECT_TRUE(IsKnownResponseOpcode(static_cast<uint8_t>(v))) << name;
    EXPECT_EQ(ResponseOpcodeName(static_cast<ResponseOpcode>(v)), name);
  }
  for (int v = 5; v < 64; ++v) EXPECT_FALSE(IsKnownResponseOpcode(static_cast<uint8_t>(v))) << v;
}

TEST(SesOpcodes, ListValues) {
  EXPECT_STREQ(ResponseListName(ResponseList::kExpected), "UET_EXPECTED");
  EXPECT_STREQ(ResponseListName(ResponseList::kOverflow), "UET_OVERFLOW");
  EXPECT_EQ(static_cast<int>(ResponseList::kOverflow), 1);
  EXPECT_TRUE(IsKnownResponseList(0));
  EXPECT_TRUE(IsKnownResponseList(1));
  EXPECT_FALSE(IsKnownResponseList(2)) << "vendor-defined";
  EXPECT_FALSE(IsKnownResponseList(3)) << "vendor-defined";
}

TEST(SesOpcodes, EveryReturnCodeHasItsValueAndName) {
  ASSERT_EQ(kReturnCodes.size(), 0x25u);
  for (const auto& [v, name] : kReturnCodes) {
    EXPECT_TRUE(IsKnownReturnCode(static_cast<uint8_t>(v))) << name;
    EXPECT_EQ(ReturnCodeName(static_cast<ReturnCode>(v)), name);
  }
  for (int v = 0x25; v < 64; ++v) EXPECT_FALSE(IsKnownReturnCode(static_cast<uint8_t>(v))) << v;
}

TEST(SesOpcodes, EveryAtomicOpcodeHasItsValueAndName) {
  ASSERT_EQ(kAtomicOpcodes.size(), 0x15u);
  for (const auto& [v, name] : kAtomicOpcodes) {
    EXPECT_TRUE(IsKnownAtomicOpcode(static_cast<uint8_t>(v))) << name;
    EXPECT_EQ(AtomicOpcodeName(static_cast<AtomicOpcode>(v)), name);
  }
  for (int v = 0x15; v < 256; ++v) EXPECT_FALSE(IsKnownAtomicOpcode(static_cast<uint8_t>(v))) << v;
}

TEST(SesOpcodes, CompareSwapFamilyIsCswapThroughCswapGt) {
  for (const auto& [v, name] : kAtomicOpcodes) {
    const bool expected = v >= 0x0D && v <= 0x12;
    EXPECT_EQ(IsCompareSwap(static_cast<AtomicOpcode>(v)), expected) << name;
  }
  EXPECT_FALSE(IsCompareSwap(AtomicOpcode::kMswap));
}

TEST(SesOpcodes, EveryAtomicDatatypeHasItsValueNameAndSize) {
  ASSERT_EQ(kDatatypes.size(), 0x12u);
  for (const auto& row : kDatatypes) {
    const auto dt = static_cast<AtomicDatatype>(row.value);
    EXPECT_TRUE(IsKnownAtomicDatatype(static_cast<uint8_t>(row.value))) << row.name;
    EXPECT_EQ(AtomicDatatypeName(dt), row.name);
    EXPECT_EQ(AtomicDatatypeSize(dt), row.bytes) << row.name;
  }
  for (int v = 0x12; v < 256; ++v) {
    EXPECT_FALSE(IsKnownAtomicDatatype(static_cast<uint8_t>(v))) << v;
  }
}

}  // namespace
}  // namespace uet::ses
