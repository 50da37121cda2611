"""Timing records of the cluster GEMM (issue 19: where the H200's stage-release fences spend their cycles in situ).

`nvcc -arch=sm_90a -DCG_TIMING -ptx microbench/src/cluster_gemm.cu`: the kernel of the bundled records with one more
parameter, `tim` (u64 [grid x 10]), into which thread 0 of every CTA writes %clock64 sums of its k loop once at the
end (no memory operation inside the loop). Three fence variants per size, as the bundled records: `rel` (both stage
releases `.release.cluster`: MEMBAR.ALL.GPU each), `rlxremote` (the remote one `.relaxed`), `rlx` (both relaxed);
`relsync` / `rlxsync`: `rel` / `rlx` built with -DCG_SYNC_AFTER (the other warps wait at a bar.sync after thread 0's
release and refill instead of at the next wgmma); `relspin500` / `relspin1500`: `rel` with 500 / 1,500 cycles of spin
before the local release; `relnomc` / `rlxnomc`: each CTA loads its whole B tile (no multicast); `relnomma`: a
600-cycle spin instead of the wgmma (no check).
Not calibration records (no measured.json; the kernel differs from the bundled one by the clock reads and the
mbarrier.test_wait probes). Run them with
    python3 microbench/cluster_gemm/run_records_gpu.py --reps 3 --seeds 1 --dump tim:DIR OUT/h200_cluster_timing
and summarise DIR with microbench/cluster_gemm/parse_timing.py. Needs nvcc; stdlib only.
usage: python3 microbench/cluster_gemm/make_timing_record.py OUT [SIZE ...]   (default 2048 4096)
With CG_GRIDS="2 16 66 132" (environment) it also writes the 2048 `rel` and `rlx` records launched on only that many
CTAs (`..._g<G>`: the first G / 2 clusters, the same tiles; their output is partial, run them with --no-check): how
the fence costs with the number of SMs running the kernel.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_record  # noqa: E402  (the bundled records' launch parameters)

NT = int(re.search(r"#define CG_NT (\d+)", open(make_record.SRC).read()).group(1))   # sums per CTA in `tim`
LOCAL = "mbarrier.arrive.release.cluster.shared::cta.b64"
REMOTE = "mbarrier.arrive.release.cluster.shared::cluster.b64"
VARIANTS = {"rel": [], "rlxremote": [REMOTE], "rlx": [LOCAL, REMOTE], "relsync": [], "rlxsync": [LOCAL, REMOTE],
            "relspin500": [], "relspin1500": [], "relnomc": [], "rlxnomc": [LOCAL, REMOTE], "relnomma": []}
DEFINES = {"relsync": ["-DCG_SYNC_AFTER"], "rlxsync": ["-DCG_SYNC_AFTER"], "relspin500": ["-DCG_SPIN=500"],
           "relspin1500": ["-DCG_SPIN=1500"], "relnomc": ["-DCG_NOMC"], "rlxnomc": ["-DCG_NOMC"],
           "relnomma": ["-DCG_NOMMA"]}


def timing_ptx(*defines):
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-DCG_TIMING", *defines, "-ptx", "-o", "-", make_record.SRC],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr)
    return r.stdout


def _write(d, rec, ptx):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "kernel.ptx"), "w").write(ptx)
    json.dump(rec, open(os.path.join(d, "launch.json"), "w"), indent=1)
    print("wrote", d)


def _on_grid(rec, grid, **extra):
    """``rec`` launched on ``grid`` CTAs, its `tim` buffer sized to them."""
    r = dict(rec, grid=[grid, 1, 1], **extra)
    r["buffers"] = dict(rec["buffers"], tim={"dtype": "uint64", "shape": [grid * NT], "init": "zeros"})
    return r


def main(out, sizes):
    ptxs = {v: timing_ptx(*DEFINES.get(v, [])) for v in VARIANTS}
    ver = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2]
    for n in sizes:
        _, rec = make_record.record(n, ver)
        for v, relax in VARIANTS.items():
            text = ptxs[v]
            for s in relax:
                assert s in text, s
                text = text.replace(s, s.replace(".release.", ".relaxed."))
            name = f"cluster_gemm_timing_{v}_M{n}"
            r = _on_grid(rec, rec["grid"][0], name=name)
            if v == "relnomma":
                r["check"] = None      # no product: a spin stands for the wgmma
            r["source"] = dict(rec["source"], command="nvcc -arch=sm_90a -DCG_TIMING -ptx",
                               generator="microbench/cluster_gemm/make_timing_record.py", variant=v)
            r["params"] = rec["params"] + [{"ptr": "tim"}]
            _write(os.path.join(out, "h200_cluster_timing", name), r, text)
            if n == 2048 and v in ("rel", "rlx"):
                for g in os.environ.get("CG_GRIDS", "").split():
                    rg = _on_grid(r, int(g), name=f"{name}_g{g}", check=None)
                    _write(os.path.join(out, "h200_cluster_timing_grids", rg["name"]), rg, text)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], [int(x) for x in sys.argv[2:]] or [2048, 4096])
