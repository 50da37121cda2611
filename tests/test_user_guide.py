"""docs/user-guide.md runs as written: its code blocks execute in order in a fresh folder (``title=FILE``
blocks are written to FILE; ``bash`` lines run with the installed ``warpgraph``; ``python`` blocks run in a
subprocess). Small records only: the whole guide takes well under a minute."""
import os
import re
import subprocess
import sys
from pathlib import Path

import warpgraph

GUIDE = Path(warpgraph.__file__).resolve().parent / "docs" / "user-guide.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks():
    return [(lang, info.strip(), body) for lang, info, body in BLOCK.findall(GUIDE.read_text())]


def test_guide_has_the_four_steps():
    text = GUIDE.read_text()
    for h in ("## 1. First run", "## 2. First what-if", "## 3. First study", "## 4. First plugin"):
        assert h in text
    langs = [b[0] for b in blocks()]
    assert langs.count("bash") >= 3 and langs.count("python") >= 2


def test_guide_code_blocks_run(tmp_path):
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(tmp_path)
    outputs = []
    for i, (lang, info, body) in enumerate(blocks()):
        title = re.search(r"title=(\S+)", info)
        if title:
            (tmp_path / title.group(1)).write_text(body)
            continue
        if lang == "bash":
            for line in body.strip().splitlines():
                r = subprocess.run(line, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                   timeout=300)
                assert r.returncode == 0, f"block {i}: {line}\n{r.stdout}\n{r.stderr}"
                outputs.append((line, r.stdout + r.stderr))
        elif lang == "python":
            r = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300)
            assert r.returncode == 0, f"block {i}:\n{body}\n{r.stdout}\n{r.stderr}"
            outputs.append((body, r.stdout))
    text = "\n".join(o for _, o in outputs)
    assert "gemm_ptr_M1024_N1024_K1024" in text and "hbm.bandwidth_gb_per_s" in text
    assert "Pareto set" in text and "ok:" in text
    assert "unknown" in text and "pipelined" in text           # the registry names the known kinds
    assert (tmp_path / "whatif" / "config.yaml").is_file() and (tmp_path / "whatif" / "stats.csv").is_file()
    assert (tmp_path / "first_study_out" / "report" / "results.csv").is_file()
