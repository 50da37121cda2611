"""The gallery's launches: kernel, arguments, launch options and a numpy reference per output.

``CASES[name](scale)`` returns a :class:`Case` at ``scale="small"`` (the committed records under
``workloads/gallery/records``, run functionally in the default test suite) or ``scale="full"`` (the sizes
measured on the H200). ``build(case, out_dir)`` captures the launch with
:func:`warpgraph.workloads.triton_capture.capture` and writes each output's golden values
(``expected_<buffer>.npy``, from the numpy reference applied to the record's seed-0 inputs) with a
``check.expected`` block.

    python -m warpgraph.workloads.gallery.cases            # re-capture every small record
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "records"


@dataclass
class Case:
    kernel: str                      # function name in gallery/kernels.py
    grid: tuple
    args: dict[str, Any]             # every kernel argument by name (Bufs, descriptors, scalars, constexprs)
    ref: Callable                    # ref(inputs: dict name -> float64 array) -> dict output name -> array
    tol: dict[str, dict]             # output -> {"max_rel_err": x} / {"max_abs_err": y}
    num_warps: int = 4
    num_stages: int | None = None
    inits: dict = field(default_factory=dict)
    style: str = ""


def _k():
    from warpgraph.workloads.gallery import kernels

    return kernels


@dataclass
class BufSpec:
    """A buffer argument (dtype, shape, init): plain data, so the case list imports with numpy alone (the
    device-side measurement script reads it without warpgraph)."""

    dtype: str
    shape: list
    init: Any


@dataclass
class DescSpec:
    """A host tensor descriptor over the whole of ``buf`` with TMA block ``block``."""

    buf: BufSpec
    block: list


def _b(dtype, shape, init=None):
    return BufSpec(dtype, [int(x) for x in shape], init if init is not None else {"normal": 1.0})


def _desc(buf, block):
    return DescSpec(buf, list(block))


def _to_capture(v, made: dict):
    """BufSpec / DescSpec -> warpgraph Buf / TensorDescriptor (one Buf per BufSpec object)."""
    from warpgraph.workloads.triton_capture import Buf, tensor_descriptor

    if isinstance(v, DescSpec):
        return tensor_descriptor(_to_capture(v.buf, made), v.block)
    if isinstance(v, BufSpec):
        if id(v) not in made:
            made[id(v)] = Buf(v.dtype, v.shape, v.init)
        return made[id(v)]
    return v


def _act(x, act):
    if act == "relu":
        return np.maximum(x, 0)
    if act == "leaky_relu":
        return np.where(x >= 0, x, 0.01 * x)
    if act == "silu":
        return x / (1 + np.exp(-x))
    return x


# ------------------------------------------------------------------------------------------------ cases
def axpby(dtype, n, act):
    def mk(scale):
        nn = n if scale == "small" else n * 4096
        blk = 1024
        return Case("axpby", (-(-nn // blk),), dict(
            x_ptr=_b(dtype, [nn]), y_ptr=_b(dtype, [nn]), out_ptr=_b(dtype, [nn], "poison"), n=nn,
            alpha=1.5, beta=-0.5, ACT=act, BLOCK=blk),
            lambda i: {"out": _act(1.5 * i["x"] - 0.5 * i["y"], act)},
            {"out": {"max_rel_err": 1e-2 if dtype != "float32" else 1e-5}}, style="elementwise")
    return mk


def softmax(rows, cols):
    def mk(scale):
        r, c = (rows, cols) if scale == "small" else (rows * 256, cols)
        blk = 1 << (c - 1).bit_length()

        def ref(i):
            x = i["in"]
            e = np.exp(x - x.max(1, keepdims=True))
            return {"out": e / e.sum(1, keepdims=True)}
        return Case("softmax_rows", (min(r, 8 if scale == "small" else 264),), dict(
            out_ptr=_b("float32", [r, c], "poison"), in_ptr=_b("float32", [r, c]), n_rows=r, n_cols=c,
            row_stride=c, BLOCK=blk, num_stages=2), ref, {"out": {"max_rel_err": 1e-5}}, style="row")
    return mk


def layernorm_fwd(rows, cols):
    def mk(scale):
        r, c = (rows, cols) if scale == "small" else (rows * 256, cols * 4)

        def ref(i):
            x = i["x"]
            mu = x.mean(1)
            rs = 1 / np.sqrt(x.var(1) + 1e-5)
            return {"y": (x - mu[:, None]) * rs[:, None] * i["w"] + i["b"], "mean": mu, "rstd": rs}
        return Case("layernorm_fwd", (r,), dict(
            x_ptr=_b("float16", [r, c]), w_ptr=_b("float16", [c]), b_ptr=_b("float16", [c], {"normal": 0.1}),
            y_ptr=_b("float16", [r, c], "poison"), mean_ptr=_b("float32", [r], "poison"),
            rstd_ptr=_b("float32", [r], "poison"), n_cols=c, eps=1e-5, BLOCK=256), ref,
            {"y": {"max_rel_err": 5e-3}, "mean": {"max_abs_err": 1e-4}, "rstd": {"max_rel_err": 1e-4}},
            style="row")
    return mk


def layernorm_bwd(rows, cols, groups_small):
    def mk(scale):
        r, c = (rows, cols) if scale == "small" else (rows * 128, cols * 4)
        groups = groups_small if scale == "small" else 64       # 64 locks for 4096 rows at full size
        blk = 1 << (c - 1).bit_length()

        def ref(i):
            x, dy, w = i["x"], i["dy"], i["w"]
            mu = x.mean(1, keepdims=True)
            rs = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
            xh = (x - mu) * rs
            wdy = w * dy
            dx = (wdy - (xh * (xh * wdy).mean(1, keepdims=True) + wdy.mean(1, keepdims=True))) * rs
            g = np.arange(r) % groups
            dw = np.stack([(dy * xh)[g == j].sum(0) for j in range(groups)])
            db = np.stack([dy[g == j].sum(0) for j in range(groups)])
            return {"dx": dx, "dw": dw, "db": db}

        def pre(i):  # mean / rstd inputs as the forward pass leaves them
            x = i["x"]
            return {"mean": x.mean(1), "rstd": 1 / np.sqrt(x.var(1) + 1e-5)}
        c_ = Case("layernorm_bwd_dx", (r,), dict(
            x_ptr=_b("float16", [r, c]), dy_ptr=_b("float16", [r, c]), w_ptr=_b("float16", [c]),
            mean_ptr=_b("float32", [r], "zeros"), rstd_ptr=_b("float32", [r], "zeros"),
            dx_ptr=_b("float16", [r, c], "poison"), dw_ptr=_b("float32", [groups, c], "zeros"),
            db_ptr=_b("float32", [groups, c], "zeros"), lock_ptr=_b("int32", [groups], "zeros"),
            n_rows=r, n_cols=c, GROUPS=groups, BLOCK=blk), ref,
            {"dx": {"max_rel_err": 5e-3}, "dw": {"max_rel_err": 1e-4}, "db": {"max_rel_err": 1e-4}}, style="row")
        c_.derived = pre
        return c_
    return mk


def rmsnorm_bwd(rows, cols):
    def mk(scale):
        r, c = (rows, cols) if scale == "small" else (rows * 256, cols * 8)

        def ref(i):
            x, w, dy = i["x"], i["w"], i["dy"]
            rs = 1 / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6)
            xh = x * rs
            wdy = w * dy
            dx = (wdy - xh * (xh * wdy).mean(1, keepdims=True)) * rs
            return {"dx": dx, "dw": (dy * xh).sum(0)}
        return Case("rmsnorm_bwd", (-(-r // 4),), dict(
            x_ptr=_b("bfloat16", [r, c]), w_ptr=_b("bfloat16", [c]), dy_ptr=_b("bfloat16", [r, c]),
            dx_ptr=_b("bfloat16", [r, c], "poison"), dw_ptr=_b("float32", [c], "zeros"), n_rows=r, n_cols=c,
            eps=1e-6, ROWS=4, BLOCK=c), ref, {"dx": {"max_rel_err": 1e-2}, "dw": {"max_rel_err": 1e-4}},
            style="row")
    return mk


def col_sum(rows, cols):
    def mk(scale):
        r, c = (rows, cols) if scale == "small" else (rows * 64, cols * 16)
        return Case("col_sum_atomic", (-(-r // 32), -(-c // 64)), dict(
            x_ptr=_b("float32", [r, c]), out_ptr=_b("float32", [c], "zeros"), n_rows=r, n_cols=c, ROWS_PER=32,
            BLOCK_C=64), lambda i: {"out": i["x"].sum(0)}, {"out": {"max_rel_err": 1e-5}}, style="reduction")
    return mk


def gemm_epi(dtype, M, N, K, bm, bn, bk, act, warps, stages):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 16, N * 16, K * 16)
        tiles = -(-m // bm) * -(-n // bn)
        return Case("gemm_epilogue", (tiles,), dict(
            a_ptr=_b(dtype, [m, k], {"normal": 0.1}), b_ptr=_b(dtype, [k, n], {"normal": 0.1}),
            c_ptr=_b(dtype, [m, n], "poison"), bias_ptr=_b(dtype, [n], {"normal": 0.1}), M=m, N=n, K=k, lda=k,
            ldb=n, ldc=n, BM=bm, BN=bn, BK=bk, ACT=act),
            lambda i: {"c": _act(i["a"] @ i["b"] + i["bias"], act)}, {"c": {"max_rel_err": 1e-2}},
            num_warps=warps, num_stages=stages, style="gemm")
    return mk


def gemm_splitk(M, N, K, split):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 8, N * 8, K * 16)
        return Case("gemm_splitk", (-(-m // 64) * -(-n // 64), split), dict(
            a_ptr=_b("float16", [m, k], {"normal": 0.1}), b_ptr=_b("float16", [k, n], {"normal": 0.1}),
            c_ptr=_b("float32", [m, n], "zeros"), M=m, N=n, K=k, BM=64, BN=64, BK=64, SPLIT=split),
            lambda i: {"c": i["a"] @ i["b"]}, {"c": {"max_rel_err": 1e-3}}, num_warps=4, style="gemm")
    return mk


def gemm_persistent(M, N, K, bn, subtile, progs):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 16, N * 16, K * 32)
        a, b, c = _b("float16", [m, k], {"normal": 0.1}), _b("float16", [n, k], {"normal": 0.1}), \
            _b("float16", [m, n], "poison")
        return Case("gemm_persistent_tma", (progs if scale == "small" else 132,), dict(
            a_desc=_desc(a, [128, 64]), b_desc=_desc(b, [bn, 64]), c_desc=_desc(c, [128, bn // 2 if subtile else bn]),
            M=m, N=n, K=k, BM=128, BN=bn, BK=64, GROUP=8, SUBTILE=subtile),
            lambda i: {"c": i["a"] @ i["b"].T}, {"c": {"max_rel_err": 1e-2}}, num_warps=8, num_stages=3,
            style="persistent gemm (TMA)")
    return mk


def gemm_fp8(M, N, K):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 32, N * 32, K * 32)
        a, b = _b("float8_e4m3fn", [m, k]), _b("float8_e4m3fn", [n, k])
        return Case("gemm_fp8", (-(-m // 128), -(-n // 128)), dict(
            a_desc=_desc(a, [128, 64]), b_desc=_desc(b, [128, 64]), c_ptr=_b("bfloat16", [m, n], "poison"),
            M=m, N=n, K=k, scale=0.25, BM=128, BN=128, BK=64),
            lambda i: {"c": 0.25 * i["a"] @ i["b"].T}, {"c": {"max_rel_err": 1e-2}}, num_warps=8, num_stages=3,
            style="gemm fp8 (TMA)")
    return mk


def gemm_device_desc(M, N, K):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 16, N * 16, K * 16)
        return Case("gemm_device_desc", (-(-m // 128), -(-n // 128)), dict(
            a_ptr=_b("float16", [m, k], {"normal": 0.1}), b_ptr=_b("float16", [n, k], {"normal": 0.1}),
            c_ptr=_b("float16", [m, n], "poison"), M=m, N=n, K=k, BM=128, BN=128, BK=64),
            lambda i: {"c": i["a"] @ i["b"].T}, {"c": {"max_rel_err": 1e-2}}, num_warps=8, num_stages=3,
            style="device-side descriptors")
    return mk


def gemm_ws(M, N, K):
    def mk(scale):
        m, n, k = (M, N, K) if scale == "small" else (M * 16, N * 16, K * 16)
        a, b, c = _b("float16", [m, k], {"normal": 0.1}), _b("float16", [n, k], {"normal": 0.1}), \
            _b("float16", [m, n], "poison")
        return Case("gemm_warp_spec", (-(-m // 128), -(-n // 128)), dict(
            a_ptr=a, b_ptr=b, c_ptr=c, M=m, N=n, K=k, BM=128, BN=128, BK=64, STAGES=3),
            lambda i: {"c": i["a"] @ i["b"].T}, {"c": {"max_rel_err": 1e-2}}, num_warps=4, num_stages=3,
            style="warp-specialized")
    return mk


def grouped(shapes):
    def mk(scale):
        sh = shapes if scale == "small" else [(m * 8, n * 8, k * 8) for m, n, k in shapes]
        g = len(sh)
        args = {}
        dims = []
        for j, (m, n, k) in enumerate(sh):
            args[f"a{j}"] = _b("float16", [m, k], {"normal": 0.1})
            args[f"b{j}"] = _b("float16", [k, n], {"normal": 0.1})
            args[f"c{j}"] = _b("float16", [m, n], "poison")
            dims += [m, n, k]
        tabs = {t: _b("uint64", [g], {"addresses": [f"{t}{j}" for j in range(g)]}) for t in "abc"}

        def ref(i):
            return {f"c{j}": i[f"a{j}"] @ i[f"b{j}"] for j in range(g)}
        c = Case("grouped_gemm", (4 if scale == "small" else 132,), dict(
            a_tab=tabs["a"], b_tab=tabs["b"], c_tab=tabs["c"], dims_ptr=_b("int32", [3 * g], {"values": dims}),
            n_groups=g, BM=64, BN=64, BK=32), ref, {f"c{j}": {"max_rel_err": 1e-2} for j in range(g)},
            num_warps=4, style="grouped gemm (pointer tables)")
        c.extra_buffers = {k: v for k, v in args.items()}
        return c
    return mk


def attention(bh, seq, d, causal, dtype="float16"):
    def mk(scale):
        s = seq if scale == "small" else seq * 16

        def ref(i):
            q, k, v = i["q"], i["k"], i["v"]
            sc = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
            if causal:
                sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
            p = np.exp(sc - sc.max(-1, keepdims=True))
            return {"o": (p / p.sum(-1, keepdims=True)) @ v}
        import triton.language as tl
        return Case("attn_rowblock", (-(-s // 64), bh), dict(
            q_ptr=_b(dtype, [bh, s, d]), k_ptr=_b(dtype, [bh, s, d]), v_ptr=_b(dtype, [bh, s, d]),
            o_ptr=_b(dtype, [bh, s, d], "poison"), seq=s, scale=1 / np.sqrt(d), D=d, BM=64, BN=32, CAUSAL=causal,
            DTYPE=tl.bfloat16 if dtype == "bfloat16" else tl.float16), ref, {"o": {"max_rel_err": 1e-2}},
            num_warps=4, num_stages=2, style="attention")
    return mk


CASES: dict[str, Callable[[str], Case]] = {
    "axpby_f32_n3001": axpby("float32", 3001, "none"),
    "axpby_bf16_n2500_leaky": axpby("bfloat16", 2500, "leaky_relu"),
    "axpby_f16_n4096_silu": axpby("float16", 4096, "silu"),
    "softmax_r64_c300": softmax(64, 300),
    "layernorm_fwd_r16_c700": layernorm_fwd(16, 700),
    "layernorm_bwd_r32_c200_g4": layernorm_bwd(32, 200, 4),
    "rmsnorm_bwd_r30_c256": rmsnorm_bwd(30, 256),
    "colsum_atomic_r100_c200": col_sum(100, 200),
    "gemm_f16_M200_N136_K100_leaky": gemm_epi("float16", 200, 136, 100, 64, 64, 32, "leaky_relu", 4, 3),
    "gemm_bf16_M128_N192_K128_silu": gemm_epi("bfloat16", 128, 192, 128, 128, 64, 64, "silu", 8, 4),
    "gemm_splitk_M128_N128_K512_s4": gemm_splitk(128, 128, 512, 4),
    "gemm_persistent_tma_M256_N256_K128": gemm_persistent(256, 256, 128, 128, False, 2),
    "gemm_persistent_tma_subtile_M256_N256_K128": gemm_persistent(256, 256, 128, 128, True, 3),
    "gemm_fp8_M128_N256_K128": gemm_fp8(128, 256, 128),
    "gemm_device_desc_M128_N256_K128": gemm_device_desc(128, 256, 128),
    "gemm_warp_spec_M256_N256_K192": gemm_ws(256, 256, 192),
    "grouped_gemm_3": grouped([(64, 64, 64), (128, 64, 32), (64, 128, 96)]),
    "attn_bh2_s100_d64": attention(2, 100, 64, False),
    "attn_bh2_s128_d64_causal": attention(2, 128, 64, True),
    "attn_bf16_bh2_s96_d128": attention(2, 96, 128, False, "bfloat16"),
    "softmax_r32_c3000": softmax(32, 3000),
    "gemm_f16_M256_N128_K256_64x128_s2_relu": gemm_epi("float16", 256, 128, 256, 64, 128, 64, "relu", 4, 2),
    "axpby_f32_n777_relu": axpby("float32", 777, "relu"),
    "gemm_bf16_M96_N80_K48_64x64_s3": gemm_epi("bfloat16", 96, 80, 48, 64, 64, 32, "none", 4, 3),
    "gemm_persistent_tma_bn64_M256_N192_K64": gemm_persistent(256, 192, 64, 64, False, 4),
    "attn_bf16_bh2_s80_d64_causal": attention(2, 80, 64, True, "bfloat16"),
    "softmax_r128_c1000": softmax(128, 1000),
    "gemm_splitk_M64_N192_K256_s2": gemm_splitk(64, 192, 256, 2),
    "grouped_gemm_odd_4": grouped([(50, 70, 40), (64, 64, 64), (17, 130, 24), (100, 33, 72)]),
    "colsum_atomic_r33_c500": col_sum(33, 500),
}


def capture_case(name: str, scale: str = "small", out_dir: str | Path | None = None, goldens: bool | None = None):
    """Capture case ``name`` and (when ``out_dir``) write the record and, with ``goldens`` (default: at the small
    scale), its golden ``expected_*.npy`` and ``check.expected``."""
    import json

    from warpgraph.workloads.memory import DeviceMemory
    from warpgraph.workloads.references import to_float64
    from warpgraph.workloads.triton_capture import capture

    c = CASES[name](scale)
    kern = getattr(_k(), c.kernel)
    pnames = [p.name for p in kern.params]
    made: dict = {}
    kw = {k: _to_capture(v, made) for k, v in c.args.items() if k in pnames}
    extra = {k: _to_capture(v, made) for k, v in getattr(c, "extra_buffers", {}).items()}
    rec = capture(kern, c.grid, kwargs=kw, num_warps=c.num_warps, num_stages=c.num_stages,
                  name=name if scale == "small" else name + "_full", extra_buffers=extra)
    goldens = (scale == "small") if goldens is None else goldens
    derived = getattr(c, "derived", None)
    d = rec.to_json_dict()
    d["source"]["gallery_style"] = c.style
    d["source"]["gallery_case"] = {"name": name, "scale": scale}
    outs = {}
    if goldens or derived is not None:
        # golden outputs from the numpy reference over the seed-0 inputs
        mem = DeviceMemory.from_record(rec, 0)
        inputs = {n: to_float64(mem.view(n), rec.buffers[n].dtype) for n in rec.buffers}
        if derived is not None:  # inputs a previous kernel would have produced (layer-norm mean / rstd)
            for n, v in derived(inputs).items():
                inputs[n] = v
                d["buffers"][n]["init"] = {"values": [float(x) for x in np.asarray(v, np.float32)]}
        if goldens:
            outs = c.ref(inputs)
            d["check"] = {"expected": {o: {"file": f"expected_{o}.npy", **c.tol[o]} for o in outs}}
    if out_dir is None:
        return d, outs
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for o, v in outs.items():
        np.save(out / f"expected_{o}.npy", np.asarray(v, dtype=np.float32))
    (out / "kernel.ptx").write_text(rec.ptx_text())
    (out / "launch.json").write_text(json.dumps(d, indent=1) + "\n")
    from warpgraph.workloads.record import load_record

    return load_record(out)


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="case names (default: all)")
    ap.add_argument("--scale", default="small", choices=["small", "full"])
    ap.add_argument("--out", default=None, help="folder of record folders (default: gallery/records at the small "
                    "scale, records/h200_gallery at full scale)")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else (RECORDS if a.scale == "small" else HERE.parent / "records" / "h200_gallery")
    for n in a.names or list(CASES):
        r = capture_case(n, a.scale, out / (n if a.scale == "small" else n + "_full"))
        print(f"{n}: {r.entry} grid {r.grid} block {r.block} shared {r.shared_bytes}")


if __name__ == "__main__":
    main()
