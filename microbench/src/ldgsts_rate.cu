// cp.async (LDGSTS) on an H200 (issue #15): how fast one SM's warps copy global -> shared memory with the
// non-bulk cp.async that Triton's pipelined pointer loads use (`cp.async.ca` for 4 / 8 B pieces, `cp.async.cg` for
// 16 B), and its round trip. The gallery's row softmaxes copy unaligned rows 4 B per lane (64 LDGSTS.E per thread
// and row on softmax_r32_c3000) and run 20-31 % short in the model, which charges one LSU cycle per 128-B line.
// A self-contained program; one text line per result (parsed by microbench/parse_ldgsts_rate.py).
//   LGS grid=<G> warps=<W> size=<B> cg=<0|1> depth=<D> region=<R>: G CTAs (one per SM: 150 KiB dynamic shared
//        memory) of 32 W threads; every warp issues `reps` rounds of D coalesced cp.async of B bytes per lane
//        (32 B bytes per instruction) from its CTA's own R bytes (R = 256 KiB: L2-resident after the first round;
//        8 MiB: DRAM misses) into its own shared slice, then cp.async.commit_group + cp.async.wait_group 0.
//        t0 / t1 = %clock64 around the rounds after / before a __syncthreads. bytes_per_cycle = G-median of the
//        CTA's bytes / (t1 - t0); cyc_per_round = (t1 - t0) / reps; ins_per_cycle = W * D * reps / (t1 - t0).
//        depth = 1, warps = 1 is the round trip of one copy (commit + wait included).
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a ldgsts_rate.cu
#include "common.cuh"
#include "check.cuh"
#include "host.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)

template <int B, int CG>
__device__ __forceinline__ void cpa(u32 dst, const char* src) {
  if (CG) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  else if (B == 4) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
  else if (B == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(dst), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

// out[2*b]: t1 - t0 of CTA b, out[2*b+1]: its smid
template <int B, int CG>
__global__ void __launch_bounds__(1024, 1) k_lgs(const char* buf, u64* out, u32 reps, u32 depth, size_t region) {
  extern __shared__ __align__(16) char sm[];
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  const char* base = buf + (size_t)blockIdx.x * region;
  const size_t mask = region - 1;
  const size_t step = (size_t)nw * 32 * B;                       // one instruction of every warp
  size_t off = ((size_t)warp * 32 + lane) * B;
  // each warp's shared slice: depth x 32 lanes x B bytes, wrapping inside 128 KiB
  const u32 sm0 = smem_addr(sm), sw = warp * depth * 32 * B;
  __syncthreads();
  const u64 t0 = clk();
  for (u32 r = 0; r < reps; ++r) {
    for (u32 j = 0; j < depth; ++j) {
      cpa<B, CG>(sm0 + ((sw + (j * 32 + lane) * B) & ((128u << 10) - 1)), base + ((off + j * step) & mask));
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    off = (off + depth * step) & mask;
  }
  __syncthreads();
  const u64 t1 = clk();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = smid(); }
}

static u64* d_out;
static char* d_buf;

template <int B, int CG>
static void launch(int grid, int warps, u32 reps, u32 depth, size_t region) {
  k_lgs<B, CG><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, depth, region);
}

static void run(int grid, int warps, int size, int cg, u32 depth, size_t region, u32 reps) {
  for (int rep = 0; rep < 2; ++rep) {
    if (cg) launch<16, 1>(grid, warps, reps, depth, region);
    else if (size == 4) launch<4, 0>(grid, warps, reps, depth, region);
    else if (size == 8) launch<8, 0>(grid, warps, reps, depth, region);
    else launch<16, 0>(grid, warps, reps, depth, region);
    CK(cudaGetLastError());
    const double med = median_column(d_out, grid, 2, 0);
    const double bytes = (double)reps * depth * 32 * size * warps;
    printf("LGS grid=%d warps=%d size=%d cg=%d depth=%u region=%zu rep=%d reps=%u cycles=%.0f bytes_per_cycle=%.2f "
           "cyc_per_round=%.2f ins_per_cycle=%.3f\n", grid, warps, size, cg, depth, region, rep, reps, med,
           bytes / med, med / reps, (double)warps * depth * reps / med);
  }
}

template <int B, int CG>
static void attr() {
  CK(cudaFuncSetAttribute(k_lgs<B, CG>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  attr<4, 0>(); attr<8, 0>(); attr<16, 0>(); attr<16, 1>();
  const size_t small = (size_t)256 << 10, big = (size_t)8 << 20;
  CK(cudaMalloc(&d_out, 16 * 1024));
  CK(cudaMalloc(&d_buf, (size_t)S * big));
  CK(cudaMemset(d_buf, 1, (size_t)S * big));
  // round trip: one warp, one copy per round
  for (int b : {4, 16}) { run(1, 1, b, 0, 1, small, 64); }
  run(1, 1, 16, 1, 1, small, 64);
  run(1, 1, 16, 1, 1, big, 64);
  // one SM's throughput: 1-32 warps, 8 / 32 copies in flight per warp, each size, .ca and .cg (16 B)
  for (int w : {1, 4, 8, 16, 32})
    for (u32 d : {8u, 32u}) {
      run(1, w, 4, 0, d, small, 32);
      run(1, w, 8, 0, d, small, 32);
      run(1, w, 16, 0, d, small, 32);
      run(1, w, 16, 1, d, small, 32);
    }
  // DRAM-missing sources, and every SM
  for (int w : {4, 16}) { run(1, w, 4, 0, 32, big, 32); run(1, w, 16, 1, 32, big, 32); }
  for (int g : {33, S})
    for (int w : {4, 16}) {
      run(g, w, 4, 0, 32, small, 32); run(g, w, 16, 1, 32, small, 32);
      run(g, w, 4, 0, 32, big, 32); run(g, w, 16, 1, 32, big, 32);
    }
  printf("DONE\n");
  return 0;
}
