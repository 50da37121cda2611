"""Launch records (workloads/microbench/csync_*) of microbench/src/cluster_sync.cu kernels for the replay tests
(tests/test_cluster_sync_replay.py): the same PTX the H200 ran (nvcc -ptx -arch=sm_90a -O3, one .entry each),
launched as the host code does (clusters of 2, 64 threads, 150 KiB dynamic shared memory, grid 2): FENCE cases,
the PING remote-arrive ping-pong (relaxed / release) and CBAR round trips.
source.hardware names the result in microbench/results/h200_cluster_sync_2026-12-03/cluster_sync.json.
usage: python3 microbench/make_cluster_sync_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_cluster_sync_2026-12-03/cluster_sync.json"
OPS = ["none", "arrive_cta", "arrive_rel_cl_local", "arrive_rel_cl_remote", "arrive_rlx_cl_remote", "fence_cta",
       "fence_cluster", "fence_gpu", "fence_proxy_async"]
CONDS = ["idle", "own_bulk", "own_store", "peer_stream"]
DYN = 150 * 1024
ITERS = 64


def records():
    R = []
    for op, cond in [("fence_gpu", "idle"), ("arrive_rel_cl_remote", "idle"), ("arrive_rlx_cl_remote", "idle"),
                     ("fence_cta", "idle"), ("arrive_rel_cl_local", "own_bulk"), ("fence_gpu", "own_store"),
                     ("arrive_rel_cl_local", "peer_stream")]:
        o, c = OPS.index(op), CONDS.index(cond)
        R.append(dict(name=f"csync_fence_{op}_{cond}", entry=f"_Z7k_fenceILi{o}ELi{c}EEvPKcPjPyj", block=64,
                      buffers={"src": {"dtype": "uint8", "shape": [512 * 16384], "init": "zeros",
                                              "l2_resident": True},   # the host's cudaMemset
                               "gsink": {"dtype": "uint32", "shape": [64 * 2], "init": "zeros"},
                               "out": {"dtype": "uint64", "shape": [8], "init": "poison"}},
                      params=[{"ptr": "src"}, {"ptr": "gsink"}, {"ptr": "out"}, {"u32": ITERS}],
                      what=f"FENCE op={op} cond={cond}: out[4b] = 100 x mean cycles of the op between two %clock64",
                      hw={"bench": "fence", "params": {"op": op, "cond": cond, "grid": "2"}, "stat": "cycles"}))
    # PING: rank 0 / rank 1 thread 0 alternately arrive on the other CTA's mbarrier (remote, .release.cluster or
    # .relaxed.cluster) and try_wait.acquire.cluster on their own; out[0] = 100 x cycles per round trip (rank 0)
    # (local: warp 0 <-> warp 1 of rank 0, mbarrier.arrive.shared::cta; replayed as an xfail: H200 bimodal 240 / 390)
    for i, op in enumerate(["rel", "rlx", "local"]):
        R.append(dict(name=f"csync_ping_{op}", entry=f"_Z6k_pingILi{i}EEvPyj", block=64,
                      buffers={"out": {"dtype": "uint64", "shape": [2], "init": "poison"}},
                      params=[{"ptr": "out"}, {"u32": ITERS}],
                      what=f"PING op={op}: out[0] = 100 x cycles per mbarrier arrive ping-pong round trip (rank 0)",
                      hw={"bench": "ping", "params": {"op": op}, "stat": "cycles"}))
    for i, sem in enumerate(["rel", "rlx"]):
        R.append(dict(name=f"csync_cbar_{sem}", entry=f"_Z6k_cbarILi{i}EEvPyj", block=128, dyn=0,
                      buffers={"out": {"dtype": "uint64", "shape": [1], "init": "poison"}},
                      params=[{"ptr": "out"}, {"u32": 256}],
                      what=f"CBAR sem={sem} C=2 threads=128: out[0] = 100 x cycles per arrive+wait",
                      hw={"bench": "cbar", "params": {"sem": sem, "C": "2", "threads": "128"}, "stat": "cycles"}))
    return R


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "cluster_sync.cu"))
    nv = nvcc_version(a.nvcc)
    for r in records():
        write_record(r["name"], ptx, r["entry"], src="cluster_sync.cu", generator="microbench/make_cluster_sync_records.py",
                     what=r["what"], hardware={"results": RESULTS, **r["hw"]}, compiler=nv, grid=(2, 1, 1),
                     block=(r["block"], 1, 1), cluster=(2, 1, 1), shared_bytes=r.get("dyn", DYN), buffers=r["buffers"],
                     params=r["params"])
    print(f"wrote {len(records())} records")


if __name__ == "__main__":
    main()
