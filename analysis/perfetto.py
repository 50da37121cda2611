"""Chrome trace-event JSON (opens in ui.perfetto.dev / chrome://tracing) from a recorder's events.

Layout (``write_chrome_trace``):

* process 0 ``GPU``: GPU-wide counters (``counter(...)`` with sm -1, e.g. L2/HBM queue depth) and bandwidth
  counters derived from ``traffic`` reservations (``hbm GB/s`` per ``counter_bucket_cycles``).
* process ``sm + 1`` ``SM <sm>`` per SM, threads:
  ``CTAs`` (async slice per resident CTA), ``TMA`` (async slice per transaction from admission to completion,
  plus a ``queued`` slice from issue to admission when it waited), ``mbarrier`` (instant per phase completion,
  async slice per warp wait), ``tensor core`` (async slice per wgmma group / mma.sync), and one thread per
  warp ``warp <w> (CTA <c>)`` with complete slices ``issue`` / ``<stall reason>`` (never overlapping).
  Per-SM counters (``counter(..., sm=s)``) are counter tracks of the SM's process.

Timestamps are µs: ``cycles / clock_mhz`` (``clock_mhz=None``: 1 cycle shown as 1 µs). Every event keeps its
cycles in ``args``. ``window=(t0, t1)`` (cycles) clips slices to the window and drops what lies outside;
``sms`` keeps only those SMs.

``validate_chrome_trace(path)`` checks a file against a JSON schema of the trace-event format and the ordering
rules Perfetto relies on; it raises :class:`TraceValidationError` listing the problems, else returns a summary.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

__all__ = ["write_chrome_trace", "chrome_trace_events", "validate_chrome_trace", "TraceValidationError",
           "TRACE_SCHEMA"]

TID_CTA, TID_TMA, TID_MBAR, TID_TENSOR = 1, 2, 3, 4
TID_WARP0 = 100  # warp thread id = TID_WARP0 + global warp id


class TraceValidationError(ValueError):
    def __init__(self, problems: list[str], path=None):
        self.problems = problems
        head = f"{path}: " if path else ""
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{head}{len(problems)} trace problem(s):\n  " + "\n  ".join(problems[:20]) + more)


def _events_of(src):
    """TraceEvents from a recorder (``.events()``) or TraceEvents itself."""
    if hasattr(src, "tables") and hasattr(src, "frame"):
        return src
    if hasattr(src, "events"):
        return src.events()
    raise TypeError(f"expected a recorder or TraceEvents, got {type(src).__name__}")


def _reason_namer(ev):
    names = ev.meta.get("reason_names")
    if names is None:
        try:  # the analysis layer may import anything; the recorder (core) may not
            from warpgraph.components.stalls import STALL_NAMES as names  # noqa: N811
        except Exception:  # pragma: no cover
            names = None

    def name(r):
        if isinstance(r, str):
            return r
        if names is not None and 0 <= int(r) < len(names):
            return str(names[int(r)])
        return f"reason{int(r)}"

    return name


def chrome_trace_events(recorder, *, clock_mhz: float | None = None, sms: Iterable[int] | None = None,
                        window: tuple[float, float] | None = None, counter_bucket_cycles: int = 1000) -> list[dict]:
    """The ``traceEvents`` list (metadata first, then time-sorted events). See module docstring."""
    ev = _events_of(recorder)
    scale = 1.0 / float(clock_mhz) if clock_mhz else 1.0
    smset = frozenset(int(s) for s in sms) if sms is not None else None
    w0, w1 = (float(window[0]), float(window[1])) if window is not None else (-math.inf, math.inf)
    wpc = int(ev.meta.get("warps_per_cta") or 0)
    rname = _reason_namer(ev)
    cta_sm = ev.cta_sm()

    def sm_ok(sm):
        return smset is None or sm in smset

    def clip(t0, t1):
        """Clipped interval or None when it lies outside the window (zero-length inside: kept)."""
        if t1 < t0:
            t1 = t0
        if t0 == t1:
            return (t0, t1) if w0 <= t0 < w1 else None
        if t1 <= w0 or t0 >= w1:
            return None
        return (t0 if t0 > w0 else w0, t1 if t1 < w1 else w1)

    def ts(t):
        return t * scale

    out: list[tuple[float, int, dict]] = []  # (ts, emission seq, event)
    seq = 0

    def emit(e):
        nonlocal seq
        out.append((e.get("ts", 0.0), seq, e))
        seq += 1

    used_sms: set[int] = set()
    warp_threads: dict[tuple[int, int], str] = {}
    sm_threads: dict[int, set[int]] = defaultdict(set)
    next_id = 1

    def async_pair(pid, tid, cat, name, t0, t1, args):
        nonlocal next_id
        i = next_id
        next_id += 1
        emit({"ph": "b", "cat": cat, "name": name, "id": i, "pid": pid, "tid": tid, "ts": ts(t0), "args": args})
        emit({"ph": "e", "cat": cat, "name": name, "id": i, "pid": pid, "tid": tid, "ts": ts(t1)})

    labels = ev.meta.get("warp_labels") or {}  # the timing core's bundle labels ("warps 0-3 (CTA 2, ...)")

    def warp_label(g):
        lab = labels.get(int(g))
        if lab is not None:
            return lab
        if wpc > 0:
            cta, w = divmod(int(g), wpc)
            return f"warp {w} (CTA {cta})"
        return f"warp {g}"

    # warps: issue runs and stalls (complete events; the recorder guarantees they do not overlap per warp)
    for kind in ("issue", "stall"):
        for row in ev.tables.get(kind, ()):
            sm, g, t0, t1 = row[0], row[1], row[2], row[3]
            if not sm_ok(sm):
                continue
            c = clip(t0, t1)
            if c is None:
                continue
            name = "issue" if kind == "issue" else rname(row[4])
            pid, tid = sm + 1, TID_WARP0 + int(g)
            used_sms.add(sm)
            warp_threads[(pid, tid)] = warp_label(g)
            emit({"ph": "X", "cat": kind, "name": name, "pid": pid, "tid": tid, "ts": ts(c[0]),
                  "dur": ts(c[1]) - ts(c[0]), "args": {"t0": t0, "t1": t1, "cycles": t1 - t0}})

    # CTAs
    for sm, cta, t0, t1 in ev.tables.get("cta", ()):
        if not sm_ok(sm) or (c := clip(t0, t1)) is None:
            continue
        used_sms.add(sm)
        sm_threads[sm].add(TID_CTA)
        async_pair(sm + 1, TID_CTA, "cta", f"CTA {cta}", c[0], c[1], {"cta": cta, "t_launch": t0, "t_done": t1})

    # TMA transactions
    for sm, txn, ti, ta, td, nbytes, store, g in ev.tables.get("tma", ()):
        if not sm_ok(sm):
            continue
        args = {"txn": txn, "nbytes": nbytes, "store": store, "t_issue": ti, "t_admit": ta, "t_done": td,
                "queued_cycles": ta - ti, "cycles": td - ta}
        if g >= 0:
            args["warp"] = warp_label(g)
        name = f"{'store' if store else 'load'} {nbytes} B"
        if ta > ti and (c := clip(ti, ta)) is not None:
            used_sms.add(sm)
            sm_threads[sm].add(TID_TMA)
            async_pair(sm + 1, TID_TMA, "tma.queue", f"queued ({name})", c[0], c[1], args)
        if (c := clip(ta, td)) is not None:
            used_sms.add(sm)
            sm_threads[sm].add(TID_TMA)
            async_pair(sm + 1, TID_TMA, "tma", name, c[0], c[1], args)

    # mbarrier phases (instants) and waits (async)
    for sm, key, phase, t in ev.tables.get("mbar_phase", ()):
        if sm < 0:
            sm = cta_sm.get(int(key) >> 32, -1)
        if sm < 0 or not sm_ok(sm) or not (w0 <= t < w1):
            continue
        used_sms.add(sm)
        sm_threads[sm].add(TID_MBAR)
        emit({"ph": "i", "s": "t", "cat": "mbarrier", "name": f"phase {phase} done", "pid": sm + 1,
              "tid": TID_MBAR, "ts": ts(t),
              "args": {"key": hex(int(key)), "cta": int(key) >> 32, "smem_addr": hex(int(key) & 0xFFFFFFFF),
                       "phase": phase, "t": t}})
    for sm, g, key, t0, t1 in ev.tables.get("mbar_wait", ()):
        if not sm_ok(sm) or (c := clip(t0, t1)) is None:
            continue
        used_sms.add(sm)
        sm_threads[sm].add(TID_MBAR)
        async_pair(sm + 1, TID_MBAR, "mbarrier.wait", f"wait {warp_label(g)}", c[0], c[1],
                   {"key": hex(int(key)), "t0": t0, "t1": t1, "cycles": t1 - t0})

    # tensor core
    for sm, kind, unit, t0, t1, flops in ev.tables.get("tensor", ()):
        if not sm_ok(sm) or (c := clip(t0, t1)) is None:
            continue
        used_sms.add(sm)
        sm_threads[sm].add(TID_TENSOR)
        if isinstance(unit, tuple) and len(unit) == 2:
            who = f"CTA {unit[0]} wg {unit[1]}"
        elif isinstance(unit, int):
            who = warp_label(unit)
        else:
            who = str(unit)
        async_pair(sm + 1, TID_TENSOR, "tensor", f"{kind} {who}", c[0], c[1],
                   {"flops": flops, "t0": t0, "t1": t1, "cycles": t1 - t0})

    # counters (sampled levels): the last value before the window is restated at its start
    gpu_used = False
    before: dict[tuple[str, int], tuple] = {}
    for name, sm, t, value in ev.tables.get("counter", ()):
        if sm >= 0 and not sm_ok(sm):
            continue
        if t < w0:
            before[(name, sm)] = (t, value)
            continue
        if t >= w1:
            continue
        k = (name, sm)
        if k in before:
            bt, bv = before.pop(k)
            _emit_counter(emit, name, sm, w0, bv, ts, bt)
        if sm < 0:
            gpu_used = True
        else:
            used_sms.add(sm)
        _emit_counter(emit, name, sm, t, value, ts, t)
    for (name, sm), (bt, bv) in sorted(before.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if math.isfinite(w0):
            gpu_used |= sm < 0
            _emit_counter(emit, name, sm, w0, bv, ts, bt)

    # bandwidth counters from traffic reservations
    traffic = [r for r in ev.tables.get("traffic", ()) if r[1] < 0 or sm_ok(r[1])]
    if traffic:
        from warpgraph.analysis.utilization import spread_amounts

        by_level: dict[str, list] = defaultdict(list)
        for level, _sm, t0, t1, nbytes, _w in traffic:
            by_level[level].append((t0, t1, nbytes))
        lo = max(0.0, w0) if math.isfinite(w0) else min(r[2] for r in traffic)
        hi = w1 if math.isfinite(w1) else max(max(r[3], r[2]) for r in traffic)
        b = max(1, int(counter_bucket_cycles))
        start = math.floor(lo / b) * b
        n = max(1, int(math.ceil((hi - start) / b)))
        for level in sorted(by_level):
            rows = by_level[level]
            per = spread_amounts([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], start, b, n)
            unit = "GB/s" if clock_mhz else "B/cycle"
            for i, v in enumerate(per):
                rate = v / b * (clock_mhz / 1e3 if clock_mhz else 1.0)  # bytes/cycle * Mcycle/s -> MB/s -> GB/s
                t = start + i * b
                if w0 <= t < w1 or not math.isfinite(w0):
                    emit({"ph": "C", "name": f"{level} {unit}", "pid": 0, "tid": 0, "ts": ts(max(t, lo)),
                          "args": {"value": round(rate, 6)}})
                    gpu_used = True

    # metadata
    meta: list[dict] = []
    if gpu_used:
        meta.append({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU"}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": 0, "tid": 0, "args": {"sort_index": 0}})
    names = {TID_CTA: "CTAs", TID_TMA: "TMA", TID_MBAR: "mbarrier", TID_TENSOR: "tensor core"}
    for sm in sorted(used_sms):
        pid = sm + 1
        meta.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": f"SM {sm}"}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for tid in sorted(sm_threads.get(sm, ())):
            meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": names[tid]}})
            meta.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                         "args": {"sort_index": tid}})
    for (pid, tid), label in sorted(warp_threads.items()):
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})

    out.sort(key=lambda x: (x[0], x[1]))
    return meta + [e for _t, _s, e in out]


def _emit_counter(emit, name, sm, t, value, ts, t_sample):
    emit({"ph": "C", "name": name, "pid": sm + 1 if sm >= 0 else 0, "tid": 0, "ts": ts(t),
          "args": {"value": float(value)}})


def write_chrome_trace(recorder, path, *, clock_mhz: float | None, sms: Iterable[int] | None = None,
                       window: tuple[float, float] | None = None, counter_bucket_cycles: int = 1000) -> dict:
    """Write a Chrome trace-event JSON file (gzipped when ``path`` ends in ``.gz``); returns a summary
    ``{path, events, truncated, dropped}``."""
    ev = _events_of(recorder)
    events = chrome_trace_events(ev, clock_mhz=clock_mhz, sms=sms, window=window,
                                 counter_bucket_cycles=counter_bucket_cycles)
    doc = {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": "warpgraph.analysis.perfetto",
            "kernel": str(ev.meta.get("name", "")),
            "time_unit": "us" if clock_mhz else "cycles (shown as us)",
            "clock_mhz": clock_mhz,
            "window_cycles": list(window) if window is not None else None,
            "sms": sorted(sms) if sms is not None else None,
            "recorder_truncated": bool(ev.truncated),
            "recorder_dropped": int(ev.dropped),
        },
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, separators=(",", ":"))  # the C encoder (json.dump to a stream is pure Python)
    if path.suffix == ".gz":  # ui.perfetto.dev opens gzipped JSON too
        import gzip

        with gzip.open(path, "wt", compresslevel=6) as f:
            f.write(text)
    else:
        path.write_text(text)
    return {"path": str(path), "events": len(events), "truncated": bool(ev.truncated), "dropped": int(ev.dropped)}


# ----------------------------------------------------------------------------------------------------------
_NUM_ARGS = {"type": "object", "additionalProperties": {"type": "number"}, "minProperties": 1}

TRACE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"$ref": "#/$defs/event"}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
    "$defs": {
        "event": {
            "type": "object",
            "required": ["ph", "pid"],
            "properties": {
                "ph": {"enum": ["X", "B", "E", "b", "e", "n", "i", "I", "C", "M"]},
                "name": {"type": "string"},
                "cat": {"type": "string"},
                "ts": {"type": "number", "minimum": 0},
                "dur": {"type": "number", "minimum": 0},
                "pid": {"type": "integer"},
                "tid": {"type": "integer"},
                "id": {"type": ["integer", "string"]},
                "s": {"enum": ["g", "p", "t"]},
                "args": {"type": "object"},
            },
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}},
                 "then": {"required": ["name", "ts", "dur", "tid"]}},
                {"if": {"properties": {"ph": {"enum": ["B", "E"]}}}, "then": {"required": ["ts", "tid"]}},
                {"if": {"properties": {"ph": {"enum": ["b", "e", "n"]}}},
                 "then": {"required": ["name", "cat", "id", "ts"]}},
                {"if": {"properties": {"ph": {"enum": ["i", "I"]}}}, "then": {"required": ["name", "ts"]}},
                {"if": {"properties": {"ph": {"const": "C"}}},
                 "then": {"required": ["name", "ts", "args"], "properties": {"args": _NUM_ARGS}}},
                {"if": {"properties": {"ph": {"const": "M"}}},
                 "then": {"required": ["name", "args"],
                          "properties": {"name": {"enum": ["process_name", "thread_name", "process_sort_index",
                                                           "thread_sort_index", "process_labels"]}}}},
            ],
        }
    },
}


def _shape(e) -> tuple:
    """Signature under which two events are equally valid for the schema (types, enum-valued fields)."""
    ph = e.get("ph")
    sig = tuple(sorted((k, type(v).__name__) for k, v in e.items()))
    args = e.get("args")
    a = tuple(sorted((k, type(v).__name__) for k, v in args.items())) if ph == "C" and isinstance(args, dict) else ()
    return (ph, e.get("name") if ph == "M" else None, e.get("s"), sig, a)


def validate_chrome_trace(path_or_doc, *, full_schema: bool = False, eps_us: float = 1e-6) -> dict:
    """Validate a trace file (or loaded dict). Checks:

    * the JSON schema :data:`TRACE_SCHEMA`: every distinct event shape (phase, keys and value types) is
      validated once with jsonschema and the numeric bounds (ts, dur >= 0) on every event
      (``full_schema=True``: jsonschema on every event -- slow, ~1 ms per event);
    * per track ``(pid, tid)``: ``ts`` non-decreasing in file order; complete slices (X) properly nested after
      sorting by (ts, -dur) (a slice starting inside another ends inside it); B/E properly paired and nested;
    * every async begin (``b``) has a matching end (``e``, same cat and id, not earlier) and vice versa;
    * every pid/tid with events has a name (M ``process_name`` / ``thread_name``; counters need only the pid).

    Raises :class:`TraceValidationError` listing the problems; returns a summary dict otherwise.
    """
    import jsonschema

    where = None
    if isinstance(path_or_doc, (str, Path)):
        where = str(path_or_doc)
        if str(path_or_doc).endswith(".gz"):
            import gzip

            with gzip.open(path_or_doc, "rt") as f:
                doc = json.load(f)
        else:
            with open(path_or_doc) as f:
                doc = json.load(f)
    else:
        doc = path_or_doc
    problems: list[str] = []
    validator = jsonschema.Draft202012Validator(TRACE_SCHEMA)
    if full_schema or not (isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)):
        sub = doc
    else:
        seen: dict[tuple, int] = {}
        for k, e in enumerate(doc["traceEvents"]):
            if not isinstance(e, dict):
                seen[("bad", k)] = k
                continue
            for f in ("ts", "dur"):
                v = e.get(f)
                if isinstance(v, (int, float)) and not isinstance(v, bool) and not v >= 0:
                    problems.append(f"schema: traceEvents/{k}/{f}: {v} is less than the minimum of 0")
            seen.setdefault(_shape(e), k)
        idx = sorted(seen.values())
        sub = {kk: v for kk, v in doc.items() if kk != "traceEvents"}
        sub["traceEvents"] = [doc["traceEvents"][k] for k in idx]
    for err in validator.iter_errors(sub):
        path = list(err.absolute_path)
        if not full_schema and len(path) >= 2 and path[0] == "traceEvents" and sub is not doc:
            path[1] = idx[path[1]]  # back to the file's event index
        loc = "/".join(str(p) for p in path)
        problems.append(f"schema: {loc}: {err.message}")
        if len(problems) >= 50:
            break
    if problems:
        raise TraceValidationError(problems, where)

    events = doc["traceEvents"]
    last_ts: dict[tuple, float] = {}
    xs: dict[tuple, list] = defaultdict(list)
    be: dict[tuple, list] = defaultdict(list)
    open_async: dict[tuple, list] = defaultdict(list)
    pnames, tnames = set(), set()
    used_p, used_t = set(), set()
    by_ph: dict[str, int] = defaultdict(int)
    n_async = 0
    for k, e in enumerate(events):
        ph = e["ph"]
        by_ph[ph] += 1
        pid = e["pid"]
        if ph == "M":
            if e["name"] == "process_name":
                pnames.add(pid)
            elif e["name"] == "thread_name":
                tnames.add((pid, e.get("tid", 0)))
            continue
        used_p.add(pid)
        track = (pid, e.get("tid", 0))
        if ph != "C":
            used_t.add(track)
        t = float(e["ts"])
        if not math.isfinite(t):
            problems.append(f"event {k}: ts is not finite")
            continue
        if t + eps_us < last_ts.get(track, -math.inf):
            problems.append(f"event {k} ({ph} {e.get('name')!r}) on track {track}: ts {t} < previous {last_ts[track]}")
        last_ts[track] = max(t, last_ts.get(track, -math.inf))
        if ph == "X":
            xs[track].append((t, float(e["dur"]), k, e.get("name")))
        elif ph in ("B", "E"):
            be[track].append((ph, t, k, e.get("name")))
        elif ph == "b":
            open_async[(e["cat"], e["id"])].append((t, k, e["name"]))
        elif ph == "e":
            st = open_async.get((e["cat"], e["id"]))
            if not st:
                problems.append(f"event {k}: async end {e['name']!r} (cat {e['cat']!r}, id {e['id']}) without begin")
                continue
            t0, k0, name0 = st.pop()
            n_async += 1
            if e.get("name") not in (None, name0):
                problems.append(f"event {k}: async end {e['name']!r} closes begin {name0!r} (event {k0})")
            if t + eps_us < t0:
                problems.append(f"event {k}: async end at {t} before its begin at {t0} (event {k0})")
    for key, st in open_async.items():
        for t0, k0, name0 in st:
            problems.append(f"event {k0}: async begin {name0!r} (cat {key[0]!r}, id {key[1]}) never ends")
    for track, sl in xs.items():
        sl.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack: list[tuple[float, int, str]] = []
        for t, d, k, name in sl:
            while stack and stack[-1][0] <= t + eps_us:
                stack.pop()
            if stack and t + d > stack[-1][0] + eps_us:
                problems.append(f"event {k} ({name!r} {t}+{d}) on track {track} overlaps event {stack[-1][1]} "
                                f"({stack[-1][2]!r} ending {stack[-1][0]}) without nesting")
            stack.append((t + d, k, name))
    for track, sl in be.items():
        stack = []
        for ph, t, k, name in sl:
            if ph == "B":
                stack.append((name, k))
            elif not stack:
                problems.append(f"event {k}: E without B on track {track}")
            else:
                n0, k0 = stack.pop()
                if name is not None and n0 is not None and name != n0:
                    problems.append(f"event {k}: E {name!r} closes B {n0!r} (event {k0}) on track {track}")
        for n0, k0 in stack:
            problems.append(f"event {k0}: B {n0!r} never ends on track {track}")
    for pid in sorted(used_p - pnames):
        problems.append(f"pid {pid} has events but no process_name")
    for tr in sorted(used_t - tnames):
        problems.append(f"track {tr} has events but no thread_name")
    if problems:
        raise TraceValidationError(problems, where)
    return {"events": len(events), "by_ph": dict(sorted(by_ph.items())), "tracks": len(used_t),
            "processes": len(used_p), "async_pairs": n_async}
