"""Launch records (workloads/microbench/tst_*) of microbench/src/tma_stream.cu for the replay tests
(tests/test_tma_stream_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(132 CTAs of 128 threads, 200 KiB of dynamic shared memory: one CTA per SM; the CTAs whose %smid is in the set
stream). The records stream 128 boxes per SM instead of the card's 512 (the statistic is a rate: bytes per SM
cycle once the pipeline is full; 128 x 16 KiB is ~20 round trips) and keep only the sets whose size does not
depend on how %smid maps to GPCs (one SM, every 4th, every 2nd, all: the model numbers SMs GPC-major, the card
does not). The card's statistic is from launches 1-2 (the region L2-hot); a record's L2 starts cold, so its
first pass over the region (8 of its 128 boxes) comes from DRAM, which the replay's tolerance covers.
usage: python3 microbench/make_tma_stream_records.py RESULTS_DIR [--nvcc nvcc]  (RESULTS_DIR under microbench/results/)"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

SMEM = 200 * 1024
K, REGION, NBOX = 4096, 8, 128
ROWS = -(-132 * REGION // 64) * 128            # the host code's tensor: 64 boxes across each 128-row block
# (stride, limit, distinct, stages)
CASES = [(s, lim, d, st) for s, lim in ((1, 1), (4, 132), (2, 132), (1, 132))
         for d in (1, 0) for st in (4, 8) if not (lim == 1 and d == 0)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results_dir")
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    results = f"microbench/results/{a.results_dir.rstrip('/')}/tma_stream.json"
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "tma_stream.cu")), nvcc_version(a.nvcc)
    for stride, limit, distinct, stages in CASES:
        sms = len(range(0, limit, stride))
        name = f"tst_sm{sms}_{'own' if distinct else 'same'}_st{stages}"
        hw = {"results": results, "bench": "tma_stream",
              "params": {"sms": sms, "stride": stride, "limit": limit, "distinct": distinct, "stages": stages,
                         "nbox": 512}}
        what = (f"STREAM sms={sms} stride={stride} limit={limit} distinct={distinct} stages={stages} nbox={NBOX}: "
                "out[cta * 5 + {0..4}] = cycles, globaltimer start / end, SM id, streamed")
        write_record(name, ptx, "tma_stream", src="tma_stream.cu", generator="microbench/make_tma_stream_records.py",
                     what=what, hardware=hw, compiler=nv, grid=(132, 1, 1), block=(128, 1, 1), shared_bytes=SMEM,
                     buffers={"t": {"dtype": "float16", "shape": [ROWS, K], "init": "zeros"},
                              "out": {"dtype": "uint64", "shape": [132 * 5], "init": "poison"}},
                     params=[{"tensormap": {"buffer": "t", "box": [128, 64], "swizzle_bytes": 128,
                                            "oob_fill": "zero"}},
                             {"ptr": "out"}, {"u32": NBOX}, {"u32": stages}, {"u32": REGION}, {"u32": distinct},
                             {"u32": stride}, {"u32": limit}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
