"""``warpgraph run``: simulate one launch record and print its metrics (rich table or JSON)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from warpgraph.cli.ui import RunMode

__all__ = ["register", "run_command"]

_SET_HELP = ("Override a parameter, e.g. --set tma.admission_depth=8; runner knob timing.policy=lrr; "
             "SASS table sass.div=20 (repeatable).")


def run_command(
    record: Optional[Path] = typer.Argument(
        None, help="Launch-record directory (or launch.json), or a bundled record's short name "
                   "(`warpgraph records list`). Default: h200/gemm_tma_M2048_N2048_K2048."),
    arch: str = typer.Option("h200", "--arch", help="Bundled architecture name or YAML path."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
    mode: RunMode = typer.Option(RunMode.timing, "--mode", help="timing (every SM in detail), sampled (a sample "
                                 "of SMs in detail, the rest statistically) or functional (no timing)."),
    no_bundle: bool = typer.Option(False, "--no-bundle", help="Replay every warp separately instead of bundling "
                                   "warps of a CTA with identical instruction streams (slower; for validation)."),
    check: bool = typer.Option(False, "--check", help="Compute outputs and compare with the reference; exit 1 if it fails."),
    references: Optional[Path] = typer.Option(None, "--references", help="A Python file of your own reference "
                                              "functions that check.reference may name (never read from a record)."),
    save_outputs: Optional[Path] = typer.Option(None, "--save-outputs", help="Write every buffer to DIR/<buffer>.npy."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    max_cycles: Optional[int] = typer.Option(None, "--max-cycles", help="Stop with an error past this many cycles."),
    stats: bool = typer.Option(False, "--stats", help="With --json: include the full stats table."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write a Perfetto/Chrome trace-event JSON "
                                         "(.json or .json.gz; open it in https://ui.perfetto.dev)."),
    trace_sms: Optional[str] = typer.Option(None, "--trace-sms", help="SMs to trace, e.g. 0,1 or all "
                                            "(default: the first 4 SMs that run CTAs)."),
    trace_window: Optional[str] = typer.Option(None, "--trace-window", help="Cycle window START:END to trace, "
                                               "e.g. 0:20000 (default: the whole run)."),
    utilization: Optional[Path] = typer.Option(None, "--utilization", help="Plot tensor / TMA / HBM / L2 / issue "
                                               "utilisation over time to this PNG (traced SMs; HBM/L2 GPU-wide)."),
    bucket: int = typer.Option(1000, "--bucket", help="Cycles per --utilization bucket."),
    stall_profile: Optional[Path] = typer.Option(None, "--stall-profile", help="Write where the warp-cycles went, "
                                                 "per PTX instruction and stall reason, as CSV (the model's "
                                                 "counterpart of Nsight Compute's source view; runner/stall_profile.py)."),
    # --- run records and progress (cli/run_record.py, cli/ui.py)
    out: Optional[Path] = typer.Option(None, "--out", help="Write the run as a record to DIR: config.yaml "
                                       "(resolved architecture), record.json (record hash), metrics.json "
                                       "(with provenance), stats.csv/.parquet (with units)."),
    seed: int = typer.Option(0, "--seed", help="Seed of sampled mode's SM sample."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display on stderr."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Functional-pass step budget (default "
                                            "5,000,000; 0 = no limit): a kernel that loops past it stops with an "
                                            "error naming the stuck warps."),
    max_wall_seconds: Optional[float] = typer.Option(None, "--max-wall-seconds", help="Functional-pass wall-clock "
                                                     "budget in seconds (default 900; 0 = no limit)."),
    waves: Optional[int] = typer.Option(None, "--waves", help="Wave sampling: simulate the first K waves of a long "
                                        "grid in detail and extrapolate the rest, with a 1-sigma bound "
                                        "(runner/waves.py; grids of fewer than K+1 waves run in detail). With "
                                        "--mode sampled: a sample of SMs runs the first K waves."),
    lazy: bool = typer.Option(False, "--lazy", help="Flat memory in detailed mode: run the functional pass batch by "
                              "batch as CTAs launch and drop each batch once read (one more functional pass; "
                              "bit-identical cycles; workloads/functional/lazy.py)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Time the launch as its GPC partitions in N "
                                       "processes (runner/partitioned.py): the same statistics for every N; "
                                       "at most one process per GPC is used."),
    no_trace_cache: bool = typer.Option(False, "--no-trace-cache", help="Run the functional pass even when a run "
                                        "with the same record and trace inputs stored its trace "
                                        "(traces/ under $WARPGRAPH_CACHE_DIR, default ~/.cache/warpgraph/traces)."),
) -> None:
    """Simulate a launch record on an architecture."""
    from warpgraph.core.errors import UserError
    from warpgraph.cli.ui import progress
    from warpgraph.runner.simulate import DEFAULT_RECORD, parse_trace_sms, parse_trace_window, simulate
    from warpgraph.workloads.record import load_record

    mode = RunMode(mode).value
    if waves is not None:
        if mode == "functional":
            raise UserError("--waves with --mode functional", location="--waves",
                            hint="--waves K (every SM) or --mode sampled --waves K (a sample of SMs)")
        if mode == "timing":
            mode = "waves"
    if references is not None:
        from warpgraph.workloads.references import load_user_references

        load_user_references(references)
    want_events = trace is not None or utilization is not None
    if want_events and mode == "functional":
        raise UserError("--trace / --utilization need a timing run", hint="--mode timing or sampled")
    if (trace_sms is not None or trace_window is not None) and not want_events:
        raise UserError("--trace-sms / --trace-window without --trace or --utilization", hint="add --trace out.json")
    if jobs is not None and jobs < 1:
        raise UserError(f"--jobs must be >= 1, got {jobs}", location="--jobs", hint="a positive integer")
    if jobs is not None and mode != "timing":
        raise UserError("--jobs partitions a detailed timing run", location="--jobs", hint="--mode timing")
    record_path = str(record if record is not None else DEFAULT_RECORD)
    rec = load_record(record_path)
    with progress(f"{rec.name} on {arch}", quiet=quiet) as bar:
        res = simulate(rec, arch, mode=mode, overrides=list(set_) or None, max_cycles=max_cycles,
                       want_outputs=save_outputs is not None, check=check, trace_path=trace,
                       trace_sms=parse_trace_sms(trace_sms), trace_window=parse_trace_window(trace_window),
                       record_events=want_events, bundle=False if no_bundle else None, seed=seed, max_steps=max_steps,
                       max_wall_seconds=max_wall_seconds, waves=waves, lazy=lazy or None, jobs=jobs,
                       trace_cache=False if no_trace_cache else None, stall_profile=stall_profile is not None,
                       on_phase=lambda name: bar.phase(f"{rec.name} on {arch}: {name}"), on_progress=bar.ctas)
    prov = _provenance(res, rec, arch, set_, seed, mode, record_path)
    if utilization is not None:
        from warpgraph.analysis.utilization import plot_utilization

        df = res.utilization(bucket)
        utilization.parent.mkdir(parents=True, exist_ok=True)
        plot_utilization(df, utilization, title=f"{res.record} on {res.arch}",
                         clock_mhz=(res.events.meta.get("clock_mhz") if res.events is not None else None))
    if stall_profile is not None and res.instruction_stalls is not None:
        stall_profile.parent.mkdir(parents=True, exist_ok=True)
        res.instruction_stalls.to_csv(stall_profile, index=False)
        top = res.instruction_stalls.nlargest(3, "stalled")
        typer.echo(f"stall profile: {stall_profile} ({len(res.instruction_stalls)} instructions; most stalled: "
                   + "; ".join(f"line {int(r.line)} {str(r.ptx).split()[0]} {r.stall_share:.0%}"
                               for r in top.itertuples()) + ")", err=True)
    if save_outputs is not None and res.outputs:
        import numpy as np

        save_outputs.mkdir(parents=True, exist_ok=True)
        root = save_outputs.resolve()
        for name, arr in res.outputs.items():
            dst = (save_outputs / f"{name}.npy").resolve()
            if dst.parent != root or "/" in name or "\\" in name:   # names come from the record: stay inside DIR
                raise UserError(f"buffer name {name!r} would be written outside {save_outputs}",
                                location="--save-outputs", hint="buffer names that are plain file names")
            np.save(dst, np.asarray(arr))
    if out is not None:
        from warpgraph.cli.run_record import write_run_dir

        files = write_run_dir(out, res, rec, prov)
        typer.echo(f"run record: {out} ({', '.join(p.name for p in files.values())})", err=True)
    if as_json:
        d = res.to_dict(stats=stats)
        d["provenance"] = prov
        typer.echo(json.dumps(d, indent=1))
    else:
        _print_table(res)
        err = typer.echo
        if trace is not None:
            tr = res.metrics.get("trace", {})
            err(f"trace: {trace} ({tr.get('events', 0):,} events, SMs {tr.get('sms')}"
                f"{', truncated' if tr.get('truncated') else ''}) -- open it in https://ui.perfetto.dev", err=True)
        if utilization is not None:
            err(f"utilization: {utilization}", err=True)
    if check and res.check is not None and not getattr(res.check, "ok", False):
        raise typer.Exit(1)


def _provenance(res, rec, arch, set_, seed, mode, record_path) -> dict:
    from warpgraph.cli.run_record import provenance

    return provenance(res, rec, arch=arch, overrides=list(set_), seed=seed, mode=mode, record_path=record_path)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _print_table(res) -> None:
    from rich.table import Table

    from warpgraph.cli.ui import stdout_console

    con = stdout_console()
    m = res.metrics
    meas = res.measured or {}
    t = Table(title=f"{res.record} on {res.arch} ({res.mode})")
    t.add_column("metric")
    t.add_column("simulated", justify="right")
    t.add_column("measured", justify="right")
    mk = {"cycles": "cycles", "warp_instructions": "sass_warp_instructions", "dram_read_bytes": "dram_read_bytes",
          "dram_write_bytes": "dram_write_bytes", "l2_bytes": "l2_bytes",
          "achieved_occupancy_pct": "achieved_occupancy_pct"}
    for k in ("cycles", "warp_instructions", "ptx_warp_instructions", "dram_read_bytes", "dram_write_bytes",
              "l2_bytes", "achieved_occupancy_pct", "tensor_utilization_pct", "ctas_per_sm", "wall_seconds",
              "simulated_cycles_per_second", "warp_instructions_per_second"):
        if m.get(k) is not None:     # tensor_utilization_pct is None when the variant declares no dense peak
            mv = meas.get(mk.get(k, ""), "")
            t.add_row(k, _fmt(m[k]), _fmt(mv) if mv != "" else "")
    rf = m.get("roofline") or {}
    if rf.get("bound_cycles"):
        t.add_row(f"roofline bound ({rf.get('bound_by')})", _fmt(float(rf["bound_cycles"])), "")
        if rf.get("sim_over_bound"):
            t.add_row("simulated / bound", _fmt(float(rf["sim_over_bound"])), "")
    con.print(t)
    smp = m.get("sampling") or {}
    if smp.get("mode") == "sampled":
        con.print(f"sampled: {len(smp.get('sms') or [])} SMs in detail, {smp.get('ctas_simulated')} of "
                  f"{smp.get('ctas_total')} CTAs (stratified, seed {smp.get('seed')}); last sampled SM at "
                  f"{smp.get('cycles_sampled_sms'):,} cycles + {smp.get('tail_shift_cycles'):,} expected for the "
                  f"slowest of all SMs; cycles error estimate ±{smp.get('cycles_error_pct')} %")
    elif smp.get("fallback"):
        con.print(f"sampled mode ran in detail: {smp['fallback']}")
    sr = m.get("stall_ratios_per_issue")
    if sr:
        ms = meas.get("stall_ratios_per_issue", {})
        t2 = Table(title="stall ratios per issued instruction")
        t2.add_column("reason")
        t2.add_column("simulated", justify="right")
        t2.add_column("measured", justify="right")
        for k, v in sr.items():
            if v or ms.get(k):
                t2.add_row(k, f"{v:.2f}", f"{ms[k]:.2f}" if k in ms else "")
        con.print(t2)
    if res.check is not None:
        ok = getattr(res.check, "ok", False)
        con.print(f"check: {'[green]ok' if ok else '[red]FAILED'}[/] {getattr(res.check, 'message', '')}")


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
