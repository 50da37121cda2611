"""Launch records of microbench/src/atomics.cu for the model (tests/test_atomics_replay.py): the PTX is
``nvcc -ptx -arch=sm_90a -O3`` of that file (microbench/src/atomics.ptx, nvcc 13.0.88), the launch parameters
those of its host code, scaled down where the H200 run is too long to simulate (stated per function)."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
PTX = ROOT / "src" / "atomics.ptx"
RESULTS = ROOT / "results" / "h200_atomics_2026-12-03" / "atomics.txt"

LAT_MODES = ("ld_cg", "atom_relaxed", "atom_acqrel", "cas_relaxed", "cas_acqrel", "exch_acqrel", "fence",
             "st_fence", "red_fence")
TPUT_OPS = ("red_u32", "atom_u32", "atom_acqrel_f32")
PATTERNS = ("same", "warp_word", "warp_line", "shared_line", "cta_line")


def hardware() -> list[dict]:
    """The H200 lines of atomics.txt as dicts (section + key=value fields, numbers as float)."""
    rows = []
    for line in RESULTS.read_text().splitlines():
        parts = line.split()
        if not parts or parts[0] not in ("CLK", "LAT", "TPUT", "LOCK"):
            continue
        r = {"section": parts[0]}
        for p in parts[1:]:
            k, _, v = p.partition("=")
            try:
                r[k] = float(v)
            except ValueError:
                r[k] = v
        rows.append(r)
    return rows


def hw(section: str, **match) -> dict:
    for r in hardware():
        if r["section"] == section and all(r.get(k) == v for k, v in match.items()):
            return r
    raise KeyError((section, match))


def _entry(prefix: str) -> str:
    names = re.findall(r"\.visible \.entry (\w+)\(", PTX.read_text())
    hit = [n for n in names if n.startswith(prefix)]
    if len(hit) != 1:
        raise KeyError(prefix)
    return hit[0]


def _write(d: Path, entry: str, grid: int, block: int, buffers: dict, params: list) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    # .version 9.0 (nvcc 13) lowered to 8.7, which the Triton wheel's ptxas 12.8 reads: no instruction needs more
    (d / "kernel.ptx").write_text(PTX.read_text().replace(".version 9.0", ".version 8.7", 1))
    (d / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": d.name, "ptx": "kernel.ptx", "entry": entry, "grid": [grid, 1, 1],
        "block": [block, 1, 1], "buffers": buffers, "params": params}))
    return d


def lat_record(d: Path, mode: str, n: int = 64) -> Path:
    """lat_chain<M>(base, n, zero=0, out): out[0] = cycles of n dependent accesses (host: 512)."""
    m = LAT_MODES.index(mode)
    return _write(d, _entry(f"_Z9lat_chainILi{m}E"), 1, 1,
                  {"base": {"dtype": "uint32", "shape": [1024], "init": "zeros"},
                   "out": {"dtype": "int64", "shape": [2], "init": "zeros"}},
                  [{"ptr": "base"}, {"u32": n}, {"u32": 0}, {"ptr": "out"}])


def tput_record(d: Path, op: str, pattern: str, G: int, W: int, k: int) -> Path:
    """tput<OP>(p, pattern, k, cyc, sink): cyc[cta] = cycles of the CTA's k atomics per thread + a fence."""
    o = TPUT_OPS.index(op)
    return _write(d, _entry(f"_Z4tputILi{o}E"), G, 32 * W,
                  {"p": {"dtype": "uint32", "shape": [32 * G * W * 32 + 64], "init": "zeros"},
                   "cyc": {"dtype": "int64", "shape": [G], "init": "zeros"},
                   "sink": {"dtype": "uint32", "shape": [16], "init": "zeros"}},
                  [{"ptr": "p"}, {"u32": PATTERNS.index(pattern)}, {"u32": k}, {"ptr": "cyc"}, {"ptr": "sink"}])


def lock_record(d: Path, G: int, n: int, cs: int) -> Path:
    """lock_k(lock, seq, ts, buf, n, cs, spins, cyc): cyc[cta] = cycles of the CTA's n acquisitions."""
    return _write(d, _entry("_Z6lock_k"), G, 128,
                  {"lock": {"dtype": "int32", "shape": [32], "init": "zeros"},
                   "seq": {"dtype": "uint32", "shape": [32], "init": "zeros"},
                   "ts": {"dtype": "uint64", "shape": [G * n + 8], "init": "zeros"},
                   "buf": {"dtype": "int32", "shape": [4 * 128], "init": "zeros"},
                   "spins": {"dtype": "uint32", "shape": [32], "init": "zeros"},
                   "cyc": {"dtype": "int64", "shape": [G], "init": "zeros"}},
                  [{"ptr": "lock"}, {"ptr": "seq"}, {"ptr": "ts"}, {"ptr": "buf"}, {"u32": n}, {"u32": cs},
                   {"ptr": "spins"}, {"ptr": "cyc"}])


RZ_PTX = ROOT / "src" / "atomics_rz.ptx"
RZ_RESULTS = ROOT / "results" / "h200_atomics_2026-12-03" / "rz.txt"
RZ_MODES = ("acqrel_rz", "relaxed_rz", "red_release", "acqrel_used", "fence")


def hw_rz(mode: str) -> float:
    """atomics_rz.txt: cycles per operation of 16 back-to-back atomics of one warp (median of 5)."""
    for line in RZ_RESULTS.read_text().splitlines():
        if line.startswith(f"RZ mode={mode} "):
            return float(line.split("cyc_per_op=")[1])
    raise KeyError(mode)


def rz_record(d: Path, mode: str) -> Path:
    """k(p, o, mode) of src/atomics_rz.cu, one warp: o[0] = cycles of its 16 atomics."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.ptx").write_text(RZ_PTX.read_text().replace(".version 9.0", ".version 8.7", 1))
    (d / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": d.name, "ptx": "kernel.ptx", "entry": "_Z1kPfPxi", "grid": [1, 1, 1],
        "block": [32, 1, 1], "buffers": {"p": {"dtype": "float32", "shape": [1024], "init": "zeros"},
                                         "o": {"dtype": "int64", "shape": [8], "init": "zeros"}},
        "params": [{"ptr": "p"}, {"ptr": "o"}, {"u32": RZ_MODES.index(mode)}]}))
    return d
