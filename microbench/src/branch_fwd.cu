// The cost of a taken forward branch, and of one ptxas predicates (run_branch_fwd.sh; parse_branch_fwd.py). Written
// 2026-12-05 beside branch_cost.cu (the back edge: a taken BRA holds the warp ~10 cycles): the model charges that
// hold only for branches ptxas keeps as a SASS branch (workloads/sass.py branch_periods); this checks both halves.
//  BRF  one warp (or W, one per sub-partition for W <= 4), a loop of `iters` iterations (not unrolled): A dependent
//       fma.rn.f32 links, then `if (i & mask) { S more links }`, then A links; mask = 0: the block is skipped every
//       iteration (ptxas keeps a forward BRA over it for S = 32: taken), mask = -1: it runs every iteration but
//       the first (the BRA falls through). The condition reads the loop counter, so ptxas cannot unswitch the loop.
//       S = 1: ptxas predicates the one link (no branch). thread 0's %clock64 around the loop: cycles per iteration.
#include <cstdio>
#include <cuda_runtime.h>
#include "check.cuh"
#include "host.cuh"
#include "fma_chain.cuh"

template <int A, int S>
__global__ void k_fwd(u64* out, float* sink, int iters, int mask, float a, float b) {
  float x = (float)threadIdx.x;
  __syncthreads();
  u64 t0 = clk();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    x = chain<A>(x, a, b);
    if (i & mask) x = chain<S>(x, a, b);
    x = chain<A>(x, a, b);
  }
  u64 t1 = clk();
  if ((threadIdx.x & 31) == 0) out[threadIdx.x >> 5] = t1 - t0;
  if (x == 12345.f) sink[0] = x;
}

static u64* d_out;
static float* d_sink;

template <int A, int S>
static void brf(int warps, int iters, int mask) {
  for (int rep = 0; rep < 3; ++rep) {
    k_fwd<A, S><<<1, 32 * warps>>>(d_out, d_sink, iters, mask, 1.0f, 0.0f);
    const double cyc = median_column(d_out, warps, 1, 0);   // per-warp cycles
    printf("BRF A=%d S=%d warps=%d iters=%d mask=%d rep=%d cycles=%.0f cycles_per_iter=%.2f\n", A, S, warps, iters,
           mask, rep, cyc, cyc / iters);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64 * sizeof(u64)));
  CK(cudaMalloc(&d_sink, 64));
  for (int w : {1, 4}) {
    brf<8, 32>(w, 512, 0);    // a taken forward branch over 32 links
    brf<8, 32>(w, 512, -1);   // the same branch falling through (the 32 links run)
    brf<8, 1>(w, 512, 0);     // a one-link if: predicated, skipped
    brf<8, 1>(w, 512, -1);    // predicated, runs
    brf<4, 32>(w, 512, 0);
    brf<16, 32>(w, 256, 0);
  }
  printf("DONE\n");
  return 0;
}
