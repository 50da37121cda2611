"""Component registry and open variants: a new variant = one class + one YAML line."""
from typing import Literal

import pytest

import warpgraph.components as components
from warpgraph.components.base import Component, Slot
from warpgraph.core import registry
from warpgraph.core.errors import SpecError
from warpgraph.core.registry import get_component, known_kinds, register_component
from warpgraph.topologies import build_graph, load_arch
from warpgraph.topologies import schema as S


def test_components_package_imports_every_module():
    import pkgutil

    mods = sorted(m.name for m in pkgutil.iter_modules(components.__path__) if not m.name.startswith("_"))
    assert components.imported_modules == mods
    assert "structural" in mods and "base" in mods


def test_structural_defaults_registered():
    for role in ("gpc", "cpc", "sm", "xbar", "gx_plane", "l1"):
        assert "default" in known_kinds(role)
    assert {"mma_sync", "wgmma", "tcgen05"} <= set(known_kinds("tensor_core"))


def test_unknown_kind_lists_known():
    with pytest.raises(SpecError) as ei:
        get_component("tensor_core", "tpu")
    assert "wgmma" in ei.value.hint and "tcgen05" in ei.value.hint


def test_duplicates_fail_and_there_are_no_fallbacks():
    key = ("l2_slice", "test_only")
    try:
        @register_component(role="l2_slice", kind="test_only")
        class Real(Component):
            pass

        assert get_component(*key) is Real
        with pytest.raises(ValueError, match="registered twice"):
            @register_component(role="l2_slice", kind="test_only")
            class Other(Component):
                pass
    finally:
        registry._REGISTRY.pop(key, None)
    with pytest.raises(TypeError):
        register_component(role="l2_slice", kind="x", fallback=True)
    # every registered class is a real model: none is a placeholder of the old structural fallbacks
    assert not [r for r in registry.registrations() if r.cls.__name__.endswith("Fallback")]


def test_every_role_has_a_complete_model():
    """Each role's registered classes implement its interface (components/interfaces.py)."""
    from warpgraph.components.interfaces import ROLE_INTERFACES, check_interface

    for reg in registry.registrations():
        if reg.role in ROLE_INTERFACES:
            check_interface(reg.role, reg.kind, reg.cls)
    assert set(ROLE_INTERFACES) <= set(registry.known_roles())


@pytest.fixture
def systolic_variant():
    class SystolicTensorCore(S.TensorCoreBase):
        kind: Literal["systolic"] = "systolic"
        array_dim: int = 128

    class SystolicUnit:  # not a Component: the builder places a Slot
        def __init__(self, spec, engine):
            pass

    S.register_variant("tensor_core", SystolicTensorCore)
    register_component(role="tensor_core", kind="systolic")(SystolicUnit)
    yield SystolicUnit
    S.VARIANT_FAMILIES["tensor_core"][3].pop("systolic")
    S._rebuild_all()
    registry._REGISTRY.pop(("tensor_core", "systolic"), None)


def test_new_variant_is_one_class_plus_one_yaml_line(systolic_variant, tmp_path):
    p = tmp_path / "sys.yaml"
    p.write_text("name: sys\nextends: h200\ntensor_core:\n  kind: systolic\n  array_dim: 64\n")
    spec = load_arch(p)
    assert spec.tensor_core.kind == "systolic" and spec.tensor_core.array_dim == 64
    comp = build_graph(spec).nodes["sm0.tensor"]["component"]
    assert isinstance(comp, Slot) and comp.cls is systolic_variant and comp.params.array_dim == 64


def test_variant_cleanup_leaves_schema_closed(tmp_path):
    p = tmp_path / "sys.yaml"
    p.write_text("name: sys\nextends: h200\ntensor_core:\n  kind: systolic\n")
    with pytest.raises(SpecError, match="systolic"):
        load_arch(p)


def test_registering_with_spec_adds_the_variant(tmp_path):
    """One registration step: ``register_component(..., spec=...)`` also opens the schema's variant union."""
    from warpgraph.components.tma import TmaUnit

    class SlowTma(S.DefaultTma):
        kind: Literal["test_slow"] = "test_slow"
        extra_gap_cycles: int = 3

    @register_component(role="tma", kind="test_slow", spec=SlowTma)
    class SlowTmaUnit(TmaUnit):
        pass

    try:
        p = tmp_path / "slow.yaml"
        p.write_text("name: slow\nextends: h200\ntma:\n  kind: test_slow\n")
        spec = load_arch(p)
        assert spec.tma.kind == "test_slow" and spec.tma.extra_gap_cycles == 3
        assert spec.tma.admission_depth == S.DefaultTma().admission_depth
    finally:
        registry._REGISTRY.pop(("tma", "test_slow"), None)
        S.VARIANT_FAMILIES["tma"][3].pop("test_slow")
        S._rebuild_all()


def _assert_build_refuses(override: str, role: str, kind: str, members, family: str | None = None) -> None:
    """Building h200 with ``override`` (which selects the registered ``(role, kind)``) is a SpecError naming role,
    kind and each of ``members``; the kind is unregistered afterwards (and its spec variant, given ``family``)."""
    from warpgraph.core.engine import ClockDomain, Engine
    from warpgraph.runner.machine import build_machine

    try:
        spec = load_arch("h200", [override])
        with pytest.raises(SpecError) as ei:
            build_machine(spec, Engine(ClockDomain("sm", 1755.0)))
        msg = ei.value.format()
        assert role in msg and kind in msg and all(m in msg for m in members)
    finally:
        registry._REGISTRY.pop((role, kind), None)
        if family is not None:
            S.VARIANT_FAMILIES[family][3].pop(kind)
            S._rebuild_all()


def test_a_model_missing_part_of_its_interface_is_an_error():
    """A registered tensor-core kind without ``mma_sync`` is refused when the machine is built (no stand-in)."""
    class NoMmaTensorCore(S.WgmmaTensorCore):
        kind: Literal["test_nomma"] = "test_nomma"

    @register_component(role="tensor_core", kind="test_nomma", spec=NoMmaTensorCore)
    class NoMmaUnit:
        def __init__(self, spec, engine=None):
            pass

        def wgmma(self, *a):
            return 0

        def stats(self):
            return {}

    _assert_build_refuses("tensor_core.kind=test_nomma", "tensor_core", "test_nomma", ("mma_sync", "wgmma"),
                          family="tensor_core")


def test_a_memory_model_missing_a_member_read_by_tma_or_ghost_fills_is_an_error():
    """The memory members that the TMA unit, the ghost fills, sampled mode, partitioned timing and the timing
    runner read (round trips, lookup coalescing, the fill table, the bandwidth servers, counters) are part of the
    memory interface: a memory kind without them is refused at build, naming role, kind and members; the test
    double declares them all."""
    from standin_units import StandinMemory

    from warpgraph.components.interfaces import check_interface, interface_members
    from warpgraph.components.memory import MemorySystem

    new = {"l2_rt", "dram_rt", "tma_l2_lat", "share_lookups", "merge_fills", "lookup_cap",
           "n_sm", "gpc_of", "fills", "merged_bytes", "on_share", "write_back_ratio", "l2_read_bytes",
           "l2_write_bytes", "dram_read_bytes"}
    methods = {"fill_estimate", "note_fill", "bandwidth_servers", "note_hbm_load"}
    assert (new | methods | {"last_ack", "atom_extra", "atom_acquire", "fence_gpu", "locks"}
            <= set(interface_members("memory")))

    @register_component(role="memory", kind="test_nolookups")
    class NoLookupsMemory(MemorySystem):
        kind = "test_nolookups"

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            del self.share_lookups, self.lookup_cap, self.gpc_of, self.merged_bytes

    _assert_build_refuses("components={memory: test_nolookups}", "memory", "test_nolookups",
                          ("share_lookups", "lookup_cap", "gpc_of", "merged_bytes"))

    class OnlyAccesses:   # the methods the SM core calls, none of those of the fill table / servers
        def global_access(self, *a): ...
        def bulk(self, *a): ...
        def stats(self): ...

    with pytest.raises(SpecError) as ei:
        check_interface("memory", "test_onlyaccesses", OnlyAccesses)
    assert all(m in ei.value.format() for m in methods)
    spec = load_arch("h200")
    check_interface("memory", "default", MemorySystem(spec))
    sd = StandinMemory(spec)
    check_interface("memory", "standin", sd)
    # the double's fill table and estimate are its own (no merging: merge_fills False); it has no fluid servers
    sd.note_fill(7, 0, 500.0, 256)
    assert sd.fills[7] == [500.0 - sd.l2_rt, 500.0, 256, 1] and sd.merged_bytes == 0
    assert sd.fill_estimate(0, 1024, 0, 8) == 1024 / sd.sm_bpc + sd.l2_lat
    with pytest.raises(NotImplementedError):
        sd.bandwidth_servers()


def test_a_tma_model_missing_a_member_read_by_the_core_ghost_fills_or_partitioned_timing_is_an_error():
    """The TMA members that the SM core (bulk groups, MEMBAR.GPU, bulk copies, multicast), the ghost fills and
    partitioned timing read are part of the TMA interface: a TMA kind without them is refused at build, naming
    role, kind and members; the default unit and the test double declare them all."""
    from standin_units import StandinMemory, StandinTma

    from warpgraph.components.interfaces import check_interface, interface_members
    from warpgraph.components.memory import MemorySystem
    from warpgraph.components.tma import TmaUnit
    from warpgraph.core.engine import ClockDomain, Engine

    data = {"lat", "gen_free", "active", "last_done", "merge", "oob_l2", "fills", "on_share"}
    methods = {"issue", "bulk_commit", "bulk_group_done", "stream_end", "note_fill", "stats"}
    assert data | methods == set(interface_members("tma"))

    class NoFillsTma(S.DefaultTma):
        kind: Literal["test_nofills"] = "test_nofills"

    @register_component(role="tma", kind="test_nofills", spec=NoFillsTma)
    class NoFillsTmaUnit(TmaUnit):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            del self.fills, self.gen_free, self.on_share, self.last_done

    _assert_build_refuses("tma.kind=test_nofills", "tma", "test_nofills",
                          ("fills", "gen_free", "on_share", "last_done"), family="tma")

    class OnlyIssue:   # what the SM core's TMA loads and bulk waits call, none of the lookup / bulk-group members
        def issue(self, *a): ...
        def bulk_group_done(self, *a): ...
        def stats(self): ...

    with pytest.raises(SpecError) as ei:
        check_interface("tma", "test_onlyissue", OnlyIssue)
    assert all(m in ei.value.format() for m in ("bulk_commit", "stream_end", "note_fill"))
    spec = load_arch("h200")
    eng = Engine(ClockDomain("sm", 1755.0))
    check_interface("tma", "default", TmaUnit(spec, eng, MemorySystem(spec), None))
    sd = StandinTma(spec, eng, StandinMemory(spec), None)
    check_interface("tma", "standin", sd)
    # the double: no issue latency, one stream rate, no merging (ghost fills skip it), its own fill table
    assert sd.lat == 0 and sd.merge is False and sd.stream_end(10, 320, 0) == 10 + 320 / sd.bpc
    sd.note_fill(7, 0, 100.0, 900.0, 256)
    assert sd.fills[7] == [900.0 - sd.mem.l2_rt - 100.0, 900.0, 256, 100.0, 1]
    done = sd.issue(0, 3, 0, 1024, 1024, 0, -1, True)
    assert sd.last_done > 0 and sd.gen_free[3] > 0 and done == sd.gap
    sd.bulk_commit(3, 0)
    assert sd.bulk_group_done(3, 0, 0) == sd.last_done


def test_unknown_kind_names_role_kind_and_known_kinds(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("name: x\nextends: h200\nsubpartition:\n  kind: nosuch\n")
    with pytest.raises(SpecError) as ei:
        load_arch(p)
    msg = ei.value.format()
    assert "subpartition" in msg and "nosuch" in msg and "default" in msg


def test_roles_without_a_section_kind_are_selected_in_components():
    """``components: {xbar: <kind>}`` selects a registered crossbar model for the machine built from the graph."""
    from warpgraph.components.memory_parts import Crossbar
    from warpgraph.core.engine import ClockDomain, Engine
    from warpgraph.runner.machine import build_machine

    @register_component(role="xbar", kind="test_wide")
    class WideCrossbar(Crossbar):
        def __init__(self, params, n_sm):
            super().__init__(params, n_sm)
            self.bpc *= 2
            self.cap *= 2

    try:
        spec = load_arch("h200", ["components={xbar: test_wide}"])
        m = build_machine(spec, Engine(ClockDomain("sm", 1755.0)))
        assert type(m.parts["xbar"]) is WideCrossbar and m.graph.nodes["xbar"]["kind"] == "test_wide"
        with pytest.raises(SpecError, match="not a role selected here"):
            load_arch("h200", ["components={tma: default}"])
    finally:
        registry._REGISTRY.pop(("xbar", "test_wide"), None)


def test_a_unit_whose_stats_fail_or_are_not_a_dict_is_an_error_not_an_empty_table():
    from warpgraph.core.errors import SimulationError
    from warpgraph.runner.timing import _unit_stats

    class Broken:
        def stats(self):
            raise KeyError("l2_hits")

    class NotADict:
        def stats(self):
            return [("hits", 3)]

    with pytest.raises(SimulationError, match=r"Broken\.stats\(\) failed: KeyError"):
        _unit_stats(Broken())
    with pytest.raises(SimulationError, match=r"NotADict\.stats\(\) returned list"):
        _unit_stats(NotADict())
    assert _unit_stats(None) == {}
