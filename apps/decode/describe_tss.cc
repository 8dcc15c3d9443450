#include "apps/decode/describe_tss.h"

namespace uet::decode {

void DescribeTss(const tss::SecurityHeader& h, size_t encrypted_bytes, Description& d) {
  d.Open(h.sp() ? "TSS security header (16 B)" : "TSS security header (12 B)");
  d.Field("type", tss::SecurityHeader::kType);
  d.Flag("sp (ssi present)", h.sp());
  d.Field("an (association number)", h.an ? 1 : 0);
  d.FieldHex("sdi", h.sdi, 6);
  if (h.ssi) d.FieldHex("ssi", *h.ssi, 8);
  d.Field("tsc.epoch", h.epoch);
  d.Field("tsc.counter", h.counter);
  d.Field("encrypted (PDS+SES+payload+ICV)", std::to_string(encrypted_bytes) + " bytes");
  d.Close();
  d.Token("TSS");
  d.TokenHex("sdi", h.sdi);
  d.Token("an", h.an ? 1 : 0);
  if (h.ssi) d.TokenHex("ssi", *h.ssi);
  d.Token("epoch", h.epoch);
  d.Token("ctr", h.counter);
  d.Token("encrypted", encrypted_bytes);
}

}  // namespace uet::decode
