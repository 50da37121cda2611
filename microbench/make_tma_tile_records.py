"""Launch records (workloads/microbench/tmt_*) of microbench/src/tma_tile.cu for the replay tests
(tests/test_tma_tile_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(G CTAs of 128 threads, 200 KiB of dynamic shared memory: one CTA per SM). The host code's tensor is 1 GiB; a
record's has at most 64 row blocks of boxes (boxes fill them down the first 64 columns, then the next columns, so
fresh boxes are still never read twice and consecutive boxes are consecutive rows as on the card, whose tensor has
1,024 row blocks; the rows keep the 8 KiB / 128 B pitch), and its multi-CTA cases run 4 reps instead of 16 (the statistic is a median over reps). Each
record's source.hardware names its row of the results file.
usage: python3 microbench/make_tma_tile_records.py RESULTS_DIR [--nvcc nvcc]  (RESULTS_DIR under microbench/results/)"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

SMEM = 200 * 1024
ROWS = 128
# (kind, K, n, fresh, ctas, share, reps): one SM only. The many-SM cases of the program load fresh boxes from DRAM
# together, which on the H100 of the first run says nothing about the H200's memory system (run_pending.sh has
# tma_tile for an H200).
CASES = [(kind, k, n, fresh, 1, 1, 16) for kind, k in (("tile", 4096), ("tile", 64), ("bulk", 4096))
         for n in (1, 2) for fresh in (0, 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results_dir")
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    results = f"microbench/results/{a.results_dir.rstrip('/')}/tma_tile.json"
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "tma_tile.cu")), nvcc_version(a.nvcc)
    for kind, k, n, fresh, g, share, reps in CASES:
        tiles = (g // share) * (reps if fresh else 1) * n          # distinct boxes the case reads
        name = f"tmt_{kind}_k{k}_n{n}_g{g}_s{share}_{'fresh' if fresh else 'hot'}"
        hw = {"results": results, "bench": f"tma_{kind}",
              "params": {"K": k, "n": n, "rows": ROWS, "fresh": fresh, "ctas": g, "share": share}}
        what = (f"{kind.upper()} K={k} n={n} rows={ROWS} fresh={fresh} ctas={g} share={share} reps={reps}: "
                "out[(cta * reps + r) * 3 + {0, 1, 2}] = issue span, completion, SM id")
        common = dict(src="tma_tile.cu", generator="microbench/make_tma_tile_records.py", what=what, hardware=hw,
                      compiler=nv, grid=(g, 1, 1), block=(128, 1, 1), shared_bytes=SMEM)
        out = {"dtype": "uint64", "shape": [g * reps * 3], "init": "poison"}
        if kind == "tile":
            assert -(-tiles // min(tiles, 64)) <= k // 64, "more boxes than the record's tensor holds"
            row_blocks = min(tiles, 64)       # boxes fill rows first, as on the card (its 1,024 row blocks)
            write_record(name, ptx, "tma_tile", **common,
                         buffers={"t": {"dtype": "float16", "shape": [row_blocks * ROWS, k], "init": "zeros"},
                                  "out": out},
                         params=[{"tensormap": {"buffer": "t", "box": [ROWS, 64], "swizzle_bytes": 128,
                                                "oob_fill": "zero"}},
                                 {"ptr": "out"}, {"u32": n}, {"u32": ROWS}, {"u32": reps}, {"u32": fresh},
                                 {"u32": share}, {"u32": row_blocks}])
        else:
            write_record(name, ptx, "tma_bulk", **common,
                         buffers={"src": {"dtype": "uint8", "shape": [tiles * ROWS * 128], "init": "zeros"},
                                  "out": out},
                         params=[{"ptr": "src"}, {"ptr": "out"}, {"u32": n}, {"u32": ROWS}, {"u32": reps},
                                 {"u32": fresh}, {"u32": share}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
