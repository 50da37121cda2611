"""Numeric helpers for the functional executor: PTX types -> numpy, float16/bfloat16 packing, rounding."""
from __future__ import annotations

import numpy as np

NP_TYPE = {
    "b8": np.uint8, "u8": np.uint8, "s8": np.int8,
    "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16, "bf16": np.uint16,
    "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32, "f16x2": np.uint32,
    "bf16x2": np.uint32, "tf32": np.float32,
    "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
    "pred": np.bool_, "e4m3x2": np.uint16, "e5m2x2": np.uint16,
}
TYPE_NAMES = set(NP_TYPE)
SIZE = {k: np.dtype(v).itemsize for k, v in NP_TYPE.items()}
SIZE["pred"] = 1

STORAGE = {1: np.uint16, 2: np.uint16, 4: np.uint32, 8: np.uint64}   # register storage by declared size


def storage_dtype(decl_type: str):
    if decl_type == "pred":
        return np.bool_
    return STORAGE[max(2, SIZE.get(decl_type, 4))] if decl_type not in ("b8", "u8", "s8") else np.uint16


def is_float(t: str) -> bool:
    return t in ("f16", "bf16", "f32", "f64", "tf32", "f16x2", "bf16x2")


def is_signed(t: str) -> bool:
    return t[0] == "s"


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray, mode: str = "rn") -> np.ndarray:
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    if mode == "rz":
        r = u >> 16
    else:
        r = (u + (np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1)))) >> 16
    nan = np.isnan(x)
    if nan.any():
        r = np.where(nan, np.uint32(0x7FC0), r)
    return r.astype(np.uint16)


def f16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return bits.view(np.float16).astype(np.float32)


def f32_to_f16_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


def round_float(x: np.ndarray, mode: str):
    """Float -> integral-valued float with a PTX rounding mode (rni/rzi/rmi/rpi)."""
    if mode in ("rni", "rn"):
        return np.rint(x)
    if mode in ("rzi", "rz"):
        return np.trunc(x)
    if mode in ("rmi", "rm"):
        return np.floor(x)
    if mode in ("rpi", "rp"):
        return np.ceil(x)
    return x


_INT_RANGE = {"s8": (-128, 127), "u8": (0, 255), "s16": (-32768, 32767), "u16": (0, 65535),
              "s32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "s64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1),
              "b8": (0, 255), "b16": (0, 65535), "b32": (0, 2**32 - 1), "b64": (0, 2**64 - 1)}


def float_to_int(x: np.ndarray, dt: str, mode: str) -> np.ndarray:
    """cvt.{rni,rzi,..}.intType.floatType: round, saturate to the integer range, NaN -> 0."""
    y = round_float(np.asarray(x, dtype=np.float64), mode or "rzi")
    lo, hi = _INT_RANGE[dt]
    y = np.where(np.isnan(y), 0.0, y)
    y = np.clip(y, float(lo), float(hi))
    if dt in ("u64", "b64"):
        big = y >= 2.0**63
        out = np.where(big, y - 2.0**63, y).astype(np.int64).astype(np.uint64)
        return np.where(big, out + np.uint64(2**63), out)
    return y.astype(np.int64).astype(NP_TYPE[dt])
