"""The architecture spec: pydantic v2 models (``extra="forbid"`` everywhere) for one GPU.

Contract 4 of docs/design.md. Units are in field names (``_cycles``, ``_bytes``, ``_bytes_per_cycle``,
``_mhz``, ``_flop_per_cycle``, ``_gb_per_s``). All cycle counts are SM-clock cycles unless the name says
otherwise. Defaults are H100 SXM5 values; the bundled YAMLs restate every number with its source as a comment
(sources: ../shared/reference/hopper-blackwell-facts.md "facts", flashgpu-sim-repository.md "fgs-repo", the
FlashGPU-sim paper "paper").

Variants are discriminated unions (``tensor_core.kind``, ``tma.kind``, ``cta_scheduler.kind``,
``subpartition.scheduler.policy``). They are open: :func:`register_variant` adds a model for a new kind and
rebuilds the union; an unknown kind is a SpecError listing the known ones. Timing engineers may add fields to
any section (give them a default so existing YAMLs stay valid).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator
from pydantic.fields import FieldInfo

__all__ = [
    "ArchSpec", "Section", "register_variant", "variant_kinds", "VARIANT_FAMILIES",
    "ClocksSpec", "SmSpec", "SubpartitionSpec", "GtoScheduler", "LrrScheduler", "CtaSchedulerSpec",
    "RoundRobinCtaScheduler", "TensorCoreBase", "MmaSyncTensorCore", "WgmmaTensorCore", "Tcgen05TensorCore",
    "IdealQueueTensorCore", "spec_model", "ROLE_FAMILIES",
    "MmaTiming", "TmaSpec", "DefaultTma", "MbarrierSpec", "SharedMemorySpec", "L1Spec", "L2Spec", "HbmSpec",
    "FabricSpec", "UnitTiming", "LatenciesSpec",
]

# Physical ranges: every number is finite (no .inf / .nan), booleans are not numbers, cycle counts stay below
# 10^6 (0.57 ms at 1.755 GHz), plain counts below 2^31 and byte sizes below 2^50.
MAX_CYCLES = 10**6
Cycles = Annotated[int, Field(ge=0, le=MAX_CYCLES)]
PosCycles = Annotated[int, Field(gt=0, le=MAX_CYCLES)]
PosInt = Annotated[int, Field(gt=0, le=2**31 - 1)]
Bytes = Annotated[int, Field(gt=0, le=1 << 50)]
PosFloat = Annotated[float, Field(gt=0, le=1e9)]
MHz = Annotated[float, Field(gt=0, le=1e5)]


def _admits_bool(ann) -> bool:
    if ann is bool or ann is Any:
        return True
    return any(_admits_bool(a) for a in getattr(ann, "__args__", ()) or ())


class Section(BaseModel):
    """Base of every section: unknown keys are errors (typos must not pass silently); numbers are finite and
    never booleans (``partitions: true`` is an error, not 1)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, v, info):
        if isinstance(v, bool) or (isinstance(v, list) and any(isinstance(x, bool) for x in v)):
            f = cls.model_fields.get(info.field_name)
            if f is not None and not _admits_bool(f.annotation):
                from pydantic_core import PydanticCustomError

                raise PydanticCustomError("bool_not_number", "a boolean where a number is expected")
        return v


# --------------------------------------------------------------------------------------------------------
class ClocksSpec(Section):
    sm_mhz: MHz = Field(1755.0, description="SM (base) clock; all *_cycles are SM cycles")
    l2_mhz: MHz = Field(1700.0, description="L2 / crossbar clock")
    hbm_mhz: MHz = Field(2619.0, description="memory clock (reported memclk)")


class SmSpec(Section):
    count: Annotated[int, Field(gt=0, le=1024)] = Field(132, description="enabled SMs")
    subpartitions: Annotated[int, Field(gt=0, le=16)] = Field(4, description="sub-partitions (warp schedulers) per SM")
    warp_size: Literal[32] = 32
    isa: str = Field("sm_90a", pattern=r"^sm_[0-9]+[af]?$",
                     description="native ISA (ptxas -arch): the compiler facts of a record (registers per thread) "
                                 "are for this target")
    max_warps: Annotated[int, Field(gt=0, le=1024)] = Field(64, description="resident warps per SM")
    max_ctas: Annotated[int, Field(gt=0, le=1024)] = Field(32, description="resident CTAs per SM")
    max_threads: Annotated[int, Field(gt=0, le=32768)] = Field(2048, description="resident threads per SM")
    registers: Annotated[int, Field(gt=0, le=1 << 24)] = Field(65536, description="32-bit registers per SM")
    register_alloc_unit: PosInt = Field(256, description="registers allocated per warp in units of this")
    max_registers_per_thread: Annotated[int, Field(gt=0, le=255)] = 255
    shared_memory_bytes: Annotated[int, Field(gt=0, le=1 << 24)] = Field(233472, description="shared memory per SM (max carveout)")
    max_shared_per_cta_bytes: Annotated[int, Field(gt=0, le=1 << 24)] = Field(232448, description="opt-in shared memory per CTA")
    shared_reserved_per_cta_bytes: Cycles = Field(1024, description="driver-reserved smem per CTA")
    unified_l1_shared_bytes: Annotated[int, Field(gt=0, le=1 << 24)] = Field(262144, description="L1 + shared memory array")
    shared_carveouts_kib: list[Annotated[int, Field(ge=0, le=1 << 14)]] | None = Field(
        None, description="shared-memory carveouts the driver chooses from (smallest that fits the resident CTAs); "
                          "the rest of the unified array is L1")

    @model_validator(mode="after")
    def _check(self):
        if self.max_threads > self.max_warps * self.warp_size:
            raise ValueError(f"max_threads={self.max_threads} exceeds max_warps×32={self.max_warps * 32}")
        if self.max_ctas > self.max_warps:
            raise ValueError(f"max_ctas={self.max_ctas} > max_warps={self.max_warps}: every CTA needs a warp")
        if self.max_warps % self.subpartitions:
            raise ValueError(f"max_warps={self.max_warps} not divisible by subpartitions={self.subpartitions}")
        if self.max_shared_per_cta_bytes > self.shared_memory_bytes:
            raise ValueError("max_shared_per_cta_bytes exceeds shared_memory_bytes")
        if self.shared_carveouts_kib and max(self.shared_carveouts_kib) * 1024 > self.shared_memory_bytes:
            raise ValueError(f"shared_carveouts_kib max {max(self.shared_carveouts_kib)} KiB exceeds "
                             f"shared_memory_bytes={self.shared_memory_bytes}")
        if self.shared_memory_bytes > self.unified_l1_shared_bytes:
            raise ValueError("shared_memory_bytes exceeds unified_l1_shared_bytes")
        if self.registers % self.register_alloc_unit:
            raise ValueError("registers not a multiple of register_alloc_unit")
        return self


class _SchedulerBase(Section):
    policy: str


class GtoScheduler(_SchedulerBase):
    """Greedy-then-oldest: keep issuing from the last warp until it stalls."""

    policy: Literal["gto"] = "gto"


class LrrScheduler(_SchedulerBase):
    """Loose round-robin over ready warps (GPGPU-Sim ``lrr``)."""

    policy: Literal["lrr"] = "lrr"


class SubpartitionSpec(Section):
    kind: str = Field("default", description="registered subpartition model")
    scheduler: Any = Field(default_factory=GtoScheduler)  # replaced by the variant union below
    issue_per_cycle: PosInt = Field(1, description="warp instructions issued per cycle")
    dispatch_latency_cycles: Cycles = Field(2, description="issue to operand-read")
    register_banks: PosInt = 2
    operand_collectors: PosInt = 4
    ibuffer_entries: PosInt = 2
    max_pending_loads_per_warp: PosInt = 64


class _CtaSchedulerBase(Section):
    kind: str


CtaSchedulerSpec = _CtaSchedulerBase  # base of every cta_scheduler variant


class RoundRobinCtaScheduler(_CtaSchedulerBase):
    kind: Literal["round_robin"] = "round_robin"
    launch_latency_cycles: Cycles = Field(100, description="CTA dispatch to first instruction")
    ctas_per_cycle: PosInt = Field(1, description="CTAs the dispatcher places per cycle (GPU-wide)")
    kernel_launch_latency_cycles: Cycles = Field(0, description="fixed cost before the first CTA")
    dispatch_cycles_per_cta: Cycles = Field(0, description="an SM takes its CTAs one at a time, this many cycles "
                                            "apart (the first wave's CTAs of an SM start staggered)")
    dispatch_cycles_per_warp: Cycles = Field(0, description="an SM's dispatcher takes a CTA's warps at this many "
                                             "cycles per warp, after a burst of dispatch_burst_warps (a token bucket "
                                             "that refills at this rate); 0: off")
    dispatch_burst_warps: Annotated[int, Field(ge=0, le=4096)] = Field(
        0, description="warps an idle SM's dispatcher starts at once (the bucket's size; needs dispatch_cycles_per_warp)")

    @model_validator(mode="after")
    def _dispatch(self):
        if self.dispatch_cycles_per_warp and self.dispatch_cycles_per_cta:
            raise ValueError("set dispatch_cycles_per_cta or dispatch_cycles_per_warp, not both (two dispatch rules; "
                             "dispatch_cycles_per_cta: 0 selects the per-warp rule)")
        if self.dispatch_burst_warps and not self.dispatch_cycles_per_warp:
            raise ValueError("dispatch_burst_warps needs dispatch_cycles_per_warp (the rate the burst refills at)")
        return self


class MmaTiming(Section):
    issue_gap_cycles: PosCycles = Field(description="cycles between independent mma.sync issues of one sub-partition")
    latency_cycles: PosCycles = Field(description="issue to result (dependent chain slope)")


def _default_mma() -> dict[str, MmaTiming]:
    t = MmaTiming(issue_gap_cycles=6, latency_cycles=24)
    keys = ["f16.m16n8k16", "f16.m16n8k8", "bf16.m16n8k16", "bf16.m16n8k8", "tf32.m16n8k8", "tf32.m16n8k4",
            "s8.m16n8k32", "s8.m16n8k16"]
    return {k: t.model_copy() for k in keys}


class TensorCoreBase(Section):
    kind: str
    units_per_sm: Annotated[int, Field(gt=0, le=16)] = Field(4, description="tensor cores per SM (one per sub-partition)")
    mma_sync: dict[str, MmaTiming] = Field(default_factory=_default_mma,
                                           description="per 'dtype.shape' issue gap / latency of mma.sync")
    mma_sync_default: MmaTiming = Field(default_factory=lambda: MmaTiming(issue_gap_cycles=6, latency_cycles=24),
                                        description="used for dtype/shape keys missing from mma_sync")
    ideal_issue_queue: bool = Field(False, description="what-if (paper V-G, FA-2-async): an unbounded queue between "
                                    "instruction issue and the MMA pipe, so issue never waits for the tensor core")
    mma_sync_warp_issue_gap_cycles: Cycles = Field(0, description="cycles one warp needs between its own mma.sync "
                                                   "issues whatever the pipe accepts (0 = none)")

    def dense_fp16_peak(self) -> int | None:
        """Dense FP16 tensor FLOPs per cycle per SM that ``tensor_utilization_pct`` is measured against, or None
        when the variant declares no dense peak (``mma_sync`` only: its throughput is the per-shape issue gaps of
        ``mma_sync``, not a per-SM peak; the utilisation is then None, not a share of another GPU's peak)."""
        return None


class MmaSyncTensorCore(TensorCoreBase):
    """Only warp-synchronous mma.sync (Ampere-style; RTX 5090 / sm_120)."""

    kind: Literal["mma_sync"] = "mma_sync"


class WgmmaTensorCore(TensorCoreBase):
    """Hopper: mma.sync plus asynchronous warpgroup wgmma sharing one per-SM service rate (paper III-C)."""

    kind: Literal["wgmma"] = "wgmma"
    dense_fp16_flop_per_cycle_per_sm: PosInt = 4096
    dense_tf32_flop_per_cycle_per_sm: PosInt = 2048
    dense_fp8_flop_per_cycle_per_sm: PosInt = 8192
    dense_int8_flop_per_cycle_per_sm: PosInt = 8192
    issue_latency_ss_cycles: Cycles = Field(4, description="non-overlappable issue cost, A from smem")
    issue_latency_rs_cycles: Cycles = Field(9, description="non-overlappable issue cost, A from registers")
    completion_latency_cycles: Cycles = Field(46, description="fixed tail after the compute service time")
    min_latency_cycles: Cycles = Field(32, description="floor of one wgmma's latency (m64n64k16)")
    accumulator_queue_depth: Annotated[int, Field(gt=0, le=4096)] = Field(8, description="wgmma groups in flight per SM")
    register_file_read_bytes_per_cycle: PosInt = 1024
    rf_traffic_bytes_per_cycle: Cycles = Field(512, description="accumulator register traffic drain rate")
    register_file_bytes_per_cycle_per_subpartition: Cycles = Field(
        0, description="register-file bandwidth of a sub-partition; wgmma accumulator traffic takes its share of "
        "it and slows the other instructions issued meanwhile (0 = no slowdown)")

    def dense_fp16_peak(self) -> int | None:
        return self.dense_fp16_flop_per_cycle_per_sm


class IdealQueueTensorCore(WgmmaTensorCore):
    """What-if (paper V-G, FA-2-async): Hopper's tensor core with an unbounded queue between instruction issue and
    the MMA pipe (as ``ideal_issue_queue: true``)."""

    kind: Literal["ideal_queue"] = "ideal_queue"


class TmemSpec(Section):
    """Tensor memory of a Blackwell SM (components/tmem.py): 128 lanes x ``columns`` 32-bit cells, allocated in
    columns; four lane-quadrant ports (one per sub-partition) share the ld / st bandwidth."""

    kind: str = "default"
    lanes: Annotated[int, Field(ge=32, le=1024)] = Field(128, description="TMEM lanes (rows) per SM")
    columns: Annotated[int, Field(ge=32, le=4096)] = Field(512, description="32-bit TMEM columns per SM")
    ld_bytes_per_cycle: PosFloat = Field(8142.0, description="tcgen05.ld bandwidth per SM (all quadrants)")
    st_bytes_per_cycle: PosFloat = Field(8142.0, description="tcgen05.st / cp bandwidth per SM (all quadrants)")
    ld_latency_cycles: Cycles = Field(19, description="tcgen05.ld issue to data in registers (beyond transfer)")
    st_latency_cycles: Cycles = Field(19, description="tcgen05.st issue to data in TMEM (beyond transfer)")
    alloc_cycles: Cycles = Field(20, description="tcgen05.alloc / dealloc latency when columns are free")

    @model_validator(mode="after")
    def _pow2(self):
        if self.columns & (self.columns - 1):
            raise ValueError(f"tmem.columns={self.columns} is not a power of 2 (tcgen05.alloc takes powers of 2)")
        return self


class Tcgen05TensorCore(TensorCoreBase):
    """Blackwell datacenter: tcgen05.mma with accumulators in TMEM (``tmem``: components/tmem.py)."""

    kind: Literal["tcgen05"] = "tcgen05"
    dense_fp16_flop_per_cycle_per_sm: PosInt = 8192
    dense_tf32_flop_per_cycle_per_sm: PosInt = 4096
    dense_fp8_flop_per_cycle_per_sm: PosInt = 16384
    dense_int8_flop_per_cycle_per_sm: PosInt = 16384
    mma_issue_interval_cycles: PosCycles = 1
    completion_tail_latency_cycles: Cycles = 160
    min_latency_cycles: Cycles = 11
    async_queue_depth: Cycles = Field(0, description="0 = unbounded")
    tmem: TmemSpec = Field(default_factory=TmemSpec, description="tensor memory (TMEM) of each SM")

    def dense_fp16_peak(self) -> int | None:
        return self.dense_fp16_flop_per_cycle_per_sm


class _TmaBase(Section):
    kind: str


TmaSpec = _TmaBase  # base of every tma variant


class DefaultTma(_TmaBase):
    """TMA unit per SM (paper III-A, Fig. 4)."""

    kind: Literal["default"] = "default"
    admission_depth: Annotated[int, Field(gt=0, le=4096)] = Field(16, description="active transactions per SM; the 17th back-pressures")
    issue_gap_cycles: Cycles = Field(44, description="same-warp issue gap, T(N) = 1 + 44 N")
    issue_latency_cycles: Cycles = Field(1, description="constant of T(N) = 1 + 44 N")
    request_bytes_per_cycle: PosInt = Field(32, description="per-SM TMA request/response rate")
    request_granularity_bytes: PosInt = Field(32, description="bytes per memory request")
    inflight_requests: Annotated[int, Field(gt=0, le=1 << 20)] = Field(814, description="outstanding memory requests per SM (lower bound)")
    completion_latency_cycles: Cycles = Field(0, description="extra fixed latency until complete_tx")
    oob_reads_reach_l2: bool = Field(True, description="OOB reads cost L2 traffic but no DRAM traffic")
    multicast_latency_cycles: Cycles = 100
    store_source_bytes_per_cycle: PosInt = 32
    l2_latency_cycles: Cycles | None = Field(None, description="L2 hit round trip of the TMA engine's requests "
                                             "(None: the ld.global near/far latencies)")
    frontend_accept_cycles: Cycles = Field(4, description="front-end accept time per TMA issue from another "
                                           "sub-partition (paper III-A: 4-SP issue span 58 = 1 + 44 + 3·x)")


class MbarrierSpec(Section):
    kind: str = "default"
    test_wait_cycles: Cycles = Field(42, description="test_wait predicate-ready latency")
    try_wait_cycles: Cycles = Field(42, description="no-hint try_wait predicate-ready latency")
    try_wait_hint_complete_cycles: Cycles = Field(150, description="try_wait with a hint on a complete barrier")
    try_wait_max_suspend_cycles: Cycles = Field(0, description="no-hint suspension bound (0: return at once)")
    hint_quantization: Literal["power_of_two", "none"] = "power_of_two"
    arrive_cycles: Cycles = Field(29, description="arrive issue-to-visible")
    phase_wakeup_cycles: Cycles = Field(0, description="extra delay to wake a suspended waiter")
    init_cycles: Cycles = 4
    poll_loop_cycles: Cycles = Field(7, description="branch/loop overhead between successive polls of a wait loop "
                                     "(paper Fig. 5b: 49-cycle staircase step minus the 42-cycle poll)")


class SharedMemorySpec(Section):
    kind: str = "default"
    banks: Annotated[int, Field(gt=0, le=1024)] = 32
    bank_bytes: PosInt = 4
    latency_cycles: Cycles = 29
    bytes_per_cycle: PosInt = 128
    mio_queue_depth: Annotated[int, Field(gt=0, le=4096)] = 16
    conflict_latency_cycles_per_extra_way: float | None = Field(
        None, ge=0, le=MAX_CYCLES, description="latency added per extra bank-conflict wavefront (default: one wavefront time; the "
                                "pipe is still busy one wavefront time per way)")
    ldmatrix_latency_cycles_per_extra_matrix: float | None = Field(
        None, ge=0, le=MAX_CYCLES, description="latency an ldmatrix / stmatrix adds per 8x8 matrix beyond the first "
        "(each matrix is one wavefront through the pipe; default: as a bank-conflict way)")


class L1Spec(Section):
    kind: str = "default"
    size_bytes: Bytes = Field(262144, description="unified L1 array; effective L1 = size - smem carveout")
    hit_latency_cycles: Cycles = 40
    line_bytes: PosInt = 128
    sector_bytes: PosInt = 32
    bytes_per_cycle: PosInt = 128
    mshrs: Annotated[int, Field(gt=0, le=1 << 16)] = 256
    tag_cycles_per_line: float = Field(0.0, ge=0, le=MAX_CYCLES, description="L1TEX stage cycles per 128-B line a warp access "
                                       "looks up (the stage also takes one cycle per bank wavefront)")
    store_bytes_per_cycle: PosFloat | None = Field(
        None, description="global store data leaves an SM for L2 at this rate (its stores share it; None: not "
        "modelled, stores leave at the L1TEX stage's pace)")
    store_queue_bytes: float = Field(0.0, ge=0, le=1 << 24, description="store data an SM holds ahead of its store "
                                     "path before its warps' global memory instructions wait (lg_throttle); "
                                     "with store_bytes_per_cycle only")
    store_partial_line_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="store-path cycles a 128-B line "
                                             "with a partly written 32-B sector holds at least (0 with "
                                             "store_partial_sector_cycles 0: a partial sector costs as a full one)")
    store_partial_sector_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="store-path cycles per "
                                               "partly written 32-B sector; a warp store's partial part takes "
                                               "max(lines x store_partial_line_cycles, sectors x this)")
    # the SM's atomic unit (components/sm_core.py ``_atomg``; H200 microbench/src/atomics.cu TPUT); 0 = not modelled
    atomic_request_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="cycles the SM's atomic unit takes "
                                         "per warp atom / red request (lanes on distinct words)")
    atomic_same_word_lane_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="cycles per lane of a warp's "
                                                "red on its busiest word (same-address lanes go one by one)")
    atomic_same_word_return_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the same for an atom, "
                                                  "whose old values return to the lanes")
    cp_async_ca_extra_cycles: Cycles = Field(0, description="added to the completion of a non-bulk cp.async "
                                             "that allocates in L1 (.ca: LDGSTS through the L1 fill path) over one "
                                             "that bypasses it (.cg)")
    cp_async_fill_bytes_per_cycle: PosFloat | None = Field(
        None, description="the SM's intake of non-bulk cp.async (LDGSTS) data, bytes per SM cycle: a copy is "
        "accepted once the copies before it have gone through, its warp issues nothing until then (ptxas reuses "
        "an LDGSTS's address registers: the next write of them waits on the long scoreboard) and its data lands "
        "that much later. None: no SM-wide limit")

    @model_validator(mode="after")
    def _check(self):
        if self.store_queue_bytes and self.store_bytes_per_cycle is None:
            raise ValueError("store_queue_bytes needs store_bytes_per_cycle (the queue drains at that rate)")
        if (self.store_partial_line_cycles or self.store_partial_sector_cycles) and self.store_bytes_per_cycle is None:
            raise ValueError("store_partial_line_cycles / store_partial_sector_cycles need store_bytes_per_cycle "
                             "(they cost time on that store path)")
        if self.line_bytes % self.sector_bytes:
            raise ValueError(f"line_bytes={self.line_bytes} not a multiple of sector_bytes={self.sector_bytes}")
        return self


class L2Spec(Section):
    kind: str = "default"
    size_bytes: Bytes = 52428800
    slices: Annotated[int, Field(gt=0, le=4096)] = 160
    partitions: Annotated[int, Field(gt=0, le=64)] = 2
    line_bytes: PosInt = 128
    sector_bytes: PosInt = 32
    near_latency_cycles: Cycles = 258
    far_latency_cycles: Cycles = 414
    bytes_per_cycle_per_slice: PosInt = 32
    hash: str = Field("rotation", description="how the timing pass splits a request's lines between the L2 "
                      "partitions: 'rotation', the only model (a deterministic per-SM rotation, "
                      "components/memory_parts.py L2Slices.split); the trace carries no per-request addresses, so "
                      "the timing hashes none (the per-slice statistics do: slice_hash_shift_bits)")
    slice_hash_shift_bits: Annotated[int, Field(ge=1, le=47)] = Field(
        7, description="statistics only (RunResult.stats l2.s{i}; workloads/functional/addrmap.py): a 128-B line "
        "goes to slice (L ^ L>>s ^ L>>2s ^ ...) mod slices, L = the line address, s = this shift. The H100 / H200 "
        "slice hash is not public: a documented stand-in, not a measurement; the simulated cycles do not depend "
        "on it")
    reuse_capacity_bytes: Bytes | None = Field(None, description="capacity an LRU over 128-B lines must have to "
                                                "reproduce measured reuse and dirty write-back (None = size_bytes)")
    fill_store_gb_per_s: PosFloat | None = Field(
        None, description="throughput of the L2 data-array write path that DRAM fills and SM stores share (a store "
                          "that stays in L2 costs it as much as a DRAM read); None: not modelled")
    coalesce_scope: Literal["none", "fill", "gpc", "gpu"] = Field(
        "gpc", description="which reads (cp.async / TMA) of the same lines share an L2 lookup (components/memory.py): "
        "gpc = SMs of one GPC while the first lookup is outstanding, gpu = any SMs, fill = any SM into an "
        "outstanding DRAM fill only, none = never")
    requests_per_lookup_max: PosInt | None = Field(None, description="at most this many reads share one L2 lookup "
                                                   "(None: no limit)")
    # global atomics (components/atomics.py; H200 microbench/src/atomics.cu); 0 = not modelled
    atomic_extra_latency_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="an atom / red round trip "
                                               "beyond an L2 hit's (the slice's read-modify-write)")
    atomic_acquire_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="an .acquire / .acq_rel "
                                         "atomic's result is ready this much later (SASS ERRBAR; CGAERRBAR "
                                         "before the ATOMG, CCTL.IVALL after); its release part is a .gpu fence "
                                         "(fence_gpu_cycles)")
    fence_gpu_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="fence.sc / fence.acq_rel / membar "
                                    "at .gpu or .sys scope, and the release part of a .release / .acq_rel "
                                    "atomic (MEMBAR.ALL.GPU): done this long after the warp's earlier stores "
                                    "and reductions are acknowledged by L2")
    lock_retry_period_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="spin locks (an atom.cas that "
                                            "took a lock word, released by the holder CTA's next atomic on it): "
                                            "waiters retry this often, so a released lock is taken period / "
                                            "(waiters + 1) later on average (0: locks not modelled)")
    atomic_word_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the L2's read-modify-write of one "
                                      "word: cycles per lane-operation on the same word (integer and bitwise ops, "
                                      "cas, exch; 0: not modelled)")
    atomic_word_float_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the same for floating-point "
                                            "add / min / max")
    atomic_line_lane_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the L2 line unit: cycles per "
                                           "lane-operation of the atomics on one 128-B line (distinct words)")
    atomic_line_request_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the L2 line unit: the least "
                                              "cycles one atomic request holds it, whatever its lanes (a one-lane "
                                              "request costs this, not its lane share; 0: the lane share alone)")
    atomic_unit_bytes: int = Field(128, description="the address span one L2 atomic line unit serves: 128 (a "
                                   "line each) or a power-of-two multiple of line_bytes (aligned groups of lines "
                                   "share one unit)")
    atomic_line_request_ordered_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the same for a "
                                                      ".release / .acquire / .acq_rel atomic (0: "
                                                      "atomic_line_request_cycles)")
    atomic_lane_unit_bytes: int = Field(0, ge=0, description="the address span whose atomic lane-operations one of "
                                        "the L2's atomic ALUs performs (aligned; a power-of-two multiple of "
                                        "line_bytes): every request in it queues for that ALU, one element "
                                        "operation at a time (atomic_alu_lane_cycles each; same-word lanes "
                                        "atomic_word_cycles each). 0: no ALUs (the line units alone)")
    atomic_lane_units: int = Field(0, ge=0, le=1 << 16, description="how many such ALUs the spans are spread "
                                   "over (needs atomic_lane_unit_bytes; 0 with it 0)")
    atomic_alu_lane_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="cycles an atomic ALU takes per "
                                          "element operation of a request to a line other than the one it was "
                                          "just serving (requests to one line alone: atomic_line_lane_cycles)")
    atomic_alu_return_lane_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="the same for an atomic "
                                                 "whose old values are read (0: atomic_alu_lane_cycles)")
    atomic_alu_switch_window_cycles: float = Field(512.0, gt=0, le=MAX_CYCLES, description="an ALU serves a "
                                                   "line alone when no other line's request left within this "
                                                   "many cycles before")
    lock_waiters_spin: bool = Field(False, description="spin-lock waiters keep retrying their atom.cas on the lock "
                                    "word's line units every lock_retry_period_cycles while they wait, delaying "
                                    "the release and the other atomics on that line (false: a waiter is parked "
                                    "and puts no load on the line); needs lock_retry_period_cycles > 0")

    @field_validator("hash")
    @classmethod
    def _hash(cls, v):
        if v != "rotation":
            raise ValueError(f"hash={v!r} is not modelled: the timing model does not hash line addresses to L2 "
                             "slices (the functional trace carries no per-request addresses); lines are split "
                             "between the partitions by a deterministic rotation, so this value would be ignored. "
                             "Remove the key (its one value is 'rotation'; the per-slice statistics' address hash "
                             "is slice_hash_shift_bits)")
        return v

    @model_validator(mode="after")
    def _check(self):
        if self.slices % self.partitions:
            raise ValueError(f"slices={self.slices} not divisible by partitions={self.partitions}")
        if self.far_latency_cycles < self.near_latency_cycles:
            raise ValueError("far_latency_cycles < near_latency_cycles")
        if self.line_bytes % self.sector_bytes:
            raise ValueError("line_bytes not a multiple of sector_bytes")
        def whole_lines(n: int) -> bool:     # a power-of-two multiple of line_bytes
            q, r = divmod(n, self.line_bytes)
            return q >= 1 and not r and not q & (q - 1)

        u = self.atomic_unit_bytes
        if not whole_lines(u):
            raise ValueError(f"atomic_unit_bytes={u}: a power-of-two multiple of line_bytes ({self.line_bytes})")
        v = self.atomic_lane_unit_bytes
        if v and not whole_lines(v):
            raise ValueError(f"atomic_lane_unit_bytes={v}: 0 or a power-of-two multiple of line_bytes "
                             f"({self.line_bytes})")
        if not v:
            fields = type(self).model_fields
            unused = [k for k in ("atomic_alu_lane_cycles", "atomic_alu_return_lane_cycles",
                                  "atomic_alu_switch_window_cycles") if getattr(self, k) != fields[k].default]
            if unused:
                raise ValueError(f"{', '.join(unused)} set with atomic_lane_unit_bytes=0: the atomic ALUs are off, so "
                                 "the value would be ignored (set it to 0, the window to 512, or leave the ALUs on)")
        if v and not self.atomic_alu_lane_cycles:
            raise ValueError("atomic_lane_unit_bytes needs atomic_alu_lane_cycles > 0 (what each element operation "
                             "costs the ALU); without it the ALUs would be free")
        if bool(v) != bool(self.atomic_lane_units):
            raise ValueError(f"atomic_lane_unit_bytes={v} and atomic_lane_units={self.atomic_lane_units}: set both "
                             "(the ALUs and the span each serves) or neither")
        if self.lock_waiters_spin and not self.lock_retry_period_cycles:
            raise ValueError("lock_waiters_spin needs lock_retry_period_cycles > 0 (waiters retry that often); "
                             "with locks not modelled it would be ignored")
        return self


class HbmSpec(Section):
    kind: str = "default"
    size_bytes: Bytes = 85899345920
    channels: Annotated[int, Field(gt=0, le=4096)] = 80
    bandwidth_gb_per_s: Annotated[float, Field(gt=0, le=1e7)] = 3350.0
    channels_enabled: PosInt | None = Field(None, description="channels left enabled (None = all; a what-if: the "
                                            "bandwidth scales by channels_enabled / channels)")
    latency_cycles: Cycles = Field(298, description="added to an L2 hit latency on a miss")
    latency_clock_mhz: MHz | None = Field(
        None, description="the SM clock at which latency_cycles, loaded_latency_cycles and latency_spread_cycles "
        "hold (the microbenchmark's): DRAM time runs on the memory clock, so at clocks.sm_mhz they are that many x "
        "sm_mhz / latency_clock_mhz SM cycles. None: the same number of SM cycles at every SM clock")
    efficiency: float = Field(0.9, gt=0, le=1, description="sustainable fraction of peak bandwidth")
    write_cost_factor: float = Field(1.0, ge=1, le=1e3, description="channel time of a written byte in read-byte units "
                                     "(bus turnaround; 1 = writes as cheap as reads)")
    loaded_latency_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="DRAM latency under load: + this x u/(1-u) cycles, "
                                         "u = recent busy fraction of the partition's HBM (0 = off)")
    loaded_latency_max_util: float = Field(0.87, gt=0, lt=1, description="cap on u in the loaded-latency term "
                                           "(beyond it the bandwidth server's backlog is the queue)")
    utilization_window_cycles: PosFloat = Field(1000.0, description="EWMA window of the HBM busy fraction")
    latency_spread_cycles: float = Field(0.0, ge=0, le=MAX_CYCLES, description="mean excess of a DRAM line's latency over its "
                                         "minimum (exponential tail): a read waits for the slowest of its n DRAM "
                                         "lines, + this x (H_n - 1) cycles (H_n harmonic), scaled with the loaded "
                                         "latency (0 = off)")
    latency_spread_mode: Literal["expected", "sampled"] = Field(
        "expected", description="how latency_spread_cycles applies: 'expected' adds the mean of the slowest line's "
        "excess (x (H_n - 1)) to every read; 'sampled' draws the slowest of the n lines' exponential excesses per "
        "read (a hash of the SM and its DRAM-read count: deterministic, the same for any number of processes), "
        "minus the single-line mean, so reads of one line keep the measured mean and the SMs drift apart as on "
        "the card")
    latency_spread_seed: Annotated[int, Field(ge=0, lt=1 << 32)] = Field(
        0, description="latency_spread_mode 'sampled': the seed of the draws (another seed, another equally likely "
        "run: --set hbm.latency_spread_seed=N gives a spread of results); ignored by 'expected'")
    channel_interleave_bytes: Annotated[int, Field(ge=128, le=1 << 30)] = Field(
        512, description="statistics only (RunResult.stats hbm.c{i}; workloads/functional/addrmap.py): an "
        "aligned chunk of this many bytes (a power of 2) sits on one channel. Not public for H100 / H200: "
        "512 B (4 lines) is a stand-in; the simulated cycles do not depend on it")
    channel_hash_shift_bits: Annotated[int, Field(ge=1, le=47)] = Field(
        7, description="statistics only: a chunk K = address // channel_interleave_bytes goes to channel "
        "(K ^ K>>s ^ K>>2s ^ ...) mod the enabled channels, s = this shift (a stand-in, as the interleave)")

    @model_validator(mode="after")
    def _check(self):
        b = self.channel_interleave_bytes
        if b & (b - 1):
            raise ValueError(f"channel_interleave_bytes={b} is not a power of 2")
        return self

    def dram_scale(self, sm_mhz: float) -> float:
        """SM cycles per cycle of ``latency_cycles`` (and the loaded / spread terms) at SM clock ``sm_mhz``."""
        ref = self.latency_clock_mhz
        return 1.0 if ref is None else float(sm_mhz) / float(ref)

    def latency_at(self, sm_mhz: float) -> int:
        """The DRAM latency beyond the L2 in SM cycles at ``sm_mhz`` (``latency_cycles`` x :meth:`dram_scale`)."""
        return int(round(int(self.latency_cycles) * self.dram_scale(sm_mhz)))


class FabricSpec(Section):
    gpcs: Annotated[int, Field(gt=0, le=64)] = 8
    cpcs_per_gpc: Annotated[int, Field(gt=0, le=64)] = 3
    sms_per_cpc: Annotated[int, Field(gt=0, le=64)] = 6
    sms_per_gpc: list[Annotated[int, Field(gt=0, le=1024)]] | None = Field(None, description="enabled SMs per GPC (else spread evenly)")
    gx_planes: Annotated[int, Field(gt=0, le=16)] = 2
    gx_planes_enabled: Annotated[int, Field(gt=0, le=16)] | None = Field(None, description="planes left enabled (None = all; paper III-D: "
                                             "firmware may disable one plane)")
    dsm_read_command_bytes: PosInt = Field(32, description="request bytes a remote DSM read sends per 128 B")
    dsm_links_per_cpc: PosInt = 4
    dsm_link_bytes_per_cycle: PosInt = 32
    dsm_latency_cycles: Cycles = 180
    # ---- clusters / DSM (components/dsm.py, components/sm_core.py cluster branch, components/cta_scheduler.py)
    dsm_latency_cross_cpc_cycles: Cycles = Field(0, description="extra SM-to-SM latency when the destination SM is "
                                                 "in another CPC of the GPC (latency vs CTA distance)")
    dsm_sm_queue_bytes: Annotated[int, Field(ge=0, le=1 << 24)] = Field(
        16384, description="bytes of one-way DSM messages an SM may have queued in its link shaper before the sender stalls")
    dsm_multicast_delivery: Literal["receiver", "sender"] = Field(
        "receiver", description="TMA multicast copies enter through each destination SM's link share (receiver) or "
                                "leave one after the other through the issuer's (sender)")
    dsm_multicast_extra_latency_cycles: Cycles = Field(0, description="a multicast copy lands this long after the "
                                                       "unicast TMA completion")
    cluster_barrier_latency_cycles: Cycles = Field(0, description="barrier.cluster: last arrival to the release of "
                                                   "the waiting warps")
    max_portable_cluster_size: Annotated[int, Field(gt=0, le=64)] = Field(8, description="CTAs per cluster without "
                                                                            "the non-portable launch attribute")
    max_cluster_size: Annotated[int, Field(gt=0, le=64)] = 16
    xbar_latency_cycles: Cycles = Field(20, description="SM to L2 slice one-way transit")
    xbar_bytes_per_cycle_per_sm: PosInt = 64

    @model_validator(mode="after")
    def _check(self):
        if self.gx_planes_enabled is not None and self.gx_planes_enabled > self.gx_planes:
            raise ValueError(f"fabric.gx_planes_enabled={self.gx_planes_enabled} exceeds fabric.gx_planes={self.gx_planes}")
        if self.sms_per_gpc is not None:
            if len(self.sms_per_gpc) != self.gpcs:
                raise ValueError(f"sms_per_gpc has {len(self.sms_per_gpc)} entries, gpcs={self.gpcs}")
            cap = self.cpcs_per_gpc * self.sms_per_cpc
            if max(self.sms_per_gpc) > cap:
                raise ValueError(f"a GPC has more SMs than cpcs_per_gpc×sms_per_cpc={cap}")
        return self


class UnitTiming(Section):
    latency_cycles: PosCycles = Field(description="issue to result")
    interval_cycles: PosCycles = Field(description="initiation interval of the unit per sub-partition")


def _ut(lat: int, ii: int):
    return Field(default_factory=lambda: UnitTiming(latency_cycles=lat, interval_cycles=ii))


class LatenciesSpec(Section):
    """Per functional-unit class (``Unit`` of Contract 1) latency and initiation interval."""

    int: UnitTiming = _ut(4, 2)
    fp32: UnitTiming = _ut(4, 1)
    fp16: UnitTiming = _ut(4, 1)
    fp64: UnitTiming = _ut(8, 2)
    sfu: UnitTiming = _ut(21, 8)
    cvt: UnitTiming = _ut(14, 4)
    cvt_packed: UnitTiming = Field(
        default_factory=lambda: UnitTiming(latency_cycles=14, interval_cycles=4),
        description="float <-> float conversions of 32 bits or less (F2FP.*.PACK_AB, HADD2.F32); the default is "
                    "cvt's, an architecture that measured them sets its own")
    branch: UnitTiming = _ut(4, 1)
    mio: UnitTiming = _ut(23, 2)
    lsu: UnitTiming = _ut(4, 1)
    tensor: UnitTiming = _ut(24, 6)
    sync: UnitTiming = _ut(4, 1)
    misc: UnitTiming = _ut(4, 1)
    ld_param_cycles: Cycles = Field(30, description="constant-cache hit (ld.param)")
    clock_read_cycles: Cycles = 6
    bar_sync_release_cycles: Cycles = Field(20, description="last arrival to release of bar.sync")
    bar_sync_cycles_per_warp: Cycles = Field(0, description="a CTA barrier takes each warp's arrival this many "
                                             "cycles after the previous one (0 = arrivals cost nothing)")
    membar_gpu_cycles: Cycles = Field(0, description="MEMBAR.ALL.GPU (fence.acq_rel.cluster/gpu/sys, the implicit fence of mbarrier.arrive .release.cluster/gpu and of barrier.cluster.arrive.release) with nothing outstanding")
    membar_drain_cycles: Cycles = Field(0, description="MEMBAR.ALL.GPU completes this long after the last of the SM's outstanding bulk (TMA) copies and the warp's stores completes")
    membar_after_tma_cycles: Cycles = Field(0, description="MEMBAR.ALL.GPU of a warp that issued a TMA copy, or waited on "
                                            "or tested an mbarrier that TMA copies complete, since its last fence "
                                            "takes at least this long, whether or not a copy is outstanding "
                                            "(0: no such floor)")
    membar_drains: Literal["warp", "sm"] = Field(
        "warp", description="what else MEMBAR.ALL.GPU (and the release side of a .release / .acq_rel atomic) "
                            "waits for, membar_drain_cycles after its completion: 'warp' = the warp's own stores "
                            "and atomics; 'sm' = every global request the SM has outstanding (any warp's "
                            "stores, atomics, cp.async; a load until L2 has answered it as a hit would, "
                            "without its DRAM part)")


# --------------------------------------------------------------------------------------------------------
class ArchSpec(Section):
    """One GPU architecture (see module docstring)."""

    name: str
    extends: str | None = Field(None, description="parent architecture (name or path) this was derived from")
    description: str = ""
    clocks: ClocksSpec = Field(default_factory=ClocksSpec)
    sm: SmSpec = Field(default_factory=SmSpec)
    subpartition: SubpartitionSpec = Field(default_factory=SubpartitionSpec)
    cta_scheduler: Any = Field(default_factory=RoundRobinCtaScheduler)
    tensor_core: Any = Field(default_factory=WgmmaTensorCore)
    tma: Any = Field(default_factory=DefaultTma)
    mbarrier: MbarrierSpec = Field(default_factory=MbarrierSpec)
    shared_memory: SharedMemorySpec = Field(default_factory=SharedMemorySpec)
    l1: L1Spec = Field(default_factory=L1Spec)
    l2: L2Spec = Field(default_factory=L2Spec)
    hbm: HbmSpec = Field(default_factory=HbmSpec)
    fabric: FabricSpec = Field(default_factory=FabricSpec)
    latencies: LatenciesSpec = Field(default_factory=LatenciesSpec)
    sources: dict[str, str] = Field(default_factory=dict, description="free-form: key -> where a number came from")
    components: dict[str, str] = Field(default_factory=dict, description="kind of the roles whose section has no "
                                       "kind of its own: sm, gpc, cpc, xbar, gx_plane, memory, dsm (default: "
                                       "'default'); e.g. {xbar: my_crossbar} selects a registered crossbar model")

    @model_validator(mode="after")
    def _cross(self):
        f, sm = self.fabric, self.sm
        slots = f.gpcs * f.cpcs_per_gpc * f.sms_per_cpc
        if slots < sm.count:
            raise ValueError(f"sm.count={sm.count} exceeds the {slots} SM slots of fabric.gpcs×cpcs_per_gpc×sms_per_cpc")
        if f.sms_per_gpc is not None and sum(f.sms_per_gpc) != sm.count:
            raise ValueError(f"fabric.sms_per_gpc sums to {sum(f.sms_per_gpc)}, not sm.count={sm.count}")
        if self.tensor_core.units_per_sm != sm.subpartitions:
            raise ValueError(f"tensor_core.units_per_sm={self.tensor_core.units_per_sm} != sm.subpartitions={sm.subpartitions}")
        return self

    # convenience ------------------------------------------------------------------------------------
    @property
    def hbm_bytes_per_cycle(self) -> float:
        """Peak HBM bytes per SM cycle (whole GPU)."""
        return self.hbm.bandwidth_gb_per_s * 1e3 / self.clocks.sm_mhz


# --- open variant unions --------------------------------------------------------------------------------
# family -> (owner model, field, tag key, {tag: model}, default tag)
VARIANT_FAMILIES: dict[str, tuple[type[BaseModel], str, str, dict[str, type[BaseModel]], str]] = {
    "tensor_core": (ArchSpec, "tensor_core", "kind",
                    {"mma_sync": MmaSyncTensorCore, "wgmma": WgmmaTensorCore, "tcgen05": Tcgen05TensorCore,
                     "ideal_queue": IdealQueueTensorCore}, "wgmma"),
    "tma": (ArchSpec, "tma", "kind", {"default": DefaultTma}, "default"),
    "cta_scheduler": (ArchSpec, "cta_scheduler", "kind", {"round_robin": RoundRobinCtaScheduler}, "round_robin"),
    "subpartition.scheduler": (SubpartitionSpec, "scheduler", "policy",
                               {"gto": GtoScheduler, "lrr": LrrScheduler}, "gto"),
    "mbarrier": (ArchSpec, "mbarrier", "kind", {"default": MbarrierSpec}, "default"),
    "shared_memory": (ArchSpec, "shared_memory", "kind", {"default": SharedMemorySpec}, "default"),
    "l1": (ArchSpec, "l1", "kind", {"default": L1Spec}, "default"),
    "l2": (ArchSpec, "l2", "kind", {"default": L2Spec}, "default"),
    "hbm": (ArchSpec, "hbm", "kind", {"default": HbmSpec}, "default"),
}

#: component role (core/registry.py) -> the variant family its spec section belongs to
ROLE_FAMILIES = {"tma": "tma", "tensor_core": "tensor_core", "cta_scheduler": "cta_scheduler",
                 "warp_scheduler": "subpartition.scheduler", "mbarrier": "mbarrier", "shared_memory": "shared_memory",
                 "l1": "l1", "l2_slice": "l2", "hbm_channel": "hbm"}

# stand-in models used when a family's section is absent from the YAML
_DEFAULT_FACTORIES = {"tensor_core": WgmmaTensorCore, "tma": DefaultTma, "cta_scheduler": RoundRobinCtaScheduler,
                      "subpartition.scheduler": GtoScheduler, "mbarrier": MbarrierSpec,
                      "shared_memory": SharedMemorySpec, "l1": L1Spec, "l2": L2Spec, "hbm": HbmSpec}


def _tag_of(key: str, default: str):
    def disc(v):
        if isinstance(v, dict):
            return v.get(key, default)
        return getattr(v, key, None)

    disc.__name__ = f"{key}"
    return disc


def _union(family: str):
    owner, field, key, models, default = VARIANT_FAMILIES[family]
    members = tuple(Annotated[m, Tag(t)] for t, m in models.items())
    u = Union[members] if len(members) > 1 else Union[members + (members[0],)]
    return Annotated[u, Discriminator(_tag_of(key, default))]


def _install(family: str) -> None:
    owner, field, key, models, default = VARIANT_FAMILIES[family]
    dflt = models[default]
    owner.model_fields[field] = FieldInfo.from_annotated_attribute(
        _union(family), Field(default_factory=dflt, description=f"variant by '{key}': {', '.join(models)}"))


def _rebuild_all() -> None:
    """Install every family's union, rebuild each owner section once and ArchSpec last (one ArchSpec rebuild,
    not one per family: this runs at import and at every variant registration)."""
    owners = []
    for fam in VARIANT_FAMILIES:
        _install(fam)
        o = VARIANT_FAMILIES[fam][0]
        if o is not ArchSpec and o not in owners:
            owners.append(o)
    for o in owners:
        o.model_rebuild(force=True)
    ArchSpec.model_rebuild(force=True)


def register_variant(family: str, model: type[BaseModel]) -> type[BaseModel]:
    """Add ``model`` (a Section whose tag field is a ``Literal``) to a variant family and rebuild the schema,
    e.g. ``register_variant("tensor_core", SystolicTensorCore)`` after the class definition."""
    if family not in VARIANT_FAMILIES:
        raise KeyError(f"unknown variant family {family!r}; known: {sorted(VARIANT_FAMILIES)}")
    key = VARIANT_FAMILIES[family][2]
    tag = model.model_fields[key].default
    if not isinstance(tag, str):
        raise TypeError(f"{model.__name__}.{key} needs a Literal default naming the variant")
    VARIANT_FAMILIES[family][3][tag] = model
    _rebuild_all()
    return model


def variant_kinds(family: str) -> list[str]:
    return sorted(VARIANT_FAMILIES[family][3])


def spec_model(role: str, kind: str) -> type[BaseModel] | None:
    """The parameter section (pydantic model) of component ``(role, kind)``: its variant model, or the role's
    common section (e.g. ``fabric`` for ``gpc``); None if the role has no section."""
    fam = ROLE_FAMILIES.get(role)
    if fam is not None:
        return VARIANT_FAMILIES[fam][3].get(kind)
    common = {"gpc": FabricSpec, "cpc": FabricSpec, "xbar": FabricSpec, "gx_plane": FabricSpec, "dsm": FabricSpec,
              "sm": SmSpec, "subpartition": SubpartitionSpec, "memory": L2Spec}
    return common.get(role)


def _on_component_spec(reg) -> None:
    """A component registered with ``spec=`` (core/registry.py) adds its section to the variant union: one
    registration step for model and parameters."""
    fam = ROLE_FAMILIES.get(reg.role)
    if fam is None:
        raise ValueError(f"component {reg.role}/{reg.kind}: role {reg.role!r} has no spec variants "
                         f"(roles with variants: {', '.join(sorted(ROLE_FAMILIES))})")
    key = VARIANT_FAMILIES[fam][2]
    tag = reg.spec.model_fields[key].default if key in reg.spec.model_fields else None
    if tag != reg.kind:
        raise ValueError(f"component {reg.role}/{reg.kind}: its spec {reg.spec.__name__}.{key} must default to "
                         f"{reg.kind!r} (a Literal), not {tag!r}")
    if VARIANT_FAMILIES[fam][3].get(tag) is not reg.spec:
        register_variant(fam, reg.spec)


_rebuild_all()

from warpgraph.core.registry import on_spec_registered  # noqa: E402  (core: no import of ours back)

on_spec_registered(_on_component_spec)
