// The progress engine of one provider endpoint: its UDP socket, its SES
// endpoint (which owns the PDS engine), the clock, and the bookkeeping that
// turns SES completions into CQ entries (spec-notes/provider.md).
//
//   fi_send/fi_recv/... -> Progress::Start* -> ses::Endpoint -> PacketSink::Send
//        -> PacketIo::Queue ... Flush
//   fi_cq_read -> Progress::Run: PacketIo::Poll -> ses::Endpoint::OnPacket,
//        OnTimer when due, Flush -> ses completions -> OnCompletion -> CQ
//
// Runs with the domain mutex held (uet_prov.h); never blocks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <vector>

#include "pds/engine.h"
#include "provider/ack_ride.h"
#include "provider/crypto_flush.h"
#include "provider/hmem/ep_hmem.h"
#include "provider/io/ev_sockets.h"
#include "provider/io/packet_io.h"
#include "provider/io/route_payload.h"
#include "provider/op_table.h"
#include "provider/packet_security.h"
#include "provider/uet_prov.h"
#include "ses/endpoint.h"
#include "uet/environment.h"
#include "uet/pool_allocator.h"

namespace uet::prov {

// One libfabric operation in flight: what its CQ entry needs.
struct OpRecord {
  void* user_context = nullptr;
  uint64_t flags = 0;            // FI_SEND|FI_MSG, FI_RECV|FI_TAGGED, ...
  bool report_success = true;    // false: inject, or selective completion without FI_COMPLETION
  bool counted = true;           // false: a peek (FI_PEEK) moves no counter
  bool tx = true;                // which CQ
  std::byte* buf = nullptr;      // receive buffer (CQ msg format `buf`)
  bool multi_recv = false;
  bool tagged = false;
  std::vector<std::byte> owned;  // injected data
  // Device memory (FI_HMEM): the bounce buffer SES sees and the copies
  // between it and the device (provider/hmem/ep_hmem.h).
  std::unique_ptr<hmem::OpDevice> device;
};

// Ops by id (provider/op_table.h: no allocation per op, issue 20; no tree, issue 26).
using OpMap = OpTable<OpRecord>;

class Progress final : public pds::PacketSink,
                       public ses::EndpointEvents,
                       public hmem::HmemEvents {
 public:
  // ev_first_port: the source port of EV 1 (the next EVs count up from it), or
  // 0 for ephemeral ports (EvSockets::Open).
  static Result<std::unique_ptr<Progress>> Create(Endpoint& ep, const ses::EndpointConfig& config,
                                                  const UdpIoConfig& io,
                                                  uint16_t ev_first_port = 0);
  ~Progress() override;

  // One pass: receive what waits, run due timers, poll device copies, send
  // what is queued. Returns the datagrams it received (0: the socket was
  // empty; fi_cq_read yields the CPU only then, uet_cq.cc).
  //
  // may_hold: the caller hands completions straight back to the application
  // (fi_cq_read, fi_cntr_read): when the pass handed one and queued only
  // ACKs/control packets, they stay queued for the application's next message
  // (provider/ack_ride.h). A caller that may sleep next calls FlushHeld first.
  // Any other pass (false) sends a held batch before it polls.
  size_t Run(bool may_hold = false);
  // When Run must next be called: the SES deadline, or now while device
  // copies are in flight (their events are polled, never waited for).
  TimePoint NextDeadline() const;
  bool HasDeviceWork() const { return hmem_ != nullptr && hmem_->busy(); }
  // The endpoint's device-memory staging, made on first use.
  hmem::EndpointHmem& hmem();
  // Sends what the last operations queued, on the main socket and every EV's,
  // socket by socket in the order their first queued packet came (a sprayed
  // PDC's runs then leave in PSN order on one path: spec-notes/pds.md "EV
  // send order"). A held batch (Run) stays when nothing was queued after it
  // and it is younger than the ride window (a receive posted); otherwise it
  // leaves with what was.
  void Flush();
  // Sends a held batch now: before a blocking wait sleeps, at close.
  void FlushHeld() {
    if (ride_.held()) FlushNow();
  }
  // Every held batch of the domain's endpoints, before a blocking wait sleeps
  // (a held ACK of an endpoint the wait does not cover must not wait for the
  // standby thread). Call with the domain's mutex held.
  static void FlushHeldInDomain(Domain& domain) { FlushHeldIn(domain, nullptr, std::nullopt); }
  TimePoint Now() const;

  ses::Endpoint& ses() { return *ses_; }
  uint16_t port() const { return io_->local_port(); }
  IpAddress addr() const { return io_->local_addr(); }
  int fd() const { return io_->fd(); }
  // When the last UET packet arrived (nothing before the first).
  std::optional<TimePoint> last_arrival() const { return last_arrival_; }

  // Sends a datagram that is not a UET packet (CM messages of MSG endpoints).
  void SendRaw(const IpAddress& ip, uint16_t port, std::span<const std::byte> bytes) {
    io_->Queue(ip, port, bytes);
  }
  void CountDroppedCm() { ++dropped_cm_; }
  uint64_t dropped_cm() const { return dropped_cm_; }
  const char* io_backend() const { return io_->backend_name(); }
  // TSS on: every UET datagram is sealed and opened (packet_security.h), and
  // what is queued goes out every `flush_bytes` sealed or opened
  // (crypto_flush.h; 0: at the end of a pass, as with TSS off).
  void SetSecurity(std::unique_ptr<PacketSecurity> s, size_t flush_bytes) {
    security_ = std::move(s);
    crypto_flush_ = CryptoFlush(flush_bytes);
  }
  uint64_t crypto_early_flushes() const { return crypto_flush_.early_flushes(); }
  const PacketSecurity* security() const { return security_.get(); }
  PacketIo::Stats io_stats() const { return io_->stats(); }

  // Registers an operation; its id is the SES context.
  uint64_t AddOp(OpRecord op);
  void DropOp(uint64_t id) {
    if (OpRecord* op = ops_.Find(id)) EraseOp(id, *op);
  }
  // An empty buffer for an inject's copy (OpRecord::owned) with room kept
  // from an earlier inject: no allocation per fi_inject in steady state.
  std::vector<std::byte> TakeInjectBuffer() {
    if (inject_buffers_.empty()) {
      std::vector<std::byte> b;
      b.reserve(kInjectSize);
      return b;
    }
    std::vector<std::byte> b = std::move(inject_buffers_.back());
    inject_buffers_.pop_back();
    return b;
  }
  OpRecord* FindOp(uint64_t id) { return ops_.Find(id); }
  // The bytes an injected send owns (valid until its completion).
  std::span<const std::byte> OwnedBytes(uint64_t id) const { return ops_.Find(id)->owned; }
  // The id of the posted receive with this user context, 0 if none.
  uint64_t FindRecv(void* user_context, bool* tagged) const;

 private:
  Progress(Endpoint& ep, std::unique_ptr<PacketIo> io, uint64_t seed);
  // pds::PacketSink
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override;
  void SendOnPath(const FabricAddress& dst, std::span<const std::byte> packet,
                  uint16_t ev) override;
  // The engine's packets: TSS off, `head` and `body` go straight into the
  // send ring of EV `ev`'s socket (one copy of the body there); TSS on, they
  // are sealed into one datagram (PacketSecurity's two-span Seal).
  void SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                 std::span<const std::byte> body, uint16_t ev) override;
  // TSS off: the ring points at `body` (PacketIo::QueueLent) until it is sent
  // or the engine releases it (Releasing / ReleasingAll: copied in then).
  // `lend`: the ring's loan with the EV in bits 16-31 (PacketIo::Loan), so
  // Releasing goes to the one ring and slot; the buffer's previous loan is
  // released first (a resend queued while the first send still waits).
  void SendRetained(const FabricAddress& dst, std::span<const std::byte> head,
                    std::span<const std::byte> body, uint16_t ev, pds::LendTag& lend) override;
  // Both: `lend` set for SendRetained.
  void QueueParts(const FabricAddress& dst, std::span<const std::byte> head,
                  std::span<const std::byte> body, uint16_t ev, pds::LendTag* lend);
  // EV `ev` (1..) through the main PacketIo with the EV's source port
  // (PacketIo::QueueFromPort: AF_XDP); false: the EV's socket sends it.
  bool QueueFromEvPort(const FabricAddress& dst, std::span<const std::byte> head,
                       std::span<const std::byte> body, uint16_t ev);
  void Releasing(pds::LendTag lend) override;
  void ReleasingAll() override;
  // TSS on: seals head ‖ body to dst and queues it on EV `ev`'s socket:
  // straight into the main socket's send slot where its backend lends one
  // (PacketIo::Reserve), else into PacketSecurity's buffer and then copied.
  // A refused seal (counter exhausted: out_invoke_fail) queues nothing (PDS
  // sees a loss).
  void QueueSealed(const FabricAddress& dst, std::span<const std::byte> head,
                   std::span<const std::byte> body, uint16_t ev);
  uint64_t sealed_in_ring_ = 0;  // datagrams QueueSealed sealed into a send slot
  uint64_t sealed_copied_ = 0;   // and those it sealed elsewhere and copied
  // ses::EndpointEvents
  void OnCompletion(const ses::Completion& c) override;
  void OnPlaced(std::span<const std::byte> bytes) override;
  // The target side of a write with remote CQ data: a receive-CQ entry.
  void OnRemoteWrite(const ses::Completion& c);
  // A remote access SES reported: counts it on its MR's bound counter.
  void CountForRegion(const ses::Completion& c);
  // The CQ entry (or error entry) and counter of op `it`, which then goes.
  void Report(uint64_t id, OpRecord& op, const ses::Completion& c);
  // hmem::HmemEvents
  void OnSourceReady(uint64_t id, size_t bytes) override;
  void OnSourceFailed(uint64_t id, hmem::CUresult r) override;
  void OnCopyInDone(uint64_t id, hmem::CUresult r) override;
  // The counter bound for an operation with these CQ flags, if any.
  Cntr* CounterFor(uint64_t flags) const;

  Endpoint& ep_;
  std::unique_ptr<PacketIo> io_;
  EvSockets ev_sockets_;  // EVs 1 .. FI_UET_EV_COUNT-1 (multipath spraying)
  // The EVs (0: the main socket) holding queued packets, in the order of
  // their first one since the last Flush; `in_order_` marks them.
  std::vector<uint16_t> flush_order_;
  std::vector<bool> in_order_;
  // Before a packet goes into EV `ev`'s batch: a full batch first flushes
  // every socket in order (a batch sending itself would overtake the others).
  void BeforeQueue(uint16_t ev);
  // Queues a whole (sealed if TSS) datagram on the main socket (ev 0) or EV
  // `ev`'s socket.
  void QueueDatagram(const FabricAddress& dst, std::span<const std::byte> datagram, uint16_t ev);
  // ACKs ride with the next send (issue 20): what waits in the send rings
  // (FlushNow sends it all, held or not), and send calls made (socket
  // batches flushed with something queued; logged at close).
  void FlushNow();
  // Keeps Domain::held_rides in step with ride_.held().
  void SyncRideCount();
  // Sends the held batches of `domain`'s endpoints but `except`: those expired
  // at `expired_at` when set, else all of them.
  static void FlushHeldIn(Domain& domain, const Endpoint* except,
                          std::optional<TimePoint> expired_at);
  size_t QueuedTotal() const;
  uint64_t VisibleEvents() const;  // CQ entries and counter events, for Run
  AckRide ride_;
  bool ride_counted_ = false;  // counted in Domain::held_rides
  // The held batch is the main socket's first held_in_io_ datagrams and
  // nothing else was queued with it (0: not so, or nothing held). FlushNow
  // then sends what came behind it first (issue 26 "64-byte latency").
  size_t held_in_io_ = 0;
  // The application's few packets go before the held ACKs: moved in the
  // main socket's ring, and the main socket flushed last.
  void PutHeldLast();
  uint64_t held_moved_ = 0;  // flushes that did (logged at close)
  uint64_t send_batches_ = 0;
  std::optional<TimePoint> last_arrival_;
  uint64_t passes_at_cap_ = 0;  // Run passes that stopped at kMaxDatagramsPerPass
  SeededRandom random_;
  std::unique_ptr<RoutePayloads> route_payloads_;  // before ses_: SES asks it
  std::unique_ptr<ses::Endpoint> ses_;
  std::unique_ptr<PacketSecurity> security_;  // TSS, when on
  // TSS on: `bytes` of a datagram were sealed (and queued) or opened (and
  // handed to SES); flushes early when CryptoFlush says so.
  void AfterCrypto(size_t bytes);
  // The same for a datagram opened inside Run's receive batch: the ACKs the
  // batch holds back (pds::Engine::BeginReceiveBatch) go with the flush.
  void AfterOpen(TimePoint now, size_t bytes);
  CryptoFlush crypto_flush_;
  // Refused datagrams are logged as a warning at most once a second.
  void ReportTssRefusals(TimePoint now);
  uint64_t tss_refused_reported_ = 0;
  TimePoint tss_reported_at_{};
  OpMap ops_;
  // Ends an op; its inject copy's buffer goes back to inject_buffers_ (at
  // most kInjectBuffersKept of at most kInjectSize bytes each).
  void EraseOp(uint64_t id, OpRecord& op);
  static constexpr size_t kInjectBuffersKept = 256;
  std::vector<std::vector<std::byte>> inject_buffers_;
  uint64_t dropped_cm_ = 0;  // CM datagrams not for this endpoint (or malformed)
  bool auto_progress_ = false;  // the domain's FI_PROGRESS_AUTO (its thread polls most)
  // Last member: destroyed first, waiting for copies into buffers ops_ holds.
  std::unique_ptr<hmem::EndpointHmem> hmem_;
};

// The libfabric error code for a failed SES completion.
int FiErrorOf(const ses::Completion& c);

}  // namespace uet::prov
