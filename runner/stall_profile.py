"""Per-instruction stall profile: where a launch's warp-cycles go, instruction by instruction.

The model's counterpart of Nsight Compute's source view (the SourceCounters section's warp-state sampling per
SASS instruction): ``simulate(..., stall_profile=True)`` keeps, for every static PTX instruction, the warp-cycles
each warp spent stalled *before issuing it*, by stall reason (components/stalls.py: the reason charged when the
warp finally issues it -- ncu's sampler likewise tags a waiting warp with the PC it waits to issue), plus its issue
cycles (``selected``). The columns sum to the launch's stall counters (``run.stalls`` of the statistics), so the
profile is the same accounting cut by instruction, not a second estimate. The last row (``index`` -1, ``ptx``
``<exit>``) holds a warp's wait after its last instruction (store drain).

``RunResult.instruction_stalls`` is the table (pandas DataFrame); ``warpgraph run RECORD --stall-profile out.csv``
writes it. Detailed and sampled timing only (a partitioned run, ``jobs``, keeps no profile).
"""
from __future__ import annotations

from warpgraph.components import stalls as S

__all__ = ["new_profile", "profile_frame"]


def new_profile(n_instructions: int) -> list[list[int]]:
    """Zeroed rows for ``n_instructions`` static instructions and the exit row (index -1 of the list)."""
    return [[0] * S.NREASONS for _ in range(n_instructions + 1)]


def profile_frame(prof: list[list[int]], tables):
    """The profile as a DataFrame: ``index, line, ptx, issued`` (warp issue cycles, ncu's ``selected``), one
    column per stall reason (warp-cycles), ``stalled`` (their sum) and ``stall_share`` (of the launch's stalled
    warp-cycles). Rows with neither issues nor stalls are dropped."""
    import pandas as pd

    names = [n for n in S.STALL_NAMES if n != "selected"]
    idx = [S.STALL_INDEX[n] for n in names]
    rows = []
    n = len(prof) - 1
    for i, r in enumerate(prof):
        if not any(r):
            continue
        last = i == n
        rows.append({"index": -1 if last else i,
                     "line": 0 if last else int(tables.line[i]),
                     "ptx": "<exit>" if last else str(tables.text[i]),
                     "issued": int(r[S.SELECTED]),
                     **{nm: int(r[k]) for nm, k in zip(names, idx)}})
    df = pd.DataFrame(rows, columns=["index", "line", "ptx", "issued", *names])
    df["stalled"] = df[names].sum(axis=1)
    total = int(df["stalled"].sum())
    df["stall_share"] = df["stalled"] / total if total else 0.0
    return df
