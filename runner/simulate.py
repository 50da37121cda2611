"""``simulate()``: launch record -> functional pass (trace) -> timing pass -> :class:`RunResult` (Contract 5).

Overrides: keys of the arch YAML (``"tma.admission_depth": 8``) go to ``load_arch``; keys starting with
``timing.`` are runner knobs (``timing.policy=lrr``, ``timing.n_sms=8``,
``timing.registers=128``, ``timing.bundle=0`` for the per-warp model, ``timing.window=32`` SM run-ahead window),
keys ``sass.<opcode>=N`` override the SASS issue-slot table (components/sass_cost.py).

Modes: ``timing`` (detailed: every SM), ``sampled`` (runner/sampling.py: ``sample`` SMs in detail, the rest
statistically; ``sample=None|k|[sm ids]|{"sms": k, "seed": s}``, seed defaults to ``seed``), ``waves``
(runner/waves.py: the first ``waves`` waves in detail, the rest extrapolated; ``mode="sampled", waves=k`` both),
``functional``. ``lazy=True`` (detailed mode): the functional trace runs as CTAs launch and is dropped once read
(workloads/functional/lazy.py; ``metrics["functional_trace"]``).
``bundle=False`` replays every warp on its own (validation of the warp-bundle model, runner/timing.py).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

from warpgraph.core.errors import UserError
from warpgraph.runner.result import RunResult
from warpgraph.workloads.ptx.isa import KNOWN_OPCODES

__all__ = ["simulate", "split_overrides", "DEFAULT_RECORD", "parse_trace_window", "parse_trace_sms"]

_HERE = Path(__file__).resolve().parent.parent
#: the bundled default record of ``warpgraph run`` with no RECORD
DEFAULT_RECORD = _HERE / "workloads" / "records" / "h200" / "gemm_tma_M2048_N2048_K2048"

def _bool(v) -> bool:
    return str(v).strip().lower() not in ("0", "false", "no", "off", "")


_TIMING_KEYS = {"policy": str, "n_sms": int, "registers": int, "shared_bytes": int, "bundle": _bool,
                "window": int, "partition_window": int, "partition": str}
#: valid ranges / choices of the runner knobs and the SASS issue-slot overrides (checked before simulating)
_TIMING_RANGES = {"n_sms": (1, 1024), "registers": (1, 255), "shared_bytes": (0, 1 << 24), "window": (0, 1 << 30),
                  "partition_window": (1, 1 << 20)}
_TIMING_CHOICES = {"policy": ("gto", "lrr"), "units": ("auto",), "partition": ("gpc", "cpc", "gpu")}
_SASS_RANGE = (0, 1 << 16)
_SASS_SWITCHES = ("guided", "control_stalls", "issue_order", "branches", "wgmma_serial", "ex2_serial")
#: switches with more than two levels (``sass.issue_order``: 0 PTX order, 1 ptxas's order of ALU work and memory
#: accesses, 2 also of mma.sync and CTA barriers; workloads/issue_order.py)
_SWITCH_RANGE = {"issue_order": (0, 2)}


def _int_knob(k: str, v, lo: int, hi: int) -> int:
    if isinstance(v, bool):
        raise UserError(f"{k}={v!r} is not an integer", location=f"--set {k}", hint=f"an integer in [{lo}, {hi}]")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int):
        try:
            v = int(str(v).strip().replace("_", ""), 0)
        except ValueError:
            raise UserError(f"{k}={v!r} is not an integer", location=f"--set {k}",
                            hint=f"an integer in [{lo}, {hi}]") from None
    if not lo <= v <= hi:
        raise UserError(f"{k}={v} out of range", location=f"--set {k}", hint=f"an integer in [{lo}, {hi}]")
    return v


def _timing_knob(k: str, name: str, v):
    if name in _TIMING_RANGES:
        return _int_knob(k, v, *_TIMING_RANGES[name])
    if name in _TIMING_CHOICES:
        if str(v) not in _TIMING_CHOICES[name]:
            raise UserError(f"{k}={v!r} is not a valid choice", location=f"--set {k}",
                            hint="one of " + ", ".join(_TIMING_CHOICES[name]))
        return str(v)
    return _TIMING_KEYS[name](v)


def split_overrides(overrides) -> tuple[dict | list | None, dict, dict]:
    """(arch overrides, timing knobs, sass overrides). Accepts a dict or a list of ``k=v`` strings.
    Knob values are checked (type and range: ``timing.window=-5`` is an error, not a hang)."""
    if not overrides:
        return None, {}, {}
    items = list(overrides.items()) if isinstance(overrides, dict) else []
    if not isinstance(overrides, dict):
        for s in overrides:
            if "=" not in str(s):
                raise UserError(f"override {s!r} is not key=value", hint="e.g. --set tma.admission_depth=8")
            k, v = str(s).split("=", 1)
            items.append((k.strip(), v.strip()))
    arch, timing, sass = {}, {}, {}
    for k, v in items:
        if k.startswith("timing."):
            name = k[len("timing."):]
            if name not in _TIMING_KEYS:
                raise UserError(f"unknown timing knob {k!r}", location=f"--set {k}",
                                hint=f"one of: {', '.join('timing.' + n for n in _TIMING_KEYS)}")
            timing[name] = _timing_knob(k, name, v)
        elif k.startswith("sass."):
            if not k[len("sass."):]:
                raise UserError(f"override {k!r} names no SASS opcode", location=f"--set {k}",
                                hint="sass.<opcode>=N, e.g. sass.div=20")
            name = k[len("sass."):]
            if name not in _SASS_SWITCHES and name not in KNOWN_OPCODES:
                raise UserError(f"unknown SASS override {k!r}: {name!r} is neither a PTX opcode nor a switch",
                                location=f"--set {k}",
                                hint="sass.<PTX opcode>=N (issue slots, e.g. sass.div=20) or a 0 / 1 switch: "
                                     + ", ".join("sass." + n for n in _SASS_SWITCHES))
            # the switches (workloads/sass.py guided costs, runner/timing.py control-code stalls) are 0 / 1
            sass[name] = _int_knob(k, v, *(_SWITCH_RANGE.get(name, (0, 1)) if name in _SASS_SWITCHES
                                           else _SASS_RANGE))
        else:
            arch[k] = v
    if isinstance(overrides, dict):
        return (arch or None), timing, sass
    return ([f"{k}={v}" for k, v in arch.items()] or None), timing, sass


def _occupancy(record, program, spec, registers=None, shared_bytes=None):
    """The timing replay's occupancy of ``record`` (registers, shared memory, warps; the ``timing.registers`` /
    ``timing.shared_bytes`` knobs included): what the functional pass's L1 capacity and batch size follow."""
    from warpgraph.runner.timing import sm_occupancy

    return sm_occupancy(spec, program, record, threads_per_cta=int(math.prod(record.block)), registers=registers,
                        shared_bytes=shared_bytes)


def _l1_bytes_per_sm(record, program, spec, registers=None, shared_bytes=None, occ=None) -> int:
    """Per-SM L1 capacity for the functional pass: the occupancy ``occ`` (default :func:`_occupancy`) and the
    driver's shared-memory carveout (runner/timing.l1_bytes_per_sm)."""
    from warpgraph.runner.timing import l1_bytes_per_sm

    return l1_bytes_per_sm(spec, occ if occ is not None else _occupancy(record, program, spec, registers,
                                                                       shared_bytes))


#: the functional pass's largest batch (threads run in lock step; workloads/functional/run.py ``iter_batches``)
MAX_BATCH_LANES = 1 << 16


def _batch_lanes(record, occ, n_sm: int) -> int:
    """Threads per functional batch: at most one resident wave (``n_sm`` x CTAs per SM of the occupancy ``occ`` x
    threads per CTA) and :data:`MAX_BATCH_LANES`. The batches' lock-step order is the L2 residency model's
    time order (workloads/functional/l2model.py): a batch larger than the wave makes the reuse between waves (a GEMM
    re-reading A in every wave of N tiles) reuse within one lock-step step, hits the card does not get. The cluster
    GEMM M4096 (1,024 CTAs of 128 threads, 132 resident): 2 batches of 512 CTAs read 101 MB from DRAM, 8 of 132 read
    309 MB, the H200 339.5 MB (A re-read in each of the 8 waves: 32 MB of A + 4 of B + 4 of C exceed the 37.5 MiB
    the L2 keeps for reuse)."""
    lanes = -(-int(math.prod(record.block)) // 32) * 32
    return int(min(MAX_BATCH_LANES, max(1, int(n_sm)) * max(1, int(occ.ctas_per_sm)) * lanes))


def _address_map(spec) -> dict:
    """The functional pass's per-slice / per-channel byte counts (workloads/functional/addrmap.py): the spec's
    slices, enabled channels and address-hash parameters, and the SMs and L2 partitions for the L2 fabric bytes
    (statistics only; the timing is partition-based)."""
    l2, hbm = spec.l2, spec.hbm
    return {"slices": int(l2.slices), "channels": int(hbm.channels_enabled or hbm.channels),
            "slice_shift_bits": int(l2.slice_hash_shift_bits), "channel_shift_bits": int(hbm.channel_hash_shift_bits),
            "interleave_bytes": int(hbm.channel_interleave_bytes),
            "n_sm": int(spec.sm.count), "partitions": int(l2.partitions)}


def _run_functional(record, program, **kw):
    try:
        from warpgraph.workloads.functional import run_functional
    except ImportError:
        from warpgraph.workloads.functional.executor import run_functional
    return run_functional(record, program, **kw)


def _sample_key(sample, seed):
    """The sampled-mode arguments as JSON-able data (part of the trace cache key)."""
    if isinstance(sample, dict):
        return {"sample": {str(k): sample[k] for k in sorted(sample)}, "seed": seed}
    return {"sample": list(sample) if isinstance(sample, (list, tuple)) else sample, "seed": seed}


def _functional_pass(record, program, trace_cache, extra_key: dict, **kw):
    """(FunctionalResult, "hit" | "miss" | "off"): the first functional pass of a timing / sampled run, through
    the trace cache (runner/trace_cache.py) when it can apply: the run wants no outputs (the cache keeps traces,
    not buffer values) and sets no functional budget (a budget must be checked by executing)."""
    uses = (trace_cache is not False and not kw.get("compute_values") and kw.get("max_steps") is None
            and kw.get("max_wall_seconds") is None)
    if not uses:
        return _run_functional(record, program, **kw), "off"
    from warpgraph.runner import trace_cache as tc
    from warpgraph.workloads.functional import FunctionalResult

    disk = False if trace_cache == "memory" else (None if trace_cache in (None, True) else trace_cache)
    # every value the functional pass receives (run_functional's defaults made explicit) + mode / sample
    inputs = {k: v for k, v in kw.items() if not callable(v)}
    inputs.setdefault("seed", 0)
    inputs.setdefault("max_lanes", MAX_BATCH_LANES)
    key = tc.trace_key(record, **inputs, **extra_key)

    def result(t):
        return FunctionalResult({}, t, int(t.dynamic_warp_instructions))

    t = tc.get(key, program, disk)
    if t is not None:
        return result(t), "hit"
    with tc.lock(key, disk):           # concurrent workers: one computes, the others read its file
        t = tc.get(key, program, disk)
        if t is not None:
            return result(t), "hit"
        fres = _run_functional(record, program, **kw)
        if fres.trace is not None:
            tc.put(key, fres.trace, disk)
    return fres, "miss"


def _plan_sample(sample, seed, record, program, spec, knobs, n_ctas=None):
    """Sampled mode: the SMs and the stratified CTA sample (runner/sampling.py), from the same SM count and
    occupancy the timing pass uses."""
    from warpgraph.runner.sampling import make_sample
    from warpgraph.runner.timing import core_config, sm_occupancy

    smp = make_sample(sample, seed)
    cfg = core_config(spec, n_sms=knobs.get("n_sms"), policy=knobs.get("policy"))
    occ = sm_occupancy(spec, program, record, threads_per_cta=int(math.prod(record.block)),
                       registers=knobs.get("registers"), shared_bytes=knobs.get("shared_bytes"))
    cluster = int((getattr(record, "cluster", None) or (1, 1, 1))[0])
    l2 = getattr(spec, "l2", None)
    gpc_of = None
    shares = any(getattr(i.kind, "name", "") in ("CP_ASYNC", "TMA_LOAD") for i in program.instructions)
    if shares and getattr(l2, "coalesce_scope", None) == "gpc":
        # only cp.async / TMA reads share L2 lookups (components/memory.py): sample whole GPCs for them
        from warpgraph.components.structural import gpc_of_sms
        gpc_of = gpc_of_sms(spec.fabric, cfg.n_sms)
    n = int(math.prod(record.grid)) if n_ctas is None else int(n_ctas)
    return smp.plan(n, cfg.n_sms, occ.ctas_per_sm, cluster, gpc_of=gpc_of)


def _reads_clock(program) -> bool:
    for ins in program.instructions:
        if getattr(ins.kind, "name", "") == "CLOCK":
            return True
    return False


def _reads_special(program, name: str) -> bool:
    """Whether any instruction reads the special register ``name`` (``%smid``: a kernel that picks its data or its
    work by SM; ``%nsmid``: one that sizes its work by the SM count)."""
    for ins in program.instructions:
        for op in getattr(ins, "operands", ()) or ():
            if getattr(op, "space", None) == "special" and str(getattr(op, "name", "")).split(".")[0] == name:
                return True
    return False


#: rounds of the %smid placement fixed point (a kernel whose data depends on its SM): the functional pass runs
#: with the SMs the timing pass placed the CTAs on until the placement repeats
SMID_ROUNDS = 4


def simulate(record_or_path=None, arch="h200", *, mode: str = "timing", overrides=None, max_cycles: int | None = None,
             want_outputs: bool = False, check: bool = False, seed: int = 0, trace_path=None, sample=None,
             max_steps: int | None = None, bundle: bool | None = None, trace_window=None, trace_sms=None,
             record_events: bool = False, trace_max_events: int = 2_000_000, on_phase=None,
             max_wall_seconds: float | None = None, on_progress=None, jobs: int | None = None,
             trace_cache=None, waves: int | None = None, lazy: bool | None = None,
             stall_profile: bool = False) -> RunResult:
    """Simulate one launch record on an architecture (Contract 5).

    Tracing (timing / sampled modes): ``trace_path`` writes a Chrome/Perfetto trace-event JSON (``.json`` or
    ``.json.gz``; open it in https://ui.perfetto.dev) of SMs ``trace_sms`` (default: the first 4 SMs that run
    CTAs) over ``trace_window=(t0, t1)`` cycles (default: the whole run). ``record_events=True`` (implied by
    ``trace_path``) keeps the recorded events on the result (``RunResult.events``, ``RunResult.utilization()``).
    Tracing never changes the simulated cycles. ``on_phase(name)``, when given, is called as each phase starts
    ("loading", "functional pass", "timing pass", "writing trace"; the CLI's progress display);
    ``on_progress(ctas_done, n_ctas, cycle)`` as each CTA of the timing pass retires.

    ``jobs`` (timing mode): time the launch as its GPC partitions (runner/partitioned.py) in ``jobs``
    processes; statistics are bit-identical for every ``jobs`` >= 1. None: the single-engine timing.

    Budgets of the functional pass: ``max_steps`` / ``max_wall_seconds`` (None: the defaults of
    ``workloads.functional.run``; 0: no limit); past one, a ``SimulationError`` names the stuck warps.

    ``trace_cache`` (runner/trace_cache.py): the functional trace of a timing / sampled run is reused by later
    runs whose record and trace-relevant inputs are the same (a sweep over timing parameters pays the functional
    pass once). None / True: in memory and on disk (``traces/`` under ``$WARPGRAPH_CACHE_DIR``, default ``~/.cache/warpgraph/traces``);
    a folder: in memory and on disk there; ``"memory"``: this process only; False: off. Runs that want outputs
    (``want_outputs`` / ``check``) or set a functional budget always run the functional pass.
    ``metrics["trace_cache"]`` says ``hit``, ``miss`` or ``off``.

    ``stall_profile`` (timing / sampled modes, not with ``jobs``): keep where the warp-cycles went, per PTX
    instruction and stall reason, as ``RunResult.instruction_stalls`` (runner/stall_profile.py)."""
    from warpgraph.topologies import load_arch
    from warpgraph.workloads.record import LaunchRecord, load_record

    t0 = time.perf_counter()
    phase = on_phase or (lambda name: None)
    phase("loading")
    if mode not in ("timing", "functional", "sampled", "waves"):
        raise UserError(f"unknown mode {mode!r}", hint="timing, functional, sampled or waves")
    if stall_profile and (jobs is not None or mode == "functional"):
        raise UserError("a stall profile needs a single-process timing run", location="--stall-profile",
                        hint="mode timing or sampled, without jobs (--jobs)")
    if jobs is not None and mode != "timing":
        raise UserError(f"jobs={jobs} partitions a detailed timing run, not mode {mode!r}",
                        hint="mode='timing', or no jobs")
    if record_or_path is None:
        record_or_path = DEFAULT_RECORD
    record = record_or_path if isinstance(record_or_path, LaunchRecord) else load_record(record_or_path)
    arch_ov, knobs, sass_ov = split_overrides(overrides)
    spec = load_arch(arch, overrides=arch_ov)
    program = record.program()
    record.validate_against(program)   # params vs the PTX .param list, block vs .reqntid/.maxntid
    measured = getattr(record, "measured", None)
    compute = bool(want_outputs or check)
    chk = None

    if mode == "functional":
        phase("functional pass")
        fres = _run_functional(record, program, want_trace=False, compute_values=True, max_steps=max_steps,
                               max_wall_seconds=max_wall_seconds)
        outputs = fres.outputs
        if check:
            chk = _check(record, outputs)
        wall = time.perf_counter() - t0
        n = int(getattr(fres, "dynamic_warp_instructions", 0) or 0)
        metrics = {"ptx_warp_instructions": n, "wall_seconds": wall, "trace_cache": "off",
                   "warp_instructions_per_second": n / wall if wall > 0 else 0.0,
                   "roofline": _roofline({}, spec, record, program)}
        return RunResult(metrics, None, outputs if (want_outputs or check) else None, chk, record.name,
                         spec.name, mode, measured)

    from warpgraph.runner.timing import run_timing

    smp = None
    subset = None      # sampled mode: the CTAs executed functionally (None: all of them)
    wplan = None       # wave sampling (runner/waves.py): the first waves in detail, the rest extrapolated
    if mode == "sampled" and waves is not None:
        # sampled mode on the first waves only, the rest extrapolated (runner/waves.py ``finish_sampled``)
        from warpgraph.runner.waves import plan_waves

        wplan = plan_waves(waves, record, program, spec, knobs)
        if wplan.fallback:
            wplan = None
    if mode == "sampled":
        smp = _plan_sample(sample, seed, record, program, spec, knobs, n_ctas=wplan.m if wplan else None)
        if smp.fallback:
            smp_info = smp.fallback_info()
            smp = None
            if wplan is not None:    # the prefix is too small to sample: wave sampling alone
                subset = wplan.ctas()
        else:
            subset = smp.functional_subset(program)
            if wplan is not None and subset is None and smp.functional_reason:
                subset = wplan.ctas()   # every CTA of the prefix
            if (subset is not None or wplan is not None) and check:
                raise UserError(f"--check in sampled mode: only {len(subset)} of {smp.n_ctas} CTAs are executed "
                                f"functionally, so the outputs cannot be checked",
                                hint="--mode timing or functional with --check, or sample={'functional': 'all'}")
    if mode == "waves":
        from warpgraph.runner.waves import plan_waves

        wplan = plan_waves(waves, record, program, spec, knobs)
        if wplan.fallback:
            smp_info = wplan.fallback_info()
            wplan = None
        else:
            subset = wplan.ctas()
            if check:
                raise UserError(f"--check with wave sampling: only the first {wplan.m} of {wplan.n} CTAs are "
                                f"executed functionally, so the outputs cannot be checked",
                                hint="--mode timing or functional with --check")
    phase("functional pass")
    t_f = time.perf_counter()
    l2cap = getattr(spec.l2, "reuse_capacity_bytes", None) or spec.l2.size_bytes
    # one L1 per SM, shared by the CTAs that run there (CTA c on SM c % sm.count, as the first wave places them):
    # H200 ncu, microbench/results/h200_l2_counters_2026-12-04: rmsnorm's 8 KiB weight row, re-read by each of
    # 4,096 CTAs, reaches L2 once per SM (tex reads 33.8 MB = x alone)
    n_sm = int(knobs.get("n_sms") or spec.sm.count)
    occ = _occupancy(record, program, spec, knobs.get("registers"), knobs.get("shared_bytes"))
    caches = {"l2_capacity_bytes": l2cap, "l1_sms": int(spec.sm.count),
              "l1_capacity_bytes": _l1_bytes_per_sm(record, program, spec, occ=occ),
              "max_lanes": _batch_lanes(record, occ, n_sm)}
    if _reads_special(program, "%nsmid"):
        # %nsmid is the architecture's SM count (a persistent kernel sizing its grid stride by it); only such kernels'
        # functional passes (and trace-cache keys) get it
        caches["n_sm"] = n_sm
    amap = _address_map(spec)
    # %smid (a kernel choosing its data by SM): the first pass places CTA c on SM c % n_sm, as the first wave
    # does; after the timing pass, the functional pass re-runs with the SMs the CTAs ran on (below)
    smid_n = None
    smid_kw = {}
    if _reads_special(program, "%smid"):
        smid_n = n_sm
        smid_kw = {"sm_of_cta": (lambda c, _n=smid_n: c % _n)}
    lazy_info = None
    if lazy and mode == "timing":
        # flat memory (workloads/functional/lazy.py): batches run as their CTAs launch, dropped once read
        from warpgraph.workloads.functional.lazy import lazy_trace, lazy_unsupported

        why = ("outputs are wanted (--check / outputs)" if compute else
               "partitioned timing (jobs) reads the trace in several processes" if jobs is not None else
               "the kernel reads %smid: its trace follows the CTAs' placement" if smid_n is not None else
               lazy_unsupported(program))
        lazy_info = {"lazy": why is None, "eager_reason": why}
    if lazy_info is not None and lazy_info["lazy"]:
        from warpgraph.workloads.functional.run import FunctionalResult

        lt = lazy_trace(record, program, compute_values=False, max_steps=max_steps,
                        max_wall_seconds=max_wall_seconds, **caches,
                        address_map=amap)
        fres = FunctionalResult(None, lt, 0, ctas_executed=lt.n_ctas)
        trace_cache_state = "off"
    elif subset is not None:
        sub_caches = caches
        if smp is not None:   # the subset's CTAs share L1s as the sampled SMs will run them (runner/sampling.py)
            sub_caches = {**caches, "l1_sms": smp.subset_l1_caches(int(math.prod(record.grid)))}
        fres = _run_functional(record, program, want_trace=True, compute_values=compute, max_steps=max_steps,
                               max_wall_seconds=max_wall_seconds, **sub_caches, **smid_kw,
                               ctas=subset, address_map=amap)
        trace_cache_state = "off"
    else:
        fres, trace_cache_state = _functional_pass(
            record, program, trace_cache,
            {"mode": mode, "sample": _sample_key(sample, seed) if mode == "sampled" else None, "waves": waves,
             **({"smid_sms": smid_n} if smid_n is not None else {})},
            want_trace=True, compute_values=compute, max_steps=max_steps, max_wall_seconds=max_wall_seconds,
            **caches, **smid_kw, address_map=amap)
    if smp is not None and subset is not None:   # the unsampled CTAs' share of the DRAM first touches (runner/sampling.py)
        # (on the same device memory: the block's addresses and control flow are what it measures)
        smp.calibrate_first_touches(fres.trace, lambda ctas: _run_functional(
            record, program, want_trace=True, compute_values=False, max_steps=max_steps,
            max_wall_seconds=max_wall_seconds, **caches, ctas=ctas,
            memory=fres.memory).trace)
    functional_s = time.perf_counter() - t_f
    trace = fres.trace
    if wplan is not None:
        from warpgraph.runner.waves import truncate_trace

        trace = truncate_trace(trace, wplan.m, wplan.n)
        wplan.write_back_ratio = trace.write_back_ratio
        wplan.write_back_ratio_prefix = getattr(trace, "write_back_ratio_prefix", trace.write_back_ratio)
        on_progress = wplan.progress_hook(on_progress)
    if bundle is None:
        bundle = knobs.get("bundle", True)
    rec = _make_recorder(trace_path, trace_window, trace_sms, record_events, trace_max_events)
    phase("timing pass")
    if jobs is None and ("partition" in knobs or "partition_window" in knobs):
        raise UserError("timing.partition / timing.partition_window set without jobs: the single-engine timing "
                        "has no partitions", location="--set timing.partition", hint="add jobs (--jobs N)")

    def _time(trace):
        if jobs is not None:
            from warpgraph.runner.partitioned import run_timing_partitioned

            if smp is not None or rec is not None or knobs.get("units", "auto") != "auto":
                raise UserError("jobs for one launch (partitioned timing) runs detailed mode without event "
                                "recording", hint="drop --jobs, or the trace / sampled options")
            return run_timing_partitioned(
                trace, spec, record=record, jobs=jobs, max_cycles=max_cycles, policy=knobs.get("policy"),
                n_sms=knobs.get("n_sms"), registers=knobs.get("registers"), shared_bytes=knobs.get("shared_bytes"),
                sass_overrides=sass_ov or None, bundle=bundle, window=knobs.get("window"),
                partition_window=knobs.get("partition_window"), partition=knobs.get("partition"),
                on_progress=on_progress)
        return run_timing(trace, spec, record=record, max_cycles=max_cycles, units=knobs.get("units", "auto"),
                          policy=knobs.get("policy"), n_sms=knobs.get("n_sms"), registers=knobs.get("registers"),
                          shared_bytes=knobs.get("shared_bytes"), sass_overrides=sass_ov or None, bundle=bundle,
                          window=knobs.get("window"), sample=smp, recorder=rec, on_progress=on_progress,
                          stall_profile=stall_profile)

    out = _time(trace)
    smid_info = None
    if smid_n is not None and subset is None and wplan is None:
        # placement fixed point: re-run the functional pass with each CTA's %smid the SM the timing pass put it on
        rounds = 0
        first = {c: c % smid_n for c in range(int(math.prod(record.grid)))}
        used = first
        while rounds < SMID_ROUNDS:
            placed = dict(getattr(out.core, "placed", {}) or {})
            if not placed or all(placed.get(c, used[c]) == used[c] for c in used):
                break
            used = {c: placed.get(c, used[c]) for c in used}
            rounds += 1
            fres = _run_functional(record, program, want_trace=True, compute_values=compute, max_steps=max_steps,
                                   max_wall_seconds=max_wall_seconds, **caches,
                                   sm_of_cta=(lambda c, _u=used: _u.get(c, 0)), address_map=amap)
            trace = fres.trace
            out = _time(trace)
        smid_info = {"rounds": rounds, "moved_ctas": sum(1 for c in used if used[c] != first[c])}
    if wplan is not None and smp is not None:
        wplan.finish_sampled(out, smp)
    elif wplan is not None:
        wplan.finish(out)    # extrapolate the prefix to the whole grid (runner/waves.py)
    outputs = fres.outputs if compute else None
    if subset is not None:
        outputs = None     # only the sampled CTAs ran: metrics['sampling']['outputs'] says so
    oracle_info = None
    if compute and subset is None and _reads_clock(program) and out.clock_issue:
        # Clock oracle (design.md, execution model 4). A kernel whose control flow reads the clock (a spin
        # `while (clock() - t < N)`) takes a different path under the oracle than in the first functional pass
        # (whose clock is a slow counter, so spin loops overshoot): re-time the oracle run's trace until its
        # dynamic instruction count is a fixed point (spin loops converge in 2-3 rounds).
        counts = [int(getattr(fres, "dynamic_warp_instructions", 0) or 0)]    # per round
        converged = False
        for _round in range(6):
            oracle = _clock_oracle(out.clock_issue)
            placed = dict(getattr(out.core, "placed", {}) or {})
            fres2 = _run_functional(record, program, want_trace=True, compute_values=True, clock_oracle=oracle,
                                    max_steps=max_steps, max_wall_seconds=max_wall_seconds, sm_of_cta=(lambda c, _p=placed: _p.get(c, 0)),
                                    **caches, address_map=amap)
            n2 = int(getattr(fres2, "dynamic_warp_instructions", 0) or 0)
            converged = n2 == counts[-1] or fres2.trace is None
            counts.append(n2)
            if converged:
                break
            trace = fres2.trace
            out = _time(trace)
        outputs = fres2.outputs
        oracle_info = {"rounds": len(counts) - 1, "converged": converged, "dynamic_warp_instructions": counts}
        if not converged:
            import warnings

            warnings.warn(f"{getattr(record, 'name', record)}: the clock oracle found no fixed point in "
                          f"{len(counts) - 1} rounds (dynamic warp-instructions per round: {counts}); the outputs "
                          f"and the cycles are the last round's. The kernel's control flow depends on %clock "
                          f"values the timing pass does not settle (e.g. nested clock spin loops).", stacklevel=2)
    if check:
        chk = _check(record, outputs)
    wall = time.perf_counter() - t0
    m = out.metrics
    m["wall_seconds"] = wall
    if oracle_info is not None:
        m["clock_oracle"] = oracle_info
    if smid_info is not None:
        m["smid_placement"] = smid_info
    m["functional_wall_seconds"] = functional_s
    m["trace_cache"] = trace_cache_state
    m["timing_share_pct"] = round(100.0 * m["timing_wall_seconds"] / wall, 1) if wall > 0 else 0.0
    m["simulated_cycles_per_second"] = m["cycles"] / wall if wall > 0 else 0.0
    m["warp_instructions_per_second"] = m["warp_instructions"] / wall if wall > 0 else 0.0
    m["timing_warp_instructions_per_second"] = (m["warp_instructions"] / m["timing_wall_seconds"]
                                                if m["timing_wall_seconds"] > 0 else 0.0)
    m.setdefault("roofline", _roofline(m, spec, record, program, trace))
    if mode in ("sampled", "waves") and smp is None and wplan is None:
        m["sampling"] = smp_info      # fell back to a detailed run (runner/sampling.py says when)
    m.setdefault("sampling", {"mode": "detailed", "sms": None, "seed": None, "fraction": 1.0})
    if lazy_info is not None:
        if lazy_info["lazy"]:
            lt = fres.trace
            lazy_info.update(prepass_seconds=round(lt.prepass_seconds, 3), batches_run=lt.batches_run,
                             peak_batches_alive=lt.peak_batches_alive,
                             lazy_functional_seconds=round(lt.functional_seconds, 3))
        m["functional_trace"] = lazy_info
    events = None
    if rec is not None:
        rec.meta["record"] = record.name
        rec.meta["arch"] = spec.name
        smp_m = m.get("sampling") or {}
        if smp_m.get("mode") == "sampled" and smp_m.get("sms"):
            # HBM / L2 traffic of the sampled SMs stands for the whole GPU's (analysis/utilization.py)
            rec.meta["gpu_traffic_scale"] = out.core.cfg.n_sms / len(smp_m["sms"])
        events = rec.events()
        if trace_path is not None:
            from warpgraph.analysis.perfetto import write_chrome_trace

            phase("writing trace")
            m["trace"] = write_chrome_trace(events, trace_path, clock_mhz=float(spec.clocks.sm_mhz))
            m["trace"]["sms"] = sorted(events.sms) if events.sms is not None else None
            m["trace"]["window"] = list(events.window) if events.window is not None else None
    stats = out.stats
    g = stats.group("run")
    g.set("wall_seconds", wall)
    g.set("functional_wall_seconds", functional_s)
    return RunResult(m, stats.to_frame(annotated=True), outputs if want_outputs or check else None, chk, record.name, spec.name,
                     mode, measured, events=events, spec=spec,
                     instruction_stalls=getattr(out, "stall_profile", None))


def parse_trace_window(text) -> tuple[int, int] | None:
    """``"0:20000"`` (cycles) -> ``(0, 20000)``; None/"" -> None."""
    if text is None or text == "":
        return None
    if isinstance(text, (tuple, list)):
        a, b = text
    else:
        if ":" not in str(text):
            raise UserError(f"trace window {text!r} is not START:END", hint="cycles, e.g. --trace-window 0:20000")
        a, b = str(text).split(":", 1)
    try:
        w = (int(a) if str(a).strip() else 0, int(b))
    except ValueError:
        raise UserError(f"trace window {text!r} is not START:END", hint="cycles, e.g. 0:20000") from None
    if w[1] <= w[0]:
        raise UserError(f"trace window {text!r}: END must be after START", hint="e.g. 0:20000")
    return w


def parse_trace_sms(text):
    """``"0,1"`` -> ``[0, 1]``; ``"all"`` -> ``"all"``; None -> None (default set)."""
    if text is None or text == "":
        return None
    if isinstance(text, str):
        if text.strip().lower() == "all":
            return "all"
        try:
            return [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"trace SMs {text!r} are not a comma-separated list", hint="e.g. 0,1,2 or all") from None
    return [int(x) for x in text]


def _make_recorder(trace_path, trace_window, trace_sms, record_events, max_events):
    if trace_path is None and not record_events:
        return None
    from warpgraph.core.tracing import TraceRecorder

    sms = parse_trace_sms(trace_sms)
    rec = TraceRecorder(window=parse_trace_window(trace_window), sms=None if sms in (None, "all") else sms,
                        max_events=max_events)
    rec.auto_sms = sms is None  # run_timing picks the first 4 SMs that run CTAs
    return rec


def _clock_oracle(clock_issue: dict):
    """(warp, ordinal) -> the timing pass's clock value; an ordinal the timed trace did not have (the oracle run
    left a clock-dependent loop at another iteration) continues the warp's last known clock one cycle per read."""
    last: dict[int, tuple[int, int]] = {}
    for (g, k), v in clock_issue.items():
        lk = last.get(g)
        if lk is None or k > lk[0]:
            last[g] = (k, v)

    def oracle(g, ordinal, _ci=clock_issue, _last=last):
        v = _ci.get((g, ordinal))
        if v is not None:
            return v
        k, v = _last.get(g, (0, 0))
        return v + max(ordinal - k, 1)

    return oracle


def _check(record, outputs):
    from warpgraph.workloads.references import check as ref_check

    return ref_check(record, outputs)


def _roofline(m: dict, spec, record=None, program=None, trace=None) -> dict:
    """analysis.roofline of the launch (useful FLOPs of the reference when known, else the executed tensor
    FLOPs of the trace; minimum DRAM bytes) with ``sim_over_bound`` = simulated / bound cycles, plus the
    achieved-DRAM-traffic fields. ``spec`` is the typed ArchSpec (its sections carry the one default of each
    parameter: topologies/schema.py)."""
    out: dict = {}
    if record is not None:
        try:
            from warpgraph.analysis.roofline import reference_flops, roofline

            use_trace = trace if reference_flops(record) is None else None
            out = roofline(record, program, spec, trace=use_trace)
        except Exception as e:  # the bound must never break a run's result
            out = {"bound_cycles": None, "bound_by": None, "error": f"{type(e).__name__}: {e}"}
        b = out.get("bound_cycles")
        cyc0 = m.get("cycles")
        out["sim_over_bound"] = (float(cyc0) / b) if b and cyc0 else None

    n_sms = int(spec.sm.count)
    mhz = float(spec.clocks.sm_mhz)
    bw = float(spec.hbm.bandwidth_gb_per_s) * 1e9
    dram = m.get("dram_read_bytes", 0) + m.get("dram_write_bytes", 0)
    mem_cycles = dram / bw * mhz * 1e6 if bw else 0.0
    cyc = m.get("cycles", 0) or 1
    out.update({"dram_bound_cycles": round(mem_cycles, 1), "dram_bandwidth_pct": round(100.0 * mem_cycles / cyc, 2),
                "tensor_utilization_pct": m.get("tensor_utilization_pct", 0.0), "n_sms": n_sms})
    return out
