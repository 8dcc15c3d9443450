#include "ses/request_common.h"

namespace uet::ses {

Status RequestCommon::Write(uint16_t slot, ByteWriter& w, const char* context) const {
  const uint8_t op = static_cast<uint8_t>(opcode);
  uint8_t byte0 = 0;
  UET_RETURN_IF_ERROR(OpcodeField::Put(byte0, op, context, "opcode"));
  if (!IsKnownRequestOpcode(op)) return Error::UnknownType(context, "opcode", op);

  uint8_t byte1 = VersionField::With(0, kSesVersion);
  byte1 = DcFlag::With(byte1, flags.delivery_complete);
  byte1 = IeFlag::With(byte1, flags.initiator_error);
  byte1 = RelFlag::With(byte1, flags.relative_addressing);
  byte1 = HdFlag::With(byte1, flags.header_data_present);
  byte1 = EomFlag::With(byte1, flags.end_of_message);
  byte1 = SomFlag::With(byte1, flags.start_of_message);

  UET_RETURN_IF_ERROR(CheckWidth(context, "job_id", job_id.value(), JobId::kBits));
  uint16_t pid_word = 0;
  UET_RETURN_IF_ERROR(PidOnFepField::Put(pid_word, pid_on_fep.value(), context, "pid_on_fep"));
  uint16_t ri_word = 0;
  UET_RETURN_IF_ERROR(
      ResourceIndexField::Put(ri_word, resource_index.value(), context, "resource_index"));

  w.U8(byte0);
  w.U8(byte1);
  w.U16(slot);
  w.U8(ri_generation);
  w.U24(job_id.value());
  w.U16(pid_word);
  w.U16(ri_word);
  return OkStatus();
}

Result<RequestCommon> RequestCommon::Read(ByteReader& h, const char* context, uint16_t* slot) {
  const uint8_t byte0 = h.U8();
  const uint8_t byte1 = h.U8();
  *slot = h.U16();
  RequestCommon c;
  c.ri_generation = h.U8();
  c.job_id = JobId(h.U24());
  c.pid_on_fep = PidOnFep(static_cast<uint16_t>(PidOnFepField::Get(h.U16())));
  c.resource_index = ResourceIndex(static_cast<uint16_t>(ResourceIndexField::Get(h.U16())));

  const uint64_t version = VersionField::Get(byte1);
  if (version != kSesVersion) return Error::BadVersion(context, version);
  const uint8_t op = static_cast<uint8_t>(OpcodeField::Get(byte0));
  if (!IsKnownRequestOpcode(op)) return Error::UnknownType(context, "opcode", op);
  c.opcode = static_cast<RequestOpcode>(op);

  c.flags.delivery_complete = DcFlag::Get(byte1) != 0;
  c.flags.initiator_error = IeFlag::Get(byte1) != 0;
  c.flags.relative_addressing = RelFlag::Get(byte1) != 0;
  c.flags.header_data_present = HdFlag::Get(byte1) != 0;
  c.flags.end_of_message = EomFlag::Get(byte1) != 0;
  c.flags.start_of_message = SomFlag::Get(byte1) != 0;
  return c;
}

Status CheckSinglePacket(const RequestFlags& flags, const char* context) {
  if (!flags.start_of_message) return Error::Reserved(context, "som", 0);
  if (!flags.end_of_message) return Error::Reserved(context, "eom", 0);
  return OkStatus();
}

}  // namespace uet::ses
