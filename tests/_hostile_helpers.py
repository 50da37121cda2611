"""Helpers of the hostile-input tests (tests/test_hostile_*.py, tests/test_fuzz_inputs.py): small kernels and
records, and the CLI run in-process. Imported by name (tests/conftest.py puts tests/ on the path)."""
import contextlib
import io
import json

from warpgraph.workloads.record import record_from_dict

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"
REGS = " .reg .pred %p<8>;\n .reg .b32 %r<64>;\n .reg .b64 %rd<16>;\n .reg .f32 %f<32>;\n"
PRE = (" ld.param.u64 %rd1, [k_p0];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n"
       " mad.lo.s32 %r4, %r2, %r3, %r1;\n mul.wide.u32 %rd2, %r4, 4;\n add.s64 %rd3, %rd1, %rd2;\n")


def kernel(body, directives=""):
    return (HEAD + ".extern .shared .align 16 .b8 smem[];\n"
            f".visible .entry k(.param .u64 k_p0){directives}\n{{\n" + REGS + PRE + body + "\n ret;\n}\n")


def record(body, *, grid=(1, 1, 1), block=(64, 1, 1), shared=0, directives="", params=None, n=4096):
    return record_from_dict({"format": "launch-record/1", "name": "hostile", "entry": "k", "grid": list(grid),
                             "block": list(block), "shared_bytes": shared,
                             "buffers": {"out": {"dtype": "uint32", "shape": [n], "init": "zeros"}},
                             "params": params or [{"ptr": "out"}]}, ptx_text=kernel(body, directives))


def write_record(d, body, **kw):
    rec = record(body, **kw)
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.ptx").write_text(rec.ptx_text())
    (d / "launch.json").write_text(json.dumps(rec.to_json_dict()))
    return d


def cli(argv):
    """``warpgraph ARGV`` in-process: (exit code, stdout, stderr)."""
    from warpgraph.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()
