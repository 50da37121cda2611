"""The clock oracle (runner/simulate.py) reports when it finds no fixed point: a clock-reading kernel is re-timed until
its dynamic instruction count stops changing, at most 6 rounds; a run that does not settle warns and says so in
``metrics['clock_oracle']`` (nothing silent)."""
from __future__ import annotations

import pytest

import warpgraph as wg
from _replay_helpers import MB


def test_a_clock_oracle_without_a_fixed_point_is_reported(monkeypatch):
    """The clock oracle re-times a clock-reading kernel until its dynamic instruction count stops changing (at
    most 6 rounds, runner/simulate.py). When it does not settle, the run says so (a warning and
    ``metrics['clock_oracle']``) instead of passing the last round's outputs off as converged. A functional pass
    whose count changes every round stands in for such a kernel (the first draft of membar_sm.cu, with
    %clock64 spins in nested loops, did this: 3071 / 2931 / 3051 ... instructions)."""
    import warpgraph.runner.simulate as S

    real = S._run_functional
    calls = []

    def drifting(*a, **kw):
        res = real(*a, **kw)
        if kw.get("clock_oracle") is not None:
            calls.append(1)
            res.dynamic_warp_instructions = int(res.dynamic_warp_instructions) + len(calls)
        return res

    monkeypatch.setattr(S, "_run_functional", drifting)
    with pytest.warns(UserWarning, match="no fixed point"):
        r = wg.simulate(MB / "msm_g1_l0", "h200", want_outputs=True, trace_cache=False)
    info = r.metrics["clock_oracle"]
    assert info["converged"] is False and info["rounds"] == 6 == len(calls)
    monkeypatch.setattr(S, "_run_functional", real)
    ok = wg.simulate(MB / "msm_g1_l0", "h200", want_outputs=True)
    assert ok.metrics["clock_oracle"]["converged"] is True
