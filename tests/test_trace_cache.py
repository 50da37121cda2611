"""Trace cache (runner/trace_cache.py): timing overrides reuse one functional pass with identical results; every
input of the functional pass (record content, L1 / L2 capacities, code version, mode) changes the key."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import warpgraph
from warpgraph.runner import trace_cache as tc
from warpgraph.workloads.scale import small_variant

ROOT = Path(__file__).resolve().parent.parent
ATTN = ROOT / "workloads" / "records" / "h200" / "attn_B4_H16_S1024_D64_causal0"
#: a timing field (changes cycles, not the trace) and a trace-relevant one (the L2 capacity the functional
#: pass's residency model uses)
TIMING = {"hbm.latency_cycles": 800}
TRACE_RELEVANT = {"l2.reuse_capacity_bytes": 1 << 20}


@pytest.fixture(scope="module")
def rec():
    return small_variant(warpgraph.load_record(ATTN))


@pytest.fixture(autouse=True)
def _fresh_memory():
    tc.clear_memory()
    yield
    tc.clear_memory()


def _same(a, b):
    """Same simulated results: cycles, instructions and every statistic but the wall-clock ones."""
    assert a.metrics["cycles"] == b.metrics["cycles"]
    assert a.metrics["warp_instructions"] == b.metrics["warp_instructions"]
    fa, fb = (r.stats[~r.stats["stat"].str.contains("wall")].reset_index(drop=True) for r in (a, b))
    assert len(fa) > 100 and fa.equals(fb)


def test_timing_override_hits_and_matches_an_uncached_run(rec, tmp_path):
    ref = warpgraph.simulate(rec, "h200", overrides=TIMING, trace_cache=False)
    assert ref.metrics["trace_cache"] == "off"
    first = warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    assert first.metrics["trace_cache"] == "miss"
    hit = warpgraph.simulate(rec, "h200", overrides=TIMING, trace_cache=tmp_path)
    assert hit.metrics["trace_cache"] == "hit"
    assert hit.metrics["cycles"] != first.metrics["cycles"]      # the override does change the timing
    _same(hit, ref)


def test_trace_relevant_fields_miss(rec, tmp_path):
    warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    r = warpgraph.simulate(rec, "h200", overrides=TRACE_RELEVANT, trace_cache=tmp_path)
    assert r.metrics["trace_cache"] == "miss"
    # the per-CTA L1 capacity comes from the unified L1/shared array and the occupancy
    r = warpgraph.simulate(rec, "h200", overrides={"sm.unified_l1_shared_bytes": 245_760}, trace_cache=tmp_path)
    assert r.metrics["trace_cache"] == "miss"
    r = warpgraph.simulate(rec, "h200", mode="sampled", sample=1, trace_cache=tmp_path)
    assert r.metrics["trace_cache"] == "miss"      # the mode / sample is part of the key
    assert len(list(tmp_path.glob("*.npz"))) == 4


def test_disk_level_serves_a_new_process_state(rec, tmp_path):
    a = warpgraph.simulate(rec, "h200", overrides=TIMING, trace_cache=tmp_path)
    assert a.metrics["trace_cache"] == "miss"
    tc.clear_memory()                               # as a fresh worker process would start
    b = warpgraph.simulate(rec, "h200", overrides=TIMING, trace_cache=tmp_path)
    assert b.metrics["trace_cache"] == "hit"
    _same(a, b)


def test_record_content_and_code_version_are_in_the_key(rec, tmp_path, monkeypatch):
    warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    from warpgraph.workloads.record import LaunchRecord

    def variant(init=None, ptx=None):
        d = rec.model_dump(mode="json")
        if init is not None:
            d["buffers"][next(iter(d["buffers"]))]["init"] = init
        r = LaunchRecord.model_validate(d)
        r._ptx_text = ptx if ptx is not None else rec.ptx_text()
        return r

    assert tc.trace_key(variant(), seed=0) == tc.trace_key(rec, seed=0)
    assert tc.trace_key(variant(init={"normal": 0.25}), seed=0) != tc.trace_key(rec, seed=0)
    assert tc.trace_key(variant(ptx=rec.ptx_text() + "\n// edited\n"), seed=0) != tc.trace_key(rec, seed=0)
    assert tc.trace_key(rec, seed=1) != tc.trace_key(rec, seed=0)
    k0 = tc.trace_key(rec, seed=0)
    monkeypatch.setattr(tc, "_code_version", "another-executor")
    assert tc.trace_key(rec, seed=0) != k0
    r = warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    assert r.metrics["trace_cache"] == "miss"


def test_corrupt_file_recomputes_with_a_warning(rec, tmp_path):
    a = warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    (f,) = tmp_path.glob("*.npz")
    f.write_bytes(b"not a trace")
    tc.clear_memory()
    with pytest.warns(RuntimeWarning, match="unreadable"):
        b = warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    assert b.metrics["trace_cache"] == "miss"
    _same(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tc.clear_memory()
        assert warpgraph.simulate(rec, "h200", trace_cache=tmp_path).metrics["trace_cache"] == "hit"


def test_off_when_disabled_or_outputs_or_budgets(rec, tmp_path):
    assert warpgraph.simulate(rec, "h200", trace_cache=False).metrics["trace_cache"] == "off"
    assert warpgraph.simulate(rec, "h200", trace_cache=tmp_path, want_outputs=True).metrics["trace_cache"] == "off"
    assert warpgraph.simulate(rec, "h200", trace_cache=tmp_path, max_steps=10**6).metrics["trace_cache"] == "off"
    assert not list(tmp_path.glob("*.npz"))
    r = warpgraph.simulate(rec, "h200", trace_cache="memory")
    assert r.metrics["trace_cache"] == "miss" and warpgraph.simulate(rec, "h200", trace_cache="memory").metrics[
        "trace_cache"] == "hit"


def test_env_folder_and_off(monkeypatch, tmp_path):
    """One root for every disk cache (core/cache_dir.py): traces under it, ptxas facts beside them; off is off."""
    from warpgraph.workloads.compiled import _cache_dir

    monkeypatch.delenv("WARPGRAPH_CACHE", raising=False)
    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", str(tmp_path / "c"))
    assert tc.resolve_dir() == tmp_path / "c" / "traces"
    assert _cache_dir() == tmp_path / "c" / "ptxas"
    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", "off")
    assert tc.resolve_dir() is None and _cache_dir() is None
    assert tc.resolve_dir(tmp_path) == tmp_path
    assert tc.resolve_dir(False) is None


def test_old_variable_still_names_the_trace_folder_with_a_warning(monkeypatch, tmp_path):
    import warpgraph.core.cache_dir as cd

    monkeypatch.delenv("WARPGRAPH_CACHE_DIR", raising=False)
    monkeypatch.setattr(cd, "_warned", False)
    monkeypatch.setenv("WARPGRAPH_CACHE", str(tmp_path / "old"))
    with pytest.warns(UserWarning, match="WARPGRAPH_CACHE_DIR"):
        assert tc.resolve_dir() == tmp_path / "old"
    monkeypatch.setenv("WARPGRAPH_CACHE", "off")
    assert tc.resolve_dir() is None


def test_disk_size_is_bounded(rec, tmp_path, monkeypatch):
    warpgraph.simulate(rec, "h200", trace_cache=tmp_path)
    (f,) = tmp_path.glob("*.npz")
    monkeypatch.setenv("WARPGRAPH_CACHE_MAX_BYTES", str(int(f.stat().st_size * 1.5)))
    import os
    import time

    os.utime(f, (time.time() - 100, time.time() - 100))
    warpgraph.simulate(rec, "h200", overrides=TRACE_RELEVANT, trace_cache=tmp_path)
    left = list(tmp_path.glob("*.npz"))
    assert len(left) == 1 and left[0] != f          # the least recently used entry went


def test_concurrent_processes_compute_once(rec, tmp_path):
    """Two processes start on the same missing key at once: the lock lets one compute, the other reads it."""
    d = tmp_path / "cache"
    code = textwrap.dedent(f"""
        import json, sys, warpgraph
        from warpgraph.workloads.scale import small_variant
        rec = small_variant(warpgraph.load_record({str(ATTN)!r}))
        r = warpgraph.simulate(rec, "h200", overrides={json.dumps(TIMING)}, trace_cache={str(d)!r})
        print(json.dumps([r.metrics["trace_cache"], r.metrics["cycles"]]))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=300)[0].strip().splitlines()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(o[0] for o in outs) == ["hit", "miss"]
    assert outs[0][1] == outs[1][1]
    assert not list(d.glob("*.tmp"))


def test_study_with_two_workers_pays_the_functional_pass_once(rec, tmp_path):
    """``explore --workers 2`` over a timing parameter: the traces live next to the journal; across all trials
    of both workers the functional pass ran once (one miss), and ``trace_cache: false`` turns it off."""
    from warpgraph import explore
    from warpgraph.explore.spec import load_study
    from warpgraph.workloads.record import save_record

    save_record(rec, tmp_path / "attn_small")
    body = textwrap.dedent(f"""\
        base: h200
        workloads: [{tmp_path / 'attn_small'}]
        space:
          hbm.latency_cycles: [300, 400, 500, 600]
        objectives: [{{metric: cycles}}]
        sampler: grid
        """)
    (tmp_path / "s.yaml").write_text("name: s\n" + body)
    st = explore.run_study(load_study(tmp_path / "s.yaml"), workers=2)
    df = explore.results(st)
    assert len(df) == 4 and (df.state == "complete").all()
    states = [t.user_attrs["workloads"]["attn_small"]["trace_cache"] for t in st.get_trials()]
    assert sorted(states) == ["hit", "hit", "hit", "miss"]
    assert len(list((tmp_path / "s_out" / "traces").glob("*.npz"))) == 1
    cycles = sorted(t.user_attrs["metrics"]["cycles"] for t in st.get_trials())

    (tmp_path / "off.yaml").write_text("name: off\ntrace_cache: false\n" + body)
    st = explore.run_study(load_study(tmp_path / "off.yaml"), workers=1)
    assert [t.user_attrs["workloads"]["attn_small"]["trace_cache"] for t in st.get_trials()] == ["off"] * 4
    assert sorted(t.user_attrs["metrics"]["cycles"] for t in st.get_trials()) == cycles


def test_unwritable_folder_warns_and_the_run_goes_on(rec, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.warns(RuntimeWarning, match="could not write"):
        r = warpgraph.simulate(rec, "h200", trace_cache=blocker / "traces")
    assert r.metrics["trace_cache"] == "miss" and r.metrics["cycles"] > 0


def test_cache_files_are_replaced_whole(tmp_path, monkeypatch):
    """ptxas / SASS facts are written through a temporary file and os.replace (core/cache_dir.py write_atomic): a
    failed write leaves the old file and no temporary behind."""
    from warpgraph.core import cache_dir as cd

    p = tmp_path / "k.json"
    cd.write_atomic(p, '{"a": 1}')
    cd.write_atomic(p, '{"b": 2}')
    assert p.read_text() == '{"b": 2}' and [q.name for q in tmp_path.iterdir()] == ["k.json"]

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(cd.os, "replace", boom)
    with pytest.raises(OSError):
        cd.write_atomic(p, '{"c": 3}')
    assert p.read_text() == '{"b": 2}' and [q.name for q in tmp_path.iterdir()] == ["k.json"]
