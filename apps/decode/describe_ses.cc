#include "apps/decode/describe_ses.h"

#include <string>
#include <type_traits>

namespace uet::decode {
namespace {

using namespace uet::ses;

void DescribeCommon(const RequestCommon& c, Description& d) {
  d.Coded("opcode", RequestOpcodeName(c.opcode), static_cast<uint8_t>(c.opcode));
  d.Flag("dc (delivery complete)", c.flags.delivery_complete);
  d.Flag("ie (initiator error)", c.flags.initiator_error);
  d.Flag("rel (relative addressing)", c.flags.relative_addressing);
  d.Flag("hd (header data present)", c.flags.header_data_present);
  d.Flag("eom", c.flags.end_of_message);
  d.Flag("som", c.flags.start_of_message);
  d.Field("ri_generation", c.ri_generation);
  d.Field("job_id", c.job_id.value());
  d.Field("pid_on_fep", c.pid_on_fep.value());
  d.Field("resource_index", c.resource_index.value());
}

void SummarizeCommon(const RequestCommon& c, Description& d) {
  d.Token("SES");
  d.Token(Short(RequestOpcodeName(c.opcode)));
  if (c.flags.start_of_message) d.Token("som");
  if (c.flags.end_of_message) d.Token("eom");
  if (c.flags.delivery_complete) d.Token("dc");
  if (c.flags.initiator_error) d.Token("ie");
  if (c.flags.header_data_present) d.Token("hd");
}

void DescribeExtension(const RequestExtension& ext, Description& d) {
  auto atomic = [&](const AtomicOpExtension& a) {
    d.Coded("atomic_opcode", AtomicOpcodeName(a.opcode), static_cast<uint8_t>(a.opcode));
    d.Coded("atomic_datatype", AtomicDatatypeName(a.datatype), static_cast<uint8_t>(a.datatype));
    d.Flag("cacheable", a.cacheable);
    d.Flag("cpu_coherent", a.cpu_coherent);
  };
  auto operand = [&](const char* name, const CompareSwapExtension::Operand& o) {
    d.Field(name, HexBytes(o));
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, AtomicOpExtension>) {
          d.Open("SES atomic extension");
          atomic(e);
          d.Close();
          d.Token(Short(AtomicOpcodeName(e.opcode)));
          d.Token(Short(AtomicDatatypeName(e.datatype)));
        } else if constexpr (std::is_same_v<T, CompareSwapExtension>) {
          d.Open("SES compare-and-swap extension");
          atomic(e.op);
          operand("compare", e.compare);
          operand("swap", e.swap);
          d.Close();
          d.Token(Short(AtomicOpcodeName(e.op.opcode)));
          d.Token(Short(AtomicDatatypeName(e.op.datatype)));
        } else if constexpr (std::is_same_v<T, RendezvousExtension>) {
          d.Open("SES rendezvous extension");
          d.Field("eager_length", e.eager_length);
          d.Field("read_ri_generation", e.read_ri_generation);
          d.Field("read_pid_on_fep", e.read_pid_on_fep.value());
          d.Field("read_resource_index", e.read_resource_index.value());
          d.FieldHex("read_offset", e.read_offset, 16);
          d.FieldHex("read_memory_key", e.read_memory_key, 16);
          d.Close();
          d.Token("eager", e.eager_length);
        }
      },
      ext);
}

void DescribeResponseCommon(const ResponseCommon& c, Description& d) {
  d.Coded("list", ResponseListName(c.list), static_cast<uint8_t>(c.list));
  d.Coded("opcode", ResponseOpcodeName(c.opcode), static_cast<uint8_t>(c.opcode));
  d.Coded("return_code", ReturnCodeName(c.return_code), static_cast<uint8_t>(c.return_code));
  d.Token("SES");
  d.Token(Short(ResponseOpcodeName(c.opcode)));
  d.Token(std::string("rc=") + ReturnCodeName(c.return_code));
}

}  // namespace

void DescribeSes(const SesHeader& header, Description& d) {
  std::visit(
      [&](const auto& h) {
        using T = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<T, SmallRequestHeaders>) {
          d.Open("SES small request (20 B)");
          DescribeCommon(h.header.common, d);
          d.Field("request_length", h.header.request_length);
          d.FieldHex("buffer_offset", h.header.buffer_offset, 16);
          d.Close();
          SummarizeCommon(h.header.common, d);
          d.Token("len", h.header.request_length);
          DescribeExtension(h.extension, d);
        } else if constexpr (std::is_same_v<T, MediumRequestHeaders>) {
          const auto& m = h.header;
          d.Open("SES medium request (32 B)");
          DescribeCommon(m.common, d);
          d.Field("request_length", m.request_length);
          if (m.common.flags.header_data_present) {
            d.FieldHex("header_data", m.header_data, 16);
          } else {
            d.FieldHex("buffer_offset", m.buffer_offset, 16);
          }
          d.FieldHex("initiator", m.initiator, 8);
          d.FieldHex("memory_key/match_bits", m.memory_key, 16);
          d.Close();
          SummarizeCommon(m.common, d);
          d.Token("len", m.request_length);
          DescribeExtension(h.extension, d);
        } else if constexpr (std::is_same_v<T, StandardRequestHeaders>) {
          const auto& s = h.header;
          d.Open("SES standard request (44 B)");
          DescribeCommon(s.common, d);
          d.Field("message_id", s.message_id.value());
          d.FieldHex("buffer_offset", s.buffer_offset, 16);
          d.FieldHex("initiator", s.initiator, 8);
          d.FieldHex("memory_key/match_bits", s.memory_key, 16);
          if (s.common.flags.start_of_message) {
            d.FieldHex("header_data", s.header_data, 16);
          } else {
            d.Field("payload_length", s.payload_length);
            d.Field("message_offset", s.message_offset);
          }
          d.Field("request_length", s.request_length);
          d.Close();
          SummarizeCommon(s.common, d);
          d.Token("msg_id", s.message_id.value());
          if (!s.common.flags.start_of_message) d.Token("off", s.message_offset);
          d.Token("len", s.request_length);
          DescribeExtension(h.extension, d);
        } else if constexpr (std::is_same_v<T, Response>) {
          d.Open("SES response (12 B)");
          DescribeResponseCommon(h.common, d);
          d.Field("message_id", h.message_id.value());
          d.Field("ri_generation", h.ri_generation);
          d.Field("job_id", h.job_id.value());
          d.Field("modified_length", h.modified_length);
          d.Close();
          d.Token("msg_id", h.message_id.value());
          d.Token("mlen", h.modified_length);
        } else if constexpr (std::is_same_v<T, ResponseWithData>) {
          d.Open("SES response with data (20 B)");
          DescribeResponseCommon(h.common, d);
          d.Field("message_id", h.message_id.value());
          d.Field("job_id", h.job_id.value());
          d.Field("read_request_message_id", h.read_request_message_id.value());
          d.Field("payload_length", h.payload_length);
          d.Field("modified_length", h.modified_length);
          d.Field("message_offset", h.message_offset);
          d.Close();
          d.Token("msg_id", h.message_id.value());
          d.Token("read_msg_id", h.read_request_message_id.value());
          d.Token("off", h.message_offset);
          d.Token("len", h.payload_length);
        } else if constexpr (std::is_same_v<T, SmallResponseWithData>) {
          d.Open("SES small response with data (12 B)");
          DescribeResponseCommon(h.common, d);
          d.Field("payload_length", h.payload_length);
          d.Field("job_id", h.job_id.value());
          d.Field("original_request_psn", h.original_request_psn.value());
          d.Close();
          d.Token("req_psn", h.original_request_psn.value());
          d.Token("len", h.payload_length);
        }
      },
      header);
}

}  // namespace uet::decode
