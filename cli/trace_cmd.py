"""``warpgraph trace``: validate Chrome/Perfetto trace files; roofline bound of a launch record (no timing).

To simulate and write a trace: ``warpgraph run RECORD --trace out.json [--trace-sms 0,1] [--trace-window 0:20000]
[--utilization util.png]`` (``simulate(..., trace_path=...)`` from Python).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from warpgraph.core.errors import UserError

__all__ = ["register", "trace_app"]

trace_app = typer.Typer(help="Traces and bounds: validate a Perfetto/Chrome trace; roofline of a record.",
                        no_args_is_help=True)


@trace_app.command("validate")
def validate_cmd(
    path: Path = typer.Argument(..., help="Chrome trace-event JSON file (.json or .json.gz)."),
    full_schema: bool = typer.Option(False, "--full-schema", help="Run jsonschema on every event (slow)."),
) -> None:
    """Check a trace file: schema, per-track ordering and nesting, async begin/end pairs, track names."""
    from warpgraph.analysis.perfetto import TraceValidationError, validate_chrome_trace

    if not path.is_file():
        raise UserError(f"no such trace file: {path}", location=str(path), hint="a .json or .json.gz trace")
    try:
        summary = validate_chrome_trace(path, full_schema=full_schema)
    except TraceValidationError as e:
        typer.echo(str(e), err=True)
        raise typer.Exit(1)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as e:
        raise UserError(f"cannot read trace: {e}", location=str(path), hint="Chrome trace-event JSON") from None
    typer.echo(json.dumps(summary))


@trace_app.command("roofline")
def roofline_cmd(
    record: Path = typer.Argument(..., help="Launch-record directory (or launch.json)."),
    arch: str = typer.Option("h200", "--arch", help="Bundled architecture name or YAML path."),
    clock_mhz: Optional[float] = typer.Option(None, "--clock-mhz", help="SM clock (default: the spec's)."),
    measured: bool = typer.Option(False, "--measured", help="Use the record's measured clock and report the "
                                                           "measured cycles against the bound."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
) -> None:
    """FLOPs, minimum DRAM bytes and the roofline bound of a record, from the PTX and buffers alone."""
    from warpgraph.analysis.roofline import roofline, with_simulated
    from warpgraph.topologies import load_arch
    from warpgraph.workloads.record import load_record

    rec = load_record(record)
    spec = load_arch(arch)
    m = rec.measured if measured else None
    if measured and not m:
        raise UserError("the record has no measured.json", location=str(record), hint="drop --measured")
    if m and clock_mhz is None and m.get("sm_clock_hz"):
        clock_mhz = float(m["sm_clock_hz"]) / 1e6
    rf = roofline(rec, spec=spec, clock_mhz=clock_mhz)
    if m and m.get("cycles"):
        rf["measured_cycles"] = float(m["cycles"])
        rf["measured_fraction_of_bound"] = with_simulated(rf, float(m["cycles"]))
    if as_json:
        typer.echo(json.dumps(rf, indent=1, default=str))
        return
    typer.echo(f"{rf['record']}: {rf['bound_by']}-bound, {rf['bound_cycles']:,.0f} cycles "
               f"({rf['bound_us']:.2f} us at {rf['clock_mhz']:.0f} MHz)")
    typer.echo(f"  flops {rf['flops']:.4g} ({rf['flops_source']}, {rf['tensor_path']}), "
               f"min DRAM bytes {rf['min_dram_bytes']:.4g}, intensity {rf['arithmetic_intensity']:.1f} FLOP/B")
    typer.echo(f"  compute {rf['compute_bound_cycles']:,.0f} cycles, memory {rf['memory_bound_cycles']:,.0f} cycles")
    if "measured_cycles" in rf:
        typer.echo(f"  measured {rf['measured_cycles']:,.0f} cycles = bound / {1 / rf['measured_fraction_of_bound']:.2f}")


def register(app: typer.Typer) -> None:
    app.add_typer(trace_app, name="trace")
