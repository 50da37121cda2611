"""Provenance of a standalone microbenchmark run (``run_with_sass.sh PROGRAM OUTDIR``) for the
``warpgraph-microbench/1`` documents its parser writes (what ``warpgraph calibrate`` reads): date, GPU, driver,
compiler, clocks before / after (nvidia-smi), the device line the program prints (``DEV name=... sms=... cc=...``)
and whether it finished (``rc 0`` in log.txt, ``DONE`` in its output)."""
import re
import statistics
from pathlib import Path


def provenance(d: Path, program: str) -> dict:
    log = (d / "log.txt").read_text().splitlines()
    out = (d / f"{program}.txt").read_text()
    smi = [(d / f).read_text().splitlines() for f in ("smi_before.txt", "smi_after.txt")]
    row = [s[1].split(", ") if len(s) > 1 else [] for s in smi]
    dline = next((ln for ln in out.splitlines() if ln.startswith("DEV ")), "")
    dev = dict(re.findall(r"(\w+)=(\S+)", dline))
    m = re.search(r"name=(.*?) sms=", dline)
    if m:
        dev["name"] = m.group(1)
    mhz = {}
    for tag, r in zip(("smi_before", "smi_after"), row):
        m = re.match(r"(\d+) MHz", r[1]) if len(r) > 1 else None
        if m:
            mhz[tag] = float(m.group(1))
    ok = "rc 0" in log and "\nDONE" in out
    return {"date_utc": log[0] if log else "", "gpu_name": row[0][0] if row[0] else "",
            "driver_version": row[0][4] if len(row[0]) > 4 else "",
            "nvcc": next((ln for ln in log if ln.startswith("Cuda compilation")), ""),
            "build": f"nvcc -O3 -gencode=arch=compute_90a,code=sm_90a microbench/src/{program}.cu",
            "clock_control": "none (clocks as found; nothing locked)",
            "clocks_before": ", ".join(row[0][1:4]), "clocks_after": ", ".join(row[1][1:4]),
            "sm_clock_probe_mhz": mhz,
            "device": {"name": dev.get("name", ""), "sm_count": int(dev.get("sms", 0)), "cc": dev.get("cc", "")},
            "sections": {program: "ok" if ok else "failed"}}


def write(argv: list[str], program: str, parse) -> dict:
    """``parse_<program>.py OUTDIR [OUT.json]``: ``parse`` the program's output in OUTDIR, add the provenance and
    write the document to OUT.json (default OUTDIR/<program>.json); returns the document."""
    import json

    d = Path(argv[1])
    res = parse((d / f"{program}.txt").read_text())
    res["provenance"] = provenance(d, program)
    res["source"] = f"microbench/src/{program}.cu on an {res['provenance']['gpu_name'] or 'unnamed GPU'} (raw: {d.name}/)"
    out = Path(argv[2]) if len(argv) > 2 else d / f"{program}.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    return res


def mean_over_reps(text: str, tag: str, ident: tuple, stats: dict, bench: str, reps_of: str,
                   defaults: dict | None = None, reps_beside: bool = False, codes: dict | None = None) -> list[dict]:
    """The ``tag`` lines of a program's output (``TAG k=v k=v ...``, one per launch), grouped by the ``ident``
    keys (ints; ``codes`` maps a key's words to ints, ``{"op": {"st": 0, ...}}``; ``defaults`` fills keys a line
    lacks): per group ``{"bench", "params", "stats"}`` with the mean over
    its launches of each ``stats`` key (renamed to ``stats[key]``) and ``<reps_of>_reps``, that statistic's
    per-launch values (``reps_beside``: as the group's ``reps`` instead, beside ``stats``, which then holds numbers
    only, as ``warpgraph calibrate`` reads them). Groups in order of first appearance."""
    rows: dict = {}
    for line in text.splitlines():
        t, _, rest = line.partition(" ")
        if t != tag:
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        for k, v in (defaults or {}).items():
            kv.setdefault(k, v)
        params = {k: codes[k][kv[k]] if codes and k in codes else int(kv[k]) for k in ident}
        r = rows.setdefault(tuple(params.items()), {"params": params, "reps": []})
        r["reps"].append({v: float(kv[k]) for k, v in stats.items()})
    out = []
    for r in rows.values():
        st = {k: statistics.fmean(x[k] for x in r["reps"]) for k in stats.values()}
        reps = [x[reps_of] for x in r["reps"]]
        if reps_beside:
            out.append({"bench": bench, "params": r["params"], "stats": st, "reps": reps})
        else:
            st[f"{reps_of}_reps"] = reps
            out.append({"bench": bench, "params": r["params"], "stats": st})
    return out
