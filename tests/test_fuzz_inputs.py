"""Fuzzing the input loaders and the CLI (issue 21): mutated architecture YAMLs, launch records and PTX kernels.

Every input must end in a correct run or a located :class:`UserError` (through the CLI: exit code 2 with an
``error:`` line and no traceback); anything else (a raw exception, a hang past the budgets) fails. Hypothesis
runs derandomized (the same examples on every run, no example database) with a bounded number of examples:
1,320 inputs through the loaders and 250 through ``warpgraph run`` in-process, well under a minute."""
import functools
import json
import resource

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpgraph.core.errors import UserError
from warpgraph.topologies import load_arch
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import load_record


import _hostile_helpers as _H  # noqa: E402  (tests/conftest.py puts tests/ on the path)
COUNTS: dict = {}
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")


def outcome(kind: str, ok: bool) -> None:
    k = f"{kind}_{'ok' if ok else 'error'}"
    COUNTS[k] = COUNTS.get(k, 0) + 1


def fuzz(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))


def counted(kind: str, least: int, outcomes: bool = True):
    """After a fuzz test's examples: it tried at least ``least`` of them, its mutations reached both outcomes (not
    all rejected early: >= 5 accepted, >= 10 refused) and the process stayed under 2 GiB. Each test checks its own
    counts, whichever test-runner process it ran in."""
    def deco(f):
        @functools.wraps(f)
        def run(*a, **kw):
            before = {k: COUNTS.get(k, 0) for k in (kind, f"{kind}_ok", f"{kind}_error")}
            f(*a, **kw)
            got = {k: COUNTS.get(k, 0) - v for k, v in before.items()}
            print("fuzz counts:", got)
            assert got[kind] >= least, got
            if outcomes:
                assert got[f"{kind}_ok"] >= 5 and got[f"{kind}_error"] >= 10, got
            assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 1024 * 1024  # KiB: < 2 GiB
        return run
    return deco


def located(e: UserError) -> None:
    assert isinstance(e, UserError), repr(e)
    assert e.location or ":" in e.message, f"unlocated error: {e}"
    assert "Traceback" not in str(e)


# ------------------------------------------------------------------------------------------ mutation helpers
HOSTILE_SCALARS = ["true", "false", "null", "-1", "0", "1", "-0.5", ".inf", "-.inf", ".nan", "1e12", "1e308",
                   "99999999999999999999999999", "abc", "''", "[]", "{}", "[1, 2]", "{a: 1}", "0x10", "1_000",
                   "!!binary aGVsbG8=", "*nope", "&x 3", "'\\x00'", "2.5", "1024", "65536", "7"]


def byte_mutate(data: bytes, ops) -> bytes:
    b = bytearray(data)
    for kind, pos, val in ops:
        if not b:
            b = bytearray(b"x")
        i = pos % (len(b) + 1)
        if kind == 0:
            b[min(i, len(b) - 1)] = val
        elif kind == 1:
            b.insert(i, val)
        elif kind == 2 and len(b) > 1:
            del b[min(i, len(b) - 1)]
        elif kind == 3:   # duplicate a slice
            j = min(len(b), i + val % 40)
            b[i:i] = b[i:j]
        else:             # truncate
            del b[i:]
    return bytes(b)


BYTE_OPS = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1,
                    max_size=6)

# ------------------------------------------------------------------------------------------ YAML specs
YAML_KEYS = ["sm.count", "sm.subpartitions", "sm.max_warps", "sm.shared_memory_bytes", "sm.shared_carveouts_kib",
             "clocks.sm_mhz", "clocks.l2_mhz", "l2.partitions", "l2.slices", "l2.size_bytes", "hbm.bandwidth_gb_per_s",
             "hbm.efficiency", "hbm.channels", "tma.admission_depth", "tma.kind", "tensor_core.kind",
             "tensor_core.units_per_sm", "fabric.gx_planes_enabled", "fabric.gpcs", "fabric.sms_per_gpc",
             "latencies.fp32.latency_cycles", "latencies.sfu", "mbarrier.try_wait_cycles", "subpartition.scheduler",
             "cta_scheduler.launch_latency_cycles", "l1.line_bytes", "name", "extends", "bogus.key", "sources"]
YAML_BASE = "extends: h200\nname: fz\nl2:\n  slices: 80\ntma:\n  admission_depth: 8\nclocks:\n  sm_mhz: 1500\n"


def yaml_text(sets):
    tree: dict = {}
    for key, val in sets:
        parts = key.split(".")
        cur = tree
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                nxt = cur[p] = {}
            cur = nxt
        cur[parts[-1]] = val

    def emit(d, ind):
        out = []
        for k, v in d.items():
            if isinstance(v, dict):
                out.append("  " * ind + f"{k}:")
                out += emit(v, ind + 1)
            else:
                out.append("  " * ind + f"{k}: {v}")
        return out

    base = {"extends": "h200", "name": "fz", "l2": {"slices": "80"}, "tma": {"admission_depth": "8"}}
    for k, v in tree.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k].update(v)
        else:
            base[k] = v
    return "\n".join(emit(base, 0)) + "\n"


SANE = ["2", "4", "8", "16", "32", "64", "1500.0", "0.5", "[0, 8, 16]"]
NO_BYTES = st.just([])


@counted("yaml", 300)
@fuzz(400)
@given(sets=st.lists(st.tuples(st.sampled_from(YAML_KEYS), st.sampled_from(HOSTILE_SCALARS) | st.sampled_from(SANE)),
                     max_size=3),
       ops=st.one_of(NO_BYTES, NO_BYTES, NO_BYTES, BYTE_OPS))
def test_fuzz_yaml_specs(tmp_path_factory, sets, ops):
    COUNTS["yaml"] = COUNTS.get("yaml", 0) + 1
    d = tmp_path_factory.mktemp("y")
    p = d / "fz.yaml"
    p.write_bytes(byte_mutate(yaml_text(sets).encode(), ops) if ops else yaml_text(sets).encode())
    try:
        spec = load_arch(p)
    except UserError as e:
        located(e)
        outcome("yaml", False)
        return
    outcome("yaml", True)
    assert spec.sm.count <= 1024 and spec.clocks.sm_mhz < float("inf")


@counted("override", 100, outcomes=False)
@fuzz(120)
@given(overrides=st.lists(st.tuples(st.sampled_from(YAML_KEYS),
                                    st.sampled_from(HOSTILE_SCALARS) | st.sampled_from(SANE)), min_size=1, max_size=2))
def test_fuzz_arch_overrides(overrides):
    COUNTS["override"] = COUNTS.get("override", 0) + 1
    try:
        load_arch("h200", [f"{k}={v}" for k, v in overrides])
        outcome("override", True)
    except UserError as e:
        located(e)
        outcome("override", False)


# ------------------------------------------------------------------------------------------ launch records
BODY = " st.global.b32 [%rd3], %r1;\n"
REC_PATHS = ["grid", "grid.0", "block", "block.0", "cluster", "shared_bytes", "ptx", "entry", "name", "format",
             "buffers", "buffers.out", "buffers.out.shape", "buffers.out.shape.0", "buffers.out.dtype",
             "buffers.out.init", "params", "params.0", "params.0.ptr", "check", "source", "extra"]
REC_VALUES = [True, False, None, -1, 0, 1, 64, 1025, 2**31 - 1, 2**31, 2**63, 2**64 + 5, -2**70, 1.5, float("1e300"),
              "", "x", "../../etc/passwd", "/dev/zero", "kernel.ptx", "float16", "zeros", "poison", [], {},
              [2**37], [2**32, 2**32], [1, 1, 1], [0], [70000, 1, 1], {"normal": -1}, {"normal": 0.1},
              [{"u32": 1}], [{"tensormap": {"buffer": "out", "box": [64]}}], {"u32": 5}, {"ptr": "nope"},
              "a" * 300, "../x", 2, 4, 32, 128, [2, 1, 1], [32], [64, 1, 1], [8192], "uint32", "float32"]


VALID = [1, 2, 4, 32, 64, [2, 1, 1], [64], [64, 1, 1], [8192], "uint32", "int32", "zeros", "poison",
         {"normal": 0.5}, {"u32": 5}, "hostile", {}]


def set_path(d, path, value):
    parts = path.split(".")
    cur = d
    for p in parts[:-1]:
        key = int(p) if p.isdigit() else p
        try:
            cur = cur[key]
        except (KeyError, IndexError, TypeError):
            return
        if not isinstance(cur, (dict, list)):
            return
    last = parts[-1]
    if isinstance(cur, list):
        if last.isdigit() and int(last) < len(cur):
            cur[int(last)] = value
    elif isinstance(cur, dict):
        cur[last] = value


def base_record():
    return _H.record(BODY).to_json_dict()


@counted("record", 300)
@fuzz(400)
@given(sets=st.lists(st.tuples(st.sampled_from(REC_PATHS), st.sampled_from(REC_VALUES) | st.sampled_from(VALID)),
                     max_size=2),
       ops=st.one_of(NO_BYTES, NO_BYTES, NO_BYTES, BYTE_OPS))
def test_fuzz_launch_records(tmp_path_factory, sets, ops):
    COUNTS["record"] = COUNTS.get("record", 0) + 1
    data = base_record()
    for path, val in sets:
        set_path(data, path, json.loads(json.dumps(val)))
    d = tmp_path_factory.mktemp("r")
    text = json.dumps(data).encode()
    (d / "launch.json").write_bytes(byte_mutate(text, ops) if ops else text)
    (d / "kernel.ptx").write_text(_H.kernel(BODY))
    try:
        rec = load_record(d)
        prog = rec.program()
        rec.validate_against(prog)
        if rec.n_ctas * rec.threads_per_cta <= 1 << 16 and sum(b.nbytes for b in rec.buffers.values()) < 1 << 24:
            run_functional(rec, prog, max_steps=2000, want_trace=False)
        outcome("record", True)
    except UserError as e:
        located(e)
        outcome("record", False)


# ------------------------------------------------------------------------------------------ PTX kernels
PTX_BODIES = [
    BODY,
    " setp.lt.u32 %p1, %r1, 16;\n @%p1 bra A;\n add.s32 %r5, %r1, 1;\nA:\n st.global.b32 [%rd3], %r5;\n",
    " shfl.sync.bfly.b32 %r5, %r1, 1, 31, -1;\n st.global.b32 [%rd3], %r5;\n",
    "L:\n add.s32 %r6, %r6, 1;\n setp.lt.u32 %p2, %r6, 10;\n @%p2 bra L;\n st.global.b32 [%rd3], %r6;\n",
    " mov.u32 %r8, smem;\n st.shared.b32 [%r8], %r1;\n bar.sync 0;\n ld.shared.b32 %r9, [%r8];\n"
    " st.global.b32 [%rd3], %r9;\n",
    " cvt.rn.f32.u32 %f1, %r1;\n mul.f32 %f2, %f1, 0f3F000000;\n st.global.f32 [%rd3], %f2;\n",
]
PTX_TOKENS = ["%r1", "%r99", "%rd3", "%p1", "%f1", "-1", "0", "4294967296", "0f7F800000", "bra", "bar.sync",
              "trap", "exit", "ret", ";", ",", "[", "]", "{", "}", ".b32", ".u64", ".s64", ".f16", "st.global.b32",
              "ld.global.b32", "mad.wide.s64", "shl.b32", "A", "L", "smem", "%tid.x", "@%p1", "1, 2, 3, 4, 5",
              ".reqntid 32", ".reg .b32 %r<2>;", "\x00", "\xff", "é"]


def token_mutate(text: str, ops) -> str:
    toks = text.split(" ")
    for kind, pos, val in ops:
        i = pos % max(1, len(toks))
        tok = PTX_TOKENS[val % len(PTX_TOKENS)]
        if kind == 0:
            toks[i] = tok
        elif kind == 1:
            toks.insert(i, tok)
        elif kind == 2 and len(toks) > 1:
            del toks[i]
        elif kind == 3:
            toks[i:i] = toks[i:i + 1 + val % 5]
    return " ".join(toks)


@counted("ptx", 300)
@fuzz(400)
@given(body=st.sampled_from(PTX_BODIES), tok_ops=st.one_of(NO_BYTES, BYTE_OPS),
       ops=st.one_of(NO_BYTES, NO_BYTES, NO_BYTES, BYTE_OPS),
       block=st.sampled_from([(32, 1, 1), (64, 1, 1), (48, 1, 1), (128, 1, 1)]))
def test_fuzz_ptx(tmp_path_factory, body, tok_ops, ops, block):
    COUNTS["ptx"] = COUNTS.get("ptx", 0) + 1
    text = token_mutate(_H.kernel(body), tok_ops)
    raw = text.encode("utf-8", "surrogatepass")
    raw = byte_mutate(raw, ops) if ops else raw
    d = tmp_path_factory.mktemp("p")
    rec = _H.record(BODY, block=block).to_json_dict()
    (d / "launch.json").write_text(json.dumps(rec))
    (d / "kernel.ptx").write_bytes(raw)
    try:
        r = load_record(d)
        prog = r.program()
        r.validate_against(prog)
        run_functional(r, prog, max_steps=3000, want_trace=True, max_wall_seconds=20)
        outcome("ptx", True)
    except UserError as e:
        located(e)
        outcome("ptx", False)


# ------------------------------------------------------------------------------------------ the CLI
SETS = ["timing.window=-5", "timing.window=8", "timing.n_sms=abc", "timing.n_sms=2", "sass.div=x", "sass.div=3",
        "timing.bundle=0", "timing.policy=lrr", "timing.policy=xx", "timing.registers=300", "l2.partitions=true",
        "sm.count=1000000000", "clocks.sm_mhz=.inf", "latencies.fp32.latency_cycles=1000000000000",
        "tma.admission_depth=4", "nonsense", "=3", "timing.=1", "sass.=2", "a..b=1"]


@counted("cli", 200)
@fuzz(250)
@given(kind=st.sampled_from(["record", "ptx", "set", "set", "arch"]), sets=st.lists(st.sampled_from(SETS), max_size=2),
       ysets=st.lists(st.tuples(st.sampled_from(YAML_KEYS), st.sampled_from(HOSTILE_SCALARS) | st.sampled_from(SANE)),
                      max_size=2),
       rsets=st.lists(st.tuples(st.sampled_from(REC_PATHS), st.sampled_from(REC_VALUES)), max_size=2),
       tok_ops=BYTE_OPS, body=st.sampled_from(PTX_BODIES),
       mode=st.sampled_from(["functional", "functional", "timing", "bogus"]))
def test_fuzz_cli_run(tmp_path_factory, kind, sets, ysets, rsets, tok_ops, body, mode):
    COUNTS["cli"] = COUNTS.get("cli", 0) + 1
    d = tmp_path_factory.mktemp("c") / "rec"
    d.mkdir()
    data = _H.record(body).to_json_dict()
    ptx = _H.kernel(body)
    if kind == "record":
        for path, val in rsets:
            set_path(data, path, json.loads(json.dumps(val)))
    elif kind == "ptx":
        ptx = token_mutate(ptx, tok_ops)
    (d / "launch.json").write_text(json.dumps(data))
    (d / "kernel.ptx").write_bytes(ptx.encode("utf-8", "surrogatepass"))
    argv = ["run", str(d), "--mode", mode, "--max-steps", "3000", "--json"]
    if kind == "arch":
        (d.parent / "arch.yaml").write_text(yaml_text(ysets))
        argv += ["--arch", str(d.parent / "arch.yaml")]
    if mode == "timing":
        argv += ["--max-cycles", "2000000"]
    for s in sets:
        argv += ["--set", s]
    code, out, err = _H.cli(argv)
    assert "Traceback" not in err and "Traceback" not in out
    assert code in (0, 2), (code, err[-2000:])
    outcome("cli", code == 0)
    if code == 2:
        assert "error" in err.lower() or "usage" in err.lower(), err
    else:
        assert json.loads(out)["metrics"]
