"""``warpgraph explore`` and ``warpgraph explore-report`` (registered by the CLI main module).

Exit codes: 0 the study ran (some trials may have failed), 1 every finished trial failed (nothing to report),
2 user error (bad study file, unknown metric, changed search space without --new-study)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("explore")
    def explore_cmd(
        study: Path = typer.Argument(..., help="study YAML (see explore/examples/)"),
        storage: Optional[str] = typer.Option(None, "--storage", help="Optuna storage: an RDB URL "
                                              "(postgresql://user:pw@host/db) for workers on many machines, or a "
                                              "journal file path (default: <study>_out/study.journal)"),
        workers: int = typer.Option(1, "--workers", "-j", min=1, help="local worker processes"),
        worker: bool = typer.Option(False, "--worker", help="join a running study (created by a run without "
                                    "--worker) and work until its budget is used"),
        trials: Optional[int] = typer.Option(None, "--trials", min=1, help="trial budget (overrides `trials:`)"),
        timeout: Optional[float] = typer.Option(None, "--timeout", help="stop starting trials after S seconds"),
        report: bool = typer.Option(False, "--report", help="write results and plots afterwards"),
        validate_only: bool = typer.Option(False, "--check", help="only validate the study file: architecture "
                                           "paths and values, workloads, objective and constraint metrics"),
        new_study: bool = typer.Option(False, "--new-study", help="discard a stored study of the same name "
                                       "(needed when the search space or objectives changed)"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar on stderr."),
        no_trace_cache: bool = typer.Option(False, "--no-trace-cache", help="run every trial's functional pass "
                                            "(default: trials that cannot change it share one, in "
                                            "<storage folder>/traces)"),
    ):
        """Design-space exploration: run (or resume) an Optuna study over architecture parameters."""
        from warpgraph.core.errors import UserError

        try:
            _explore(study, storage, workers, worker, trials, timeout, report, validate_only, new_study, quiet,
                     False if no_trace_cache else None)
        except UserError as e:
            from warpgraph.cli.main import print_error

            print_error(e)
            raise typer.Exit(2)

    def _explore(study, storage, workers, worker, trials, timeout, report, validate_only, new_study, quiet,
                 trace_cache=None):
        from warpgraph import explore as ex
        from warpgraph.cli.ui import progress_enabled, stderr_console

        con = stderr_console()
        spec = ex.load_study(study)
        if validate_only:
            from warpgraph.explore.spec import check_study

            notes = check_study(spec)
            for n in notes:
                con.print(f"[yellow]note[/]: {n}")
            con.print(f"[green]ok[/]: {study} ({len(spec.space)} parameters, {len(spec.objectives)} objective(s), "
                      f"{len(spec.workloads)} workload(s), sampler {spec.sampler_type}, budget {spec.budget()})")
            return
        if worker:
            from warpgraph.explore.study import run_worker

            c = run_worker(spec, storage, trials=trials, timeout_s=timeout, trace_cache=trace_cache)
            st = None
        else:
            st = ex.run_study(spec, storage, workers=workers, trials=trials, progress=progress_enabled(quiet),
                              timeout_s=timeout,
                              new_study=new_study, trace_cache=trace_cache)
            c = ex.counts(st)
        con.print(f"study [bold]{spec.name}[/]: {c.get('complete', 0)} complete, {c.get('error', 0)} failed, "
                  f"{c.get('running', 0)} running, {c.get('waiting', 0)} queued "
                  f"(storage: {storage or spec.default_storage})")
        if st is not None:
            _print_best(st, con)
        if report:
            _report(spec, storage, con)
        if c.get("complete", 0) == 0 and c.get("error", 0) > 0:
            if st is not None:
                _print_first_error(st, con)
            raise typer.Exit(1)

    @app.command("explore-report")
    def explore_report_cmd(
        study: Path = typer.Argument(..., help="study YAML"),
        storage: Optional[str] = typer.Option(None, "--storage"),
        out: Optional[Path] = typer.Option(None, "--out", help="folder (default <study>_out/report)"),
    ):
        """Write results.csv/.parquet and PNG plots (Pareto front, slice, contour, importances)."""
        from warpgraph import explore as ex
        from warpgraph.cli.ui import stderr_console

        con = stderr_console()
        spec = ex.load_study(study)
        _report(spec, storage, con, out)
        from warpgraph.explore.analysis import _open

        _print_best(_open(spec, storage), con)


def _print_best(study, con) -> None:
    """The best trial (one objective) or the Pareto set (several), with its parameters and objective values."""
    from rich.markup import escape

    from warpgraph.explore.analysis import best_trials

    best = best_trials(study)
    if not best:
        return
    names = best[0]["objectives"]
    title = "best trial" if len(names) == 1 else f"Pareto set ({len(best)} trial(s))"
    con.print(f"[bold]{title}[/]:")
    for b in best:
        vals = ", ".join(f"{n} = {_num(v)}" for n, v in zip(names, b["values"]))
        params = ", ".join(f"{k}={v}" for k, v in b["params"].items())
        con.print(f"  #{b['number']}: {escape(vals)}  ({escape(params)})", highlight=False)


def _print_first_error(study, con) -> None:
    from rich.markup import escape

    for t in study.get_trials(deepcopy=False):
        err = t.user_attrs.get("wg_error")
        if err:
            con.print(f"[red]every trial failed[/]; trial #{t.number}: {escape(err.splitlines()[0])}")
            return


def _num(v) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.6g}" if isinstance(v, float) else str(v)


def _report(spec, storage, con, out=None):
    import warnings

    from warpgraph import explore as ex

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ex.ImportanceUndefined)
        files = ex.report(spec, out, storage=storage)
    for w in caught:
        if issubclass(w.category, ex.ImportanceUndefined):
            con.print(f"[yellow]warning[/]: {w.message}", highlight=False)
    for k, p in files.items():
        con.print(f"  {k:>20}: {p}")
