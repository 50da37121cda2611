"""Merge the per-section JSON files that build/bench wrote into one results file with provenance.

usage: python3 microbench/collect.py RAW_DIR OUT.json     (stdlib only: runs on the device machine)
"""
import glob, json, os, re, subprocess, sys

SCHEMA = "warpgraph-microbench/1"


def clocks(text):
    """Parse `nvidia-smi -q -d CLOCK` into {section: {clock: value}}."""
    out, sec = {}, None
    for line in text.splitlines():
        if not line.strip() or line.startswith("="):
            continue
        indent = len(line) - len(line.lstrip())
        if ":" in line:
            k, v = [x.strip() for x in line.split(":", 1)]
            if v == "" and indent >= 4:
                sec = k
                out.setdefault(sec, {})
            elif sec and v:
                out[sec][k] = v
    return out


def main(raw, dst):
    rd = lambda n: open(os.path.join(raw, n)).read() if os.path.exists(os.path.join(raw, n)) else ""
    smi = rd("nvidia_smi_q.txt")
    grab = lambda key: (re.search(rf"^\s*{key}\s*:\s*(.+)$", smi, re.M) or [None, None])[1]
    results, errors, device = [], [], {}
    sections = {}
    for f in sorted(glob.glob(os.path.join(raw, "part_*.json"))):
        name = os.path.basename(f)[5:-5]
        try:
            d = json.load(open(f))
        except Exception as e:  # a section that crashed or timed out
            errors.append(f"{name}: unreadable ({e})")
            sections[name] = "failed"
            continue
        device = d.get("device", device)
        for r in d["results"]:
            r["section"] = name
            results.append(r)
        errors += [f"{name}: {e}" for e in d.get("errors", [])]
        # a standalone program's parsed results (run_all.sh, standalone_results.py) carry their own status
        sections[name] = ((d.get("provenance") or {}).get("sections") or {}).get(name, "ok")
    for f in sorted(glob.glob(os.path.join(raw, "log_*.txt"))):
        name = os.path.basename(f)[4:-4]
        rc = re.findall(r"^rc=(\d+)", open(f).read(), re.M)
        if name not in sections or (rc and rc[-1] != "0"):
            sections[name] = f"failed rc={rc[-1] if rc else '?'}"
            errors.append(f"{name}: exit {rc[-1] if rc else '?'}; see raw log_{name}.txt")
    probes = [r for r in results if r["bench"] == "clock_probe"]
    cb = clocks(rd("clocks_before.txt"))
    ca = clocks(rd("clocks_after.txt"))
    prov = {
        "date_utc": rd("date_utc.txt").strip(),
        "gpu_name": grab("Product Name"),
        "driver_version": grab("Driver Version"),
        "cuda_version_smi": grab("CUDA Version"),
        "vbios": grab("VBIOS Version"),
        "nvcc": (re.findall(r"release [\d.]+, V[\d.]+", rd("nvcc_version.txt")) or [""])[0],
        "build": "nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 microbench/src/bench.cu",
        "clock_control": "none (clocks as found; nothing locked)",
        "clocks_before": cb,
        "clocks_after": ca,
        "sm_clock_probe_mhz": {r["params"]["when"] + ("" if r["params"]["blocks"] == 1 else "_all"): r["stats"]["sm_mhz_median"] for r in probes},
        "device": device,
        "sections": sections,
        "command": "microbench/run_all.sh $OUT",
    }
    mon = rd("smi_monitor.csv").splitlines()
    if len(mon) > 1:
        sm = [float(re.findall(r"[\d.]+", l.split(",")[1])[0]) for l in mon[1:] if re.findall(r"[\d.]+", l.split(",")[1] if "," in l else "")]
        if sm:
            prov["smi_monitor_sm_mhz"] = {"min": min(sm), "max": max(sm), "median": sorted(sm)[len(sm) // 2], "samples": len(sm)}
    json.dump({"schema": SCHEMA, "provenance": prov, "results": results, "errors": errors}, open(dst, "w"), indent=1)
    print(f"collect: {len(results)} results, {len(errors)} errors -> {dst}")
    for e in errors:
        print("  error:", e)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
