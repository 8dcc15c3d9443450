#include "ses/rendezvous_extension.h"

namespace uet::ses {
namespace {

constexpr const char* kContext = "ses.rendezvous_ext";

}  // namespace

Status RendezvousExtension::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  uint32_t read_word = 0;
  UET_RETURN_IF_ERROR(
      ReadGenerationField::Put(read_word, read_ri_generation, kContext, "read_ri_generation"));
  UET_RETURN_IF_ERROR(
      ReadPidOnFepField::Put(read_word, read_pid_on_fep.value(), kContext, "read_pid_on_fep"));
  UET_RETURN_IF_ERROR(ReadResourceIndexField::Put(read_word, read_resource_index.value(), kContext,
                                                  "read_resource_index"));
  w.U32(eager_length);
  w.U32(read_word);
  w.U64(read_offset);
  w.U64(read_memory_key);
  return OkStatus();
}

Result<RendezvousExtension> RendezvousExtension::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  RendezvousExtension e;
  e.eager_length = h.U32();
  const uint32_t read_word = h.U32();
  e.read_ri_generation = static_cast<uint8_t>(ReadGenerationField::Get(read_word));
  e.read_pid_on_fep = PidOnFep(static_cast<uint16_t>(ReadPidOnFepField::Get(read_word)));
  e.read_resource_index =
      ResourceIndex(static_cast<uint16_t>(ReadResourceIndexField::Get(read_word)));
  e.read_offset = h.U64();
  e.read_memory_key = h.U64();
  return e;
}

}  // namespace uet::ses
