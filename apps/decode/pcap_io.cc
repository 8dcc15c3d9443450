#include "apps/decode/pcap_io.h"

#include <pcap/pcap.h>

#include <memory>

namespace uet::decode {
namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
struct DumperCloser {
  void operator()(pcap_dumper_t* d) const { pcap_dump_close(d); }
};

bool KnownLinkType(int dlt) {
  switch (dlt) {
    case DLT_NULL:
    case DLT_EN10MB:
    case DLT_LINUX_SLL:
    case DLT_LINUX_SLL2:
      return true;
    default:
      break;
  }
  // DLT_RAW has platform-dependent values (12 or 14); LINKTYPE_RAW is 101.
  return dlt == DLT_RAW || dlt == 101;
}

LinkType ToLinkType(int dlt) {
  if (dlt == DLT_NULL) return LinkType::kNull;
  if (dlt == DLT_EN10MB) return LinkType::kEthernet;
  if (dlt == DLT_LINUX_SLL) return LinkType::kLinuxSll;
  if (dlt == DLT_LINUX_SLL2) return LinkType::kLinuxSll2;
  return LinkType::kRaw;
}

}  // namespace

absl::Status ReadPcap(const std::string& path,
                      const std::function<void(const CapturedFrame&)>& on_frame) {
  char err[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_offline(path.c_str(), err));
  if (!p) return absl::NotFoundError(path + ": " + err);
  const int dlt = pcap_datalink(p.get());
  if (!KnownLinkType(dlt)) {
    return absl::UnimplementedError(path + ": link type " + std::to_string(dlt) +
                                    " is not decoded (Ethernet, raw IP, Linux cooked, BSD "
                                    "loopback are)");
  }
  const LinkType link = ToLinkType(dlt);
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  uint64_t index = 0;
  for (;;) {
    const int rc = pcap_next_ex(p.get(), &hdr, &data);
    if (rc == PCAP_ERROR_BREAK) return absl::OkStatus();
    if (rc != 1) return absl::DataLossError(path + ": " + pcap_geterr(p.get()));
    CapturedFrame f;
    f.index = ++index;
    f.ts_usec = int64_t{hdr->ts.tv_sec} * 1000000 + hdr->ts.tv_usec;
    f.link = link;
    f.bytes = {reinterpret_cast<const std::byte*>(data), hdr->caplen};
    f.original_length = hdr->len;
    on_frame(f);
  }
}

absl::Status WritePcap(const std::string& path, const std::vector<FrameToWrite>& frames) {
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_dead(DLT_EN10MB, 65535));
  if (!p) return absl::InternalError("pcap_open_dead failed");
  std::unique_ptr<pcap_dumper_t, DumperCloser> d(pcap_dump_open(p.get(), path.c_str()));
  if (!d) return absl::PermissionDeniedError(path + ": " + pcap_geterr(p.get()));
  for (const auto& f : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = f.ts_usec / 1000000;
    h.ts.tv_usec = f.ts_usec % 1000000;
    h.caplen = h.len = static_cast<bpf_u_int32>(f.bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(d.get()), &h,
              reinterpret_cast<const u_char*>(f.bytes.data()));
  }
  if (pcap_dump_flush(d.get()) != 0) return absl::DataLossError(path + ": write failed");
  return absl::OkStatus();
}

}  // namespace uet::decode
