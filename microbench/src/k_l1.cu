// L1 throughput for loads whose lanes touch many 128-B lines (Triton's unvectorised ld.global.b16 pattern,
// e.g. gemm_ptr with N = 3000: lane i reads row i of a K-major tile, 2 bytes at a time).
// Thread (warp w, lane l) reads 2-byte elements at  base + w*warp_stride + l*lane_stride + 8*j  for j = 0..31 per
// iteration (32 independent ld.global.b16 per iteration: one 256-B span per lane, like the Triton kernel's
// n + 4j columns); `advance` bytes are added to the base every iteration (0: the same lines every iteration,
// L1-resident after the first; > 0: fresh lines, whose first-sector touches miss to L2).
// lane_stride 2 -> 1 line per warp-load; 16 -> 4; 64 -> 16; 256 or 6000 -> 32 distinct lines per warp-load.
// out[2*(blockIdx*warps + w)] = cycles for `iters` iterations, out[...+1] = SM id.
#include "common.cuh"

extern "C" __global__ void l1_scatter(const char* base, u64* out, u32* sink, u32 lane_stride, u32 warp_stride,
                                      u32 block_stride, u32 advance, u32 iters) {
  const u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const char* p = base + (size_t)blockIdx.x * block_stride + (size_t)warp * warp_stride + (size_t)lane * lane_stride;
  u32 acc = 0;
  __syncthreads();
  u64 t0 = clk();
  for (u32 it = 0; it < iters; ++it) {
    unsigned short v[32];
#pragma unroll
    for (int j = 0; j < 32; ++j)
      asm volatile("ld.global.b16 %0, [%1];" : "=h"(v[j]) : "l"(p + 8 * j) : "memory");
#pragma unroll
    for (int j = 0; j < 32; ++j) acc += v[j];
    p += advance;
  }
  u64 t1 = clk();
  if (acc == 0x12345678u) sink[0] = acc;
  if (lane == 0) {
    size_t g = (size_t)blockIdx.x * (blockDim.x / 32) + warp;
    out[2 * g] = t1 - t0;
    out[2 * g + 1] = smid();
  }
}
