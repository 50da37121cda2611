"""The template plugin (examples/plugin_tma_policy) installed into a fresh environment: its TMA admission policy is
selected by one YAML line and changes the cycles in the physically expected direction (a 32 KiB in-flight byte
budget admits 2 of tma_stream_16k's 16 KiB boxes at a time where the default admits 16 transactions)."""
import json
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "examples" / "plugin_tma_policy"
RECORD = ROOT / "workloads" / "microbench" / "tma_stream_16k"

_RUN = """
import json, sys
from warpgraph.runner.simulate import simulate
from warpgraph.core.registry import registration
out = {"default": simulate(sys.argv[1], "h200").metrics["cycles"],
       "plugin": simulate(sys.argv[1], sys.argv[2]).metrics["cycles"],
       "source": registration("tma", "byte_budget").source}
print(json.dumps(out))
"""


def _wheel_builds_offline() -> bool:
    """Whether this environment's setuptools can build the wheel itself (bdist_wheel: setuptools >= 70.1 or the
    wheel package); else pip builds it in an isolated environment from the package index, as for any install."""
    try:
        import wheel  # noqa: F401

        return True
    except ImportError:
        import setuptools

        return tuple(int(x) for x in setuptools.__version__.split(".")[:2]) >= (70, 1)


def test_plugin_installs_and_changes_cycles(tmp_path):
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    site = Path(subprocess.check_output([str(env / "bin" / "python"), "-c",
                                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    # the fresh environment sees this one's packages (warpgraph, pydantic, pip, setuptools) but installs into its own
    (site / "_parent_env.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    py = str(env / "bin" / "python")
    cmd = [py, "-m", "pip", "install", "-q", "--no-deps", str(PLUGIN)]
    if _wheel_builds_offline():
        cmd.insert(5, "--no-build-isolation")
    subprocess.run(cmd, check=True, cwd=tmp_path)
    arch = tmp_path / "budget.yaml"
    arch.write_text("name: h200_tma_budget\nextends: h200\ntma: {kind: byte_budget}\n")
    res = subprocess.run([py, "-c", _RUN, str(RECORD), str(arch)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["plugin"] > out["default"]
    assert "warpgraph-tma-byte-budget" in out["source"]
    # this environment does not have the plugin: the kind is an error naming the known kinds
    res = subprocess.run([sys.executable, "-c", "from warpgraph.topologies import load_arch; import sys; "
                          "load_arch(sys.argv[1])", str(arch)], capture_output=True, text=True)
    assert res.returncode != 0 and "byte_budget" in res.stderr and "default" in res.stderr
