"""Microbenchmark results as ``microbench/`` writes them (``schema: warpgraph-microbench/1``, microbench/collect.py).

Input: one results JSON, or a folder. A folder from ``microbench/run_all.sh OUTDIR`` holds ``results.json``; a
folder without one (``microbench/results/``) contributes every ``*.json`` of that schema (section runs such as
``h200_l1_2026-12-02.json`` merge with the full run); other JSON files in it are listed as skipped.
Every result remembers the file it came from (each calibrated value names it)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from warpgraph import UserError

__all__ = ["SCHEMA", "Results", "load_results", "MissingResult"]

SCHEMA = "warpgraph-microbench/1"
_MAX_BYTES = 256 << 20


class MissingResult(LookupError):
    """A derivation needs a benchmark the results do not hold (the parameter is skipped and reported)."""


@dataclass
class Results:
    """The merged results: ``items`` (each a dict with bench, params, stats, optional raw, and ``file``),
    ``files`` (paths read), ``skipped`` (path, why) and the first file's ``provenance``."""
    items: list[dict]
    files: list[Path]
    provenance: dict = field(default_factory=dict)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    def find(self, bench: str, **params) -> list[dict]:
        return [r for r in self.items
                if r["bench"] == bench and all(r["params"].get(k) == v for k, v in params.items())]

    def one(self, bench: str, **params) -> dict:
        found = self.find(bench, **params)
        if not found:
            what = ", ".join(f"{k}={v}" for k, v in params.items())
            raise MissingResult(f"no {bench} result" + (f" with {what}" if what else ""))
        return found[0]

    def stat(self, bench: str, stat: str, **params) -> float:
        r = self.one(bench, **params)
        if stat not in r["stats"]:
            raise MissingResult(f"{bench} result {r['params']} has no statistic {stat!r}")
        return float(r["stats"][stat])

    def file_of(self, bench: str, **params) -> str:
        return self.one(bench, **params)["file"]


def _read_json(path: Path) -> dict:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}", location=str(path), hint="a results JSON") from None
    if size > _MAX_BYTES:
        raise UserError(f"{path} is {size:,} bytes (limit {_MAX_BYTES:,})", location=str(path),
                        hint="a microbench results JSON (run_all.sh's results.json is < 1 MiB)")
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UserError(f"{path} is not UTF-8 (byte {e.start})", location=str(path), hint="a results JSON") from None
    except json.JSONDecodeError as e:
        raise UserError(f"not valid JSON: {e.msg}", location=f"{path}:{e.lineno}", hint="a results JSON") from None


def _check(doc, path: Path) -> list[dict]:
    """The ``results`` list of a warpgraph-microbench/1 document, each entry checked for bench/params/stats."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise UserError(f"not a microbenchmark results file (schema {got!r})", location=str(path),
                        hint=f'a JSON object with "schema": "{SCHEMA}" (microbench/run_all.sh writes results.json)')
    res = doc.get("results")
    if not isinstance(res, list) or not res:
        raise UserError("no results", location=f"{path} (results)", hint="a non-empty list of benchmark results")
    out = []
    for i, r in enumerate(res):
        ok = (isinstance(r, dict) and isinstance(r.get("bench"), str) and isinstance(r.get("params"), dict)
              and isinstance(r.get("stats"), dict))
        if not ok:
            raise UserError("malformed result", location=f"{path} (results[{i}])",
                            hint='an object with "bench" (string), "params" and "stats" (objects)')
        for k, v in r["stats"].items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"statistic {k!r} of {r['bench']} is {v!r}", location=f"{path} (results[{i}])",
                                hint="finite numbers only")
        out.append({**r, "file": path.name})
    return out


def load_results(path: str | Path) -> Results:
    """Read a results JSON or folder (module docstring); a clear ``UserError`` when it is missing or malformed."""
    p = Path(path).expanduser()
    if not p.exists():
        raise UserError("no such file or folder", location=str(p),
                        hint="a folder written by microbench/run_all.sh (holding results.json) or a results JSON")
    if p.is_file():
        files, skipped = [p], []
    elif p.is_dir():
        if (p / "results.json").is_file():
            files, skipped = [p / "results.json"], []
        else:
            files, skipped = [], []
            for f in sorted(p.glob("*.json")):
                doc = _read_json(f)
                if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
                    files.append(f)
                else:
                    skipped.append((f, f"not {SCHEMA}"))
        if not files:
            raise UserError("no microbenchmark results in this folder", location=str(p),
                            hint=f"results.json or *.json files with \"schema\": \"{SCHEMA}\" "
                                 "(microbench/run_all.sh OUTDIR writes OUTDIR/results.json)")
    else:
        raise UserError(f"{p} is not a regular file or folder", location=str(p), hint="a results JSON or folder")
    items, prov = [], {}
    for f in files:
        doc = _read_json(f)
        items += _check(doc, f)
        if not prov and isinstance(doc.get("provenance"), dict):
            prov = doc["provenance"]
    return Results(items=items, files=files, provenance=prov, skipped=skipped)
