"""The tests folder on the import path: the tests are not a package (``--import-mode=importlib``), and their
shared helpers (``_hostile_helpers``, the unit test doubles ``standin_units``) are imported by name."""
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import os  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _trace_cache_in_tmp(tmp_path_factory):
    """Caches the tests write (traces, ptxas and SASS facts: core/cache_dir.py) go to a temporary folder, never to the
    user's ~/.cache; subprocesses (explore workers, CLI runs) inherit it."""
    old = os.environ.get("WARPGRAPH_CACHE_DIR")
    if old is None:
        os.environ["WARPGRAPH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("WARPGRAPH_CACHE_DIR", None)
