"""Exact data movement of the Hopper Tensor Memory Accelerator (TMA) as pure, vectorised numpy functions.

Semantics follow
* PTX ISA 8.7 §9.7.9.25.5 ``cp.async.bulk.tensor`` (tiled mode) and §5.5 "Tensor" (tensor-map: bounding box,
  out-of-bound access, §5.5.6 "Swizzling modes"),
* CUDA driver API ``cuTensorMapEncodeTiled`` (globalDim / globalStrides / boxDim / swizzle / oobFill),
* an H200 probe (tests/test_tma_ops_h200.py, tests/test_tensor_ops_h200.py): TMA images of every swizzle
  mode, ldmatrix/stmatrix, mma.sync and wgmma results were compared bit for bit with these functions,
* CUTLASS ``cute::Swizzle<B,4,3>`` (``Swizzle<3,4,3>`` = 128B, ``<2,4,3>`` = 64B, ``<1,4,3>`` = 32B), which is
  the same bit function the TMA unit and the wgmma descriptor use.

Swizzle model (PTX ISA §5.5.6; CUTLASS swizzle.hpp): the swizzle is a function of the *absolute* shared-memory
byte address ``a``: the 16-byte chunk index (bits 4..4+B-1) is XORed with bits 7..7+B-1, where B = 3 (128B),
2 (64B), 1 (32B)::

    swizzle_addr(a) = a ^ (((a >> 7) & (2**B - 1)) << 4)

i.e. for 128B swizzle, inside every 1024-B span the 16-B chunk ``c`` of 128-B row ``r`` moves to chunk
``c ^ (r % 8)``; 64B: 512-B spans, chunk ``c ^ ((a >> 7) & 3)``; 32B: 256-B spans, chunk ``c ^ ((a >> 7) & 1)``.
The function is an involution (bits 7.. are unchanged), so swizzling and un-swizzling are the same permutation.
The smem image of a box is the box in row-major order (innermost coordinate fastest, rows
``box[0]*elem_bytes`` bytes apart) with that permutation applied at its destination address; a destination that
is aligned to the span (1024/512/256 B) therefore sees the canonical pattern (the hardware requires 128-B
alignment; with a less aligned destination the phase of the pattern follows the address bits, which
``tma_load(..., smem_addrs=...)`` models).

``TensorMap`` (workloads/memory.py) is duck-typed: ``dtype, elem_bytes, dims, strides_bytes, box,
swizzle_bytes, oob_fill, base_addr`` (all innermost-first; ``strides_bytes[d-1]`` is the stride of dim d >= 1).
"""
from __future__ import annotations

import numpy as np

from warpgraph.core.errors import SimulationError

__all__ = [
    "SWIZZLE_BITS",
    "swizzle_addr",
    "unswizzle_offsets",
    "tma_load",
    "tma_store",
    "bulk_copy",
    "box_element_addresses",
    "nan_fill_bits",
    "box_key",
    "BOX_KEY_SHIFT",
]

#: TMA_LOAD trace payload a3 = in-bounds bytes | box_key << BOX_KEY_SHIFT (the timing pass's L2 in-flight table
#: needs to know which loads request the same box; the trace carries no addresses)
BOX_KEY_SHIFT = 32
_BOX_KEY_MASK = (1 << 30) - 1


def box_key(tmap_ids, coords) -> np.ndarray:
    """An identity (1 .. 2**30-1) of each box ``(tensor map, coordinates)``: equal boxes give equal keys, so the
    timing pass can see that two CTAs request the same sectors (``components/tma.py``: in-flight fills).
    ``tmap_ids`` (n,), ``coords`` (n, rank). A multiplicative hash; collisions only merge unrelated boxes'
    timing, never data."""
    k = np.asarray(tmap_ids, dtype=np.int64).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    c = np.asarray(coords, dtype=np.int64).reshape(len(k), -1)
    for d in range(c.shape[1]):
        k = (k ^ c[:, d].astype(np.uint64)) * np.uint64(0xBF58476D1CE4E5B9)
        k ^= k >> np.uint64(29)
    return (k & np.uint64(_BOX_KEY_MASK)).astype(np.int64) | 1

#: swizzle span in bytes -> number of XORed chunk-index bits (CUTLASS Swizzle<B,4,3>)
SWIZZLE_BITS = {0: 0, 32: 1, 64: 2, 128: 3}


def _swz_bits(swizzle_bytes: int) -> int:
    try:
        return SWIZZLE_BITS[int(swizzle_bytes)]
    except KeyError:
        raise SimulationError(f"unsupported swizzle mode {swizzle_bytes} bytes",
                              hint="swizzle_bytes in {0, 32, 64, 128}") from None


def swizzle_addr(addr, swizzle_bytes: int):
    """Byte address after the hardware swizzle (PTX ISA §5.5.6; CUTLASS ``Swizzle<B,4,3>``).

    Works on Python ints and integer numpy arrays (dtype preserved). ``swizzle_bytes`` = 0 returns ``addr``.
    The mapping is an involution: ``swizzle_addr(swizzle_addr(a, s), s) == a``."""
    b = _swz_bits(swizzle_bytes)
    if b == 0:
        return addr
    mask = (1 << b) - 1
    if isinstance(addr, np.ndarray):
        a = addr
        return a ^ (((a >> 7) & a.dtype.type(mask)) << 4)
    a = int(addr)
    return a ^ (((a >> 7) & mask) << 4)


def unswizzle_offsets(swizzle_bytes: int, nbytes: int, base: int = 0) -> np.ndarray:
    """Permutation ``p`` (int64, length ``nbytes``) between a dense image and its swizzled smem image placed at
    shared address ``base``: dense byte ``i`` lives at swizzled byte ``p[i]`` and ``swizzled[j] = dense[p[j]]``
    (the permutation is its own inverse). ``base`` must be a multiple of 16; with ``base`` aligned to the span
    (8 x swizzle rows of 128 B) this is the canonical pattern. Raises if the permutation leaves ``[0, nbytes)``
    (an image that does not cover whole swizzle rows)."""
    if base % 16:
        raise SimulationError(f"swizzled smem image at misaligned shared address {base:#x}",
                              hint="16-byte aligned (128-byte for TMA)")
    a = np.arange(nbytes, dtype=np.int64) + int(base)
    p = swizzle_addr(a, swizzle_bytes) - int(base)
    if nbytes and (p.min() < 0 or p.max() >= nbytes):
        raise SimulationError(f"swizzle {swizzle_bytes}B of a {nbytes}-byte image at {base:#x} leaves the image",
                              hint="image covering whole 128-byte swizzle rows")
    return p


def nan_fill_bits(elem_bytes: int, dtype=None) -> np.ndarray:
    """Bytes (little-endian) the TMA writes for an OOB element in fill mode NAN_REQUEST_ZERO_FMA.

    fp16: 0x7FF7, observed on an H200 (driver 580, cuTensorMapEncodeTiled FLOAT16; see
    tests/test_tma_ops_h200.py). Other widths are not measured: they get sign-clear all-ones NaN bits
    (0x7FFFFFFF for 4-byte, 0x7FFF for bf16, 0x7F for 1-byte types). Integer tensors have no NaN
    (cuTensorMapEncodeTiled rejects NaN fill for them)."""
    name = ""
    if dtype is not None:
        try:
            dt = np.dtype(dtype)
            kind, name = dt.kind, dt.name
        except TypeError:
            kind, name = "f", str(dtype)
        if kind in "iub":
            raise SimulationError(f"OOB NaN fill requested for non-float tensor dtype {dtype}",
                                  hint='oob_fill "zero" for integer tensors')
    n = int(elem_bytes)
    if n == 2 and name in ("", "float16"):
        v = 0x7FF7
    else:
        v = (1 << (8 * n - 1)) - 1
    return np.frombuffer(v.to_bytes(n, "little"), dtype=np.uint8).copy()


def _geometry(tmap):
    eb = int(tmap.elem_bytes)
    dims = [int(d) for d in tmap.dims]
    box = [int(b) for b in tmap.box]
    nd = len(dims)
    if len(box) != nd:
        raise SimulationError(f"tensor map box rank {len(box)} != tensor rank {nd}")
    strides = [eb] + [int(s) for s in tmap.strides_bytes][: nd - 1]
    if len(strides) != nd:
        raise SimulationError(f"tensor map needs {nd - 1} strides, got {len(tmap.strides_bytes)}")
    sw = int(getattr(tmap, "swizzle_bytes", 0) or 0)
    _swz_bits(sw)
    inner = box[0] * eb
    if inner % 16:
        raise SimulationError(f"TMA box inner extent {inner} B is not a multiple of 16 B",
                              hint="boxDim[0] * elementSize multiple of 16 (cuTensorMapEncodeTiled)")
    if sw and inner > sw:
        raise SimulationError(f"TMA box inner extent {inner} B exceeds the {sw}B swizzle span",
                              hint="boxDim[0] * elementSize <= swizzle size (cuTensorMapEncodeTiled)")
    return eb, dims, box, strides, sw


def box_element_addresses(tmap, coords):
    """Device byte addresses and in-bounds mask of every element of the boxes at ``coords``.

    Returns ``(addr int64 (n_ops, n_elem), inb bool (n_ops, n_elem))`` with elements in row-major box order
    (innermost fastest)."""
    eb, dims, box, strides, _ = _geometry(tmap)
    coords = np.asarray(coords, dtype=np.int64).reshape(-1, len(dims))
    n_ops = coords.shape[0]
    n_elem = int(np.prod(box))
    addr = np.full((n_ops, n_elem), int(tmap.base_addr), dtype=np.int64)
    inb = np.ones((n_ops, n_elem), dtype=bool)
    # box index of dim d for flat element e: (e // prod(box[:d])) % box[d]
    e = np.arange(n_elem, dtype=np.int64)
    div = 1
    for d in range(len(dims)):
        idx = (e // div) % box[d]
        div *= box[d]
        c = coords[:, d, None] + idx[None, :]
        inb &= (c >= 0) & (c < dims[d])
        addr += c * strides[d]
    return addr, inb


def _sectors_per_op(addr, inb, eb, with_op_index):
    """Unique 32-B sectors (device address // 32) of in-bounds elements, concatenated op by op."""
    n_ops = addr.shape[0]
    if not inb.any():
        e = np.zeros(0, np.int64)
        return (e, e.copy()) if with_op_index else e
    op = np.broadcast_to(np.arange(n_ops, dtype=np.int64)[:, None], addr.shape)[inb]
    a = addr[inb]
    # elements are naturally aligned (elem_bytes <= 16 divides 32), so one element touches one sector
    sec = a // 32
    lo = int(sec.min())
    span = int(sec.max()) - lo + 1
    key = np.unique(op * span + (sec - lo))            # sorted by op, then by sector
    ops, sec = np.divmod(key, span)
    sec = sec + lo
    return (sec, ops) if with_op_index else sec


def _byte_index(addr, inb, gmem_size, gmem_base, eb):
    """Indices into flat gmem of each byte of each in-bounds element; checks bounds."""
    off = addr - int(gmem_base)
    if inb.any():
        o = off[inb]
        lo, hi = int(o.min()), int(o.max()) + eb
        if lo < 0 or hi > gmem_size:
            bad = int(o[(o < 0) | (o + eb > gmem_size)][0]) + int(gmem_base)
            raise SimulationError(f"TMA access to device address {bad:#x} outside allocated memory",
                                  hint=f"[{int(gmem_base):#x}, {int(gmem_base) + gmem_size:#x})")
    off = np.where(inb, off, 0)
    return off[..., None] + np.arange(eb, dtype=np.int64)


def _swizzle_perm(sw, box_bytes, smem_addrs, n_ops):
    """(n_ops or 1, box_bytes) permutation: image byte i of op k lives at swizzled byte perm[k, i]."""
    if smem_addrs is None:
        return unswizzle_offsets(sw, box_bytes)[None, :]
    sa = np.asarray(smem_addrs, dtype=np.int64).reshape(-1)
    if sa.size == 1 and n_ops != 1:
        sa = np.repeat(sa, n_ops)
    bad = sa[sa % 128 != 0]
    if bad.size:
        raise SimulationError(f"TMA shared-memory destination {int(bad[0]):#x} is not 128-byte aligned",
                              hint="128-byte aligned smem address (cp.async.bulk.tensor)")
    a = sa[:, None] + np.arange(box_bytes, dtype=np.int64)[None, :]
    p = swizzle_addr(a, sw) - sa[:, None]
    if p.min() < 0 or p.max() >= box_bytes:
        raise SimulationError(f"swizzle {sw}B of a {box_bytes}-byte box leaves the box",
                              hint="box covering whole 128-byte swizzle rows")
    return p


def tma_load(gmem: np.ndarray, gmem_base: int, tmap, coords, *, smem_addrs=None, with_op_index: bool = False):
    """``cp.async.bulk.tensor.Nd.shared::cluster.global.tile`` (PTX ISA §9.7.9.25.5.1), batched over ops.

    gmem: flat uint8 device memory whose byte 0 is device address ``gmem_base``.
    coords: int64 (n_ops, ndim), innermost-first; may be negative or past the tensor (OOB elements are filled
    with 0, or with canonical NaN bits when ``tmap.oob_fill == "nan"``).
    smem_addrs: optional (n_ops,) destination shared addresses; only their low bits matter (swizzle phase);
    default: span-aligned destinations.

    Returns ``(images uint8 (n_ops, box_bytes), inb_bytes int64 (n_ops,), touched_sectors int64)`` where images
    are already swizzled (write them verbatim at the destination) and ``touched_sectors`` lists, op after op,
    the unique ``device_address // 32`` of the in-bounds sectors each op reads. With ``with_op_index=True`` a
    4th array gives the op index of each sector."""
    eb, dims, box, strides, sw = _geometry(tmap)
    gmem = np.asarray(gmem)
    if gmem.dtype != np.uint8:
        gmem = gmem.view(np.uint8)
    addr, inb = box_element_addresses(tmap, coords)
    n_ops, n_elem = addr.shape
    bidx = _byte_index(addr, inb, gmem.size, gmem_base, eb)
    data = gmem.reshape(-1)[bidx]                                 # (n_ops, n_elem, eb)
    fill = getattr(tmap, "oob_fill", "zero")
    if fill == "nan":
        fillv = nan_fill_bits(eb, getattr(tmap, "dtype", None))
    elif fill in ("zero", None, 0):
        fillv = np.zeros(eb, np.uint8)
    else:
        raise SimulationError(f"unknown TMA oob_fill {fill!r}", hint='"zero" or "nan"')
    data = np.where(inb[..., None], data, fillv[None, None, :])
    dense = data.reshape(n_ops, n_elem * eb)
    box_bytes = n_elem * eb
    if sw:
        perm = _swizzle_perm(sw, box_bytes, smem_addrs, n_ops)
        images = np.empty_like(dense)
        np.put_along_axis(images, np.broadcast_to(perm, dense.shape), dense, axis=1)
    else:
        images = np.ascontiguousarray(dense)
    inb_bytes = inb.sum(axis=1).astype(np.int64) * eb
    sec = _sectors_per_op(addr, inb, eb, with_op_index)
    if with_op_index:
        return images, inb_bytes, sec[0], sec[1]
    return images, inb_bytes, sec


def tma_store(gmem: np.ndarray, gmem_base: int, tmap, coords, images, *, smem_addrs=None,
              with_op_index: bool = False):
    """``cp.async.bulk.tensor.Nd.global.shared::cta.tile`` (PTX ISA §9.7.9.25.5.1): un-swizzle each smem image
    and write its in-bounds elements to ``gmem`` (in place); OOB elements are dropped.

    Ops are applied in order (a later op overwrites an earlier one at the same address).
    Returns ``(inb_bytes int64 (n_ops,), touched_sectors int64)`` as in :func:`tma_load`."""
    eb, dims, box, strides, sw = _geometry(tmap)
    if gmem.dtype != np.uint8:
        raise SimulationError("tma_store needs the flat uint8 device memory array")
    addr, inb = box_element_addresses(tmap, coords)
    n_ops, n_elem = addr.shape
    box_bytes = n_elem * eb
    images = np.asarray(images, dtype=np.uint8).reshape(n_ops, box_bytes)
    if sw:
        perm = _swizzle_perm(sw, box_bytes, smem_addrs, n_ops)
        dense = np.take_along_axis(images, np.broadcast_to(perm, images.shape), axis=1)
    else:
        dense = images
    bidx = _byte_index(addr, inb, gmem.size, gmem_base, eb)
    flat = gmem.reshape(-1)
    vals = dense.reshape(n_ops, n_elem, eb)
    # numpy fancy assignment: with duplicate indices the last occurrence wins == op order
    flat[bidx[inb]] = vals[inb]
    inb_bytes = inb.sum(axis=1).astype(np.int64) * eb
    sec = _sectors_per_op(addr, inb, eb, with_op_index)
    return (inb_bytes, *sec) if with_op_index else (inb_bytes, sec)


def bulk_copy(src: np.ndarray, src_offsets, dst: np.ndarray, dst_offsets, nbytes, *, src_rows=None,
              dst_rows=None):
    """Non-tensor ``cp.async.bulk`` (PTX ISA §9.7.9.25.4.1): copy ``nbytes`` contiguous bytes per op.

    ``src``/``dst`` are uint8 arrays, either flat (device memory; offsets = address - base) or 2-D
    ``(n_ctas, smem_bytes)`` with ``src_rows``/``dst_rows`` giving the row (CTA) of each op. Offsets and sizes
    must be multiples of 16 (PTX requirement). Copies in place into ``dst``; returns ``dst``."""
    so = np.asarray(src_offsets, dtype=np.int64).reshape(-1)
    do = np.asarray(dst_offsets, dtype=np.int64).reshape(-1)
    n = np.broadcast_to(np.asarray(nbytes, dtype=np.int64), so.shape)
    for name, v in (("source", so), ("destination", do), ("size", n)):
        bad = v[v % 16 != 0]
        if bad.size:
            raise SimulationError(f"cp.async.bulk {name} {int(bad[0]):#x} is not a multiple of 16 bytes")
    for arr, off, rows, name in ((src, so, src_rows, "source"), (dst, do, dst_rows, "destination")):
        lim = arr.shape[-1]
        bad = (off < 0) | (off + n > lim)
        if bad.any():
            raise SimulationError(f"cp.async.bulk {name} offset {int(off[bad][0]):#x} (+{int(n[bad][0])} B) "
                                  f"outside [0, {lim:#x})")
    if so.size == 0:
        return dst
    if np.all(n == n[0]):
        k = np.arange(int(n[0]), dtype=np.int64)
        si = so[:, None] + k
        di = do[:, None] + k
        sv = src[np.asarray(src_rows)[:, None], si] if src.ndim == 2 else src.reshape(-1)[si]
        if dst.ndim == 2:
            dst[np.asarray(dst_rows)[:, None], di] = sv
        else:
            dst.reshape(-1)[di] = sv
        return dst
    for i in range(so.size):                # ragged sizes: one slice copy per op (rare)
        s = src[src_rows[i], so[i]:so[i] + n[i]] if src.ndim == 2 else src.reshape(-1)[so[i]:so[i] + n[i]]
        if dst.ndim == 2:
            dst[dst_rows[i], do[i]:do[i] + n[i]] = s
        else:
            dst.reshape(-1)[do[i]:do[i] + n[i]] = s
    return dst
