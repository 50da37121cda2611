"""Output that fits: tables leave out low-priority columns on a narrow terminal instead of cutting numbers;
piped output is never wrapped; --format csv/json for validate and bench; progress only on a terminal;
``arch show --sources`` / ``arch diff`` sources."""
import csv
import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

from warpgraph.cli import ui, validate_cmd
from warpgraph.cli.main import app

BUNDLED = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"


def _cols():
    return [ui.Column("name", "left", None), ui.Column("big number", "right", None),
            ui.Column("detail", "right", 0), ui.Column("more", "right", 1)]


ROWS = [["gemm_tma_M4096_N4096_K4096", "1,086,976", "0.9876", "12345.678"],
        ["rmsnorm_rows4096_cols4096", "34,534", "1.0000", "1.5"]]


def test_fit_table_drops_columns_not_digits():
    buf = io.StringIO()
    con = Console(file=buf, width=50, color_system=None)
    dropped = ui.print_table(con, _cols(), ROWS)
    out = buf.getvalue()
    assert "…" not in out and "1,086,976" in out and "gemm_tma_M4096_N4096_K4096" in out
    assert dropped and dropped[0] == "detail"          # the lowest priority goes first
    assert "left out to fit 50 columns" in out
    assert all(len(ln) <= 50 for ln in out.splitlines())


def test_fit_table_keeps_everything_when_wide():
    buf = io.StringIO()
    con = Console(file=buf, width=200, color_system=None)
    assert ui.print_table(con, _cols(), ROWS) == []
    assert "12345.678" in buf.getvalue()


def test_piped_console_never_wraps():
    buf = io.StringIO()
    con = ui.stdout_console(buf)               # not a terminal
    con.print("x" * 500)
    ui.print_table(con, _cols(), ROWS)
    assert "x" * 500 in buf.getvalue() and "left out" not in buf.getvalue()


def test_progress_is_off_without_a_terminal(capsys):
    assert not ui.progress_enabled()           # pytest's stderr is not a terminal
    with ui.progress("x", total=3) as p:
        p.update(advance=1)
        p.phase("timing pass")
    assert capsys.readouterr().err == ""
    with ui.progress("x", total=1, quiet=True) as p:
        assert isinstance(p, ui._NoProgress)


def test_progress_on_a_terminal_renders_on_stderr(monkeypatch):
    # forced on (as on a terminal): a rich live display that accepts updates
    with ui.progress("launches", total=2, enabled=True) as p:
        p.update(advance=1, description="launches (last: a)")
        p.update(advance=1)
    assert isinstance(p, ui._RichProgress)


def fake_sim(path, arch="h200", *, mode="timing", overrides=None, **kw):
    m = json.loads((Path(path) / "measured.json").read_text())
    return SimpleNamespace(metrics={"cycles": m["cycles"] * 0.95 + 0.123456789, "warp_instructions": 1.0,
                                    "dram_read_bytes": 1.0, "dram_write_bytes": 0.0, "l2_bytes": 1.0,
                                    "achieved_occupancy_pct": 50.0, "stall_ratios_per_issue": {"wait": 1.0},
                                    "wall_seconds": 0.01})


@pytest.fixture
def recs(tmp_path, monkeypatch):
    orig = validate_cmd.run_validate
    monkeypatch.setattr(validate_cmd, "run_validate", lambda *a, **k: orig(
        *a, **{**k, "simulate_fn": fake_sim, "roofline_fn": lambda *x: {"bound_cycles": 100.0, "bound_by": "memory"}}))
    root = tmp_path / "recs"
    shutil.copytree(BUNDLED / "gemm_tma_M4096_N4096_K4096", root / "big")
    return root


def test_validate_format_csv_full_precision(recs, tmp_path):
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(tmp_path / "o"), "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    (row,) = rows
    measured = json.loads((recs / "big" / "measured.json").read_text())["cycles"]
    assert float(row["sim_cycles"]) == measured * 0.95 + 0.123456789      # no %.6g rounding
    on_disk = list(csv.DictReader(open(tmp_path / "o" / "validation.csv")))
    assert on_disk[0]["sim_cycles"] == row["sim_cycles"]


def test_validate_format_json(recs, tmp_path):
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(tmp_path / "o"), "-f", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["n_records"] == 1 and d["rows"][0]["name"] == "gemm_tma_M4096_N4096_K4096"


def test_validate_table_piped_is_not_cut(recs, tmp_path):
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(tmp_path / "o")], env={"COLUMNS": "60"})
    assert r.exit_code == 0, r.output
    assert "…" not in r.output and "gemm_tma_M4096_N4096_K4096" in r.output


def test_arch_show_sources():
    r = CliRunner().invoke(app, ["arch", "show", "h200", "--sources", "--set", "tma.admission_depth=2"])
    assert r.exit_code == 0, r.output
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines()}
    assert "[h200.yaml:" in lines["clocks.sm_mhz"] and "#" in lines["clocks.sm_mhz"]
    assert "[h100.yaml:" in lines["sm.count"]                         # inherited through extends
    assert "[override tma.admission_depth]" in lines["tma.admission_depth"]
    r = CliRunner().invoke(app, ["arch", "show", "h200", "--sources", "--json"])
    d = json.loads(r.stdout)
    from warpgraph.topologies.loader import ARCH_DIR

    loc = d["clocks.sm_mhz"]["location"]
    file, line = loc.rsplit(":", 1)
    text = (ARCH_DIR / file).read_text().splitlines()[int(line) - 1]
    assert text.strip().startswith("sm_mhz:") and d["clocks.sm_mhz"]["comment"] in text


def test_arch_diff_sources():
    r = CliRunner().invoke(app, ["arch", "diff", "h100", "h200", "--json"])
    rows = {x["path"]: x for x in json.loads(r.stdout)}
    assert rows["clocks.hbm_mhz"]["h100_source"].startswith("h100.yaml:")
    assert rows["clocks.hbm_mhz"]["h200_source"].startswith("h200.yaml:")
    r = CliRunner().invoke(app, ["arch", "diff", "h100", "h200"])
    assert "h200: h200.yaml:" in r.stdout


def test_validate_accepts_a_bundled_group_name(monkeypatch, tmp_path):
    seen = {}
    orig = validate_cmd.run_validate

    def spy(directory, *a, **k):
        k.update(simulate_fn=fake_sim, roofline_fn=lambda *x: {"bound_cycles": 100.0, "bound_by": "memory"})
        seen["dir"] = directory
        return orig(directory, *a, **k)

    monkeypatch.setattr(validate_cmd, "run_validate", spy)
    r = CliRunner().invoke(app, ["validate", "h200_heldout", "--filter", "gemm_tma*", "--out", str(tmp_path / "o"),
                                 "-f", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    want = sorted(p.name for p in (BUNDLED.parent / "h200_heldout").glob("gemm_tma*") if (p / "launch.json").exists())
    assert want and sorted(x["name"] for x in rows) == want
