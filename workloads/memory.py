"""Simulated device memory for one launch: buffers, kernel parameters and tensormaps.

All buffers of a record live in one flat ``np.uint8`` array; buffer ``i`` starts at a 256-byte aligned
device address (first at :data:`GLOBAL_BASE` = 0x7f00_0000_0000) with a guard gap of at least
:data:`GUARD_BYTES` after each buffer, so a stray access lands in no buffer and is reported.

Kernel parameters are laid out as the CUDA driver does (each param at its alignment, in order); the
param buffer is addressed at :data:`PARAM_BASE` (what ``mov.b64 %rd, kernel_param_0`` yields). A
tensormap param's 128 bytes start with ``TMAP_MAGIC`` (u32) + the tensormap index (u32), followed by
informational fields; :meth:`DeviceMemory.tensormap_from_param` resolves a blob, an index or a param-space
address to its :class:`TensorMap`.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from warpgraph.core.errors import RecordError
from warpgraph.workloads.record import DTYPES, AddressesInit, LaunchRecord, UniformInit, ValuesInit, parse_address
from warpgraph.workloads.references import bf16_bits_to_f32, f32_to_bf16_bits

GLOBAL_BASE = 0x7F00_0000_0000
ALIGN = 256
GUARD_BYTES = 4096
PARAM_BASE = 0x7E00_0000_0000  # address of the kernel parameter buffer (param space, generic view)
TMAP_MAGIC = 0x504D_5447  # b"GTMP" little-endian: "GTMP" -> warpgraph tensormap
_POISON_INT_BYTE = 0xFF

__all__ = ["DeviceMemory", "TensorMap", "GLOBAL_BASE", "PARAM_BASE", "TMAP_MAGIC", "bf16_bits_to_f32",
           "f32_to_bf16_bits"]


@dataclass(frozen=True)
class TensorMap:
    """A decoded tiled TMA descriptor. All per-dimension tuples are innermost-first (as PTX coordinates)."""

    index: int             # position in DeviceMemory.tensormaps
    param_index: int       # which record param it came from
    buffer: str
    dtype: str
    elem_bytes: int
    dims: tuple[int, ...]          # elements per dimension, innermost-first
    strides_bytes: tuple[int, ...]  # byte stride of each dimension, innermost-first (strides_bytes[0] = elem_bytes)
    box: tuple[int, ...]           # box size per dimension, innermost-first
    swizzle_bytes: int             # 0, 32, 64, 128
    oob_fill: str                  # "zero" | "nan"
    base_addr: int

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.elem_bytes

    def inbounds_bytes(self, coords) -> int:
        """Bytes of the box at ``coords`` (innermost-first, may be negative) that lie inside the tensor."""
        n = self.elem_bytes
        for c, b, d in zip(coords, self.box, self.dims):
            lo, hi = max(int(c), 0), min(int(c) + b, d)
            n *= max(hi - lo, 0)
        return n


#: warpgraph's byte layout of a tiled tensor map written field by field on the device (``tensormap.replace``;
#: NVIDIA's CUtensorMap layout is opaque): field -> (byte offset, element numpy type, count). Values are as
#: PTX gives them: ``rank`` holds rank - 1, ``elemtype`` a CUtensorMapDataType, ``swizzle_mode`` 0..3
#: (none / 32 / 64 / 128 B), ``fill_mode`` 0 zero / 1 NaN, ``global_dim`` / ``box_dim`` / ``element_stride``
#: per dimension innermost-first, ``global_stride[i]`` the byte stride of dimension i + 1.
DEVICE_TMAP_LAYOUT = {
    "global_address": (0, np.uint64, 1), "rank": (8, np.uint8, 1), "elemtype": (9, np.uint8, 1),
    "interleave_layout": (10, np.uint8, 1), "swizzle_mode": (11, np.uint8, 1), "fill_mode": (12, np.uint8, 1),
    "global_dim": (16, np.uint32, 5), "global_stride": (40, np.uint64, 4), "box_dim": (72, np.uint16, 5),
    "element_stride": (82, np.uint8, 5),
}
#: CUtensorMapDataType -> (dtype name, element bytes)
TMAP_ELEMTYPES = {0: ("uint8", 1), 1: ("uint16", 2), 2: ("uint32", 4), 3: ("int32", 4), 4: ("uint64", 8),
                  5: ("int64", 8), 6: ("float16", 2), 7: ("float32", 4), 8: ("float64", 8), 9: ("bfloat16", 2),
                  10: ("float32", 4), 11: ("float32", 4), 12: ("float32", 4)}


def tensormap_field_slot(field: str, ordinal: int = 0) -> tuple[int, np.dtype]:
    """(byte offset, numpy type) of ``field`` (dimension ``ordinal``) in :data:`DEVICE_TMAP_LAYOUT`."""
    off, t, n = DEVICE_TMAP_LAYOUT[field]
    if not 0 <= ordinal < n:
        raise ValueError(f"tensormap field {field} has {n} entr{'y' if n == 1 else 'ies'}, ordinal {ordinal}")
    return off + ordinal * np.dtype(t).itemsize, np.dtype(t)


def decode_tensormap_fields(blob: bytes) -> dict:
    """A device-built descriptor's 128 bytes -> {field: value or list}; ``rank`` is the real rank."""
    out = {}
    for k, (off, t, n) in DEVICE_TMAP_LAYOUT.items():
        v = np.frombuffer(blob, dtype=t, count=n, offset=off)
        out[k] = int(v[0]) if n == 1 else [int(x) for x in v]
    out["rank"] += 1
    return out


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


class DeviceMemory:
    """Flat device memory of one launch. ``data`` is the uint8 backing array; ``starts``/``ends`` are the
    buffers' device address ranges (sorted), ``names`` their names."""

    def __init__(self, record: LaunchRecord):
        self.record = record
        self.names: list[str] = list(record.buffers)
        starts, ends, offs = [], [], []
        off = 0
        for n in self.names:
            b = record.buffers[n]
            if b.dtype not in DTYPES:
                raise record.error(f"unknown dtype {b.dtype!r}", f"buffers.{n}.dtype")
            off = _round_up(off, ALIGN)
            offs.append(off)
            starts.append(GLOBAL_BASE + off)
            ends.append(GLOBAL_BASE + off + b.nbytes)
            off += b.nbytes + GUARD_BYTES
        self.size = _round_up(off, ALIGN)
        try:
            self.data = np.zeros(self.size, dtype=np.uint8)
        except MemoryError:
            raise record.error(f"cannot allocate {self.size:,} bytes of device memory for the buffers", "buffers",
                               "smaller buffers (the host running the simulator is out of memory)") from None
        self.starts = np.array(starts, dtype=np.int64)
        self.ends = np.array(ends, dtype=np.int64)
        self._offset = dict(zip(self.names, offs))
        self.tensormaps: list[TensorMap] = []
        self._tmap_of_param: dict[int, int] = {}
        self._device_tmaps: dict[bytes, TensorMap] = {}
        self._build_tensormaps()
        self.param_offsets, self.param_sizes, self.param_size = self._param_layout()
        self._param_bytes: bytes | None = None

    # ------------------------------------------------------------------------------ construction
    @classmethod
    def from_record(cls, record: LaunchRecord, seed: int = 0, *, init_values: bool = True) -> "DeviceMemory":
        """Allocate every buffer and initialise it per its ``init`` (``init_values=False``: all zeros, fast,
        for runs whose values do not matter)."""
        mem = cls(record)
        if init_values:
            for i, n in enumerate(mem.names):
                mem._init_buffer(n, seed)
        return mem

    def _init_buffer(self, name: str, seed: int):
        b = self.record.buffers[name]
        info = DTYPES[b.dtype]
        raw = self.raw(name)
        if b.init == "zeros" or b.numel == 0:
            return
        if b.init == "poison":
            if b.dtype == "float16":
                self.view(name)[...] = np.float16(np.nan)
            elif b.dtype in ("float32", "float64"):
                self.view(name)[...] = np.nan
            elif b.dtype == "bfloat16":
                self.view(name)[...] = np.uint16(0x7FC0)
            else:  # ints, fp8 (0xFF is NaN in e4m3fn and e5m2)
                raw[...] = _POISON_INT_BYTE
            return
        v = self.view(name).reshape(-1)
        init = b.init
        if isinstance(init, AddressesInit):
            addrs = []
            for e in init.addresses:
                n, off = parse_address(e)
                addrs.append(self.addr_of(n) + off)
            v[...] = np.asarray(addrs, dtype=np.uint64).astype(info.storage)
            return
        if isinstance(init, ValuesInit):
            if not info.is_float:
                v[...] = np.asarray([int(x) for x in init.values], dtype=np.int64).astype(info.storage)
                return
            x = np.asarray(init.values, dtype=np.float64).astype(np.float32)
            if b.dtype == "float64":
                v[...] = np.asarray(init.values, dtype=np.float64)
                return
            self._store_floats(v, b.dtype, x)
            return
        # one independent stream per (seed, buffer name): adding a buffer does not change the others
        rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))
        if isinstance(init, UniformInit):
            lo, hi = init.uniform
            if not info.is_float:
                v[...] = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, b.numel).astype(info.storage)
                return
            x = rng.uniform(lo, hi, b.numel).astype(np.float32)
            self._store_floats(v, b.dtype, x)
            return
        sigma = float(init.normal)
        x = rng.standard_normal(b.numel, dtype=np.float32)
        if sigma != 1.0:
            x *= np.float32(sigma)
        if info.is_float:
            self._store_floats(v, b.dtype, x)
        else:
            v[...] = np.rint(x).astype(np.int64).astype(info.storage)

    @staticmethod
    def _store_floats(v: np.ndarray, dtype: str, x: np.ndarray):
        """float32 values -> the buffer's storage (bf16 rounded to nearest even, fp8 to the nearest code)."""
        if dtype == "bfloat16":
            v[...] = f32_to_bf16_bits(x)
        elif dtype.startswith("float8"):
            from warpgraph.workloads.references import _FP8

            tab = _FP8[dtype]
            finite = np.where(np.isfinite(tab), tab, np.inf)
            order = np.argsort(finite)
            srt = finite[order]
            idx = np.clip(np.searchsorted(srt, x), 1, len(srt) - 1)
            pick = np.where(np.abs(srt[idx - 1] - x) <= np.abs(srt[idx] - x), idx - 1, idx)
            v[...] = order[pick].astype(np.uint8)
        else:
            v[...] = x

    def _build_tensormaps(self):
        for i, p in enumerate(self.record.params):
            if p.kind != "tensormap":
                continue
            t = p.value
            b = self.record.buffers[t.buffer]
            es = DTYPES[b.dtype].itemsize
            dims = tuple(int(x) for x in reversed(b.shape))
            strides = [es]
            for d in dims[:-1]:
                strides.append(strides[-1] * d)
            tm = TensorMap(index=len(self.tensormaps), param_index=i, buffer=t.buffer, dtype=b.dtype,
                           elem_bytes=es, dims=dims, strides_bytes=tuple(strides),
                           box=tuple(int(x) for x in reversed(t.box)), swizzle_bytes=int(t.swizzle_bytes),
                           oob_fill=t.oob_fill, base_addr=self.addr_of(t.buffer))
            self._tmap_of_param[i] = tm.index
            self.tensormaps.append(tm)

    # ------------------------------------------------------------------------------ buffers
    def addr_of(self, name: str) -> int:
        try:
            return GLOBAL_BASE + self._offset[name]
        except KeyError:
            raise RecordError(f"no buffer {name!r}", hint="one of " + ", ".join(self.names)) from None

    def nbytes_of(self, name: str) -> int:
        return self.record.buffers[name].nbytes

    def raw(self, name: str) -> np.ndarray:
        """The buffer's bytes (uint8 view into ``data``)."""
        o = self._offset[name]
        return self.data[o:o + self.nbytes_of(name)]

    def view(self, name: str) -> np.ndarray:
        """Typed, shaped view (writes go to device memory). bfloat16 -> uint16 bits, float8 -> uint8 bits."""
        b = self.record.buffers[name]
        return self.raw(name).view(DTYPES[b.dtype].storage).reshape(b.shape)

    def values(self, name: str) -> np.ndarray:
        """The buffer as float32 (bf16/fp8 decoded) or its integer dtype — a copy, for inspection."""
        b = self.record.buffers[name]
        v = self.view(name)
        if b.dtype == "bfloat16":
            return bf16_bits_to_f32(v)
        if b.dtype.startswith("float8"):
            from warpgraph.workloads.references import to_float64

            return to_float64(v, b.dtype).astype(np.float32)
        return v.copy()

    def outputs(self, copy: bool = True) -> dict[str, np.ndarray]:
        """Every buffer's storage array (what ``references.check`` takes)."""
        return {n: (self.view(n).copy() if copy else self.view(n)) for n in self.names}

    # ------------------------------------------------------------------------------ addresses
    def buffer_index(self, addrs) -> np.ndarray:
        """For each address, the index of the buffer whose [start, end) holds it, else -1 (vectorised)."""
        a = np.asarray(addrs, dtype=np.int64)
        i = np.searchsorted(self.starts, a, side="right") - 1
        ok = (i >= 0) & (a < self.ends[np.maximum(i, 0)])
        return np.where(ok, i, -1)

    def check_range(self, addrs, width: int) -> np.ndarray:
        """Boolean mask: ``[addr, addr + width)`` lies entirely inside one buffer (vectorised)."""
        a = np.asarray(addrs, dtype=np.int64)
        if len(self.starts) == 0:
            return np.zeros(a.shape, dtype=bool)
        i = np.searchsorted(self.starts, a, side="right") - 1
        ic = np.maximum(i, 0)
        return (i >= 0) & (a + int(width) <= self.ends[ic])

    def offsets(self, addrs, width: int = 1) -> np.ndarray:
        """Device addresses -> offsets into ``data`` (int64); no bounds check (use ``check_range``)."""
        return np.asarray(addrs, dtype=np.int64) - GLOBAL_BASE

    def describe_addr(self, addr: int) -> str:
        """Human text for an address: which buffer + offset, or the nearest buffer (for fault messages)."""
        addr = int(addr)
        i = int(self.buffer_index([addr])[0])
        if i >= 0:
            return f"0x{addr:x} = {self.names[i]}+{addr - int(self.starts[i])}"
        if len(self.starts) == 0:
            return f"0x{addr:x} (no buffers allocated)"
        d = [(abs(addr - int(s)), n, addr - int(s)) for s, n in zip(self.starts, self.names)]
        d += [(abs(addr - int(e)), n, addr - int(e)) for e, n in zip(self.ends, self.names)]
        _, n, _ = min(d)
        j = self.names.index(n)
        s, e = int(self.starts[j]), int(self.ends[j])
        where = f"{s - addr} bytes before" if addr < s else f"{addr - e} bytes past the end of"
        return f"0x{addr:x} is outside every buffer ({where} {n!r} [0x{s:x}, 0x{e:x}))"

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """``nbytes`` bytes at ``addr`` (uint8 view); ``IndexError`` (with a description) if out of bounds."""
        if not bool(self.check_range([addr], nbytes)[0]):
            raise IndexError(f"read of {nbytes} bytes at {self.describe_addr(addr)}")
        o = int(addr) - GLOBAL_BASE
        return self.data[o:o + nbytes]

    def write(self, addr: int, payload) -> None:
        b = np.frombuffer(bytes(payload), dtype=np.uint8) if not isinstance(payload, np.ndarray) else payload.view(np.uint8).reshape(-1)
        if not bool(self.check_range([addr], b.size)[0]):
            raise IndexError(f"write of {b.size} bytes at {self.describe_addr(addr)}")
        o = int(addr) - GLOBAL_BASE
        self.data[o:o + b.size] = b

    def gather(self, addrs, width: int) -> np.ndarray:
        """Bytes ``[a, a+width)`` for each address -> uint8 array (n, width). Caller checks bounds first."""
        o = np.asarray(addrs, dtype=np.int64).reshape(-1) - GLOBAL_BASE
        idx = o[:, None] + np.arange(width, dtype=np.int64)[None, :]
        return self.data[idx]

    def scatter(self, addrs, values: np.ndarray) -> None:
        """Write rows of ``values`` (uint8 (n, width), or any dtype viewed as bytes) at ``addrs``; later rows win."""
        v = np.ascontiguousarray(values)
        n = np.asarray(addrs).size
        v = v.reshape(n, -1).view(np.uint8).reshape(n, -1)
        o = np.asarray(addrs, dtype=np.int64).reshape(-1) - GLOBAL_BASE
        idx = o[:, None] + np.arange(v.shape[1], dtype=np.int64)[None, :]
        self.data[idx] = v

    # ------------------------------------------------------------------------------ params
    def _param_layout(self):
        offs, sizes = [], []
        off = 0
        for p in self.record.params:
            off = _round_up(off, p.align)
            offs.append(off)
            sizes.append(p.size)
            off += p.size
        return offs, sizes, off

    def param_value_bytes(self, i: int) -> bytes:
        """The bytes of param ``i`` as the kernel sees them."""
        p = self.record.params[i]
        k, v = p.kind, p.value
        if k == "ptr":
            return np.uint64(0 if v is None else self.addr_of(v)).tobytes()
        if k == "tensormap":
            return self.tensormap_blob(self._tmap_of_param[i])
        dt = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64, "f32": np.float32,
              "f64": np.float64}[k]
        return dt(v).tobytes()

    def param_bytes(self) -> bytes:
        """The whole kernel parameter buffer (params at their offsets/alignments)."""
        if self._param_bytes is None:
            buf = bytearray(self.param_size)
            for i, (o, s) in enumerate(zip(self.param_offsets, self.param_sizes)):
                buf[o:o + s] = self.param_value_bytes(i)
            self._param_bytes = bytes(buf)
        return self._param_bytes

    def param_addr(self, i: int) -> int:
        """Address of param ``i`` in param space (what ``mov.b64 %rd, entry_param_i`` gives)."""
        return PARAM_BASE + self.param_offsets[i]

    def param_index_at(self, addr: int) -> int | None:
        o = int(addr) - PARAM_BASE
        for i, (po, ps) in enumerate(zip(self.param_offsets, self.param_sizes)):
            if po <= o < po + ps:
                return i
        return None

    # ------------------------------------------------------------------------------ tensormaps
    def tensormap_blob(self, index: int) -> bytes:
        """128 bytes: magic, index, rank, dtype bytes, swizzle, then dims/strides/box (informational)."""
        t = self.tensormaps[index]
        head = np.array([TMAP_MAGIC, t.index, t.rank, t.elem_bytes, t.swizzle_bytes, t.oob_fill == "nan"],
                        dtype=np.uint32).tobytes()
        body = np.array([t.base_addr], dtype=np.uint64).tobytes()
        body += np.array(list(t.dims) + [0] * (5 - t.rank), dtype=np.uint32).tobytes()
        body += np.array(list(t.box) + [0] * (5 - t.rank), dtype=np.uint16).tobytes()
        blob = head + body
        return blob + bytes(128 - len(blob))

    def decode_device_tensormap(self, blob, where: str = "") -> TensorMap:
        """Decode a 128-byte descriptor built on the device (``tensormap.replace`` fields, warpgraph byte
        layout :data:`DEVICE_TMAP_LAYOUT`) into a :class:`TensorMap` (cached per distinct blob)."""
        blob = bytes(blob)[:128]
        tm = self._device_tmaps.get(blob)
        if tm is not None:
            return tm
        f = decode_tensormap_fields(blob)
        rank = f["rank"]
        if not 1 <= rank <= 5:
            raise ValueError(f"{where}descriptor rank {rank} (rank field {rank - 1}) is not 1..5")
        if f["interleave_layout"] != 0:
            raise ValueError(f"{where}interleaved tensor maps (interleave_layout {f['interleave_layout']}) are not modelled")
        if f["elemtype"] not in TMAP_ELEMTYPES:
            raise ValueError(f"{where}descriptor element type {f['elemtype']} is not a CUtensorMapDataType 0..12")
        es = TMAP_ELEMTYPES[f["elemtype"]][1]
        if any(x != 1 for x in f["element_stride"][:rank]):
            raise ValueError(f"{where}element strides {f['element_stride'][:rank]} (only 1 is modelled)")
        if f["swizzle_mode"] not in (0, 1, 2, 3) or f["fill_mode"] not in (0, 1):
            raise ValueError(f"{where}swizzle_mode {f['swizzle_mode']} / fill_mode {f['fill_mode']} out of range")
        base = f["global_address"]
        i = int(self.buffer_index([base])[0])
        if i < 0:
            raise ValueError(f"{where}descriptor global address {self.describe_addr(base)}")
        name = self.names[i]
        dtype = self.record.buffers[name].dtype
        if DTYPES[dtype].itemsize != es:
            dtype = TMAP_ELEMTYPES[f["elemtype"]][0]
        dims = tuple(f["global_dim"][:rank])
        strides = (es,) + tuple(f["global_stride"][:rank - 1])
        box = tuple(f["box_dim"][:rank])
        if any(d < 1 for d in dims) or any(not 1 <= x <= 256 for x in box):
            raise ValueError(f"{where}descriptor dims {dims} / box {box} (dims >= 1, box 1..256)")
        tm = TensorMap(index=len(self.tensormaps), param_index=-1, buffer=name, dtype=dtype, elem_bytes=es,
                       dims=dims, strides_bytes=strides, box=box,
                       swizzle_bytes={0: 0, 1: 32, 2: 64, 3: 128}[f["swizzle_mode"]],
                       oob_fill="nan" if f["fill_mode"] == 1 else "zero", base_addr=base)
        self.tensormaps.append(tm)
        self._device_tmaps[blob] = tm
        return tm

    def tensormap_from_param(self, x) -> TensorMap:
        """Resolve a tensormap from: its 128-byte blob (bytes / uint8 array, first 8 bytes magic + index), a
        tensormap index (small int), or an address in param space (``mov.b64 %rd, entry_param_0``)."""
        if isinstance(x, (bytes, bytearray, memoryview, np.ndarray)):
            head = np.frombuffer(bytes(x)[:8], dtype=np.uint32)
            if head.size < 2 or int(head[0]) != TMAP_MAGIC or int(head[1]) >= len(self.tensormaps):
                raise ValueError("not a warpgraph tensormap blob (bad magic/index)")
            return self.tensormaps[int(head[1])]
        x = int(x)
        if 0 <= x < len(self.tensormaps):
            return self.tensormaps[x]
        if x >= PARAM_BASE and x < PARAM_BASE + self.param_size:
            i = self.param_index_at(x)
            if i is not None and i in self._tmap_of_param and x == self.param_addr(i):
                return self.tensormaps[self._tmap_of_param[i]]
        if x >= GLOBAL_BASE and bool(self.check_range([x], 128)[0]):
            if x % 64:
                raise ValueError(f"tensormap at {self.describe_addr(x)} is not 64-byte aligned")
            blob = self.read(x, 128)
            head = np.frombuffer(bytes(blob[:8]), dtype=np.uint32)
            if int(head[0]) == TMAP_MAGIC and int(head[1]) < len(self.tensormaps):  # a copy of a param blob
                return self.tensormaps[int(head[1])]
            return self.decode_device_tensormap(blob, f"global tensormap at 0x{x:x}: ")
        raise ValueError(f"0x{x:x} is not a tensormap (param-space address of a tensormap param, a 128-byte "
                         "descriptor in global memory, or an index)")
