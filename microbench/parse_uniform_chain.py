"""Parse microbench/src/uniform_chain.cu's output into a ``warpgraph-microbench/1`` document: UCH lines (one warp,
a dependent chain of add.u32 / mad.lo.u32 / shl.b32 links on warp-uniform operands, u_*, or per-thread ones, v_*):
cycles per PTX link, the mean over 3 launches. ptxas makes two u_iadd links one ULEA (see the run's .sass).
usage: python3 microbench/parse_uniform_chain.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

OPS = {"u_iadd": 0, "u_imad": 1, "u_shf": 2, "v_iadd": 3, "v_imad": 4}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "UCH", ("op",), {"cycles": "cycles_per_link"}, "uniform_chain",
                                      "cycles_per_link", reps_beside=True, codes={"op": OPS})}


if __name__ == "__main__":
    write(sys.argv, "uniform_chain", parse)
