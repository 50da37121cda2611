"""Turn one device run of device_run.sh (hw/run.json, hw/ncu.csv, smi/versions) into measured.json files next to
the full-size gallery records (workloads/records/h200_gallery/<name>/), in the calibration set's format.

Provenance: adapted from /work/shared/calibration/measure/make_records.py (same fields and metric names).
usage: python3 make_measured.py HWDIR [RECORDS_DIR]
"""
import csv
import io
import json
import os
import sys


def ncu_rows(path):
    lines = [ln for ln in open(path).read().splitlines() if ln.startswith('"')]
    r = list(csv.reader(io.StringIO("\n".join(lines))))
    return [dict(zip(r[0], row)) for row in r[2:]]   # r[1]: units


def num(d, k):
    v = d.get(k)
    if v in (None, "", "n/a"):
        return None
    return float(v.replace(",", ""))


def main(hw, rec_dir):
    runs = {r["dir"]: r for r in json.load(open(os.path.join(hw, "run.json")))}
    order = [r for r in json.load(open(os.path.join(hw, "ncu_run.json"))) if "error" not in r]
    rows = ncu_rows(os.path.join(hw, "ncu.csv"))
    if len(rows) != len(order):
        raise SystemExit(f"{len(rows)} ncu rows for {len(order)} launches")
    smi = open(os.path.join(hw, "smi_before.csv")).read().splitlines()
    smi_after = open(os.path.join(hw, "smi_after.csv")).read().splitlines()
    versions = open(os.path.join(hw, "versions.txt")).read().strip().splitlines()
    date = open(os.path.join(hw, "date.txt")).read().strip()
    n = 0
    for launch, d in zip(order, rows):
        kname = d.get("Kernel Name", "")
        if kname and kname != launch["entry"]:
            raise SystemExit(f"ncu row {kname!r} does not match launch {launch['entry']!r} ({launch['dir']})")
        run = runs.get(launch["dir"], {})
        meas = {
            "gpu": f"NVIDIA H200 (132 SMs); nvidia-smi before: {smi[-1] if smi else '?'}; after: "
                   f"{smi_after[-1] if smi_after else '?'}; clocks not locked",
            "date": date,
            "software": versions,
            "tool": "Nsight Compute --clock-control none --cache-control all (cold L2); record launched from its "
                    "PTX through the driver API (microbench/gallery/run_gallery_gpu.py)",
            "cycles": num(d, "gpc__cycles_elapsed.max"),
            "sm_clock_hz": num(d, "sm__cycles_elapsed.avg.per_second"),
            "duration_ns": num(d, "gpu__time_duration.sum"),
            "sass_warp_instructions": num(d, "smsp__inst_executed.sum"),
            "achieved_occupancy_pct": num(d, "sm__warps_active.avg.pct_of_peak_sustained_active"),
            "dram_read_bytes": num(d, "dram__bytes_read.sum"),
            "dram_write_bytes": num(d, "dram__bytes_write.sum"),
            "l2_bytes": num(d, "lts__t_bytes.sum"),
            "registers_per_thread": num(d, "launch__registers_per_thread"),
            "stall_ratios_per_issue": {
                k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""): num(d, k)
                for k in d if k.startswith("smsp__average_warps_issue_stalled_")},
            "event_timed_median_us": run.get("event_timed_median_us"),
            "hardware_output_rel_err": {k: v["rel_err"] for k, v in run.get("outputs", {}).items()} or None,
            "hardware_check_ok": run.get("check_ok"),
        }
        od = os.path.join(rec_dir, launch["dir"])
        json.dump(meas, open(os.path.join(od, "measured.json"), "w"), indent=1)
        n += 1
    print("measured", n)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "workloads", "records",
                                                                         "h200_gallery"))
