#!/usr/bin/env python3
"""The invariants of the chaos soak (scripts/soak.sh), checked on its records.

    scripts/soak-check.py DIR

DIR holds config.json, events.log (wall-clock ms, one action a line) and one
record per rank incarnation, rR.I.json (apps/soak_main.cc; "final": false when
the incarnation was killed and only its last 5-second snapshot remains).
Prints the table; exit status 0 when every invariant holds, else 1.
spec-notes/provider.md "Chaos soak (issue 28)" defines the invariants.
"""
import glob
import json
import os
import re
import sys

SLACK_MS = 2000      # scheduling slack on a loaded 2-core host
STOP_SLACK_MS = 1500  # a silence this much below the peer timeout may already trip it


def load(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    events = []
    for line in open(os.path.join(d, "events.log")):
        f = line.split()
        if len(f) >= 2:
            events.append((int(f[0]), f[1], f[2:]))
    recs = {}
    for p in glob.glob(os.path.join(d, "r*.json")):
        m = re.match(r"r(\d+)\.(\d+)\.json$", os.path.basename(p))
        if not m:
            continue
        try:
            recs[(int(m.group(1)), int(m.group(2)))] = json.load(open(p))
        except ValueError as e:  # a snapshot cut by SIGKILL cannot be: rename is atomic
            print(f"soak-check: {p}: {e}")
    return cfg, events, recs


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1] + 500:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def ranges_contain(ranges, s):
    lo, hi = 0, len(ranges)
    while lo < hi:
        m = (lo + hi) // 2
        if ranges[m][1] < s:
            lo = m + 1
        else:
            hi = m
    return lo < len(ranges) and ranges[lo][0] <= s <= ranges[lo][1]


def main():
    d = sys.argv[1]
    cfg, events, recs = load(d)
    n = cfg["ranks"]
    tp = cfg["peer_timeout_ms"]
    end_at = cfg["end_at"]
    names = {int(k): v for k, v in cfg["names"].items()}
    rank_of_name = {v: k for k, v in names.items()}
    group = {int(k): v for k, v in cfg["groups"].items()}

    # ---- timelines ----
    kills = {r: [] for r in range(n)}      # (t, inc killed)
    starts = {r: {} for r in range(n)}     # inc -> start event time
    unreach = {r: [] for r in range(n)}    # stopped / cut / dead intervals
    stops = {r: [] for r in range(n)}
    open_stop, open_down = {}, {}
    crashes, hangs = [], []
    counts = {}
    slowest = (0, "")  # the longest action command (took=MS, soak.sh logs it)
    for t, kind, a in events:
        counts[kind] = counts.get(kind, 0) + 1
        for f in a:
            if f.startswith("took=") and int(f[5:]) > slowest[0]:
                slowest = (int(f[5:]), f"{kind} {a[0]} at {t - cfg['t0']} ms")
        if kind == "start":
            starts[int(a[0])][int(a[1])] = t
        elif kind == "stop":
            open_stop[int(a[0])] = t
        elif kind == "cont":
            r = int(a[0])
            stops[r].append((open_stop[r], t))
            unreach[r].append((open_stop.pop(r), t))
        elif kind == "linkdown":
            open_down[int(a[0])] = t
        elif kind == "linkup":
            r = int(a[0])
            unreach[r].append((open_down.pop(r), t))
        elif kind == "kill":
            kills[int(a[0])].append((t, int(a[1])))
        elif kind == "crash":
            crashes.append((t, a))
            kills[int(a[0])].append((t, int(a[1])))
        elif kind == "hang_at_exit":
            hangs.append((t, a))

    def ready(r, i):
        rec = recs.get((r, i))
        if rec:
            return rec["ready_ms"]
        return starts[r].get(i, end_at) + 2000

    for r in range(n):
        for t, i in kills[r]:
            unreach[r].append((t, ready(r, i + 1)))
        unreach[r] = merge(unreach[r])
    last_inc = {r: max([i for (rr, i) in recs if rr == r] + [max(starts[r] or [0])]) for r in range(n)}

    rows = []

    def row(name, checked, bad, detail):
        rows.append((name, checked, len(bad) if isinstance(bad, list) else bad, detail,
                     "PASS" if (len(bad) if isinstance(bad, list) else bad) == 0 else "FAIL"))
        if isinstance(bad, list):
            for b in bad[:12]:
                print(f"  violation [{name}]: {b}")

    # ---- 1. nothing delivered twice, nothing corrupted ----
    keys = ["recv_dup", "recv_corrupt", "recv_phantom_src", "write_dup",
            "write_corrupt", "read_corrupt", "atomic_anomaly"]
    tot = {k: 0 for k in keys + ["recv_ok", "write_ok", "read_ok", "atomic_ok", "atomic_reset",
                                 "atomic_resync", "write_overwritten"]}
    for rec in recs.values():
        for k in tot:
            tot[k] += rec["counters"].get(k, 0)
    bad1 = [f"{k}={tot[k]}" for k in keys if tot[k]]
    # Phantoms: a sequence number its (final) sender never posted.
    for (r, i), rec in recs.items():
        for key, v in rec["received"].items():
            src, sinc, kind = key.split(".")
            srec = recs.get((int(src), int(sinc)))
            if srec and srec["final"] and v["ranges"]:
                posted = srec["posted"][str(r)][kind]
                if v["ranges"][-1][1] >= posted:
                    bad1.append(f"rank {r}.{i} got {kind} seq {v['ranges'][-1][1]} from {src}.{sinc}, "
                                f"which posted {posted}")
    # Atomic resets: only after the target was killed.
    resets = 0
    for (r, i), rec in recs.items():
        for a in rec["anomalies"]:
            m = re.match(r"atomic reset by (\S+) last_ok_ms=(\d+) now_ms=(\d+)", a)
            if not m:
                continue
            resets += 1
            t = rank_of_name[m.group(1)]
            lo, hi = int(m.group(2)), int(m.group(3))
            if not any(lo - SLACK_MS <= k <= hi for k, _ in kills[t]):
                bad1.append(f"rank {r}.{i}: atomic counter on {t} reset without a kill ({a})")
    checked1 = (f"{tot['recv_ok']} msgs, {tot['write_ok']} writes ({tot['write_overwritten']} "
                f"overwritten before checked), {tot['read_ok']} reads, {tot['atomic_ok']} atomics")
    row("no duplicate, no corruption", checked1, bad1,
        f"atomic resets after a kill {resets}, resyncs after a failed atomic {tot['atomic_resync']}")

    # ---- 2. every operation to a live peer completes and is delivered ----
    def justified(s, dst, post, done):
        for k, _ in kills[dst]:
            if post - tp - SLACK_MS <= k <= done:
                return "kill"
        for r in (s, dst):
            for a, b in unreach[r]:
                if b - a >= tp - STOP_SLACK_MS and a <= done and b >= post - tp:
                    return "silence"
        both = merge(unreach[s] + unreach[dst])
        for a, b in both:
            if b - a >= tp - STOP_SLACK_MS and a <= done and b >= post - tp:
                return "silence"
        return None

    bad2, why = [], {"kill": 0, "silence": 0}
    nerr = 0
    for (s, i), rec in recs.items():
        for e in rec["errors"]:
            nerr += 1
            j = justified(s, e["peer"], e["post_ms"], e["done_ms"])
            if j:
                why[j] += 1
            else:
                bad2.append(f"{s}.{i} -> {e['peer']} {e['kind']} seq {e['seq']} posted "
                            f"{e['post_ms'] - cfg['t0']} ms failed after {e['done_ms'] - e['post_ms']} ms "
                            f"with no kill or long silence: {e['text']}")
    nrx = 0
    for (r, i), rec in recs.items():
        for e in rec.get("rx_errors", []):
            nrx += 1
            # The sender (its kills) is the "peer" of justified().
            j = justified(r, e["peer"], e["done_ms"] - tp - SLACK_MS, e["done_ms"]) if e["peer"] >= 0 else None
            if j:
                why[j] += 1
            else:
                bad2.append(f"{r}.{i}: receive failed at {e['done_ms'] - cfg['t0']} ms with no kill or "
                            f"long silence of its sender: {e['text']}")
    row("failures only where the peer was dead or silent", f"{nerr} failed ops, {nrx} failed receives",
        bad2, f"after a kill {why['kill']}, after a silence >= timeout {why['silence']}")

    # Incarnations of each rank: (inc, ready, killed at, record).
    incs = {r: [] for r in range(n)}
    for r in range(n):
        for i in sorted(set(list(starts[r]) + [ii for (rr, ii) in recs if rr == r])):
            killed = [k for k, ki in kills[r] if ki == i]
            incs[r].append((i, ready(r, i), killed[0] if killed else None, recs.get((r, i))))

    def serving(dst, t):  # the incarnation of dst that surely served [t, t + 1 s)
        for i, rd, killed, rec in incs[dst]:
            if rd + 1000 <= t and (killed is None or t + 1000 <= killed):
                return i, rec
        return None, None

    def up_at(dst, t):  # the incarnation of dst that was up (ready, not yet killed) at t
        best = (None, None, None)
        for i, rd, killed, rec in incs[dst]:
            if rd <= t and (killed is None or t < killed):
                best = (i, rd, rec)
        return best

    bad3, nchk, older = [], 0, [0, 0]  # older: [held by an earlier incarnation, not checkable]
    for (s, i), rec in recs.items():
        slow = {(e["kind"], e["peer"], e["seq"]): e for e in rec["slow"] if e["err"] == 0}
        for dst_s, kinds in rec["ok_seqs"].items():
            dst = int(dst_s)
            for kind, buckets in kinds.items():
                for sec, rs in buckets:
                    di, drec = serving(dst, sec * 1000)
                    if drec is None or (not drec["final"] and sec * 1000 + 3000 > drec["written_ms"]):
                        continue
                    got = drec["received"].get(f"{s}.{i}.{kind}", {"ranges": []})["ranges"]
                    dready = next(rd for ii, rd, _, _ in incs[dst] if ii == di)
                    for a, b in rs:
                        for q in range(a, b + 1):
                            nchk += 1
                            if ranges_contain(got, q):
                                continue
                            # Posted while an earlier incarnation was up (its sender
                            # stopped, the ACKs read at SIGCONT after a restart): that
                            # incarnation must hold it, if its record can say.
                            e = slow.get((kind, dst, q))
                            if e is not None and e["post_ms"] < dready:
                                oi, _, orec = up_at(dst, e["post_ms"])
                                if oi is not None and oi != di:
                                    ogot = (orec or {"received": {}})["received"].get(
                                        f"{s}.{i}.{kind}", {"ranges": []})["ranges"]
                                    if ranges_contain(ogot, q):
                                        older[0] += 1
                                        continue
                                    if orec is None or (not orec["final"] and
                                                        orec["written_ms"] < e["done_ms"]):
                                        older[1] += 1
                                        continue
                            bad3.append(f"{kind} {s}.{i} -> {dst}.{di} seq {q} completed "
                                        f"at {sec * 1000 - cfg['t0']} ms, never arrived")
    row("a completed send/write arrived", f"{nchk} completions", bad3,
        f"completions while one incarnation surely served; posted to an earlier incarnation: "
        f"{older[0]} held by it, {older[1]} not checkable (its record ends before the completion)")

    bad4 = []
    for r in range(n):
        rec = recs.get((r, last_inc[r]))
        if not rec or not rec["final"]:
            bad4.append(f"rank {r} incarnation {last_inc[r]}: no final record")
            continue
        for o in rec["outstanding"]:
            bad4.append(f"rank {r}.{last_inc[r]}: {o['kind']} to {o['peer']} seq {o['seq']} posted at "
                        f"{o['post_ms'] - cfg['t0']} ms never completed")
    bad4 += [f"crash: {c}" for c in crashes] + [f"hang at exit: {h}" for h in hangs]
    row("no hang, no crash", f"{n} final records", bad4, "outstanding ops at exit, crashes, hangs")

    # ---- 3. operations to a killed peer fail, naming it, within the budget ----
    bad5, nkill_ops, worst, delivered_new = [], 0, 0, 0
    for (s, i), rec in recs.items():
        for e in rec["errors"]:
            if not e["named"]:
                bad5.append(f"{s}.{i} -> {e['peer']}: error text does not name {names[e['peer']]}: {e['text']}")
        for dst in range(n):
            for k, _ in kills[dst]:
                nxt = ready(dst, [ii for kk, ii in kills[dst] if kk == k][0] + 1)
                for e in rec["errors"]:
                    if e["peer"] != dst:
                        continue
                    if e["post_ms"] < k < e["done_ms"]:
                        late = e["done_ms"] - k
                    elif k <= e["post_ms"] < nxt:
                        late = e["done_ms"] - e["post_ms"]
                    else:
                        continue
                    nkill_ops += 1
                    # The sender's own stops shift its clock of silence.
                    if any(a < e["done_ms"] and b > e["post_ms"] for a, b in stops[s]):
                        continue
                    worst = max(worst, late)
                    if late > tp + SLACK_MS:
                        bad5.append(f"{s}.{i} -> {dst}: {e['kind']} seq {e['seq']} failed {late} ms after "
                                    f"the kill (budget {tp + SLACK_MS})")
                for e in rec["slow"]:
                    if e["peer"] == dst and e["post_ms"] < k < e["done_ms"]:
                        # Completed fine: the new incarnation must have it.
                        ki = [ii for kk, ii in kills[dst] if kk == k][0]
                        nrec = recs.get((dst, ki + 1))
                        if e["kind"] in ("send", "write") and nrec and nrec["final"]:
                            got = nrec["received"].get(f"{s}.{i}.{e['kind']}", {"ranges": []})["ranges"]
                            if not ranges_contain(got, e["seq"]):
                                bad5.append(f"{s}.{i} -> {dst}: {e['kind']} seq {e['seq']} pending at the "
                                            f"kill completed fine but {dst}.{ki + 1} never got it")
                                continue
                        delivered_new += 1
    row("ops to a killed peer fail naming it in budget",
        f"{sum(len(v) for v in kills.values())} kills, {nkill_ops} failed ops", bad5,
        f"latest {worst} ms after the kill (timeout {tp}); {delivered_new} pending at a kill "
        f"completed by the new incarnation instead")

    # ---- 4. a restarted peer is reached again by its old peers ----
    bad6, nre, lat = [], 0, []
    for dst in range(n):
        for k, ki in kills[dst]:
            r0 = ready(dst, ki + 1)
            later = [kk for kk, _ in kills[dst] if kk > k]
            until = min(later + [end_at])
            if until - r0 < tp + 10000:
                continue
            for s in range(n):
                if s == dst or group[s] != group[dst]:
                    continue
                if any(b - a >= tp - STOP_SLACK_MS for a, b in unreach[s] if a < until and b > r0):
                    continue  # s itself was silent long enough to be given up
                nre += 1
                first = None
                for (ss, i), rec in recs.items():
                    if ss != s:
                        continue
                    for sec, c in rec["ok_per_sec"].get(str(dst), []):
                        if r0 // 1000 + 1 <= sec <= until // 1000:
                            first = sec if first is None else min(first, sec)
                if first is None:
                    bad6.append(f"rank {s} never reached rank {dst} again after its restart at "
                                f"{r0 - cfg['t0']} ms (until {until - cfg['t0']} ms)")
                else:
                    lat.append(first * 1000 - r0)
    row("a restarted peer is reached again", f"{nre} (restart, peer) pairs", bad6,
        f"first success after restart: max {max(lat) if lat else 0} ms")

    # ---- 5. RSS and descriptors flat ----
    bad7, nflat, growth = [], 0, []
    for (r, i), rec in recs.items():
        sm = [s for s in rec["samples"] if s[0] >= rec["start_ms"] + 30000]
        if not rec["final"] or len(sm) < 2 or sm[-1][0] - sm[0][0] < 60000:
            continue
        nflat += 1
        base, last = sm[0], sm[-1]
        peak = max(s[1] for s in sm)
        fdmax = max(s[3] for s in sm)
        growth.append((last[1] - base[1], r, i))
        if last[1] > 1.5 * base[1] + 8192 or peak > 2 * base[1] + 16384:
            bad7.append(f"rank {r}.{i}: RSS {base[1]} kB after warm-up, {last[1]} kB at the end, "
                        f"{peak} kB peak")
        if last[3] > base[3] + 4 or fdmax > base[3] + 16:
            bad7.append(f"rank {r}.{i}: {base[3]} fds after warm-up, {last[3]} at the end, {fdmax} max")
    g = max(growth) if growth else (0, -1, -1)
    row("RSS and fds flat", f"{nflat} incarnations >= 90 s", bad7,
        f"bound: RSS end <= 1.5 x warm-up + 8 MB, fds end <= warm-up + 4; "
        f"largest RSS growth {g[0]} kB (rank {g[1]}.{g[2]})")

    # ---- the table ----
    dur = (end_at - cfg["t0"]) / 60000
    print(f"\nsoak: {dur:.1f} min, {n} ranks ({cfg['tss_ranks']} TSS), seed {cfg['seed']}, "
          f"peer timeout {tp} ms; events: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in ("start", "done")) +
          (f"; slowest action command {slowest[0]} ms ({slowest[1]})" if slowest[1] else ""))
    ops = {}
    for rec in recs.values():
        for which in ("posted", "ok", "failed"):
            for kinds in rec[which].values():
                for k, v in kinds.items():
                    ops.setdefault(k, {}).setdefault(which, 0)
                    ops[k][which] += v
    print("soak: ops " + "; ".join(f"{k} {v.get('posted', 0)} posted / {v.get('ok', 0)} ok / "
                                    f"{v.get('failed', 0)} failed" for k, v in ops.items()))
    w = [max(len(str(x[c])) for x in rows + [("invariant", "checked", "bad", "detail", "")])
         for c in range(5)]
    hdr = ("invariant", "checked", "bad", "detail", "")
    print("| " + " | ".join(str(hdr[c]).ljust(w[c]) for c in range(5)) + " |")
    print("|" + "|".join("-" * (w[c] + 2) for c in range(5)) + "|")
    for x in rows:
        print("| " + " | ".join(str(x[c]).ljust(w[c]) for c in range(5)) + " |")
    failed = [x for x in rows if x[4] != "PASS"]
    print(f"soak: {'FAIL' if failed else 'PASS'} ({len(rows) - len(failed)}/{len(rows)} invariants hold)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
