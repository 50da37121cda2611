"""Architecture values read directly off a microbenchmark statistic (closed form), as h200.yaml derives them.

Each derivation names the architecture key, the benchmark, the file, the formula and the *noise*: the spread of
the repeated measurements of the same quantity in the results (other repetitions, parameter variants that
measure the same thing, or two chain sizes), in the value's units; None where the results repeat nothing.
Cycles are SM cycles (``%clock64``). Method notes: microbench/README.md "Method notes and caveats"."""
from __future__ import annotations

import statistics as st
from dataclasses import dataclass
from typing import Callable

from warpgraph.analysis.calibrate.results import MissingResult, Results
from warpgraph.components.tensor_core import DTYPE_CLASS

__all__ = ["Param", "closed_form", "DERIVATIONS"]


@dataclass
class Param:
    """One calibrated value. ``key``: YAML path (mma_sync shape keys hold dots); ``value``: as written (an int
    for integer fields); ``raw``: before rounding; ``noise``: repeat spread (value units) or None."""
    key: tuple[str, ...]
    value: float
    raw: float
    bench: str
    file: str
    method: str            # "closed-form" or "fit"
    how: str
    noise: float | None = None
    integer: bool = True
    converged: bool | None = None      # fits: the study reached a local optimum before its trial limit

    @property
    def dotted(self) -> str:
        return ".".join(self.key)


def _p(key, raw, bench, file, how, noise=None, integer=True, digits=3) -> Param:
    value = int(round(raw)) if integer else round(float(raw), digits)
    return Param(tuple(key), value, float(raw), bench, file, "closed-form", how,
                 None if noise is None else round(float(noise), 4), integer)


def _spread(xs) -> float:
    xs = [float(x) for x in xs]
    return max(xs) - min(xs)


def mbarrier(R: Results, out: dict) -> None:
    """A completed-phase poll's latency: the dependent chain PHASECHK -> SEL -> IADD minus the control chain
    ISETP -> SEL -> IADD, cycles per link (the SEL, the IADD and the loop's back edge cancel), plus the ISETP's
    latency (``latencies.int``, the model's class for it: unit_latencies, derived first)."""
    f = R.file_of("mbarrier_wait", form="test_wait", complete=1)
    # a no-hint try_wait on a phase that never completes suspends the thread until it returns false: the
    # suspension beyond a completed poll (components/mbarrier.py wakes a suspended try_wait at the completion)
    tws = [R.stat("mbarrier_wait", "cycles_per_link", form="try_wait", complete=c) for c in (0, 1)]
    out["try_wait_suspend"] = _p(("mbarrier", "try_wait_max_suspend_cycles"), tws[0] - tws[1], "mbarrier_wait", f,
                                 "try_wait (no hint), phase never completes minus phase complete (dependent-chain "
                                 "cycles per link)")
    if "lat_int" not in out:
        raise MissingResult("mbarrier.test_wait / try_wait need latencies.int (alu_latency results): the poll "
                            "takes the control chain's ISETP's place")
    isetp = out["lat_int"].value
    ctl = R.stat("mbarrier_wait", "cycles_per_link", form="control_alu", complete=1)
    tw = [R.stat("mbarrier_wait", "cycles_per_link", form="test_wait", complete=c) for c in (1, 0)]
    note = (f"dependent-chain cycles per link minus the ISETP control chain's ({ctl:.1f}) plus the ISETP's "
            f"latency ({isetp}, latencies.int)")
    out["test_wait"] = _p(("mbarrier", "test_wait_cycles"), tw[0] - ctl + isetp, "mbarrier_wait", f,
                          "test_wait, phase complete: " + note, noise=_spread(tw))
    out["try_wait"] = _p(("mbarrier", "try_wait_cycles"),
                         R.stat("mbarrier_wait", "cycles_per_link", form="try_wait", complete=1) - ctl + isetp,
                         "mbarrier_wait", f, "try_wait (no hint), phase complete: " + note)


def smem(R: Results, out: dict) -> None:
    add = R.stat("mbarrier_wait", "cycles_per_link", form="control_add_only", complete=1)
    lat = [R.stat("smem_bank", "latency_cycles", stride_words=s) for s in (1, 0)]   # both conflict-free
    f = R.file_of("smem_bank", stride_words=1)
    out["smem_lat"] = _p(("shared_memory", "latency_cycles"), lat[0] - add, "smem_bank", f,
                         f"stride 1: ld.shared+add chain per link minus the add ({add:.1f})", noise=_spread(lat))
    out["smem_bw"] = _p(("shared_memory", "bytes_per_cycle"), R.stat("smem_bandwidth", "bytes_per_cycle_per_sm"),
                        "smem_bandwidth", R.file_of("smem_bandwidth"),
                        "1024 threads, 16-byte ld.volatile.shared, conflict free")


def caches(R: Results, out: dict) -> None:
    l1 = R.one("pchase", level="l1")
    if not l1.get("raw"):
        raise MissingResult("pchase l1 has no raw per-load samples")
    out["l1_lat"] = _p(("l1", "hit_latency_cycles"), st.mean(l1["raw"]), "pchase", l1["file"],
                       "l1 (16 KiB, ld.global, warmed): mean per-load latency")
    # near: the warm ld.global.cg chain (every line a near hit, memops._warm_lines) per link, less the link's
    # dependent IMAD.WIDE.U32 (ptxas folds two adds: 2 x the add-only chain's cycles per add). The per-load
    # median (264) is not used: its clock window opens ~20 cycles after the previous load issued
    add = R.stat("mbarrier_wait", "cycles_per_link", form="control_add_only", complete=1)
    warm = [R.stat("pchase", "chain_avg_cycles", level=lv) for lv in ("l2", "l2_16MB") if R.find("pchase", level=lv)]
    if not warm:
        raise MissingResult("no pchase l2 (warm) result")
    near_raw = warm[0] - 2 * add
    out["l2_near"] = _p(("l2", "near_latency_cycles"), near_raw, "pchase", R.one("pchase", level="l2")["file"],
                        f"l2 (warm) chain_avg_cycles {warm[0]:g} - 2 x add-only chain {add:.2f} (the link's IMAD)",
                        noise=_spread(warm) if len(warm) > 1 else None)
    ft = R.one("pchase", level="l2_first_touch")
    raw_ft = [float(x) for x in ft.get("raw") or []]
    near = [x for x in raw_ft if x < 340]
    far = [x for x in raw_ft if 340 <= x < 600]
    if not near or not far:
        raise MissingResult("pchase l2_first_touch has no raw samples in both modes (<340, 340-600 cycles)")
    gap = st.mean(far) - st.mean(near)
    out["l2_far"] = _p(("l2", "far_latency_cycles"), near_raw + gap, "pchase", ft["file"],
                       f"near + l2_first_touch per-load upper mode mean - lower mode mean ({gap:.1f}; modes split "
                       f"at 340 cycles, {len(far)} / {len(near)} samples)")
    dram = [st.mean([float(x) for x in R.one("pchase", level=lv)["raw"]])
            for lv in ("dram", "dram_1GB") if R.find("pchase", level=lv) and R.one("pchase", level=lv).get("raw")]
    if not dram:
        raise MissingResult("no pchase dram result with raw per-load samples")
    l2_ft = st.mean(raw_ft)
    out["hbm_lat"] = _p(("hbm", "latency_cycles"), dram[0] - l2_ft, "pchase", ft["file"],
                        f"dram per-load mean {dram[0]:.1f} - l2_first_touch per-load mean {l2_ft:.1f} (both near / "
                        "far mixes: the DRAM latency added to either L2 latency)",
                        noise=_spread(dram) if len(dram) > 1 else None)
    clk = (R.provenance.get("sm_clock_probe_mhz") or {}).get("after_memory")
    if clk:
        # the SM clock the chase ran at: DRAM time is memory-clock time (hbm.latency_clock_mhz)
        out["hbm_lat_clock"] = _p(("hbm", "latency_clock_mhz"), float(clk), "pchase", ft["file"],
                                  "provenance sm_clock_probe_mhz after_memory: the SM clock (as found) the pchase "
                                  "section ran at", integer=False, digits=1)


def l1_tags(R: Results, out: dict) -> None:
    rows = [r for r in R.find("l1_scatter", lane_stride=6000, kind="hit") if r["params"].get("warps_per_sm", 0) >= 4]
    if not rows:
        raise MissingResult("no l1_scatter lane_stride=6000 hit result with >= 4 warps")
    per = [float(r["stats"]["sm_cycles_per_line"]) for r in rows]
    w8 = [float(r["stats"]["sm_cycles_per_line"]) for r in rows if r["params"].get("warps_per_sm") == 8] or per
    out["l1_tag"] = _p(("l1", "tag_cycles_per_line"), w8[0], "l1_scatter", rows[0]["file"],
                       "lane_stride 6000 hit (32 lines per warp-load), 8 warps: SM cycles per line",
                       noise=_spread(per), integer=False)


def tma(R: Results, out: dict) -> None:
    t1 = R.one("tma_issue", n=1, bytes=1024, level="l2")
    span1 = float(t1["stats"]["issue_span_median"])
    out["tma_issue_lat"] = _p(("tma", "issue_latency_cycles"), span1 - 1, "tma_issue", t1["file"],
                              "T(1) (1 KiB, L2-hot) minus its one issue slot", noise=_spread(t1.get("raw") or [span1]))
    try_wait = out["try_wait"].value if "try_wait" in out else None
    if try_wait is None:
        raise MissingResult("tma.l2_latency_cycles needs mbarrier.try_wait_cycles (mbarrier_wait results)")
    comp = float(t1["stats"]["completion_median"])
    out["tma_l2"] = _p(("tma", "l2_latency_cycles"), comp - span1 - try_wait, "tma_issue", t1["file"],
                       f"n=1 1 KiB L2-hot: completion {comp:g} - T(1) {span1:g} - mbarrier.try_wait {try_wait}")
    adm = {r["params"]["n"]: float(r["stats"]["completion_median"])
           for r in R.find("tma_admission", bytes=16384, level="l2")}
    if 24 not in adm or 32 not in adm:
        raise MissingResult("no tma_admission 16 KiB L2 results at n=24 and n=32")
    # the same rate over the other 8-copy windows of the linear range (completion grows ~170 cycles a copy from N=2)
    rates = [16384 * 8 / (adm[32] - adm[24])] + [16384 * 8 / (adm[a + 8] - adm[a]) for a in range(8, 24)
                                                 if a in adm and a + 8 in adm]
    out["tma_bw"] = _p(("tma", "request_bytes_per_cycle"), rates[0], "tma_admission",
                       R.file_of("tma_admission", n=32, bytes=16384, level="l2"),
                       "16 KiB x N L2-hot: 16 KiB x 8 / (completion(32) - completion(24)) (sustained per-SM rate; "
                       "noise: the other 8-copy windows from N=8)",
                       noise=_spread(rates) if len(rates) > 1 else None)


def tensor_cores(R: Results, out: dict) -> None:
    shapes = sorted({(r["params"]["dtype"], r["params"]["shape"]) for r in R.find("mma_sync", chains=1, warps=1)})
    if not shapes:
        raise MissingResult("no mma_sync results")
    single = []
    for dt, sh in shapes:
        if dt == "e4m3":      # emulated on sm_90 (2 HMMA + conversions, README); the model expands it itself
            continue
        lat = R.one("mma_sync", dtype=dt, shape=sh, chains=1, warps=1)
        key = ("tensor_core", "mma_sync", f"{dt}.{sh}")
        out[f"mma_lat_{dt}_{sh}"] = _p(key + ("latency_cycles",), lat["stats"]["latency_cycles"], "mma_sync",
                                       lat["file"], "1 warp, 1 dependent chain: slope of cycles vs iterations",
                                       noise=_spread(lat.get("raw") or [0]))
        sat = R.find("mma_sync", dtype=dt, shape=sh, chains=8, warps=16)
        if sat:
            s = sat[0]
            out[f"mma_gap_{dt}_{sh}"] = _p(key + ("issue_gap_cycles",), 4 * float(s["stats"]["issue_gap_per_sm"]),
                                           "mma_sync", s["file"],
                                           "16 warps x 8 chains: 4 x SM issue gap (one sub-partition, saturated)",
                                           noise=_spread(s.get("raw") or [0]) / 4)
        w1 = R.find("mma_sync", dtype=dt, shape=sh, chains=8, warps=1)
        if w1:
            single.append((float(w1[0]["stats"]["issue_gap_per_warp"]), w1[0]))
    if single:
        g, r = min(single, key=lambda x: x[0])
        out["mma_warp_gap"] = _p(("tensor_core", "mma_sync_warp_issue_gap_cycles"), g, "mma_sync", r["file"],
                                 f"1 warp x 8 independent chains, fastest shape ({r['params']['dtype']}."
                                 f"{r['params']['shape']})", noise=_spread(r.get("raw") or [0]))
    tp = R.find("wgmma_throughput")
    if tp:
        fl = [float(x["stats"]["flop_per_cycle_per_sm"]) for x in tp]
        one = [float(x["stats"]["flop_per_cycle_per_sm"]) for x in tp if x["params"].get("warpgroups") == 1]
        out["wgmma_flop"] = _p(("tensor_core", "dense_fp16_flop_per_cycle_per_sm"), st.median(fl),
                               "wgmma_throughput", tp[0]["file"], "median over N, SS/RS, 1-2 warpgroups",
                               noise=_spread(one or fl))
        _wgmma_dtype_rates(R, out)
        lat = {x["params"]["n"]: float(x["stats"]["latency_cycles"]) for x in R.find("wgmma_latency", ab="ss")}
        ivl = {x["params"]["n"]: float(x["stats"]["issue_interval_per_wg"])
               for x in R.find("wgmma_throughput", ab="ss", warpgroups=1)}
        tails = {n: lat[n] - ivl[n] for n in lat if n in ivl}
        if tails:
            n0 = min(tails, key=tails.get)
            out["wgmma_tail"] = _p(("tensor_core", "completion_latency_cycles"), tails[n0] - 8, "wgmma_latency",
                                   tp[0]["file"], f"min over N of SS latency - issue interval (N={n0}: "
                                   f"{tails[n0]:g}) - 8 cycles of fence/commit/wait issue (estimate)")


def _wgmma_dtype_rates(R: Results, out: dict) -> None:
    """FP8 / TF32 wgmma service rates from microbench/src/wgmma_dtype.cu (``wgmma_dtype`` tput rows: SM cycles
    per wgmma, 1-2 warpgroups, 1 or 132 CTAs): the median FLOP per SM cycle over the type's rows; none when the
    results hold no such run (the f16 rate above stays the only tensor rate)."""
    by_key: dict[str, list] = {}
    for x in R.find("wgmma_dtype", mode="tput"):
        c = DTYPE_CLASS.get(x["params"]["dtype"])      # the type's rate class, as the tensor core serves it
        if c and c != "fp16":                          # (the FP16 rate comes from wgmma_throughput above)
            by_key.setdefault(f"dense_{c}_flop_per_cycle_per_sm", []).append(x)
    for k, rows in sorted(by_key.items()):
        fl = [float(x["stats"]["flop_per_cycle_per_sm"]) for x in rows]
        types = "/".join(sorted({x["params"]["dtype"] for x in rows}))
        out[k] = _p(("tensor_core", k), st.median(fl), "wgmma_dtype", rows[0]["file"],
                    f"{types} m64n128/256 SS: median FLOP per SM cycle over N, 1-2 warpgroups, 1 or 132 CTAs",
                    noise=_spread(fl))


def dsm(R: Results, out: dict) -> None:
    r = R.one("dsm_latency", target="remote")
    out["dsm_lat"] = _p(("fabric", "dsm_latency_cycles"), r["stats"]["latency_cycles"], "dsm_latency", r["file"],
                        "dependent ld.shared::cluster chain into the peer CTA (cluster 2)")


def launch(R: Results, out: dict) -> None:
    rows = R.find("cta_turnaround")
    if not rows:
        raise MissingResult("no cta_turnaround results")
    ref = [r for r in rows if r["params"].get("threads") == 32 and r["params"].get("spin_cycles") == 2000] or rows
    gap = float(ref[0]["stats"]["gap_median"])
    out["launch"] = _p(("cta_scheduler", "launch_latency_cycles"), gap - 52, "cta_turnaround", ref[0]["file"],
                       f"32 threads: median gap {gap:g} from a CTA's last clock to the next CTA's first, minus the 52 "
                       "cycles the replay spends from that clock read to retire (tests/test_microbench_replay.py)",
                       noise=_spread(float(r["stats"]["gap_median"]) for r in rows))


def loaded(R: Results, out: dict) -> None:
    rows = sorted(R.find("loaded_latency"), key=lambda r: r["stats"]["bg_gb_per_s"])
    peak = max((float(x["stats"]["gb_per_s"]) for x in R.find("hbm_read")), default=None)
    if len(rows) < 3 or not peak:
        raise MissingResult("needs loaded_latency results and hbm_read (peak bandwidth)")
    base = float(rows[0]["stats"]["latency_cycles"])
    pts, prev = [], None
    for r in rows[1:]:
        bw = float(r["stats"]["bg_gb_per_s"])
        if prev is not None and bw < 1.1 * prev:     # bandwidth stopped growing: queue-bound, past saturation
            break
        u = bw / peak
        pts.append((u / (1 - u), float(r["stats"]["latency_cycles"]) - base, u))
        prev = bw
    sxx = sum(x * x for x, _, _ in pts)
    a = sum(x * d for x, d, _ in pts) / sxx
    # noise: the standard error of the slope (one curve, no repeats)
    se = (sum((d - a * x) ** 2 for x, d, _ in pts) / (len(pts) - 1) / sxx) ** 0.5 if len(pts) > 1 else None
    f = rows[0]["file"]
    out["loaded"] = _p(("hbm", "loaded_latency_cycles"), a, "loaded_latency", f,
                       f"least squares of latency - {base:.0f} = a u/(1-u) over {len(pts)} background loads below "
                       f"saturation (u of hbm_read {peak:g} GB/s)", noise=se, integer=False, digits=1)
    out["loaded_u"] = _p(("hbm", "loaded_latency_max_util"), max(u for _, _, u in pts), "loaded_latency", f,
                         "highest background utilisation measured below saturation", integer=False, digits=2)


#: in order: tma uses mbarrier's try_wait
#: unit class -> the alu_latency ops whose chains / throughput loops run on it (microbench/src/alu_latency.cu) and
#: how many instructions one link is
_ALU_CLASSES = {"int": (("imad",), 1), "fp32": (("fadd", "ffma"), 1), "fp16": (("hfma2",), 1),
                "sfu": (("mufu_ex2", "mufu_rsq"), 1), "mio": (("shfl_bfly",), 1), "cvt_packed": (("cvt_f16_f32_pair",), 2)}


def unit_latencies(R: Results, out: dict) -> None:
    """Per unit class (h200.yaml ``latencies``): the latency = cycles per link of one warp's dependent chain
    (median over the class's ops, divided by the instructions per link), the interval per sub-partition = 4 x the
    SM cycles per instruction of 32 warps x 8 independent chains; bar.sync's cost per warp = the least-squares
    slope of back-to-back bar.sync cycles against the warps (the release after it is fitted, fit.py)."""
    rows = R.find("alu_latency")
    if not rows:
        raise MissingResult("no alu_latency results (microbench/src/alu_latency.cu)")
    file = rows[0]["file"]
    for cls, (ops, per) in _ALU_CLASSES.items():
        lat = [float(r["stats"]["cycles"]) / per for r in rows
               if r["params"].get("mode") == "lat" and r["params"].get("op") in ops]
        tput = [4 * float(r["stats"]["cycles"]) / per for r in rows if r["params"].get("mode") == "tput"
                and r["params"].get("op") in ops and r["params"].get("warps") == 32]
        if lat:
            out[f"lat_{cls}"] = _p(("latencies", cls, "latency_cycles"), st.median(lat), "alu_latency", file,
                                   f"dependent chain of {'/'.join(ops)}: cycles per link / {per}",
                                   noise=_spread(lat))
        if tput:
            out[f"ii_{cls}"] = _p(("latencies", cls, "interval_cycles"), st.median(tput), "alu_latency", file,
                                  f"32 warps x 8 chains of {'/'.join(ops)}: 4 x SM cycles per instruction",
                                  noise=_spread(tput))
    bars = sorted((int(r["params"]["warps"]), float(r["stats"]["cycles"])) for r in rows
                  if r["params"].get("unit") == "bar")
    if len(bars) >= 2:
        ws, cs = zip(*bars)
        slope = st.linear_regression(ws, cs).slope
        out["bar_per_warp"] = _p(("latencies", "bar_sync_cycles_per_warp"), slope, "alu_latency", file,
                                 f"back-to-back bar.sync of {'/'.join(map(str, ws))} warps: least-squares slope "
                                 "of cycles per barrier against warps")


def store_path(R: Results, out: dict) -> None:
    """The SM's store path from microbench/src/sm_store_rate.cu (``ssr`` rows; op 0 = st.global.cg, 2 = plain
    st.global): ``l1.store_bytes_per_cycle`` = the median bytes per cycle of the 64-round store runs on 1-66 SMs
    whose warps x bytes per lane reach the plateau (>= 32: fewer are issue-bound); ``l1.store_queue_bytes`` = the
    bytes one round's burst (1 SM, 16-B stores) gets out ahead of that rate, bytes - cycles x rate, mean over the
    bursts of 4 and 8 warps."""
    rows = [r for r in R.find("ssr") if r["params"].get("op") in (0, 2)]
    if not rows:
        raise MissingResult("no sm_store_rate results (microbench/src/sm_store_rate.cu)")
    file = rows[0]["file"]
    flat = [float(r["stats"]["bytes_per_cycle"]) for r in rows if r["params"].get("reps") == 64
            and r["params"]["grid"] <= 66 and r["params"]["warps"] * r["params"]["width"] >= 32]
    if not flat:
        raise MissingResult("no 64-round store runs of >= 32 B per warp-lane set (sm_store_rate.cu)")
    rate = st.median(flat)
    out["store_bpc"] = _p(("l1", "store_bytes_per_cycle"), rate, "sm_store_rate", file,
                          f"median of {len(flat)} store runs (2-32 warps, 4-16 B per lane, 1-66 SMs)",
                          noise=_spread(flat), integer=False, digits=1)
    burst = [float(r["params"]["warps"] * 8 * 32 * 16) - float(r["stats"]["cycles"]) * rate for r in rows
             if r["params"].get("reps") == 1 and r["params"]["grid"] == 1 and r["params"]["width"] == 16
             and r["params"]["warps"] in (4, 8) and r["params"]["op"] == 0]
    if burst:
        out["store_queue"] = _p(("l1", "store_queue_bytes"), st.fmean(burst), "sm_store_rate", file,
                                "one round of 16-B stores from 4 / 8 warps: bytes - cycles x store rate, mean",
                                noise=_spread(burst))


def atomics(R: Results, out: dict) -> None:
    """Global atomics from microbench/src/atomics.cu (parse_atomics.py: ``atomics_lat`` / ``atomics_tput`` rows).
    LAT (one thread, dependent chains on one L2-resident word): ``l2.fence_gpu_cycles`` = the fence alone;
    ``lock_retry_period_cycles`` = one acq_rel cas; ``atomic_acquire_cycles`` = acq_rel atom - relaxed atom -
    fence; ``atomic_extra_latency_cycles`` = relaxed atom - ld.cg (per link) less what the model's L2 path adds
    beyond the chain's near-partition re-read (the near / far mix mean - near: the atom is performed at its home
    slice). TPUT: ``l2.atomic_word_cycles`` / ``atomic_word_float_cycles`` = 1 / the median lane-ops per cycle of
    every lane of 132 SMs on one word (red / atom u32; Triton's acq_rel f32 add); ``atomic_line_lane_cycles`` = 1 /
    the median lane-ops per cycle on one line (lane i word i, 132 SMs x 4 / 16 warps); the SM's atomic unit from one
    SM's 32 warps: ``l1.atomic_request_cycles`` = the mean cycles per request on distinct lines (red, atom),
    ``atomic_same_word_lane_cycles`` / ``_return_cycles`` = cycles per request / 32 with a warp's lanes on one word
    (red / atom)."""
    found = R.find("atomics_lat")
    lat = {r["params"].get("mode"): r["stats"]["cycles_per_link"] for r in found}
    need = ("ld_cg", "atom_relaxed", "cas_relaxed", "atom_acqrel", "cas_acqrel", "fence")
    if not all(m in lat for m in need):
        raise MissingResult("no atomics.cu LAT results (microbench/parse_atomics.py)")
    file = found[0]["file"]
    out["fence_gpu"] = _p(("l2", "fence_gpu_cycles"), lat["fence"], "atomics_lat", file,
                          "fence.acq_rel.gpu alone, cycles per link", integer=False, digits=1)
    out["lock_retry"] = _p(("l2", "lock_retry_period_cycles"), lat["cas_acqrel"], "atomics_lat", file,
                           "one acq_rel atom.cas (a spinning waiter's attempt), cycles per link", integer=False,
                           digits=1)
    acq = [lat[f"{o}_acqrel"] - lat[f"{o}_relaxed"] - lat["fence"] for o in ("atom", "cas")]
    out["atom_acquire"] = _p(("l2", "atomic_acquire_cycles"), acq[0], "atomics_lat", file,
                             "acq_rel atom.add - relaxed atom.add - fence, per link (cas: "
                             f"{acq[1]:.1f})", noise=_spread(acq), integer=False, digits=1)
    if "l2_near" not in out or "l2_far" not in out:
        raise MissingResult("the L2 near / far latencies (pchase) that the atom's extra latency is net of")
    near, far = out["l2_near"].value, out["l2_far"].value
    extra = [lat[f"{o}_relaxed"] - lat["ld_cg"] - ((near + far) / 2 - near) for o in ("atom", "cas")]
    out["atom_extra"] = _p(("l2", "atomic_extra_latency_cycles"), extra[0], "atomics_lat", file,
                           f"relaxed atom.add - ld.cg per link, less the home-slice mix mean ({(near + far) / 2:g}) "
                           f"- near ({near}) that the model's L2 path adds (cas: {extra[1]:.1f})",
                           noise=_spread(extra), integer=False, digits=1)
    tp = R.find("atomics_tput")
    if not tp:
        raise MissingResult("no atomics.cu TPUT results (microbench/parse_atomics.py)")

    def rows(op, pattern, G, Ws):
        got = [r["stats"] for r in tp if r["params"].get("op") in op and r["params"].get("pattern") == pattern
               and r["params"].get("G") == G and r["params"].get("W") in Ws]
        if not got:
            raise MissingResult(f"no TPUT {'/'.join(op)} {pattern} G={G} W={Ws}")
        return got

    ints = ("red_u32", "atom_u32")
    for key, op, how in ((("l2", "atomic_word_cycles"), ints, "red / atom u32"),
                         (("l2", "atomic_word_float_cycles"), ("atom_acqrel_f32",), "acq_rel atom.add.f32")):
        lo = [x["lane_ops_per_cycle"] for x in rows(op, "same", 132, (1, 4, 16))]
        out[key[1]] = _p(key, 1.0 / st.median(lo), "atomics_tput", tp[0]["file"],
                         f"1 / median lane-ops per cycle on one word, 132 SMs x 1 / 4 / 16 warps, {how}",
                         noise=_spread([1.0 / x for x in lo]), integer=False, digits=3)
    lo = [x["lane_ops_per_cycle"] for x in rows(ints + ("atom_acqrel_f32",), "shared_line", 132, (4, 16))]
    out["atomic_line_lane_cycles"] = _p(("l2", "atomic_line_lane_cycles"), 1.0 / st.median(lo), "atomics_tput",
                                        tp[0]["file"], "1 / median lane-ops per cycle on one line (lane i word i), "
                                        "132 SMs x 4 / 16 warps, red / atom / acq_rel f32",
                                        noise=_spread([1.0 / x for x in lo]), integer=False, digits=4)
    req = [rows((o,), "warp_line", 1, (32,))[0]["cycles_per_warp_inst_per_sm"] for o in ints]
    out["atomic_request_cycles"] = _p(("l1", "atomic_request_cycles"), st.fmean(req), "atomics_tput", tp[0]["file"],
                                      "one SM, 32 warps each on its own line: cycles per request, mean of red / atom",
                                      noise=_spread(req), integer=False, digits=2)
    # the L2's atomic ALUs. 132 CTAs x 16 warps, each CTA on its own line (132 adjacent lines), red: the span is the
    # largest power-of-two bytes whose lines, all on one ALU, would not take a request faster than one line alone
    # does (atomic_line_lane_cycles x 32); its per-lane cost sets atomic_alu_lane_cycles (atom_u32: the return rate)
    one_line = 32.0 / st.median(lo)
    cta16 = {o: rows((o,), "cta_line", 132, (16,))[0]["cycles"] for o in ints}
    red16 = cta16["red_u32"]
    span = 128
    while span < 1 << 16 and red16 / (2 * span // 128 * 16 * 64) >= one_line:
        span *= 2
    per = span // 128
    out["atomic_lane_unit_bytes"] = _p(("l2", "atomic_lane_unit_bytes"), span, "atomics_tput", tp[0]["file"],
                                       "largest power-of-two span whose 132-SM red (one line per CTA, 16 warps) "
                                       "leaves a request no faster than one line alone")
    for key, o in ((("l2", "atomic_alu_lane_cycles"), "red_u32"), (("l2", "atomic_alu_return_lane_cycles"), "atom_u32")):
        out[key[1]] = _p(key, cta16[o] / (per * 16 * 64 * 32), "atomics_tput", tp[0]["file"],
                         f"132 CTAs x 16 warps x 64 on one line per CTA ({per} lines per ALU span): cycles / "
                         f"({per} x 1,024 requests x 32 lanes) ({o})", integer=False, digits=4)
    # ALUs: each warp on its own line, 16 warps per CTA (2,112 lines): the busiest ALU's lines at the red rate give
    # its spans k; the ALUs are the power of two with ceil(spans / ALUs) = k
    wl = rows(("red_u32",), "warp_line", 132, (16,))[0]["cycles"]
    spans = 132 * 16 // per
    k = max(1, round(wl / (64 * 32 * out["atomic_alu_lane_cycles"].raw) / per))
    units = 1
    while -(-spans // units) > k:
        units *= 2
    out["atomic_lane_units"] = _p(("l2", "atomic_lane_units"), units, "atomics_tput", tp[0]["file"],
                                  f"132 CTAs x 16 warps each on its own line ({spans} spans): the busiest ALU takes "
                                  f"{k} spans at the red rate; the fewest power-of-two ALUs that give it no more")
    for key, o in ((("l1", "atomic_same_word_lane_cycles"), "red_u32"),
                   (("l1", "atomic_same_word_return_cycles"), "atom_u32")):
        c = rows((o,), "warp_word", 1, (32,))[0]["cycles_per_warp_inst_per_sm"]
        out[key[1]] = _p(key, c / 32, "atomics_tput", tp[0]["file"],
                         f"one SM, 32 warps each with its 32 lanes on its own word: cycles per request / 32 ({o})",
                         integer=False, digits=3)


def lock_lines(R: Results, out: dict) -> None:
    """The L2 line unit's least occupancy of a request from microbench/src/lock_lines.cu (parse_lock_lines.py:
    ``cas_line`` rows; one-lane atom.cas that always fail, from 1,056 one-warp CTAs on one line): ``l2.
    atomic_line_request_cycles`` = cycles / requests of the relaxed cas on 32 words (K = 64 each);
    ``atomic_line_request_ordered_cycles`` = (the median launch of the acq_rel cas on 32 words and on one word,
    K = 16, less one uncontended acq_rel cas, ``lock_retry_period_cycles``) / requests."""
    rel = R.find("cas_line", acqrel=0, G=1056, words=32)
    ordd = R.find("cas_line", acqrel=1, G=1056)
    if not rel or not ordd:
        raise MissingResult("no lock_lines.cu CLN results with 1,056 CTAs (microbench/parse_lock_lines.py)")
    if "lock_retry" not in out:
        raise MissingResult("one uncontended acq_rel cas (atomics.cu LAT cas_acqrel) that the ordered time is net of")
    r = rel[0]
    n = r["params"]["G"] * r["params"]["K"]
    per = [c / n for c in (r.get("reps") or [r["stats"]["cycles"]])]
    out["atomic_line_request"] = _p(("l2", "atomic_line_request_cycles"), r["stats"]["cycles"] / n, "cas_line",
                                    r["file"], f"relaxed one-lane cas, 1,056 CTAs x {r['params']['K']} on 32 words "
                                    "of one line: cycles per request", noise=_spread(per), integer=False, digits=3)
    reps = [c for x in ordd for c in (x.get("reps") or [x["stats"]["cycles"]])]
    n = ordd[0]["params"]["G"] * ordd[0]["params"]["K"]
    lead = out["lock_retry"].value
    out["atomic_line_request_ordered"] = _p(
        ("l2", "atomic_line_request_ordered_cycles"), (st.median(reps) - lead) / n, "cas_line", ordd[0]["file"],
        f"acq_rel one-lane cas, 1,056 CTAs x {ordd[0]['params']['K']} on one line (32 words / one word): (median of "
        f"{len(reps)} launches - one uncontended acq_rel cas {lead:g}) / requests",
        noise=_spread([(c - lead) / n for c in reps]), integer=False, digits=3)


DERIVATIONS: list[tuple[str, Callable]] = [
    ("unit latencies", unit_latencies), ("mbarrier", mbarrier), ("shared memory", smem),
    ("caches / DRAM latency", caches), ("L1 tags", l1_tags), ("TMA", tma), ("tensor cores", tensor_cores),
    ("DSM", dsm), ("CTA launch", launch), ("loaded DRAM", loaded), ("store path", store_path), ("atomics", atomics),
    ("lock lines", lock_lines)]


def closed_form(R: Results) -> tuple[dict[str, Param], list[str]]:
    """All closed-form values the results allow, and one line per group skipped (what was missing)."""
    out: dict[str, Param] = {}
    skipped = []
    for name, fn in DERIVATIONS:
        try:
            fn(R, out)
        except (MissingResult, KeyError, ZeroDivisionError, ValueError, st.StatisticsError) as e:
            skipped.append(f"{name}: {e}")
    return out, skipped
