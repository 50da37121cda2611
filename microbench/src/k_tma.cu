// TMA (plain cp.async.bulk) microbenchmarks: issue gap T(N), admission depth, size staircase,
// serial vs pipelined vs parallel, DRAM round trip, per-SM streaming bandwidth.
#include "common.cuh"

// One thread issues N bulk copies of `bytes` each, back to back, all completing on one mbarrier.
// Rep r reads from src + r*rep_stride (rep_stride 0: same source every rep -> L2-hot after rep 0;
// rep_stride large: fresh lines every rep -> DRAM). out[3*r+0] = issue span (clock after last issue - clock
// before first), out[3*r+1] = completion (clock when try_wait first sees the phase - clock before first issue),
// out[3*r+2] = SM id.   dst_window != 0: destination offsets wrap modulo dst_window bytes (copies may overwrite
// each other: allowed, the data is not used) so that N*bytes may exceed shared memory (admission tests).
// Dynamic smem: 128 + (dst_window ? dst_window : N*bytes).
template <int N>
__device__ __forceinline__ void tma_issue_body(const char* src, u64* out, u32 bytes, u64 rep_stride, u32 reps,
                                               u32 dst_window) {
  char* smem = dyn_smem;
  u32 bar = smem_addr(smem);
  u32 dst0 = bar + 128;
  if (threadIdx.x == 0) { mbar_init(bar, 1); mbar_fence_init(); }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 parity = 0;
  for (u32 r = 0; r < reps; ++r) {
    const char* s = src + (u64)r * rep_stride;
    u32 dst[N];
    const char* sp[N];
#pragma unroll
    for (int i = 0; i < N; ++i) { dst[i] = dst0 + (dst_window ? (i * bytes) % dst_window : i * bytes); sp[i] = s + (u64)i * bytes; }
    mbar_arrive_expect_tx(bar, N * bytes);
    __syncwarp();
    u64 t0 = clk();
#pragma unroll
    for (int i = 0; i < N; ++i) bulk_g2s(dst[i], sp[i], bytes, bar);
    u64 t1 = clk();
    mbar_wait(bar, parity);
    u64 t2 = clk();
    parity ^= 1;
    out[3 * r + 0] = t1 - t0;
    out[3 * r + 1] = t2 - t0;
    out[3 * r + 2] = smid();
  }
}
#define TMA_ISSUE(N) \
  extern "C" __global__ void tma_issue_n##N(const char* src, u64* out, u32 bytes, u64 rep_stride, u32 reps, \
                                              u32 dst_window) { \
    tma_issue_body<N>(src, out, bytes, rep_stride, reps, dst_window); }
TMA_ISSUE(1) TMA_ISSUE(2) TMA_ISSUE(3) TMA_ISSUE(4) TMA_ISSUE(5) TMA_ISSUE(6) TMA_ISSUE(7) TMA_ISSUE(8)
TMA_ISSUE(9) TMA_ISSUE(10) TMA_ISSUE(11) TMA_ISSUE(12) TMA_ISSUE(13) TMA_ISSUE(14) TMA_ISSUE(15) TMA_ISSUE(16)
TMA_ISSUE(17) TMA_ISSUE(18) TMA_ISSUE(19) TMA_ISSUE(20) TMA_ISSUE(21) TMA_ISSUE(22) TMA_ISSUE(23) TMA_ISSUE(24)
TMA_ISSUE(25) TMA_ISSUE(26) TMA_ISSUE(27) TMA_ISSUE(28) TMA_ISSUE(29) TMA_ISSUE(30) TMA_ISSUE(31) TMA_ISSUE(32)

// Four transactions issued and waited one at a time (issue, wait, issue, wait, ...).
// out[2*r] = total cycles for the four, out[2*r+1] = SM id.   Dynamic smem: 4*bytes + 128.
extern "C" __global__ void tma_serial4(const char* src, u64* out, u32 bytes, u64 rep_stride, u32 reps) {
  char* smem = dyn_smem;
  u32 bar = smem_addr(smem);
  u32 dst0 = bar + 128;
  if (threadIdx.x == 0) { mbar_init(bar, 1); mbar_fence_init(); }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 parity = 0;
  for (u32 r = 0; r < reps; ++r) {
    const char* s = src + (u64)r * rep_stride;
    u64 t0 = clk();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      mbar_arrive_expect_tx(bar, bytes);
      bulk_g2s(dst0 + i * bytes, s + (u64)i * bytes, bytes, bar);
      mbar_wait(bar, parity);
      parity ^= 1;
    }
    u64 t1 = clk();
    out[2 * r] = t1 - t0;
    out[2 * r + 1] = smid();
  }
}

// Four warps (one per SM sub-partition), lane 0 of each issues one transaction at the same moment.
// out[r*8 + 2*w] = clock before issue (relative to warp 0's), [2*w+1] = clock after issue; [r*8+...] per warp w.
// Completion of all four: out[reps*8 + r].   Dynamic smem: 4*bytes + 128.
extern "C" __global__ void tma_parallel4(const char* src, u64* out, u32 bytes, u64 rep_stride, u32 reps) {
  char* smem = dyn_smem;
  __shared__ u64 ts[8];
  u32 bar = smem_addr(smem);
  u32 dst0 = bar + 128;
  u32 w = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) { mbar_init(bar, 1); mbar_fence_init(); }
  __syncthreads();
  u32 parity = 0;
  for (u32 r = 0; r < reps; ++r) {
    const char* s = src + (u64)r * rep_stride;
    if (threadIdx.x == 0) mbar_arrive_expect_tx(bar, 4 * bytes);
    __syncthreads();
    if (lane == 0) {
      u32 d = dst0 + w * bytes;
      const char* sp = s + (u64)w * bytes;
      u64 t0 = clk();
      bulk_g2s(d, sp, bytes, bar);
      u64 t1 = clk();
      ts[2 * w] = t0; ts[2 * w + 1] = t1;
    }
    if (threadIdx.x == 0) {
      mbar_wait(bar, parity);
      u64 t2 = clk();
      out[reps * 8 + r] = t2;  // absolute; host subtracts min start
    }
    parity ^= 1;
    __syncthreads();
    if (threadIdx.x < 8) out[r * 8 + threadIdx.x] = ts[threadIdx.x];
    __syncthreads();
  }
}

// Streaming: one thread per CTA keeps `stages` bulk copies of `chunk` bytes in flight over a region of
// `region` bytes (wrapping; CTA b starts at offset b*cta_offset). out[2*blockIdx.x] = cycles for `chunks`
// chunks, out[2*blockIdx.x+1] = SM id.   Dynamic smem: stages*(chunk) + 128 + stages*8.
extern "C" __global__ void tma_stream(const char* src, u64* out, u32 chunk, u32 stages, u32 chunks, u64 region,
                                      u64 cta_offset) {
  char* smem = dyn_smem;
  u32 bars = smem_addr(smem);       // stages mbarriers, 8 bytes each
  u32 buf0 = bars + 1024;
  if (threadIdx.x == 0) {
    for (u32 i = 0; i < stages; ++i) mbar_init(bars + 8 * i, 1);
    mbar_fence_init();
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u64 off = ((u64)blockIdx.x * cta_offset) % region;
  u64 t0 = clk();
  u32 issued = 0;
  for (; issued < stages && issued < chunks; ++issued) {
    u32 b = bars + 8 * issued;
    mbar_arrive_expect_tx(b, chunk);
    bulk_g2s(buf0 + issued * chunk, src + off, chunk, b);
    off += chunk; if (off + chunk > region) off = 0;
  }
  for (u32 done = 0; done < chunks; ++done) {
    u32 st = done % stages;
    mbar_wait(bars + 8 * st, (done / stages) & 1);
    if (issued < chunks) {
      u32 b = bars + 8 * st;
      mbar_arrive_expect_tx(b, chunk);
      bulk_g2s(buf0 + st * chunk, src + off, chunk, b);
      off += chunk; if (off + chunk > region) off = 0;
      ++issued;
    }
  }
  u64 t1 = clk();
  out[2 * blockIdx.x] = t1 - t0;
  out[2 * blockIdx.x + 1] = smid();
}
