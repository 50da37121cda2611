"""PTX comparison for capture tests: code lines only (no ``.file`` / ``.loc`` / comments / DWARF section, whose
strings hold the source path), equal up to a permutation of integer immediates between lines that differ only
there. Triton 3.6's warp-specialization pass is not deterministic across fresh compiles: it may swap the
shared-memory offsets of two mbarriers (``add.s32 %r21, %r28, 114944`` <-> ``115008``), measured as 6 of 8 fresh
compiles of the gallery's ``gemm_warp_spec`` differing from the committed record in exactly that way."""
import re
from collections import Counter

_INT = re.compile(r"(?<![\w%$.])-?\d+\b")


def code(ptx: str) -> list[str]:
    i = ptx.find(".section\t.debug")
    return [ln for ln in ptx[: i if i >= 0 else None].splitlines()
            if not ln.lstrip().startswith((".file", ".loc", "//"))]


def same_code(a: str, b: str) -> bool:
    """``code(a) == code(b)`` but for immediates permuted among otherwise identical lines."""
    ca, cb = code(a), code(b)
    if len(ca) != len(cb):
        return False
    da, db = Counter(), Counter()
    for x, y in zip(ca, cb):
        if x == y:
            continue
        if _INT.sub("#", x) != _INT.sub("#", y):
            return False
        da.update(_INT.findall(x))
        db.update(_INT.findall(y))
    return da == db
