"""Paired side-by-side speed of two trees: ``ab_pairs.py BASE_TREE NEW_TREE OUTDIR [REPS] [PAIRS]``.

Each (bundled record, repetition) runs the two trees at the same time, each in a fresh process pinned to its own
core (``taskset``), so the pair shares whatever load the host has at that moment; ``PAIRS`` pairs run at once on
cores FIRST..FIRST+2*PAIRS-1 (``AB_FIRST_CORE``, default 2: cores 0-1 left to the system); the two trees swap
cores between repetitions. ``ab_case.py`` does the timed run (process CPU seconds of
``simulate()``, trace cache off). Per record it reports the median of the paired ratios base/new (> 1: the new
tree is faster), their range, and the best-of-reps ratio as ab_summary.py does. Unpaired runs on a shared host
(ab_commits.sh) drifted by 20-30 % between rounds on the device, more than the differences being measured.

``ab_pairs.py --summary DIR [DIR...]`` pools the pairs of earlier run folders into one summary.

On the device the carried wheels (.whl/) are installed beside its own numpy / networkx (see device_run.sh).
``CASES="a b"`` limits the records."""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent


def _tree(path: str, side: str, root: pathlib.Path) -> str:
    """A directory holding ``warpgraph`` -> the tree, for PYTHONPATH."""
    d = root / side
    d.mkdir(parents=True, exist_ok=True)
    link = d / "warpgraph"
    if not link.exists():
        link.symlink_to(pathlib.Path(path).resolve())
    return str(d)


def _run(side: str, pp: str, core: int, rec: pathlib.Path, out: pathlib.Path, extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (pp, extra, str(HERE)) if p))
    p = subprocess.run(["taskset", "-c", str(core), sys.executable, str(HERE / "ab_case.py"), str(out), str(rec)],
                       env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=1800)
    if p.returncode:
        raise RuntimeError(f"{side} {rec.name} failed:\n{p.stderr[-2000:]}")
    return json.loads(out.read_text())


def main() -> None:
    base, new, outdir = (str(pathlib.Path(a).resolve()) for a in sys.argv[1:4])
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    pairs = int(sys.argv[5]) if len(sys.argv) > 5 else max(1, (os.cpu_count() or 4) // 2 - 1)
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    links = pathlib.Path(tempfile.mkdtemp(prefix="ab_pairs_"))
    extra = os.environ.get("AB_EXTRA_PATH", "")
    c0 = int(os.environ.get("AB_FIRST_CORE", "2"))
    trees = {"base": _tree(base, "base", links), "new": _tree(new, "new", links)}
    for t in (base, new):
        # byte-compile both trees first (a user's install has its .pyc files): an unwritable or
        # PYTHONDONTWRITEBYTECODE tree would otherwise compile its lazily imported modules inside every timed run
        subprocess.run([sys.executable, "-m", "compileall", "-q", t], check=False, capture_output=True)
    recs = sorted(p for p in (pathlib.Path(new) / "workloads/records/h200").iterdir() if p.is_dir())
    cases = os.environ.get("CASES", "").split()
    if cases:
        recs = [p for p in recs if p.name in cases]
    jobs = [(rec, r) for r in range(reps) for rec in recs]
    free = list(range(pairs))

    def pair(job):
        rec, r = job
        slot = free.pop()
        cb, cn = c0 + 2 * slot, c0 + 1 + 2 * slot
        if r % 2:
            cb, cn = cn, cb    # alternate the pair's cores between repetitions
        try:
            with ThreadPoolExecutor(2) as ex:
                fb = ex.submit(_run, "base", trees["base"], cb, pathlib.Path(base) / "workloads/records/h200" / rec.name,
                               out / f"base_{rec.name}_{r}.json", extra)
                fn = ex.submit(_run, "new", trees["new"], cn, rec, out / f"new_{rec.name}_{r}.json", extra)
                return rec.name, fb.result(), fn.result()
        finally:
            free.append(slot)

    res: dict = {}
    with ThreadPoolExecutor(pairs) as ex:
        for name, b, n in ex.map(pair, jobs):
            res.setdefault(name, []).append((b, n))
    text = summarise(res)
    (out / "summary.txt").write_text(text)
    print(text, end="")


def summarise(res: dict) -> str:
    """Per record: median of the paired ratios base/new with their range, the best-of-reps ratio, whether the
    statistics agree; and the lowest median."""
    lines = ["case | cycles base / new | pairs | paired ratio median (min-max) | best-of-reps ratio | stats identical"]
    worst = None
    for name in sorted(res):
        ps = res[name]
        rat = [b["cpu_seconds"] / n["cpu_seconds"] for b, n in ps]
        med = statistics.median(rat)
        best = min(b["cpu_seconds"] for b, _ in ps) / min(n["cpu_seconds"] for _, n in ps)
        same = {b["stats_digest"] for b, _ in ps} == {n["stats_digest"] for _, n in ps}
        worst = med if worst is None else min(worst, med)
        lines.append(f"{name} | {ps[0][0]['cycles']:,} / {ps[0][1]['cycles']:,} | {len(ps)} | {med:.3f} "
                     f"({min(rat):.3f}-{max(rat):.3f}) | {best:.3f} | {same}")
    lines.append(f"lowest median paired ratio: {worst:.3f}" if worst is not None else "no runs")
    return "\n".join(lines) + "\n"


def load_runs(*dirs) -> dict:
    """``{record: [(base run, new run), ...]}`` from run folders written by this script (pairs matched by
    record and repetition within a folder)."""
    res: dict = {}
    for d in dirs:
        runs = {}
        for f in sorted(pathlib.Path(d).glob("*.json")):
            side, _, rest = f.stem.partition("_")
            runs[(side, rest)] = json.loads(f.read_text())
        for (side, rest), r in sorted(runs.items()):
            if side == "base" and ("new", rest) in runs:
                res.setdefault(r["record"], []).append((r, runs[("new", rest)]))
    return res


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summary"]:      # ab_pairs.py --summary DIR [DIR...]: pool earlier runs
        print(summarise(load_runs(*sys.argv[2:])), end="")
    else:
        main()
