"""The calibrated architecture YAML: ``extends: <base>``, each value with ``# source: <bench>, <file>, <method>:
<how>`` (ruamel.yaml end-of-line comments, read back by ``warpgraph arch show --sources``)."""
from __future__ import annotations

import os
import re
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

__all__ = ["write_yaml"]


def _extends(base: str, out: Path) -> str:
    """A bundled name as is; a path relative to the written file's folder (the loader resolves it from there)
    when the base lies inside that folder, else absolute."""
    looks_like_path = "/" in base or "\\" in base or base.endswith((".yaml", ".yml"))
    if not looks_like_path:
        return base
    p = Path(base).expanduser().resolve()
    rel = os.path.relpath(p, out.resolve().parent)
    return str(p) if rel.startswith("..") else rel


def write_yaml(cal, out: Path, name: str | None = None) -> Path:
    prov = cal.results.provenance
    gpu = prov.get("gpu_name") or "unknown GPU"
    files = ", ".join(str(f) for f in cal.results.files)
    doc = CommentedMap()
    doc["name"] = name or re.sub(r"[^A-Za-z0-9_.-]", "_", out.stem)
    doc["extends"] = _extends(cal.base, out)
    when = prov.get("date_utc", "date unknown")
    doc["description"] = f"{gpu}: {Path(cal.base).stem} calibrated from microbenchmarks ({when})"
    head = [f"Written by `warpgraph calibrate` from {files}",
            f"GPU {gpu}, driver {prov.get('driver_version', '?')}, clocks: {prov.get('clock_control', '?')}, "
            f"run {prov.get('date_utc', '?')}.",
            "closed-form: read off the statistic; fit: Optuna study replaying workloads/microbench records "
            "(analysis/calibrate/fit.py).",
            "noise: spread of repeated measurements of the same quantity in the results, in the value's units."]
    if cal.skipped:
        head.append("Not determined by these results (the base's values stay): " + "; ".join(cal.skipped))
    doc.yaml_set_start_comment("\n".join(head))
    for p in cal.params:
        cur = doc
        for part in p.key[:-1]:
            if part not in cur:
                cur[part] = CommentedMap()
            cur = cur[part]
        cur[p.key[-1]] = p.value
        noise = f" (noise {p.noise:g})" if p.noise is not None else ""
        cur.yaml_add_eol_comment(f"source: {p.bench}, {p.file}, {p.method}: {p.how}{noise}", p.key[-1])
    y = YAML()
    y.width = 4096
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        y.dump(doc, f)
    return out
