"""Turn one device run of microbench/cluster_gemm/device_run.sh (its hw_cluster/ or hw_large/ folder: run.json,
ncu_run.json, ncu.csv, smi/versions/date) into measured.json files next to the records, in the calibration
set's format (same fields and metric names as workloads/records/h200/*/measured.json), plus the event-timed
repetitions and the extra output checks on fresh random inputs.

Reuses microbench/gallery/make_measured.py (imported by path) and rewrites its `tool` line.
usage: python3 microbench/cluster_gemm/make_measured.py HWDIR RECORDS_DIR
   e.g. ... hw_cluster workloads/records/h200_cluster ; ... hw_large workloads/records/h200_large
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gallery_make_measured", os.path.join(HERE, "..", "gallery", "make_measured.py"))
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)

TOOL = ("Nsight Compute 2025.3.1 --clock-control none --cache-control all (cold L2); record launched from its PTX "
        "through the driver API (cuLaunchKernelEx with the record's cluster dimension: "
        "microbench/cluster_gemm/run_records_gpu.py)")


def main(hw, rec_dir):
    M.main(hw, rec_dir)
    runs = {r["dir"]: r for r in json.load(open(os.path.join(hw, "run.json"))) if "dir" in r}
    for d, run in runs.items():
        f = os.path.join(rec_dir, d, "measured.json")
        if not os.path.exists(f):
            continue
        m = json.load(open(f))
        m["tool"] = TOOL
        m["event_timed_us"] = run.get("event_timed_us")
        m["more_output_checks"] = [{"seed": c.get("seed"), "ok": c.get("check_ok"),
                                    "rel_err": {k: v["rel_err"] for k, v in (c.get("outputs") or {}).items()}}
                                   for c in run.get("more_checks", [])]
        json.dump(m, open(f, "w"), indent=1)
        print(d, "cycles", m["cycles"], "MHz", round(m["sm_clock_hz"] / 1e6), "ok", m["hardware_check_ok"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
