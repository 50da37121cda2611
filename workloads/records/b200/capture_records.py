"""Re-capture the Blackwell launch records offline (no GPU): ``python workloads/records/b200/capture_records.py``.

Triton 3.6.0 compiles ``kernels.py`` for ``sm_100a`` (B200: tcgen05 + TMEM, records under ``b200/``) and
``sm_120`` (RTX 5090: mma.sync, records under ``rtx5090/``) through ``warpgraph.workloads.triton_capture``. Each
record's ``check`` names a numpy reference of ``warpgraph.workloads.references`` (``gemm_nt``, ``gemm``,
``attention``). ``_s`` records are small (functional tests run them in seconds); the others have realistic sizes
for timing. No Blackwell GPU was available: the records have no ``measured.json``."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _cases():
    from warpgraph.workloads.triton_capture import Buf, tensor_descriptor

    import kernels as K

    def gemm_tma(M, N, K_, bn=128, bm=128, dtype="float16"):
        # 128-byte K rows per stage whatever the element type (tf32: 32, f16: 64, fp8: 128 elements)
        bk = {"float32": 32, "float16": 64, "float8_e4m3fn": 128}[dtype]
        init = {"normal": 0.1} if dtype != "float8_e4m3fn" else {"normal": 0.5}
        a, b = Buf(dtype, [M, K_], init), Buf(dtype, [N, K_], init)
        c = Buf("float16", [M, N], "poison")
        return dict(kernel=K.gemm_tma, grid=(-(-M // bm) * -(-N // bn),), num_warps=4, num_stages=3,
                    args=[tensor_descriptor(a, [bm, bk]), tensor_descriptor(b, [bn, bk]),
                          tensor_descriptor(c, [bm, bn]), M, N, K_],
                    cx=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8),
                    check={"output": "c", "reference": "gemm_nt", "inputs": ["a", "b"],
                           "max_rel_err": 0.01 if dtype == "float16" else 0.02})

    def gemm_ptr(M, N, K_):
        a, b = Buf("float16", [M, K_], {"normal": 0.1}), Buf("float16", [K_, N], {"normal": 0.1})
        c = Buf("float16", [M, N], "poison")
        return dict(kernel=K.gemm_ptr, grid=((M // 128) * (N // 128),), num_warps=8, num_stages=3,
                    args=[a, b, c, M, N, K_], cx=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8),
                    check={"output": "c", "reference": "gemm", "inputs": ["a", "b"], "max_rel_err": 0.01})

    def attn(tma, BH, S, D, causal=False, bm=128):
        q, k, v = (Buf("float16", [BH, S, D], {"normal": 1.0}) for _ in range(3))
        o = Buf("float16", [BH, S, D], "poison")
        scale = D ** -0.5
        if tma:
            args = [tensor_descriptor(x, [1, bm if x is q or x is o else 64, D]) for x in (q, k, v, o)]
            kern, names = K.attn_fwd_tma, {"desc_q": "q", "desc_k": "k", "desc_v": "v", "desc_o": "o"}
        else:
            args, kern, names = [q, k, v, o], K.attn_fwd, {"Q": "q", "K": "k", "V": "v", "O": "o"}
        return dict(kernel=kern, grid=(S // bm, BH), num_warps=4 if tma else 8, num_stages=2,
                    args=args + [scale, S], names=names,
                    cx=dict(HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=64, **({"CAUSAL": True} if causal else {})),
                    check={"output": "o", "reference": "attention", "inputs": ["q", "k", "v"],
                           "args": {"scale": scale, "causal": causal}, "max_rel_err": 0.01})

    return {
        ("b200", "sm_100a"): {
            "gemm_tma_s_M256_N256_K256": gemm_tma(256, 256, 256),
            "gemm_tma_M2048_N2048_K2048": gemm_tma(2048, 2048, 2048),
            "attn_tma_s_BH2_S256_D64": attn(True, 2, 256, 64),
            # fp32 inputs (tcgen05.mma .kind::tf32) and fp8 e4m3 inputs (.kind::f8f6f4)
            "gemm_tma_s_tf32_M256_N256_K256": gemm_tma(256, 256, 256, dtype="float32"),
            "gemm_tma_s_fp8_M256_N256_K256": gemm_tma(256, 256, 256, dtype="float8_e4m3fn"),
            # M = 64 MMAs (TMEM layout F, tcgen05.ld/st .16x32bx2)
            "gemm_tma_s_bm64_M256_N256_K256": gemm_tma(256, 256, 256, bn=64, bm=64),
            "attn_tma_s_bm64_BH2_S256_D64_causal": attn(True, 2, 256, 64, causal=True, bm=64),
            "attn_tma_BH16_S1024_D64": attn(True, 16, 1024, 64),
        },
        ("rtx5090", "sm_120"): {
            "gemm_s_M256_N256_K256": gemm_ptr(256, 256, 256),
            "gemm_M2048_N2048_K2048": gemm_ptr(2048, 2048, 2048),
            "attn_s_BH2_S256_D64": attn(False, 2, 256, 64),
            "attn_BH16_S1024_D64": attn(False, 16, 1024, 64),
            # the shapes flashgpu-sim measured on an RTX 5090 (TMA + mma.sync Triton kernels; docs/accuracy.md)
            "gemm_tma_M2560_N64_K2560": gemm_tma(2560, 64, 2560, bn=64),
            "gemm_tma_M4096_N128_K4096": gemm_tma(4096, 128, 4096),
            "gemm_tma_M512_N6000_K1536": gemm_tma(512, 6000, 1536),
            "attn_tma_s_BH2_S256_D64_causal": attn(True, 2, 256, 64, causal=True),
            "attn_tma_B32_H32_S512_D64_causal": attn(True, 32 * 32, 512, 64, causal=True),
        },
    }


def main(names=None):
    from warpgraph.workloads.triton_capture import capture

    for (folder, target), cases in _cases().items():
        for name, c in cases.items():
            if names and name not in names:
                continue
            rec = capture(c["kernel"], c["grid"], c["args"], target=target, num_warps=c["num_warps"],
                          num_stages=c["num_stages"], out_dir=HERE.parent / folder / name, name=name,
                          check=c["check"], buffer_names=c.get("names"), **c["cx"])
            print(f"{folder}/{name}: {rec.entry} grid {rec.grid} block {rec.block} shared {rec.shared_bytes}")


if __name__ == "__main__":
    main(sys.argv[1:] or None)
