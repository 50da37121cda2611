"""Study spec validation (explore/spec.py): errors carry study.yaml:LINE and the YAML path."""
import textwrap

import pytest

import warpgraph
from warpgraph.explore.spec import load_study, validate_paths, resolve_workloads

TOY = """\
name: t
base: toy
arch_loader: python:warpgraph.explore.testing:toy_arch
evaluator: python:warpgraph.explore.testing:analytic
workloads: [h200/gemm_tma_M2048_N2048_K2048]
"""


def _write(tmp_path, body, name="study.yaml"):
    p = tmp_path / name
    p.write_text(TOY + textwrap.dedent(body))
    return p


def _err(tmp_path, body, validate=False):
    p = _write(tmp_path, body)
    with pytest.raises(warpgraph.UserError) as ei:
        s = load_study(p)
        if validate:
            validate_paths(s)
            resolve_workloads(s)
    return ei.value


def test_valid_study_parses(tmp_path):
    s = load_study(_write(tmp_path, """\
        space:
          tma.admission_depth: [4, 8, 16, 32]
          tma.bytes_per_cycle: {int: [16, 64], step: 16}
          l2.capacity_bytes: {float: [1.0e7, 1.0e8], log: true, points: 3}
        objectives: [{metric: cycles}, {metric: sram_bytes, direction: minimize}]
        constraints: [{metric: sram_bytes, max: 1.0e9}]
        sampler: grid
        """))
    assert s.sampler_type == "grid" and s.directions == ["minimize", "minimize"]
    assert len(s.grid_points()) == 4 * 4 * 3 and s.budget() == 48
    validate_paths(s)
    assert resolve_workloads(s)[0].name == "gemm_tma_M2048_N2048_K2048"


def test_bad_path_reports_study_line(tmp_path):
    e = _err(tmp_path, """\
        space:
          tma.admission_depth: [4, 8]
          tma.no_such_knob: [1, 2]
        objectives: [{metric: cycles}]
        sampler: random
        trials: 4
        """, validate=True)
    assert "study.yaml:8" in e.location and "tma.no_such_knob" in e.location
    assert "tma.no_such_knob" in str(e)


def test_bad_value_reports_study_line(tmp_path):
    e = _err(tmp_path, """\
        space:
          tensor_core.kind: [wgmma, warp_drive]
        objectives: [{metric: cycles}]
        sampler: grid
        """, validate=True)
    assert "study.yaml:7" in e.location and "warp_drive" in str(e)


def test_bad_range(tmp_path):
    e = _err(tmp_path, """\
        space:
          tma.admission_depth: {int: [32, 4]}
        objectives: [{metric: cycles}]
        trials: 3
        """)
    assert "study.yaml:7" in e.location and "range" in str(e)


def test_bad_sampler(tmp_path):
    e = _err(tmp_path, """\
        space: {tma.admission_depth: [4, 8]}
        objectives: [{metric: cycles}]
        sampler: annealing
        trials: 3
        """)
    assert "study.yaml:8" in e.location and "sampler" in e.location
    assert "grid" in (e.hint or "")


def test_bad_direction_and_unknown_key(tmp_path):
    e = _err(tmp_path, """\
        space: {tma.admission_depth: [4, 8]}
        objectives:
          - {metric: cycles, direction: smallest}
        sampler: grid
        """)
    assert "study.yaml:8" in e.location and "objectives[0].direction" in e.location
    e = _err(tmp_path, """\
        space: {tma.admission_depth: [4, 8]}
        objectives: [{metric: cycles}]
        sampler: grid
        trails: 5
        """)
    assert "study.yaml:9" in e.location and "trails" in e.location


def test_missing_budget_and_infinite_grid(tmp_path):
    e = _err(tmp_path, """\
        space: {tma.admission_depth: [4, 8]}
        objectives: [{metric: cycles}]
        sampler: tpe
        """)
    assert "trials" in (e.hint or "")
    e = _err(tmp_path, """\
        space: {l2.capacity_bytes: {float: [1.0, 2.0]}}
        objectives: [{metric: cycles}]
        sampler: grid
        """)
    assert "finite" in str(e) and "study.yaml:6" in e.location


def test_unknown_workload(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(TOY.replace("h200/gemm_tma_M2048_N2048_K2048", "h200/nope") + textwrap.dedent("""\
        space: {tma.admission_depth: [4, 8]}
        objectives: [{metric: cycles}]
        sampler: grid
        """))
    with pytest.raises(warpgraph.UserError) as ei:
        resolve_workloads(load_study(p))
    assert "s.yaml:5" in ei.value.location and "nope" in str(ei.value)


def test_examples_parse():
    from pathlib import Path

    ex = Path(warpgraph.__file__).parent / "explore" / "examples"
    files = sorted(ex.glob("*.yaml"))
    assert len(files) >= 3
    for f in files:
        load_study(f)


def test_cost_proxies_documented_formula():
    from warpgraph.explore.metrics import AREA_DEFAULTS, cost_metrics
    from warpgraph.explore.testing import toy_arch

    a = toy_arch()
    c = cost_metrics(a)
    per_sm = max(228, 256) * 1024 + 256 * 1024
    assert c["sram_bytes"] == per_sm * 132 + 50 * 2 ** 20
    k = AREA_DEFAULTS
    assert c["area_units"] == pytest.approx(k["sm"] * 132 + k["tensor"] * 132 * 4 + k["sram_mib"] * c["sram_bytes"]
                                            / 2 ** 20 + k["tma_slot"] * 132 * 16)
    assert cost_metrics(toy_arch(overrides={"sm.count": 66}))["sram_bytes"] < c["sram_bytes"]



def test_cost_inputs_typed_fields():
    """cost_inputs reads typed ArchSpec fields (no name search) and names the dotted fields it read."""
    from warpgraph.explore.metrics import cost_inputs, sram_bytes

    a = warpgraph.load_arch("h200")
    c = cost_inputs(a)
    assert (c["n_sms_path"], c["smem_path"], c["l1_path"], c["l2_path"], c["register_file_path"], c["tensor_path"],
            c["tma_depth_path"]) == ("sm.count", "sm.shared_memory_bytes", "l1.size_bytes",
                                     "l2.reuse_capacity_bytes", "sm.registers",
                                     "tensor_core.dense_fp16_flop_per_cycle_per_sm", "tma.admission_depth")
    assert c["l2_bytes"] == a.l2.reuse_capacity_bytes and c["register_file_bytes_per_sm"] == 4 * a.sm.registers
    assert sram_bytes(a) == (max(a.sm.shared_memory_bytes, a.l1.size_bytes) + 4 * a.sm.registers) * a.sm.count \
        + a.l2.reuse_capacity_bytes
    c = cost_inputs(warpgraph.load_arch("h200", overrides={"l2.reuse_capacity_bytes": None}))
    assert (c["l2_bytes"], c["l2_path"]) == (62914560, "l2.size_bytes")
    c = cost_inputs(warpgraph.load_arch("rtx5090"))  # mma_sync declares no dense peak
    assert (c["tensor_flop_per_cycle_per_sm"], c["tensor_path"]) == (0.0, None)
    with pytest.raises(warpgraph.UserError, match="cost proxies"):
        cost_inputs({"sm": {"count": 132}})

def test_mode_waves(tmp_path):
    """mode waves (runner/waves.py) with an optional `waves` count; an unknown mode lists the modes, and `waves`
    under mode timing (where it would be ignored) is an error."""
    body = "space: {tma.admission_depth: [4, 8]}\nobjectives: [{metric: cycles}]\nsampler: grid\n"
    s = load_study(_write(tmp_path, body + "mode: waves\nwaves: 2\n"))
    assert s.mode == "waves" and s.waves == 2
    assert load_study(_write(tmp_path, body + "mode: sampled\n")).waves is None
    e = _err(tmp_path, body + "mode: wave\n")
    assert "mode" in e.location and "timing, sampled or waves" in (e.hint or "")
    e = _err(tmp_path, body + "waves: 2\n")
    assert "waves" in str(e) and "timing" in str(e)
    e = _err(tmp_path, body + "mode: waves\nwaves: 0\n")
    assert "waves" in e.location


def test_warpgraph_evaluator_runs_mode_waves():
    """The study's mode and waves reach simulate: the same cycles as simulate(mode="waves", waves=1)."""
    from warpgraph.explore.evaluators import warpgraph_evaluator
    from warpgraph.explore.spec import StudySpec, Workload

    from pathlib import Path

    rec = str(Path(warpgraph.__file__).parent / "workloads" / "microbench" / "cta_turnaround_t32")  # 264 CTAs
    spec = StudySpec(name="w", workloads=[rec], space={"tma.admission_depth": [4]},
                     objectives=[{"metric": "cycles"}], mode="waves", waves=1)
    got = warpgraph_evaluator(spec)(warpgraph.load_arch("h200"), [Workload(name="t", path=rec)], overrides={},
                                    mode=spec.mode, seed=0, trace_cache=False)
    want = warpgraph.simulate(rec, "h200", mode="waves", waves=1, trace_cache=False)
    assert got["workloads"]["t"]["cycles"] == want.metrics["cycles"]
    assert want.mode == "waves" and want.metrics["cycles"] != warpgraph.simulate(rec, "h200").metrics["cycles"]
