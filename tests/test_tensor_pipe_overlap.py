"""Tensor-pipe interplay with the rest of the sub-partition: warp bundles of tensor kernels (one warp per
sub-partition), the wgmma accumulator register-file share that slows other instructions, the per-warp
mma.sync issue interval."""
import pytest

from warpgraph.components.tensor_core import WgmmaTensorCoreUnit
from warpgraph.runner.synthetic import I, Kind, Unit, kernel, trace
from warpgraph.runner.timing import BundleBuilder, lower
from warpgraph.topologies import load_arch

SPEC = load_arch("h200")


def _groups(prog, warps):
    return BundleBuilder(trace(prog, 1, warps), lower(prog, SPEC)).ws_groups(0)


def _fadd(d):
    return I("add", ("f32",), Kind.ALU, Unit.FP32, dsts=(d,))


def test_tensor_kernel_bundles_hold_one_warp_per_subpartition():
    ret = I("ret", (), Kind.EXIT, Unit.BRANCH)
    mma = I("mma", ("sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32"), Kind.MMA_SYNC,
            Unit.TENSOR, dsts=(1,), srcs=(0,))
    plain = _groups(kernel([_fadd(0), ret]), 8)
    assert plain == [list(range(8))]                      # identical streams: one bundle (perfect interleave)
    tens = _groups(kernel([_fadd(0), mma, ret]), 8)
    assert sorted(w for g in tens for w in g) == list(range(8))
    for g in tens:                                        # never two warps of one sub-partition in a bundle
        sps = [w % 4 for w in g]
        assert len(sps) == len(set(sps))
    assert len(tens) == 2


@pytest.mark.parametrize("n", [64, 128, 256])
def test_wgmma_register_file_share_is_traffic_over_bandwidth(n):
    tc = WgmmaTensorCoreUnit(SPEC)
    t = 100
    flops = 2 * 64 * n * 16
    tc.wgmma(t, 0, 0, flops, 0, n, False)
    svc = flops / SPEC.tensor_core.dense_fp16_flop_per_cycle_per_sm
    per_sp = 64 * n * 4 / SPEC.sm.subpartitions               # a quarter of the accumulators per sub-partition
    share = per_sp / svc / SPEC.tensor_core.register_file_bytes_per_cycle_per_subpartition
    assert tc.rf_share[0] == pytest.approx(share)
    assert 0 < tc.rf_share[0] < 1
    # the service period the SM core tests against: from the op's start to the end of its service
    assert tc.busy_from[0] >= t and tc.free[0] == pytest.approx(tc.busy_from[0] + svc)
    assert tc.rf_share[1] == 0 and tc.free[1] == 0            # other SMs untouched


def test_wgmma_busy_period_restarts_after_idle_gap():
    tc = WgmmaTensorCoreUnit(SPEC)
    f = 2 * 64 * 128 * 16
    tc.wgmma(0, 0, 0, f, 0, 128, False)
    first_end = tc.free[0]
    tc.wgmma(int(first_end) + 500, 0, 0, f, 0, 128, False)    # long after the first op's service
    assert tc.busy_from[0] > first_end + 400


def test_mma_warp_issue_gap_comes_from_spec():
    tc = WgmmaTensorCoreUnit(SPEC)
    assert tc.warp_issue_gap == SPEC.tensor_core.mma_sync_warp_issue_gap_cycles
    # the per-warp interval only matters for shapes whose pipe gap is shorter (k8: 3 cycles)
    k8 = tc.mma_timing("f16.m16n8k8")[0]
    k16 = tc.mma_timing("f16.m16n8k16")[0]
    assert k8 < tc.warp_issue_gap <= k16
