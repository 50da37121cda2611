"""Per-PC warp-state samples from Nsight Compute reports, through ncu's own Python report interface (ncu_report,
shipped in the ncu installation's extras/python): for every metric named smsp__pcsamp_* that ncu keeps per
instruction (instanced, with the PCs as correlation ids), {pc: value}; and the SASS text of each PC.
Run on the device (where ncu is installed). usage: python3 dump_pcsamp.py REPORT.ncu-rep ... > out.json"""
import glob
import json
import os
import shutil
import sys


def find_ncu_python():
    ncu = shutil.which("ncu")
    cands = []
    if ncu:
        root = os.path.dirname(os.path.realpath(ncu))
        cands += [os.path.join(root, "extras", "python"), os.path.join(root, "..", "extras", "python")]
    cands += glob.glob("/usr/local/cuda*/nsight-compute*/extras/python") + glob.glob("/opt/nvidia/nsight-compute/*/extras/python")
    for c in cands:
        if os.path.exists(os.path.join(c, "ncu_report.py")):
            return c
    return None


def dump(path, ncu_report):
    ctx = ncu_report.load_report(path)
    out = []
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            act = rng.action_by_idx(ai)
            d = {"report": os.path.basename(path), "kernel": act.name(), "metrics": {}, "scalars": {}, "sass": {}}
            pcs = set()
            for name in act.metric_names():
                if not name.startswith(("smsp__pcsamp", "inst_executed", "sass__inst_executed", "smsp__inst_executed")):
                    continue
                m = act.metric_by_name(name)
                try:
                    n = m.num_instances()
                except Exception:
                    n = 0
                if n and m.has_correlation_ids():
                    ids = m.correlation_ids()
                    vals = {}
                    for i in range(n):
                        pc = int(ids.as_uint64(i))
                        vals[pc] = m.as_double(i)
                        pcs.add(pc)
                    d["metrics"][name] = vals
                else:
                    try:
                        d["scalars"][name] = m.as_double()
                    except Exception:
                        pass
            for pc in sorted(pcs):
                try:
                    d["sass"][pc] = act.sass_by_pc(pc)
                except Exception:
                    break
            out.append(d)
    return out


def main():
    p = find_ncu_python()
    if p is None:
        print(json.dumps({"error": "ncu_report not found"}))
        return
    sys.path.insert(0, p)
    import ncu_report
    res = []
    for path in sys.argv[1:]:
        try:
            res += dump(path, ncu_report)
        except Exception as e:   # one bad report must not lose the others
            res.append({"report": os.path.basename(path), "error": repr(e)})
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
