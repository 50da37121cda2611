"""``warpgraph records``: the bundled launch records by short name (``h200/gemm_tma_M2048_N2048_K2048``), usable
wherever a RECORD is asked for (``run``, ``trace roofline``, study YAMLs, ``warpgraph.load_record``)."""
from __future__ import annotations

import json
from typing import Optional

import typer

__all__ = ["register", "records_app"]

records_app = typer.Typer(help="Bundled launch records: list them by short name.", no_args_is_help=True)


@records_app.command("list")
def list_cmd(
    pattern: Optional[str] = typer.Argument(None, help="Glob on the short name, e.g. 'h200/gemm*'."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (name, path, grid, block, measured)."),
) -> None:
    """List the bundled launch records (short name, grid x block, measured cycles when the record has them)."""
    from fnmatch import fnmatch

    from warpgraph.workloads.bundled import bundled_records

    rows = []
    for name, path in bundled_records().items():
        if pattern and not fnmatch(name, pattern):
            continue
        launch = json.loads((path / "launch.json").read_text())
        meas = path / "measured.json"
        cycles = json.loads(meas.read_text()).get("cycles") if meas.is_file() else None
        rows.append({"name": name, "path": str(path), "grid": launch.get("grid"), "block": launch.get("block"),
                     "measured_cycles": cycles})
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        typer.echo(f"no bundled record matches {pattern!r}", err=True)
        raise typer.Exit(1)
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        shape = "x".join(map(str, r["grid"] or [])) + " x " + "x".join(map(str, r["block"] or []))
        cyc = f"  measured {r['measured_cycles']:,.0f} cycles" if r["measured_cycles"] else ""
        typer.echo(f"{r['name']:{w}s}  {shape}{cyc}")


def register(app: typer.Typer) -> None:
    app.add_typer(records_app, name="records")
