// Every advertised capability implemented (issue 27; spec-notes/provider.md
// "MR counters and the ENOSYS audit"): for each endpoint type fi_getinfo
// offers, open every object the provider creates (fabric, domain, endpoint,
// passive endpoint, AV, CQ, counter, MR, EQ, wait set) and call each op of
// their ops tables with harmless arguments (data operations before
// fi_enable: nothing is sent). An op whose capability, mode or attribute the
// fi_info advertises must not answer -FI_ENOSYS (a stub). Ops nothing
// advertises may (poll sets, scalable endpoints, shared contexts,
// collectives, multicast, FI_MR_MMU_NOTIFY refresh): they are listed in the
// failure message with the rest, so the table stays visible.
#include <rdma/fi_collective.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

struct Call {
  std::string op;
  bool advertised = false;
  long rc = 0;
};

class EnosysAudit : public ::testing::TestWithParam<fi_ep_type> {
 protected:
  static void SetUpTestSuite() {
    setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
    setenv("FI_PROVIDER", "uet", 0);
  }
  void Check(const std::string& op, bool advertised, long rc) {
    calls_.push_back({op, advertised, rc});
  }
  // Fails for each advertised op that answered -FI_ENOSYS; the message holds
  // the whole table.
  void Verdict() {
    std::string table;
    int stubs = 0;
    for (const Call& c : calls_) {
      const bool enosys = c.rc == -FI_ENOSYS;
      table += "  " + c.op + (c.advertised ? " [advertised] " : " [not advertised] ") +
               (enosys ? "-FI_ENOSYS" : "rc " + std::to_string(c.rc)) + "\n";
      if (enosys && c.advertised) ++stubs;
    }
    EXPECT_EQ(stubs, 0) << "advertised ops answering -FI_ENOSYS:\n" << table;
    EXPECT_GT(calls_.size(), 60u) << table;
  }
  std::vector<Call> calls_;
};

TEST_P(EnosysAudit, NoAdvertisedOpIsAStub) {
  const fi_ep_type type = GetParam();
  // caps 0: everything this endpoint type offers.
  InfoPtr info = GetInfo({.ip = "127.0.0.5", .caps = 0, .type = type});
  ASSERT_NE(info, nullptr);
  const uint64_t caps = info->caps;
  const fi_domain_attr& da = *info->domain_attr;
  const bool msg_ep = type == FI_EP_MSG;

  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  fid_domain* domain = nullptr;
  Check("fi_domain", true, fi_domain(fabric, info.get(), &domain, nullptr));
  ASSERT_NE(domain, nullptr);
  fid_eq* eq = nullptr;
  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_NONE;
  Check("fi_eq_open", true, fi_eq_open(fabric, &eq_attr, &eq, nullptr));
  ASSERT_NE(eq, nullptr);
  fid_wait* wait = nullptr;
  fi_wait_attr wait_attr{};
  wait_attr.wait_obj = FI_WAIT_FD;
  Check("fi_wait_open", true, fi_wait_open(fabric, &wait_attr, &wait));
  ASSERT_NE(wait, nullptr);
  Check("fi_trywait", true, fi_trywait(fabric, nullptr, 0));
  fid_pep* pep = nullptr;
  const int pep_rc = fi_passive_ep(fabric, info.get(), &pep, nullptr);
  Check("fi_passive_ep", msg_ep, pep_rc);

  // ---- domain ----
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_FD;
  cq_attr.size = 64;
  fid_cq* cq = nullptr;
  Check("fi_cq_open", true, fi_cq_open(domain, &cq_attr, &cq, nullptr));
  ASSERT_NE(cq, nullptr);
  fi_cntr_attr cntr_attr{};
  cntr_attr.events = FI_CNTR_EVENTS_COMP;
  cntr_attr.wait_obj = FI_WAIT_FD;
  fid_cntr* cntr = nullptr;
  Check("fi_cntr_open", da.cntr_cnt > 0, fi_cntr_open(domain, &cntr_attr, &cntr, nullptr));
  ASSERT_NE(cntr, nullptr);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  fid_av* av = nullptr;
  Check("fi_av_open", true, fi_av_open(domain, &av_attr, &av, nullptr));
  ASSERT_NE(av, nullptr);
  static uint8_t region[4096];
  fid_mr* mr = nullptr;
  Check("fi_mr_reg", da.mr_cnt > 0,
        fi_mr_reg(domain, region, sizeof region, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ |
                  FI_WRITE | FI_SEND | FI_RECV, 0, 1, 0, &mr, nullptr));
  ASSERT_NE(mr, nullptr);
  fi_atomic_attr aattr{};
  Check("fi_query_atomic", caps & FI_ATOMIC,
        fi_query_atomic(domain, FI_UINT64, FI_SUM, &aattr, 0));
  fid_ep* sep = nullptr;
  Check("fi_scalable_ep", da.max_ep_tx_ctx > 1 || da.max_ep_rx_ctx > 1,
        fi_scalable_ep(domain, info.get(), &sep, nullptr));
  fid_stx* stx = nullptr;
  Check("fi_stx_context", da.max_ep_stx_ctx > 0, fi_stx_context(domain, nullptr, &stx, nullptr));
  fid_ep* srx = nullptr;
  Check("fi_srx_context", da.max_ep_srx_ctx > 0, fi_srx_context(domain, nullptr, &srx, nullptr));
  fid_poll* poll = nullptr;
  fi_poll_attr poll_attr{};
  Check("fi_poll_open (no attribute advertises poll sets)", false,
        fi_poll_open(domain, &poll_attr, &poll));
  fi_collective_attr cattr{};
  Check("fi_query_collective", caps & FI_COLLECTIVE,
        fi_query_collective(domain, FI_BARRIER, &cattr, 0));
  Check("fi_domain_bind(eq) (no attribute advertises async MR events)", false,
        fi_domain_bind(domain, &eq->fid, 0));

  // ---- endpoint (not enabled: data ops are refused before sending) ----
  fid_ep* ep = nullptr;
  Check("fi_endpoint", true, fi_endpoint(domain, info.get(), &ep, nullptr));
  ASSERT_NE(ep, nullptr);
  Check("fi_ep_bind(cq)", true, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
  if (!msg_ep) Check("fi_ep_bind(av)", true, fi_ep_bind(ep, &av->fid, 0));
  if (msg_ep) Check("fi_ep_bind(eq)", true, fi_ep_bind(ep, &eq->fid, 0));
  Check("fi_ep_bind(cntr, FI_SEND)", da.cntr_cnt > 0, fi_ep_bind(ep, &cntr->fid, FI_SEND));
  Check("fi_ep_bind(cntr, FI_REMOTE_WRITE)", caps & FI_RMA_EVENT,
        fi_ep_bind(ep, &cntr->fid, FI_REMOTE_WRITE));
  uint64_t opsflag = FI_TRANSMIT;
  Check("fi_control(ep, FI_GETOPSFLAG)", true, fi_control(&ep->fid, FI_GETOPSFLAG, &opsflag));
  int ctx = 0;
  Check("fi_cancel", true, fi_cancel(&ep->fid, &ctx));
  size_t min_mr = 0, len = sizeof min_mr;
  Check("fi_getopt(FI_OPT_MIN_MULTI_RECV)", caps & FI_MULTI_RECV,
        fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min_mr, &len));
  Check("fi_setopt(FI_OPT_MIN_MULTI_RECV)", caps & FI_MULTI_RECV,
        fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min_mr, sizeof min_mr));
  // fi_rx/tx_size_left are deprecated wrappers: the ops themselves.
  Check("fi_rx_size_left", true, ep->ops->rx_size_left(ep));
  Check("fi_tx_size_left", true, ep->ops->tx_size_left(ep));
  fid_ep* tx_ctx = nullptr;
  Check("fi_tx_context", info->ep_attr->tx_ctx_cnt > 1, fi_tx_context(ep, 0, nullptr, &tx_ctx, nullptr));
  Check("fi_rx_context", info->ep_attr->rx_ctx_cnt > 1, fi_rx_context(ep, 0, nullptr, &tx_ctx, nullptr));
  uint8_t name[256];
  size_t name_len = sizeof name;
  Check("fi_getname", true, fi_getname(&ep->fid, name, &name_len));
  Check("fi_setname", true, fi_setname(&ep->fid, nullptr, 0));
  Check("fi_getpeer", msg_ep, fi_getpeer(ep, name, &name_len));
  Check("fi_connect", msg_ep, fi_connect(ep, nullptr, nullptr, 0));
  Check("fi_accept", msg_ep, fi_accept(ep, nullptr, 0));
  Check("fi_shutdown", msg_ep, fi_shutdown(ep, 0));
  fid_mc* mc = nullptr;
  Check("fi_join", caps & FI_MULTICAST, fi_join(ep, name, 0, &mc, nullptr));

  static uint8_t buf[64];
  iovec iov{buf, 8};
  void* desc = nullptr;
  const fi_addr_t to = 0;
  const bool m = caps & FI_MSG;
  fi_msg msg{.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = to, .context = nullptr,
             .data = 0};
  Check("fi_recv", m, fi_recv(ep, buf, 8, nullptr, to, nullptr));
  Check("fi_recvv", m, fi_recvv(ep, &iov, &desc, 1, to, nullptr));
  Check("fi_recvmsg", m, fi_recvmsg(ep, &msg, 0));
  Check("fi_send", m, fi_send(ep, buf, 8, nullptr, to, nullptr));
  Check("fi_sendv", m, fi_sendv(ep, &iov, &desc, 1, to, nullptr));
  Check("fi_sendmsg", m, fi_sendmsg(ep, &msg, 0));
  Check("fi_inject", m, fi_inject(ep, buf, 8, to));
  Check("fi_senddata", m, fi_senddata(ep, buf, 8, nullptr, 1, to, nullptr));
  Check("fi_injectdata", m, fi_injectdata(ep, buf, 8, 1, to));
  const bool t = caps & FI_TAGGED;
  fi_msg_tagged tmsg{.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = to, .tag = 1,
                     .ignore = 0, .context = nullptr, .data = 0};
  Check("fi_trecv", t, fi_trecv(ep, buf, 8, nullptr, to, 1, 0, nullptr));
  Check("fi_trecvv", t, fi_trecvv(ep, &iov, &desc, 1, to, 1, 0, nullptr));
  Check("fi_trecvmsg", t, fi_trecvmsg(ep, &tmsg, 0));
  Check("fi_tsend", t, fi_tsend(ep, buf, 8, nullptr, to, 1, nullptr));
  Check("fi_tsendv", t, fi_tsendv(ep, &iov, &desc, 1, to, 1, nullptr));
  Check("fi_tsendmsg", t, fi_tsendmsg(ep, &tmsg, 0));
  Check("fi_tinject", t, fi_tinject(ep, buf, 8, to, 1));
  Check("fi_tsenddata", t, fi_tsenddata(ep, buf, 8, nullptr, 1, to, 1, nullptr));
  Check("fi_tinjectdata", t, fi_tinjectdata(ep, buf, 8, 1, to, 1));
  const bool r = caps & FI_RMA;
  fi_rma_iov riov{.addr = 0, .len = 8, .key = 1};
  fi_msg_rma rmsg{.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = to, .rma_iov = &riov,
                  .rma_iov_count = 1, .context = nullptr, .data = 0};
  Check("fi_read", r, fi_read(ep, buf, 8, nullptr, to, 0, 1, nullptr));
  Check("fi_readv", r, fi_readv(ep, &iov, &desc, 1, to, 0, 1, nullptr));
  Check("fi_readmsg", r, fi_readmsg(ep, &rmsg, 0));
  Check("fi_write", r, fi_write(ep, buf, 8, nullptr, to, 0, 1, nullptr));
  Check("fi_writev", r, fi_writev(ep, &iov, &desc, 1, to, 0, 1, nullptr));
  Check("fi_writemsg", r, fi_writemsg(ep, &rmsg, 0));
  Check("fi_inject_write", r, fi_inject_write(ep, buf, 8, to, 0, 1));
  Check("fi_writedata", r, fi_writedata(ep, buf, 8, nullptr, 1, to, 0, 1, nullptr));
  Check("fi_inject_writedata", r, fi_inject_writedata(ep, buf, 8, 1, to, 0, 1));
  const bool a = caps & FI_ATOMIC;
  static uint64_t res[1], cmp[1];
  fi_ioc ioc{buf, 1}, rioc{res, 1}, cioc{cmp, 1};
  fi_rma_ioc rma_ioc{.addr = 0, .count = 1, .key = 1};
  fi_msg_atomic amsg{.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = to,
                     .rma_iov = &rma_ioc, .rma_iov_count = 1, .datatype = FI_UINT64, .op = FI_SUM,
                     .context = nullptr, .data = 0};
  Check("fi_atomic", a, fi_atomic(ep, buf, 1, nullptr, to, 0, 1, FI_UINT64, FI_SUM, nullptr));
  Check("fi_atomicv", a, fi_atomicv(ep, &ioc, &desc, 1, to, 0, 1, FI_UINT64, FI_SUM, nullptr));
  Check("fi_atomicmsg", a, fi_atomicmsg(ep, &amsg, 0));
  Check("fi_inject_atomic", a, fi_inject_atomic(ep, buf, 1, to, 0, 1, FI_UINT64, FI_SUM));
  Check("fi_fetch_atomic", a, fi_fetch_atomic(ep, buf, 1, nullptr, res, nullptr, to, 0, 1,
                                              FI_UINT64, FI_SUM, nullptr));
  Check("fi_fetch_atomicv", a, fi_fetch_atomicv(ep, &ioc, &desc, 1, &rioc, &desc, 1, to, 0, 1,
                                                FI_UINT64, FI_SUM, nullptr));
  Check("fi_fetch_atomicmsg", a, fi_fetch_atomicmsg(ep, &amsg, &rioc, &desc, 1, 0));
  Check("fi_compare_atomic", a, fi_compare_atomic(ep, buf, 1, nullptr, cmp, nullptr, res, nullptr,
                                                  to, 0, 1, FI_UINT64, FI_CSWAP, nullptr));
  Check("fi_compare_atomicv", a, fi_compare_atomicv(ep, &ioc, &desc, 1, &cioc, &desc, 1, &rioc,
                                                    &desc, 1, to, 0, 1, FI_UINT64, FI_CSWAP,
                                                    nullptr));
  amsg.op = FI_CSWAP;
  Check("fi_compare_atomicmsg", a,
        fi_compare_atomicmsg(ep, &amsg, &cioc, &desc, 1, &rioc, &desc, 1, 0));
  size_t count = 0;
  Check("fi_atomicvalid", a, fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count));
  Check("fi_fetch_atomicvalid", a, fi_fetch_atomicvalid(ep, FI_UINT64, FI_SUM, &count));
  Check("fi_compare_atomicvalid", a, fi_compare_atomicvalid(ep, FI_UINT64, FI_CSWAP, &count));
  Check("fi_barrier", caps & FI_COLLECTIVE, fi_barrier(ep, 0, nullptr));

  // ---- passive endpoint ----
  if (pep != nullptr) {
    Check("fi_pep_bind(eq)", true, fi_pep_bind(pep, &eq->fid, 0));
    size_t pname_len = sizeof name;
    Check("fi_getname(pep)", true, fi_getname(&pep->fid, name, &pname_len));
    Check("fi_listen", true, fi_listen(pep));
    Check("fi_reject", true, fi_reject(pep, nullptr, nullptr, 0));
  }

  // ---- AV ----
  fi_addr_t fa[4];
  Check("fi_av_insert", true, fi_av_insert(av, name, 1, &fa[0], 0, nullptr));
  Check("fi_av_insertsvc", true, fi_av_insertsvc(av, "127.0.0.9", "4793", &fa[1], 0, nullptr));
  Check("fi_av_insertsym", true, fi_av_insertsym(av, "127.0.0.9", 1, "4800", 2, &fa[2], 0, nullptr));
  size_t alen = sizeof name;
  Check("fi_av_lookup", true, fi_av_lookup(av, fa[0], name, &alen));
  char text[128];
  size_t text_len = sizeof text;
  Check("fi_av_straddr", true, fi_av_straddr(av, name, text, &text_len) == nullptr ? -1 : 0);
  Check("fi_av_remove", true, fi_av_remove(av, &fa[1], 1, 0));
  fi_av_set_attr set_attr{};
  fid_av_set* av_set = nullptr;
  Check("fi_av_set", caps & FI_COLLECTIVE, fi_av_set(av, &set_attr, &av_set, nullptr));

  // ---- CQ (FI_WAIT_FD) ----
  fi_cq_tagged_entry entry[2];
  fi_addr_t src = 0;
  fi_cq_err_entry err{};
  int fd = -1;
  Check("fi_cq_read", true, fi_cq_read(cq, entry, 2));
  Check("fi_cq_readfrom", true, fi_cq_readfrom(cq, entry, 2, &src));
  Check("fi_cq_readerr", true, fi_cq_readerr(cq, &err, 0));
  Check("fi_cq_signal (FI_WAIT_FD)", true, fi_cq_signal(cq));
  Check("fi_cq_sread", true, fi_cq_sread(cq, entry, 2, nullptr, 0));
  Check("fi_cq_sreadfrom", true, fi_cq_sreadfrom(cq, entry, 2, &src, nullptr, 0));
  Check("fi_cq_strerror", true, fi_cq_strerror(cq, 0, nullptr, text, sizeof text) ? 0 : -1);
  Check("fi_control(cq, FI_GETWAIT)", true, fi_control(&cq->fid, FI_GETWAIT, &fd));

  // ---- counter (FI_WAIT_FD) ----
  Check("fi_cntr_read", true, static_cast<long>(fi_cntr_read(cntr)));
  Check("fi_cntr_readerr", true, static_cast<long>(fi_cntr_readerr(cntr)));
  Check("fi_cntr_add", true, fi_cntr_add(cntr, 1));
  Check("fi_cntr_set", true, fi_cntr_set(cntr, 0));
  Check("fi_cntr_adderr", true, fi_cntr_adderr(cntr, 1));
  Check("fi_cntr_seterr", true, fi_cntr_seterr(cntr, 0));
  Check("fi_cntr_wait", true, fi_cntr_wait(cntr, 5, 0));
  Check("fi_control(cntr, FI_GETWAIT)", true, fi_control(&cntr->fid, FI_GETWAIT, &fd));

  // ---- MR ----
  fid_cntr* mr_cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(domain, &cntr_attr, &mr_cntr, nullptr), 0);
  Check("fi_mr_bind(cntr, FI_REMOTE_WRITE)", caps & FI_RMA_EVENT,
        fi_mr_bind(mr, &mr_cntr->fid, FI_REMOTE_WRITE));
  Check("fi_mr_bind(ep)", da.mr_mode & FI_MR_ENDPOINT, fi_mr_bind(mr, &ep->fid, 0));
  Check("fi_mr_enable", true, fi_mr_enable(mr));
  Check("fi_mr_refresh", da.mr_mode & FI_MR_MMU_NOTIFY, fi_mr_refresh(mr, nullptr, 0, 0));

  // ---- EQ and wait set ----
  uint32_t event = 0;
  fi_eq_err_entry eq_err{};
  Check("fi_eq_read", true, fi_eq_read(eq, &event, name, sizeof name, 0));
  Check("fi_eq_readerr", true, fi_eq_readerr(eq, &eq_err, 0));
  Check("fi_eq_write", true, fi_eq_write(eq, FI_NOTIFY, name, 8, 0));
  Check("fi_eq_sread", true, fi_eq_sread(eq, &event, name, sizeof name, 0, 0));
  Check("fi_eq_strerror", true, fi_eq_strerror(eq, 0, nullptr, text, sizeof text) ? 0 : -1);
  Check("fi_wait", true, fi_wait(wait, 0));
  Check("fi_control(wait, FI_GETWAIT)", true, fi_control(&wait->fid, FI_GETWAIT, &fd));

  Verdict();

  EXPECT_EQ(fi_close(&mr->fid), 0);
  EXPECT_EQ(fi_close(&ep->fid), 0);
  if (pep != nullptr) {
    EXPECT_EQ(fi_close(&pep->fid), 0);
  }
  for (fid* f : {&mr_cntr->fid, &cntr->fid, &cq->fid, &av->fid, &domain->fid, &eq->fid,
                 &wait->fid, &fabric->fid}) {
    EXPECT_EQ(fi_close(f), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryEndpointType, EnosysAudit,
                         ::testing::Values(FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM),
                         [](const ::testing::TestParamInfo<fi_ep_type>& p) {
                           return std::string(p.param == FI_EP_RDM   ? "Rdm"
                                              : p.param == FI_EP_MSG ? "Msg"
                                                                     : "Dgram");
                         });

// What the audit found stubbed, now implemented: fi_cq_signal wakes a
// blocked fi_cq_sread; fi_av_insertsvc / fi_av_insertsym build the address of
// an endpoint on that IP and port.
class AuditedOps : public RdmApi {};

TEST_F(AuditedOps, CqSignalWakesABlockedSread) {
  fi_cq_attr attr{};
  attr.format = FI_CQ_FORMAT_TAGGED;
  attr.wait_obj = FI_WAIT_FD;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(a_.domain, &attr, &cq, nullptr), 0);
  const auto start = std::chrono::steady_clock::now();
  auto reader = std::async(std::launch::async, [&] {
    fi_cq_tagged_entry e{};
    return fi_cq_sread(cq, &e, 1, nullptr, 20000);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(fi_cq_signal(cq), 0);
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(reader.get(), -FI_EAGAIN);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Not blocked when signalled: the next blocking read returns at once.
  ASSERT_EQ(fi_cq_signal(cq), 0);
  fi_cq_tagged_entry e{};
  EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 20000), -FI_EAGAIN);
  EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(AuditedOps, AvInsertSvcAndSymBuildTheAddressOfThatIpAndPort) {
  auto text = [&](fi_addr_t a) {
    uint8_t blob[64];
    size_t len = sizeof blob;
    EXPECT_EQ(fi_av_lookup(a_.ep.av, a, blob, &len), 0);
    char buf[128];
    size_t n = sizeof buf;
    return std::string(fi_av_straddr(a_.ep.av, blob, buf, &n));
  };
  fi_addr_t one = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insertsvc(a_.ep.av, "127.0.0.9", "5000", &one, 0, nullptr), 1);
  const std::string t = text(one);
  EXPECT_NE(t.find("127.0.0.9"), std::string::npos) << t;
  EXPECT_NE(t.find("5000"), std::string::npos) << t;
  fi_addr_t sym[4];
  ASSERT_EQ(fi_av_insertsym(a_.ep.av, "127.0.0.9", 2, "5000", 2, sym, 0, nullptr), 4);
  const char* nodes[] = {"127.0.0.9", "127.0.0.9", "127.0.0.10", "127.0.0.10"};
  const char* ports[] = {"5000", "5001", "5000", "5001"};
  for (int i = 0; i < 4; ++i) {
    fi_addr_t want = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insertsvc(a_.ep.av, nodes[i], ports[i], &want, 0, nullptr), 1);
    EXPECT_EQ(text(sym[i]), text(want)) << i;
  }
  EXPECT_EQ(fi_av_insertsvc(a_.ep.av, "no.such.host.invalid", "1", &one, FI_NUMERICHOST,
                            nullptr),
            0);
  EXPECT_EQ(one, FI_ADDR_NOTAVAIL);
  EXPECT_EQ(fi_av_insertsym(a_.ep.av, "a-name", 1, "5000", 1, sym, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_av_insertsym(a_.ep.av, "127.0.0.9", 1, "65535", 2, sym, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_av_insertsvc(a_.ep.av, "127.0.0.9", "1", &one, FI_MORE, nullptr), -FI_EBADFLAGS);
}

}  // namespace
}  // namespace uet::fitest
