"""``warpgraph explore`` and ``warpgraph explore-report`` (registered by the CLI main module)."""
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
        validate_only: bool = typer.Option(False, "--check", help="only validate the study file"),
    ):
        """Design-space exploration: run (or resume) an Optuna study over architecture parameters."""
        from rich.console import Console

        from warpgraph import explore as ex

        con = Console(stderr=True)
        spec = ex.load_study(study)
        if validate_only:
            from warpgraph.explore.spec import resolve_workloads, validate_paths

            validate_paths(spec)
            resolve_workloads(spec)
            con.print(f"[green]ok[/]: {study} ({len(spec.space)} parameters, sampler {spec.sampler_type}, "
                      f"budget {spec.budget()})")
            return
        if worker:
            from warpgraph.explore.study import run_worker

            c = run_worker(spec, storage, trials=trials, timeout_s=timeout)
        else:
            st = ex.run_study(spec, storage, workers=workers, trials=trials, progress=True, timeout_s=timeout)
            c = ex.counts(st)
        con.print(f"study [bold]{spec.name}[/]: {c.get('complete', 0)} complete, {c.get('error', 0)} failed, "
                  f"{c.get('running', 0)} running, {c.get('waiting', 0)} queued "
                  f"(storage: {storage or spec.default_storage})")
        if report:
            _report(spec, storage, con)

    @app.command("explore-report")
    def explore_report_cmd(
        study: Path = typer.Argument(..., help="study YAML"),
        storage: Optional[str] = typer.Option(None, "--storage"),
        out: Optional[Path] = typer.Option(None, "--out", help="folder (default <study>_out/report)"),
    ):
        """Write results.csv/.parquet and PNG plots (Pareto front, importance, metric vs parameter)."""
        from rich.console import Console

        from warpgraph import explore as ex

        _report(ex.load_study(study), storage, Console(stderr=True), out)


def _report(spec, storage, con, out=None):
    from warpgraph import explore as ex

    files = ex.report(spec, out, storage=storage)
    for k, p in files.items():
        con.print(f"  {k:>20}: {p}")
