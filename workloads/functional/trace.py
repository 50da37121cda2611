"""Compact functional trace (Contract 2).

The functional pass runs a *batch* of CTAs as one SIMT machine, so one executed step (a static instruction
run by one thread group) covers many warps at once. A batch's trace is therefore stored as

* ``pc[s]``      static instruction index of step ``s``;
* ``mask[s]``    id into a de-duplicated table of (participating warps, active-thread counts) rows;
* ``pay[s]``     id into the list of payload arrays (``(W, 4)`` int64, one row per warp of the batch), or -1.

``warp_stream(g)`` selects the steps in which warp ``g`` took part and gathers its payload rows.
Identical warp streams cost nothing extra: the full-participation / 32-active mask is row 0 of every batch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class WarpStream:
    pc: np.ndarray       # int32
    a0: np.ndarray       # int64
    a1: np.ndarray
    a2: np.ndarray
    a3: np.ndarray
    active: np.ndarray   # uint8

    def __len__(self) -> int:
        return len(self.pc)


class BatchTrace:
    """Steps of one batch of CTAs (``ctas``: global CTA indices, ``wpc`` warps per CTA)."""

    def __init__(self, ctas: np.ndarray, wpc: int):
        self.ctas = np.asarray(ctas, dtype=np.int64)
        self.wpc = wpc
        self.W = len(self.ctas) * wpc
        self._pc: list = []
        self._mask: list = []
        self._pay: list = []
        self.payloads: list = []
        self.mask_part: list = [np.ones(self.W, dtype=bool)]
        self.mask_active: list = [np.full(self.W, 32, dtype=np.uint8)]
        self._mask_ids: dict = {}
        self._pay_ids: dict = {}
        self.pc = self.mask = self.pay = None
        self.part = self.active = None
        self._warp_cache: dict = {}

    def mask_id(self, part: np.ndarray, active: np.ndarray) -> int:
        key = part.tobytes() + active.tobytes()
        i = self._mask_ids.get(key)
        if i is None:
            i = len(self.mask_part)
            self._mask_ids[key] = i
            self.mask_part.append(part.copy())
            self.mask_active.append(active.astype(np.uint8))
        return i

    def add(self, pc: int, mask_id: int, payload: np.ndarray | None):
        self._pc.append(pc)
        self._mask.append(mask_id)
        if payload is None:
            self._pay.append(-1)
            return
        # identical payload arrays (same sectors/wavefronts every loop iteration) are stored once
        key = hash(payload.data.tobytes())
        cand = self._pay_ids.get(key)
        if cand is not None and np.array_equal(self.payloads[cand], payload):
            self._pay.append(cand)
            return
        i = len(self.payloads)
        self._pay_ids[key] = i
        self._pay.append(i)
        self.payloads.append(payload)

    def finish(self):
        self.pc = np.asarray(self._pc, dtype=np.int32)
        self.mask = np.asarray(self._mask, dtype=np.int32)
        self.pay = np.asarray(self._pay, dtype=np.int32)
        self._pc = self._mask = self._pay = None
        self.part = np.stack(self.mask_part)          # (n_masks, W)
        self.active = np.stack(self.mask_active)      # (n_masks, W)
        self.payload_arr = (np.stack(self.payloads) if self.payloads
                            else np.zeros((0, self.W, 4), dtype=np.int64))
        self.payloads = None
        self._pay_ids = None

    @property
    def n_steps(self) -> int:
        return len(self.pc) if self.pc is not None else len(self._pc)

    def warp_instructions(self) -> int:
        """Dynamic warp instructions of this batch (sum over steps of participating warps)."""
        per_mask = self.part.sum(axis=1)
        return int(per_mask[self.mask].sum())

    def warp_stream(self, w: int) -> WarpStream:
        part_w = self.part[:, w]                      # per mask id
        if part_w.all():
            sel = slice(None)
            pcs = self.pc
            masks = self.mask
            pays = self.pay
        else:
            sel = part_w[self.mask]
            pcs = self.pc[sel]
            masks = self.mask[sel]
            pays = self.pay[sel]
        n = len(pcs)
        a = np.zeros((n, 4), dtype=np.int64)
        has = pays >= 0
        if has.any():
            a[has] = self.payload_arr[pays[has], w, :]
        act = self.active[masks, w].astype(np.uint8)
        return WarpStream(np.ascontiguousarray(pcs, dtype=np.int32), a[:, 0].copy(), a[:, 1].copy(),
                          a[:, 2].copy(), a[:, 3].copy(), act)

    def warps_block(self, cols, sel):
        """The streams of the batch warps ``cols`` that take part in the same steps (``sel``: a boolean step mask,
        or None for all steps) in one gather: ``(pc (n,) int32, A (m, 4, n) int64, act (m, n) uint8)`` -- the
        arrays :meth:`warp_stream` gives one warp at a time, stacked."""
        cols = np.asarray(cols, dtype=np.intp)
        if sel is None:
            pcs, masks, pays = self.pc, self.mask, self.pay
        else:
            pcs, masks, pays = self.pc[sel], self.mask[sel], self.pay[sel]
        n, m = len(pcs), len(cols)
        A = np.zeros((m, 4, n), dtype=np.int64)
        has = pays >= 0
        if has.any():
            blk = self.payload_arr[pays[has][:, None], cols[None, :], :]      # (n_has, m, 4)
            A[:, :, has] = blk.transpose(1, 2, 0)
        act = self.active[masks[:, None], cols[None, :]].T.astype(np.uint8)  # (m, n)
        return np.ascontiguousarray(pcs, dtype=np.int32), A, act

    def nbytes(self) -> int:
        return int(self.pc.nbytes + self.mask.nbytes + self.pay.nbytes + self.part.nbytes + self.active.nbytes
                   + self.payload_arr.nbytes)


class KernelTrace:
    """Per-warp instruction streams of one launch (global warp id ``g = cta * warps_per_cta + w``)."""

    def __init__(self, program, grid, block, batches: list, dram_first_touch_bytes: int, dram_write_bytes: int = 0):
        self.program = program
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.n_ctas = int(np.prod(grid))
        self.threads_per_cta = int(np.prod(block))
        self.warps_per_cta = (self.threads_per_cta + 31) // 32
        self.n_warps = self.n_ctas * self.warps_per_cta
        self.batches = batches
        self.dram_first_touch_bytes = int(dram_first_touch_bytes)   # reads that miss a cold L2 (first touch)
        self.dram_write_bytes = int(dram_write_bytes)               # distinct 32-B sectors written x 32
        #: share of written sectors the L2 writes back to DRAM (l2model.py ``write_back_ratio``; run.py sets it)
        self.write_back_ratio = 1.0
        #: when the write-backs happen against the stores (l2model.py ``write_back_curve``; None: spread evenly)
        self.write_back_curve = None
        self._where = {}
        for bi, b in enumerate(batches):
            for k, c in enumerate(b.ctas):
                self._where[int(c)] = (bi, k)
        #: CTAs the trace holds (all of the grid, or sampled mode's subset)
        self.executed_ctas = len(self._where)
        #: bytes per L2 slice / HBM channel of the executed CTAs (workloads/functional/addrmap.py), or None
        self.address_counts = None

    def cta_coords(self, cta: int) -> tuple:
        gx, gy, _ = self.grid
        return (cta % gx, (cta // gx) % gy, cta // (gx * gy))

    def warp_stream(self, g: int) -> WarpStream:
        if not 0 <= g < self.n_warps:
            raise IndexError(f"warp {g} out of range (n_warps={self.n_warps})")
        cta, w = divmod(int(g), self.warps_per_cta)
        loc = self._where.get(cta)
        if loc is None:
            from warpgraph.core.errors import SimulationError

            raise SimulationError(f"CTA {cta} was not executed functionally: the trace holds {self.executed_ctas} "
                                  f"of the {self.n_ctas} CTAs (sampled mode's subset)",
                                  hint="a timing model that reads only the sampled CTAs' streams")
        bi, k = loc
        b = self.batches[bi]
        return b.warp_stream(k * self.warps_per_cta + w)

    def cta_batch(self, cta: int):
        """``(batch, first column)`` of CTA ``cta``'s warps in its batch, or None when the trace does not hold it."""
        loc = self._where.get(int(cta))
        if loc is None:
            return None
        bi, k = loc
        return self.batches[bi], k * self.warps_per_cta

    @property
    def dynamic_warp_instructions(self) -> int:
        return sum(b.warp_instructions() for b in self.batches)

    def nbytes(self) -> int:
        return sum(b.nbytes() for b in self.batches)
