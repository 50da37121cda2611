"""``warpgraph calibrate`` (analysis/calibrate): microbenchmark results -> an architecture YAML extending a base.

The reproduction test is issue 15's done-when: on the committed H200 microbenchmarks (microbench/results) the
calibration gives h200.yaml's measured values (those whose source comment starts with ``mb``) within their
noise. Tolerance per value: the spread of the repeated measurements of the same quantity in the results
(``Param.noise``: repetitions, parameter variants that measure the same thing, or a fit's standard error),
plus half the resolution h200.yaml writes the value with (0.5 for an integer field: 45.8 is written 46).
The calibration runs on base **h100** (the paper's values), so h200.yaml is no input: closed-form values never
read the base, and the fits start from the measurement and replay on h100's other stages."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

import warpgraph
from warpgraph.analysis.calibrate import FITS, calibrate, load_results
from warpgraph.analysis.calibrate.fit import fit_one
from warpgraph.cli.main import main

ROOT = Path(warpgraph.__file__).resolve().parent
RESULTS = ROOT / "microbench" / "results"
MAIN_JSON = RESULTS / "h200_2026-12-02.json"
FITTED = {".".join(s.key) for s in FITS}


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as ei:
        main(list(argv))
    out = capsys.readouterr()
    return ei.value.code, out.out, out.err


def h200_measured() -> dict:
    """h200.yaml's values whose source comment says they were measured with microbench/ (``mb:``, ``mb-l1:``, ...)."""
    from warpgraph.cli.arch_cmd import value_sources

    return {k: v["value"] for k, v in value_sources("h200").items()
            if v["location"].startswith("h200.yaml") and v["comment"].lower().startswith("mb")}


def resolution(v) -> float:
    """Half the last written digit of a YAML value: 46 -> 0.5, 0.445 -> 0.0005, 38.6 -> 0.05."""
    s = repr(v)
    if isinstance(v, int) or s.endswith(".0"):
        return 0.5
    return 0.5 * 10 ** -len(s.split(".")[1])


def test_calibrate_reproduces_h200_measured_values():
    cal = calibrate(RESULTS, "h100", trials=8)
    got = {p.dotted: p for p in cal.params}
    want = h200_measured()
    compared, bad = [], []
    for key, ref in want.items():
        p = got.get(key)
        if p is None:
            continue
        tol = (p.noise or 0.0) + resolution(ref)
        compared.append(key)
        if abs(p.value - ref) > tol:
            bad.append(f"{key}: calibrated {p.value} ({p.method}, raw {p.raw:.3f}) vs h200.yaml {ref}, tol {tol:g}")
    assert not bad, "\n".join(bad)
    # every value the results determine that h200.yaml took from microbench/, fits included; the rest of
    # h200.yaml's measured values come from ncu CSVs and standalone programs (not run_all.sh results)
    assert len(compared) >= 37, sorted(compared)
    assert FITTED <= set(compared)
    assert all(got[k].method == "fit" and got[k].converged for k in FITTED), [got[k].how for k in FITTED]
    assert not cal.skipped, cal.skipped


def test_cli_writes_a_yaml_that_extends_the_base(tmp_path, capsys):
    out = tmp_path / "my_gpu.yaml"
    code, stdout, err = cli(capsys, "calibrate", str(MAIN_JSON), "--base", "h200", "--out", str(out), "--trials", "1")
    assert code in (0, None), err
    assert "tma.issue_gap_cycles" in stdout and "closed-form" in stdout and "fit" in stdout
    assert "not determined: CTA launch" in err          # the single file has no cta_turnaround: said, not silent
    text = out.read_text()
    assert "\nextends: h200\n" in text
    leaves = [ln for ln in text.splitlines() if ln.startswith("  ") and not ln.rstrip().endswith(":")]
    assert leaves and all("# source: " in ln for ln in leaves), [ln for ln in leaves if "# source: " not in ln]
    spec = warpgraph.load_arch(str(out))
    assert spec.extends == "h200" and spec.tma.issue_gap_cycles == 46 and spec.mbarrier.try_wait_cycles == 37
    code, shown, err = cli(capsys, "arch", "show", str(out), "--sources")
    assert code in (0, None), err
    line = next(ln for ln in shown.splitlines() if ln.startswith("tma.issue_gap_cycles"))
    assert "my_gpu.yaml" in line and "source: tma_issue, h200_2026-12-02.json, fit:" in line


def test_results_folder_from_run_all(tmp_path):
    """A run_all.sh OUTDIR (results.json) reads like the file itself."""
    (tmp_path / "results.json").write_text(MAIN_JSON.read_text())
    a, b = load_results(tmp_path), load_results(MAIN_JSON)
    assert len(a.items) == len(b.items) > 500 and a.files == [tmp_path / "results.json"]


@pytest.mark.parametrize("content,msg", [
    (None, "no such file or folder"),
    ("", "no microbenchmark results in this folder"),
    ('{"schema": "other/1", "results": []}', "schema 'other/1'"),
    ('{"schema": "warpgraph-microbench/1", "results": []}', "no results"),
    ('{"schema": "warpgraph-microbench/1",\n "results": [1]}', "results[0]"),
    ('{"schema": "warpgraph-microbench/1",\n "results": [{"bench": "x", "params": {}, "stats": {"a": "1"}}]}',
     "statistic 'a' of x"),
    ('{"schema": "warpgraph-microbench/1",\n "results": [{"bench": "x", "params": {}, "stats": {"a": NaN}}]}',
     "statistic 'a' of x is nan"),
    ('{"schema": "warpgraph-microbench/1",\n "results": [}', "x.json:2"),
])
def test_bad_input_exits_2(tmp_path, capsys, content, msg):
    """None: a path that does not exist; "": an empty folder; else the text of a results file."""
    if content is None:
        arg = tmp_path / "missing"
    elif content == "":
        arg = tmp_path
    else:
        arg = tmp_path / "x.json"
        arg.write_text(content)
    code, _, err = cli(capsys, "calibrate", str(arg), "--out", str(tmp_path / "o.yaml"))
    assert code == 2 and msg in err and "Traceback" not in err, err
    assert not (tmp_path / "o.yaml").exists()


def test_partial_results_say_what_they_do_not_determine(tmp_path):
    doc = json.loads(MAIN_JSON.read_text())
    doc["results"] = [r for r in doc["results"] if r["bench"] in ("mbarrier_wait", "smem_bank")]
    (tmp_path / "results.json").write_text(json.dumps(doc))
    cal = calibrate(tmp_path, "h200", trials=1)
    # the polls' latencies need the ISETP's (alu_latency results), and the hint fit starts from try_wait's
    assert {p.dotted for p in cal.params} == {
        "mbarrier.try_wait_max_suspend_cycles", "shared_memory.latency_cycles",
        "shared_memory.conflict_latency_cycles_per_extra_way"}
    text = " | ".join(cal.skipped)
    assert "smem_bandwidth" in text and "tma_issue" in text and "mma_sync" in text and "latencies.int" in text


def _smem_fit():
    return next(s for s in FITS if s.key[-1] == "conflict_latency_cycles_per_extra_way")


def test_fit_moves_from_a_wrong_start_to_the_measurement():
    """The study, started 1 cycle/way off, finds the value whose replays match the measured 2.0 cycles per way."""
    spec = replace(_smem_fit(), guess=lambda target, fixed: target + 1.0, window=0.5)
    p = fit_one(spec, load_results(MAIN_JSON), "h200", {}, trials=12, seed=0)
    assert p.value == 2.0 and p.method == "fit" and p.converged, p.how


def test_fit_is_deterministic():
    R = load_results(MAIN_JSON)
    a, b = (fit_one(_smem_fit(), R, "h100", {}, trials=3, seed=3) for _ in range(2))
    assert (a.value, a.how, a.noise) == (b.value, b.how, b.noise)



def test_fit_follows_another_gpus_measurement():
    """A GPU whose TMA issue spans are all 10 % longer: the fit lands on the new slope (45.8 x 1.1 = 50.4), not on
    the base's 46."""
    R = load_results(MAIN_JSON)
    for r in R.items:
        if r["bench"] == "tma_issue":
            r["stats"] = {**r["stats"], "issue_span_median": 1.1 * r["stats"]["issue_span_median"]}
            r["raw"] = [1.1 * x for x in r.get("raw") or []]
    spec = next(s for s in FITS if s.key == ("tma", "issue_gap_cycles"))
    p = fit_one(spec, R, "h200", {}, trials=8, seed=0)
    assert p.value == 50 and p.converged, p.how
