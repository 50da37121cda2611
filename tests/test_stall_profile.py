"""The per-instruction stall profile (runner/stall_profile.py): the launch's stall accounting cut by instruction."""
import pytest

from warpgraph.cli.main import main
from warpgraph.runner.simulate import simulate

REC = "workloads/microbench/alu_bar_w4"   # 4 warps meeting at a bar.sync per iteration
SOFTMAX = "workloads/records/h200_gallery/softmax_r64_c300_full"


def _sm_stalls(res):
    st = res.stats
    rows = st[st.component.str.match(r"^sm\d+\.stalls$")]
    return rows.groupby("stat").value.sum()


@pytest.fixture(scope="module")
def bar_run():
    return simulate(REC, "h200", stall_profile=True)


def test_profile_columns_are_the_launch_stall_counters_cut_by_instruction(bar_run):
    df, tot = bar_run.instruction_stalls, _sm_stalls(bar_run)
    reasons = [c for c in tot.index if tot[c]]
    assert reasons   # the launch stalls at all
    for c in reasons:
        assert int(df[c].sum()) == int(tot[c]), c
    assert int(df["issued"].sum()) == bar_run.metrics["warp_instructions"]
    assert abs(df["stall_share"].sum() - 1.0) < 1e-9


def test_a_barrier_wait_is_charged_to_the_instruction_the_warp_waits_to_issue(bar_run):
    df = bar_run.instruction_stalls.set_index("index")
    bars = df[df["ptx"].str.startswith("bar.sync")]
    assert len(bars) > 1
    # each bar.sync's wait shows on the instruction after it (the warp's next issue), as the sampler's PC does
    after = [i + 1 for i in bars.index if i + 1 in df.index]
    assert df.loc[after, "barrier"].sum() == df["barrier"].sum() > 0


def test_profiling_does_not_change_the_timing(bar_run):
    plain = simulate(REC, "h200")
    assert plain.metrics["cycles"] == bar_run.metrics["cycles"]
    assert plain.instruction_stalls is None


def test_cp_async_wait_sits_on_the_barrier_after_it():
    """softmax r64 c300 waits for its cp.async rows (``cp.async.wait_group 0``) before ``bar.sync``: the
    long-scoreboard wait is the largest single entry of the profile and sits on that bar.sync."""
    df = simulate(SOFTMAX, "h200", stall_profile=True).instruction_stalls
    top = df.loc[df["stalled"].idxmax()]
    assert top["ptx"].startswith("bar.sync") and top["long_scoreboard"] > 0.9 * top["stalled"]


def test_cli_writes_the_profile_and_refuses_jobs(tmp_path, capsys):
    out = tmp_path / "prof.csv"
    with pytest.raises(SystemExit) as ei:
        main(["run", REC, "--stall-profile", str(out), "-q"])
    assert ei.value.code in (0, None)
    head = out.read_text().splitlines()[0].split(",")
    assert head[:4] == ["index", "line", "ptx", "issued"] and "barrier" in head
    with pytest.raises(SystemExit) as ei:
        main(["run", REC, "--stall-profile", str(out), "--jobs", "2", "-q"])
    assert ei.value.code == 2
    assert "single-process timing run" in capsys.readouterr().err
