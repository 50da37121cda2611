// The cost of a loop's back edge (run_branch_cost.sh; parse_branch_cost.py). Written 2026-12-05: the H200's
// dependent-chain microbenchmarks (alu_latency.cu) spend ~18 cycles per 64-link unrolled iteration beyond the chain
// (FADD / FFMA / FMNMX / IMAD: 4.28 cycles per link against the model's 4.02), which the model's 2-cycle branch
// resolution does not give; before `latencies.branch` changes (it touches every loop), this measures it.
//  BRL  W warps of one CTA (one per sub-partition for W <= 4), each a dependent chain of L fma.rn.f32 links per
//       loop iteration (inline PTX, so that nothing folds), `iters` iterations; thread 0's %clock64 around the loop
//       (after a bar.sync): cycles per iteration and per link. cycles per iteration = overhead + L x link latency:
//       the least-squares intercept over L is the back edge's cost (loop counter, compare, taken branch).
//  BRS  the same chains with no loop (L links straight, once): the chain alone.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "check.cuh"
#include "host.cuh"
#include "fma_chain.cuh"

template <int L>
__global__ void k_loop(u64* out, float* sink, int iters, float a, float b) {
  float x = (float)threadIdx.x;
  __syncthreads();
  u64 t0 = clk();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) x = chain<L>(x, a, b);   // one back edge per L links (not unrolled)
  u64 t1 = clk();
  if ((threadIdx.x & 31) == 0) out[threadIdx.x >> 5] = t1 - t0;
  if (x == 12345.f) sink[0] = x;
}

template <int L>
__global__ void k_straight(u64* out, float* sink, float a, float b) {
  float x = (float)threadIdx.x;
  __syncthreads();
  u64 t0 = clk();
  x = chain<L>(x, a, b);
  u64 t1 = clk();
  if ((threadIdx.x & 31) == 0) out[threadIdx.x >> 5] = t1 - t0;
  if (x == 12345.f) sink[0] = x;
}

static u64* d_out;
static float* d_sink;

template <int L>
static void brl(int warps, int iters) {
  for (int rep = 0; rep < 3; ++rep) {
    k_loop<L><<<1, 32 * warps>>>(d_out, d_sink, iters, 1.0f, 0.0f);
    const double cyc = median_column(d_out, warps, 1, 0);   // per-warp cycles
    printf("BRL L=%d warps=%d iters=%d rep=%d cycles=%.0f cycles_per_iter=%.2f cycles_per_link=%.3f\n", L, warps,
           iters, rep, cyc, cyc / iters, cyc / iters / L);
  }
}

template <int L>
static void brs(int warps) {
  for (int rep = 0; rep < 3; ++rep) {
    k_straight<L><<<1, 32 * warps>>>(d_out, d_sink, 1.0f, 0.0f);
    const double cyc = median_column(d_out, warps, 1, 0);   // per-warp cycles
    printf("BRS L=%d warps=%d rep=%d cycles=%.0f cycles_per_link=%.3f\n", L, warps, rep, cyc, cyc / L);
  }
}

template <int L>
static void both(int iters) {
  for (int w : {1, 4, 8}) brl<L>(w, iters);
  for (int w : {1, 4}) brs<L>(w);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64 * sizeof(u64)));
  CK(cudaMalloc(&d_sink, 64));
  both<1>(1024);
  both<2>(1024);
  both<4>(512);
  both<8>(512);
  both<16>(256);
  both<32>(256);
  both<64>(128);
  both<128>(64);
  both<512>(16);
  printf("DONE\n");
  return 0;
}
