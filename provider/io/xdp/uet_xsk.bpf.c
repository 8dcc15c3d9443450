// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The XDP program of the AF_XDP backend (provider/io/xdp_io.h): IPv4 UDP
// datagrams to the endpoint's port go to the AF_XDP socket of the queue they
// arrived on; everything else (ARP, IPv6, TCP, other UDP ports, IPv4
// fragments and packets with IP options) continues into the kernel
// (XDP_PASS), so the endpoint's ordinary UDP socket, the neighbour subsystem
// and other applications see it as before.
//
// The port is a read-only global that the loader sets before the object is
// loaded (it is the endpoint's; one program instance per endpoint).
// bpf_redirect_map with XDP_PASS as its flags passes the packet on when the
// queue has no socket in `xsks` (a queue the endpoint did not bind, or the
// moment between attach and bind), so nothing is dropped there.
//
// Compiled by CMake (clang -O2 -g -target bpf) and embedded into
// libuet-fi.so (provider/io/xdp_prog.h).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} uet_xsks SEC(".maps");

// Set by the loader (xdp_io.cc) through the object's .rodata before load.
volatile const __u16 uet_port_be = 0;  // network order

SEC("xdp")
int uet_xsk_redirect(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return XDP_PASS;
  if (eth->h_proto != bpf_htons(ETH_P_IP)) return XDP_PASS;
  struct iphdr *ip = (void *)(eth + 1);
  if ((void *)(ip + 1) > end) return XDP_PASS;
  // Options and fragments take the kernel's path (the kernel reassembles).
  if (ip->ihl != 5 || ip->protocol != IPPROTO_UDP) return XDP_PASS;
  if ((ip->frag_off & bpf_htons(0x3fff)) != 0) return XDP_PASS;
  struct udphdr *udp = (void *)(ip + 1);
  if ((void *)(udp + 1) > end) return XDP_PASS;
  if (udp->dest != uet_port_be) return XDP_PASS;
  return bpf_redirect_map(&uet_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
