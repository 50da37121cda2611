"""core.tracing recorders + analysis.perfetto writer/validator on a synthetic session."""
import json

import pytest

from warpgraph.analysis.perfetto import TraceValidationError, chrome_trace_events, validate_chrome_trace, write_chrome_trace
from warpgraph.core.tracing import FIELDS, NULL_RECORDER, EventRecorder, NullRecorder, TraceEvents, TraceRecorder

STALLS = ("barrier", "long_scoreboard", "wait")


def session(rec):
    """Two SMs, one CTA each (4 warps), a producer warp issuing TMA, consumers waiting on an mbarrier and
    running wgmma -- the paper's Fig. 2 pattern, hand-timed."""
    rec.begin_launch(name="synthetic", n_ctas=2, warps_per_cta=4, n_sms=2, clock_mhz=1000.0, reason_names=STALLS)
    for cta, sm in ((0, 0), (1, 1)):
        base = cta * 4
        key = cta << 32 | 0x400
        # producer warp 0: issue, 2 TMA loads, exit
        g = base
        rec.warp_issue(sm, g, 10)
        rec.warp_issue(sm, g, 11)
        rec.tma_transaction(sm, None, 11, 11, 300, 16384, False, gwarp=g)
        rec.warp_stall(sm, g, 12, 55, 2)  # issue gap
        rec.warp_issue(sm, g, 55)
        rec.tma_transaction(sm, None, 55, 80, 420, 16384, False, gwarp=g)  # queued 25 cycles
        rec.warp_exit(sm, g, 56)
        rec.mbarrier_phase(-1, key, 0, 420)
        # consumers 1..3: wait on the barrier, then wgmma
        for w in (1, 2, 3):
            g = base + w
            rec.warp_issue(sm, g, 12 + w, 2)
            rec.warp_stall(sm, g, 14 + w, 430, "long_scoreboard")
            rec.mbarrier_wait(sm, g, key, 14 + w, 430)
            rec.warp_issue(sm, g, 430)
            rec.warp_issue(sm, g, 431)
            rec.tensor_op(sm, "wgmma", (cta, 0), 431, 431 + 150, 1 << 20)
            rec.warp_stall(sm, g, 432, 600, 0)
            rec.warp_issue(sm, g, 600)
            rec.warp_exit(sm, g, 601)
        rec.cta(sm, cta, 0, 610)
    for t, v in ((0, 0), (100, 5), (400, 2), (700, 0)):
        rec.counter("hbm.queue_depth", t, v)
    rec.counter("tma.active", 50, 1, sm=0)
    rec.traffic("hbm", 12, 300, 16384)
    rec.traffic("hbm", 80, 420, 16384, sm=0)
    rec.traffic("l2", 12, 420, 65536)
    rec.finish(610)
    return rec


def test_null_recorder_is_free():
    rec = NullRecorder()
    assert rec.enabled is False and NULL_RECORDER.enabled is False
    assert isinstance(rec, EventRecorder) and isinstance(TraceRecorder(), EventRecorder)
    assert session(rec) is rec
    ev = rec.events()
    assert isinstance(ev, TraceEvents) and len(ev) == 0 and set(ev.tables) == set(FIELDS)
    assert not hasattr(rec, "__dict__")  # no state to grow


def test_issue_runs_merge_and_stalls_split():
    rec = session(TraceRecorder())
    ev = rec.events()
    issue = [r for r in ev["issue"] if r[1] == 0]
    assert issue == [(0, 0, 10, 12), (0, 0, 55, 56)]
    c = ev.count()
    assert c["tma"] == 4 and c["mbar_phase"] == 2 and c["tensor"] == 6 and c["cta"] == 2
    assert c["stall"] == 2 * (1 + 3 * 2)
    # sorted by time, deterministic
    assert [r[2] for r in ev["stall"]] == sorted(r[2] for r in ev["stall"])
    assert session(TraceRecorder()).events().tables == ev.tables
    assert ev.reason_name(2) == "wait" and ev.reason_name("gmma") == "gmma"
    assert list(ev.frame("tma").columns) == list(FIELDS["tma"])
    # auto-numbered transactions are unique
    assert len({r[1] for r in ev["tma"]}) == 4


def test_window_and_sm_filters_drop_events():
    full = session(TraceRecorder()).events()
    win = session(TraceRecorder(window=(400, 500))).events()
    for kind, rows in win.tables.items():
        for r in rows:
            if kind in ("counter", "mbar_phase"):
                t = r[FIELDS[kind].index("t")]
                assert 400 <= t < 500
            else:
                t0 = r[FIELDS[kind].index("t_issue" if kind == "tma" else "t0")]
                t1 = r[FIELDS[kind].index("t_done" if kind == "tma" else "t1")]
                assert t1 > 400 and t0 < 500
    assert len(win) < len(full)
    assert all(r[2] >= 400 or r[3] > 400 for r in win["issue"])
    one = session(TraceRecorder(sms={1})).events()
    assert {r[0] for k in ("issue", "stall", "tma", "tensor", "cta") for r in one[k]} == {1}
    assert any(r[1] == -1 for r in one["counter"])  # GPU-wide counters stay


def test_max_events_truncates_deterministically():
    rec = session(TraceRecorder(max_events=10))
    ev = rec.events()
    assert len(ev) <= 10 + len(ev["issue"])  # open runs closed by finish count too
    assert ev.truncated and ev.dropped > 0


def test_coarsen_merges_short_gaps():
    rec = TraceRecorder(coarsen_cycles=4)
    rec.warp_issue(0, 0, 0)
    rec.warp_stall(0, 0, 1, 3, "wait")  # 2 cycles: dropped
    rec.warp_issue(0, 0, 3)
    rec.warp_stall(0, 0, 4, 20, "long_scoreboard")
    rec.warp_issue(0, 0, 20)
    rec.finish()
    ev = rec.events()
    assert ev["issue"] == [(0, 0, 0, 4), (0, 0, 20, 21)]
    assert ev["stall"] == [(0, 0, 4, 20, "long_scoreboard")]


def test_write_and_validate_trace(tmp_path):
    rec = session(TraceRecorder())
    p = tmp_path / "t.json"
    info = write_chrome_trace(rec, p, clock_mhz=1000.0)
    summary = validate_chrome_trace(p)
    assert summary["events"] == info["events"]
    doc = json.loads(p.read_text())
    ev = doc["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"].endswith("_name")}
    assert names[(1, 0)] == "SM 0" and names[(2, 0)] == "SM 1" and names[(0, 0)] == "GPU"
    assert names[(1, 2)] == "TMA" and names[(1, 3)] == "mbarrier" and names[(1, 4)] == "tensor core"
    assert names[(2, 100 + 5)] == "warp 1 (CTA 1)"
    # TMA: begin/end pairs with ids, queued slice for the back-pressured transaction, cycles kept in args
    tma = [e for e in ev if e.get("cat") == "tma"]
    assert len(tma) == 8 and {e["ph"] for e in tma} == {"b", "e"}
    q = [e for e in ev if e.get("cat") == "tma.queue" and e["ph"] == "b"]
    assert len(q) == 2 and q[0]["args"]["queued_cycles"] == 25
    b = next(e for e in tma if e["ph"] == "b")
    assert b["ts"] == pytest.approx(b["args"]["t_admit"] / 1000.0)
    # mbarrier phase instants resolved to the CTA's SM; stall names from reason_names
    inst = [e for e in ev if e["ph"] == "i"]
    assert sorted(e["pid"] for e in inst) == [1, 2]
    assert {e["name"] for e in ev if e.get("cat") == "stall"} == {"wait", "barrier", "long_scoreboard"}
    counters = {e["name"] for e in ev if e["ph"] == "C"}
    assert {"hbm.queue_depth", "tma.active", "hbm GB/s", "l2 GB/s"} <= counters
    # X slices never overlap on a warp track (validated) and keep cycles in args
    x = [e for e in ev if e["ph"] == "X"]
    assert all(e["args"]["t1"] - e["args"]["t0"] == e["args"]["cycles"] for e in x)


def test_export_window_clips(tmp_path):
    rec = session(TraceRecorder())
    p = tmp_path / "w.json"
    write_chrome_trace(rec, p, clock_mhz=None, window=(400, 500), sms=[0])
    validate_chrome_trace(p)
    ev = json.loads(p.read_text())["traceEvents"]
    timed = [e for e in ev if e["ph"] != "M"]
    assert timed and all(400 <= e["ts"] <= 500 for e in timed)
    assert all(e["ts"] + e.get("dur", 0) <= 500 + 1e-9 for e in timed)
    assert {e["pid"] for e in timed} <= {0, 1}
    # the counter value holding at the window start is restated there
    assert any(e["name"] == "hbm.queue_depth" and e["ts"] == 400 and e["args"]["value"] == 2 for e in timed)


def test_validator_catches_problems(tmp_path):
    good = {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "SM 0"}}
    tn = {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "w"}}
    cases = {
        "schema": [good, {"ph": "X", "pid": 1, "tid": 7, "ts": 0, "name": "a"}],  # no dur
        "overlap": [good, tn, {"ph": "X", "pid": 1, "tid": 7, "ts": 0, "dur": 5, "name": "a"},
                    {"ph": "X", "pid": 1, "tid": 7, "ts": 3, "dur": 5, "name": "b"}],
        "unmatched": [good, tn, {"ph": "b", "cat": "tma", "id": 1, "pid": 1, "tid": 7, "ts": 0, "name": "x"}],
        "order": [good, tn, {"ph": "X", "pid": 1, "tid": 7, "ts": 5, "dur": 1, "name": "a"},
                  {"ph": "X", "pid": 1, "tid": 7, "ts": 1, "dur": 1, "name": "b"}],
        "BE": [good, tn, {"ph": "B", "pid": 1, "tid": 7, "ts": 0, "name": "a"}],
        "unnamed": [good, {"ph": "X", "pid": 1, "tid": 9, "ts": 0, "dur": 1, "name": "a"}],
    }
    for what, events in cases.items():
        with pytest.raises(TraceValidationError):
            validate_chrome_trace({"traceEvents": events})
    nested = [good, tn, {"ph": "X", "pid": 1, "tid": 7, "ts": 0, "dur": 10, "name": "a"},
              {"ph": "X", "pid": 1, "tid": 7, "ts": 2, "dur": 3, "name": "b"},
              {"ph": "B", "pid": 1, "tid": 7, "ts": 11, "name": "c"}, {"ph": "E", "pid": 1, "tid": 7, "ts": 12}]
    assert validate_chrome_trace({"traceEvents": nested})["tracks"] == 1


def test_chrome_events_without_window_keep_everything():
    rec = session(TraceRecorder())
    ev = chrome_trace_events(rec, clock_mhz=2000.0)
    x = [e for e in ev if e["ph"] == "X"]
    assert len(x) == len(rec.events()["issue"]) + len(rec.events()["stall"])
    assert all(e["ts"] == pytest.approx(e["args"]["t0"] / 2000.0) for e in x)
