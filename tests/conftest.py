"""The tests folder on the import path: the tests are not a package (``--import-mode=importlib``), and their
shared helpers (``_hostile_helpers``, the unit test doubles ``standin_units``) are imported by name."""
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
