"""Parse one run of microbench/run_dsm_fabric.sh (dsm_fabric.txt or dsm_fabric.txt.gz, log.txt, smi_*.txt) into DIR/dsm_fabric.json:
occupancy and placement of clusters (which GPC / TPC each CTA's %smid is in), remote latency per op, cluster size
and destination, remote load/store bandwidth vs active SMs, bulk-copy multicast bandwidth vs fan-out, and a
summary of the headline numbers. stdlib only.

GPC of an SM: the L2-lookup sharing groups of results/h200_l2_pairs_2026-12-03 (README "Which SMs share a
lookup"): the first wave of a 132-CTA launch, cut into chunks of 16, 16, 16, 16, 16, 16, 18, 18 SMs.
TPC: %smid // 2 (consecutive pairs, as the first-wave order shows).
usage: python3 microbench/parse_dsm_fabric.py DIR
"""
import gzip
import json
import os
import re
import statistics
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.path.join(HERE, "results", "h200_l2_pairs_2026-12-03", "l2_pairs.json")
GPC_SIZES = [16, 16, 16, 16, 16, 16, 18, 18]


def gpc_of():
    wave = json.load(open(PAIRS))["first_wave_smid"]
    out, i = {}, 0
    for g, n in enumerate(GPC_SIZES):
        for s in wave[i:i + n]:
            out[s] = g
        i += n
    return out


def kv(line):
    head, *rest = line.split()
    d = {}
    for t in rest:
        k, _, v = t.partition("=")
        try:
            d[k] = int(v)
        except ValueError:
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
    return head, d


def med(v):
    return float(statistics.median(v)) if v else None


def main(d):
    gpc = gpc_of()
    rows = defaultdict(list)
    txt = os.path.join(d, "dsm_fabric.txt")
    fh = open(txt) if os.path.exists(txt) else gzip.open(txt + ".gz", "rt")
    for ln in fh:
        ln = ln.strip()
        if ln and ln.split()[0] in ("DEV", "OCC", "MAP", "LAT", "BW", "MC"):
            h, r = kv(ln)
            rows[h].append(r)
    log = open(os.path.join(d, "log.txt")).read().splitlines()
    smi = {}
    for w in ("before", "after"):
        t = open(os.path.join(d, f"smi_{w}.txt")).read().splitlines()
        smi[w] = t[1] if len(t) > 1 else ""
    res = {"provenance": {
        "source": "microbench/src/dsm_fabric.cu", "script": "microbench/run_dsm_fabric.sh", "parser": "microbench/parse_dsm_fabric.py",
        "run_start": log[0] if log else None, "run_end": log[-1] if log else None,
        "nvcc": next((x for x in log if x.startswith("Cuda compilation")), None),
        "device": rows["DEV"][0] if rows["DEV"] else None,
        "nvidia_smi_before": smi["before"], "nvidia_smi_after": smi["after"],
        "clocks": "as found, never locked (nvidia-smi -q -d CLOCK before/after in smi_before.txt / smi_after.txt)",
        "cycles": "%clock64 of the measuring SM",
        "gpc_map": "GPC = L2-lookup sharing group of results/h200_l2_pairs_2026-12-03 (first-wave chunks 16x6, 18x2); TPC = smid // 2"}}
    res["max_active_clusters"] = {r["C"]: r["max_active_clusters"] for r in rows["OCC"]}
    # placement
    place = {}
    for C in sorted({r["C"] for r in rows["MAP"]}):
        cl = defaultdict(dict)
        for r in rows["MAP"]:
            if r["C"] == C and r["rep"] == 0:
                cl[r["cluster"]][r["rank"]] = r["smid"]
        clusters = []
        for c in sorted(cl):
            sm = [cl[c][k] for k in sorted(cl[c])]
            clusters.append({"cluster": c, "smid_by_rank": sm, "gpcs": sorted({gpc.get(s, -1) for s in sm}),
                             "tpcs": len({s // 2 for s in sm})})
        place[C] = {"clusters": clusters,
                    "all_in_one_gpc": all(len(x["gpcs"]) == 1 for x in clusters),
                    "gpcs_used": sorted({g for x in clusters for g in x["gpcs"]}),
                    "ranks_2k_2k1_same_tpc": all(x["smid_by_rank"][2 * i] // 2 == x["smid_by_rank"][2 * i + 1] // 2
                                                 for x in clusters for i in range(len(x["smid_by_rank"]) // 2))}
    res["placement"] = place
    # latency
    lat = []
    groups = defaultdict(list)
    for r in rows["LAT"]:
        groups[(r["op"], r["C"], r["shift"])].append(r)
    for (op, C, sh), rs in sorted(groups.items()):
        v = [r["cycles_per_iter"] for r in rs]
        same_tpc = [r["cycles_per_iter"] for r in rs if r["smid"] // 2 == r["dst_smid"] // 2 and r["smid"] != r["dst_smid"]]
        lat.append({"op": op, "cluster": C, "shift": sh, "cycles_median": med(v), "cycles_min": min(v), "cycles_max": max(v),
                    "n": len(v), "same_tpc_median": med(same_tpc)})
    res["latency"] = lat
    # C=16 remote ld latency: same TPC vs other TPC of the same GPC, per source
    by = defaultdict(list)
    for r in rows["LAT"]:
        if r["op"] in ("ld", "atom") and r["shift"] != 0:
            k = "same_tpc" if r["smid"] // 2 == r["dst_smid"] // 2 else "other_tpc"
            by[(r["op"], r["C"], k)].append(r["cycles_per_iter"])
    res["latency_by_distance"] = [{"op": op, "cluster": C, "pair": k, "cycles_median": med(v), "cycles_min": min(v),
                                   "cycles_max": max(v), "n": len(v)} for (op, C, k), v in sorted(by.items())]
    res["bandwidth"] = [{"op": r["op"], "cluster": r["C"], "threads": r["block"], "active_per_cluster": r["active"],
                         "shift": r["shift"], "grid": r["grid"], "active_ctas": r["active_ctas"],
                         "bytes_per_cycle_per_sm_median": r["bytes_per_cycle_per_sm_median"], "min": r["min"], "max": r["max"],
                         "event_ms": r["event_ms"]} for r in rows["BW"]]
    res["multicast"] = [{k: r[k] for k in r} for r in rows["MC"]]
    # headline summary
    def L(op, C, sh):
        x = [e for e in lat if e["op"] == op and e["cluster"] == C and e["shift"] == sh]
        return x[0]["cycles_median"] if x else None

    def B(op, C, thr, act, sh, full):
        x = [e for e in res["bandwidth"] if e["op"] == op and e["cluster"] == C and e["threads"] == thr and
             e["active_per_cluster"] == act and e["shift"] == sh and (e["grid"] > C) == full]
        return x[0]["bytes_per_cycle_per_sm_median"] if x else None
    remote_ld = [e["cycles_median"] for e in lat if e["op"] == "ld" and e["shift"] != 0]
    pp = [e["cycles_median"] for e in lat if e["op"] == "pp"]
    res["summary"] = {
        "local_ld_via_cluster_addr_cycles": L("ld", 2, 0),
        "remote_ld_cycles_cluster2": L("ld", 2, 1),
        "remote_ld_cycles_range_all_sizes": [min(remote_ld), max(remote_ld)] if remote_ld else None,
        "local_atom_cycles": L("atom", 2, 0), "remote_atom_cycles_cluster2": L("atom", 2, 1),
        "store_pingpong_round_trip_cycles_range": [min(pp), max(pp)] if pp else None,
        "remote_load_B_per_cycle_one_sm": B("remote_load", 2, 1024, 1, 1, False),
        "remote_load_B_per_cycle_all_sms_of_cluster2": B("remote_load", 2, 1024, 2, 1, False),
        "remote_store_B_per_cycle_one_sm": B("remote_store", 2, 1024, 1, 1, False),
        "remote_load_B_per_cycle_16_sms_of_a_gpc": B("remote_load", 16, 1024, 16, 1, False),
        "local_load_B_per_cycle": B("local_load", 2, 1024, 1, 1, False),
    }
    out = os.path.join(d, "dsm_fabric.json")
    json.dump(res, open(out, "w"), indent=1)
    print("wrote", out)
    print(json.dumps(res["summary"], indent=1))
    print(json.dumps({C: {k: v for k, v in p.items() if k != "clusters"} for C, p in place.items()}))
    for e in res["latency_by_distance"]:
        print(e)


if __name__ == "__main__":
    main(sys.argv[1])
