"""Where warpgraph keeps its on-disk caches: one root for all of them.

``$WARPGRAPH_CACHE_DIR`` names the root (default ``$XDG_CACHE_HOME/warpgraph``, else ``~/.cache/warpgraph``);
each cache is a folder under it: ``traces/`` (functional traces reused by sweeps, runner/trace_cache.py),
``ptxas/`` (register facts, workloads/compiled.py), ``sass/`` (SASS listings, workloads/sass.py) and
``arch_yaml/`` (parsed architecture YAML with its line numbers, topologies/loader.py).
``WARPGRAPH_CACHE_DIR=off`` turns every disk cache off (results are the same, only slower).

The older ``$WARPGRAPH_CACHE`` (the traces folder alone) is still read, with a warning naming the new variable."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

__all__ = ["cache_root", "cache_subdir", "OFF_WORDS"]

#: values of ``$WARPGRAPH_CACHE_DIR`` that turn the disk caches off
OFF_WORDS = ("", "0", "off", "false", "no", "none")
_warned = False


def _legacy_traces() -> str | None:
    global _warned
    old = os.environ.get("WARPGRAPH_CACHE")
    if old is not None and not _warned:
        _warned = True
        warnings.warn("$WARPGRAPH_CACHE is renamed $WARPGRAPH_CACHE_DIR (the root of all caches; traces go to its "
                      "traces/ folder); the old value is used for the trace cache this time", stacklevel=3)
    return old


def cache_root() -> Path | None:
    """The root of the disk caches, or None when they are off."""
    env = os.environ.get("WARPGRAPH_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in OFF_WORDS else Path(env).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "warpgraph"


def cache_subdir(sub: str, *, create: bool = True) -> Path | None:
    """``<root>/<sub>`` (made when ``create``), or None when the caches are off or the folder cannot be made.
    For ``traces`` only, a set ``$WARPGRAPH_CACHE`` (the old name) wins unless ``$WARPGRAPH_CACHE_DIR`` is set."""
    if sub == "traces" and "WARPGRAPH_CACHE_DIR" not in os.environ:
        old = _legacy_traces()
        if old is not None:
            d = None if old.strip().lower() in OFF_WORDS else Path(old).expanduser()
            return _made(d) if create else d
    root = cache_root()
    d = None if root is None else root / sub
    return _made(d) if create else d


def _made(d: Path | None) -> Path | None:
    if d is None:
        return None
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return d


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``: a reader in another
    process (test workers, study workers) sees the old file or the whole new one, never half of it. OSError
    propagates (callers of a cache ignore it)."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
