"""Parse microbench/src/mio_mix.cu's output (MIX lines) into a ``warpgraph-microbench/1`` document: per mix and
warps, the median over the launches of the SM cycles per iteration per warp.
usage: python3 microbench/parse_mio_mix.py OUTDIR [OUT.json]"""
import re, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import write  # noqa: E402


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag != "MIX":
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        key = (kv["mode"], int(kv["warps"]))
        rows.setdefault(key, []).append(float(kv["cycles"]))
    return {"schema": "warpgraph-microbench/1",
            "results": [{"bench": "mio_mix", "params": {"mode": m, "warps": w},
                         "stats": {"cycles": statistics.median(v)}, "raw": v} for (m, w), v in rows.items()]}


if __name__ == "__main__":
    write(sys.argv, "mio_mix", parse)
