"""Bundled architecture YAMLs, inheritance, overrides, dump/diff/schema."""
import re
from pathlib import Path

import jsonschema
import pytest

from warpgraph.core.errors import SpecError
from warpgraph.topologies import ArchSpec, arch_json_schema, diff_arch, dump_arch, list_archs, load_arch
from warpgraph.topologies.loader import ARCH_DIR

BUNDLED = ["b200", "h100", "h200", "rtx5090"]


def test_bundled_list():
    assert list_archs() == BUNDLED


@pytest.mark.parametrize("name", BUNDLED)
def test_every_shipped_yaml_validates(name):
    spec = load_arch(name)
    assert isinstance(spec, ArchSpec) and spec.name == name
    f = spec.fabric
    assert f.gpcs * f.cpcs_per_gpc * f.sms_per_cpc >= spec.sm.count
    assert spec.l2.slices % spec.l2.partitions == 0


@pytest.mark.parametrize("name", BUNDLED)
def test_every_number_has_a_source_comment(name):
    bad = []
    for i, line in enumerate((ARCH_DIR / f"{name}.yaml").read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if re.search(r":\s*-?\d", code) or re.search(r"\[\s*\d", code):
            if "#" not in line:
                # a number inside a section whose header line carries the comment is fine only for flow maps
                bad.append(f"{name}.yaml:{i}: {line.strip()}")
    assert not bad, "numbers without a source comment:\n" + "\n".join(bad)


def test_h200_extends_h100_with_deep_merge():
    h100, h200 = load_arch("h100"), load_arch("h200")
    assert h200.extends == "h100"
    assert h200.l2.size_bytes == 62914560 and h100.l2.size_bytes == 52428800
    assert h200.l2.partitions == h100.l2.partitions == 2          # sibling keys survive the merge
    # h200 overrides some inherited values with its own microbenchmark measurements; untouched siblings survive
    assert h100.tma.admission_depth == 16 and h100.tma.issue_gap_cycles == 44
    assert h200.tma.issue_gap_cycles == 46 and h200.tma.request_granularity_bytes == h100.tma.request_granularity_bytes
    assert h200.hbm.bandwidth_gb_per_s == 4800 and h200.hbm.channels == 94
    assert h100.mbarrier.try_wait_cycles == 42 and h200.mbarrier.try_wait_cycles == 37
    assert h200.mbarrier.arrive_cycles == h100.mbarrier.arrive_cycles
    assert h200.tensor_core.kind == "wgmma" and h200.tensor_core.dense_fp16_flop_per_cycle_per_sm == 4096
    assert 1400 < h200.clocks.sm_mhz < 2000
    assert load_arch("b200").tensor_core.kind == "tcgen05" and load_arch("b200").tma.request_bytes_per_cycle == 128
    assert load_arch("rtx5090").tensor_core.mma_sync["f16.m16n8k16"].issue_gap_cycles == 33


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_extends_path_null_delete_and_variant_replacement(tmp_path):
    _write(tmp_path, "base.yaml", "name: base\nextends: h100\ntma:\n  admission_depth: 8\n")
    child = _write(tmp_path, "child.yaml",
                   "extends: base.yaml\nfabric:\n  sms_per_gpc: null\n"
                   "tensor_core:\n  kind: mma_sync\n  mma_sync_default: {issue_gap_cycles: 9, latency_cycles: 30}\n")
    spec = load_arch(child)
    assert spec.name == "child" and spec.extends == "base.yaml"
    assert spec.tma.admission_depth == 8 and spec.tma.issue_gap_cycles == 44
    assert spec.fabric.sms_per_gpc is None                       # null resets to the schema default
    assert spec.tensor_core.kind == "mma_sync"                   # wgmma-only keys of h100 did not leak in
    assert spec.tensor_core.mma_sync_default.issue_gap_cycles == 9


def test_overrides_dict_and_list():
    a = load_arch("h200", {"tma.admission_depth": 8, "l2.coalesce_scope": "gpu"})
    assert a.tma.admission_depth == 8 and a.l2.coalesce_scope == "gpu"
    b = load_arch("h200", ["tma.admission_depth=8", "tma.oob_reads_reach_l2=false", "subpartition.scheduler.policy=lrr",
                           "tensor_core.mma_sync.f16.m16n8k16.issue_gap_cycles=9"])
    assert b.tma.admission_depth == 8 and b.tma.oob_reads_reach_l2 is False
    assert b.subpartition.scheduler.policy == "lrr"
    assert b.tensor_core.mma_sync["f16.m16n8k16"].issue_gap_cycles == 9
    assert load_arch(a, ["tma.admission_depth=4"]).tma.admission_depth == 4   # overrides on a loaded spec
    assert load_arch("h200").tma.admission_depth == load_arch("h200").tma.admission_depth != 4  # no shared state


def test_unknown_override_path_names_path_and_keys():
    with pytest.raises(SpecError) as ei:
        load_arch("h200", ["tma.admision_depth=8"])
    e = ei.value
    assert "tma.admision_depth" in e.location and "admission_depth" in e.hint
    with pytest.raises(SpecError) as ei:
        load_arch("h200", ["bogus.x=1"])
    assert "bogus" in str(ei.value) and "tma" in ei.value.hint


def test_dump_roundtrip_and_diff(tmp_path):
    h200 = load_arch("h200", ["tma.admission_depth=12"])
    p = _write(tmp_path, "dumped.yaml", dump_arch(h200))
    assert load_arch(p) == h200
    diff = dict((k, (a, b)) for k, a, b in diff_arch(load_arch("h100"), load_arch("h200")))
    assert diff["l2.size_bytes"] == (52428800, 62914560) and "tma.oob_reads_reach_l2" not in diff


def test_json_schema_validates_resolved_specs():
    schema = arch_json_schema()
    for section in ["clocks", "sm", "subpartition", "cta_scheduler", "tensor_core", "tma", "mbarrier",
                    "shared_memory", "l1", "l2", "hbm", "fabric", "latencies"]:
        assert section in schema["properties"]
    for name in BUNDLED:
        jsonschema.validate(load_arch(name).model_dump(mode="json"), schema)
    bad = load_arch("h200").model_dump(mode="json")
    bad["tma"]["admission_depth"] = -1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_parsed_yaml_is_cached_on_disk_by_content(tmp_path, monkeypatch):
    """A second process reads the parsed architecture from the disk cache (no ruamel parse); an edited file is
    parsed again; the cached form equals the parse (values, types, locations); off means no files."""
    from warpgraph.topologies import loader as L

    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\nextends: h200\ntma:\n  admission_depth: 8\n")
    L._FILE_CACHE.clear()
    first = L.load_arch(str(f))
    entries = sorted((tmp_path / "cache" / "arch_yaml").glob("*.json"))
    assert len(entries) >= 2                          # mine.yaml and the bundled h200 / h100 it extends
    L._FILE_CACHE.clear()                             # a new process: only the disk cache is left
    monkeypatch.setattr(L, "_read_yaml", lambda p: (_ for _ in ()).throw(AssertionError(f"parsed {p}")))
    again = L.load_arch(str(f))
    assert again.model_dump() == first.model_dump() and again.tma.admission_depth == 8
    monkeypatch.undo()
    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    f.write_text("name: mine\nextends: h200\ntma:\n  admission_depth: 4\n")   # same size, new bytes
    L._FILE_CACHE.clear()
    assert L.load_arch(str(f)).tma.admission_depth == 4
    p = ARCH_DIR / "h200.yaml"
    locs: dict = {}
    ref = (L._plain(L._read_yaml(p), "h200.yaml", (), locs), locs)
    L._FILE_CACHE.clear()
    assert L._read_plain(p, "h200.yaml") == ref
    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", "off")
    assert L._disk_entry(p, "h200.yaml") is None
