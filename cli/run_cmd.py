"""``warpgraph run``: simulate one launch record and print its metrics (rich table or JSON)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register", "run_command"]

_SET_HELP = ("Override a parameter, e.g. --set tma.admission_depth=8; runner knobs timing.policy=lrr, "
             "timing.units=standin; SASS table sass.div=20 (repeatable).")


def run_command(
    record: Optional[Path] = typer.Argument(
        None, help="Launch-record directory (or launch.json). Default: the bundled "
                   "workloads/records/h200/gemm_tma_M2048_N2048_K2048."),
    arch: str = typer.Option("h200", "--arch", help="Bundled architecture name or YAML path."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
    mode: str = typer.Option("timing", "--mode", help="timing | sampled (a sample of SMs in detail) | functional"),
    no_bundle: bool = typer.Option(False, "--no-bundle", help="Replay every warp separately instead of bundling "
                                   "warps of a CTA with identical instruction streams (slower; for validation)."),
    check: bool = typer.Option(False, "--check", help="Compute outputs and compare with the reference; exit 1 if it fails."),
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
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Functional-pass step budget (default "
                                            "5,000,000; 0 = no limit): a kernel that loops past it stops with an "
                                            "error naming the stuck warps."),
    max_wall_seconds: Optional[float] = typer.Option(None, "--max-wall-seconds", help="Functional-pass wall-clock "
                                                     "budget in seconds (default 900; 0 = no limit)."),
) -> None:
    """Simulate a launch record on an architecture."""
    from warpgraph.core.errors import UserError
    from warpgraph.runner.simulate import parse_trace_sms, parse_trace_window, simulate

    want_events = trace is not None or utilization is not None
    if want_events and mode == "functional":
        raise UserError("--trace / --utilization need a timing run", hint="--mode timing or sampled")
    if (trace_sms is not None or trace_window is not None) and not want_events:
        raise UserError("--trace-sms / --trace-window without --trace or --utilization", hint="add --trace out.json")
    res = simulate(record, arch, mode=mode, overrides=list(set_) or None, max_cycles=max_cycles,
                   want_outputs=save_outputs is not None, check=check, trace_path=trace,
                   trace_sms=parse_trace_sms(trace_sms), trace_window=parse_trace_window(trace_window),
                   record_events=want_events, bundle=False if no_bundle else None, max_steps=max_steps,
                   max_wall_seconds=max_wall_seconds)
    if utilization is not None:
        from warpgraph.analysis.utilization import plot_utilization

        df = res.utilization(bucket)
        utilization.parent.mkdir(parents=True, exist_ok=True)
        plot_utilization(df, utilization, title=f"{res.record} on {res.arch}",
                         clock_mhz=(res.events.meta.get("clock_mhz") if res.events is not None else None))
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
    if as_json:
        typer.echo(res.to_json(stats=stats))
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


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _print_table(res) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
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
        if k in m:
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
