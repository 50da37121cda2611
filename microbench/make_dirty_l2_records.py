"""Launch records (workloads/microbench/dirty_row_*) of microbench/src/dirty_l2.cu's ROW section for the replay tests
(tests/test_dirty_l2_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(G CTAs of 128 threads walking rows b, b + G, ... of an 8192 x 3000 fp32 matrix: 24 scalar loads a thread, a sum over
the CTA, then flags 0 writes the row to an output matrix, 1 writes nothing, 2 writes it into two rows of the CTA's
own). ``clocks[66 b + k]`` = CTA b's %clock64 at the start of its row k (k < 64), ``clocks[66 b + 64]`` its end. The
card's runs start from an L2 full of clean lines (pre=clean), as the model's cold L2. Each record's source.hardware
names its row of the results document.
usage: python3 microbench/make_dirty_l2_records.py [--nvcc nvcc] [--results PATH]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

COLS, ROWS, STRIDE = 3000, 8192, 66
# (CTAs, rows, flags): the card's cases on 132 SMs (1, 2, 4 and 16 CTAs an SM); then a small launch for the default
# test suite (one CTA an SM, 8 rows each: the model with a smaller L2; no card run)
CASES = [(132, ROWS, 0), (132, ROWS, 2), (264, ROWS, 0), (264, ROWS, 1), (264, ROWS, 2), (528, ROWS, 0),
         (528, ROWS, 1), (2112, ROWS, 0), (2112, ROWS, 1), (132, 1056, 0), (132, 1056, 2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--results", default="microbench/results/h100_dirty_l2_2026-12-07/dirty_l2.json")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "dirty_l2.cu")), nvcc_version(a.nvcc)
    for g, rows, fl in CASES:
        name = f"dirty_row_g{g}_f{fl}" if rows == ROWS else f"dirty_row_g{g}_r{rows}_f{fl}"
        hw = ({"results": a.results, "bench": "row",
               "params": {"grid": g, "cols": COLS, "rows": rows, "flags": fl, "pre": 0}} if rows == ROWS else
              {"results": a.results, "bench": "row", "params": None,
               "note": "model-only: no card run of this shape (tests/test_dirty_l2_replay.py runs it with a smaller L2)"})
        write_record(name, ptx, "k_row", src="dirty_l2.cu",
                     generator="microbench/make_dirty_l2_records.py",
                     what=f"ROW grid={g} cols={COLS} rows={rows} flags={fl} pre=clean: clocks[66b + k] = CTA b's clock "
                          "at the start of its row k, clocks[66b + 64] its end",
                     hardware=hw,
                     compiler=nv, grid=(g, 1, 1), block=(128, 1, 1), shared_bytes=0,
                     buffers={"in": {"dtype": "float32", "shape": [rows, COLS], "init": {"normal": 1.0}},
                              "out": {"dtype": "float32", "shape": [rows, COLS], "init": "zeros"},
                              "clocks": {"dtype": "uint64", "shape": [STRIDE * g], "init": "poison"}},
                     params=[{"ptr": "in"}, {"ptr": "out"}, {"ptr": "clocks"}, {"u32": rows}, {"u32": COLS},
                             {"u32": fl}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
