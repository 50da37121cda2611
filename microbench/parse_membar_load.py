"""Parse microbench/src/membar_load.cu's output (MBL / CTA lines) into membar_load.json: per case (grid, fencers,
bytes, flags), the mean over the launches (reps) of each per-launch median (fence, done_f, done_o: cycles), the
reps' spread, and per fencing CTA the CTA lines of the two cases that print them.
usage: python3 microbench/parse_membar_load.py OUTDIR"""
import json, re, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps  # noqa: E402

IDENT = ("grid", "fencers", "bytes", "flags")
STATS = {"fence_med": "fence", "done_f": "done_f", "done_o": "done_o", "fence_min": "fence_min",
         "fence_max": "fence_max"}


def parse(text: str) -> dict:
    ctas: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag != "CTA":
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        key = " ".join(f"{k}={kv[k]}" for k in IDENT)
        ctas.setdefault(key, []).append({k: (float(kv[k]) if k in ("fence", "done") else int(kv[k]))
                                         for k in ("block", "smid", "fenced", "fence", "done")})
    return {"results": mean_over_reps(text, "MBL", IDENT, STATS, "mbl", "fence", {"flags": "0"}), "ctas": ctas}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "membar_load.txt").read_text())
    res["source"] = "microbench/src/membar_load.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "membar_load.json").write_text(json.dumps(res, indent=1))
