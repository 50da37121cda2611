"""``warpgraph bench``: simulator speed (cycles/s, warp-instructions/s, peak memory) on bundled launches.

Exit codes: 0 every case ran (a rejected sampled mode or an unsupported `--jobs` run is reported as skipped), 1 a
case failed or a parallel run's statistics differ from the single-process run's, 2 user error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

import typer

from warpgraph.cli.ui import Column, OutputFormat

__all__ = ["register", "bench_command", "run_bench_cli"]


def _f(v, fmt="{:,.0f}") -> str:
    return "" if v is None else fmt.format(v)


def _mib(b) -> str:
    return "" if b is None else f"{b / 2**20:,.0f}"


def _rows(e):
    """(mode label, run dict, Δcycles vs detailed %) of one case: detailed, detailed -j N, sampled."""
    yield "detailed", e.get("detailed"), None
    for n, r in (e.get("jobs") or {}).items():
        yield f"detailed -j {n}", r, None
    yield "sampled", e.get("sampled"), e.get("sampled_cycle_diff_pct")


def _print(results, info, console) -> None:
    from rich.markup import escape

    from warpgraph.cli.ui import print_table

    cols = [Column("case", "left", None), Column("mode", "left", None), Column("sim cycles", "right", 3),
            Column("warp insts", "right", 1), Column("wall s", "right", None), Column("cycles/s", "right", None),
            Column("warp-insts/s", "right", 2), Column("peak MiB", "right", 0),
            Column("Δcycles vs detailed", "right", 4), Column("vs -j 1", "left", 5)]
    body = []
    for e in results:
        for mode_key, r, diff in _rows(e):
            if r is None:
                continue
            if r.get("status") != "ok":
                tag = "[yellow]skipped[/]" if r.get("status") == "skipped" else "[red]FAILED[/]"
                msg = " ".join((r.get("error") or "").split())
                if r.get("status") == "skipped":     # the reason in short (in full in the JSON)
                    msg = (msg if len(msg) <= 28 else msg.split(":")[0]) if r.get("jobs") else ""
                msg = msg[:70]
                body.append([escape(e["case"]), mode_key, tag, escape(msg), "", "", "", _mib(r.get("peak_rss_bytes")),
                             "", ""])
                continue
            vs = ""
            if r.get("jobs"):
                same = r.get("identical_to_jobs1")
                vs = (("identical" if same else "[red]DIFFERENT[/]") if same is not None else "") + (
                    f" {r['speedup_vs_jobs1']:.2f}x" if r.get("speedup_vs_jobs1") else "")
            body.append([escape(e["case"]), mode_key, _f(r.get("cycles")), _f(r.get("warp_instructions")),
                         _f(r.get("wall_seconds"), "{:.2f}"), _f(r.get("simulated_cycles_per_second")),
                         _f(r.get("warp_instructions_per_second")), _mib(r.get("peak_rss_bytes")),
                         "" if diff is None else f"{diff:+.2f}%", vs.strip()])
    print_table(console, cols, body, title=f"warpgraph bench — {info.get('cpu_model')} ({info.get('cores')} cores)")


_CSV_FIELDS = ("case", "mode", "jobs", "status", "cycles", "warp_instructions", "wall_seconds",
               "simulated_cycles_per_second", "warp_instructions_per_second", "peak_rss_bytes",
               "sampled_cycle_diff_pct", "identical_to_jobs1", "speedup_vs_jobs1", "error")


def _print_data(results, info, fmt: OutputFormat, arch: str, quick: bool) -> None:
    """``--format csv``: one row per case and mode; ``--format json``: the same document as ``--json FILE``."""
    if fmt is OutputFormat.json:
        typer.echo(json.dumps({"arch": arch, "quick": quick, "machine": info, "git_commit": info.get("git_commit"),
                               "results": results}, indent=1))
        return
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(_CSV_FIELDS)
    for e in results:
        for mode_key, r, diff in _rows(e):
            if r is None:
                continue
            row = {**r, "case": e["case"], "mode": mode_key.split(" ")[0], "sampled_cycle_diff_pct": diff}
            w.writerow(["" if row.get(k) is None else repr(row[k]) if isinstance(row[k], float) else row[k]
                        for k in _CSV_FIELDS])
    typer.echo(buf.getvalue(), nl=False)


def run_bench_cli(arch: str = "h200", json_path: Optional[Path] = None, cases: Optional[str] = None,
                  quick: bool = False, *, simulate_fn: Callable | None = None, simulate_target: str | None = None,
                  timeout_s: float | None = None, console=None, fmt: OutputFormat | str = OutputFormat.table,
                  quiet: bool = False, jobs_list: str | None = None) -> int:
    """The command's body; returns the exit code (raises ``UserError`` for user errors). ``fmt`` csv / json
    print only the data on stdout (messages go to stderr)."""
    from warpgraph.analysis import bench as B
    from warpgraph.cli.ui import progress as progress_bar
    from warpgraph.cli.ui import stderr_console, stdout_console

    fmt = OutputFormat(getattr(fmt, "value", fmt))
    jobs = B.parse_jobs_list(jobs_list) if jobs_list is not None else None   # bad entries: exit 2 before running
    console = console or (stdout_console() if fmt is OutputFormat.table else stderr_console())
    case_list = [c.strip() for c in cases.split(",") if c.strip()] if cases else None
    if case_list is not None and quick:
        case_list = [c if c.endswith("@small") else c + "@small" for c in case_list]

    n_cases = len(case_list) if case_list is not None else (1 if quick else len(B.DEFAULT_CASES))
    with progress_bar("bench cases", total=n_cases, quiet=quiet) as bar:
        def progress(e):
            d = e["detailed"]
            st = f"{d.get('wall_seconds') or 0:.1f} s" if d.get("status") == "ok" else d.get("status")
            console.print(f"  {e['case']}: {st}", highlight=False)
            bar.update(advance=1, description=f"bench cases (last: {e['case']})")

        results = B.run_bench(case_list, arch, quick=quick, simulate_fn=simulate_fn,
                              simulate_target=simulate_target, timeout_s=timeout_s, progress=progress,
                              jobs_list=jobs)
    info = B.machine_info()
    if fmt is OutputFormat.table:
        _print(results, info, console)
    else:
        _print_data(results, info, fmt, arch, quick)
    skipped = {e["sampled"].get("error") for e in results if e.get("sampled") and e["sampled"].get("status") == "skipped"}
    if skipped:
        console.print("sampled mode skipped: " + "; ".join(sorted(" ".join(s.split()) for s in skipped if s)),
                      highlight=False)
    if json_path is not None:
        json_path = Path(json_path)
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps({"arch": arch, "quick": quick, "machine": info,
                                         "git_commit": info.get("git_commit"), "results": results}, indent=1) + "\n")
        console.print(f"wrote {json_path}", highlight=False)
    failed = [e for e in results
              if e["detailed"].get("status") != "ok" or (e.get("sampled") or {}).get("status") == "error"
              or any(r.get("status") == "error" or r.get("identical_to_jobs1") is False
                     for r in (e.get("jobs") or {}).values())]
    return 1 if failed else 0


def bench_command(
    arch: str = typer.Option("h200", "--arch", help="Bundled architecture name or YAML path."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the results (and machine info) to FILE."),
    cases: Optional[str] = typer.Option(None, "--cases", help="Comma-separated bundled record names or folders."),
    quick: bool = typer.Option(False, "--quick", help="Only a scaled-down small launch (seconds)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per case and mode (default none)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="table, csv or json on stdout "
                                     "(csv / json: only the data; messages on stderr)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar on stderr."),
    jobs_list: Optional[str] = typer.Option(None, "--jobs-list", help="Process counts of the parallel detailed "
                                            "runs, e.g. 2,4 (default 2,4,8,16; those above the machine's cores "
                                            "are skipped)."),
) -> None:
    """Measure simulation speed (cycles/s, warp-instructions/s, peak memory) on bundled launches."""
    from warpgraph.core.errors import UserError

    try:
        code = run_bench_cli(arch, json_path, cases, quick, timeout_s=timeout, fmt=fmt, quiet=quiet,
                             jobs_list=jobs_list)
    except UserError as e:
        from warpgraph.cli.main import print_error

        print_error(e)
        raise typer.Exit(2)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
