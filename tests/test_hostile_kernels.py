"""Hostile kernels (issue 21): every one stops with a located SimulationError / PTXError (exit 2 through the CLI),
never a hang, a traceback or a silent completion."""
import numpy as np
import pytest

from warpgraph.core.errors import PTXError, RecordError, SimulationError, UserError
from warpgraph.runner.simulate import simulate
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.functional.run import DEFAULT_MAX_STEPS, DEFAULT_MAX_WALL_SECONDS

import _hostile_helpers as _H  # noqa: E402  (tests/conftest.py puts tests/ on the path)
HEAD, kernel, record, write_record, cli = _H.HEAD, _H.kernel, _H.record, _H.write_record, _H.cli


LOOP = "SPIN:\n add.s32 %r5, %r5, 1;\n bra.uni SPIN;\n"


# ------------------------------------------------------------------------------------------ budgets
def test_default_budgets_are_finite():
    assert 0 < DEFAULT_MAX_STEPS < 10**8 and 0 < DEFAULT_MAX_WALL_SECONDS <= 3600


@pytest.mark.timeout(120)
def test_infinite_loop_stops_at_the_default_step_budget_naming_stuck_warps():
    with pytest.raises(SimulationError) as ei:
        run_functional(record(LOOP, block=(32, 1, 1)), want_trace=False)
    e = ei.value
    assert "step limit" in e.message and "stuck warps" in e.message
    assert "CTA 0 warp 0" in e.message and "bra.uni SPIN" in e.message
    assert e.location.startswith("kernel.ptx:") and "--max-steps" in e.hint


def test_step_budget_names_every_stuck_pc():
    body = " setp.lt.u32 %p1, %r1, 32;\n @%p1 bra A;\nB:\n bra.uni B;\nA:\n bra.uni A;\n"
    with pytest.raises(SimulationError) as ei:
        simulate(record(body), "h200", mode="functional", max_steps=5000)
    msg = ei.value.message
    assert msg.count("warp(s)") >= 1 and "CTA 0 warp" in msg


def test_wall_budget_stops_a_loop():
    with pytest.raises(SimulationError, match="wall budget of 0.2 s"):
        run_functional(record(LOOP), want_trace=True, max_steps=0, max_wall_seconds=0.2)


def test_trace_size_budget():
    # an address that moves every iteration: the trace grows by a payload row per step
    body = "L:\n ld.global.b32 %r5, [%rd3];\n add.s64 %rd3, %rd3, 0;\n st.global.b32 [%rd3], %r5;\n" \
           " add.s32 %r6, %r6, 1;\n st.global.b32 [%rd3], %r6;\n bra.uni L;\n"
    with pytest.raises(SimulationError, match="trace grew past"):
        run_functional(record(body), want_trace=True, max_steps=0, max_trace_bytes=20_000)


def test_cli_max_steps_flag_and_exit_code(tmp_path):
    d = write_record(tmp_path / "loop", LOOP)
    code, _, err = cli(["run", str(d), "--mode", "functional", "--max-steps", "2000"])
    assert code == 2, err
    assert "step limit 2,000" in err and "stuck warps" in err and "Traceback" not in err


def test_cli_timing_window_negative_is_a_range_error(tmp_path):
    d = write_record(tmp_path / "ok", " st.global.b32 [%rd3], %r1;\n")
    for bad in ("timing.window=-5", "timing.n_sms=abc", "timing.n_sms=0", "sass.div=x", "timing.registers=1e12",
                "timing.policy=fifo", "timing.units=magic"):
        code, _, err = cli(["run", str(d), "--set", bad])
        assert code == 2, (bad, err)
        assert "--set" in err and "Traceback" not in err, (bad, err)


def test_huge_latency_is_a_range_error_not_memory_error(tmp_path):
    d = write_record(tmp_path / "ok", " st.global.b32 [%rd3], %r1;\n")
    code, _, err = cli(["run", str(d), "--set", "latencies.fp32.latency_cycles=1000000000000"])
    assert code == 2 and "out of range" in err


# ------------------------------------------------------------------------------------------ synchronisation
MBAR_INIT = " mov.u32 %r8, smem;\n setp.eq.s32 %p1, %r1, 0;\n @%p1 mbarrier.init.shared::cta.b64 [%r8], 128;\n" \
            " bar.sync 0;\n mbarrier.arrive.shared.b64 %rd6, [%r8];\n mov.b32 %r9, 0;\n"


def test_never_completing_mbarrier_poll_is_a_deadlock():
    body = MBAR_INIT + "W:\n mbarrier.try_wait.parity.shared.b64 %p2, [%r8], %r9;\n @!%p2 bra.uni W;\n"
    with pytest.raises(SimulationError, match="deadlock"):
        run_functional(record(body, shared=64), max_steps=100_000)


def test_never_completing_mbarrier_wait_loop_with_extra_work_stops():
    body = MBAR_INIT + ("W:\n mbarrier.try_wait.parity.shared.b64 %p2, [%r8], %r9;\n add.s32 %r10, %r10, 1;\n"
                        " @!%p2 bra.uni W;\n")
    with pytest.raises(SimulationError) as ei:
        run_functional(record(body, shared=64), max_steps=50_000)
    assert "deadlock" in ei.value.message or "stuck warps" in ei.value.message


def test_bar_sync_count_larger_than_cta():
    with pytest.raises(SimulationError, match="can never complete"):
        run_functional(record(" bar.sync 1, 128;\n"), max_steps=10_000)


def test_bar_sync_count_not_multiple_of_32():
    with pytest.raises(PTXError, match="multiple of 32"):
        run_functional(record(" bar.sync 1, 48;\n"), max_steps=10_000)


def test_divergent_bar_sync_within_a_warp():
    body = " setp.lt.u32 %p1, %r1, 16;\n @%p1 bra A;\n bar.sync 0;\n bra.uni E;\nA:\n bar.sync 0;\nE:\n"
    with pytest.raises(SimulationError, match="divergent bar.sync"):
        run_functional(record(body), max_steps=10_000)


def test_warps_at_different_bar_sync_instructions_are_fine():
    # per-warp uniform: warp 0 at one bar.sync, warp 1 at another (counts per barrier id on hardware)
    body = (" setp.lt.u32 %p1, %r1, 32;\n @%p1 bra A;\n bar.sync 0;\n bra.uni E;\nA:\n bar.sync 0;\nE:\n"
            " st.global.b32 [%rd3], %r1;\n")
    res = run_functional(record(body), max_steps=10_000)
    assert (res.outputs["out"][:64] == np.arange(64)).all()


def test_early_exit_then_barrier_still_fine():
    body = " setp.ge.u32 %p1, %r1, 48;\n @%p1 bra E;\n bar.sync 0;\n st.global.b32 [%rd3], %r1;\nE:\n"
    res = run_functional(record(body), max_steps=10_000)
    assert (res.outputs["out"][:48] == np.arange(48)).all()


# ------------------------------------------------------------------------------------------ faults
def test_trap_stops_the_kernel_naming_it():
    body = " setp.eq.u32 %p1, %r1, 37;\n @%p1 trap;\n st.global.b32 [%rd3], %r1;\n"
    with pytest.raises(SimulationError) as ei:
        run_functional(record(body), max_steps=10_000)
    assert "trap" in ei.value.message and "warp 1 lane 5" in ei.value.message
    assert ei.value.location.startswith("kernel.ptx:")


def test_trap_not_reached_is_fine():
    body = " setp.eq.u32 %p1, %r1, 999;\n @%p1 trap;\n st.global.b32 [%rd3], %r1;\n"
    run_functional(record(body), max_steps=10_000)


def test_oob_through_the_cli_is_exit_2(tmp_path):
    d = write_record(tmp_path / "oob", " add.s64 %rd5, %rd3, 100000000;\n st.global.b32 [%rd5], %r1;\n")
    code, _, err = cli(["run", str(d), "--mode", "functional"])
    assert code == 2 and "Traceback" not in err and "kernel.ptx:" in err


# ------------------------------------------------------------------------------------------ decode step
@pytest.mark.parametrize("line", [
    " shfl.sync.bfly.b32 %r5, %r1;",                 # too few operands
    " bra.uni;",                                      # no target
    " mad.wide.s64 %rd5, %rd1, %rd1, %rd1;",          # no 128-bit mad.wide
    " shl.b32 %r5, %r1, -1;",                         # negative shift immediate
])
def test_decode_errors_are_located(line):
    with pytest.raises(UserError) as ei:
        run_functional(record(line + "\n"), max_steps=10_000)
    assert ei.value.location and ei.value.location.startswith("kernel.ptx:")


# ------------------------------------------------------------------------------------------ record vs PTX
def test_simulate_checks_record_params_against_ptx():
    tm = {"tensormap": {"buffer": "out", "box": [64], "swizzle_bytes": 0}}
    rec = record(" st.global.b32 [%rd3], %r1;\n", params=[tm])
    with pytest.raises(RecordError, match="does not fit PTX parameter"):
        simulate(rec, "h200", mode="functional")


def test_simulate_checks_block_against_reqntid():
    rec = record(" st.global.b32 [%rd3], %r1;\n", directives="\n.reqntid 128", block=(64, 1, 1))
    with pytest.raises(RecordError, match="reqntid"):
        simulate(rec, "h200", mode="functional")
    rec = record(" st.global.b32 [%rd3], %r1;\n", directives="\n.maxntid 32", block=(64, 1, 1))
    with pytest.raises(RecordError, match="maxntid"):
        simulate(rec, "h200", mode="functional")
    ok = record(" st.global.b32 [%rd3], %r1;\n", directives="\n.reqntid 64", block=(64, 1, 1))
    simulate(ok, "h200", mode="functional")


@pytest.mark.parametrize("line", [" add.s64 %r5, %r1, %r2;", " mov.b32 %rd5, %r1;", " and.b64 %rd5, %rd1, %r2;"])
def test_register_width_mismatch_is_a_ptx_error(line):
    with pytest.raises(PTXError, match="bits"):
        run_functional(record(line + "\n"), max_steps=10_000)


def test_cli_validate_max_steps_flag(tmp_path):
    write_record(tmp_path / "recs" / "loop", LOOP)
    code, out, err = cli(["validate", str(tmp_path / "recs"), "--max-steps", "1000", "--out", str(tmp_path / "v")])
    assert code == 1, (out, err)
    assert "step limit 1,000" in out + err


def test_wgmma_with_f32_inputs_is_a_located_error():
    acc = ",".join(f"%r{20 + i}" for i in range(32))
    body = (" mov.b64 %rd6, 0;\n wgmma.fence.sync.aligned;\n"
            f" wgmma.mma_async.sync.aligned.m64n64k8.f32.f32.f32 {{{acc}}}, %rd6, %rd6, 1, 1, 1, 0, 0;\n"
            " wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;\n")
    with pytest.raises(UserError) as ei:
        run_functional(record(body, block=(128, 1, 1)), max_steps=10_000)
    assert ei.value.location.startswith("kernel.ptx:")


def test_negative_budget_is_a_user_error(tmp_path):
    d = write_record(tmp_path / "ok", " st.global.b32 [%rd3], %r1;\n")
    for flag in ("--max-steps", "--max-wall-seconds"):
        code, _, err = cli(["run", str(d), flag, "-1"])
        assert code == 2 and flag in err, err
