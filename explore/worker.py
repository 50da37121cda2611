"""``python -m warpgraph.explore.worker STUDY.yaml --storage URL``: one worker process (spawned by
``warpgraph explore --workers N``; the same as ``warpgraph explore STUDY.yaml --worker``)."""
from __future__ import annotations

import argparse
import os
import sys

# never import from the current directory (``python -m`` puts it first on the path; spawn_workers passes -P, this
# covers interpreters / launchers without it): a worker resolves `python:mod:fn` exactly like the coordinator
if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m warpgraph.explore.worker")
    ap.add_argument("study")
    ap.add_argument("--storage", default=None)
    ap.add_argument("--worker-index", type=int, default=None)
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--max-trials", type=int, default=None, help="stop after this many trials in this process")
    ap.add_argument("--no-trace-cache", action="store_true", help="run every trial's functional pass")
    a = ap.parse_args(argv)
    import warpgraph
    from warpgraph.explore.study import run_worker

    try:
        run_worker(a.study, a.storage, worker_index=a.worker_index, trials=a.trials, timeout_s=a.timeout,
                   max_trials=a.max_trials, trace_cache=False if a.no_trace_cache else None)
    except warpgraph.UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
