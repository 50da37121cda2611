"""``warpgraph validate``: simulate a folder of launch records and compare with their hardware measurements.

Exit codes: 0 all records simulated (accuracy is reported, not enforced), 1 some record failed to simulate,
2 user error (missing folder, no records, bad option)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer

from warpgraph.cli.ui import Column, Mode, OutputFormat

__all__ = ["register", "validate_command", "run_validate"]

_SET_HELP = "Override a parameter, e.g. --set tma.admission_depth=8 (repeatable; passed to simulate)."


def _f(v, fmt="{:,.0f}") -> str:
    return "" if v is None else fmt.format(v)


def _err_style(e) -> str:
    if e is None:
        return ""
    s = f"{e:+.1f}%"
    return f"[green]{s}[/]" if abs(e) <= 10 else f"[yellow]{s}[/]" if abs(e) <= 20 else f"[red]{s}[/]"


def _print_results(rows, summary, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    from warpgraph.cli.ui import print_table

    # priority: lowest dropped first when the terminal is narrow (None: always shown)
    cols = [Column("launch", "left", None), Column("hw cycles", "right", None), Column("sim cycles", "right", None),
            Column("err", "right", None), Column("SASS×", "right", 5), Column("DRAM×", "right", 6),
            Column("L2×", "right", 4), Column("occ sim", "right", 2), Column("occ hw", "right", 2),
            Column("bound", "right", 3), Column("by", "left", 3), Column("hw/bound", "right", 1),
            Column("sim/bound", "right", 1), Column("wall s", "right", 0)]
    body = []
    for r in rows:
        if r["status"] != "ok":
            body.append([escape(r["name"]), _f(r.get("hw_cycles")), "[red]FAILED[/]"] + [""] * 10
                        + [_f(r.get("wall_seconds"), "{:.1f}")])
            continue
        body.append([escape(r["name"]), _f(r.get("hw_cycles")), _f(r.get("sim_cycles")), _err_style(r.get("error_pct")),
                     _f(r.get("sass_ratio"), "{:.2f}"), _f(r.get("dram_ratio"), "{:.2f}"),
                     _f(r.get("l2_ratio"), "{:.2f}"), _f(r.get("sim_occupancy_pct"), "{:.1f}"),
                     _f(r.get("hw_occupancy_pct"), "{:.1f}"), _f(r.get("bound_cycles")), r.get("bound_by") or "",
                     _f(r.get("hw_over_bound"), "{:.2f}"), _f(r.get("sim_over_bound"), "{:.2f}"),
                     _f(r.get("wall_seconds"), "{:.1f}")])
    keep = [i for i in range(len(cols)) if i == 0 or any(b[i] for b in body)]  # drop all-empty columns
    print_table(console, [cols[i] for i in keep], [[b[i] for i in keep] for b in body],
                title=f"validation on {summary.get('arch')} ({summary.get('mode')})")
    if any(r.get("sim_top_stalls") or r.get("hw_top_stalls") for r in rows):
        t2 = Table(title="top-3 stall reasons per issued instruction (other side's value in brackets; "
                         "agree: measured top-3 also in the simulated top-3)")
        t2.add_column("launch", no_wrap=True)
        t2.add_column("simulated", overflow="fold")
        t2.add_column("hardware", overflow="fold")
        t2.add_column("agree", justify="right")
        for r in rows:
            if r.get("sim_top_stalls") or r.get("hw_top_stalls"):
                a = r.get("stall_top3_agreement")
                t2.add_row(escape(r["name"]), escape(r.get("sim_top_stalls") or ""),
                           escape(r.get("hw_top_stalls") or ""), "" if a is None else f"{a}/3")
        console.print(t2)
    fams = [f for f in summary.get("families") or [] if f.get("n_compared")]
    if fams:
        t3 = Table(title="per family (kernel name prefix)")
        for h in ("family", "launches", "MAPE", "bias", "worst", "SASS×", "stall agree"):
            t3.add_column(h, justify="left" if h in ("family", "worst") else "right")
        for f in fams:
            w = f.get("worst_error_pct")
            t3.add_row(escape(f["family"]), str(f["n_compared"]) + ("" if f["n"] == f["n_compared"] else f" of {f['n']}"),
                       _f(f.get("mape_pct"), "{:.1f}%"), _f(f.get("bias_pct"), "{:+.1f}%"),
                       "" if w is None else f"{_err_style(w)} {escape(str(f.get('worst_record')))}",
                       _f(f.get("mean_sass_ratio"), "{:.2f}"), _f(f.get("mean_stall_top3_agreement"), "{:.1f}/3"))
        console.print(t3)
    c = summary["cycles"]
    lines = [f"records: {summary['n_records']}  simulated: {summary['n_ok']}  failed: {summary['n_failed']}  "
             f"with measurements: {summary['n_measured']}"]
    if c["n"]:
        r_s = "n/a" if c["pearson_r"] is None else f"{c['pearson_r']:.4f}"
        rl_s = "n/a" if c["pearson_r_log"] is None else f"{c['pearson_r_log']:.4f}"
        lines.append(f"cycles (N={c['n']}): MAPE {c['mape_pct']:.2f}%  bias {c['bias_pct']:+.2f}%  "
                     f"max |err| {c['max_abs_error_pct']:.2f}% ({c['max_abs_error_record']})  r {r_s}  "
                     f"r(log) {rl_s}  within 10%: {c['within_10_pct'] * 100:.0f}%  "
                     f"within 20%: {c['within_20_pct'] * 100:.0f}%")
    for p in summary["speedup_pairs"]:
        hw = "n/a" if p["hw_speedup"] is None else f"{p['hw_speedup']:.3f}"
        sim = "n/a" if p["sim_speedup"] is None else f"{p['sim_speedup']:.3f}"
        err = "" if p["error_pct"] is None else f"  error {p['error_pct']:+.1f}%"
        lines.append(f"speedup {p['new']} over {p['old']}: hw {hw}×  sim {sim}×{err}")
    dm = summary["dram_memory_bound"]
    for ch in dm["checks"]:
        ok = {True: "[green]ok[/]", False: "[red]off[/]", None: "n/a"}[ch["within_tol"]]
        e = "" if ch["error_pct"] is None else f"{ch['error_pct']:+.1f}%"
        lines.append(f"DRAM bytes (memory-bound) {escape(str(ch['name']))}: {e} {ok}")
    for f in summary["failed"]:
        lines.append(f"[red]failed[/] {escape(str(f['name']))}: {escape(str(f['error']))}")
    for ln in lines:
        console.print(ln, highlight=False)


def run_validate(directory: Optional[Path], arch: str = "h200", set_: list[str] | None = None,
                 out: Optional[Path] = None, mode: str = "timing", jobs: int = 1, filter_: Optional[str] = None,
                 *, simulate_fn: Callable | None = None, roofline_fn: Callable | None = None, console=None,
                 measured_clock: bool = True, against: Optional[Path] = None,
                 fmt: OutputFormat | str = OutputFormat.table, quiet: bool = False, max_steps: Optional[int] = None,
                 max_wall_seconds: Optional[float] = None) -> int:
    """The command's body; returns the exit code (raises ``UserError`` for user errors). ``fmt`` table prints
    tables and messages on stdout; csv / json print only the data on stdout (messages go to stderr)."""
    from warpgraph.analysis import validate as V
    from warpgraph.cli.ui import progress as progress_bar
    from warpgraph.cli.ui import stderr_console, stdout_console
    from warpgraph.core.errors import UserError

    mode = getattr(mode, "value", mode)
    fmt = OutputFormat(getattr(fmt, "value", fmt))
    data_console = console or stdout_console()
    console = data_console if fmt is OutputFormat.table else (console or stderr_console())
    if mode not in ("timing", "sampled"):
        raise UserError(f"unknown mode {mode!r}", location="--mode", hint="timing or sampled")
    if jobs < 1:
        raise UserError(f"--jobs must be >= 1, got {jobs}", location="--jobs", hint="a positive integer")
    root = Path(directory) if directory is not None else V.default_records_dir("h200")
    if not root.exists() and directory is not None:      # a bundled group by short name: h200, h200_heldout
        from warpgraph.workloads.bundled import MICROBENCH_DIR, RECORDS_DIR

        for cand in (RECORDS_DIR / str(directory), MICROBENCH_DIR.parent / str(directory)):
            if cand.is_dir():
                root = cand
                break
    if not root.exists():
        raise UserError(f"no such directory: {root}", location="DIR", hint="a folder of launch records")
    dirs = V.discover_records(root, filter_)
    if not dirs:
        raise UserError(f"no launch records (folders with launch.json) under {root}"
                        + (f" matching {filter_!r}" if filter_ else ""), location="DIR",
                        hint="a folder containing <name>/launch.json record directories")
    if simulate_fn is None:  # check arch and --set once instead of failing every record the same way
        from warpgraph import load_arch
        from warpgraph.runner.simulate import split_overrides

        arch_ov, _, _ = split_overrides(list(set_ or []) or None)
        load_arch(arch, overrides=arch_ov)
    if simulate_fn is None and (max_steps is not None or max_wall_seconds is not None):
        import functools

        from warpgraph import simulate

        simulate_fn = functools.partial(simulate, max_steps=max_steps, max_wall_seconds=max_wall_seconds)
    out = Path(out) if out is not None else Path(f"validation-{Path(arch).stem}")
    if against is not None:
        against = V.baseline_path(against)      # fail before simulating anything
    console.print(f"validating {len(dirs)} launch record(s) from {root} on {arch} ({mode}, jobs={jobs})",
                  highlight=False)

    with progress_bar("launches", total=len(dirs), quiet=quiet) as bar:
        def progress(row):
            e = row.get("error_pct")
            st = ("FAILED" if row["status"] != "ok" else f"{e:+.1f}%" if e is not None else "ok")
            console.print(f"  {row['name']}: {st}  ({row.get('wall_seconds') or 0:.1f} s)", highlight=False)
            bar.update(advance=1, description=f"launches (last: {row['name']})")

        rows = V.validate_records(dirs, arch, mode=mode, overrides=list(set_ or []) or None, jobs=jobs,
                                  simulate_fn=simulate_fn, roofline_fn=roofline_fn, root=root, progress=progress,
                                  measured_clock=measured_clock)
    summary = V.summarize(rows, arch=arch, mode=mode)
    summary["overrides"] = list(set_ or [])
    summary["clock"] = "measured" if measured_clock else "spec"
    import warpgraph

    summary["warpgraph_version"] = warpgraph.__version__
    paths = V.write_outputs(rows, summary, out)
    if fmt is OutputFormat.table:
        _print_results(rows, summary, console)
    else:
        _print_data(rows, summary, fmt)
    if against is not None:
        cmp = V.compare_runs(rows, against)
        console.print(f"simulated cycles against {cmp['baseline']}:", highlight=False)
        for x in cmp["launches"]:
            est = f"  (estimate ±{x['estimate_pct']:.2f}%)" if x.get("estimate_pct") else ""
            console.print(f"  {x['name']}: {x['cycles']:,.0f} vs {x['baseline_cycles']:,.0f}  "
                          f"{x['diff_pct']:+.2f}%{est}", highlight=False)
        if cmp["missing"]:
            console.print(f"  not in both: {', '.join(map(str, cmp['missing']))}", highlight=False)
        if cmp["max_abs_diff_pct"] is not None:
            console.print(f"  max |diff| {cmp['max_abs_diff_pct']:.2f}%, {cmp['within_tol']} of {len(cmp['launches'])} "
                          f"within {cmp['tol_pct']:g}%", highlight=False)
        if cmp.get("with_estimate"):
            console.print(f"  sampled error estimate: {cmp['within_1_estimate']} / {cmp['within_2_estimate']} of "
                          f"{cmp['with_estimate']} sampled launches within 1 / 2 estimates", highlight=False)
        import json

        (out / "comparison.json").write_text(json.dumps(cmp, indent=1))
        paths["comparison"] = out / "comparison.json"
    console.print("wrote " + ", ".join(str(p) for p in paths.values()), highlight=False)
    return 1 if summary["n_failed"] else 0


def _print_data(rows, summary, fmt: OutputFormat) -> None:
    """``--format csv``: validation.csv on stdout; ``--format json``: summary.json (summary + rows) on stdout."""
    import io
    import json

    from warpgraph.analysis import validate as V

    if fmt is OutputFormat.csv:
        import csv

        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(V.ROW_COLUMNS)
        for r in rows:
            w.writerow([V._cell(r.get(c)) for c in V.ROW_COLUMNS])
        typer.echo(buf.getvalue(), nl=False)
    else:
        typer.echo(json.dumps(V._jsonable({**summary, "rows": list(rows)}), indent=1))


def validate_command(
    directory: Optional[Path] = typer.Argument(
        None, help="Folder of launch records (searched recursively), or a bundled group by name (h200, h200_heldout, "
                   "microbench). Default: the bundled workloads/records/h200."),
    arch: str = typer.Option("h200", "--arch", help="Bundled architecture name or YAML path."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default ./validation-<arch>)."),
    mode: Mode = typer.Option(Mode.timing, "--mode", help="timing (every SM in detail) or sampled."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Simulate records in N processes (output order is fixed)."),
    filter_: Optional[str] = typer.Option(None, "--filter", help="Glob on record name or relative path, e.g. 'gemm*'."),
    spec_clock: bool = typer.Option(False, "--spec-clock", help="Simulate at the YAML's clocks.sm_mhz instead of "
                                    "each launch's measured sm_clock_hz (the default: hardware clocks were unlocked)."),
    against: Optional[Path] = typer.Option(None, "--against", help="An earlier run's --out folder: also print "
                                           "simulated cycles against its simulated cycles (e.g. sampled vs detailed)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="table (rich tables), csv or "
                                     "json (only the data on stdout; messages on stderr)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar on stderr."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Functional-pass step budget per record "
                                            "(default 5,000,000; 0 = no limit)."),
    max_wall_seconds: Optional[float] = typer.Option(None, "--max-wall-seconds", help="Functional-pass wall-clock "
                                                     "budget per record in seconds (default 900; 0 = no limit)."),
) -> None:
    """Simulate every launch record of a folder and compare with measured.json (MAPE, bias, r, scatter plot)."""
    from warpgraph.core.errors import UserError

    try:
        code = run_validate(directory, arch, set_, out, mode.value, jobs, filter_, measured_clock=not spec_clock,
                            against=against, fmt=fmt, quiet=quiet, max_steps=max_steps,
                            max_wall_seconds=max_wall_seconds)
    except UserError as e:
        from warpgraph.cli.main import print_error

        print_error(e)
        raise typer.Exit(2)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_command)
