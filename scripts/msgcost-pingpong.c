// scripts/msgcost.sh's ping-pong (not a test): two `uet` RDM endpoints in one
// thread of one process play fi_pingpong's 64 B inject loop (client injects,
// server reads the message, reposts its receive and injects the reply, the
// client reads it and reposts). One thread: each datagram is already in the
// peer's socket when the peer reads, so the count of instructions has no spin
// in it (the run prints its empty CQ reads: 0 expected).
//
//   msgcost-pingpong ITERATIONS [SIZE]      (SIZE default 64)
//
// FI_PROVIDER_PATH names the directory of libuet-fi.so; FI_UET_ADDR the address.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                         \
  do {                                                                   \
    long rc_ = (long)(x);                                                \
    if (rc_ < 0) {                                                       \
      fprintf(stderr, "%s: %ld %s\n", #x, rc_, fi_strerror((int)-rc_)); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

struct node {
  struct fi_info* info;
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_ep* ep;
  struct fid_av* av;
  struct fid_cq* tx;
  struct fid_cq* rx;
  char name[64];
  size_t name_len;
};

static void node_open(struct node* n) {
  struct fi_info* hints = fi_allocinfo();
  hints->caps = FI_MSG;
  hints->ep_attr->type = FI_EP_RDM;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  hints->fabric_attr->prov_name = strdup("uet");
  CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &n->info));
  fi_freeinfo(hints);
  CHECK(fi_fabric(n->info->fabric_attr, &n->fabric, NULL));
  CHECK(fi_domain(n->fabric, n->info, &n->domain, NULL));
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = 1024};
  CHECK(fi_cq_open(n->domain, &cq_attr, &n->tx, NULL));
  CHECK(fi_cq_open(n->domain, &cq_attr, &n->rx, NULL));
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  CHECK(fi_av_open(n->domain, &av_attr, &n->av, NULL));
  CHECK(fi_endpoint(n->domain, n->info, &n->ep, NULL));
  CHECK(fi_ep_bind(n->ep, &n->av->fid, 0));
  CHECK(fi_ep_bind(n->ep, &n->tx->fid, FI_TRANSMIT));
  CHECK(fi_ep_bind(n->ep, &n->rx->fid, FI_RECV));
  CHECK(fi_enable(n->ep));
  n->name_len = sizeof n->name;
  CHECK(fi_getname(&n->ep->fid, n->name, &n->name_len));
}

static long empty_reads;

static void wait_one(struct fid_cq* cq) {
  struct fi_cq_entry e;
  for (;;) {
    ssize_t got = fi_cq_read(cq, &e, 1);
    if (got == 1) return;
    if (got != -FI_EAGAIN) {
      fprintf(stderr, "fi_cq_read: %zd\n", got);
      exit(1);
    }
    ++empty_reads;
  }
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 1000;
  const size_t size = argc > 2 ? (size_t)atoi(argv[2]) : 64;
  struct node a = {0}, b = {0};
  node_open(&a);
  node_open(&b);
  fi_addr_t a_to_b, b_to_a;
  CHECK(fi_av_insert(a.av, b.name, 1, &a_to_b, 0, NULL));
  CHECK(fi_av_insert(b.av, a.name, 1, &b_to_a, 0, NULL));
  char* out = calloc(1, size);
  char* in_a = calloc(1, size);
  char* in_b = calloc(1, size);
  struct fi_context ctx_a, ctx_b;
  CHECK(fi_recv(a.ep, in_a, size, NULL, FI_ADDR_UNSPEC, &ctx_a));
  CHECK(fi_recv(b.ep, in_b, size, NULL, FI_ADDR_UNSPEC, &ctx_b));
  for (int i = 0; i < iterations; ++i) {
    out[0] = (char)i;
    CHECK(fi_inject(a.ep, out, size, a_to_b));
    wait_one(b.rx);
    if (in_b[0] != (char)i) {
      fprintf(stderr, "round %d: wrong message\n", i);
      return 1;
    }
    CHECK(fi_recv(b.ep, in_b, size, NULL, FI_ADDR_UNSPEC, &ctx_b));
    CHECK(fi_inject(b.ep, out, size, b_to_a));
    wait_one(a.rx);
    CHECK(fi_recv(a.ep, in_a, size, NULL, FI_ADDR_UNSPEC, &ctx_a));
  }
  printf("msgcost-pingpong: %d round trips of %zu B, empty CQ reads %ld\n", iterations, size,
         empty_reads);
  fi_close(&a.ep->fid);
  fi_close(&b.ep->fid);
  return 0;
}
