"""Validation of simulated launches against hardware measurements (the paper's Fig. 10/11 and Table VII).

    rows = validate_records(discover_records(dir), arch="h200")     # one dict per launch (ROW_COLUMNS)
    summary = summarize(rows)                                        # MAPE, bias, max |err|, r, within 10/20 %,
                                                                     # FA sm_80-vs-sm_90a speedups, DRAM checks
    write_outputs(rows, summary, outdir)                             # validation.csv, summary.json, scatter.png

Works on any folder of ``launch-record/1`` directories (a folder holding ``launch.json``, found recursively).
Records without ``measured.json`` get no error columns; records that fail to simulate get ``status="error"``
and the message in ``error`` (the others still run). Uses only the public API (``warpgraph.simulate``,
``warpgraph.load_record``, ``warpgraph.load_arch``) plus :func:`warpgraph.analysis.roofline.roofline`.
``simulate_fn`` / ``roofline_fn`` are injectable (tests; they must be picklable for ``jobs > 1``).
"""
from __future__ import annotations

import csv
import fnmatch
import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["default_records_dir", "discover_records", "validate_one", "validate_records", "summarize",
           "cycle_error_stats", "pair_speedups", "dram_checks", "write_csv", "write_summary", "plot_scatter", "write_outputs",
           "ROW_COLUMNS", "PAIR_PREFIXES", "top_stalls", "family_of", "stall_agreement", "family_summary"]

#: columns of ``validation.csv`` (row dict keys), in order
ROW_COLUMNS = (
    "name", "path", "status", "error",
    "hw_cycles", "sim_cycles", "error_pct", "sim_cycles_error_estimate_pct",
    "sim_warp_instructions", "hw_sass_warp_instructions", "sass_ratio",
    "sim_dram_bytes", "hw_dram_bytes", "dram_ratio",
    "sim_l2_bytes", "hw_l2_bytes", "l2_ratio",
    "sim_l2_tex_bytes", "hw_l2_tex_bytes", "l2_tex_ratio",
    "sim_l2_fabric_bytes", "hw_l2_fabric_bytes", "l2_fabric_ratio",
    "sim_occupancy_pct", "hw_occupancy_pct",
    "sim_top_stalls", "hw_top_stalls",
    "bound_cycles", "bound_by", "hw_over_bound", "sim_over_bound",
    "wall_seconds", "family", "stall_top3_agreement",
    "sim_wait_per_issue", "hw_wait_per_issue", "sim_control_stalls_per_issue",
)

#: (prefix of the sm_80 variant, prefix of the sm_90a variant, label) — ``attn80_X`` pairs with ``attn_X``
PAIR_PREFIXES = (("attn80_", "attn_", "flash_attention_sm80_vs_sm90a"),
                 ("gemm80_", "gemm_tma_", "gemm_sm80_vs_sm90a_tma"))

_IGNORED_STALLS = {"selected"}  # "selected" is the issue itself (always 1.0 per issue), not a stall


# ---------------------------------------------------------------------------------------------- discovery
def default_records_dir(arch: str = "h200") -> Path:
    """The bundled ``workloads/records/<arch>`` folder (located through the installed package)."""
    import warpgraph.workloads as wl

    return Path(wl.__file__).resolve().parent / "records" / arch


def discover_records(root: str | Path, pattern: str | None = None) -> list[Path]:
    """Every launch-record directory (holding ``launch.json``) under ``root`` (recursive, or ``root`` itself),
    sorted by relative path. ``pattern``: a glob matched against the folder name or the relative path."""
    root = Path(root)
    if root.is_file() and root.name == "launch.json":
        root = root.parent
    if (root / "launch.json").is_file():
        found = [root]
    else:
        found = sorted({p.parent for p in root.rglob("launch.json") if p.is_file()},
                       key=lambda d: d.relative_to(root).as_posix())
    if pattern:
        def ok(d: Path) -> bool:
            rel = d.relative_to(root).as_posix() if d != root else d.name
            return fnmatch.fnmatch(d.name, pattern) or fnmatch.fnmatch(rel, pattern)

        found = [d for d in found if ok(d)]
    return found


# ---------------------------------------------------------------------------------------------- helpers
def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _ratio(a, b) -> float | None:
    a, b = _num(a), _num(b)
    if a is None or b is None or b == 0:
        return None
    return a / b


def _read_json(path: Path) -> dict | None:
    try:
        with open(path) as f:
            d = json.load(f)
        return d if isinstance(d, dict) else None
    except (OSError, ValueError):
        return None


def _record_name(d: Path) -> str:
    lj = _read_json(d / "launch.json") or {}
    n = lj.get("name")
    return n if isinstance(n, str) and n else d.name


def top_stalls(ratios: dict | None, k: int = 3) -> list[tuple[str, float]]:
    """The ``k`` largest stall reasons (Nsight names) of a ``stall_ratios_per_issue`` dict ("selected" skipped)."""
    if not isinstance(ratios, dict):
        return []
    items = [(str(n), _num(v)) for n, v in ratios.items() if n not in _IGNORED_STALLS]
    items = [(n, v) for n, v in items if v is not None and v > 0]
    return sorted(items, key=lambda t: (-t[1], t[0]))[:k]


def family_of(name: str, path: str | None = None) -> str:
    """The kernel family of a launch: its name up to the first ``_``-separated token with a digit (the shape
    part: ``gemm_tma_M2048_N2048_K2048`` -> ``gemm_tma``, ``attn80_B4_...`` -> ``attn80``, ``axpby_f32_n777``
    -> ``axpby``), prefixed by the record's sub-folder when it sits in one (``gallery/softmax``)."""
    toks = str(name).split("_")
    keep = [toks[0]]
    for t in toks[1:]:
        if any(ch.isdigit() for ch in t):
            break
        keep.append(t)
    fam = "_".join(keep)
    parts = Path(str(path)).parts if path else ()
    return f"{parts[0]}/{fam}" if len(parts) > 1 else fam


def stall_agreement(sim: dict | None, hw: dict | None, k: int = 3) -> int | None:
    """How many of the measured top-``k`` stall reasons are also in the simulated top-``k`` (None without a
    measurement with at least one stall)."""
    h = {n for n, _ in top_stalls(hw, k)}
    if not h:
        return None
    return len(h & {n for n, _ in top_stalls(sim, k)})


def _stall_text(mine: dict | None, other: dict | None, other_label: str) -> str:
    """``"wait 0.89 (sim 0.75); barrier 0.52 (sim 0.10)"`` — top 3 of ``mine`` with ``other``'s value beside."""
    parts = []
    for n, v in top_stalls(mine):
        o = _num((other or {}).get(n)) if isinstance(other, dict) else None
        parts.append(f"{n} {v:.2f}" + (f" ({other_label} {o:.2f})" if o is not None else ""))
    return "; ".join(parts)


_SPEC_CACHE: dict = {}


def _spec(arch, overrides):
    key = (str(arch), tuple(overrides) if isinstance(overrides, (list, tuple)) else
           tuple(sorted((overrides or {}).items())) if isinstance(overrides, dict) else None)
    if key not in _SPEC_CACHE:
        from warpgraph import load_arch

        try:
            _SPEC_CACHE[key] = load_arch(arch, overrides=_arch_overrides(overrides))
        except Exception:
            _SPEC_CACHE[key] = load_arch(arch)
    return _SPEC_CACHE[key]


def _arch_overrides(overrides):
    """Drop runner knobs (``timing.*``, ``sass.*``) that are not architecture parameters."""
    if not overrides:
        return None
    skip = ("timing.", "sass.")
    if isinstance(overrides, dict):
        d = {k: v for k, v in overrides.items() if not str(k).startswith(skip)}
        return d or None
    lst = [s for s in overrides if not str(s).startswith(skip)]
    return lst or None


def _with_measured_clock(overrides, meas, enabled: bool):
    """Add ``clocks.sm_mhz`` = the measured SM clock unless disabled, unknown, or set by the user."""
    clk = _num((meas or {}).get("sm_clock_hz")) if enabled else None
    if not clk:
        return overrides
    key = "clocks.sm_mhz"
    if isinstance(overrides, dict):
        if key in overrides:
            return overrides
        return {**overrides, key: round(clk / 1e6, 3)}
    lst = list(overrides or [])
    if any(str(o).split("=", 1)[0].strip() == key for o in lst):
        return lst
    return lst + [f"{key}={round(clk / 1e6, 3)}"]


def _default_roofline(record_dir: Path, arch, overrides, clock_mhz):
    from warpgraph import load_record
    from warpgraph.analysis.roofline import roofline

    rec = load_record(record_dir)
    return roofline(rec, None, _spec(arch, overrides), clock_mhz=clock_mhz)


# ---------------------------------------------------------------------------------------------- one launch
def validate_one(record_dir: str | Path, arch: str = "h200", *, mode: str = "timing", overrides=None,
                 simulate_fn: Callable | None = None, roofline_fn: Callable | None = None,
                 root: str | Path | None = None, with_roofline: bool = True,
                 measured_clock: bool = True) -> dict[str, Any]:
    """Simulate one record and compare with its ``measured.json``. With ``measured_clock`` (default) the launch
    is simulated at the SM clock the hardware ran at (``sm_clock_hz``; the calibration launches ran with
    unlocked clocks between 1467 and 1954 MHz), because DRAM bandwidth in bytes per SM cycle depends on it —
    an experimental condition, not a fitted parameter. Never raises for a failing simulation:
    the row gets ``status="error"`` and ``error``. ``roofline_fn(record_dir, arch, overrides, clock_mhz)``."""
    d = Path(record_dir)
    row: dict[str, Any] = {c: None for c in ROW_COLUMNS}
    row["name"] = _record_name(d)
    try:
        row["path"] = d.relative_to(Path(root)).as_posix() if root is not None and d != Path(root) else d.name
    except ValueError:
        row["path"] = str(d)
    row["family"] = family_of(row["name"], row["path"] if not Path(row["path"]).is_absolute() else None)
    meas = _read_json(d / "measured.json")
    row["hw_cycles"] = _num((meas or {}).get("cycles"))
    row["hw_sass_warp_instructions"] = _num((meas or {}).get("sass_warp_instructions"))
    if meas is not None:
        r, w = _num(meas.get("dram_read_bytes")), _num(meas.get("dram_write_bytes"))
        row["hw_dram_bytes"] = (r or 0.0) + (w or 0.0) if (r is not None or w is not None) else None
        row["hw_l2_bytes"] = _num(meas.get("l2_bytes"))
        row["hw_l2_tex_bytes"] = _num(meas.get("l2_tex_bytes"))
        row["hw_l2_fabric_bytes"] = _num(meas.get("l2_fabric_bytes"))
        row["hw_occupancy_pct"] = _num(meas.get("achieved_occupancy_pct"))

    if simulate_fn is None:
        from warpgraph import simulate as simulate_fn
    t0 = time.perf_counter()
    metrics: dict = {}
    try:
        res = simulate_fn(d, arch, mode=mode, overrides=_with_measured_clock(overrides, meas, measured_clock) or None)
        metrics = dict(getattr(res, "metrics", None) or {})
        row["status"] = "ok"
        if _num(metrics.get("cycles")) is None:
            raise ValueError("simulation returned no cycle count")
    except Exception as e:  # noqa: BLE001 -- any failure of one record is reported in its row
        row["status"] = "error"
        msg = e.format() if hasattr(e, "format") and callable(e.format) else str(e)
        row["error"] = f"{type(e).__name__}: {msg}".strip().replace("\n", " | ")[:2000]
    row["wall_seconds"] = _num(metrics.get("wall_seconds")) or (time.perf_counter() - t0)

    if row["status"] == "ok":
        row["sim_cycles"] = _num(metrics.get("cycles"))
        smp = metrics.get("sampling") or {}
        if smp.get("mode") == "sampled":   # sampled mode's 1-sigma estimate of its own cycle error (runner/sampling.py)
            row["sim_cycles_error_estimate_pct"] = _num(smp.get("cycles_error_pct"))
        row["sim_warp_instructions"] = _num(metrics.get("warp_instructions"))
        r, w = _num(metrics.get("dram_read_bytes")), _num(metrics.get("dram_write_bytes"))
        row["sim_dram_bytes"] = (r or 0.0) + (w or 0.0) if (r is not None or w is not None) else None
        # lts__t_bytes counts the SMs' requests (srcunit_tex) and the other partition's (srcunit_ltcfabric): the
        # simulated l2_bytes are the first, l2_tag_bytes both (runner/timing.py fabric_metrics)
        row["sim_l2_tex_bytes"] = _num(metrics.get("l2_bytes"))
        row["sim_l2_fabric_bytes"] = _num(metrics.get("l2_fabric_bytes"))
        tag = _num(metrics.get("l2_tag_bytes"))
        row["sim_l2_bytes"] = tag if tag is not None else row["sim_l2_tex_bytes"]
        row["sim_occupancy_pct"] = _num(metrics.get("achieved_occupancy_pct"))
        hw_c = row["hw_cycles"]
        if hw_c:
            row["error_pct"] = (row["sim_cycles"] - hw_c) / hw_c * 100.0
        row["sass_ratio"] = _ratio(row["sim_warp_instructions"], row["hw_sass_warp_instructions"])
        row["dram_ratio"] = _ratio(row["sim_dram_bytes"], row["hw_dram_bytes"])
        row["l2_ratio"] = _ratio(row["sim_l2_bytes"], row["hw_l2_bytes"])
        row["l2_tex_ratio"] = _ratio(row["sim_l2_tex_bytes"], row["hw_l2_tex_bytes"])
        row["l2_fabric_ratio"] = _ratio(row["sim_l2_fabric_bytes"], row["hw_l2_fabric_bytes"])
        s_sim = metrics.get("stall_ratios_per_issue")
        s_hw = (meas or {}).get("stall_ratios_per_issue")
        row["sim_top_stalls"] = _stall_text(s_sim, s_hw, "hw") or None
        row["hw_top_stalls"] = _stall_text(s_hw, s_sim, "sim") or None
        row["stall_top3_agreement"] = stall_agreement(s_sim, s_hw)
        # ncu's `wait` (fixed-latency dependences: the SASS stall counts) and, with sass.control_stalls, the
        # stall-count cycles the issued SASS carry (dynamic-weighted mean of stall - 1 per issue)
        row["sim_wait_per_issue"] = _num((s_sim or {}).get("wait"))
        row["hw_wait_per_issue"] = _num((s_hw or {}).get("wait"))
        row["sim_control_stalls_per_issue"] = _num((metrics.get("control_stalls") or {}).get("scheduled_per_issue"))
    elif meas is not None:
        row["hw_top_stalls"] = _stall_text(meas.get("stall_ratios_per_issue"), None, "") or None

    if with_roofline:
        rf = None
        clk = _num((meas or {}).get("sm_clock_hz"))
        try:
            fn = roofline_fn or _default_roofline
            rf = fn(d, arch, overrides, clk / 1e6 if clk else None)
        except Exception:  # noqa: BLE001 -- roofline is optional information
            rf = None
        if not (isinstance(rf, dict) and _num(rf.get("bound_cycles"))):
            rf = metrics.get("roofline") if isinstance(metrics.get("roofline"), dict) else None
        if rf and _num(rf.get("bound_cycles")):
            row["bound_cycles"] = _num(rf.get("bound_cycles"))
            row["bound_by"] = rf.get("bound_by")
            row["hw_over_bound"] = _ratio(row["hw_cycles"], row["bound_cycles"])
            row["sim_over_bound"] = _ratio(row["sim_cycles"], row["bound_cycles"])
    return row


def _worker(args):
    d, kw = args
    return validate_one(d, **kw)


def validate_records(dirs: Sequence[str | Path], arch: str = "h200", *, mode: str = "timing", overrides=None,
                     jobs: int = 1, simulate_fn: Callable | None = None, roofline_fn: Callable | None = None,
                     root: str | Path | None = None, progress: Callable[[dict], None] | None = None,
                     measured_clock: bool = True) -> list[dict]:
    """:func:`validate_one` for every record; ``jobs > 1`` uses that many processes. Rows keep the input order."""
    kw = dict(arch=arch, mode=mode, overrides=overrides, simulate_fn=simulate_fn, roofline_fn=roofline_fn,
              root=root, measured_clock=measured_clock)
    dirs = [Path(d) for d in dirs]
    rows: list[dict] = []
    if jobs <= 1 or len(dirs) <= 1:
        for d in dirs:
            row = validate_one(d, **kw)
            rows.append(row)
            if progress:
                progress(row)
        return rows
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = mp.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        ctx = None
    with ProcessPoolExecutor(max_workers=min(jobs, len(dirs)), mp_context=ctx) as ex:
        futs = [ex.submit(_worker, (d, kw)) for d in dirs]
        for d, f in zip(dirs, futs):
            try:
                row = f.result()
            except Exception as e:  # noqa: BLE001 -- a worker died (e.g. out of memory)
                row = {c: None for c in ROW_COLUMNS}
                row.update(name=_record_name(d), path=d.name, status="error",
                           error=f"worker failed: {type(e).__name__}: {e}")
                m = _read_json(d / "measured.json") or {}
                row["hw_cycles"] = _num(m.get("cycles"))
            rows.append(row)
            if progress:
                progress(row)
    return rows


# ---------------------------------------------------------------------------------------------- statistics
def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(sxx * syy)


def cycle_error_stats(pairs: Iterable[tuple[float, float]]) -> dict[str, Any]:
    """Statistics of (simulated, measured) cycle pairs: ``n, mape_pct, bias_pct`` (mean signed error),
    ``max_abs_error_pct, pearson_r, pearson_r_log, within_10_pct, within_20_pct`` (fractions 0..1)."""
    pairs = [(float(s), float(h)) for s, h in pairs if _num(s) is not None and _num(h)]
    n = len(pairs)
    if n == 0:
        return {"n": 0, "mape_pct": None, "bias_pct": None, "max_abs_error_pct": None, "pearson_r": None,
                "pearson_r_log": None, "within_10_pct": None, "within_20_pct": None}
    errs = [(s - h) / h * 100.0 for s, h in pairs]
    abs_e = [abs(e) for e in errs]
    sim = [s for s, _ in pairs]
    hw = [h for _, h in pairs]
    logp = [(math.log(s), math.log(h)) for s, h in pairs if s > 0 and h > 0]
    return {
        "n": n,
        "mape_pct": sum(abs_e) / n,
        "bias_pct": sum(errs) / n,
        "max_abs_error_pct": max(abs_e),
        "pearson_r": _pearson(sim, hw),
        "pearson_r_log": _pearson([a for a, _ in logp], [b for _, b in logp]) if len(logp) == n else None,
        "within_10_pct": sum(e <= 10.0 + 1e-12 for e in abs_e) / n,
        "within_20_pct": sum(e <= 20.0 + 1e-12 for e in abs_e) / n,
    }


def pair_speedups(rows: Sequence[dict], prefixes=PAIR_PREFIXES) -> list[dict]:
    """For every ``<old>X`` / ``<new>X`` pair of rows (e.g. ``attn80_X`` / ``attn_X``): speedup of the new
    kernel over the old one on hardware (hw cycles old / new) and simulated, and the error of the simulated
    speedup in percent. Entries with a missing side have ``None`` values."""
    by_name = {r.get("name"): r for r in rows}
    out = []
    for old_p, new_p, label in prefixes:
        for name in sorted(n for n in by_name if isinstance(n, str) and n.startswith(old_p)):
            suffix = name[len(old_p):]
            new = by_name.get(new_p + suffix)
            if new is None:
                continue
            old = by_name[name]
            hw = _ratio(old.get("hw_cycles"), new.get("hw_cycles"))
            sim = (_ratio(old.get("sim_cycles"), new.get("sim_cycles"))
                   if old.get("status") == "ok" and new.get("status") == "ok" else None)
            err = (sim - hw) / hw * 100.0 if (sim is not None and hw) else None
            out.append({"check": label, "old": name, "new": new_p + suffix, "hw_speedup": hw,
                        "sim_speedup": sim, "error_pct": err})
    return out


def dram_checks(rows: Sequence[dict], tol_pct: float = 10.0) -> list[dict]:
    """DRAM bytes (read + write) of measured memory-bound launches (``bound_by == "memory"``): sim vs hw
    within ``tol_pct``; ``within_tol`` is None when the simulation failed."""
    out = []
    for r in rows:
        if r.get("bound_by") != "memory" or r.get("hw_dram_bytes") is None:
            continue
        ratio = r.get("dram_ratio") if r.get("status") == "ok" else None
        err = (ratio - 1.0) * 100.0 if ratio is not None else None
        out.append({"name": r.get("name"), "sim_dram_bytes": r.get("sim_dram_bytes"),
                    "hw_dram_bytes": r.get("hw_dram_bytes"), "error_pct": err,
                    "within_tol": (abs(err) <= tol_pct) if err is not None else None})
    return out


def _count_within(ratios, tol: float) -> str | None:
    """``"k/n"``: how many of the known ratios lie within ``tol`` of 1."""
    known = [x for x in ratios if x is not None]
    if not known:
        return None
    return f"{sum(1 for x in known if abs(x - 1.0) <= tol)}/{len(known)}"


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def family_summary(rows: Sequence[dict]) -> list[dict]:
    """Per kernel family (:func:`family_of`, or the row's ``family``): launches, MAPE, bias, the worst launch,
    mean SASS-instruction ratio and mean stall top-3 agreement, sorted by family."""
    fams: dict[str, list[dict]] = {}
    for r in rows:
        fam = r.get("family") or family_of(str(r.get("name")), r.get("path"))
        fams.setdefault(fam, []).append(r)
    out = []
    for fam in sorted(fams):
        rs = fams[fam]
        ok = [r for r in rs if r.get("status") == "ok" and r.get("error_pct") is not None]
        errs = [r["error_pct"] for r in ok]
        worst = max(ok, key=lambda r: abs(r["error_pct"]), default=None)
        out.append({"family": fam, "n": len(rs), "n_compared": len(ok),
                    "mape_pct": _mean([abs(e) for e in errs]), "bias_pct": _mean(errs),
                    "worst_error_pct": worst["error_pct"] if worst else None,
                    "worst_record": worst["name"] if worst else None,
                    "mean_sass_ratio": _mean([r.get("sass_ratio") for r in ok]),
                    "mean_stall_top3_agreement": _mean([r.get("stall_top3_agreement") for r in ok])})
    return out


def summarize(rows: Sequence[dict], *, arch: str | None = None, mode: str | None = None) -> dict[str, Any]:
    """Overall statistics of validation rows (see module docstring); JSON-ready."""
    ok = [r for r in rows if r.get("status") == "ok"]
    failed = [r for r in rows if r.get("status") != "ok"]
    cyc = cycle_error_stats((r["sim_cycles"], r["hw_cycles"]) for r in ok
                            if r.get("hw_cycles") and r.get("sim_cycles") is not None)
    worst = max((r for r in ok if r.get("error_pct") is not None), key=lambda r: abs(r["error_pct"]), default=None)
    cyc["max_abs_error_record"] = worst["name"] if worst else None
    pairs = pair_speedups(rows)
    dram = dram_checks(rows)
    dram_known = [c for c in dram if c["within_tol"] is not None]
    return {
        "arch": arch,
        "mode": mode,
        "n_records": len(rows),
        "n_ok": len(ok),
        "n_failed": len(failed),
        "n_measured": sum(1 for r in rows if r.get("hw_cycles")),
        "cycles": cyc,
        "mean_sass_ratio": _mean([r.get("sass_ratio") for r in ok]),
        "mean_dram_ratio": _mean([r.get("dram_ratio") for r in ok]),
        "mean_l2_ratio": _mean([r.get("l2_ratio") for r in ok]),
        "mean_l2_tex_ratio": _mean([r.get("l2_tex_ratio") for r in ok]),
        "mean_l2_fabric_ratio": _mean([r.get("l2_fabric_ratio") for r in ok]),
        "l2_within_15pct": _count_within([r.get("l2_ratio") for r in ok], 0.15),
        "mean_abs_occupancy_diff_pct": _mean([abs(r["sim_occupancy_pct"] - r["hw_occupancy_pct"]) for r in ok
                                              if r.get("sim_occupancy_pct") is not None
                                              and r.get("hw_occupancy_pct") is not None]),
        "families": family_summary(rows),
        "speedup_pairs": pairs,
        "dram_memory_bound": {"tolerance_pct": 10.0, "checks": dram,
                              "fraction_within": (sum(c["within_tol"] for c in dram_known) / len(dram_known))
                              if dram_known else None},
        "total_wall_seconds": sum(r.get("wall_seconds") or 0.0 for r in rows),
        "failed": [{"name": r.get("name"), "path": r.get("path"), "error": r.get("error")} for r in failed],
    }


# ---------------------------------------------------------------------------------------------- outputs
def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(float(v))      # full precision: the shortest text that reads back as the same float
    return v


def write_csv(rows: Sequence[dict], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(ROW_COLUMNS)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in ROW_COLUMNS])
    return path


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_summary(summary: dict, path: str | Path, rows: Sequence[dict] | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    d = dict(summary)
    if rows is not None:
        d["rows"] = list(rows)
    path.write_text(json.dumps(_jsonable(d), indent=1) + "\n")
    return path


def plot_scatter(rows: Sequence[dict], path: str | Path, *, title: str | None = None) -> Path:
    """Simulated vs hardware cycles, log-log, y = x with ±10 % and ±20 % bands, points labelled (Fig. 11)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pts = [(r["hw_cycles"], r["sim_cycles"], r.get("name") or "") for r in rows
           if r.get("status") == "ok" and r.get("hw_cycles") and r.get("sim_cycles") and r["sim_cycles"] > 0]
    fig, ax = plt.subplots(figsize=(7, 6.5), dpi=120)
    if pts:
        lo = min(min(h, s) for h, s, _ in pts) / 1.6
        hi = max(max(h, s) for h, s, _ in pts) * 1.6
    else:
        lo, hi = 1e3, 1e7
        ax.text(0.5, 0.5, "no simulated launch with measurements", transform=ax.transAxes, ha="center")
    import numpy as np

    xs = np.geomspace(lo, hi, 64)
    ax.fill_between(xs, xs * 0.8, xs * 1.2, color="tab:blue", alpha=0.08, label="±20 %")
    ax.fill_between(xs, xs * 0.9, xs * 1.1, color="tab:blue", alpha=0.16, label="±10 %")
    ax.plot(xs, xs, color="k", lw=1, label="y = x")
    if pts:
        errs = [abs(s - h) / h for h, s, _ in pts]
        colors = ["tab:green" if e <= 0.1 else "tab:orange" if e <= 0.2 else "tab:red" for e in errs]
        ax.scatter([h for h, _, _ in pts], [s for _, s, _ in pts], c=colors, s=28, zorder=3, edgecolors="k",
                   linewidths=0.4)
        for h, s, n in pts:
            ax.annotate(n, (h, s), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("hardware cycles")
    ax.set_ylabel("simulated cycles")
    st = cycle_error_stats((s, h) for h, s, _ in pts)
    if title is None:
        title = "simulated vs hardware cycles"
    if st["n"]:
        title += f"\nN = {st['n']}, MAPE = {st['mape_pct']:.2f}%, within 10%: {st['within_10_pct'] * 100:.0f}%"
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_outputs(rows: Sequence[dict], summary: dict, outdir: str | Path) -> dict[str, Path]:
    """``validation.csv``, ``summary.json`` (summary + rows) and ``scatter.png`` in ``outdir``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    arch = summary.get("arch")
    return {
        "csv": write_csv(rows, outdir / "validation.csv"),
        "summary": write_summary(summary, outdir / "summary.json", rows),
        "scatter": plot_scatter(rows, outdir / "scatter.png",
                                title=f"simulated vs hardware cycles ({arch})" if arch else None),
    }


def baseline_path(path: str | Path) -> Path:
    """The ``validation.csv`` of an earlier run (its --out folder or the file); UserError if there is none."""
    p = Path(path)
    if p.is_dir():
        p = p / "validation.csv"
    if not p.is_file():
        from warpgraph.core.errors import UserError

        raise UserError(f"no validation.csv at {p}", location="--against",
                        hint="the --out folder of an earlier `warpgraph validate` run")
    return p


def compare_runs(rows: Sequence[dict], baseline_csv: str | Path, tol_pct: float = 3.0) -> dict[str, Any]:
    """Simulated cycles of ``rows`` against another validation run's ``validation.csv`` (e.g. sampled mode against
    detailed mode, or a design change against the baseline): per launch ``diff_pct`` = rows / baseline - 1, and the
    worst absolute difference. Launches missing on either side are listed in ``missing``."""
    import csv

    p = baseline_path(baseline_csv)
    with open(p, newline="") as f:
        base = {r["name"]: _num(r.get("sim_cycles")) for r in csv.DictReader(f)}
    out, missing = [], []
    for r in rows:
        b, s = base.get(r.get("name")), _num(r.get("sim_cycles"))
        if not b or s is None:
            missing.append(r.get("name"))
            continue
        x = {"name": r["name"], "cycles": s, "baseline_cycles": b, "diff_pct": 100.0 * (s / b - 1.0)}
        est = _num(r.get("sim_cycles_error_estimate_pct"))
        if est is not None:
            x["estimate_pct"] = est
        out.append(x)
    worst = max((abs(x["diff_pct"]) for x in out), default=None)
    res = {"baseline": str(p), "launches": out, "missing": missing, "max_abs_diff_pct": worst,
           "within_tol": sum(abs(x["diff_pct"]) <= tol_pct for x in out), "tol_pct": tol_pct}
    estimated = [x for x in out if x.get("estimate_pct")]
    if estimated:
        res["with_estimate"] = len(estimated)
        for k in (1, 2):
            res[f"within_{k}_estimate"] = sum(abs(x["diff_pct"]) <= k * x["estimate_pct"] for x in estimated)
    return res
