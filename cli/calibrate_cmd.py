"""``warpgraph calibrate RESULTS --base h200 --out my_gpu.yaml``: an architecture YAML from microbenchmark results
(``microbench/run_all.sh`` on another GPU), extending the base, each value with its source (analysis/calibrate)."""
from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["register"]


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:g}"
    return f"{int(v):,}" if isinstance(v, (int, float)) else str(v)


def calibrate_cmd(
    results: Path = typer.Argument(..., help="Folder written by microbench/run_all.sh (holding results.json), a "
                                   "folder of results JSONs (microbench/results), or one results JSON."),
    base: str = typer.Option("h200", "--base", help="Architecture the written YAML extends (bundled name or path); "
                             "the fits replay the microbenchmarks on it."),
    out: Path = typer.Option(..., "--out", "-o", help="The architecture YAML to write."),
    trials: int = typer.Option(20, "--trials", min=1, max=1000, help="Optuna trials per fitted parameter."),
    seed: int = typer.Option(0, "--seed", help="Sampler seed (same inputs and seed: same values)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
) -> None:
    """Fit the parameters the microbenchmarks determine and write an architecture YAML that extends the base."""
    import warpgraph
    from warpgraph.analysis.calibrate import FITS, calibrate
    from warpgraph.cli.ui import Column, print_table, progress, stdout_console

    warpgraph.load_arch(base)          # a bad base fails before any work
    with progress("calibrating", total=len(FITS), quiet=quiet) as p:
        cal = calibrate(results, base, trials=trials, seed=seed,
                        on_fit=lambda name: p.update(advance=1, description=f"fit: {name}"))
    path = cal.write_yaml(out)
    warpgraph.load_arch(str(path))     # what we wrote loads (extends resolved, schema checked)
    rows = []
    for r in cal.rows():
        ch = "new" if r["base"] is None else ("=" if r["change"] == 0 else
                                              f"{100 * r['change']:+.1f} %" if r["change"] is not None else "-")
        noise = "" if r["noise"] is None else f"±{r['noise']:g}"
        rows.append([r["parameter"], _fmt(r["base"]), _fmt(r["calibrated"]), ch, noise, r["method"], r["source"]])
    cols = [Column("parameter", "left", None), Column(f"base ({base})", "right", None),
            Column("calibrated", "right", None), Column("change", "right", None), Column("noise", "right", 1),
            Column("method", "left", 2), Column("source", "left", 3)]
    print_table(stdout_console(), cols, rows, title=f"warpgraph calibrate — {len(rows)} values",
                hint="a wider terminal shows them; the YAML comments hold every source")
    for s in cal.skipped:
        typer.echo(f"not determined: {s}", err=True)
    for f, why in cal.results.skipped:
        typer.echo(f"skipped {f} ({why})", err=True)
    typer.echo(f"wrote {path} (extends {base}; check it with: warpgraph arch show {path} --sources)", err=True)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_cmd)
