"""What the compiler makes of a record's PTX: registers, spills, stack and static shared memory per entry.

Occupancy needs the registers per thread that the *assembler* allocates; PTX virtual registers say little about
it (a Triton layer norm declares hundreds and ptxas allocates 32). The record alone decides (issue 15): the
facts come from ``ptxas -v``, run offline on the record's PTX for the GPU's ISA target, in this order

1. the record's ``compiled[<isa>]`` block, written at capture (``warpgraph capture``) or by ``warpgraph compile
   RECORD --write``;
2. ``ptxas`` now, when one is found (``$WARPGRAPH_PTXAS``; the Triton wheel's ``triton/backends/nvidia/bin``;
   ``ptxas`` on ``PATH`` from a CUDA toolkit); results are cached per (PTX, entry, ISA, ptxas) on disk;
3. nothing: the caller falls back to an estimate and says so (``registers_source``).

A hardware measurement (``measured.json``) is never an input.

Which ptxas: the one of the tool chain that built the record, when it is there. Triton 3.6 ships ptxas 12.8, and
the calibration launches ran the cubins it made: on the H200 calibration and held-out records its register
counts equal Nsight Compute's ``launch__registers_per_thread`` on all 25 launches, where ptxas 13.0 gives 192
instead of 172 on the two pointer GEMMs with N not a multiple of 16. Records from nvcc prefer the toolkit's.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from warpgraph.core.cache_dir import cache_subdir, write_atomic

__all__ = ["CompiledFacts", "find_ptxas", "ptxas_facts", "compiled_facts", "parse_ptxas_log", "record_facts",
           "annotate_record", "sass_places"]

_TIMEOUT_S = 120


@dataclass(frozen=True)
class CompiledFacts:
    """``ptxas -v`` facts of one entry function for one ISA target."""

    registers_per_thread: int
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    stack_frame_bytes: int = 0
    static_shared_bytes: int = 0
    barriers: int = 0
    tool: str = ""          # e.g. "ptxas 12.8.93 (triton 3.6.0)"
    isa: str = ""           # e.g. "sm_90a"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "CompiledFacts":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


def _triton_bin() -> Path | None:
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "bin"
    return p if p.is_dir() else None


def _tool_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else ""


def find_ptxas(isa: str = "sm_90a", prefer: str = "triton") -> tuple[str, str] | None:
    """``(path, description)`` of a ptxas for ``isa``, or None. ``prefer`` is ``"triton"`` or ``"cuda"``
    (the tool chain that built the record); ``$WARPGRAPH_PTXAS`` overrides both (an empty value: none)."""
    env = os.environ.get("WARPGRAPH_PTXAS")
    if env is not None:
        if not env:
            return None
        return (env, f"ptxas {_tool_version(env)} ($WARPGRAPH_PTXAS)") if Path(env).is_file() else None
    cands: list[tuple[str, str]] = []
    tb = _triton_bin()
    if tb is not None:
        major = int(re.match(r"sm_(\d+)", isa).group(1)) if re.match(r"sm_(\d+)", isa) else 90
        name = "ptxas-blackwell" if major >= 100 and (tb / "ptxas-blackwell").is_file() else "ptxas"
        if (tb / name).is_file():
            try:
                from importlib.metadata import version

                tv = version("triton")
            except Exception:  # pragma: no cover - metadata missing
                tv = "?"
            cands.append((str(tb / name), f"triton {tv}"))
    w = shutil.which("ptxas")
    if w:
        cands.append((w, "CUDA toolkit on PATH"))
    if prefer == "cuda":
        cands.reverse()
    for path, what in cands:
        return path, f"ptxas {_tool_version(path)} ({what})"
    return None


_TARGET = re.compile(r"^\s*\.target\s+(sm_[0-9]+[af]?)", re.M)
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, dict]:
    """Per entry function: registers, spills, stack, barriers and static smem from ``ptxas -v`` output."""
    out: dict[str, dict] = {}
    cur = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            cur = out.setdefault(m.group(1), {"isa": m.group(2)})
            continue
        if cur is None:
            continue
        m = _PROPS.search(line)
        if m:
            cur["stack_frame_bytes"], cur["spill_store_bytes"], cur["spill_load_bytes"] = map(int, m.groups())
        m = _USED.search(line)
        if m:
            cur["registers_per_thread"] = int(m.group(1))
            b = _BARS.search(line)
            cur["barriers"] = int(b.group(1)) if b else 0
            s = _SMEM.search(line)
            cur["static_shared_bytes"] = int(s.group(1)) if s else 0
    return out


def _cache_dir(sub: str = "ptxas") -> Path | None:
    """``<cache root>/sub/`` (core/cache_dir.py: ``$WARPGRAPH_CACHE_DIR``, default ``~/.cache/warpgraph``); None
    when the caches are off or the folder cannot be made."""
    return cache_subdir(sub)


@lru_cache(maxsize=256)
def _run_ptxas(ptx_text: str, isa: str, ptxas: str, tool: str) -> tuple[dict[str, dict], str]:
    key = hashlib.sha256("\0".join((ptx_text, isa, ptxas, tool)).encode()).hexdigest()[:32]
    cdir = _cache_dir()
    cfile = cdir / f"{key}.json" if cdir else None
    if cfile is not None and cfile.is_file():
        try:
            d = json.loads(cfile.read_text())
            return d["entries"], d.get("error", "")
        except (OSError, ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory(prefix="warpgraph-ptxas-") as td:
        src = Path(td) / "k.ptx"
        src.write_text(ptx_text)
        try:
            p = subprocess.run([ptxas, "-v", f"-arch={isa}", str(src), "-o", str(Path(td) / "k.cubin")],
                               capture_output=True, text=True, timeout=_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError) as e:
            return {}, f"{ptxas} could not run: {e}"
        log = (p.stdout + p.stderr).replace(str(src), "kernel.ptx")
    entries = parse_ptxas_log(log) if p.returncode == 0 else {}
    err = "" if p.returncode == 0 else next((ln.strip() for ln in log.splitlines()
                                             if "error" in ln.lower() or "fatal" in ln.lower()),
                                            f"ptxas exit code {p.returncode}")
    if cfile is not None:
        try:
            write_atomic(cfile, json.dumps({"entries": entries, "error": err, "tool": tool}))
        except OSError:
            pass
    return entries, err


def ptxas_facts(ptx_text: str, entry: str, isa: str, *, prefer: str = "triton") -> tuple[CompiledFacts | None, str]:
    """Run (or recall) ptxas on ``ptx_text`` for ``isa``: ``(facts of entry, "")`` or ``(None, why not)``."""
    found = find_ptxas(isa, prefer)
    if found is None:
        return None, "no ptxas found"
    path, tool = found
    entries, err = _run_ptxas(ptx_text, isa, path, tool)
    m = _TARGET.search(ptx_text)
    if err and m and m.group(1) != isa:
        # PTX for another arch-specific target (sm_90a PTX on an sm_120 GPU): assemble it for the GPU's ISA as
        # a user porting a portable kernel would; a kernel that uses the other target's features still fails.
        retarget = ptx_text[:m.start(1)] + isa + ptx_text[m.end(1):]
        entries, err2 = _run_ptxas(retarget, isa, path, tool)
        if err2:
            return None, f"{tool}: {err}; with .target {isa}: {err2}"
        tool = f"{tool}, .target {m.group(1)} -> {isa}"
        err = ""
    if err:
        return None, f"{tool}: {err}"
    e = entries.get(entry)
    if e is None or "registers_per_thread" not in e:
        return None, f"{tool} reported no entry '{entry}'"
    return CompiledFacts(tool=tool, **{**e, "isa": isa}), ""


def _prefer(record) -> str:
    comp = str((getattr(record, "source", None) or {}).get("compiler", "")).lower()
    return "cuda" if ("nvcc" in comp or "cuda" in comp) else "triton"


def compiled_facts(record, isa: str) -> tuple[CompiledFacts | None, str]:
    """The compiler facts of ``record``'s entry for ``isa``: ``(facts, source)`` or ``(None, why not)``.

    ``source`` says where they came from: ``"record (ptxas 12.8.93 (triton 3.6.0))"`` or ``"ptxas ... now"``."""
    block = (getattr(record, "compiled", None) or {}).get(isa) if record is not None else None
    if block is not None:
        f = block if isinstance(block, CompiledFacts) else CompiledFacts.from_json(
            block.model_dump() if hasattr(block, "model_dump") else dict(block))
        return f, f"record ({f.tool or 'ptxas'}, {isa})"
    if record is None:
        return None, "no record"
    from warpgraph.core.errors import UserError

    try:
        text = record.ptx_text()
    except UserError as e:  # a record without readable PTX text: the caller reports the estimate
        return None, e.message
    f, why = ptxas_facts(text, record.entry, isa, prefer=_prefer(record))
    if f is None:
        return None, why
    return f, f"{f.tool}, {isa}, at load"


def record_facts(rec, isa: str, *, prefer: str | None = None) -> CompiledFacts:
    """ptxas facts of a loaded record's entry for ``isa``, now (not the record's block); raises RecordError
    when no ptxas is found or ptxas rejects the PTX."""
    from warpgraph.core.errors import RecordError

    f, why = ptxas_facts(rec.ptx_text(), rec.entry, isa, prefer=prefer or _prefer(rec))
    if f is None:
        raise RecordError(f"cannot compile the record's PTX for {isa}: {why}", location=str(rec.file))
    return f


def annotate_record(record_dir, isa: str = "sm_90a", *, prefer: str | None = None) -> CompiledFacts:
    """Run ptxas on a record folder's PTX and write ``compiled.<isa>`` into its ``launch.json`` (the rest of
    the file is kept as it is). Raises RecordError when no ptxas is found or ptxas rejects the PTX."""
    from warpgraph.workloads.record import RECORD_FILE, load_record

    rec = load_record(record_dir)
    f = record_facts(rec, isa, prefer=prefer)
    path = Path(record_dir) / RECORD_FILE
    d = json.loads(path.read_text())
    block = f.to_json()
    places = sass_places(rec, isa)
    if places is not None:
        block.update(places)
    d.setdefault("compiled", {})[isa] = block
    path.write_text(json.dumps(d, indent=1) + "\n")
    return f


def sass_places(rec, isa: str) -> dict | None:
    """The SASS facts of the record's PTX as the record stores them (workloads/sass.py ``listing_places``): each
    PTX instruction's place in the SASS ptxas + nvdisasm make of it (the issue order, workloads/issue_order.py),
    the tool, the taken-branch periods (``branch_periods``) and whether ptxas serialised its wgmma pipeline
    (``wgmma_serialized``); None without the tools."""
    from warpgraph.workloads.sass import listing_places

    return listing_places(rec.ptx_text(), rec.entry, rec.program(), isa, _prefer(rec))
