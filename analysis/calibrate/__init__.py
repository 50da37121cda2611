"""``warpgraph calibrate``: architecture values from a folder of microbenchmark results (microbench/run_all.sh).

``calibrate(results, base="h200", trials=20, seed=0) -> Calibration``: closed-form values read off the
statistics (closed_form.py) and a few fitted ones, each an Optuna study over replays of the bundled
microbenchmark records (fit.py). ``Calibration.write_yaml(path)`` writes an architecture YAML that ``extends``
the base, every value with its source comment. Uses only the public API (``warpgraph.simulate`` /
``load_record`` / ``load_arch``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from warpgraph.analysis.calibrate.closed_form import Param, closed_form
from warpgraph.analysis.calibrate.fit import FITS, fit_all
from warpgraph.analysis.calibrate.results import Results, load_results

__all__ = ["calibrate", "Calibration", "Param", "load_results", "FITS", "base_value"]


def base_value(spec_dict: dict, key: tuple[str, ...]):
    """The value at ``key`` of a resolved spec (``model_dump``), or None."""
    cur = spec_dict
    for part in key:
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


@dataclass
class Calibration:
    base: str
    params: list[Param]
    base_values: dict[str, object]
    results: Results
    skipped: list[str] = field(default_factory=list)

    def rows(self) -> list[dict]:
        """One row per value: parameter, base, calibrated, change (fraction or None), method, source."""
        out = []
        for p in self.params:
            b = self.base_values.get(p.dotted)
            ch = (p.value - b) / b if isinstance(b, (int, float)) and b else None
            out.append({"parameter": p.dotted, "base": b, "calibrated": p.value, "change": ch, "method": p.method,
                        "noise": p.noise, "source": f"{p.bench}, {p.file}"})
        return out

    def write_yaml(self, path: str | Path, name: str | None = None) -> Path:
        from warpgraph.analysis.calibrate.output import write_yaml

        return write_yaml(self, Path(path), name)


def calibrate(results: str | Path | Results, base: str = "h200", *, trials: int = 20, seed: int = 0,
              on_fit: Callable | None = None) -> Calibration:
    """Closed-form values, then the fits (their replays run on ``base`` with the closed-form values applied)."""
    import warpgraph

    R = results if isinstance(results, Results) else load_results(results)
    spec = warpgraph.load_arch(base).model_dump(mode="json")
    cf, skipped = closed_form(R)
    fits, fskipped = fit_all(R, base, cf, trials=trials, seed=seed, on_fit=on_fit)
    byk = {p.key: p for p in cf.values()}
    for p in fits.values():
        byk[p.key] = p                       # a fitted value replaces a closed-form one of the same key
    params = sorted(byk.values(), key=lambda p: p.key)
    if not params:
        raise warpgraph.UserError("the results determine no parameter", location=", ".join(map(str, R.files)),
                                  hint="results of microbench/run_all.sh (sections tma, mbarrier, memory, ...)"
                                       + ("; missing: " + "; ".join(skipped + fskipped) if skipped else ""))
    return Calibration(base=base, params=params, base_values={p.dotted: base_value(spec, p.key) for p in params},
                       results=R, skipped=skipped + fskipped)
