#!/usr/bin/env python3
"""Parsing and tables for bench/mpi-ior.sh and bench/mpi-mdtest.sh (see bench/README.md).

  mpi-pairs.py record BENCH SLOT PARSER KEY=VALUE... -- OUTPUT...   one run as a JSON line
  mpi-pairs.py summary [--aa] RESULTS.jsonl                  tables, medians of per-pair ratios

A record holds, per phase, a rate (IOR: MiB/s as IOR computes it, 2^20 bytes over the phase's
time from the first rank's start to the last rank's end; mdtest: ops/s) and the amount moved
(IOR: bytes; mdtest: the run's number of files and directories), so that the summary can check
that both tools did the same work.
"""
import json
import math
import re
import statistics
import sys

MIB = 1 << 20


def fail(msg):
    raise SystemExit(f"mpi-pairs: {msg}")


# ---- the reference tools ------------------------------------------------------------------
def ior_phases(path):
    """IOR's JSON summary file (-O summaryFormat=JSON -O summaryFile=PATH): the mean bandwidth
    over the repetitions of each operation and the aggregate bytes it moved: xsizeMiB, which
    IOR prints with 4 decimals only, so the exact count is block x segments x tasks when that
    agrees with it (it does unless a stonewall cut the phase short)."""
    try:
        d = json.load(open(path))
        out = {}
        for s in d["summary"]:
            moved = float(s["xsizeMiB"]) * MIB
            nominal = int(s["blockSize"]) * int(s["segmentCount"]) * int(s["numTasks"])
            amount = nominal if abs(moved - nominal) <= 0.0001 * MIB else round(moved)
            out[s["operation"]] = {"rate": float(s["bwMeanMIB"]), "amount": amount}
        return out
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"cannot read IOR's JSON summary {path}: {e!r}")


# mdtest's rows in "SUMMARY rate": the phases compared, by the names the records use.
MDTEST_ROWS = {
    "Directory creation": "dir_create", "Directory stat": "dir_stat",
    "Directory removal": "dir_remove", "File creation": "file_create",
    "File stat": "file_stat", "File read": "file_read", "File removal": "file_remove",
}


def mdtest_phases(path):
    """mdtest's text output: the Mean column of its "SUMMARY rate" table (ops/s), and the
    number of items from its "N tasks, M files/directories" line."""
    text = open(path, errors="replace").read()
    m = re.search(r"^(\d+) tasks?, (\d+) files?(/directories)?", text, re.M)
    if not m:
        fail(f"no 'N tasks, M files/directories' line in mdtest's output {path}")
    items = int(m.group(2))
    part = text.split("SUMMARY rate", 1)
    if len(part) != 2:
        fail(f"no 'SUMMARY rate' table in mdtest's output {path}")
    out = {}
    for line in part[1].splitlines()[3:]:
        if not line.strip():
            break
        cols = re.match(r"\s*(\S.*?\S)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
        if cols and cols.group(1) in MDTEST_ROWS:
            out[MDTEST_ROWS[cols.group(1)]] = {"rate": float(cols.group(4)), "amount": items}
    if not out:
        fail(f"mdtest's 'SUMMARY rate' table in {path} has none of the rows expected")
    return out


# ---- iolab ----------------------------------------------------------------------------------
# iolab's phase names (crates/iolab-mdtest, Phase::name) in the records' names (MDTEST_ROWS).
IOLAB_MDTEST = {
    "dir_create": "dir_create", "dir_stat": "dir_stat", "dir_remove": "dir_remove",
    "create": "file_create", "stat": "file_stat", "read": "file_read", "remove": "file_remove",
}


def iolab_result(bench, path):
    """What `iolab ior --json` / `iolab mdtest --json` print (rank 0 only; the other ranks
    print nothing on stdout), read into the records' form. The metrics are the ranks' merged
    ones (docs/ior.md, docs/mdtest.md):

      ior    {"schema": "iolab.ior/1", "iterations": [{"phases": {"write": {"bytes": all
             ranks' bytes, "mib_per_s": 2^20 bytes over the first rank's start to the last
             rank's end (IOR's bwMiB), ...}, "read": {...}}}, ...]}
      mdtest {"schema": "iolab.mdtest/1", "summary": [{"phase": "create", "mean": ops/s, ...}],
             "iterations": [{"metrics": {"create.agg_ops_per_s": all ranks' items over the
             first start to the last end (mdtest's rate), "create.last_done_s": that time,
             "create.items": rank 0's items, ...}}, ...]}

    - ior: the rate is the mean of mib_per_s over the iterations (IOR's bwMeanMIB), the amount
      the mean of bytes (IOR's xsizeMiB is one iteration's).
    - mdtest: the rate is the summary's mean (mdtest's Mean column); the amount is the phase's
      items of all ranks (agg_ops_per_s x last_done_s, rounded), to compare with mdtest's
      "M files/directories" (ranks x items: each phase does that many).
    """
    try:
        d = json.load(open(path))
        its = d["iterations"]
        if not its:
            fail(f"iolab's --json output {path} has no iterations")
        if bench == "ior":
            if d.get("schema") != "iolab.ior/1":
                fail(f"{path} is not iolab.ior/1 but {d.get('schema')!r}")
            out = {}
            for name in ("write", "read"):
                ph = [it["phases"][name] for it in its if name in it["phases"]]
                if ph:
                    out[name] = {
                        "rate": statistics.fmean(float(p["mib_per_s"]) for p in ph),
                        "amount": round(statistics.fmean(float(p["bytes"]) for p in ph)),
                    }
            return out
        if d.get("schema") != "iolab.mdtest/1":
            fail(f"{path} is not iolab.mdtest/1 but {d.get('schema')!r}")
        out = {}
        for s in d["summary"]:
            name = IOLAB_MDTEST.get(s["phase"])
            if name is None:
                continue
            m = its[0]["metrics"]
            items = float(m[f"{s['phase']}.agg_ops_per_s"]) * float(m[f"{s['phase']}.last_done_s"])
            out[name] = {"rate": float(s["mean"]), "amount": round(items)}
        return out
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"cannot read iolab's --json output {path}: {e!r} (see iolab_result in {__file__})")
# <<< iolab_result


def record(argv):
    """BENCH SLOT PARSER KEY=VALUE... -- FILE...: SLOT is ref or iolab (the pair's column),
    PARSER ref or iolab (an A/A run has the reference tool in the iolab slot). With two IOR
    files (a split run: the write invocation's, then the read invocation's) each phase comes
    from the file of its run."""
    bench, tool, parser, rest = argv[0], argv[1], argv[2], argv[3:]
    sep = rest.index("--")
    meta = dict(kv.split("=", 1) for kv in rest[:sep])
    files = rest[sep + 1:]
    phases = {}
    for f in files:
        if parser == "iolab":
            got = iolab_result(bench, f)
        else:
            got = ior_phases(f) if bench == "ior" else mdtest_phases(f)
        phases.update(got)
    rec = {"bench": bench, "tool": tool, "phases": phases}
    for k, v in meta.items():
        rec[k] = int(v) if re.fullmatch(r"-?\d+", v) else float(v) if re.fullmatch(r"-?[\d.]+", v) else v
    print(json.dumps(rec))


# ---- summary --------------------------------------------------------------------------------
def med_ci(xs):
    """The median's distribution-free 95 % confidence interval (the sign test's): order
    statistics k and n+1-k, with k the largest such that a Binomial(n, 1/2) falls below k with
    probability <= 2.5 %. None below 6 values (no such k). As in bench/vs-classic.sh."""
    xs = sorted(xs)
    n = len(xs)
    k, tail = 0, 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > 0.025:
            break
        k += 1
    return (xs[k - 1], xs[n - k]) if k >= 1 else None


def target(bench, place, phase):
    """The issue's acceptance targets for the median ratio iolab/reference: (text, low, high),
    the ratio to be inside [low, high]; (None, None, None) where there is none."""
    if bench == "ior":
        if place == "dev":
            return "0.95-1.05", 0.95, 1.05
        return ">= 1.00", 1.0, math.inf
    if place == "tmpfs" and phase in ("dir_create", "dir_stat", "dir_remove",
                                      "file_create", "file_stat", "file_remove"):
        return ">= 1.00", 1.0, math.inf
    return None, None, None


def verdict(m, ci, low, high):
    """PASS/FAIL of the median, and where its CI lies: inside the target's range, outside it
    (entirely on one side), or across a bound."""
    v = "PASS" if low <= m <= high else "FAIL"
    if ci is not None:
        lo, hi = ci
        v += ", CI inside" if low <= lo and hi <= high else \
            ", CI outside" if hi < low or lo > high else ", CI across"
    return v


def fmt_rate(x):
    return "-" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:,.2f}"


def summary(argv):
    aa = "--aa" in argv
    path = [a for a in argv if a != "--aa"][0]
    rows = [json.loads(l) for l in open(path) if l.strip()]
    if not rows:
        fail(f"no runs in {path}")
    groups = {}
    for r in rows:
        groups.setdefault((r["bench"], r["case"], r["place"], r["ranks"]), []).append(r)
    second = "ref2" if aa else "iolab"
    verdicts = []
    for (bench, case, place, ranks), rs in groups.items():
        unit = "MiB/s" if bench == "ior" else "ops/s"
        ref = {r["pair"]: r for r in rs if r["tool"] == "ref"}
        other = {r["pair"]: r for r in rs if r["tool"] == "iolab"}
        flags = rs[0].get("flags", "")
        print(f"\n== {bench} {case} ({flags}), {ranks} ranks, {place} ==")
        phases = [p for p in ref[min(ref)]["phases"]] if ref else []
        for ph in phases:
            print(f"  {ph} ({unit})")
            print(f"  {'pair':>4} {'order':<5} {'ref':>12} {second:>12} {'ratio':>8}  amount")
            ratios, rr, oo = [], [], []
            for p in sorted(ref):
                a = ref[p]["phases"].get(ph)
                b = other.get(p, {}).get("phases", {}).get(ph)
                ra = a["rate"] if a else None
                rb = b["rate"] if b else None
                ratio = rb / ra if ra and rb is not None else None
                if ra is not None:
                    rr.append(ra)
                if rb is not None:
                    oo.append(rb)
                if ratio is not None:
                    ratios.append(ratio)
                same = "-" if not (a and b) else "same" if a["amount"] == b["amount"] else \
                    f"DIFFERENT ({a['amount']:,} vs {b['amount']:,})"
                amount = f"{a['amount']:,}" if a else "-"
                order = ref[p].get("order", "")
                print(f"  {p:>4} {order:<5} {fmt_rate(ra):>12} {fmt_rate(rb):>12} "
                      f"{'-' if ratio is None else f'{ratio:.3f}':>8}  {amount} {same if b else ''}")
            mr = statistics.median(rr) if rr else None
            mo = statistics.median(oo) if oo else None
            if ratios:
                m = statistics.median(ratios)
                ci = med_ci(ratios)
                cis = "-" if ci is None else f"{ci[0]:.3f}-{ci[1]:.3f}"
                print(f"  {'med':>4} {'':<5} {fmt_rate(mr):>12} {fmt_rate(mo):>12} {m:>8.3f}  "
                      f"(95 % CI of the median ratio: {cis}, {len(ratios)} pairs)")
                text, low, high = target(bench, place, ph)
                if text and not aa:
                    v = verdict(m, ci, low, high)
                    print(f"  target: median ratio iolab/{bench} {text}: {m:.3f} {v}")
                    verdicts.append((bench, case, place, ranks, ph, m, cis, text, v))
            else:
                print(f"  {'med':>4} {'':<5} {fmt_rate(mr):>12} {fmt_rate(mo):>12}")
    if verdicts:
        print("\n== summary: median of per-pair ratios iolab/reference ==")
        for bench, case, place, ranks, ph, m, cis, text, v in verdicts:
            print(f"  {bench:<6} {case:<6} {place:<5} {ranks} ranks {ph:<11} {m:.3f} "
                  f"(CI {cis})  target {text:<9} {v}")
    bad = [r for rs in groups.values() for r in rs if r["tool"] == "iolab"]
    for r in bad:
        a = next((x for x in rows if x["tool"] == "ref" and x["pair"] == r["pair"] and
                  (x["bench"], x["case"], x["place"], x["ranks"]) ==
                  (r["bench"], r["case"], r["place"], r["ranks"])), None)
        if a:
            for ph, v in r["phases"].items():
                if ph in a["phases"] and a["phases"][ph]["amount"] != v["amount"]:
                    print(f"note: {r['bench']} {r['case']} {r['place']} {r['ranks']} ranks pair "
                          f"{r['pair']} {ph}: amounts differ ({a['phases'][ph]['amount']:,} "
                          f"reference, {v['amount']:,} {second})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        fail(__doc__)
    cmd = sys.argv[1]
    if cmd == "record":
        record(sys.argv[2:])
    elif cmd == "summary":
        summary(sys.argv[2:])
    else:
        fail(f"unknown command {cmd}\n{__doc__}")
