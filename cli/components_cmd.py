"""``warpgraph components``: the registered component models (as ``sst-info``): role -> kinds -> class,
parameters (type, default, unit, description, source), ports, statistics. ``--json`` for tools."""
from __future__ import annotations

import json
from typing import Optional

import typer

__all__ = ["register", "components_command"]


def components_command(
    role: Optional[str] = typer.Argument(None, help="Only this role (e.g. tma, l2_slice, warp_scheduler)."),
    arch: str = typer.Option("h200", "--arch", help="Architecture whose graph gives the ports."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    brief: bool = typer.Option(False, "--brief", help="Role, kind and class only."),
) -> None:
    """List the component models: what each role can be, with parameters, ports and statistics."""
    from warpgraph.core.errors import UserError
    from warpgraph.core.registry import known_roles
    from warpgraph.topologies.catalog import component_catalog

    cat = component_catalog(arch, role)
    if role is not None and not cat:
        raise UserError(f"no component role {role!r}", hint=f"one of: {', '.join(known_roles())}")
    if as_json:
        typer.echo(json.dumps(cat, indent=1, default=str))
        return
    last = None
    for e in cat:
        if e["role"] != last:
            last = e["role"]
            typer.echo(f"{e['role']}  (section: {e['section']}; interface {e['interface']['name']}: "
                       f"{', '.join(e['interface']['members'])})")
        typer.echo(f"  {e['kind']:12s} {e['class']}  [{e['source']}]")
        if brief:
            continue
        if e["description"]:
            typer.echo(f"      {e['description']}")
        if e["parameters"]:
            typer.echo(f"      parameters ({e['spec']}):")
            for p in e["parameters"]:
                d = json.dumps(p["default"], default=str)
                if len(d) > 40:
                    d = d[:37] + "..."
                unit = f" [{p['unit']}]" if p["unit"] else ""
                typer.echo(f"        {p['name']}: {p['type']} = {d}{unit}  {p['description']}")
        if e["ports"]:
            typer.echo("      ports:")
            for p in e["ports"]:
                lat = "" if p["latency_cycles"] in (None, 0) else f" latency {p['latency_cycles']} cycles"
                bw = "" if p["bandwidth_bytes_per_cycle"] is None else f" {p['bandwidth_bytes_per_cycle']:g} B/cycle"
                typer.echo(f"        {p['port']} ({p['relation']} {p['peer']}){lat}{bw}")
        if e["statistics"]:
            typer.echo("      statistics:")
            for s in e["statistics"]:
                typer.echo(f"        {s['group']}.{s['name']} [{s['unit']}]  {s['description']}")


def register(app: typer.Typer) -> None:
    app.command("components")(components_command)
