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


def test_real_model_replaces_fallback_and_duplicates_fail():
    key = ("l2_slice", "test_only")
    try:
        @register_component(role="l2_slice", kind="test_only", fallback=True)
        class Fallback(Component):
            pass

        @register_component(role="l2_slice", kind="test_only")
        class Real(Component):
            pass

        @register_component(role="l2_slice", kind="test_only", fallback=True)
        class LateFallback(Component):
            pass

        assert get_component(*key) is Real
        with pytest.raises(ValueError, match="registered twice"):
            @register_component(role="l2_slice", kind="test_only")
            class Other(Component):
                pass
    finally:
        registry._REGISTRY.pop(key, None)


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
