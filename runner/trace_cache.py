"""Trace cache: one functional pass serves every timing run that cannot change it (sweeps that reuse work).

A design-space study over a timing parameter (``tma.admission_depth``, ``l2.hit_latency``, ``timing.window``...)
replays the same functional trace (Contract 2) on many architectures; the functional pass depends only on the
launch record and the handful of values ``run_functional`` receives. This module caches the materialised
:class:`~warpgraph.workloads.functional.KernelTrace` of a run under a key made of exactly those inputs:

* the record's content: its launch.json fields and the PTX text (buffers' shapes, dtypes and ``init`` are in
  the JSON; values are generated from them with the functional seed);
* every value argument of ``run_functional`` (seed, ``l2_capacity_bytes``, ``l1_capacity_bytes``,
  ``compute_values``, ``max_lanes``...): the spec reaches the functional pass only through the L2 reuse capacity
  (``l2.reuse_capacity_bytes`` or ``l2.size_bytes``) and the per-CTA L1 capacity (``sm.unified_l1_shared_bytes``,
  ``sm.shared_carveouts_kib`` and the occupancy fields of ``runner.timing.sm_occupancy``, with the
  ``timing.registers`` / ``timing.shared_bytes`` knobs), so the key holds those two derived values rather than
  the fields (two specs with the same capacities share a trace). ``%nsmid`` is a constant; ``%smid`` is
  ``c % sm.count`` for CTA c in the first functional pass of a kernel that reads it (runner/simulate.py, whose
  key then holds ``smid_sms``), so ``sm.count`` reaches only those kernels' traces;
* the simulate mode and sample plan (a sampled pass may one day run fewer CTAs);
* the functional code version: a hash of the sources of ``workloads/functional``, ``workloads/ptx``,
  ``workloads/memory.py`` (buffer initialisation), ``workloads/references.py`` (its dtype conversions),
  ``workloads/record.py`` and this module, and numpy's version (an edited executor never reuses old traces).

Two levels: an in-memory LRU per process (bounded by trace bytes) and an on-disk store (``np.savez`` of the
trace's arrays, one ``.npz`` per key) shared by processes: ``traces/`` under the cache root
(``$WARPGRAPH_CACHE_DIR``, default ``~/.cache/warpgraph``; ``off`` disables the disk level: core/cache_dir.py),
``explore`` puts it next to the study's storage. Writes go to a temporary file then ``os.replace`` (safe under concurrent writers); a per-key lock
file (``fcntl.flock``) lets one process compute while the others wait and then read its result; the store is
pruned (least recently used first) to ``$WARPGRAPH_CACHE_MAX_BYTES`` (default 4 GiB); an unreadable file is
recomputed with a warning.

API: ``trace_key(record, **functional_inputs)``, ``get(key, program, cache_dir)``, ``put(key, trace,
cache_dir)``, ``lock(key, cache_dir)`` and :func:`resolve_dir`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np

from warpgraph.core.cache_dir import cache_subdir

__all__ = ["trace_key", "get", "put", "lock", "resolve_dir", "code_version", "clear_memory", "memory_keys",
           "DEFAULT_MAX_DISK_BYTES", "DEFAULT_MAX_MEMORY_BYTES", "FORMAT"]

#: on-disk format version (bump when the array layout changes)
FORMAT = 2
DEFAULT_MAX_DISK_BYTES = 4 << 30
DEFAULT_MAX_MEMORY_BYTES = 512 << 20   # traces kept per process (a validate run of many launches stays small)
_MEM_MAX_ENTRIES = 8

_ROOT = Path(__file__).resolve().parent.parent
#: sources whose code decides the functional trace (hashed into every key)
_CODE_SOURCES = ("workloads/functional", "workloads/ptx", "workloads/memory.py", "workloads/record.py",
                 "workloads/references.py", "runner/trace_cache.py")
_code_version: str | None = None


def code_version() -> str:
    """A hash of the functional pass's source files and numpy's version (buffer values come from its random
    generators), computed once per process."""
    global _code_version
    if _code_version is None:
        h = hashlib.sha256(np.__version__.encode())
        for rel in _CODE_SOURCES:
            p = _ROOT / rel
            files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
            for f in files:
                h.update(str(f.relative_to(_ROOT)).encode())
                h.update(f.read_bytes())
        _code_version = h.hexdigest()[:16]
    return _code_version


def _record_digest(record) -> str:
    doc = record.model_dump(mode="json")
    h = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode())
    h.update(b"\0ptx\0")
    h.update(record.ptx_text().encode())
    return h.hexdigest()


def trace_key(record, **inputs) -> str:
    """The cache key of the functional trace of ``record`` given every value input of the functional pass
    (``seed=``, ``l2_capacity_bytes=``, ``l1_capacity_bytes=``, ``compute_values=``, ``mode=``, ``sample=``...:
    JSON-able values). Any input that differs gives another key."""
    doc = {"format": FORMAT, "code": code_version(), "record": _record_digest(record),
           "inputs": {k: inputs[k] for k in sorted(inputs)}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=repr).encode()).hexdigest()[:32]


# ------------------------------------------------------------------------------------------- directories
def resolve_dir(cache_dir=None) -> Path | None:
    """The disk cache folder: ``cache_dir`` when given, else ``traces/`` under the cache root
    (``$WARPGRAPH_CACHE_DIR``, default ``~/.cache/warpgraph``: core/cache_dir.py); None when the disk level is off
    (``cache_dir=False`` or ``WARPGRAPH_CACHE_DIR=off``)."""
    if cache_dir is False:
        return None
    if cache_dir is None or cache_dir is True:
        return cache_subdir("traces", create=False)
    return Path(cache_dir).expanduser()


def _max_disk_bytes() -> int:
    try:
        return int(os.environ.get("WARPGRAPH_CACHE_MAX_BYTES", DEFAULT_MAX_DISK_BYTES))
    except ValueError:
        return DEFAULT_MAX_DISK_BYTES


# ------------------------------------------------------------------------------------------- memory level
_mem: "OrderedDict[str, object]" = OrderedDict()
_mem_lock = threading.Lock()


def clear_memory() -> None:
    """Forget the in-memory level (tests; a long-lived process that wants its memory back)."""
    with _mem_lock:
        _mem.clear()


def memory_keys() -> list[str]:
    with _mem_lock:
        return list(_mem)


def _mem_put(key: str, trace) -> None:
    size = _nbytes(trace)
    if size > DEFAULT_MAX_MEMORY_BYTES:
        return
    with _mem_lock:
        _mem[key] = trace
        _mem.move_to_end(key)
        total = sum(_nbytes(t) for t in _mem.values())
        while _mem and (len(_mem) > _MEM_MAX_ENTRIES or total > DEFAULT_MAX_MEMORY_BYTES):
            _, old = _mem.popitem(last=False)
            total -= _nbytes(old)


def _nbytes(trace) -> int:
    try:
        return int(trace.nbytes())
    except Exception:  # noqa: BLE001 -- an unfinished batch: count nothing rather than fail the run
        return 0


# ------------------------------------------------------------------------------------------- (de)serialise
_BATCH_ARRAYS = ("ctas", "pc", "mask", "pay", "part", "active", "payload_arr")


def _curve_meta(curve):
    """The write-back curve (l2model.py ``write_back_curve``) as JSON: [stored sectors, [write-backs ...]]."""
    return None if curve is None else [int(curve[0]), [float(v) for v in curve[1]]]


def _to_arrays(trace) -> dict[str, np.ndarray]:
    meta = {"format": FORMAT, "grid": list(trace.grid), "block": list(trace.block),
            "dram_first_touch_bytes": int(trace.dram_first_touch_bytes),
            "dram_write_bytes": int(trace.dram_write_bytes),
            "write_back_ratio": float(getattr(trace, "write_back_ratio", 1.0)),
            "write_back_curve": _curve_meta(getattr(trace, "write_back_curve", None)),
            "cluster": [int(c) for c in (getattr(trace, "cluster", None) or (1, 1, 1))],
            "l2_stats": getattr(trace, "l2_stats", None),
            "address_counts": getattr(trace, "address_counts", None),
            "wpc": [int(b.wpc) for b in trace.batches], "n_batches": len(trace.batches)}
    out = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    for i, b in enumerate(trace.batches):
        for name in _BATCH_ARRAYS:
            out[f"b{i}_{name}"] = np.asarray(getattr(b, name))
    return out


def _from_arrays(z, program):
    from warpgraph.workloads.functional.trace import BatchTrace, KernelTrace

    meta = json.loads(bytes(z["meta"]).decode())
    if meta.get("format") != FORMAT:
        raise ValueError(f"format {meta.get('format')} (expected {FORMAT})")
    batches = []
    for i in range(int(meta["n_batches"])):
        b = BatchTrace.__new__(BatchTrace)
        b.ctas = z[f"b{i}_ctas"]
        b.wpc = int(meta["wpc"][i])
        b.W = len(b.ctas) * b.wpc
        b.pc, b.mask, b.pay = z[f"b{i}_pc"], z[f"b{i}_mask"], z[f"b{i}_pay"]
        b.part, b.active, b.payload_arr = z[f"b{i}_part"], z[f"b{i}_active"], z[f"b{i}_payload_arr"]
        b._pc = b._mask = b._pay = None
        b.payloads = b._pay_ids = None
        b.mask_part = b.mask_active = None
        b._mask_ids = None
        b._warp_cache = {}
        batches.append(b)
    t = KernelTrace(program, meta["grid"], meta["block"], batches, meta["dram_first_touch_bytes"],
                    dram_write_bytes=meta["dram_write_bytes"])
    t.write_back_ratio = float(meta["write_back_ratio"])
    c = meta.get("write_back_curve")
    t.write_back_curve = None if c is None else (int(c[0]), np.asarray(c[1], dtype=np.float64))
    t.cluster = tuple(meta.get("cluster") or (1, 1, 1))
    if meta.get("l2_stats") is not None:
        t.l2_stats = meta["l2_stats"]
    t.address_counts = meta.get("address_counts")
    return t


# ------------------------------------------------------------------------------------------- API
def _path(d: Path, key: str) -> Path:
    return d / f"{key}.npz"


def get(key: str, program, cache_dir=None, *, memory: bool = True):
    """The cached trace of ``key`` (memory first, then disk; ``program`` is attached to a trace read from
    disk) or None. An unreadable disk entry is removed with a warning (the caller recomputes it)."""
    if memory:
        with _mem_lock:
            t = _mem.get(key)
            if t is not None:
                _mem.move_to_end(key)
                return t
    d = resolve_dir(cache_dir)
    if d is None:
        return None
    p = _path(d, key)
    if not p.is_file():
        return None
    try:
        with np.load(p, allow_pickle=False) as z:
            t = _from_arrays(z, program)
    except Exception as e:  # noqa: BLE001 -- a torn / foreign / truncated file: recompute
        warnings.warn(f"trace cache: {p} is unreadable ({type(e).__name__}: {e}); recomputing the functional "
                      "pass", RuntimeWarning, stacklevel=2)
        with contextlib.suppress(OSError):
            p.unlink()
        return None
    with contextlib.suppress(OSError):
        os.utime(p)          # least-recently-used order for pruning
    if memory:
        _mem_put(key, t)
    return t


def put(key: str, trace, cache_dir=None, *, memory: bool = True) -> Path | None:
    """Store ``trace`` under ``key`` (memory and, when a disk folder is configured, disk). Returns the file
    written (None when only the memory level is on or the write failed: the cache never fails a run). Only a
    materialised :class:`KernelTrace` is cached (a streamed or partial trace object is not)."""
    from warpgraph.workloads.functional.trace import KernelTrace

    if type(trace) is not KernelTrace or any(getattr(b, "pc", None) is None for b in trace.batches):
        return None
    if memory:
        _mem_put(key, trace)
    d = resolve_dir(cache_dir)
    if d is None:
        return None
    try:
        arrays = _to_arrays(trace)
        size = sum(a.nbytes for a in arrays.values())
        limit = _max_disk_bytes()
        if size > limit:
            return None
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
            os.chmod(tmp, 0o644)                 # mkstemp makes it 0600; other users of a shared folder read it
            os.replace(tmp, _path(d, key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(d, limit, keep=key)
        return _path(d, key)
    except Exception as e:  # noqa: BLE001 -- a full disk, a read-only folder: the run goes on without the cache
        warnings.warn(f"trace cache: could not write {d} ({type(e).__name__}: {e}); continuing without it",
                      RuntimeWarning, stacklevel=2)
        return None


@contextlib.contextmanager
def lock(key: str, cache_dir=None):
    """Exclusive per-key lock over processes sharing the disk folder (``fcntl.flock``; a no-op without a disk
    folder or on platforms without ``fcntl``): hold it while computing a missing trace so concurrent workers
    wait for one functional pass instead of each running their own."""
    d = resolve_dir(cache_dir)
    try:
        import fcntl
    except ImportError:  # pragma: no cover -- Windows
        fcntl = None
    if d is None or fcntl is None:
        yield
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = open(d / f".{key}.lock", "a+b")
    except OSError:
        yield
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        f.close()


def _prune(d: Path, limit: int, keep: str | None = None) -> None:
    """Delete the least recently used entries until the folder's traces total at most ``limit`` bytes."""
    entries = []
    for p in d.glob("*.npz"):
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, p))
    total = sum(s for _, s, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if keep is not None and p.stem == keep:
            continue
        with contextlib.suppress(OSError):
            p.unlink()      # (its lock file stays: removing it under a waiting process would split the lock)
        total -= size
