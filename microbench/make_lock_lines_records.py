"""Launch records (workloads/microbench/lkl_*, cln_*) of microbench/src/lock_lines.cu for the replay tests
(tests/test_lock_lines_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does.
LKL: G CTAs of 128 threads take lock (b % locks) once (Triton's spin loop), lock words ``stride`` words apart, with or
without the two-row critical section; compared on kernel cycles (the host's cudaEvent time x the SM clock). CLN: G
one-warp CTAs, lane 0 issues K one-lane ``atom.cas`` that always fail on word (b % words) of one line; compared on
the longest CTA's %clock64 span (``cyc``). Each record's source.hardware names its row of
microbench/results/h200_pending_2026-12-05/lock_lines/lock_lines.json.
usage: python3 microbench/make_lock_lines_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_pending_2026-12-05/lock_lines/lock_lines.json"
LKL_ENTRY = "_Z10lock_linesPiiiP6float4iPj"
CLN_ENTRY = {0: "_Z8cas_lineILi0EEvPjiiPxS0_", 1: "_Z8cas_lineILi1EEvPjiiPxS0_"}
# (G, locks, stride, cs): the layer-norm backward shape (4,096 CTAs, 64 locks packed in two lines) and its neighbours
LKL = [(4096, 64, 1, 1), (4096, 64, 32, 1), (4096, 64, 1, 0), (4096, 64, 32, 0), (4096, 8, 1, 0), (4096, 8, 32, 0),
       (1320, 64, 1, 1), (1320, 64, 32, 1), (1320, 8, 32, 0), (4096, 256, 1, 1), (1320, 8, 1, 0), (1320, 8, 1, 1)]
# (acqrel, G, words, K)
CLN = [(0, 1056, 32, 64), (0, 1056, 1, 64), (0, 264, 32, 64), (1, 1056, 32, 16), (0, 1, 1, 64), (1, 1, 1, 16),
       (1, 1056, 1, 16), (1, 528, 32, 16)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "lock_lines.cu")), nvcc_version(a.nvcc)
    for g, nl, st, cs in LKL:
        write_record(f"lkl_g{g}_l{nl}_s{st}_cs{cs}", ptx, LKL_ENTRY, src="lock_lines.cu",
                     generator="microbench/make_lock_lines_records.py",
                     what=f"LKL G={g} locks={nl} stride={st} cs={cs}: kernel cycles (compare with kernel_cycles)",
                     hardware={"results": RESULTS, "bench": "lock_lines",
                               "params": {"G": g, "locks": nl, "stride": st, "cs": cs}},
                     compiler=nv, grid=(g, 1, 1), block=(128, 1, 1), shared_bytes=0,
                     buffers={"locks": {"dtype": "int32", "shape": [1 << 18], "init": "zeros"},
                              "rows": {"dtype": "float32", "shape": [256 * 4096 * 4], "init": "zeros"},
                              "spins": {"dtype": "uint32", "shape": [g], "init": "poison"}},
                     params=[{"ptr": "locks"}, {"u32": st}, {"u32": nl}, {"ptr": "rows"}, {"u32": cs},
                             {"ptr": "spins"}])
    for ar, g, w, k in CLN:
        write_record(f"cln_a{ar}_g{g}_w{w}_k{k}", ptx, CLN_ENTRY[ar], src="lock_lines.cu",
                     generator="microbench/make_lock_lines_records.py",
                     what=f"CLN acqrel={ar} G={g} words={w} K={k}: cyc[b] = CTA b's %clock64 span (compare the "
                          "longest with cycles)",
                     hardware={"results": RESULTS, "bench": "cas_line",
                               "params": {"acqrel": ar, "G": g, "words": w, "K": k}},
                     compiler=nv, grid=(g, 1, 1), block=(32, 1, 1), shared_bytes=0,
                     buffers={"line": {"dtype": "uint32", "shape": [1024], "init": "zeros"},
                              "cyc": {"dtype": "int64", "shape": [g], "init": "poison"},
                              "sink": {"dtype": "uint32", "shape": [16], "init": "zeros"}},
                     params=[{"ptr": "line"}, {"u32": w}, {"u32": k}, {"ptr": "cyc"}, {"ptr": "sink"}])
    print(f"wrote {len(LKL) + len(CLN)} records")


if __name__ == "__main__":
    main()
