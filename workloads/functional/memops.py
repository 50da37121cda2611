"""Memory, synchronisation, warp-collective, TMA and tensor-core instruction decoders."""
from __future__ import annotations

import numpy as np

from ...core.errors import SimulationError
from ..memory import GLOBAL_BASE, PARAM_BASE
from ..ptx.isa import Kind
from ..ptx.model import Addr, Imm, Pair, Reg, Sink, Sym, Vec
from . import tensor_ops, tma_ops
from .alu import NP_TYPE, SIZE
from .executor import SHARED_WINDOW, _get, _imm, _Lazy, _main_type, decoder

_UT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_ST = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _space(mods):
    for m in mods:
        if m in ("global", "param", "local", "const"):
            return m
        if m.startswith("shared"):
            return "shared"
    return "generic"


def _addr_fn(b, op, inst):
    """Returns f(idx) -> int64 addresses of the active lanes."""
    if not isinstance(op, Addr):
        raise b.fault_decode(inst, "expected an address operand [..]")
    off = op.offset
    base = op.base
    if base is None:
        return lambda idx: np.full(len(idx), off, dtype=np.int64)
    if isinstance(base, Sym):
        c = b.sym_addr(base, inst) + off
        return lambda idx: np.full(len(idx), c, dtype=np.int64)
    r = b.R[base.index]
    if r.dtype == np.uint64:
        rv = r.view(np.int64)
    else:
        rv = r
    L = b.L

    def f(idx):
        v = rv.astype(np.int64) if len(idx) == L else rv[idx].astype(np.int64)
        if off:
            v += off
        return v
    return f


def _vals_of(op):
    return list(op.items) if isinstance(op, Vec) else [op]


def _fault(b, inst, msg, idx=None, lanes=None, addrs=None, hint=None):
    where = ""
    if lanes is not None and len(lanes):
        ln = int(lanes[0])
        cta = int(b.ctas[ln // b.lpc])
        w = (ln % b.lpc) // 32
        where = f" (CTA {cta} warp {w} lane {ln % 32}"
        if addrs is not None:
            where += f", address 0x{int(addrs[0]):x}"
        where += ")"
    return SimulationError(f"{msg}{where} at pc {inst.index}: {inst.text}", location=b.loc(inst), hint=hint)


# ------------------------------------------------------------------------------------------------ global memory
def _gcheck(b, inst, idx, addrs, width):
    mem = b.ex.mem
    ok = mem.check_range(addrs, width)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        raise _fault(b, inst, "out-of-bounds global access: " + mem.describe_addr(int(addrs[bad[0]])),
                     lanes=idx[bad], addrs=addrs[bad], hint="addresses inside a buffer of the launch record")
    if width > 1:
        mis = (addrs % min(width, 16)) != 0
        if mis.any():
            bad = np.flatnonzero(mis)
            raise _fault(b, inst, f"misaligned {width}-byte global access", lanes=idx[bad], addrs=addrs[bad],
                         hint=f"{min(width, 16)}-byte aligned addresses")


def _full_warps(idx):
    if len(idx) == 0 or len(idx) % 32:
        return False
    r = idx.reshape(-1, 32)
    return not (r[:, 0] & 31).any() and bool((r[:, 31] - r[:, 0] == 31).all())


def _gmem_payload_fullwarps(b, idx, addrs, width, nbytes, write=False, warm=False):
    W = b.W
    pay = np.zeros((W, 4), dtype=np.int64)
    warps = idx[::32] >> 5
    rows = np.sort(((addrs - GLOBAL_BASE) >> 5).reshape(-1, 32), axis=1)
    d = np.ones(rows.shape, dtype=bool)
    d[:, 1:] = rows[:, 1:] != rows[:, :-1]
    pay[warps, 0] = d.sum(axis=1)
    lines = rows >> 2
    dl = np.ones(rows.shape, dtype=bool)
    dl[:, 1:] = lines[:, 1:] != lines[:, :-1]
    pay[warps, 3] = dl.sum(axis=1)
    touched = b.ex.touched
    if touched is not None:
        sec = rows[d]
        am = b.ex.addr
        wd = np.repeat(warps, d.sum(axis=1))
        new = ~touched[sec]
        if warm and not write:
            wl = np.repeat(warps, dl.sum(axis=1))
            b.warm_lines = _warm_lines(b, wl, lines[dl], sec[new] >> 2)   # (warp, line) pairs already distinct
        if new.any():
            sn, wn = sec[new], wd[new]
            stamp = b.ex.stamp
            stamp[sn[::-1]] = wn[::-1]           # the lowest warp wins a sector shared in this instruction
            win = stamp[sn] == wn
            pay[:, 1] = np.bincount(wn[win], minlength=W)[:W]
            if am is not None and not write:
                am.dram(sn[win])
            touched[sn] = True
        if am is not None:
            am.l2(sec, write, b.ctas[wd // b.wpc])
        if write:
            b.ex.written[sec] = True
        else:
            b.ex.dram_read_sectors += int(pay[:, 1].sum())
    if nbytes is None:
        pay[warps, 2] = 32 * width
    else:
        pay[warps, 2] = np.asarray(nbytes).reshape(-1, 32).sum(axis=1).astype(np.int64)
    return pay


def _l1_filter(b, l1m, ks, kw, pay, W):
    """Drop the (warp, sector) pairs that hit the CTA's L1 (its SM's with ``l1_sms``; sector-granular fills: a
    128-B line's tag holds 4 sector valid bits and a miss fetches only the requested sectors); record in
    pay[:, 3] >> 32 the warp's lines whose sectors all hit. A sector two warps of one cache request in the same
    instruction misses once (the lowest warp), the other hits."""
    cta = b.ctas[kw // b.wpc].astype(np.int64)
    if b.ex.l1_map is not None:
        cta = b.ex.l1_map[cta]           # an explicit cache per CTA (sampled mode: runner/simulate.py)
    elif b.ex.l1_sms:
        cta = cta % b.ex.l1_sms          # the CTA's first-wave SM: its L1 serves the SM's other CTAs too
    ck, first, cinv = np.unique((cta << 40) | ks, return_index=True, return_inverse=True)
    hit_c = l1m.access(ck >> 40, ck & ((1 << 40) - 1))
    firstmask = np.zeros(len(ks), dtype=bool)
    firstmask[first] = True
    keep = ~hit_c[cinv] & firstmask
    # lines per warp that needed no L2 request
    lk, linv = np.unique((kw << 40) | (ks >> 2), return_inverse=True)
    line_miss = np.zeros(len(lk), dtype=bool)
    np.logical_or.at(line_miss, linv, keep)
    hits_per_warp = np.bincount(lk[~line_miss] >> 40, minlength=W)[:W]
    pay[:, 3] = hits_per_warp.astype(np.int64) << 32
    return ks[keep], kw[keep]


#: a2 bits 24-39 of a global read (ld.global, cp.async): the request's warm lines (:func:`_warm_lines`); the
#: request's bytes stay in bits 0-23, L1TEX wavefronts in 40+ (components/memory.py ``global_access``)
WARM_SHIFT = 24
#: a2 bits 24-31 / 32-39 of a global store: its 128-B lines with a partly written 32-B sector and those sectors
#: (:func:`partial_store_sectors`; components/sm_core.py ``_store_path``)
PARTIAL_LINES_SHIFT = 24
PARTIAL_SECTORS_SHIFT = 32


def partial_store_sectors(W, idx, addrs, width):
    """Per warp of a store: (lines holding a partly written sector, partly written sectors), packed as a2 bits
    (``PARTIAL_LINES_SHIFT``, ``PARTIAL_SECTORS_SHIFT``). A sector is partly written when the warp's distinct
    bytes in it are fewer than 32 (lanes writing the same address count once). The SM's store path takes longer for
    them (microbench store_scatter, H100 2026-12-07: 8 lines with 16 B each 15.7 cycles a warp store, 4 full
    sectors 4.2-5.2). Accesses wider than 16 B (never partial in practice) are not counted."""
    out = np.zeros(W, dtype=np.int64)
    if len(idx) == 0 or width > 16:
        return out
    if _full_warps(idx):
        # whole warps whose lanes write one contiguous, sector-aligned run fill every sector they touch (the
        # common coalesced store): only the other warps need the per-sector count below
        a = np.sort(addrs.reshape(-1, 32), axis=1)
        full = ((a[:, 0] & 31) == 0) & (np.diff(a, axis=1) == width).all(axis=1)
        if full.all():
            return out
        keep = np.repeat(~full, 32)
        idx, addrs = idx[keep], addrs[keep]
    w = (idx >> 5).astype(np.int64)
    o = (addrs - GLOBAL_BASE).astype(np.int64)
    ua = np.unique((w << 40) | o)                     # distinct (warp, address); aligned accesses stay in a sector
    sk, cnt = np.unique(ua >> 5, return_counts=True)  # (warp << 35) | sector -> distinct lanes' addresses in it
    part = cnt * width < 32
    if not part.any():
        return out
    ps = sk[part]
    out += np.bincount(ps >> 35, minlength=W)[:W].astype(np.int64) << PARTIAL_SECTORS_SHIFT
    pl = np.unique(ps >> 2)                           # (warp << 33) | line
    out += np.bincount(pl >> 33, minlength=W)[:W].astype(np.int64) << PARTIAL_LINES_SHIFT
    return out


def _warm_lines(b, lw, ln, miss_lines):
    """Per warp: the request's lines ``ln`` (of warps ``lw``, one entry per warp and line) that this CTA read from L2
    before and that are L2-resident now (none of their sectors in ``miss_lines``). A pointer chase on an H200 reads
    the L2 bimodally (near / far partition, 264 / 443 cycles) only on an SM's first touch of a line; when it re-reads
    them, every line is a near hit at any stride (microbench/results/h200_2026-12-02.json pchase l2 /
    l2_first_touch; h200_stream_sizes_2026-12-03/chase.txt): the far partition's line is copied into the
    requesting SM's near partition. Whether other SMs of that partition share the copy is not measured: the model
    keeps the copy per CTA (the last CTA that read the line: ``ex.line_reader``)"""
    reader = getattr(b.ex, "line_reader", None)
    if reader is None or len(ln) == 0:
        return None
    cta = b.ctas[lw // b.wpc].astype(np.int32) + 1
    hot = reader[ln] == cta
    if len(miss_lines):
        hot &= ~np.isin(ln, miss_lines)
    reader[ln] = cta
    return np.bincount(lw[hot], minlength=b.W)[:b.W].astype(np.int64) if hot.any() else None


def gmem_payload(b, idx, addrs, width, nbytes=None, write=False, l1=False, wavefronts=False, warm=False):
    """(W, 4): sectors, first-touched sectors, bytes, 128-B lines per warp. With ``l1`` (plain ld.global) the
    per-CTA L1 (l1model.py) filters lines first: sectors/lines count only L1 misses, and a3's high 32 bits
    carry the warp's L1-hit lines. With ``wavefronts`` (ld/st through the L1TEX data stage) a2's bits 40+ carry
    the warp's data-stage wavefronts: distinct 4-B words per bank of the 32-bank array, as for shared memory
    (microbench l1_scatter: lane strides 16/64/256 B give 4/16/32 SM cycles per warp-load)."""
    if len(idx) == 0:
        return np.zeros((b.W, 4), dtype=np.int64)
    b.warm_lines = None
    pay = _gmem_payload_core(b, idx, addrs, width, nbytes, write, l1, warm)
    if b.warm_lines is not None:
        pay[:, 2] += b.warm_lines << WARM_SHIFT
        b.warm_lines = None
    if write:
        pay[:, 2] += partial_store_sectors(b.W, idx, addrs, width)
    if wavefronts:
        pay[:, 2] += smem_wavefronts(b, idx, addrs - GLOBAL_BASE, width) << 40   # word offsets fit 32 bits
    return pay


def _gmem_payload_core(b, idx, addrs, width, nbytes, write, l1, warm=False):
    W = b.W
    pay = np.zeros((W, 4), dtype=np.int64)
    l1m = getattr(b.ex, "l1", None) if l1 else None
    if l1m is None and width <= 16 and _full_warps(idx):
        return _gmem_payload_fullwarps(b, idx, addrs, width, nbytes, write, warm)
    w = (idx >> 5).astype(np.int64)
    o = addrs - GLOBAL_BASE
    if width <= 32:
        s0 = o >> 5
        s1 = (o + width - 1) >> 5
        if (s0 != s1).any():
            sec = np.concatenate([s0, s1])
            ww = np.concatenate([w, w])
        else:
            sec, ww = s0, w
    else:
        k = (width + 31) // 32 + 1
        sec = ((o[:, None] >> 5) + np.arange(k)[None, :])
        keep = (sec << 5) < (o[:, None] + width)
        ww = np.broadcast_to(w[:, None], sec.shape)[keep]
        sec = sec[keep]
    key = np.unique((ww << 40) | sec)
    kw = key >> 40
    ks = key & ((1 << 40) - 1)
    if l1m is not None:
        ks, kw = _l1_filter(b, l1m, ks, kw, pay, W)
    pay[:, 0] = np.bincount(kw, minlength=W)
    touched = b.ex.touched
    if touched is not None:
        am = b.ex.addr
        us, first = np.unique(ks, return_index=True)
        new = ~touched[us]
        miss = us[new] >> 2
        if new.any():
            pay[:, 1] = np.bincount(kw[first[new]], minlength=W)
            if am is not None and not write:
                am.dram(us[new])
            touched[us[new]] = True
        if am is not None:
            am.l2(ks, write, b.ctas[kw // b.wpc])
        if write:
            b.ex.written[us] = True
        else:
            b.ex.dram_read_sectors += int(pay[:, 1].sum())
    lkey = np.unique((kw << 40) | (ks >> 2))
    if warm and not write and touched is not None:
        b.warm_lines = _warm_lines(b, lkey >> 40, lkey & ((1 << 40) - 1), miss)
    pay[:, 3] += np.bincount(lkey >> 40, minlength=W)
    if nbytes is None:
        pay[:, 2] = np.bincount(w, minlength=W) * width
    else:
        pay[:, 2] = np.bincount(w, weights=nbytes, minlength=W).astype(np.int64)
    return pay


_AR32 = np.arange(32)


def _smem_wavefronts_fullwarps(b, idx, addrs, width):
    """Fast path: whole warps active. Each (warp, phase) row holds exactly 32 words."""
    nwarp = len(idx) // 32
    word = addrs >> 2
    if width <= 4:
        rows = word.reshape(nwarp, 32)
        nph = 1
    else:
        nw = width // 4
        rows = (word[:, None] + np.arange(nw)[None, :]).reshape(nwarp * (32 * nw // 32), 32)
        nph = nw
    rows = np.sort(rows, axis=1)
    distinct = np.ones(rows.shape, dtype=bool)
    distinct[:, 1:] = rows[:, 1:] != rows[:, :-1]
    bank = (rows & 31) + 32 * np.arange(rows.shape[0])[:, None]
    cnt = np.bincount(bank[distinct], minlength=rows.shape[0] * 32).reshape(rows.shape[0], 32).max(axis=1)
    per_warp = cnt.reshape(nwarp, nph).sum(axis=1)
    out = np.zeros(b.W, dtype=np.int64)
    out[idx[::32] >> 5] = per_warp
    return out


def smem_wavefronts(b, idx, addrs, width):
    W = b.W
    out = np.zeros(W, dtype=np.int64)
    if len(idx) == 0:
        return out
    if len(idx) % 32 == 0 and width in (1, 2, 4, 8, 16):
        r = idx.reshape(-1, 32)
        if (r[:, 0] & 31).any() == False and (r - r[:, :1] == _AR32).all():  # noqa: E712
            return _smem_wavefronts_fullwarps(b, idx, addrs, width)
    w = (idx >> 5).astype(np.int64)
    lane = idx & 31
    if width <= 4:
        ph = np.zeros_like(lane)
        nw = 1
    elif width == 8:
        ph = lane >> 4
        nw = 2
    else:
        ph = lane >> 3
        nw = width // 4
    word = addrs >> 2
    if nw > 1:
        word = (word[:, None] + np.arange(nw)[None, :]).reshape(-1)
        w = np.repeat(w, nw)
        ph = np.repeat(ph, nw)
    key = np.unique((((w << 3) | ph) << 32) | word)
    wp = key >> 32
    bank = key & 31
    cnt = np.bincount((wp << 5) | bank)
    cnt = np.pad(cnt, (0, (-len(cnt)) % 32)).reshape(-1, 32).max(axis=1)    # per (warp, phase)
    wps = np.arange(len(cnt))
    out += np.bincount(wps >> 3, weights=cnt, minlength=W)[:W].astype(np.int64)
    return out


def smem_payload(b, idx, addrs, width, nbytes_per_lane=None):
    pay = np.zeros((b.W, 4), dtype=np.int64)
    pay[:, 0] = smem_wavefronts(b, idx, addrs, width)
    pay[:, 2] = np.bincount(idx >> 5, minlength=b.W)[:b.W] * (nbytes_per_lane or width)
    return pay


def _scheck(b, inst, idx, addrs, width):
    bad = (addrs < 0) | (addrs + width > b.S)
    if bad.any():
        k = np.flatnonzero(bad)
        raise _fault(b, inst, f"shared memory access out of range [0, {b.S})", lanes=idx[k], addrs=addrs[k],
                     hint="a CTA-local shared address inside static + dynamic shared memory")
    if width > 1:
        mis = (addrs % min(width, 16)) != 0
        if mis.any():
            k = np.flatnonzero(mis)
            raise _fault(b, inst, f"misaligned {width}-byte shared access", lanes=idx[k], addrs=addrs[k])


# ---- clusters: shared::cluster addressing (PTX ISA §5.1.7 "Shared state space", mapa) ----------------------
CLUSTER_SHIFT = 24       # shared::cluster address = (rank + 1) << 24 | CTA-local address  (mapa)
_LOCAL_MASK = (1 << CLUSTER_SHIFT) - 1


def _cluster_slots(b, inst, idx, addrs):
    """CTA-local or shared::cluster addresses of lanes ``idx`` -> (target CTA slot, CTA-local address, remote mask
    or None). A shared::cluster address names rank r of the lane's cluster (its slot is the cluster's first slot + r:
    batches hold whole clusters in rank order, cluster.py); a plain CTA-local address is the lane's own CTA."""
    slots = b.lane_cta[idx]
    if not len(addrs) or not (addrs >= (1 << CLUSTER_SHIFT)).any():
        return slots, addrs, None
    cs = b.csize
    rank = (addrs >> CLUSTER_SHIFT) - 1
    if (rank >= cs).any():
        k = np.flatnonzero(rank >= cs)
        raise _fault(b, inst, f"shared::cluster address names CTA rank {int(rank[k[0]])} outside the cluster of {cs}",
                     lanes=idx[k], addrs=addrs[k], hint="a mapa rank below %cluster_nctarank")
    is_c = rank >= 0
    tgt = np.where(is_c, slots - slots % cs + rank, slots)
    return tgt, addrs & _LOCAL_MASK, is_c & (tgt != slots)


def _shared_flat(b, inst, idx, addrs, width, want_remote=False):
    """CTA-local or shared::cluster addresses -> (flat index into the batch's smem, local address)
    [+ (target slots, remote mask) with ``want_remote``]."""
    slots, addrs, remote = _cluster_slots(b, inst, idx, addrs)
    _scheck(b, inst, idx, addrs, width)
    if want_remote:
        return slots * b.S + addrs, addrs, slots, remote
    return slots * b.S + addrs, addrs


def dsm_payload(b, idx, addrs, width, slots, remote):
    """Trace payload of a ``ld/st/atom/red.shared::cluster`` (Kind *_SHARED lowered to OP_DSM): a0 shared
    wavefronts, a1 destination CTA (global index) + 1 of the warp's first remote lane (0: all lanes local), a2 bytes,
    a3 bytes that travel to another CTA's SM (the DSM fabric)."""
    pay = smem_payload(b, idx, addrs, width)
    if remote is not None and remote.any():
        wi = (idx >> 5)[remote]
        pay[:, 3] = np.bincount(wi, minlength=b.W)[:b.W] * width
        dst = b.ctas[slots[remote]] + 1
        pay[wi[::-1], 1] = dst[::-1]            # the first remote lane of each warp wins
    return pay


@decoder("mapa")
def _d_mapa(b, inst):
    """``mapa.shared::cluster`` (shared::cluster address of the same variable in CTA ``rank``) and generic ``mapa``
    (a generic address in the shared window -> the generic address of the variable in CTA ``rank``, as
    cooperative_groups' ``map_shared_rank`` compiles to)."""
    generic = not any(m.startswith("shared") for m in inst.mods)
    ops = inst.operands
    t = _main_type(inst)
    w = b.writer(ops[0], t, inst)
    a = b.val(ops[1], t, inst)
    r = b.val(ops[2], "u32", inst)
    dt = NP_TYPE[t]
    win = np.uint64(SHARED_WINDOW)

    def h(act, full):
        av = np.asarray(_get(a)).astype(np.uint64)
        if generic:
            av = av - win
        loc = av & np.uint64((1 << CLUSTER_SHIFT) - 1)
        rk = np.asarray(_get(r)).astype(np.uint64)
        res = loc | ((rk + np.uint64(1)) << np.uint64(CLUSTER_SHIFT))
        if generic:
            res = res + win
        w(res.astype(dt), act, full)
    return h


@decoder("getctarank")
def _d_getctarank(b, inst):
    """``getctarank{.shared::cluster}.u32 d, a``: the rank of the CTA whose shared memory ``a`` names (a CTA-local
    or generic shared address: the executing CTA's own rank)."""
    generic = not any(m.startswith("shared") for m in inst.mods)
    ops = inst.operands
    w = b.writer(ops[0], "u32", inst)
    a = b.val(ops[1], _main_type(inst) if _main_type(inst) in ("u64", "b64") else "u64", inst)
    own = b.sp["%cluster_ctarank"]

    def h(act, full):
        av = np.broadcast_to(np.asarray(_get(a)).astype(np.int64), (b.L,))
        if generic:
            av = av - SHARED_WINDOW
        rank = (av >> CLUSTER_SHIFT) - 1
        w(np.where(rank >= 0, rank, own).astype(np.uint32), act, full)
    return h


class _View:
    """Typed views of a flat uint8 array, cached."""

    def __init__(self, arr):
        self.arr = arr
        self.v = {}

    def __call__(self, es):
        v = self.v.get(es)
        if v is None:
            n = (self.arr.size // es) * es
            v = self.v[es] = self.arr[:n].view(_UT[es])
        return v

    def wide(self, width):
        """1-D view whose element i is bytes [i*width, (i+1)*width) (1-D fancy indexing is a fast memcpy;
        vector accesses are width-aligned)."""
        key = ("w", width)
        v = self.v.get(key)
        if v is None:
            n = (self.arr.size // width) * width
            v = self.v[key] = self.arr[:n].view(_WIDE[width])
        return v

    def gather(self, width, es, index):
        """(k, width // es) element bits of the width-byte items at item indices ``index``."""
        return self.wide(width)[index].view(_UT[es]).reshape(len(index), width // es)

    def scatter(self, width, index, vals):
        """Write (k, width // es) element bits at item indices ``index``."""
        self.wide(width)[index] = np.ascontiguousarray(vals).view(_WIDE[width]).reshape(-1)


_WIDE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128, 32: np.dtype((np.complex128, 2))}


def _reg_writer_lanes(b, op, es, signed):
    """w(idx, vals_uint_es) writes loaded element bits into register ``op`` at lanes idx."""
    if isinstance(op, Sink) or not isinstance(op, Reg):
        return None
    r = b.R[op.index]
    L = b.L

    def w(idx, v):
        if r.dtype == np.bool_:
            v = v != 0
        elif signed and r.dtype.itemsize > es:
            v = v.view(_ST[es]).astype(np.int64).astype(r.dtype)
        elif v.dtype != r.dtype:
            v = v.astype(r.dtype)
        if len(idx) == L:
            r[...] = v
        else:
            r[idx] = v
    return w


def _reg_reader_lanes(b, op, es):
    """f(idx) -> element bits (uint_es) for store sources."""
    if isinstance(op, Reg):
        r = b.R[op.index]
        ut = _UT[es]

        L = b.L

        def f(idx):
            x = r if len(idx) == L else r[idx]
            if x.dtype == np.bool_:
                return x.astype(ut)
            return x.astype(ut) if x.dtype.itemsize != es else x.view(ut) if x.dtype != ut else x
        return f
    if isinstance(op, Imm):
        t = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[es]
        v = _imm(op, t, np.dtype(NP_TYPE[t]))
        return lambda idx: np.full(len(idx), v, dtype=_UT[es])
    raise ValueError(op)


@decoder("ld", "ldu")
def _d_ld(b, inst):
    mods = inst.mods
    space = _space(mods)
    # plain ld.global goes through the L1 (l1model.py); .cg/.cv/volatile and ld.global.nc? (.nc: texture path,
    # also L1-cached) -- only .cg/.cv/volatile/.lu bypass it
    l1_ok = not any(m in mods for m in ("cg", "cv", "volatile", "lu", "relaxed", "acquire"))
    t = _main_type(inst)
    es = SIZE[t] if t != "pred" else 1
    signed = t[0] == "s"
    ops = inst.operands
    dsts = _vals_of(ops[0])
    n = len(dsts)
    width = es * n
    af = _addr_fn(b, ops[1], inst)
    ws = [_reg_writer_lanes(b, d, es, signed) for d in dsts]
    ar = np.arange(n)
    if space == "param":
        pb = np.frombuffer(b.ex.param_bytes, dtype=np.uint8)
        a = ops[1]
        if isinstance(a.base, Sym):
            off = b.ex.param_offset[a.base.name] + a.offset
            if off + width > len(pb):
                raise b.fault_decode(inst, "ld.param past the end of the parameters")
            vals = pb[off:off + width].view(_UT[es]).copy()

            def h(act, full):
                idx = b.active_idx(act, full)
                for j, w in enumerate(ws):
                    if w is not None:
                        w(idx, np.full(len(idx), vals[j], dtype=_UT[es]))
            return h

        def h(act, full):
            idx = b.active_idx(act, full)
            addrs = af(idx)
            o = addrs - PARAM_BASE
            if len(o) and ((o < 0) | (o + width > len(pb))).any():
                raise _fault(b, inst, "ld.param outside the parameter buffer", lanes=idx, addrs=addrs)
            ix = o[:, None] + np.arange(width)
            raw = pb[ix].reshape(len(idx), n, es).copy().view(_UT[es]).reshape(len(idx), n)
            for j, w in enumerate(ws):
                if w is not None:
                    w(idx, raw[:, j])
        return h
    if space == "shared":
        sv = _View(b.smem)
        S = b.S
        trace = b.ex.want_trace

        is_cl = "shared::cluster" in mods       # DSM payload (cluster parts)

        def h(act, full):
            idx = b.active_idx(act, full)
            addrs = af(idx)
            fl, addrs, sl, rem = _shared_flat(b, inst, idx, addrs, width, True)
            v = sv.gather(width, es, fl // width)
            for j, w in enumerate(ws):
                if w is not None:
                    w(idx, v[:, j])
            if trace:
                b.pay = dsm_payload(b, idx, addrs, width, sl, rem) if is_cl else smem_payload(b, idx, addrs, width)
        return h
    if space == "local":
        return _local_access(b, inst, af, es, n, ws, None)
    # global / generic / const
    gv = _View(b.ex.mem.data)
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        if space == "generic" and len(addrs) and (addrs < GLOBAL_BASE).any():
            return _generic(b, inst, idx, addrs, width, es, n, ws, None)
        _gcheck(b, inst, idx, addrs, width)
        v = gv.gather(width, es, (addrs - GLOBAL_BASE) // width)
        for j, w in enumerate(ws):
            if w is not None:
                w(idx, v[:, j])
        if trace:
            b.pay = gmem_payload(b, idx, addrs, width, l1=l1_ok, wavefronts=True, warm=True)
            if len(idx):
                # the lines' identity, as for cp.async: SMs of one GPC share the L2 lookup of the same lines
                # (H200 l2_coalesce_pairs measured it with ld.global.cg; components/memory.py)
                b.pay[:, 1] += _line_key(b, idx, addrs) << 32
    return h


def _generic(b, inst, idx, addrs, width, es, n, ws, rs):
    """Generic addressing: split lanes between the shared window and global memory."""
    sh = (addrs >= SHARED_WINDOW) & (addrs < SHARED_WINDOW + (1 << 32))
    pm = (addrs >= PARAM_BASE) & (addrs < PARAM_BASE + (1 << 32))
    gl = ~sh & ~pm
    if pm.any():
        if rs is not None:
            raise _fault(b, inst, "store to kernel parameter space", lanes=idx[pm], addrs=addrs[pm])
        pb = np.frombuffer(b.ex.param_bytes, dtype=np.uint8)
        i2, o = idx[pm], addrs[pm] - PARAM_BASE
        if ((o < 0) | (o + width > len(pb))).any():
            raise _fault(b, inst, "load outside the kernel parameters", lanes=i2, addrs=addrs[pm])
        raw = pb[o[:, None] + np.arange(width)].reshape(len(i2), n, es).copy().view(_UT[es]).reshape(len(i2), n)
        for j, w in enumerate(ws):
            if w is not None:
                w(i2, raw[:, j])
    ar = np.arange(n)
    if sh.any():
        i2, a2 = idx[sh], addrs[sh] - SHARED_WINDOW
        sl2, a2, _r = _cluster_slots(b, inst, i2, a2)     # generic mapa: another CTA of the cluster
        _scheck(b, inst, i2, a2, width)
        fl = sl2 * b.S + a2
        sv = b.smem[: (b.smem.size // es) * es].view(_UT[es])
        if rs is None:
            v = sv[(fl // es)[:, None] + ar]
            for j, w in enumerate(ws):
                if w is not None:
                    w(i2, v[:, j])
        else:
            for j, r in enumerate(rs):
                sv[fl // es + j] = r(i2)
    if gl.any():
        i2, a2 = idx[gl], addrs[gl]
        _gcheck(b, inst, i2, a2, width)
        gv = b.ex.mem.data[: (b.ex.mem.data.size // es) * es].view(_UT[es])
        if rs is None:
            v = gv[((a2 - GLOBAL_BASE) // es)[:, None] + ar]
            for j, w in enumerate(ws):
                if w is not None:
                    w(i2, v[:, j])
        else:
            for j, r in enumerate(rs):
                gv[(a2 - GLOBAL_BASE) // es + j] = r(i2)
        if b.ex.want_trace:
            b.pay = gmem_payload(b, i2, a2, width, write=rs is not None, wavefronts=True)


def _local_access(b, inst, af, es, n, ws, rs):
    LB = b.local_bytes

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        if b.lmem is None or (len(addrs) and ((addrs < 0) | (addrs + es * n > LB)).any()):
            raise _fault(b, inst, "local memory access out of range", lanes=idx, addrs=addrs)
        fl = idx * LB + addrs
        lv = b.lmem[: (b.lmem.size // es) * es].view(_UT[es])
        if rs is None:
            v = lv[(fl // es)[:, None] + np.arange(n)]
            for j, w in enumerate(ws):
                if w is not None:
                    w(idx, v[:, j])
        else:
            for j, r in enumerate(rs):
                lv[fl // es + j] = r(idx)
    return h


@decoder("st")
def _d_st(b, inst):
    mods = inst.mods
    if "async" in mods:      # clusters: st.async ... .mbarrier::complete_tx (remote store + tx) is not modelled
        raise b.fault_decode(inst, "st.async (remote store with mbarrier complete_tx) is not supported",
                             hint="st.shared::cluster followed by a remote mbarrier.arrive")
    space = _space(mods)
    t = _main_type(inst)
    es = SIZE[t]
    ops = inst.operands
    af = _addr_fn(b, ops[0], inst)
    srcs = _vals_of(ops[1])
    n = len(srcs)
    width = es * n
    rs = [_reg_reader_lanes(b, s, es) for s in srcs]
    trace = b.ex.want_trace
    if space == "shared":
        S = b.S
        svw = _View(b.smem)

        is_cl = "shared::cluster" in mods       # DSM payload (cluster parts)

        def h(act, full):
            idx = b.active_idx(act, full)
            addrs = af(idx)
            fl, addrs, sl, rem = _shared_flat(b, inst, idx, addrs, width, True)
            base = fl // width
            if n == 1:
                svw.wide(width)[base] = rs[0](idx)
            else:
                svw.scatter(width, base, np.stack([r(idx) for r in rs], axis=1))
            if trace:
                b.pay = dsm_payload(b, idx, addrs, width, sl, rem) if is_cl else smem_payload(b, idx, addrs, width)
        return h
    if space == "local":
        return _local_access(b, inst, af, es, n, None, rs)
    data = b.ex.mem.data
    gvw = _View(data)

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        if space == "generic" and len(addrs) and (addrs < GLOBAL_BASE).any():
            return _generic(b, inst, idx, addrs, width, es, n, None, rs)
        _gcheck(b, inst, idx, addrs, width)
        base = (addrs - GLOBAL_BASE) // width
        if n == 1:
            gvw.wide(width)[base] = rs[0](idx)
        else:
            gvw.scatter(width, base, np.stack([r(idx) for r in rs], axis=1))
        if trace:
            b.pay = gmem_payload(b, idx, addrs, width, write=True, wavefronts=True)
    return h


# ------------------------------------------------------------------------------------------------ atomics
@decoder("atom", "red")
def _d_atom(b, inst):
    mods = inst.mods
    if "async" in mods:      # clusters: red.async ... .mbarrier::complete_tx is not modelled
        raise b.fault_decode(inst, "red.async (remote reduction with mbarrier complete_tx) is not supported",
                             hint="red.shared::cluster followed by a remote mbarrier.arrive")
    space = _space(mods)
    t = _main_type(inst)
    es = SIZE[t]
    opn = next((m for m in mods if m in ("add", "min", "max", "inc", "dec", "cas", "exch", "and", "or", "xor")), None)
    if opn is None:
        raise b.fault_decode(inst, "atomic operation not supported")
    ops = inst.operands
    is_red = inst.opcode == "red"
    k = 0 if is_red else 1
    nv = 8 if "v8" in mods else 4 if "v4" in mods else 2 if "v2" in mods else 1
    # vector atomics (atom.add.v2.f32 {d0, d1}, [a], {b0, b1}): element j at a + j * size, one atomic each
    def items(op):
        if isinstance(op, Vec):
            if len(op.items) != nv:
                raise b.fault_decode(inst, f"vector atomic with {len(op.items)} registers for .v{nv}")
            return list(op.items)
        if nv != 1:
            raise b.fault_decode(inst, f".v{nv} atomic needs a {{...}} register vector")
        return [op]
    wdsts = [None] * nv if is_red else [_reg_writer_lanes(b, o, es, False) for o in items(ops[0])]
    af = _addr_fn(b, ops[k], inst)
    rbs = [_reg_reader_lanes(b, o, es) for o in items(ops[k + 1])]
    if opn == "cas" and nv != 1:
        raise b.fault_decode(inst, "vector atom.cas is not a PTX form")
    rc = _reg_reader_lanes(b, ops[k + 2], es) if opn == "cas" else None
    dt = np.dtype(NP_TYPE[t]) if t not in ("b32", "b64") else np.dtype(_UT[es])
    trace = b.ex.want_trace

    def apply(old, v, c):
        if opn == "add":
            return (old + v).astype(dt)
        if opn == "min":
            return np.fmin(old, v) if dt.kind == "f" else np.minimum(old, v)
        if opn == "max":
            return np.fmax(old, v) if dt.kind == "f" else np.maximum(old, v)
        if opn == "exch":
            return v
        if opn == "cas":
            return np.where(old == v, c, old)  # atom.cas d, [a], b, c: [a] = (old == b) ? c : old
        if opn == "and":
            return old & v
        if opn == "or":
            return old | v
        if opn == "xor":
            return old ^ v
        if opn == "inc":
            return np.where(old >= v, 0, old + 1).astype(dt)
        if opn == "dec":
            return np.where((old == 0) | (old > v), v, old - 1).astype(dt)

    is_cl = "shared::cluster" in mods       # DSM payload (cluster parts)
    lockish = opn in ("cas", "exch") and nv == 1   # lock-word bits for the timing pass (_atom_lock_bits)

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        sl = rem = None
        if space == "shared":
            fl, addrs, sl, rem = _shared_flat(b, inst, idx, addrs, es, True)
            buf = b.smem
        else:
            _gcheck(b, inst, idx, addrs, es)
            buf = b.ex.mem.data
            fl = addrs - GLOBAL_BASE
        if nv > 1:
            if space == "shared":
                _scheck(b, inst, idx, addrs + (nv - 1) * es, es)
            else:
                _gcheck(b, inst, idx, addrs, es * nv)
        view = buf[: (buf.size // es) * es].view(_UT[es]).view(dt)
        c = rc(idx).view(dt) if rc is not None else None
        for j in range(nv):
            e = fl // es + j
            v = rbs[j](idx).view(dt)
            u, cnt = np.unique(e, return_counts=True)
            if len(u) == len(e):
                old = view[e].copy()
                view[e] = apply(old, v, c)
            else:                      # serialise lanes that hit the same address (lane order)
                old = np.empty(len(e), dtype=dt)
                for i in range(len(e)):
                    o = view[e[i]]
                    old[i] = o
                    view[e[i]] = apply(np.asarray([o], dtype=dt), v[i:i + 1], None if c is None else c[i:i + 1])[0]
            if wdsts[j] is not None:
                wdsts[j](idx, old.view(_UT[es]))
        if trace:
            w = es * nv
            b.pay = ((dsm_payload(b, idx, addrs, w, sl, rem) if is_cl else smem_payload(b, idx, addrs, w))
                     if space == "shared" else gmem_payload(b, idx, addrs, w))
            if lockish and space != "shared" and len(idx):
                ok = (old == v) if opn == "cas" else None
                b.pay[:, 1] |= _atom_lock_bits(b, idx, addrs, ok) << 32
            if space != "shared" and not is_cl and len(idx):
                _atom_serial_bits(b, idx, addrs, es, nv)
    return h


ATOM_ELEMS_SHIFT = 19          # a global atomic's element operations in a3 bits 19-31 (lines below)
ATOM_ELEMS_MAX = (1 << 13) - 1


def _atom_serial_bits(b, idx, addrs, es, nv) -> None:
    """What a global atomic asks of the L2 units that serialise it (components/sm_core.py ``_atomg``), in a3's high
    bits: 32-44 the warp's lane-operations on its busiest word (same-address lanes are performed one after the
    other), 45-57 those on its busiest 128-B line (a line's unit serves one request at a time), 58-62 that word's
    4-B index in its line; a2 bits 40-63: the warp's lowest line (the units it is charged to:
    :func:`_atom_line_index`). Bundles sum the counts (runner/timing.py)."""
    W = b.W
    w = (idx >> 5).astype(np.int64)
    off = addrs.astype(np.int64) - GLOBAL_BASE
    # vector element j of a lane addresses its word + j: every element word has the element-0 word's multiplicity
    u, cnt = np.unique((w << 40) | (off // es), return_counts=True)
    uw, word = u >> 40, u & ((1 << 40) - 1)
    order = np.lexsort((-cnt, uw))                     # per warp, the busiest word first (ties: the lowest)
    head = np.ones(len(order), dtype=bool)
    head[1:] = uw[order][1:] != uw[order][:-1]
    sel = order[head]
    k = np.zeros(W, dtype=np.int64)
    wo = np.zeros(W, dtype=np.int64)
    k[uw[sel]] = cnt[sel]
    wo[uw[sel]] = ((word[sel] * es) & 127) >> 2
    el = (off[:, None] + es * np.arange(nv)[None, :]) >> 7 if nv > 1 else (off >> 7)[:, None]
    u, cnt = np.unique((np.repeat(w, el.shape[1]) << 40) | el.ravel(), return_counts=True)
    n = np.zeros(W, dtype=np.int64)
    np.maximum.at(n, u >> 40, cnt)
    b.pay[:, 3] |= (np.minimum(k, 0x1FFF) | (np.minimum(n, 0x1FFF) << 13) | (wo << 26)) << 32
    # a3 bits 19-31: the warp's element operations (active lanes x vector elements: what the L2's atomic ALUs
    # perform; bits 0-18 keep its lines)
    b.pay[:, 3] |= np.minimum(np.bincount(w, minlength=W) * nv, ATOM_ELEMS_MAX) << ATOM_ELEMS_SHIFT
    b.pay[:, 2] |= _atom_line_index(b, idx, addrs) << 40


def _atom_line_index(b, idx, addrs) -> np.ndarray:
    """(W,) a global atomic's lowest 128-B line, for the L2 units it is charged to (components/memory.py
    ``atomic_perform``, which groups lines by ``l2.atomic_unit_bytes``): ``(line index mod 2**23) << 1 | 1``
    (0 = no lanes). Lines 1 GiB apart share an identity (none of the bundled launches has atomics that far apart)."""
    lo, has = _lowest_line(b, idx, (addrs.astype(np.int64) - GLOBAL_BASE) >> 7)
    return np.where(has, ((lo & 0x7FFFFF) << 1) | 1, 0)


def _lowest_line(b, idx, lines) -> tuple[np.ndarray, np.ndarray]:
    """(W,) each warp's lowest of its lanes' 128-B line indices ``lines``, and (W,) whether it has lanes."""
    lo = np.full(b.W, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(lo, (idx >> 5).astype(np.int64), lines)
    return lo, lo != np.iinfo(np.int64).max


def _atom_lock_bits(b, idx, addrs, took) -> np.ndarray:
    """(W,) lock-word bits of a global atom.cas / atom.exch for the timing pass (components/atomics.py): a
    24-bit hash of the word's address (1 .. 2**24-1) when all of the warp's active lanes address one word, with
    WRITE (bit 25: the word is written: an exch, or a cas that took it) and ACQUIRE (bit 24: a cas that took it,
    ``took`` = lanes whose old value equalled the compare value); 0 for other warps."""
    W = b.W
    w = (idx >> 5).astype(np.int64)
    a = addrs.astype(np.int64)
    lo = np.full(W, np.iinfo(np.int64).max, np.int64)
    hi = np.full(W, -1, np.int64)
    np.minimum.at(lo, w, a)
    np.maximum.at(hi, w, a)
    one = (hi >= 0) & (lo == hi)
    k = ((lo.astype(np.uint64) >> np.uint64(2)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    key = (k.astype(np.int64) & ((1 << 24) - 1)) | 1
    flags = np.full(W, 2 << 24, np.int64)             # WRITE
    if took is not None:
        t = np.zeros(W, np.int64)
        np.maximum.at(t, w, took.astype(np.int64))
        flags = t * (3 << 24)                          # a cas writes only when it takes the word
    bits = np.where(one, key | flags, 0)
    return np.where(bits & (3 << 24), bits, 0)


# ------------------------------------------------------------------------------------------------ cp.async
def _line_key(b, idx, src) -> np.ndarray:
    """(W,) identity of each warp's global read (cp.async source, ld.global address: a hash of its lowest 128-B line,
    1 .. 2**24-1; 0 = no lanes), carried in payload a1's high bits: the timing pass's L2 lookup table
    (components/memory.py) needs to know which requests from different SMs ask for the same lines (the trace has no
    addresses)."""
    lo, has = _lowest_line(b, idx, ((src - GLOBAL_BASE) >> 7).astype(np.int64))
    k = (lo.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    return np.where(has, k.astype(np.int64) | 1, 0)


@decoder("cp.async")
def _d_cp_async(b, inst):
    ops = inst.operands
    dst_f = _addr_fn(b, ops[0], inst)
    src_f = _addr_fn(b, ops[1], inst)
    size = int(ops[2].value)
    src_size = None
    ignore = None
    if len(ops) > 3:
        o3 = ops[3]
        if isinstance(o3, Reg) and b.R[o3.index].dtype == np.bool_:
            ignore = b.R[o3.index]
        elif isinstance(o3, (Reg, Imm)):
            if isinstance(o3, Reg) and b.R[o3.index].dtype == np.uint64 and len(ops) == 4:
                src_size = None       # cache policy operand
            else:
                src_size = o3
    if src_size is not None:
        ssz = b.R[src_size.index] if isinstance(src_size, Reg) else None
        ssz_c = int(src_size.value) if isinstance(src_size, Imm) else None
    S = b.S
    data = b.ex.mem.data
    trace = b.ex.want_trace
    arw = np.arange(size)
    gdv = _View(data)
    sdv = _View(b.smem)

    def h(act, full):
        idx = b.active_idx(act, full)
        dst = dst_f(idx)
        _scheck(b, inst, idx, dst, size)
        if src_size is None:
            n = np.full(len(idx), size, dtype=np.int64)
        elif ssz is not None:
            n = np.minimum(ssz[idx].astype(np.int64), size)
        else:
            n = np.full(len(idx), min(ssz_c, size), dtype=np.int64)
        if ignore is not None:
            n = np.where(ignore[idx], 0, n)
        rd = n > 0
        fl = b.lane_cta[idx] * S + dst
        if size in (4, 8, 16) and len(idx) and bool((n == size).all()):
            src = src_f(idx)
            _gcheck(b, inst, idx, src, size)
            o = src - GLOBAL_BASE
            if not (o % size).any() and not (fl % size).any():
                sdv.wide(size)[fl // size] = gdv.wide(size)[o // size]
                if trace:
                    b.pay = gmem_payload(b, idx, src, size, warm=True)
                    b.pay[:, 1] += _line_key(b, idx, src) << 32
                return
        block = np.zeros((len(idx), size), dtype=np.uint8)
        if rd.any():
            i2 = idx[rd]
            src = src_f(i2)
            n2 = n[rd]
            full_sz = bool((n2 == size).all())
            _gcheck(b, inst, i2, src, size if full_sz else 1)
            if not full_sz:
                mem = b.ex.mem
                end_ok = mem.check_range(src + n2 - 1, 1)
                if not end_ok.all():
                    k = np.flatnonzero(~end_ok)
                    raise _fault(b, inst, "cp.async source out of bounds", lanes=i2[k], addrs=src[k])
            o = src - GLOBAL_BASE
            if size % 4 == 0 and full_sz and not (o % 4).any():
                gv = data[: (data.size // 4) * 4].view(np.uint32)
                vals = gv[(o // 4)[:, None] + np.arange(size // 4)].view(np.uint8).reshape(len(i2), size)
            else:
                ix = np.minimum(o[:, None] + arw, o[:, None] + np.maximum(n2[:, None] - 1, 0))
                vals = data[ix]
                vals = np.where(arw[None, :] < n2[:, None], vals, 0).astype(np.uint8)
            block[rd] = vals
            if trace:
                b.pay = gmem_payload(b, i2, src, size, nbytes=n2.astype(np.float64), warm=True)
                b.pay[:, 1] += _line_key(b, i2, src) << 32
        elif trace:
            b.pay = np.zeros((b.W, 4), dtype=np.int64)
        if size % 4 == 0 and not (fl % 4).any():
            sv = b.smem[: (b.smem.size // 4) * 4].view(np.uint32)
            sv[(fl // 4)[:, None] + np.arange(size // 4)] = block.view(np.uint32).reshape(len(idx), size // 4)
        else:
            b.smem[fl[:, None] + arw] = block
    return h


def _wait_payload(b, inst):
    ops = inst.operands
    n = int(ops[0].value) if ops and isinstance(ops[0], Imm) else 0
    pay = np.zeros((b.W, 4), dtype=np.int64)
    pay[:, 0] = n

    def h(act, full):
        b.pay = pay
    return h


@decoder("cp.async.commit_group", "cp.async.bulk.commit_group", "wgmma.fence", "wgmma.commit_group")
def _d_commit(b, inst):
    return None


@decoder("cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.wait_group", "wgmma.wait_group")
def _d_wait(b, inst):
    return _wait_payload(b, inst)


# ------------------------------------------------------------------------------------------------ warp collectives
@decoder("shfl.sync", "shfl")
def _d_shfl(b, inst):
    mode = next(m for m in inst.mods if m in ("idx", "up", "down", "bfly"))
    ops = inst.operands
    dst = ops[0]
    wp = None
    if isinstance(dst, Pair):
        wd = b.writer(dst.first, "b32", inst)
        wp = b.writer(dst.second, "pred", inst)
    else:
        wd = b.writer(dst, "b32", inst)
    a = b.val(ops[1], "b32", inst)
    bb = b.val(ops[2], "b32", inst)
    cc = b.val(ops[3], "b32", inst)
    L = b.L
    lane = np.arange(L, dtype=np.int64) & 31
    base = np.arange(L, dtype=np.int64) - lane
    const = None
    if type(bb) is not _Lazy and type(cc) is not _Lazy and not isinstance(bb, np.ndarray) and not isinstance(cc, np.ndarray):
        const = _shfl_src(mode, lane, int(bb), int(cc), base)

    def h(act, full):
        if const is not None:
            src, pval = const
        else:
            src, pval = _shfl_src(mode, lane, np.asarray(_get(bb)).astype(np.int64),
                                  np.asarray(_get(cc)).astype(np.int64), base)
        x = np.asarray(_get(a))
        wd(x[src], act, full)
        if wp is not None:
            wp(pval, act, full)
    return h


def _shfl_src(mode, lane, bval, c, base):
    bval = bval & 31
    cval = c & 31
    seg = (c >> 8) & 31
    maxl = (lane & seg) | (cval & ~seg)
    minl = lane & seg
    if mode == "up":
        j = lane - bval
        p = j >= maxl
    elif mode == "down":
        j = lane + bval
        p = j <= maxl
    elif mode == "bfly":
        j = lane ^ bval
        p = j <= maxl
    else:
        j = minl | (bval & ~seg)
        p = j <= maxl
    j = np.where(p, j, lane)
    return base + j, p


@decoder("vote.sync", "vote")
def _d_vote(b, inst):
    mode = next(m for m in inst.mods if m in ("all", "any", "uni", "ballot"))
    ops = inst.operands
    w = b.writer(ops[0], "b32" if mode == "ballot" else "pred", inst)
    p = b.val(ops[1], "pred", inst)
    W = b.W
    weights = (np.uint64(1) << np.arange(32, dtype=np.uint64))

    def h(act, full):
        pv = np.asarray(_get(p), dtype=bool) & act
        a2 = act.reshape(W, 32)
        p2 = pv.reshape(W, 32)
        if mode == "ballot":
            r = (p2.astype(np.uint64) * weights).sum(axis=1).astype(np.uint32)
        elif mode == "all":
            r = (p2 | ~a2).all(axis=1)
        elif mode == "any":
            r = p2.any(axis=1)
        else:
            r = (p2 == a2).all(axis=1) | (~p2 | ~a2).all(axis=1)
        w(np.repeat(r, 32), act, full)
    return h


@decoder("elect.sync")
def _d_elect(b, inst):
    ops = inst.operands
    dst = ops[0]
    wr = wp = None
    if isinstance(dst, Pair):
        wr = b.writer(dst.first, "b32", inst)
        wp = b.writer(dst.second, "pred", inst)
    elif isinstance(dst, Reg) and b.R[dst.index].dtype == np.bool_:
        wp = b.writer(dst, "pred", inst)
    else:
        wr = b.writer(dst, "b32", inst)
    mv = b.val(ops[1], "b32", inst)
    W = b.W
    lanes = np.arange(32)

    def h(act, full):
        m = np.asarray(_get(mv)).astype(np.uint64)
        bits = ((m >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool) if m.ndim == 0 else \
            ((m.reshape(W, 32)[:, :1] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool).reshape(-1)
        e = act & np.tile(bits, W) if m.ndim == 0 else act & bits
        e2 = e.reshape(W, 32)
        leader = np.where(e2.any(axis=1), e2.argmax(axis=1), 0)
        if wp is not None:
            wp(np.repeat(leader, 32) == np.tile(lanes, W), act, full)
        if wr is not None:
            wr(np.repeat(leader, 32).astype(np.uint32), act, full)
    return h


@decoder("redux.sync")
def _d_redux(b, inst):
    opn = next(m for m in inst.mods if m in ("add", "min", "max", "and", "or", "xor"))
    t = _main_type(inst)
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    a = b.val(ops[1], t, inst)
    W = b.W
    dt = np.dtype(NP_TYPE[t])

    def h(act, full):
        x = np.asarray(_get(a)).astype(dt).reshape(W, 32)
        m = act.reshape(W, 32)
        if opn == "add":
            r = np.where(m, x, 0).sum(axis=1, dtype=dt)
        elif opn == "min":
            r = np.where(m, x, np.iinfo(dt).max).min(axis=1)
        elif opn == "max":
            r = np.where(m, x, np.iinfo(dt).min).max(axis=1)
        elif opn == "and":
            r = np.bitwise_and.reduce(np.where(m, x, dt.type(-1) if dt.kind == "i" else np.iinfo(dt).max), axis=1)
        elif opn == "or":
            r = np.bitwise_or.reduce(np.where(m, x, 0), axis=1)
        else:
            r = np.bitwise_xor.reduce(np.where(m, x, 0), axis=1)
        w(np.repeat(r.astype(dt), 32), act, full)
    return h


# ------------------------------------------------------------------------------------------------ mbarrier
def _mbar_state(b, addr):
    st = b.mbar.get(addr)
    if st is None:
        C = b.C
        st = b.mbar[addr] = {"exp": np.zeros(C, np.int64), "pend": np.zeros(C, np.int64),
                             "phase": np.zeros(C, np.int64), "tx": np.zeros(C, np.int64),
                             "init": np.zeros(C, bool)}
    return st


def _mbar_addr_fn(b, op, inst):
    af = _addr_fn(b, op, inst)

    def f(idx):
        a = af(idx)
        g = a >= SHARED_WINDOW
        if g.any():
            a = np.where(g, a - SHARED_WINDOW, a)
        return a
    return f


def _mbar_complete(st, ctas):
    ctas = np.unique(ctas)
    done = ctas[(st["pend"][ctas] <= 0) & (st["tx"][ctas] == 0) & st["init"][ctas]]
    if len(done):
        st["phase"][done] += 1
        st["pend"][done] = st["exp"][done]


def _key(b, idx, addrs):
    return (b.ctas[b.lane_cta[idx]] << 32) | addrs


def _key_slots(b, slots, addrs):
    """mbarrier key of the barrier at CTA-local ``addrs`` of the CTAs in batch ``slots`` (remote arrives)."""
    return (b.ctas[slots] << 32) | addrs


def mbar_complete_tx(b, cta_slots, addrs, nbytes):
    for a in np.unique(addrs):
        sel = addrs == a
        st = _mbar_state(b, int(a))
        np.subtract.at(st["tx"], cta_slots[sel], nbytes[sel])
        _mbar_complete(st, cta_slots[sel])


@decoder("mbarrier.init")
def _d_mbar_init(b, inst):
    ops = inst.operands
    af = _mbar_addr_fn(b, ops[0], inst)
    cnt = b.val(ops[1], "u32", inst)
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        if not len(idx):
            if trace:
                b.pay = np.zeros((b.W, 4), np.int64)
            return
        addrs = af(idx)
        _scheck(b, inst, idx, addrs, 8)
        c = np.asarray(_get(cnt))
        c = np.broadcast_to(c, (b.L,))[idx].astype(np.int64) if c.ndim else np.full(len(idx), int(c))
        slots = b.lane_cta[idx]
        for a in np.unique(addrs):
            sel = addrs == a
            st = _mbar_state(b, int(a))
            s = slots[sel]
            st["exp"][s] = c[sel]
            st["pend"][s] = c[sel]
            st["phase"][s] = 0
            st["tx"][s] = 0
            st["init"][s] = True
        if trace:
            pay = np.zeros((b.W, 4), np.int64)
            pay[:, 0] = b.warp_first(idx, c)
            pay[:, 1] = b.warp_first(idx, _key(b, idx, addrs))
            b.pay = pay
    return h


@decoder("mbarrier.inval")
def _d_mbar_inval(b, inst):
    ops = inst.operands
    af = _mbar_addr_fn(b, ops[0], inst)

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        slots = b.lane_cta[idx]
        for a in np.unique(addrs):
            st = b.mbar.get(int(a))
            if st is not None:
                st["init"][slots[addrs == a]] = False
    return h


@decoder("mbarrier.arrive", "mbarrier.arrive_drop", "cp.async.mbarrier.arrive", "mbarrier.expect_tx",
         "mbarrier.complete_tx")
def _d_mbar_arrive(b, inst):
    ops = inst.operands
    op = inst.opcode
    mods = inst.mods
    expect = "expect_tx" in mods or op == "mbarrier.expect_tx"
    if op in ("cp.async.mbarrier.arrive", "mbarrier.expect_tx", "mbarrier.complete_tx"):
        wst = None
        aop = ops[0]
        rest = ops[1:]
    else:
        wst = b.writer(ops[0], "b64", inst) if not isinstance(ops[0], Sink) else None
        aop = ops[1]
        rest = ops[2:]
    af = _mbar_addr_fn(b, aop, inst)
    extra = b.val(rest[0], "u32", inst) if rest else None
    arrives = op in ("mbarrier.arrive", "mbarrier.arrive_drop") or (op == "cp.async.mbarrier.arrive" and "noinc" in mods)
    drop = op == "mbarrier.arrive_drop"
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        if not len(idx):
            if trace:
                b.pay = np.zeros((b.W, 4), np.int64)
            return
        addrs = af(idx)
        slots, addrs, _rem = _cluster_slots(b, inst, idx, addrs)   # remote arrive: shared::cluster address
        x = None
        if extra is not None:
            e = np.asarray(_get(extra))
            x = (e[idx] if e.ndim else np.full(len(idx), int(e))).astype(np.int64)
        token = np.zeros(len(idx), np.int64)
        # arrivals per lane: the count operand of mbarrier.arrive{,_drop} [a], count (default 1); the timing
        # pass replays the warp's summed arrivals (pay[:, 2]), so a single elected thread arriving with count
        # 128 completes a barrier initialised with 128 there too
        narr = x if (arrives and x is not None and not expect) else None
        for a in np.unique(addrs):
            sel = addrs == a
            st = _mbar_state(b, int(a))
            s = slots[sel]
            token[sel] = st["phase"][s]
            if op == "mbarrier.complete_tx":
                np.subtract.at(st["tx"], s, x[sel])
            elif expect:
                np.add.at(st["tx"], s, x[sel])
            if arrives:
                cnt = x[sel] if (x is not None and not expect) else np.ones(int(sel.sum()), np.int64)
                np.subtract.at(st["pend"], s, cnt)
                if drop:      # arrive_drop: the expected count of this and later phases drops by the count
                    np.subtract.at(st["exp"], s, cnt)
            _mbar_complete(st, s)
        if wst is not None:
            buf = np.zeros(b.L, np.uint64)
            buf[idx] = token.astype(np.uint64)
            m = np.zeros(b.L, bool)
            m[idx] = True
            wst(buf, m, False)
        if trace:
            pay = np.zeros((b.W, 4), np.int64)
            wi = idx >> 5
            if expect and x is not None:
                pay[:, 0] = np.bincount(wi, weights=x, minlength=b.W)[:b.W].astype(np.int64)
            pay[:, 1] = b.warp_first(idx, _key_slots(b, slots, addrs))
            if not arrives:
                pay[:, 2] = 0
            elif narr is not None:
                pay[:, 2] = np.bincount(wi, weights=narr, minlength=b.W)[:b.W].astype(np.int64)
            else:
                pay[:, 2] = np.bincount(wi, minlength=b.W)[:b.W]
            b.pay = pay
    return h


@decoder("mbarrier.try_wait", "mbarrier.test_wait")
def _d_mbar_wait(b, inst):
    ops = inst.operands
    parity = "parity" in inst.mods
    wp = b.writer(ops[0], "pred", inst)
    af = _mbar_addr_fn(b, ops[1], inst)
    ph = b.val(ops[2], "b64" if not parity else "b32", inst)
    hint = int(ops[3].value) if len(ops) > 3 and isinstance(ops[3], Imm) else -1
    # a suspendTimeHint in a register (nvcc passes it as "r"): its value (first active lane) is the payload
    hint_v = b.val(ops[3], "b32", inst) if len(ops) > 3 and not isinstance(ops[3], Imm) else None
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        addrs = af(idx)
        slots, addrs, _rem = _cluster_slots(b, inst, idx, addrs)
        pv = np.asarray(_get(ph))
        p = (pv[idx] if pv.ndim else np.full(len(idx), int(pv))).astype(np.int64)
        done = np.zeros(len(idx), np.int64)
        for a in np.unique(addrs):
            sel = addrs == a
            st = _mbar_state(b, int(a))
            done[sel] = st["phase"][slots[sel]]
        if parity:
            p = p & 1
            awaited = np.where((done & 1) == p, done, done - 1)
        else:
            awaited = p
        ok = done > awaited
        res = np.zeros(b.L, bool)
        res[idx] = ok
        wp(res, act, full)
        if not ok.all():
            b.wait_failed = True
        if trace:
            pay = np.zeros((b.W, 4), np.int64)
            pay[:, 0] = b.warp_first(idx, awaited)
            pay[:, 1] = b.warp_first(idx, _key_slots(b, slots, addrs))
            if hint_v is not None:
                hv = np.asarray(_get(hint_v)).astype(np.int64)
                pay[:, 2] = b.warp_first(idx, hv[idx]) if hv.ndim else int(hv)
            else:
                pay[:, 2] = hint
            okw = np.ones(b.W, bool)
            if len(idx):
                np.logical_and.at(okw, idx >> 5, ok)
            pay[:, 3] = okw
            b.pay = pay
    return h


@decoder("mbarrier.pending_count")
def _d_mbar_pending(b, inst):
    raise b.fault_decode(inst, "mbarrier.pending_count is not supported")


# ------------------------------------------------------------------------------------------------ TMA / bulk copies
class _TmapAdapter:
    """memory.TensorMap lists a stride for every dim (strides_bytes[0] == elem_bytes); tma_ops expects the
    CUtensorMap convention (strides of dims >= 1 only). Adapt without copying the other fields."""

    def __init__(self, tm):
        self._tm = tm
        self.strides_bytes = tuple(tm.strides_bytes[1:])

    def __getattr__(self, k):
        return getattr(self._tm, k)


def _adapt_tmap(tm):
    if len(tm.strides_bytes) == len(tm.dims) and len(tm.dims) >= 1:
        return _TmapAdapter(tm)
    return tm


def _tmap_of(b, addr, inst, idx):
    try:
        return _adapt_tmap(b.ex.mem.tensormap_from_param(int(addr)))
    except ValueError as e:
        raise _fault(b, inst, f"tensor-map operand is not a tensormap: {e}", lanes=idx[:1],
                     addrs=np.array([addr]), hint="the param-space address of a .param .b8 tmap[128]") from None


def _fast_rows(mem, tm, coords):
    """Row offsets (into mem.data) of every box row, or None if some element is out of bounds / unaligned.
    coords (n, rank) innermost-first; returns (n, R) int64 and the inner row bytes."""
    tm0 = tm._tm if isinstance(tm, _TmapAdapter) else tm
    dims, box, eb = tm0.dims, tm0.box, int(tm0.elem_bytes)
    full_strides = list(tm0.strides_bytes) if len(tm0.strides_bytes) == len(dims) else [eb] + list(tm0.strides_bytes)
    c = coords
    for d in range(len(dims)):
        if (c[:, d] < 0).any() or (c[:, d] + box[d] > dims[d]).any():
            return None, 0
    inner = box[0] * eb
    if inner % 8:
        return None, 0
    offs = (int(tm0.base_addr) - GLOBAL_BASE) + c[:, 0] * eb            # (n,)
    rows = offs[:, None]
    for d in range(1, len(dims)):                                       # i_1 fastest
        add = (c[:, d, None] + np.arange(box[d])[None, :]) * full_strides[d]   # (n, b_d)
        rows = (add[:, :, None] + rows[:, None, :]).reshape(len(c), -1)
    if (rows % 8).any():
        return None, 0
    return rows, inner


def _chunk_perm(sw, nb, dst):
    """(n, nb//16) positions: dense 16-B chunk k of op i lands at chunk perm[i, k] of its smem image."""
    k = np.arange(nb // 16, dtype=np.int64)
    a = dst[:, None] + 16 * k[None, :]
    return (tma_ops.swizzle_addr(a, sw) - dst[:, None]) // 16


def _fast_tma_load(b, tm, coords, dst):
    mem = b.ex.mem
    rows, inner = _fast_rows(mem, tm, coords)
    if rows is None:
        return None
    n = len(coords)
    sw = int(tm.swizzle_bytes or 0)
    if sw and ((dst % 128).any() or inner > sw):
        return None
    gv = mem.data[: (mem.data.size // 8) * 8].view(np.uint64)
    q = inner // 8
    dense = gv[(rows // 8)[:, :, None] + np.arange(q)].reshape(n, -1)       # (n, nb/8) u64
    nb = dense.shape[1] * 8
    if sw:
        perm = _chunk_perm(sw, nb, dst)
        d2 = dense.reshape(n, nb // 16, 2)
        img = np.empty_like(d2)
        img[np.arange(n)[:, None], perm] = d2
        dense = img.reshape(n, -1)
    inb = np.full(n, nb, np.int64)
    secs = None
    if b.ex.touched is not None:
        s0 = rows >> 5
        ns = (inner + 31) // 32 + (1 if (rows % 32).any() else 0)
        sec = (s0[:, :, None] + np.arange(ns)).reshape(n, -1)
        if (rows % 32).any():
            keep = (sec << 5) < (rows.repeat(ns, axis=1) + inner)
        else:
            keep = None
        opi = np.repeat(np.arange(n), sec.shape[1])
        sec = sec.reshape(-1)
        if keep is not None:
            keep = keep.reshape(-1)
            sec, opi = sec[keep], opi[keep]
        secs = (sec, opi)
    return dense, inb, secs


def _fast_tma_store(b, tm, coords, images_u64, src):
    mem = b.ex.mem
    rows, inner = _fast_rows(mem, tm, coords)
    if rows is None:
        return None
    n = len(coords)
    sw = int(tm.swizzle_bytes or 0)
    if sw and ((src % 128).any() or inner > sw):
        return None
    nb = images_u64.shape[1] * 8
    if sw:
        perm = _chunk_perm(sw, nb, src)
        d2 = images_u64.reshape(n, nb // 16, 2)
        dense = d2[np.arange(n)[:, None], perm].reshape(n, -1)
    else:
        dense = images_u64
    gv = mem.data[: (mem.data.size // 8) * 8].view(np.uint64)
    q = inner // 8
    gv[(rows // 8)[:, :, None] + np.arange(q)] = dense.reshape(n, rows.shape[1], q)
    if b.ex.addr is not None:   # each box row's sectors (rows may start inside a sector)
        s0, s1 = rows >> 5, (rows + inner - 1) >> 5
        sec = s0[:, :, None] + np.arange((inner + 31) // 32 + 1)
        b.ex.addr.l2(sec[sec <= s1[:, :, None]], True)
    if b.ex.touched is not None:
        s = ((rows >> 5)[:, :, None] + np.arange((inner + 31) // 32)).reshape(-1)
        s = s[s <= ((rows.max() + inner - 1) >> 5)]
        e = (rows + inner - 1) >> 5
        b.ex.touched[s] = True
        b.ex.touched[e] = True
        b.ex.written[s] = True
        b.ex.written[e] = True
    return np.full(n, nb, np.int64)


@decoder("cp.async.bulk.tensor")
def _d_tma(b, inst):
    mods = inst.mods
    if inst.kind == Kind.TMA_STORE:
        return _tma_store(b, inst)
    if "tile" not in mods and any(m in mods for m in ("im2col", "im2col_no_offs", "tile::gather4")):
        raise b.fault_decode(inst, "only tiled cp.async.bulk.tensor is supported")
    ops = inst.operands
    dst_f = _addr_fn(b, ops[0], inst)
    t = ops[1]
    if not isinstance(t, Addr) or not t.coords:
        raise b.fault_decode(inst, "expected [tensorMap, {coords}]")
    tm_reg = b.R[t.base.index] if isinstance(t.base, Reg) else None
    tm_const = b.sym_addr(t.base, inst) if isinstance(t.base, Sym) else None
    coord_vals = [b.val(c, "s32", inst) for c in t.coords]
    mb_f = _mbar_addr_fn(b, ops[2], inst) if len(ops) > 2 and isinstance(ops[2], Addr) else None
    trace = b.ex.want_trace
    S = b.S
    # ---- clusters: .multicast::cluster writes the box into every CTA of ctaMask (same CTA-local offsets of the
    # destination and the mbarrier), one L2 read (PTX ISA §9.7.9.25.5.1); payload a2 bits 40+ = ctaMask
    mcast = "multicast::cluster" in mods
    mask_v = None
    if mcast:
        if mb_f is None or len(ops) < 4:
            raise b.fault_decode(inst, "multicast::cluster needs [mbar] and a ctaMask operand")
        mask_v = b.val(ops[3], "b16", inst)

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = np.zeros((b.W, 4), np.int64) if trace else None
        if trace:
            pay[:, 1] = -1
        if len(idx) == 0:
            b.pay = pay
            return
        dst = dst_f(idx)
        tms, coords, slots = _tma_lane_operands(b, idx, tm_reg, tm_const, coord_vals)
        mba = mb_f(idx) if mb_f is not None else None
        # destination CTA(s): a shared::cluster address names one CTA of the cluster; multicast: every CTA of ctaMask
        dslot, dst, _r = _cluster_slots(b, inst, idx, dst)
        mslot = None
        if mba is not None:
            mslot, mba, _r = _cluster_slots(b, inst, idx, mba)
        rep = None
        if mcast:
            mv = np.asarray(_get(mask_v))
            cmask = (mv[idx] if mv.ndim else np.full(len(idx), int(mv))).astype(np.int64) & 0xFFFF
            if (cmask >> b.csize).any():
                k = np.flatnonzero(cmask >> b.csize)
                raise _fault(b, inst, f"ctaMask {int(cmask[k[0]]):#x} names CTAs outside the cluster of {b.csize}",
                             lanes=idx[k], hint="ctaMask bits below %cluster_nctarank")
            bits = (cmask[:, None] >> np.arange(b.csize)) & 1            # (lanes, ranks)
            rep = bits.sum(axis=1)
        for tv in np.unique(tms):
            sel = tms == tv
            tm = _tmap_of(b, tv, inst, idx[sel])
            i2 = idx[sel]
            d2 = dst[sel]
            _scheck(b, inst, i2, d2, tm.box_bytes)
            nb = tm.box_bytes
            fl = dslot[sel] * S + d2
            if mcast:     # one image per destination CTA of the mask
                base = slots[sel] - slots[sel] % b.csize
                rk = np.nonzero(bits[sel])
                fl_m = (base[rk[0]] + rk[1]) * S + d2[rk[0]]
            fast = _fast_tma_load(b, tm, coords[sel], d2) if b.ex.fast_tma else None
            if fast is not None:
                img64, inb, secs = fast
                sectors, opi = secs if secs is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
                sectors = sectors + (GLOBAL_BASE >> 5)
                if mcast:
                    img64, fl = img64[rk[0]], fl_m
                if not (fl % 8).any():
                    sv = b.smem[: (b.smem.size // 8) * 8].view(np.uint64)
                    sv[(fl // 8)[:, None] + np.arange(nb // 8)] = img64
                else:
                    b.smem[fl[:, None] + np.arange(nb)] = img64.view(np.uint8).reshape(len(fl), nb)
            else:
                images, inb, sectors, opi = tma_ops.tma_load(b.ex.mem.data, GLOBAL_BASE, tm, coords[sel],
                                                            smem_addrs=d2, with_op_index=True)
                if mcast:
                    images, fl = images[rk[0]], fl_m
                if nb % 8 == 0 and not (fl % 8).any():
                    sv = b.smem[: (b.smem.size // 8) * 8].view(np.uint64)
                    sv[(fl // 8)[:, None] + np.arange(nb // 8)] = images.view(np.uint64).reshape(len(fl), nb // 8)
                else:
                    b.smem[fl[:, None] + np.arange(nb)] = images
            if mba is not None:
                if mcast:
                    mbar_complete_tx(b, base[rk[0]] + rk[1], mba[sel][rk[0]], np.full(len(rk[0]), nb, np.int64))
                else:
                    mbar_complete_tx(b, mslot[sel], mba[sel], np.full(len(i2), nb, np.int64))
            if trace:
                newb = np.zeros(len(i2), np.int64)
                touched = b.ex.touched
                if touched is not None and len(sectors):
                    so = sectors - (GLOBAL_BASE >> 5)
                    am = b.ex.addr
                    new = ~touched[so]
                    sn, on = so[new], opi[new]
                    if len(sn):
                        stamp = b.ex.stamp
                        stamp[sn[::-1]] = on[::-1]          # the lowest op index wins a shared sector
                        win = stamp[sn] == on
                        newb = np.bincount(on[win], minlength=len(i2)).astype(np.int64) * 32
                        if am is not None:
                            am.dram(sn[win])
                        touched[sn] = True
                        b.ex.dram_read_sectors += int(newb.sum()) // 32
                    if am is not None:   # every operation's sectors (one read per multicast, by its issuer)
                        am.l2(so, False, b.ctas[(i2[opi] >> 5) // b.wpc])
                wi = i2 >> 5
                np.add.at(pay[:, 0], wi, nb)
                np.add.at(pay[:, 2], wi, newb)
                np.add.at(pay[:, 3], wi, inb + (tma_ops.box_key(tms[sel], coords[sel]) << tma_ops.BOX_KEY_SHIFT))
                if mba is not None:
                    pay[wi, 1] = _key_slots(b, mslot[sel], mba[sel])
                else:
                    pay[wi, 1] = -1
                if mcast:
                    pay[wi, 2] |= cmask[sel] << 40
        b.pay = pay
    return h


def _tma_store(b, inst):
    ops = inst.operands
    t = ops[0]
    tm_reg = b.R[t.base.index] if isinstance(t.base, Reg) else None
    tm_const = b.sym_addr(t.base, inst) if isinstance(t.base, Sym) else None
    coord_vals = [b.val(c, "s32", inst) for c in t.coords]
    src_f = _addr_fn(b, ops[1], inst)
    trace = b.ex.want_trace
    S = b.S
    if "add" in inst.mods or inst.opcode == "cp.reduce.async.bulk":
        raise b.fault_decode(inst, "bulk tensor reductions are not supported")

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = np.zeros((b.W, 4), np.int64) if trace else None
        if trace:
            pay[:, 1] = -1
        if len(idx) == 0:
            b.pay = pay
            return
        src = src_f(idx)
        tms, coords, slots = _tma_lane_operands(b, idx, tm_reg, tm_const, coord_vals)
        for tv in np.unique(tms):
            sel = tms == tv
            tm = _tmap_of(b, tv, inst, idx[sel])
            i2 = idx[sel]
            s2 = src[sel]
            nb = tm.box_bytes
            _scheck(b, inst, i2, s2, nb)
            fl = slots[sel] * S + s2
            inb = None
            if b.ex.fast_tma and nb % 8 == 0 and not (fl % 8).any():
                sv = b.smem[: (b.smem.size // 8) * 8].view(np.uint64)
                img64 = sv[(fl // 8)[:, None] + np.arange(nb // 8)]
                inb = _fast_tma_store(b, tm, coords[sel], img64, s2)
            if inb is None:
                images = b.smem[fl[:, None] + np.arange(nb)]
                inb, sectors = tma_ops.tma_store(b.ex.mem.data, GLOBAL_BASE, tm, coords[sel], images,
                                                 smem_addrs=s2)
                if b.ex.touched is not None and len(sectors):
                    if b.ex.addr is not None:
                        b.ex.addr.l2(sectors - (GLOBAL_BASE >> 5), True)
                    b.ex.touched[sectors - (GLOBAL_BASE >> 5)] = True
                    b.ex.written[sectors - (GLOBAL_BASE >> 5)] = True
            if trace:
                wi = i2 >> 5
                np.add.at(pay[:, 0], wi, nb)
                pay[wi, 1] = -1
                np.add.at(pay[:, 3], wi, inb)
        b.pay = pay
    return h


def _tma_lane_operands(b, idx, tm_reg, tm_const, coord_vals):
    """Per active lane of a cp.async.bulk.tensor: tensormap index, coordinates (n, rank) innermost-first, CTA slot."""
    tms = tm_reg[idx].astype(np.int64) if tm_reg is not None else np.full(len(idx), tm_const, np.int64)
    coords = np.stack([np.broadcast_to(np.asarray(_get(c)), (b.L,))[idx].astype(np.int64)
                       if np.ndim(_get(c)) else np.full(len(idx), int(_get(c)), np.int64)
                       for c in coord_vals], axis=1)
    return tms, coords, b.lane_cta[idx]


@decoder("cp.async.bulk")
def _d_bulk(b, inst):
    ops = inst.operands
    store = inst.kind == Kind.TMA_STORE
    dst_f = _addr_fn(b, ops[0], inst)
    src_f = _addr_fn(b, ops[1], inst)
    size = b.val(ops[2], "u32", inst)
    mb_f = _mbar_addr_fn(b, ops[3], inst) if len(ops) > 3 and isinstance(ops[3], Addr) else None
    trace = b.ex.want_trace
    S = b.S
    if not store and "global" not in inst.mods and "shared::cta" in inst.mods:
        return _bulk_s2s(b, inst, dst_f, src_f, size, mb_f)
    if not store and "global" not in inst.mods:
        raise b.fault_decode(inst, "only global<->shared and shared::cta->shared::cluster cp.async.bulk are supported")
    if "multicast::cluster" in inst.mods:
        raise b.fault_decode(inst, "non-tensor cp.async.bulk .multicast::cluster is not supported",
                             hint="cp.async.bulk.tensor ... .multicast::cluster (TMA multicast)")

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = np.zeros((b.W, 4), np.int64) if trace else None
        sz = np.asarray(_get(size))
        n = (sz[idx] if sz.ndim else np.full(len(idx), int(sz))).astype(np.int64)
        dst = dst_f(idx)
        src = src_f(idx)
        slots = b.lane_cta[idx]
        data = b.ex.mem.data
        for k in range(len(idx)):
            nb = int(n[k])
            if store:
                _scheck(b, inst, idx[k:k + 1], src[k:k + 1], nb)
                _gcheck(b, inst, idx[k:k + 1], dst[k:k + 1], nb)
                o = int(dst[k]) - GLOBAL_BASE
                s = int(slots[k]) * S + int(src[k])
                data[o:o + nb] = b.smem[s:s + nb]
            else:
                _scheck(b, inst, idx[k:k + 1], dst[k:k + 1], nb)
                _gcheck(b, inst, idx[k:k + 1], src[k:k + 1], nb)
                o = int(src[k]) - GLOBAL_BASE
                s = int(slots[k]) * S + int(dst[k])
                b.smem[s:s + nb] = data[o:o + nb]
            if trace:
                w = int(idx[k]) >> 5
                pay[w, 0] += nb
                pay[w, 3] += nb
                ga = int(dst[k] if store else src[k]) - GLOBAL_BASE
                if b.ex.touched is not None:
                    sl = slice(ga >> 5, (ga + nb + 31) >> 5)
                    am = b.ex.addr
                    if not store:
                        miss = ~b.ex.touched[sl]
                        nnew = int(miss.sum())
                        pay[w, 2] += nnew * 32
                        b.ex.dram_read_sectors += nnew
                        if am is not None and nnew:
                            am.dram(np.arange(sl.start, sl.stop)[miss])
                    if am is not None:
                        am.l2(np.arange(sl.start, sl.stop), store, int(b.ctas[w // b.wpc]))
                    if store:
                        b.ex.written[sl] = True
                    b.ex.touched[sl] = True
                pay[w, 1] = -1
        if mb_f is not None and not store and len(idx):
            mba = mb_f(idx)
            mbar_complete_tx(b, slots, mba, n)
            if trace:
                pay[idx >> 5, 1] = _key(b, idx, mba)
        b.pay = pay
    return h


# ---- clusters: cp.async.bulk.shared::cluster.shared::cta (PTX ISA §9.7.9.25.4.1) --------------------------
def _bulk_s2s(b, inst, dst_f, src_f, size, mb_f):
    """``cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]``: copy
    ``size`` bytes of the issuing CTA's shared memory into a CTA of its cluster (``dst`` a shared::cluster address),
    then complete_tx(size) on ``mbar``, which lives in the destination CTA. Payload (Kind TMA_LOAD, lowered to
    OP_DSM_COPY): a0 bytes, a1 mbarrier key (of the destination CTA), a2 0, a3 0."""
    if mb_f is None:
        raise b.fault_decode(inst, "shared::cta -> shared::cluster cp.async.bulk needs an [mbar] operand")
    trace = b.ex.want_trace
    S = b.S

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = np.zeros((b.W, 4), np.int64) if trace else None
        if trace:
            pay[:, 1] = -1
        if not len(idx):
            b.pay = pay
            return
        sz = np.asarray(_get(size))
        n = (sz[idx] if sz.ndim else np.full(len(idx), int(sz))).astype(np.int64)
        dslot, dst, _r = _cluster_slots(b, inst, idx, dst_f(idx))
        src = src_f(idx)
        own = b.lane_cta[idx]
        sslot, src, _r = _cluster_slots(b, inst, idx, src)
        if (sslot != own).any():
            k = np.flatnonzero(sslot != own)
            raise _fault(b, inst, "the source of a shared::cta -> shared::cluster bulk copy is another CTA's memory",
                         lanes=idx[k], addrs=src[k], hint="a CTA-local (shared::cta) source address")
        mslot, mba, _r = _cluster_slots(b, inst, idx, mb_f(idx))
        if (mslot != dslot).any():
            k = np.flatnonzero(mslot != dslot)
            raise _fault(b, inst, "the mbarrier of a shared::cluster bulk copy is not in the destination CTA",
                         lanes=idx[k], addrs=mba[k], hint="mapa the mbarrier to the same rank as the destination")
        bad = (n % 16 != 0) | (dst % 16 != 0) | (src % 16 != 0)
        if bad.any():
            k = np.flatnonzero(bad)
            raise _fault(b, inst, "cp.async.bulk addresses and size must be multiples of 16 bytes", lanes=idx[k],
                         addrs=dst[k])
        for k in range(len(idx)):
            nb = int(n[k])
            _scheck(b, inst, idx[k:k + 1], src[k:k + 1], nb)
            _scheck(b, inst, idx[k:k + 1], dst[k:k + 1], nb)
            so, do = int(own[k]) * S + int(src[k]), int(dslot[k]) * S + int(dst[k])
            b.smem[do:do + nb] = b.smem[so:so + nb].copy()
            if trace:
                pay[int(idx[k]) >> 5, 0] += nb
        mbar_complete_tx(b, mslot, mba, n)
        if trace:
            pay[idx >> 5, 1] = _key_slots(b, mslot, mba)
        b.pay = pay
    return h


# ------------------------------------------------------------------------------------------------ tensor core
def _warps(b, act, full):
    if full:
        return np.arange(b.W)
    return np.flatnonzero(act.reshape(-1, 32).any(axis=1))


def _lanes_of(warps):
    return (warps[:, None] * 32 + np.arange(32)).reshape(-1)


def _regs_u32(b, items):
    return [b.R[x.index] if isinstance(x, Reg) else None for x in items]


_T32 = np.arange(32)


def _ldst_matrix_fast(b, inst, warps, addrs, num, trans, vals=None):
    """ldmatrix/stmatrix .m8n8.b16 on whole warps: lane t's register j is one 32-bit word of matrix j
    (non-trans: row t//4, bytes 4(t%4)..; trans: two 16-bit elements from rows 2(t%4), 2(t%4)+1, column t//4).
    ``addrs`` (nw, 32) CTA-local row addresses (lanes 8j..8j+7 give matrix j's rows). Returns (nw, 32, num)."""
    nw = len(warps)
    ra = addrs[:, : 8 * num]
    bad = (ra % 16 != 0) | (ra < 0) | (ra + 16 > b.S)
    if bad.any():
        k = np.argwhere(bad)[0]
        raise _fault(b, inst, f"{inst.opcode}: shared row address out of range or not 16-B aligned",
                     lanes=np.array([warps[k[0]] * 32 + k[1]]), addrs=np.array([ra[k[0], k[1]]]),
                     hint="16-byte aligned CTA-local shared addresses")
    base = ((warps // b.wpc) * b.S)[:, None, None]
    j = np.arange(num)[None, :]
    t = _T32[:, None]
    if not trans:
        src = 8 * j + t // 4                                                 # (32, num)
        word = (base + addrs[:, src] + 4 * (t % 4)[None]) // 4              # (nw, 32, num)
        v32 = b.smem[: (b.smem.size // 4) * 4].view(np.uint32)
        if vals is None:
            return v32[word]
        v32[word] = vals
        return None
    lo_src = 8 * j + 2 * (t % 4)
    hi_src = lo_src + 1
    off = (2 * (t // 4))[None]
    lo = (base + addrs[:, lo_src] + off) // 2
    hi = (base + addrs[:, hi_src] + off) // 2
    v16 = b.smem[: (b.smem.size // 2) * 2].view(np.uint16)
    if vals is None:
        return v16[lo].astype(np.uint32) | (v16[hi].astype(np.uint32) << np.uint32(16))
    v16[lo] = (vals & np.uint32(0xFFFF)).astype(np.uint16)
    v16[hi] = (vals >> np.uint32(16)).astype(np.uint16)
    return None


@decoder("ldmatrix")
def _d_ldmatrix(b, inst):
    mods = inst.mods
    num = 4 if "x4" in mods else 2 if "x2" in mods else 1
    trans = "trans" in mods
    if "b16" not in mods:
        raise b.fault_decode(inst, "only ldmatrix .m8n8 .b16 is supported")
    ops = inst.operands
    dregs = _regs_u32(b, _vals_of(ops[0]))
    af = _addr_fn(b, ops[1], inst)
    trace = b.ex.want_trace

    def h(act, full):
        warps = _warps(b, act, full)
        lanes = _lanes_of(warps)
        addrs = af(lanes)
        cta = warps // b.wpc
        if b.ex.exact_tensor:
            try:
                v = tensor_ops.ldmatrix(b.smem[: b.C * b.S].reshape(b.C, b.S), cta, addrs.reshape(-1, 32), num,
                                        trans)
            except SimulationError as e:
                raise _fault(b, inst, e.message, lanes=lanes[:1], hint=e.hint) from None
        else:
            v = _ldst_matrix_fast(b, inst, warps, addrs.reshape(-1, 32), num, trans)
        for j, r in enumerate(dregs):
            if r is not None:
                r[lanes] = v[:, :, j].reshape(-1)
        if trace:
            sl = (lanes & 31) < 8 * num
            b.pay = smem_payload(b, lanes[sl], addrs[sl], 16)
            b.pay[:, 2] = np.bincount(lanes >> 5, minlength=b.W)[:b.W] * 4 * num
    return h


@decoder("stmatrix")
def _d_stmatrix(b, inst):
    mods = inst.mods
    num = 4 if "x4" in mods else 2 if "x2" in mods else 1
    trans = "trans" in mods
    ops = inst.operands
    af = _addr_fn(b, ops[0], inst)
    sregs = _regs_u32(b, _vals_of(ops[1]))
    trace = b.ex.want_trace

    def h(act, full):
        warps = _warps(b, act, full)
        lanes = _lanes_of(warps)
        addrs = af(lanes)
        cta = warps // b.wpc
        vals = np.stack([r[lanes].reshape(-1, 32) for r in sregs], axis=2)
        if b.ex.exact_tensor:
            sm = b.smem[: b.C * b.S].reshape(b.C, b.S)
            try:
                tensor_ops.stmatrix(sm, cta, addrs.reshape(-1, 32), vals, trans)
            except SimulationError as e:
                raise _fault(b, inst, e.message, lanes=lanes[:1], hint=e.hint) from None
        else:
            _ldst_matrix_fast(b, inst, warps, addrs.reshape(-1, 32), num, trans, vals=vals.astype(np.uint32))
        if trace:
            sl = (lanes & 31) < 8 * num
            b.pay = smem_payload(b, lanes[sl], addrs[sl], 16)
            b.pay[:, 2] = np.bincount(lanes >> 5, minlength=b.W)[:b.W] * 4 * num
    return h


@decoder("mma")
def _d_mma(b, inst):
    mods = inst.mods
    shape = next(m for m in mods if m.startswith("m") and "n" in m and "k" in m)
    lay = [m for m in mods if m in ("row", "col")]
    ts = [m for m in mods if m in ("f16", "bf16", "f32", "tf32", "s8", "u8", "s32", "e4m3", "e5m2", "f64")]
    if len(ts) == 4:
        dtype, atype, btype, ctype = ts
    elif len(ts) == 2:
        dtype, atype = ts
        btype, ctype = atype, dtype
    else:
        raise b.fault_decode(inst, "unsupported mma type combination")
    ops = inst.operands
    dregs = _regs_u32(b, _vals_of(ops[0]))
    aregs = _regs_u32(b, _vals_of(ops[1]))
    bregs = _regs_u32(b, _vals_of(ops[2]))
    cops = _vals_of(ops[3])
    cregs = _regs_u32(b, cops)
    m_, rest = shape[1:].split("n")
    n_, k_ = rest.split("k")
    flops = 2 * int(m_) * int(n_) * int(k_)
    pay = np.zeros((b.W, 4), np.int64)
    trace = b.ex.want_trace
    compute = b.ex.compute_values
    sat = "satfinite" in mods
    M_, N_, K_ = int(m_), int(n_), int(k_)
    fast_ok = (not b.ex.exact_tensor and atype in ("f16", "bf16") and btype == atype and ctype == "f32"
               and dtype == "f32" and lay == ["row", "col"] and all(r is not None for r in cregs))
    if fast_ok:
        ra, ca = tensor_ops.mma_fragment(shape, atype, "a")          # (32, nregs, 2)
        rb, cb = tensor_ops.mma_fragment(shape, btype, "b")
        rc, cc = tensor_ops.mma_fragment(shape, "f32", "c")          # (32, 4, 1)
        ia = (ra * K_ + ca).reshape(32, -1)
        ib = (rb * N_ + cb).reshape(32, -1)
        ic = (rc * N_ + cc).reshape(32, -1)

        def f32(h16):
            return h16.view(np.float16).astype(np.float32) if atype == "f16" else \
                (h16.astype(np.uint32) << 16).view(np.float32)

        def halves(regs, nw):
            x = np.stack(regs, axis=1).reshape(nw, 32, len(regs))
            return f32(np.stack([x & np.uint32(0xFFFF), x >> np.uint32(16)], axis=3).astype(np.uint16)
                       ).reshape(nw, 32, -1)

    def fast(warps):
        nw = len(warps)
        allw = nw == b.W
        lanes = None if allw else _lanes_of(warps)
        A = np.empty((nw, M_ * K_), np.float32)
        A[:, ia] = halves([r if allw else r[lanes] for r in aregs], nw)
        B = np.empty((nw, K_ * N_), np.float32)
        B[:, ib] = halves([r if allw else r[lanes] for r in bregs], nw)
        C = np.empty((nw, M_ * N_), np.float32)
        C[:, ic] = np.stack([(r if allw else r[lanes]) for r in cregs], axis=1).view(np.float32).reshape(nw, 32, -1)
        D = (np.matmul(A.reshape(nw, M_, K_), B.reshape(nw, K_, N_)) + C.reshape(nw, M_, N_)).reshape(nw, -1)
        D = D[:, ic]                                                   # (nw, 32, 4)
        for j, r in enumerate(dregs):
            v = D[:, :, j].reshape(-1).view(np.uint32)
            if allw:
                r[...] = v
            else:
                r[lanes] = v

    def h(act, full):
        warps = _warps(b, act, full)
        if compute and len(warps) and fast_ok:
            fast(warps)
        elif compute and len(warps):
            lanes = _lanes_of(warps)
            A = np.stack([r[lanes].reshape(-1, 32) for r in aregs], axis=2).astype(np.uint32)
            B = np.stack([r[lanes].reshape(-1, 32) for r in bregs], axis=2).astype(np.uint32)
            Cv = np.stack([(r[lanes] if r is not None else np.zeros(len(lanes), np.uint32)).reshape(-1, 32)
                           for r in cregs], axis=2).astype(np.uint32)
            D = tensor_ops.mma_sync(A, B, Cv, shape, atype, ctype, lay[0] if lay else "row",
                                    lay[1] if len(lay) > 1 else "col", btype=btype, dtype=dtype, satfinite=sat)
            for j, r in enumerate(dregs):
                r[lanes] = D[:, :, j].reshape(-1)
        if trace:
            p = pay.copy()
            p[warps, 0] = flops
            b.pay = p
    return h


@decoder("wgmma.mma_async")
def _d_wgmma(b, inst):
    mods = inst.mods
    shape = next(m for m in mods if m.startswith("m64n"))
    n = int(shape[4:].split("k")[0])
    k = int(shape.split("k")[1])
    ts = [m for m in mods if m in ("f16", "bf16", "f32", "tf32", "s8", "u8", "s32", "e4m3", "e5m2", "b1")]
    dtype, atype = ts[0], ts[1]
    btype = ts[2] if len(ts) > 2 else atype
    ops = inst.operands
    dregs = _regs_u32(b, _vals_of(ops[0]))
    a_regs = None
    a_desc = None
    if isinstance(ops[1], Vec):
        a_regs = _regs_u32(b, ops[1].items)
    else:
        a_desc = b.R[ops[1].index]
    b_desc = b.R[ops[2].index]
    rest = ops[3:]
    sd = rest[0] if rest else Imm(1, "1")
    imms = [int(x.value) for x in rest[1:]]
    isa = imms[0] if imms else 1
    isb = imms[1] if len(imms) > 1 else 1
    tna = imms[2] if (a_desc is not None and len(imms) > 2) else 0
    tnb = imms[3] if (a_desc is not None and len(imms) > 3) else (imms[2] if a_regs is not None and len(imms) > 2 else 0)
    sd_reg = b.R[sd.index] if isinstance(sd, Reg) else None
    sd_c = bool(int(sd.value)) if isinstance(sd, Imm) else True
    ebits = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}[atype]
    a_bytes = 0 if a_regs is not None else 64 * k * ebits // 8
    b_bytes = n * k * ebits // 8
    pay_row = np.array([2 * 64 * n * k // 4, (a_bytes + b_bytes) // 4, n, 1 if a_regs is not None else 0])
    trace = b.ex.want_trace
    compute = b.ex.compute_values
    fast_ok = (not b.ex.exact_tensor and atype in ("f16", "bf16") and btype == atype
               and dtype == "f32" and isa == 1 and isb == 1)
    if fast_ok and a_regs is not None:
        ra_, ca_ = tensor_ops._wgmma_a_fragment(atype)             # (128, 4, 2) row / col of each half
        a_flat = (ra_ * k + ca_).reshape(128, -1)                   # (128, 8): element index in A (64 x k)
    if fast_ok:
        rd, cd = tensor_ops.wgmma_d_fragment(n, "f32")
        fidx = (rd[..., 0] * n + cd[..., 0]).astype(np.int64)            # (128, n/2)
        _t = np.arange(128)[:, None]
        _j = np.arange(n // 2)[None, :]
        d_structured = bool(((rd[..., 0] == 16 * (_t // 32) + (_t % 32) // 4 + 8 * ((_j >> 1) & 1))
                             & (cd[..., 0] == 8 * (_j >> 2) + 2 * (_t % 4) + (_j & 1))).all())
        smem16 = b.smem[: b.C * b.S].view(np.uint16).reshape(b.C, b.S // 2)
        acache = {}

        def addrs_of(desc_vals, mn, tr=0):
            out = np.empty((len(desc_vals), mn * k), np.int64)
            for u in np.unique(desc_vals):
                key = (int(u), mn, tr)
                a = acache.get(key)
                if a is None:
                    a = acache[key] = (tensor_ops.smem_desc_addresses(np.array([u], np.uint64), mn, k, 2,
                                                                      bool(tr)).reshape(-1) // 2)
                out[desc_vals == u] = a
            return out

        def to_f32(x):
            return x.view(np.float16).astype(np.float32) if atype == "f16" else \
                (x.astype(np.uint32) << 16).view(np.float32)

    def fast(wgs):
        nwg = len(wgs)
        allw = nwg * 128 == b.L
        lanes = None if allw else (wgs[:, None] * 128 + np.arange(128)).reshape(-1)
        first = wgs * 128
        cta = (wgs * 4) // b.wpc
        sdv = np.broadcast_to(sd_reg[first] if sd_reg is not None else np.bool_(sd_c), (nwg,))
        ba = addrs_of(b_desc[first], n, tnb)
        if a_regs is None:
            aa = addrs_of(a_desc[first], 64, tna)
            if aa.max() >= b.S // 2:
                raise _fault(b, inst, "wgmma operand outside shared memory", lanes=first[:1])
            A = to_f32(smem16[cta[:, None], aa]).reshape(nwg, 64, k)
        else:
            regs = np.stack([r if allw else r[lanes] for r in a_regs], axis=1).reshape(nwg, 128, len(a_regs))
            halves = np.stack([regs & np.uint32(0xFFFF), regs >> np.uint32(16)], axis=3).astype(np.uint16)
            A = np.zeros((nwg, 64 * k), np.float32)
            A[:, a_flat] = to_f32(halves.reshape(nwg, 128, -1))
            A = A.reshape(nwg, 64, k)
        if ba.max() >= b.S // 2:
            raise _fault(b, inst, "wgmma operand outside shared memory", lanes=first[:1])
        B = to_f32(smem16[cta[:, None], ba]).reshape(nwg, n, k)
        P = np.matmul(A, B.transpose(0, 2, 1))                                # (nwg, 64, n)
        if d_structured:
            # D fragment: row = 16w + 8h + g, col = 8c + 2t + e  <->  reg 4c + 2h + e of lane 32w + 4g + t
            P = P.reshape(nwg, 4, 2, 8, n // 8, 4, 2).transpose(4, 2, 6, 0, 1, 3, 5)
            P = np.ascontiguousarray(P).reshape(n // 2, nwg, 128)
        else:
            P = np.ascontiguousarray(P.reshape(nwg, 64 * n)[:, fidx.T].transpose(1, 0, 2))
        keep = sdv.all()
        if not keep:
            zero = np.repeat(~sdv, 128)
        for j, r in enumerate(dregs):
            rv = r.view(np.float32)
            pj = P[j].reshape(-1)
            if allw:
                if keep:
                    rv += pj
                else:
                    rv[...] = np.where(zero, pj, rv + pj)
            else:
                cur = rv[lanes]
                rv[lanes] = (pj if keep else np.where(zero, pj, cur + pj)) if not keep else cur + pj

    def h(act, full):
        idx = b.active_idx(act, full)
        wgs = np.arange(b.L // 128) if full else np.flatnonzero(act.reshape(-1, 128).any(axis=1))
        if compute and len(wgs) and fast_ok:
            fast(wgs)
        elif compute and len(wgs):
            lanes = (wgs[:, None] * 128 + np.arange(128)).reshape(-1)
            first = wgs * 128
            D = np.stack([r[lanes].reshape(-1, 128) for r in dregs], axis=2).astype(np.uint32)
            cta = (wgs * 4) // b.wpc
            sdv = sd_reg[first] if sd_reg is not None else sd_c
            kw = dict(smem=b.smem[: b.C * b.S].reshape(b.C, b.S), cta=cta, b_desc=b_desc[first], m=64, n=n, k=k,
                      atype=atype, btype=btype, dtype=dtype, scale_d=sdv, imm_scale_a=isa, imm_scale_b=isb,
                      tnsp_a=tna, tnsp_b=tnb)
            if a_regs is not None:
                kw["a_regs"] = np.stack([r[lanes].reshape(-1, 128) for r in a_regs], axis=2).astype(np.uint32)
            else:
                kw["a_desc"] = a_desc[first]
            try:
                out = tensor_ops.wgmma(D, **kw)
            except SimulationError as e:
                raise _fault(b, inst, e.message, lanes=first[:1], hint=e.hint) from None
            for j, r in enumerate(dregs):
                r[lanes] = out[:, :, j].reshape(-1)
        if trace:
            p = np.zeros((b.W, 4), np.int64)
            p[_warps(b, act, full)] = pay_row
            b.pay = p
    return h


# ------------------------------------------------------------------------------- tensormap creation / update
_TMAP_FIELDS_ORD = ("box_dim", "global_dim", "global_stride", "element_stride")
_TMAP_FIELDS = ("global_address", "rank", "elemtype", "interleave_layout", "swizzle_mode", "fill_mode") + \
    _TMAP_FIELDS_ORD


def _lane_values(b, op, t, inst, idx):
    """Operand ``op`` (register or immediate) at lanes ``idx`` as int64."""
    v = _get(b.val(op, t, inst))
    a = np.asarray(v)
    if a.ndim == 0:
        return np.full(len(idx), int(a), dtype=np.int64)
    return a[idx].astype(np.int64)


@decoder("tensormap")
def _d_tensormap(b, inst):
    """``tensormap.replace.tile.FIELD.SPACE.b1024.TYPE [tmap], [ord,] value`` writes one field of a 128-byte
    descriptor in shared or global memory (byte layout ``memory.DEVICE_TMAP_LAYOUT``);
    ``tensormap.cp_fenceproxy.global.shared::cta... [dst], [src], 128`` copies a descriptor from shared to
    global memory (its fence is implicit in the functional model: accesses are sequential)."""
    from ..memory import tensormap_field_slot

    mods = inst.mods
    ops = inst.operands
    if mods and mods[0] == "cp_fenceproxy":
        if "global" not in mods or not any(m.startswith("shared") for m in mods) or len(ops) != 3:
            raise b.fault_decode(inst, "tensormap.cp_fenceproxy: only global <- shared::cta copies of [dst], [src], size")
        if not isinstance(ops[2], Imm) or int(ops[2].value) != 128:
            raise b.fault_decode(inst, "tensormap.cp_fenceproxy copies 128 bytes")
        dst_f = _addr_fn(b, ops[0], inst)
        src_f = _addr_fn(b, ops[1], inst)

        def hcp(act, full):
            idx = b.active_idx(act, full)
            if not len(idx):
                return
            dst, src = dst_f(idx), src_f(idx)
            fl, _ = _shared_flat(b, inst, idx, src, 128)
            _gcheck(b, inst, idx, dst, 128)
            data = b.smem[fl[:, None] + np.arange(128, dtype=np.int64)[None, :]]
            b.ex.mem.scatter(dst, data)
        return hcp
    if len(mods) < 3 or mods[0] != "replace" or mods[1] != "tile":
        raise b.fault_decode(inst, f"tensormap.{'.'.join(mods)} is not modelled",
                             hint="tensormap.replace.tile.FIELD and tensormap.cp_fenceproxy")
    field = mods[2]
    if field not in _TMAP_FIELDS:
        raise b.fault_decode(inst, f"tensormap field {field!r} is not modelled", hint=", ".join(_TMAP_FIELDS))
    shared = any(m.startswith("shared") for m in mods)
    if not shared and "global" not in mods:
        raise b.fault_decode(inst, "tensormap.replace needs .global or .shared::cta")
    t = mods[-1] if mods[-1] in ("b32", "b64") else "b32"
    with_ord = field in _TMAP_FIELDS_ORD
    if len(ops) != (3 if with_ord else 2):
        raise b.fault_decode(inst, f"tensormap.replace.tile.{field} takes [tmap], {'ord, ' if with_ord else ''}value")
    if with_ord and not isinstance(ops[1], Imm):
        raise b.fault_decode(inst, "the ordinal of tensormap.replace is an immediate")
    ordinal = int(ops[1].value) if with_ord else 0
    try:
        off, vt = tensormap_field_slot(field, ordinal)
    except ValueError as e:
        raise b.fault_decode(inst, str(e)) from None
    af = _addr_fn(b, ops[0], inst)
    vop = ops[-1]

    def h(act, full):
        idx = b.active_idx(act, full)
        if not len(idx):
            return
        addrs = af(idx)
        vals = _lane_values(b, vop, t, inst, idx)
        if field in ("rank", "swizzle_mode", "fill_mode", "elemtype", "interleave_layout", "element_stride") \
                and ((vals < 0) | (vals > 255)).any():
            raise _fault(b, inst, f"tensormap {field} value {int(vals[0])} out of range", lanes=idx[:1])
        if field == "box_dim" and ((vals < 1) | (vals > 256)).any():
            raise _fault(b, inst, f"tensormap box_dim {int(vals[0])} outside 1..256", lanes=idx[:1])
        payload = vals.astype(np.uint64).astype(vt).view(np.uint8).reshape(len(idx), vt.itemsize)
        if shared:
            if (addrs % 64).any():
                raise _fault(b, inst, "tensormap in shared memory must be 64-byte aligned", lanes=idx[:1],
                             addrs=addrs[:1])
            fl, _ = _shared_flat(b, inst, idx, addrs, 128)
            b.smem[(fl + off)[:, None] + np.arange(vt.itemsize, dtype=np.int64)[None, :]] = payload
        else:
            _gcheck(b, inst, idx, addrs, 128)
            b.ex.mem.scatter(addrs + off, payload)
    return h
