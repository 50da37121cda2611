"""``warpgraph compile``: what ptxas makes of a record's PTX (registers, spills, stack, static shared memory; with
nvdisasm, each PTX instruction's place in the SASS: the issue order, workloads/issue_order.py), optionally written
into the record (``compiled.<isa>`` in launch.json) so that it runs the same on a machine without ptxas
(workloads/compiled.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register"]


def compile_cmd(
    records: list[Path] = typer.Argument(..., help="Record folders (or launch .json files)."),
    arch: str = typer.Option("h200", "--arch", help="Architecture whose ISA (sm.isa) to assemble for."),
    isa: Optional[str] = typer.Option(None, "--isa", help="ISA to assemble for (overrides --arch), e.g. sm_90a."),
    write: bool = typer.Option(False, "--write", help="Store the facts (and the SASS places, when nvdisasm is found) "
                                                       "in each record's launch.json."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run ptxas -v on each record's PTX; print (and with --write record) registers per thread and spills."""
    from warpgraph.topologies import load_arch
    from warpgraph.workloads.compiled import annotate_record, record_facts
    from warpgraph.workloads.record import load_record

    target = isa or load_arch(arch).sm.isa
    rows = []
    for p in records:
        rec = load_record(p)
        f = annotate_record(rec.dir, target) if write else record_facts(rec, target)
        rows.append({"record": rec.name, **f.to_json()})
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    for r in rows:
        spill = f", spills {r['spill_store_bytes']}/{r['spill_load_bytes']} B st/ld" if (
            r["spill_store_bytes"] or r["spill_load_bytes"]) else ""
        typer.echo(f"{r['record']}: {r['registers_per_thread']} registers/thread, {r['static_shared_bytes']} B "
                   f"static smem, stack {r['stack_frame_bytes']} B{spill} [{r['tool']}, {r['isa']}]"
                   + (" (written)" if write else ""))


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_cmd)
