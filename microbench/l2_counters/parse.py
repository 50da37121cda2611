"""Nsight Compute CSVs of microbench/l2_counters/device_run.sh -> l2_counters.json: per launch record, the L2
tag-stage bytes split by source (``tex``: the SMs' requests; ``ltcfabric``: requests from the other L2
partition for lines homed here) with the SM side split by operation and lookup hit / miss, and DRAM bytes.
Rows are matched to records by launch order (ncu_run_*.json lists the records in the order they ran).
usage: python3 microbench/l2_counters/parse.py RESULTS_DIR"""
import csv, io, json, sys
from pathlib import Path

SECT = 32
FIELDS = {"t_bytes": ("lts__t_bytes.sum", 1), "tex": ("lts__t_sectors_srcunit_tex.sum", SECT),
          "ltcfabric": ("lts__t_sectors_srcunit_ltcfabric.sum", SECT),
          "tex_read": ("lts__t_sectors_srcunit_tex_op_read.sum", SECT),
          "tex_write": ("lts__t_sectors_srcunit_tex_op_write.sum", SECT),
          "tex_atom": ("lts__t_sectors_srcunit_tex_op_atom.sum", SECT),
          "tex_red": ("lts__t_sectors_srcunit_tex_op_red.sum", SECT),
          "tex_lookup_miss": ("lts__t_sectors_srcunit_tex_lookup_miss.sum", SECT),
          "ltcfabric_lookup_miss": ("lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum", SECT),
          "dram_read": ("dram__bytes_read.sum", 1), "dram_write": ("dram__bytes_write.sum", 1)}


def rows(path: Path) -> list[dict]:
    ls = [x for x in path.read_text().splitlines() if x.startswith('"')]
    r = list(csv.reader(io.StringIO("\n".join(ls))))
    return [dict(zip(r[0], x)) for x in r[2:]]


def num(s: str) -> float:
    return float(s.replace(",", ""))


def main(d: Path) -> dict:
    out = {}
    for part in ("calib_heldout", "gallery"):
        names = [x["name"] for x in json.loads((d / f"ncu_run_{part}.json").read_text())]
        rr = rows(d / f"ncu_{part}.csv")
        if len(rr) != len(names):
            raise SystemExit(f"{part}: {len(rr)} ncu rows for {len(names)} records")
        for n, r in zip(names, rr):
            out[n] = {k: num(r[m]) * f for k, (m, f) in FIELDS.items()}
            out[n]["kernel"] = r["Kernel Name"]
    return out


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = {"source": "microbench/l2_counters/device_run.sh on an NVIDIA H200 (date.txt, smi_*.csv, versions.txt); "
                     "bytes", "records": main(d)}
    (d / "l2_counters.json").write_text(json.dumps(res, indent=1))
