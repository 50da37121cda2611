"""``warpgraph arch``: show, diff, list architectures; print the JSON schema; export the component graph."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from warpgraph.cli.ui import GraphFormat

__all__ = ["register", "arch_app", "value_sources"]

arch_app = typer.Typer(help="Architecture specs: show, diff, list, schema, graph.", no_args_is_help=True)

_SET_HELP = "Override a parameter, e.g. --set tma.admission_depth=8 (repeatable; values parsed as YAML)."


def _out(text: str, output: Optional[Path]) -> None:
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        output.write_text(text)
        typer.echo(f"wrote {output}", err=True)


def _comment_at(file: Path, line: int) -> str:
    """The source comment of the YAML value on ``line`` (1-based): its inline ``# ...`` comment, else the comment
    lines directly above it."""
    lines = _file_lines(file)
    if not 0 < line <= len(lines):
        return ""
    text = lines[line - 1]
    inline = _inline_comment(text)
    if inline:
        return inline
    above = []
    i = line - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        above.insert(0, lines[i].lstrip()[1:].strip())
        i -= 1
    return "" if i < 0 else " ".join(above)     # the file's header comment is not this value's source


def _inline_comment(text: str) -> str:
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[i + 1:].strip() if text[:i].strip() else ""
    return ""


_LINES: dict = {}


def _file_lines(file: Path) -> list[str]:
    key = str(file)
    if key not in _LINES:
        _LINES[key] = file.read_text().splitlines() if file.is_file() else []
    return _LINES[key]


def value_sources(arch: str, set_: list[str] | None = None) -> dict[str, dict]:
    """Dotted path of every resolved value -> ``{"value", "location" ("h200.yaml:9", "override KEY" or
    "default (topologies/schema.py)"), "comment"}``. A value inherited through ``extends`` points at the file
    that set it."""
    from warpgraph.topologies.loader import ARCH_DIR, _flatten, load_arch, load_arch_dict

    spec = load_arch(arch, set_)
    _, locs = load_arch_dict(arch, set_)
    flat = _flatten(spec.model_dump(mode="json"))
    joined = {".".join(map(str, k)): v for k, v in locs.items()}   # keys with dots (mma_sync shapes) match too
    out = {}
    for dotted, value in flat.items():
        loc = joined.get(dotted)        # no entry: the schema's default (its section may be in the file)
        comment = ""
        if loc is None:
            loc = "default (topologies/schema.py)"
        elif not loc.startswith("override ") and ":" in loc:
            label, _, ln = loc.rpartition(":")
            f = Path(label) if Path(label).is_absolute() or Path(label).exists() else ARCH_DIR / label
            if ln.isdigit():
                comment = _comment_at(f, int(ln))
        out[dotted] = {"value": value, "location": loc, "comment": comment}
    return out


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
    sources: bool = typer.Option(False, "--sources", help="Print every value with its source: file:line of the "
                                 "YAML that set it (through extends) and that line's comment."),
) -> None:
    """Print the fully resolved architecture (after extends and --set)."""
    from warpgraph.topologies.loader import dump_arch, load_arch

    if sources:
        src = value_sources(arch, set_)
        if as_json:
            typer.echo(json.dumps(src, indent=1))
            return
        w = max(len(k) for k in src)
        for k, d in src.items():
            line = f"{k:{w}s}  {json.dumps(d['value'])}  [{d['location']}]"
            typer.echo(line + (f"  # {d['comment']}" if d["comment"] else ""))
        return
    typer.echo(dump_arch(load_arch(arch, set_), fmt="json" if as_json else "yaml"), nl=False)


@arch_app.command("diff")
def diff_cmd(
    a: str = typer.Argument(..., help="First architecture."),
    b: str = typer.Argument(..., help="Second architecture."),
    set_: list[str] = typer.Option([], "--set", help="Overrides applied to B. " + _SET_HELP),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Parameters that differ between two architectures, with the source (file:line and comment) of each side."""
    from warpgraph.topologies.loader import diff_arch, load_arch

    rows = diff_arch(load_arch(a), load_arch(b, set_))
    sa, sb = value_sources(a), value_sources(b, set_)
    none = {"location": "", "comment": ""}
    if as_json:
        typer.echo(json.dumps([{"path": p, a: va, b: vb, f"{a}_source": sa.get(p, none)["location"],
                                f"{b}_source": sb.get(p, none)["location"], f"{a}_comment": sa.get(p, none)["comment"],
                                f"{b}_comment": sb.get(p, none)["comment"]} for p, va, vb in rows], indent=2))
        return
    if not rows:
        typer.echo("no differences")
        return
    w = max(len(p) for p, _, _ in rows)
    typer.echo(f"{'parameter':{w}s}  {a}  ->  {b}")
    for p, va, vb in rows:
        typer.echo(f"{p:{w}s}  {va}  ->  {vb}")
        for name, src in ((a, sa), (b, sb)):
            d = src.get(p, none)
            if d["location"]:
                typer.echo(f"{'':{w}s}    {name}: {d['location']}" + (f"  # {d['comment']}" if d["comment"] else ""))


@arch_app.command("schema")
def schema_cmd(output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write to FILE.")) -> None:
    """JSON schema of architecture YAMLs (for editors / validators)."""
    from warpgraph.topologies.loader import arch_json_schema

    _out(json.dumps(arch_json_schema(), indent=2) + "\n", output)


@arch_app.command("graph")
def graph_cmd(
    arch: str = typer.Argument("h200"),
    fmt: GraphFormat = typer.Option(GraphFormat.summary, "--format", "-f", help="summary, graphml or dot."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write to FILE."),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
) -> None:
    """Build the component graph and print a summary or export it."""
    from warpgraph.core.errors import SpecError
    from warpgraph.topologies.builder import build_graph, graph_summary, to_dot, to_graphml
    from warpgraph.topologies.loader import load_arch

    fmt = getattr(fmt, "value", fmt)
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
