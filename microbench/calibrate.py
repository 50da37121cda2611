"""Derive arch-parameter values from a microbenchmark results JSON (microbench/run_all.sh output).

usage: python3 microbench/calibrate.py microbench/results/h200_2026-12-02.json [--out microbench/results/h200_calibrated_params.yaml]
Prints and writes a YAML file: `params:` maps dotted keys (as used in topologies/*.yaml) to {value, unit, source}.
Stdlib only (runs on the device machine too). Cycles are SM cycles (%clock64) at the clock recorded in provenance.
"""
import argparse, json, os, statistics as st, sys


def fit(xs, ys):
    n = len(xs); mx = sum(xs) / n; my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


class R:
    def __init__(self, results):
        self.r = results

    def find(self, bench, **p):
        out = [x for x in self.r if x["bench"] == bench and all(x["params"].get(k) == v for k, v in p.items())]
        return out

    def one(self, bench, **p):
        f = self.find(bench, **p)
        if not f:
            raise KeyError(f"{bench} {p}")
        return f[0]

    def stat(self, bench, stat, **p):
        return self.one(bench, **p)["stats"][stat]


def derive(res):
    R_ = R(res["results"])
    P = {}

    def put(key, value, unit, source):
        P[key] = {"value": round(float(value), 3), "unit": unit, "source": source}

    def safe(f):
        try:
            f()
        except (KeyError, ZeroDivisionError, ValueError, IndexError, st.StatisticsError) as e:
            print(f"calibrate: skipped ({e})", file=sys.stderr)

    prov = res.get("provenance", {})
    mhz = [v for v in prov.get("sm_clock_probe_mhz", {}).values() if v]
    if mhz:
        put("clock.sm_mhz_observed", st.median(mhz), "MHz", "clock_probe: %clock64 vs %globaltimer over 20M cycles, median over probes (clocks not locked)")

    # ---- TMA
    def tma():
        pts = sorted((x["params"]["n"], x["stats"]["issue_span_median"]) for x in R_.find("tma_issue", bytes=1024, level="l2") if x["params"]["n"] <= 24)
        b, a = fit([p[0] for p in pts], [p[1] for p in pts])
        put("tma.issue_gap_cycles", b, "cycles", "tma_issue (plain cp.async.bulk, 1 KiB, L2-hot, one thread): least-squares slope of median issue span T(N), N=1..24")
        put("tma.issue_base_cycles", a, "cycles", "tma_issue: intercept of the same fit (T(N) = base + gap*N)")
        put("tma.l2_completion_cycles_1kb", R_.stat("tma_issue", "completion_median", n=1, bytes=1024, level="l2"), "cycles",
            "tma_issue n=1 1 KiB L2-hot: issue -> no-hint try_wait sees the phase (median)")
        put("tma.dram_round_trip_cycles", R_.stat("tma_dram_round_trip", "completion_median", bytes=128), "cycles",
            "tma_dram_round_trip: one 128-byte bulk load from a fresh line after an L2 flush, median of 31 (min in results)")
        sz = sorted((x["params"]["bytes"], x["stats"]["completion_median"]) for x in R_.find("tma_size", level="l2"))
        big = [p for p in sz if p[0] >= 2048]
        b2, a2 = fit([p[0] for p in big], [p[1] for p in big])
        put("tma.single_tx_fill_bytes_per_cycle", 1.0 / b2, "B/cycle", "tma_size 2..16 KiB L2-hot: 1 / slope of completion vs bytes (staircase, steps every ~1 KiB)")
        put("tma.single_tx_base_cycles", a2, "cycles", "tma_size: intercept of the same fit")
        adm = {x["params"]["n"]: x["stats"]["completion_median"] for x in R_.find("tma_admission", bytes=16384, level="l2")}
        put("tma.bandwidth_bytes_per_cycle_per_sm", 16384 * 8 / (adm[32] - adm[24]), "B/cycle",
            "tma_admission 16 KiB x N, L2-hot: 16 KiB*8 / (completion(N=32) - completion(N=24)) (sustained per-SM bulk-copy rate)")
        span = {x["params"]["n"]: x["stats"]["issue_span_median"] for x in R_.find("tma_admission", bytes=16384, level="l2")}
        put("tma.backpressured_issue_gap_cycles_16kb", (span[32] - span[20]) / 12, "cycles",
            "tma_admission 16 KiB: issue-span slope N=20..32 once the copy engine backs up (= 16 KiB / drain rate)")
        t4 = R_.one("tma_4tx", bytes=1024, level="l2")["stats"]
        for k in ("serial_completion_median", "pipelined_completion_median", "parallel_issue_span_median", "pipelined_issue_span_median"):
            put(f"tma.four_tx_{k.replace('_median', '')}_cycles", t4[k], "cycles", f"tma_4tx 1 KiB L2-hot: {k}")
        dram = {x["params"]["n"]: x["stats"]["issue_span_median"] for x in R_.find("tma_issue", bytes=1024, level="dram")}
        jump = max(range(2, 33), key=lambda n: dram[n] - dram[n - 1])
        put("tma.admission_max_issue_step_cycles_dram", dram[jump] - dram[jump - 1], "cycles",
            f"tma_issue 1 KiB DRAM: largest T(N)-T(N-1) step over N=2..32 is at N={jump}; no jump at N=17 seen on H200 "
            "(issue gap stays ~47 cycles up to 32 outstanding 1 KiB loads)")
    safe(tma)

    # ---- mbarrier
    def mbar():
        add = R_.stat("mbarrier_wait", "cycles_per_link", form="control_add_only", complete=1)
        ctl = R_.stat("mbarrier_wait", "cycles_per_link", form="control_alu", complete=1)
        alu = add + (ctl - add) / 2  # SEL + IADD part of one link (ISETP and SEL assumed equal)
        note = f"; minus the link's SEL+IADD ({alu:.1f} cy, from the ALU control chains)"
        put("mbarrier.test_wait_cycles", R_.stat("mbarrier_wait", "cycles_per_link", form="test_wait", complete=1) - alu, "cycles",
            "mbarrier_wait test_wait, phase complete: dependent-chain cycles per wait" + note)
        put("mbarrier.try_wait_cycles", R_.stat("mbarrier_wait", "cycles_per_link", form="try_wait", complete=1) - alu, "cycles",
            "mbarrier_wait try_wait (no hint), phase complete" + note)
        hints = R_.find("mbarrier_wait", form="try_wait_hint", complete=1)
        put("mbarrier.try_wait_hint_complete_cycles", st.median(h["stats"]["cycles_per_link"] for h in hints) - alu, "cycles",
            "mbarrier_wait try_wait with suspendTimeHint (0..100000 ns, all equal), phase complete" + note)
        put("mbarrier.test_wait_incomplete_cycles", R_.stat("mbarrier_wait", "cycles_per_link", form="test_wait", complete=0) - alu, "cycles",
            "mbarrier_wait test_wait, phase incomplete (returns false)" + note)
        put("mbarrier.try_wait_suspend_cycles", R_.stat("mbarrier_wait", "cycles_per_link", form="try_wait", complete=0) - alu, "cycles",
            "mbarrier_wait try_wait (no hint), phase never completes: time until it returns false (~3.9 us)")
        hi = R_.find("mbarrier_wait", form="try_wait_hint", complete=0)
        put("mbarrier.try_wait_hint_suspend_cycles", st.median(h["stats"]["cycles_per_link"] for h in hi) - alu, "cycles",
            "mbarrier_wait try_wait + hint, phase never completes: same for every hint 0..1e6 ns (hint not honoured beyond ~4 us cap)")
    safe(mbar)

    # ---- shared memory / caches / DRAM
    def mem():
        add = R_.stat("mbarrier_wait", "cycles_per_link", form="control_add_only", complete=1)
        put("shared_memory.latency_cycles", R_.stat("smem_bank", "latency_cycles", stride_words=1) - add, "cycles",
            f"smem_bank stride 1: ld.shared+add dependent chain per link minus the add ({add:.1f} cy)")
        l1 = R_.stat("smem_bank", "latency_cycles", stride_words=1)
        l32 = R_.stat("smem_bank", "latency_cycles", stride_words=32)
        put("shared_memory.bank_conflict_latency_cycles_per_extra_way", (l32 - l1) / 31, "cycles", "smem_bank: (latency 32-way - 1-way)/31, one warp")
        t1 = R_.stat("smem_bank", "sm_cycles_per_warp_load", stride_words=1)
        t32 = R_.stat("smem_bank", "sm_cycles_per_warp_load", stride_words=32)
        put("shared_memory.bank_conflict_issue_cycles_per_way", (t32 - t1) / 31 + 0, "cycles",
            "smem_bank 16 warps x 8 independent loads: SM cycles per warp-wide load grows 1 per way (n-way = n cycles)")
        put("shared_memory.bandwidth_bytes_per_cycle", R_.stat("smem_bandwidth", "bytes_per_cycle_per_sm"), "B/cycle",
            "smem_bandwidth: 1024 threads, 16-byte ld.volatile.shared, conflict free")
        l1r = R_.one("pchase", level="l1")["raw"]
        put("l1.hit_latency_cycles", st.mean(l1r), "cycles",
            "pchase l1 (16 KiB, ld.global, warmed): mean per-load clock-to-clock latency (modes 21-22 and 29, 50/50)")
        put("l2.hit_latency_cycles", R_.stat("pchase", "per_load_median", level="l2"), "cycles",
            "pchase l2 (4 MiB, ld.global.cg, warmed by a full pass): median per-load latency (210-310 cy spread)")
        ft = R_.one("pchase", level="l2_first_touch")["raw"]
        near = [x for x in ft if x < 340]; far = [x for x in ft if 340 <= x < 600]
        put("l2.near_latency_cycles", st.median(near), "cycles",
            f"pchase l2_first_touch (16 MiB, ld.global.cg, first access from this SM): median of the lower mode (<340 cy, {len(near)} of {len(ft)})")
        put("l2.far_latency_cycles", st.median(far), "cycles",
            f"pchase l2_first_touch: median of the upper mode (340-600 cy, {len(far)} of {len(ft)}); after a warm pass far lines read as near (replicated)")
        dr = R_.one("pchase", level="dram")["raw"]
        put("hbm.latency_cycles", st.median(dr), "cycles", "pchase dram (32 MiB random lines, L2 flushed, ld.global.cg): median per-load latency")
        lo = [x for x in dr if x < 590]; hi = [x for x in dr if x >= 590]
        put("hbm.latency_near_cycles", st.median(lo), "cycles", f"pchase dram: lower mode (<590 cy, {len(lo)} samples)")
        put("hbm.latency_far_cycles", st.median(hi), "cycles", f"pchase dram: upper mode (>=590 cy, {len(hi)} samples)")
        put("hbm.bandwidth_gb_per_s", max(x["stats"]["gb_per_s"] for x in R_.find("hbm_read")), "GB/s",
            "hbm_read: 1 GiB grid-stride 16-byte loads, all SMs, best grid, median of 10 event-timed runs (achieved)")
        put("hbm.copy_bandwidth_gb_per_s", R_.stat("hbm_copy", "gb_per_s_read_plus_write"), "GB/s", "hbm_copy: 256 MiB -> 256 MiB, read+write bytes")
        put("l2.bandwidth_gb_per_s", max(x["stats"]["gb_per_s"] for x in R_.find("l2_read")), "GB/s", "l2_read: 8 MiB region x 20 passes, ld.global.cg, all SMs (achieved)")
    safe(mem)

    # ---- tensor cores
    def tc():
        for x in R_.find("mma_sync", chains=1, warps=1):
            dt, sh = x["params"]["dtype"], x["params"]["shape"]
            base = f"tensor_core.mma_sync.{dt}.{sh}"
            put(f"{base}.latency_cycles", x["stats"]["latency_cycles"], "cycles",
                "mma_sync 1 warp, 1 dependent chain: slope of cycles vs iterations (256 -> 1280)")
            w16 = R_.one("mma_sync", dtype=dt, shape=sh, chains=8, warps=16)
            put(f"{base}.issue_gap_cycles", w16["stats"]["issue_gap_per_sm"] * 4, "cycles",
                "mma_sync 16 warps x 8 chains: cycles between MMAs on one sub-partition (saturated, 4 warps each)")
            w1 = R_.one("mma_sync", dtype=dt, shape=sh, chains=8, warps=1)
            put(f"{base}.single_warp_issue_gap_cycles", w1["stats"]["issue_gap_per_warp"], "cycles", "mma_sync 1 warp x 8 independent chains")
        for x in R_.find("wgmma_latency"):
            n, ab = x["params"]["n"], x["params"]["ab"]
            put(f"tensor_core.wgmma.f16.m64n{n}k16.latency_cycles_{ab}", x["stats"]["latency_cycles"], "cycles",
                f"wgmma_latency {ab.upper()}: fence + wgmma + commit + wait_group 0 per iteration (slope over iterations)")
        for x in R_.find("wgmma_throughput", warpgroups=1, ab="ss"):
            n = x["params"]["n"]
            put(f"tensor_core.wgmma.f16.m64n{n}k16.issue_interval_cycles", x["stats"]["issue_interval_per_wg"], "cycles",
                "wgmma_throughput SS, 1 warpgroup, 4 wgmma per commit group: cycles per wgmma")
        put("tensor_core.wgmma.f16_flop_per_cycle_per_sm", st.median(x["stats"]["flop_per_cycle_per_sm"] for x in R_.find("wgmma_throughput")),
            "FLOP/cycle", "wgmma_throughput: median over N=64/128/256, SS/RS, 1-2 warpgroups (all within 2% of 4096)")
        f0 = R_.stat("nontensor_under_wgmma", "cycles_per_warp_instr", op="ffma", background_wgmma=0)
        f1 = R_.stat("nontensor_under_wgmma", "cycles_per_warp_instr", op="ffma", background_wgmma=1)
        m0 = R_.stat("nontensor_under_wgmma", "cycles_per_warp_instr", op="mufu_rsqrt", background_wgmma=0)
        m1 = R_.stat("nontensor_under_wgmma", "cycles_per_warp_instr", op="mufu_rsqrt", background_wgmma=1)
        put("core.ffma_slowdown_under_wgmma", f1 / f0, "ratio", "nontensor_under_wgmma: FFMA cycles/warp-instr with / without a background m64n256k16 wgmma warpgroup")
        put("core.mufu_slowdown_under_wgmma", m1 / m0, "ratio", "nontensor_under_wgmma: MUFU.RSQ, same")
        put("core.mufu_cycles_per_warp_instr", m0, "cycles", "nontensor_under_wgmma: MUFU rsqrt, 1 warp per sub-partition, 8 chains")
    safe(tc)

    def dsm():
        put("dsm.remote_load_bytes_per_cycle_per_sm", R_.stat("dsm_bandwidth", "bytes_per_cycle_per_sm_median", cluster=2, ctas=132, op="remote_load"),
            "B/cycle", "dsm_bandwidth cluster 2, 132 CTAs, 16-byte ld.volatile.shared::cluster (17.1 with one cluster alone)")
        put("dsm.remote_store_bytes_per_cycle_per_sm", R_.stat("dsm_bandwidth", "bytes_per_cycle_per_sm_median", cluster=2, ctas=132, op="remote_store"),
            "B/cycle", "dsm_bandwidth cluster 2, 132 CTAs, 16-byte st.volatile.shared::cluster (20.4 with one cluster alone)")
        put("dsm.remote_latency_cycles", R_.stat("dsm_latency", "latency_cycles", target="remote"), "cycles", "dsm_lat: dependent ld.shared::cluster chain into the peer CTA")
        put("dsm.local_cluster_addr_latency_cycles", R_.stat("dsm_latency", "latency_cycles", target="local_via_cluster_addr"), "cycles",
            "dsm_lat: same chain on own shared memory through a shared::cluster address")
    safe(dsm)
    return P


def to_yaml(P, res, src):
    prov = res.get("provenance", {})
    lines = ["# Generated by microbench/calibrate.py -- do not edit; rerun it on a new results file.",
             f"# from: {src}", "provenance:",
             f"  date_utc: \"{prov.get('date_utc', '')}\"", f"  gpu: \"{prov.get('gpu_name', '')}\"",
             f"  driver: \"{prov.get('driver_version', '')}\"", f"  clocks: \"{prov.get('clock_control', '')}\"", "params:"]
    for k in sorted(P):
        v = P[k]
        s = v["source"].replace('"', "'")
        lines += [f"  {k}:", f"    value: {v['value']}", f"    unit: {v['unit']}", f"    source: \"{s}\""]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    res = json.load(open(a.results))
    P = derive(res)
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.results)), "h200_calibrated_params.yaml")
    y = to_yaml(P, res, os.path.relpath(a.results))
    open(out, "w").write(y)
    for k in sorted(P):
        print(f"{k:62s} {P[k]['value']:>10} {P[k]['unit']}")
    print(f"wrote {out} ({len(P)} params)")


if __name__ == "__main__":
    main()
