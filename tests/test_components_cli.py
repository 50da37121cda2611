"""``warpgraph components`` (sst-info): every role with a real kind, its parameters, ports and statistics."""
import json

from typer.testing import CliRunner

from warpgraph.cli.main import app
from warpgraph.components.interfaces import ROLE_INTERFACES


def _json(*args):
    res = CliRunner().invoke(app, ["components", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_every_role_has_a_real_kind_with_its_interface():
    cat = _json()
    roles = {e["role"] for e in cat}
    assert set(ROLE_INTERFACES) <= roles
    for e in cat:
        assert e["class"] and "Fallback" not in e["class"] and e["source"]
        assert e["interface"]["members"], e["role"]


def test_parameters_ports_and_statistics_of_tma():
    cat = _json("tma")
    d = next(e for e in cat if e["kind"] == "default")
    p = {x["name"]: x for x in d["parameters"]}
    assert p["admission_depth"]["default"] == 16 and p["admission_depth"]["type"] == "int"
    assert p["issue_gap_cycles"]["unit"] == "cycles" and p["issue_gap_cycles"]["description"]
    assert p["admission_depth"]["source"].endswith("DefaultTma")
    ports = {x["port"]: x for x in d["ports"]}
    assert ports["to_xbar"]["latency_cycles"] > 0 and ports["to_xbar"]["bandwidth_bytes_per_cycle"] > 0
    assert any(s["name"] == "admission_stall_cycles" and s["unit"] == "cycles" for s in d["statistics"])


def test_text_listing_and_unknown_role():
    r = CliRunner().invoke(app, ["components", "warp_scheduler"])
    assert r.exit_code == 0 and "gto" in r.output and "lrr" in r.output
    r = CliRunner().invoke(app, ["components", "nosuch"])
    assert r.exit_code != 0
