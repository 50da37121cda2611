"""A run as a record (like gem5's ``m5out``): ``warpgraph run ... --out DIR`` writes

* ``config.yaml``   the resolved architecture (after ``extends`` and ``--set``), what was simulated;
* ``record.json``   the launch record's name, path and content hash (sha256 of launch.json's data + the PTX);
* ``metrics.json``  the metrics, with provenance: warpgraph version, git commit (when run from a checkout),
                    command line, overrides, seed, mode, record hash, config hash;
* ``stats.csv``     every component statistic with ``unit`` and ``description`` columns
                    (and ``stats.parquet`` when pyarrow is installed).

``--json`` prints the same provenance under ``"provenance"``.
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from pathlib import Path

__all__ = ["record_hash", "git_commit", "provenance", "write_run_dir"]


def record_hash(record) -> str:
    """sha256 of a launch record's content: its launch.json data (canonical JSON) and its PTX text."""
    h = hashlib.sha256()
    h.update(json.dumps(record.to_json_dict(), sort_keys=True, separators=(",", ":")).encode())
    h.update(b"\0")
    h.update(record.ptx_text().encode())
    return "sha256:" + h.hexdigest()


def git_commit() -> str | None:
    """HEAD of the checkout warpgraph runs from (None for an installed wheel or without git); ``+dirty`` when the
    working tree has changes."""
    import warpgraph

    here = Path(warpgraph.__file__).resolve().parent
    if not (here / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def _config_yaml(spec) -> str:
    from warpgraph.topologies.loader import dump_arch

    return dump_arch(spec)


def provenance(res, record, *, arch: str, overrides: list[str], seed: int, mode: str,
               record_path: str | None = None, argv: list[str] | None = None) -> dict:
    """Where a result came from: enough to rerun it and to tell two runs apart."""
    import warpgraph

    out = {
        "warpgraph_version": warpgraph.__version__,
        "git_commit": git_commit(),
        "command": ["warpgraph"] + list(sys.argv[1:] if argv is None else argv),
        "record": record.name,
        "record_path": record_path,
        "record_hash": record_hash(record),
        "arch": arch,
        "arch_name": res.arch,
        "overrides": list(overrides),
        "seed": seed,
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if getattr(res, "spec", None) is not None:
        out["config_hash"] = "sha256:" + hashlib.sha256(_config_yaml(res.spec).encode()).hexdigest()
    return out


def write_run_dir(out: Path, res, record, prov: dict) -> dict[str, Path]:
    """Write the run folder; returns ``{kind: path}``."""
    from warpgraph.runner.result import _plain

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    if getattr(res, "spec", None) is not None:
        header = (f"# resolved architecture of this run: {prov['arch']} with overrides "
                  f"{prov['overrides'] or 'none'} (warpgraph {prov['warpgraph_version']})\n")
        (out / "config.yaml").write_text(header + _config_yaml(res.spec))
        files["config"] = out / "config.yaml"
    (out / "record.json").write_text(json.dumps({"name": record.name, "path": prov.get("record_path"),
                                                 "hash": prov["record_hash"]}, indent=1) + "\n")
    files["record"] = out / "record.json"
    doc = {"provenance": prov, "record": res.record, "arch": res.arch, "mode": res.mode,
           "metrics": _plain(res.metrics)}
    cmp_ = res.comparison()
    if cmp_:
        doc["measured_comparison"] = _plain(cmp_)
    (out / "metrics.json").write_text(json.dumps(doc, indent=1) + "\n")
    files["metrics"] = out / "metrics.json"
    if res.stats is not None:
        from warpgraph.analysis.stat_units import annotate

        df = annotate(res.stats)
        df.to_csv(out / "stats.csv", index=False, float_format=lambda v: repr(float(v)))  # full precision
        files["stats_csv"] = out / "stats.csv"
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            pass
        else:
            df.to_parquet(out / "stats.parquet", index=False)
            files["stats_parquet"] = out / "stats.parquet"
    return files
