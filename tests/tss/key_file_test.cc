#include "tss/key_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tss/seal.h"

namespace uet::tss {
namespace {

const std::string kKeyA(64, 'a');
const std::string kKeyB =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string WriteFile(const std::string& name, const std::string& text, mode_t mode) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::remove(path.c_str());
  {
    std::ofstream out(path);
    out << text;
  }
  EXPECT_EQ(::chmod(path.c_str(), mode), 0);
  return path;
}

std::string GoodFile() {
  return "# shared by both hosts of job 42\n"
         "uet-tss-keyfile 1\n"
         "\n"
         "sd 0x000101 42 cluster   # one job, two SDIs\n"
         "key 0x000101 0 current " + kKeyA + "\n"
         "key 0x000101 1 next    " + kKeyB + "\n"
         "sd 258 42 direct\n"
         "key 258 1 current " + kKeyB + "\n";
}

TEST(KeyFile, GoodFileLoads) {
  const std::string path = WriteFile("good.keys", GoodFile(), 0600);
  auto db = KeyFileDb::Load(path);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(db->Sdis(), (std::vector<uint32_t>{0x101, 258}));
  const SdRecord* r = db->Find(0x101);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->job, JobId(42));
  EXPECT_EQ(r->mode, KeyMode::kCluster);
  ASSERT_EQ(r->keys.size(), 2u);
  EXPECT_EQ(r->keys[0].role, KeyRole::kCurrent);
  EXPECT_FALSE(r->keys[0].an);
  EXPECT_EQ(r->keys[0].material[0], std::byte{0xaa});
  EXPECT_EQ(r->keys[1].role, KeyRole::kNext);
  EXPECT_EQ(r->keys[1].material[31], std::byte{0x1f});
  EXPECT_EQ(db->Find(258)->mode, KeyMode::kDirect);
  EXPECT_EQ(db->Find(7), nullptr);
}

TEST(KeyFile, GroupOrOtherAccessIsRefusedWithTheReason) {
  for (mode_t mode : {0644, 0640, 0604, 0660, 0602}) {
    char m[8];
    std::snprintf(m, sizeof m, "0%03o", mode);
    const std::string path = WriteFile("perm.keys", GoodFile(), mode);
    auto db = KeyFileDb::Load(path);
    ASSERT_FALSE(db.ok()) << m;
    EXPECT_EQ(db.status().code(), absl::StatusCode::kPermissionDenied);
    const std::string msg(db.status().message());
    EXPECT_NE(msg.find(std::string("mode ") + m), std::string::npos) << msg;
    EXPECT_NE(msg.find("group/other"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  EXPECT_TRUE(KeyFileDb::Load(WriteFile("ro.keys", GoodFile(), 0400)).ok());
  auto missing = KeyFileDb::Load(::testing::TempDir() + "/does-not-exist.keys");
  EXPECT_FALSE(missing.ok());
}

TEST(KeyFile, MalformedLinesNameLineAndField) {
  struct Case {
    std::string text;
    std::string want;  // substring of the message
  };
  const std::string head = "uet-tss-keyfile 1\n";
  const Case cases[] = {
      {"uet-keys 1\n", "line 1: field magic"},
      {"uet-tss-keyfile 2\n", "line 1: field version"},
      {head + "sd 0x1000000 1 direct\n", "line 2: field sdi"},
      {head + "sd 5 x1 direct\n", "line 2: field jobid"},
      {head + "sd 5 1 tunnel\n", "line 2: field mode"},
      {head + "sd 5 1\n", "line 2: field sd"},
      {head + "sd 5 1 direct\nsd 5 2 direct\n", "line 3: field sdi"},
      {head + "key 5 0 current " + kKeyA + "\n", "line 2: field sdi"},
      {head + "sd 5 1 direct\nkey 5 2 current " + kKeyA + "\n", "line 3: field an"},
      {head + "sd 5 1 direct\nkey 5 0 newest " + kKeyA + "\n", "line 3: field role"},
      {head + "sd 5 1 direct\n\n# gap\nkey 5 0 current " + kKeyA.substr(1) + "\n",
       "line 5: field key"},
      {head + "sd 5 1 direct\nkey 5 0 current " + std::string(63, 'a') + "g\n",
       "line 3: field key"},
      {head + "sd 5 1 client\nkey 5 0 current " + kKeyA + "\n", "expected 88 hex digits"},
      {head + "sd 5 1 direct\nkey 5 0 current " + kKeyA + "\nkey 5 0 next " + kKeyB + "\n",
       "line 4: field an"},
      {head + "sd 5 1 direct\nkey 5 0 current " + kKeyA + "\nkey 5 1 current " + kKeyB + "\n",
       "line 4: field role"},
      {head + "sdi 5 1 direct\n", "line 2: field record"},
      {head + "sd 5 1 direct\n", "SDI 5 has no current key"},
      {"# nothing\n", "empty"},
  };
  for (const Case& c : cases) {
    auto db = KeyFileDb::Parse(c.text, "test.keys");
    ASSERT_FALSE(db.ok()) << c.text;
    const std::string msg(db.status().message());
    EXPECT_NE(msg.find(c.want), std::string::npos) << "got: " << msg;
    EXPECT_NE(msg.find("test.keys"), std::string::npos) << msg;
  }
}

TEST(KeyFile, TwoHostsLoadingTheSameFileTalk) {
  const std::string path = WriteFile("shared.keys", GoodFile(), 0600);
  auto db = KeyFileDb::Load(path);
  ASSERT_TRUE(db.ok());
  SecureDomainTable ta, tb;
  SdConfig ca = ConfigFor(*db->Find(0x101));
  SecureDomain* a = *ta.Add(ca);
  SecureDomain* b = *tb.Add(ca);
  ASSERT_TRUE(ApplyKeys(*db, *a).ok());
  ASSERT_TRUE(ApplyKeys(*db, *b).ok());
  EXPECT_FALSE(a->tx_an());
  EXPECT_EQ(*a->slot_role(true), KeyRole::kNext);
  const AadAddrs ab{*IpAddress::Parse("203.0.113.5"), *IpAddress::Parse("203.0.113.6"), {}};
  std::vector<std::byte> pkt(a->header_size() + 20 + kTagSize, std::byte{0x5a});
  ASSERT_TRUE(Seal(*a, ab, pkt, 20).ok());
  ASSERT_TRUE(Open(tb, ab, pkt).ok());

  // Rotation by file: AN 1 becomes current, AN 0 previous; then AN 0 goes.
  const std::string rotated = "uet-tss-keyfile 1\nsd 0x000101 42 cluster\n"
                              "key 0x000101 1 current " + kKeyB + "\n"
                              "key 0x000101 0 previous " + kKeyA + "\n";
  auto db2 = KeyFileDb::Parse(rotated, "rotated");
  ASSERT_TRUE(db2.ok()) << db2.status();
  ASSERT_TRUE(ApplyKeys(*db2, *a).ok());
  EXPECT_TRUE(a->tx_an());
  EXPECT_EQ(*a->slot_role(false), KeyRole::kPrevious);
  std::vector<std::byte> p2(a->header_size() + 20 + kTagSize);
  ASSERT_TRUE(Seal(*a, ab, p2, 20).ok());
  ASSERT_TRUE(Open(tb, ab, p2).ok()) << "B still holds AN 1 as next: accepted";
  auto db3 = KeyFileDb::Parse("uet-tss-keyfile 1\nsd 0x000101 42 cluster\nkey 0x000101 1 current " +
                                  kKeyB + "\n",
                              "final");
  ASSERT_TRUE(ApplyKeys(*db3, *a).ok());
  EXPECT_FALSE(a->slot_role(false).has_value());

  // Mismatches are refused.
  SdConfig wrong_job = ca;
  wrong_job.job = JobId(43);
  SecureDomainTable tc;
  EXPECT_EQ(ApplyKeys(*db, **tc.Add(wrong_job)).code(), absl::StatusCode::kFailedPrecondition);
  SdConfig unknown = ca;
  unknown.sdi = 999;
  EXPECT_EQ(ApplyKeys(*db, **tc.Add(unknown)).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace uet::tss
