"""``warpgraph run`` on a small scaled record."""
import json

import pytest
from typer.testing import CliRunner

from warpgraph.cli.main import app
from warpgraph.workloads.record import load_record, save_record
from warpgraph.workloads.scale import scale_record


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    rec = scale_record(load_record(root / "workloads/records/h200/gemm_tma_M2048_N2048_K2048"), M=256, N=256, K=256)
    d = tmp_path_factory.mktemp("rec") / "gemm_small"
    save_record(rec, d)
    return d


def test_run_json_has_contract5_keys(small_dir):
    r = CliRunner().invoke(app, ["run", str(small_dir), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    for k in ("cycles", "warp_instructions", "dram_read_bytes", "stall_ratios_per_issue", "wall_seconds"):
        assert k in d["metrics"]


def test_run_table_and_bad_override(small_dir):
    r = CliRunner().invoke(app, ["run", str(small_dir), "--set", "timing.policy=lrr"])
    assert r.exit_code == 0, r.output
    assert "cycles" in r.output
    r = CliRunner().invoke(app, ["run", str(small_dir), "--set", "timing.bogus=1"])
    assert r.exit_code != 0
