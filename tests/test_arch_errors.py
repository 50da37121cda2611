"""Malformed architecture YAMLs -> SpecError with file, line and YAML path."""
from pathlib import Path

import pytest

from warpgraph.core.errors import SpecError, UserError
from warpgraph.topologies import load_arch


def _load(tmp_path: Path, text: str, name="bad.yaml", overrides=None):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(SpecError) as ei:
        load_arch(p, overrides)
    assert isinstance(ei.value, UserError)
    return ei.value


CASES = [
    # (yaml, expected location suffix, words in message/hint)
    ("name: x\nextends: h200\ntma:\n  admission_depht: 8\n", "bad.yaml:4 (tma.admission_depht)", ["unknown key", "admission_depth"]),
    ("name: x\nextends: h200\ntma:\n  admission_depth: many\n", "bad.yaml:4 (tma.admission_depth)", ["integer"]),
    ("name: x\nextends: h200\nl2:\n  size_bytes: 50 MB\n", "bad.yaml:4 (l2.size_bytes)", ["integer", "unit"]),
    ("name: x\nextends: h200\n\nl2:\n  slices: -4\n", "bad.yaml:5 (l2.slices)", ["greater than 0"]),
    ("name: x\nextends: h200\ntensor_core:\n  kind: tpu\n", "bad.yaml:4 (tensor_core.kind)", ["tpu", "wgmma", "tcgen05"]),
    ("name: x\nextends: h200\nsubpartition:\n  scheduler:\n    policy: fifo\n", "bad.yaml:5 (subpartition.scheduler.policy)", ["gto", "lrr"]),
    ("name: x\nextends: h200\nmbarrier:\n  kind: magic\n", "bad.yaml:4 (mbarrier.kind)", ["magic", "default"]),
    ("name: x\nextends: h200\nl2:\n  slices: 187\n", "bad.yaml:3 (l2)", ["divisible"]),
    ("name: x\nextends: h200\nsm:\n  count: 400\n", "bad.yaml:4 (sm.count)", ["slots"]),
    ("name: x\nextends: h200\nsm:\n  max_ctas: 65\n", "bad.yaml:3 (sm)", ["max_ctas"]),
    ("name: x\nextends: h200\ntensor_core:\n  mma_sync:\n    f16.m16n8k16: {issue_gap_cycles: 0, latency_cycles: 2}\n",
     "bad.yaml:5 (tensor_core.mma_sync.f16.m16n8k16.issue_gap_cycles)", ["greater than 0"]),
    ("name: x\nextends: h200\nclocks: 5\n", "bad.yaml:3 (clocks)", ["mapping"]),
]


@pytest.mark.parametrize("text,loc,words", CASES)
def test_malformed(tmp_path, text, loc, words):
    e = _load(tmp_path, text)
    assert e.location.endswith(loc), e.location
    full = e.format()
    for w in words:
        assert w in full, full


def test_error_in_inherited_file_points_at_that_file(tmp_path):
    (tmp_path / "parent.yaml").write_text("name: parent\nextends: h100\nhbm:\n  channels: 80\n  efficiency: 1.5\n")
    e = _load(tmp_path, "name: child\nextends: parent.yaml\nl2:\n  slices: 160\n", name="child.yaml")
    assert e.location.endswith("parent.yaml:5 (hbm.efficiency)"), e.location


def test_extends_cycle_and_missing_parent(tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nextends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("name: b\nextends: a.yaml\n")
    with pytest.raises(SpecError, match="cycle"):
        load_arch(tmp_path / "a.yaml")
    e = _load(tmp_path, "name: x\nextends: h900\n")
    assert "bad.yaml:2" in e.location and "h200" in e.hint


def test_yaml_syntax_error_has_line(tmp_path):
    e = _load(tmp_path, "name: x\nextends: h200\ntma: {admission_depth: 8\n")
    assert "bad.yaml:" in e.location and "YAML" in e.message


def test_bad_override_value_located_at_override():
    with pytest.raises(SpecError) as ei:
        load_arch("h200", ["l2.size_bytes=-5"])
    assert ei.value.location == "override l2.size_bytes (l2.size_bytes)"
    with pytest.raises(SpecError):
        load_arch("h200", ["no_equals_sign"])
    with pytest.raises(SpecError, match="not found"):
        load_arch("no_such_arch")
