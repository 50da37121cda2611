"""``warpgraph arch``: show, diff, list architectures; print the JSON schema; export the component graph."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register", "arch_app"]

arch_app = typer.Typer(help="Architecture specs: show, diff, list, schema, graph.", no_args_is_help=True)

_SET_HELP = "Override a parameter, e.g. --set tma.admission_depth=8 (repeatable; values parsed as YAML)."


def _out(text: str, output: Optional[Path]) -> None:
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        output.write_text(text)
        typer.echo(f"wrote {output}", err=True)


@arch_app.command("list")
def list_cmd() -> None:
    """List the bundled architectures."""
    from warpgraph.topologies.loader import list_archs, load_arch

    for name in list_archs():
        spec = load_arch(name)
        parent = f" (extends {spec.extends})" if spec.extends else ""
        typer.echo(f"{name:10s} {spec.sm.count:4d} SMs  {spec.tensor_core.kind:8s} {spec.description}{parent}")


@arch_app.command("show")
def show_cmd(
    arch: str = typer.Argument("h200", help="Bundled name (h100, h200, b200, rtx5090) or a YAML path."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of YAML."),
) -> None:
    """Print the fully resolved architecture (after extends and --set)."""
    from warpgraph.topologies.loader import dump_arch, load_arch

    typer.echo(dump_arch(load_arch(arch, set_), fmt="json" if as_json else "yaml"), nl=False)


@arch_app.command("diff")
def diff_cmd(
    a: str = typer.Argument(..., help="First architecture."),
    b: str = typer.Argument(..., help="Second architecture."),
    set_: list[str] = typer.Option([], "--set", help="Overrides applied to B. " + _SET_HELP),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Parameters that differ between two architectures."""
    from warpgraph.topologies.loader import diff_arch, load_arch

    rows = diff_arch(load_arch(a), load_arch(b, set_))
    if as_json:
        typer.echo(json.dumps([{"path": p, a: va, b: vb} for p, va, vb in rows], indent=2))
        return
    if not rows:
        typer.echo("no differences")
        return
    w = max(len(p) for p, _, _ in rows)
    typer.echo(f"{'parameter':{w}s}  {a}  ->  {b}")
    for p, va, vb in rows:
        typer.echo(f"{p:{w}s}  {va}  ->  {vb}")


@arch_app.command("schema")
def schema_cmd(output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write to FILE.")) -> None:
    """JSON schema of architecture YAMLs (for editors / validators)."""
    from warpgraph.topologies.loader import arch_json_schema

    _out(json.dumps(arch_json_schema(), indent=2) + "\n", output)


@arch_app.command("graph")
def graph_cmd(
    arch: str = typer.Argument("h200"),
    fmt: str = typer.Option("summary", "--format", "-f", help="summary | graphml | dot"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write to FILE."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
) -> None:
    """Build the component graph and print a summary or export it."""
    from warpgraph.core.errors import SpecError
    from warpgraph.topologies.builder import build_graph, graph_summary, to_dot, to_graphml
    from warpgraph.topologies.loader import load_arch

    if fmt not in ("summary", "graphml", "dot"):
        raise SpecError(f"unknown graph format {fmt!r}", location="--format", hint="summary, graphml or dot")
    g = build_graph(load_arch(arch, set_))
    if fmt == "graphml":
        _out(to_graphml(g) + "\n", output)
    elif fmt == "dot":
        _out(to_dot(g), output)
    else:
        s = graph_summary(g)
        lines = [f"{s['name']}: {s['nodes']} nodes, {s['edges']} edges"]
        lines += [f"  {r:14s} {n}" for r, n in s["roles"].items()]
        lines += ["edges:"] + [f"  {r:14s} {n}" for r, n in s["relations"].items()]
        lines += ["models:"] + [f"  {c}  x{n}" for c, n in s["classes"].items()]
        _out("\n".join(lines) + "\n", output)


def register(app: typer.Typer) -> None:
    app.add_typer(arch_app, name="arch")
