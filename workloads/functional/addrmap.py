"""Bytes per L2 slice and per HBM channel of one launch, from the functional pass's line addresses (statistics only).

The timing pass does not use these counts: it splits a request's lines between the L2 *partitions* by a rotation
(components/memory_parts.py ``L2Slices.split``; the trace carries sector / line counts, not addresses), so the
simulated cycles do not depend on anything here. The functional pass does see every address, and this module
turns them into the launch's traffic per slice and per channel (``RunResult.stats`` rows ``l2.s{i}`` and
``hbm.c{i}``: runner/timing.py ``_address_stats``).

Hashes. NVIDIA does not publish the H100 / H200 line-to-slice or address-to-channel functions, so both are
documented stand-ins (spec fields ``l2.slice_hash_shift_bits``, ``hbm.channel_interleave_bytes``,
``hbm.channel_hash_shift_bits``), not measurements:

* slice of a 128-B line = ``xor_fold(line address, l2.slice_hash_shift_bits) mod l2.slices``;
* channel of an address = ``xor_fold(address // hbm.channel_interleave_bytes, hbm.channel_hash_shift_bits) mod
  channels`` (the enabled channels, ``hbm.channels_enabled`` or ``hbm.channels``);

where ``xor_fold(x, s) = x ^ (x >> s) ^ (x >> 2s) ^ ...`` over the low 48 bits of ``x`` (a linear, invertible
fold: distinct lines get distinct hash values). Folding every higher group of bits into the low ones is what
spreads power-of-two strides: a plain ``line mod 188`` puts a 4-line stride on 47 of 188 slices (188 = 4 x 47),
a 16-bit group fold does too until the stride reaches the 16th bit; with ``s = 7`` strides of 1 to 8192 lines
each cover all 188 slices (and all 94 channels) within 4 x 188 accesses, at most 6 per slice (about as even as
random placement; tests/test_address_counts.py). The two hashes are independent: which memory controller a slice sits next to is
not modelled.

What is counted (32-B sectors, 32 bytes each, as ``lts__t_bytes`` counts them):

* L2 read bytes per slice: the sectors each global load / cp.async / atomic requests from L2 (per warp
  instruction, the L1 model's hits removed: the same sectors as the trace's per-warp sector counts), and every
  sector of each TMA / bulk-copy load operation (one L2 read per multicast operation). Atomics count once, as
  reads, like the per-partition ``l2.p{i}`` counts.
* L2 write bytes per slice: sectors of stores, TMA tensor stores and bulk stores.
* DRAM read bytes per channel: the sectors the functional L2 model (workloads/functional/l2model.py: LRU of
  ``l2.reuse_capacity_bytes``, write-back) says miss to DRAM, i.e. the launch's ``dram_first_touch_bytes``
  (first touches and capacity re-misses).
* DRAM write bytes per channel: the dirty sectors that model writes back (evicted while dirty), i.e. the
  launch's ``dram_write_bytes``; with unbounded capacity, every written sector.
* L2 fabric bytes (``n_sm`` and ``partitions`` given): what the other L2 partition looks up on behalf of the
  SM's own (``lts__t_sectors_srcunit_ltcfabric``; ``lts__t_bytes`` counts them on top of the SMs' requests,
  ``srcunit_tex``). The home partition of a line is ``slice * partitions // slices``; a CTA's partition is its
  first-wave SM's, ``(cta % n_sm) * partitions // n_sm`` (the timing pass's ``near_part``; later waves land on
  other SMs, which only the timing knows). A read of a sector homed in the other partition crosses the fabric
  the first time the reading partition asks for it, and again after it missed to DRAM (the partition keeps a
  copy of what it fetched: H200 ncu, microbench/results/h200_l2_counters_2026-12-04: GEMMs that re-read every
  line from both partitions move ~their footprint over the fabric, 0.04-0.2 of the SMs' bytes; streaming
  kernels half their reads). Writes to the other partition's lines always cross it: (partitions - 1) /
  partitions of the written sectors (0.50 of every launch's SM writes there, 55 of 55).

Sums: over slices, the functional L2 bytes; over channels, the trace's ``dram_first_touch_bytes`` and
``dram_write_bytes``. The timing pass's ``l2.read_bytes`` is the functional read bytes less what lookup
coalescing absorbs (``l2_merged_bytes``); TMA boxes whose rows are not 32-B aligned count whole sectors here.
"""
from __future__ import annotations

import numpy as np

__all__ = ["xor_fold", "AddressCounts", "FOLD_SPAN_BITS"]

#: address bits the folds cover (device addresses are below 2**48)
FOLD_SPAN_BITS = 48
SECTOR = 32
LINE_SHIFT = 7      # 128-B lines (the functional pass's sector / line arithmetic is fixed at 32 / 128 B)


def xor_fold(x, shift: int) -> np.ndarray:
    """``x ^ (x >> shift) ^ (x >> 2 shift) ^ ...`` of the low :data:`FOLD_SPAN_BITS` bits of ``x``."""
    x = np.asarray(x, dtype=np.uint64) & np.uint64((1 << FOLD_SPAN_BITS) - 1)
    h = x.copy()
    for k in range(shift, FOLD_SPAN_BITS, shift):
        h ^= x >> np.uint64(k)
    return h


def slice_of_lines(line_addr, slices: int, shift: int) -> np.ndarray:
    """L2 slice of 128-B line addresses (address >> 7)."""
    return (xor_fold(line_addr, shift) % np.uint64(slices)).astype(np.intp)


def channel_of_lines(line_addr, channels: int, shift: int, interleave_bytes: int) -> np.ndarray:
    """HBM channel of 128-B line addresses (the line's ``interleave_bytes`` chunk hashed)."""
    chunk = np.uint64(int(interleave_bytes).bit_length() - 1 - LINE_SHIFT)
    return (xor_fold(np.asarray(line_addr, dtype=np.uint64) >> chunk, shift)
            % np.uint64(channels)).astype(np.intp)


class AddressCounts:
    """Per-launch sector counts per slice and per channel (module docstring). ``base``: the device address of
    memory offset 0; sectors passed in are offsets // 32."""

    def __init__(self, mem_bytes: int, base: int, *, slices: int, channels: int, slice_shift_bits: int = 7,
                 channel_shift_bits: int = 7, interleave_bytes: int = 512, n_sm: int | None = None,
                 partitions: int | None = None):
        if interleave_bytes < (1 << LINE_SHIFT) or interleave_bytes & (interleave_bytes - 1):
            raise ValueError(f"interleave_bytes={interleave_bytes}: a power of 2 of at least 128")
        self.slices, self.channels = int(slices), int(channels)
        n_lines = int(mem_bytes) // (1 << LINE_SHIFT) + 2
        lines = np.uint64(int(base) >> LINE_SHIFT) + np.arange(n_lines, dtype=np.uint64)
        self.slice_of = slice_of_lines(lines, self.slices, int(slice_shift_bits))
        self.chan_of = channel_of_lines(lines, self.channels, int(channel_shift_bits), int(interleave_bytes))
        self.l2_read = np.zeros(self.slices, np.int64)      # sectors
        self.l2_write = np.zeros(self.slices, np.int64)
        self.dram_read = np.zeros(self.channels, np.int64)
        self.params = {"slices": self.slices, "channels": self.channels, "slice_shift_bits": int(slice_shift_bits),
                       "channel_shift_bits": int(channel_shift_bits), "interleave_bytes": int(interleave_bytes)}
        # the L2 fabric between partitions (module docstring): per partition, the sectors it holds a copy of
        self.parts = int(partitions) if (partitions and n_sm and int(partitions) > 1) else 0
        self.fabric_read = 0
        self.fabric_write = 0.0
        if self.parts:
            self.n_sm = int(n_sm)
            self.home = (self.slice_of * self.parts // self.slices).astype(np.int8)
            self.held = np.zeros((self.parts, n_lines * 4), dtype=bool)
            self.params.update(n_sm=self.n_sm, partitions=self.parts)

    def part_of_ctas(self, ctas) -> np.ndarray:
        """The L2 partition of each CTA's first-wave SM (the timing pass's ``near_part``)."""
        return (np.asarray(ctas, dtype=np.int64) % self.n_sm) * self.parts // self.n_sm

    def l2(self, sectors, write: bool, ctas=None) -> None:
        """Sectors (offsets // 32; repeats count again) requested from L2; ``ctas``: the requesting CTA of each
        sector, or one CTA for all (needed for reads when the fabric is counted)."""
        if len(sectors):
            sectors = np.asarray(sectors)
            acc = self.l2_write if write else self.l2_read
            acc += np.bincount(self.slice_of[sectors >> 2], minlength=self.slices)
            if not self.parts:
                return
            if write:
                self.fabric_write += len(sectors) * (self.parts - 1) / self.parts
                return
            if ctas is None:
                raise ValueError("AddressCounts.l2: a read needs its CTAs to count the L2 fabric")
            part = self.part_of_ctas(np.broadcast_to(ctas, sectors.shape))
            far = self.home[sectors >> 2] != part
            if far.any():
                s, p = sectors[far], part[far]
                new = ~self.held[p, s]
                if new.any():
                    self.held[p[new], s[new]] = True
                    self.fabric_read += int(np.unique(p[new] * self.held.shape[1] + s[new]).size)

    def dram(self, sectors) -> None:
        """Sectors read from DRAM (the functional L2 model's misses). A partition's copy of a sector that missed
        is gone: its next read from the other partition crosses the fabric again (call before :meth:`l2` for
        the same access)."""
        if len(sectors):
            sectors = np.asarray(sectors)
            self.dram_read += np.bincount(self.chan_of[sectors >> 2], minlength=self.channels)
            if self.parts:
                self.held[:, sectors] = False

    def result(self, l2res) -> dict:
        """Bytes per slice / channel of the launch (plain lists; JSON-able for the trace cache), the write-backs
        from the L2 model ``l2res`` (:meth:`L2Residency.writeback_sectors_ids`)."""
        wb = l2res.writeback_sector_ids()
        dram_write = np.bincount(self.chan_of[wb >> 2], minlength=self.channels) if len(wb) else \
            np.zeros(self.channels, np.int64)
        return {**self.params, "sector_bytes": SECTOR,
                "l2_read_bytes": (self.l2_read * SECTOR).tolist(), "l2_write_bytes": (self.l2_write * SECTOR).tolist(),
                "dram_read_bytes": (self.dram_read * SECTOR).tolist(),
                "dram_write_bytes": (dram_write.astype(np.int64) * SECTOR).tolist(),
                **({"l2_fabric_read_bytes": int(self.fabric_read) * SECTOR,
                    "l2_fabric_write_bytes": int(round(self.fabric_write * SECTOR))} if self.parts else {})}
