"""Bundled launch records by short name: ``h200/gemm_tma_M2048_N2048_K2048`` is
``workloads/records/h200/gemm_tma_M2048_N2048_K2048`` of the installed package, ``microbench/pchase_l1`` is
``workloads/microbench/pchase_l1``. ``load_record``, ``simulate``, ``warpgraph run`` and study YAMLs accept
either form; ``warpgraph records list`` prints them."""
from __future__ import annotations

from pathlib import Path

__all__ = ["RECORDS_DIR", "MICROBENCH_DIR", "list_records", "bundled_record_path", "bundled_records"]

_HERE = Path(__file__).resolve().parent
#: measured calibration / held-out launches, one folder per GPU (``h200``, ``h200_heldout``)
RECORDS_DIR = _HERE / "records"
#: microbenchmark kernels (short names ``microbench/<name>``)
MICROBENCH_DIR = _HERE / "microbench"
_RECORD_FILE = "launch.json"


def bundled_records() -> dict[str, Path]:
    """Short name -> record folder, sorted by name."""
    out: dict[str, Path] = {}
    for root, prefix in ((RECORDS_DIR, ""), (MICROBENCH_DIR, "microbench/")):
        if not root.is_dir():
            continue
        for f in root.rglob(_RECORD_FILE):
            out[prefix + f.parent.relative_to(root).as_posix()] = f.parent
    return dict(sorted(out.items()))


def list_records() -> list[str]:
    """Short names of the bundled launch records (``h200/...``, ``h200_heldout/...``, ``microbench/...``)."""
    return list(bundled_records())


def bundled_record_path(name: str | Path) -> Path | None:
    """The folder of the bundled record ``name`` (a short name), or None when there is none."""
    s = Path(name).as_posix().strip("/")
    if not s or s.startswith(".") or Path(str(name)).is_absolute():
        return None
    for cand in (RECORDS_DIR / s, MICROBENCH_DIR / s.removeprefix("microbench/")):
        if (cand / _RECORD_FILE).is_file():
            return cand
    return None
