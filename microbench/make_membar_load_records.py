"""Launch records (workloads/microbench/mbl_*) of microbench/src/membar_load.cu's k_mbl for the replay tests
(tests/test_membar_load_replay.py): the PTX the H200 ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code
does (1 CTA per SM: 32 threads, 150 KiB dynamic shared memory), 64 timed iterations instead of 256. Each record's
source.hardware names its line in microbench/results/h200_membar_load_2026-12-04/membar_load.json.
usage: python3 microbench/make_membar_load_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_membar_load_2026-12-04/membar_load.json"
ENTRY = "_Z5k_mblPKcPyjjjjS0_"
DYN = 150 * 1024
ITERS = 64
# (grid, fencers, bytes, flags): lone fencer, a whole GPU fencing, fencers among copiers / idle CTAs, copy sizes
CASES = [(2, 2, 16384, 0), (132, 1, 16384, 0), (132, 132, 16384, 0), (132, 33, 16384, 0), (132, 33, 16384, 2),
         (132, 33, 16384, 4), (132, 132, 16384, 1), (2, 2, 4096, 0), (132, 132, 4096, 0), (2, 2, 32768, 0),
         (132, 132, 32768, 0), (66, 66, 16384, 0), (132, 0, 16384, 0), (132, 0, 32768, 0),
         # DRAM-missing copies: the others' (32), the fencers' (16), both (48)
         (132, 0, 16384, 32), (132, 132, 16384, 16), (132, 1, 16384, 32), (132, 1, 16384, 48), (132, 33, 16384, 36),
         # controls: the same CTAs without the fence (their own copy's time under that load)
         (132, 33, 16384, 100), (132, 132, 16384, 64)]
# section hit_density (run_l2_hit_density.sh): 33 L2-resident copiers (spread) among N DRAM streams, copy time (100)
# and the fence behind it (36); their own results file
DENSITY_RESULTS = "microbench/results/h200_l2_hit_density_2026-12-05/membar_load.json"
DENSITY = [(33 + n, 33, 16384, fl) for n in (0, 4, 8, 16, 33, 66) for fl in (100, 36)]


def name(g, f, b, fl):
    return f"mbl_g{g}_f{f}_b{b // 1024}k" + (f"_x{fl}" if fl else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "membar_load.cu"))
    nv = nvcc_version(a.nvcc)
    for (g, f, b, fl), results in [(c, RESULTS) for c in CASES] + [(c, DENSITY_RESULTS) for c in DENSITY]:
        write_record(name(g, f, b, fl), ptx, ENTRY, src="membar_load.cu",
                     generator="microbench/make_membar_load_records.py",
                     what=f"MBL grid={g} fencers={f} bytes={b} flags={fl}: out[4b] = 100 x mean fence cycles, "
                          "out[4b+1] = 100 x mean cycles until the copy is seen complete",
                     hardware={"results": results, "bench": "mbl",
                               "params": {"grid": g, "fencers": f, "bytes": b, "flags": fl}},
                     compiler=nv, grid=(g, 1, 1), block=(32, 1, 1), shared_bytes=DYN,
                     buffers={"src": {"dtype": "uint8", "shape": [512 * 16384], "init": "zeros",
                                      "l2_resident": True},   # the host's cudaMemset
                              "out": {"dtype": "uint64", "shape": [4 * g], "init": "poison"},
                              # each CTA's own (ITERS + 8) x 16 KiB, read once: DRAM misses (flags 16 / 32)
                              "cold": {"dtype": "uint8", "shape": [g * (ITERS + 8) * 16384 if fl & 48 else 16],
                                       "init": "zeros"}},
                     params=[{"ptr": "src"}, {"ptr": "out"}, {"u32": ITERS}, {"u32": f}, {"u32": b}, {"u32": fl},
                             {"ptr": "cold"}])
    print(f"wrote {len(CASES) + len(DENSITY)} records")


if __name__ == "__main__":
    main()
