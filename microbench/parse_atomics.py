"""Parse microbench/src/atomics.cu's output (run_atomics.sh OUTDIR: atomics.txt, log.txt) into a
``warpgraph-microbench/1`` document for ``warpgraph calibrate``: LAT (one thread's dependent chains: cycles per
link, ``mode`` ld_cg / atom_relaxed / atom_acqrel / cas_* / exch_acqrel / fence / st_fence / red_fence), TPUT
(throughput per ``op`` and address ``pattern`` with G CTAs x W warps: cycles, lane-ops and warp instructions per
cycle, cycles per warp instruction per SM), LOCK (spin-lock hand-offs) and CLK (the SM clock from %clock64 against
%globaltimer). Params keep the program's words (``mode``, ``op``, ``pattern``); every statistic is a number.
usage: python3 microbench/parse_atomics.py OUTDIR [OUT.json]"""
import json
import re
import sys
from pathlib import Path

SECTIONS = {"LAT": ("mode",), "TPUT": ("op", "pattern", "G", "W", "K"), "LOCK": ("cs", "G", "N"), "CLK": ()}
BENCH = {"LAT": "atomics_lat", "TPUT": "atomics_tput", "LOCK": "atomics_lock", "CLK": "atomics_clk"}


def _num(v: str):
    try:
        f = float(v)
    except ValueError:
        return v
    return int(f) if f.is_integer() and "." not in v else f


def parse(text: str) -> dict:
    results = []
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in SECTIONS:
            continue
        kv = {k: _num(v) for k, v in (p.split("=", 1) for p in rest.split() if "=" in p)}
        params = {k: kv.pop(k) for k in SECTIONS[tag] if k in kv}
        results.append({"bench": BENCH[tag], "params": params,
                        "stats": {k: float(v) for k, v in kv.items() if isinstance(v, (int, float))}})
    return {"schema": "warpgraph-microbench/1", "results": results}


def provenance(d: Path) -> dict:
    log = (d / "log.txt").read_text().splitlines()
    out = (d / "atomics.txt").read_text()
    gpu = next((ln.split(", ") for ln in log if ln.startswith("NVIDIA")), [])
    clk = re.search(r"^CLK sm_mhz=([\d.]+)", out, re.M)
    # atomics.cu prints no device line: the H200's 132 SMs and cc 9.0 are those of run_atomics.sh's build target
    # (-gencode arch=compute_90a) on the card gpu.txt names
    return {"date_utc": log[0] if log else "", "gpu_name": gpu[0] if gpu else "",
            "driver_version": gpu[3] if len(gpu) > 3 else "",
            "nvcc": next((ln for ln in log if ln.startswith("Cuda compilation")), ""),
            "build": "nvcc -O3 -gencode=arch=compute_90a,code=sm_90a microbench/src/atomics.cu (run_atomics.sh)",
            "clock_control": "none (clocks as found; nothing locked)",
            "sm_clock_probe_mhz": {"clk": float(clk.group(1))} if clk else {},
            "device": {"name": gpu[0] if gpu else "", "sm_count": 132 if gpu and "H200" in gpu[0] else 0,
                       "cc": "9.0"},
            "sections": {"atomics": "ok" if "status no error" in out else "failed"}}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    doc = parse((d / "atomics.txt").read_text())
    doc["provenance"] = provenance(d)
    doc["source"] = f"microbench/src/atomics.cu on an NVIDIA H200 (raw: {d.name}/)"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else d / "atomics.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
