#!/usr/bin/env python3
"""UDP sender and receiver for tests/net/mpnet_test.sh (standard library only).

  mpnet_udp.py recv --port P [--v6] --ready FILE [--done FILE2] [--idle S]
                    [--deadline S]
      Binds the wildcard address (IPv4, or IPv6 with --v6), creates FILE once
      bound, counts datagrams until --idle seconds pass without one, counted
      from the first datagram, or with --done from when FILE2 exists (the
      caller creates it when its senders have finished: a stalled sender
      cannot end the count early), or --deadline seconds in all. Reads each datagram's IP ECN bits
      (IP_RECVTOS / IPV6_RECVTCLASS) and kernel arrival time (SO_TIMESTAMPNS).
      Prints key=value lines: packets, bytes, ce, ect, notect, span_s (first
      to last arrival), rate_mbit (payload bits over span_s), rate_med_mbit
      (the median payload rate of the 50 ms bins in span_s), and
      sport_N=count for each source port, src_ADDR=count for each source.

  mpnet_udp.py send --dst ADDR --port P [--sport-base B] [--sports N]
                    [--count K | --seconds D] [--size S] [--tos T] [--pps R]
      N sockets bound to source ports B..B+N-1 (so that the flows and their
      ECMP links are the same on every run), round-robin, K datagrams from
      each (or as many as fit in D seconds), S bytes of payload, IP TOS /
      traffic class T (default 2: ECT(0)), at most R datagrams per second in
      all when given. Prints sent, bytes, errors, seconds, rate_mbit.
"""
import argparse
import os
import socket
import sys
import time

ECN_MASK = 0x03
ECN_CE = 0x03
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)  # Linux; not in Python's module
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
BIN_S = 0.05  # rate_med_mbit: bins of 50 ms


def recv(a):
    fam = socket.AF_INET6 if a.v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:  # root: past net.core.rmem_max, so that a burst is not lost here
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    # Arrival times from the kernel: a receiver that is scheduled late still
    # measures the link, not itself.
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    if a.v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
        s.bind(("::", a.port))
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        s.bind(("0.0.0.0", a.port))
    with open(a.ready, "w"):
        pass
    packets = nbytes = ce = ect = notect = 0
    first = last = None  # monotonic, for --idle
    arrivals = []  # (kernel time, bytes)
    sports = {}
    srcs = {}
    start = time.monotonic()
    done_at = None  # when --done appeared
    s.settimeout(0.05)
    while True:
        now = time.monotonic()
        if now - start >= a.deadline:
            break
        if a.done:
            if done_at is None and os.path.exists(a.done):
                done_at = now
            idle_from = max(done_at, last or 0.0) if done_at is not None else None
        else:
            idle_from = last
        if idle_from is not None and now - idle_from >= a.idle:
            break
        try:
            data, anc, _flags, src = s.recvmsg(65536, socket.CMSG_SPACE(4) + socket.CMSG_SPACE(16))
        except socket.timeout:
            continue
        now = time.monotonic()
        if first is None:
            first = now
        last = now
        packets += 1
        nbytes += len(data)
        sports[src[1]] = sports.get(src[1], 0) + 1
        srcs[src[0]] = srcs.get(src[0], 0) + 1
        tos = stamp = None
        for level, kind, val in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec = int.from_bytes(val[0:8], sys.byteorder)
                nsec = int.from_bytes(val[8:16], sys.byteorder)
                stamp = sec + nsec * 1e-9
            if level == socket.IPPROTO_IP and kind == socket.IP_TOS:
                tos = val[0]
            elif level == socket.IPPROTO_IPV6 and kind == socket.IPV6_TCLASS:
                tos = int.from_bytes(val[:4], sys.byteorder)
        if tos is None or stamp is None:
            sys.exit("recv: no TOS / traffic class or timestamp control message")
        arrivals.append((stamp, len(data)))
        bits = tos & ECN_MASK
        if bits == ECN_CE:
            ce += 1
        elif bits:
            ect += 1
        else:
            notect += 1
    span = (arrivals[-1][0] - arrivals[0][0]) if packets > 1 else 0.0
    # The median of the payload rates in the full 50 ms bins after the first
    # arrival: a sender that stalls for a bin or two does not move it.
    bins = [0] * int(span / BIN_S)
    for t, n in arrivals:
        i = int((t - arrivals[0][0]) / BIN_S)
        if i < len(bins):
            bins[i] += n
    med = sorted(bins)[len(bins) // 2] * 8 / BIN_S / 1e6 if bins else 0.0
    print(f"packets={packets}\nbytes={nbytes}\nce={ce}\nect={ect}\nnotect={notect}")
    print(f"span_s={span:.6f}")
    print(f"rate_mbit={(nbytes * 8 / span / 1e6) if span > 0 else 0:.1f}")
    print(f"rate_med_mbit={med:.1f}")
    for p in sorted(sports):
        print(f"sport_{p}={sports[p]}")
    for addr in sorted(srcs):
        print(f"src_{addr}={srcs[addr]}")


def send(a):
    v6 = ":" in a.dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    socks = []
    for i in range(a.sports):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        if v6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, a.tos)
        else:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
        s.bind(("::" if v6 else "0.0.0.0", a.sport_base + i))
        socks.append(s)
    payload = os.urandom(a.size)
    dst = (a.dst, a.port)
    sent = errors = 0
    start = time.monotonic()
    gap = 1.0 / a.pps if a.pps else 0.0
    k = 0
    while True:
        if a.seconds is not None:
            if time.monotonic() - start >= a.seconds:
                break
        elif k >= a.count:
            break
        for s in socks:
            if gap:
                wait = start + sent * gap - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            try:
                s.sendto(payload, dst)
                sent += 1
            except OSError:
                errors += 1
        k += 1
    secs = time.monotonic() - start
    print(f"sent={sent}\nbytes={sent * a.size}\nerrors={errors}\nseconds={secs:.3f}")
    print(f"rate_mbit={(sent * a.size * 8 / secs / 1e6) if secs > 0 else 0:.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--v6", action="store_true")
    r.add_argument("--ready", required=True)
    r.add_argument("--idle", type=float, default=0.5)
    r.add_argument("--done", help="idle counts only once this file exists")
    r.add_argument("--deadline", type=float, default=10.0)
    t = sub.add_parser("send")
    t.add_argument("--dst", required=True)
    t.add_argument("--port", type=int, required=True)
    t.add_argument("--sport-base", type=int, default=40000)
    t.add_argument("--sports", type=int, default=1)
    t.add_argument("--count", type=int, default=100)
    t.add_argument("--seconds", type=float)
    t.add_argument("--size", type=int, default=1000)
    t.add_argument("--tos", type=int, default=2)
    t.add_argument("--pps", type=float, default=0.0)
    a = p.parse_args()
    recv(a) if a.cmd == "recv" else send(a)


if __name__ == "__main__":
    main()
