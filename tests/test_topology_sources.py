"""Source comments of the bundled architecture YAMLs cite the paper, files of this repository or public URLs,
never material outside the repository; repository paths they cite exist."""
import re
from pathlib import Path

import warpgraph

ROOT = Path(warpgraph.__file__).resolve().parent
YAMLS = sorted((ROOT / "topologies").glob("*.yaml"))


def _comments(p):
    for i, ln in enumerate(p.read_text().splitlines(), 1):
        if "#" in ln:
            yield i, ln[ln.index("#"):]


def test_no_citation_outside_the_repository():
    bad = []
    for p in YAMLS:
        for i, c in _comments(p):
            if re.search(r"\bfacts\b|fgs-repo|shared/|\.\./shared|/work/", c):
                bad.append(f"{p.name}:{i}: {c}")
    assert not bad, "\n".join(bad)


def test_cited_repository_files_exist():
    missing = []
    for p in YAMLS:
        for i, c in _comments(p):
            for path in re.findall(r"\b((?:microbench|workloads|tests|components|docs)/[\w./-]+\.\w+)", c):
                if "*" not in path and not (ROOT / path).exists():
                    missing.append(f"{p.name}:{i}: {path}")
    assert not missing, "\n".join(missing)


def test_source_keys_are_defined_in_the_legend():
    legend = (ROOT / "topologies" / "h100.yaml").read_text().split("\nname:")[0]
    for key in ("paper", "flashgpu-sim", "h100-spec", "luo24", "luo25", "jarmusch25", "markdewing", "seanzw",
                "accel-sim", "h200-props", "estimate"):
        assert re.search(rf"#\s+{re.escape(key)}\s+=", legend), key
    used = set()
    for p in YAMLS:
        for _, c in _comments(p):
            used |= set(re.findall(r"#\s*([a-z][a-z0-9-]*\d*):", c))
    used = {u for u in used if u not in ("https", "http") and not u.startswith("mb-")}  # mb-*: name their file
    known = set(re.findall(r"#\s+([a-z][\w-]*)\s+=", legend)) | {"mb", "calib", "unknown"}
    assert used <= known, sorted(used - known)
