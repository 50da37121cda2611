"""Summarise the cluster GEMM timing records (microbench/cluster_gemm/make_timing_record.py): per record, the mean
cycles per k iteration of thread 0 of every CTA, and for the first wave (CTAs < 132) and the rest.
usage: python3 microbench/cluster_gemm/parse_timing.py DIR   (the .npy files of run_records_gpu.py --dump tim:DIR)"""
import json
import os
import sys

import numpy as np

NAMES = ["stage_wait", "wgmma_bar", "local_release", "remote_release", "empty_wait", "issue"]
NT = 10   # sums per CTA in `tim` (CG_NT of microbench/src/cluster_gemm.cu; the last one counts the iterations)


def summary(t):
    """Per-iteration phase means (and the rest below) of a `tim` buffer: the device's dump, or a simulation's output
    (tests/test_cluster_gemm_timing_replay.py)."""
    t = np.asarray(t).astype(np.uint64).reshape(-1, NT).astype(np.float64)
    it = t[:, 9:10]
    per = t[:, :6] / it
    out = {k: round(float(per[:, j].mean()), 1) for j, k in enumerate(NAMES)}
    out["local_release_p10_p50_p90"] = [round(float(x), 1) for x in np.percentile(per[:, 2], [10, 50, 90])]
    out["remote_release_p10_p50_p90"] = [round(float(x), 1) for x in np.percentile(per[:, 3], [10, 50, 90])]
    out["local_release_max"] = float(t[:, 6].max())
    out["pending_copies_at_local_release"] = round(float((t[:, 7:8] / it).mean()), 3)
    out["pending_copies_at_remote_release"] = round(float((t[:, 8:9] / it).mean()), 3)
    out["iteration"] = round(float(per[:, :6].sum(axis=1).mean()), 1)
    out["ctas"] = int(t.shape[0])
    return out


def main(d):
    res = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".npy"):
            continue
        t = np.load(os.path.join(d, f)).view(np.uint64)
        n = t.size // NT
        res[f[:-4]] = {"all": summary(t), "wave1": summary(t[: min(n, 132) * NT]),
                       "later": summary(t[132 * NT:]) if n > 132 else None}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
