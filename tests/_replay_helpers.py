"""Shared by the replay tests of standalone microbenchmarks (records workloads/microbench/<prefix>_*, whose
launch.json ``source.hardware.params`` names the matching row of a results JSON; the kernels write 100 x the
timed statistic to ``out[0]``)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import warpgraph as wg

ROOT = Path(wg.__file__).parent
MB = ROOT / "workloads" / "microbench"


def results(name: str) -> list[dict]:
    """The ``results`` rows of ``microbench/results/<name>``."""
    return json.loads((ROOT / "microbench" / "results" / name).read_text())["results"]


def record_results(d: Path) -> list[dict]:
    """The ``results`` rows of the file record ``d`` names (``source.hardware.results``, under microbench/results/)."""
    path = json.loads((d / "launch.json").read_text())["source"]["hardware"]["results"]
    return results(path.removeprefix("microbench/results/"))


def hardware_params(d: Path) -> dict:
    """The record's ``source.hardware.params``: which results row it replays."""
    return json.loads((d / "launch.json").read_text())["source"]["hardware"]["params"]


def stats_of(rows: list[dict], params: dict) -> dict:
    """The ``stats`` of the results row with these params."""
    for r in rows:
        if r["params"] == params:
            return r["stats"]
    raise AssertionError(f"no H200 result for {params}")


def measured(d: Path, rows: list[dict], stat: str = "cycles") -> float:
    """The H200's statistic for record ``d``: the row whose params are the record's ``source.hardware.params``."""
    return stats_of(rows, hardware_params(d))[stat]


def record_stats(d: Path) -> dict:
    """The ``stats`` of record ``d``'s own row: in the results file it names, the row of its params."""
    return stats_of(record_results(d), hardware_params(d))


def simulated(d: Path, **kw) -> float:
    """``out[0] / 100`` of the record simulated on h200 (the clock-oracle outputs)."""
    res = wg.simulate(d, "h200", want_outputs=True, **kw)
    return int(np.asarray(res.outputs["out"])[0]) / 100
