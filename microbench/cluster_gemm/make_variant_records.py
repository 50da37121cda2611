"""Records of the cluster GEMM with its stage-release arrives relaxed (issue 19: what the MEMBAR.ALL.GPU of a
`.release.cluster` arrive costs in situ), from one device run (microbench/results/h200_cluster_gemm_variants_2026-12-03):
the bundled records' kernel.ptx with `sed` applied on the device (rlxremote: the remote
`mbarrier.arrive.release.cluster.shared::cluster` -> `.relaxed.cluster`; rlx: both arrives), each checked against
torch (run.json), timed and measured with Nsight Compute (--clock-control none --cache-control all; cycles, clock,
duration, instructions, WarpStateStats only). `rerun` (the unchanged PTX, same session) stays a result, not a record.
usage: python3 microbench/cluster_gemm/make_variant_records.py"""
import csv, io, json, os, shutil, tarfile, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HW = os.path.join(ROOT, "microbench", "results", "h200_cluster_gemm_variants_2026-12-03")
DEST = os.path.join(ROOT, "workloads", "records", "h200_cluster")
DEVICE_NAMES = {"cluster_gemm_tma_mc2_rerun": "a_base", "cluster_gemm_tma_mc2_rlxremote": "b_half",
                "cluster_gemm_tma_mc2_rlx": "c_rlx"}   # folder names in gemm_variants_ptx.tar.gz


def num(d, k):
    v = (d.get(k) or "").replace(",", "")
    try:
        return float(v)
    except ValueError:
        return None


def main():
    lines = [l for l in open(os.path.join(HW, "ncu.csv")).read().splitlines() if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    ncu = [dict(zip(rows[0], r)) for r in rows[2:]]
    order = json.load(open(os.path.join(HW, "ncu_run.json")))
    runs = {r["dir"]: r for r in json.load(open(os.path.join(HW, "run.json")))}
    assert len(ncu) == len(order)
    smi = open(os.path.join(HW, "smi_before.csv")).read().splitlines()[-1]
    smi_after = open(os.path.join(HW, "smi_after.csv")).read().splitlines()[-1]
    tmp = tempfile.mkdtemp()
    tarfile.open(os.path.join(HW, "gemm_variants_ptx.tar.gz")).extractall(tmp)
    for launch, d in zip(order, ncu):
        name = launch["dir"]
        if "_rerun_" in name:
            continue
        prefix = name[: name.index("_M")]
        src = os.path.join(tmp, "h200_cluster", DEVICE_NAMES[prefix] + name[len(prefix):])
        out = os.path.join(DEST, name)
        os.makedirs(out, exist_ok=True)
        shutil.copy(os.path.join(src, "kernel.ptx"), out)
        lj = json.load(open(os.path.join(src, "launch.json")))
        lj["name"] = name
        json.dump(lj, open(os.path.join(out, "launch.json"), "w"), indent=1)
        run = runs[name]
        meas = {"gpu": f"NVIDIA H200 (132 SMs); nvidia-smi before: {smi}; after: {smi_after}; clocks not locked",
                "date": open(os.path.join(HW, "date.txt")).read().strip(),
                "tool": "Nsight Compute --clock-control none --cache-control all (cold L2); record launched from its "
                        "PTX through the driver API (microbench/cluster_gemm/run_records_gpu.py)",
                "cycles": num(d, "gpc__cycles_elapsed.max"), "sm_clock_hz": num(d, "sm__cycles_elapsed.avg.per_second"),
                "duration_ns": num(d, "gpu__time_duration.sum"),
                "sass_warp_instructions": num(d, "smsp__inst_executed.sum"),
                "stall_ratios_per_issue": {
                    k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""): num(d, k)
                    for k in sorted(d) if k.startswith("smsp__average_warps_issue_stalled_")
                    and k.endswith("_per_issue_active.ratio")},
                "event_timed_us": run.get("event_timed_us"), "event_timed_median_us": run.get("event_timed_median_us"),
                "hardware_check_ok": run.get("check_ok"),
                "hardware_output_rel_err": {k: v["rel_err"] for k, v in (run.get("outputs") or {}).items()}}
        json.dump(meas, open(os.path.join(out, "measured.json"), "w"), indent=1)
        print(name, meas["cycles"], meas["sm_clock_hz"])


if __name__ == "__main__":
    main()
