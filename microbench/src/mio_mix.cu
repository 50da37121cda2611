// Does SHFL share its throughput with shared-memory loads on an H200? One CTA of W warps on one SM; every warp runs
// 8 independent chains per iteration of the mixes below (32 iterations); SM cycles per iteration and warp, from
// thread 0's clocks around two bar.syncs. Issue #15: the model puts SHFL (1 per SM cycle, alu_latency) on the
// sub-partition's MIO pipe for 4 cycles, which holds back the LDS / LDSM / STS behind it; FlashAttention's
// `mio_throttle` is 0.77 per issue in the model and 0.14 on the H200.
//   MIX mode=<m> warps=<W>: m = shfl (8 SHFL.BFLY), lds (8 LDS.32, conflict free), lds128 (8 LDS.128),
//       shfl_lds (8 SHFL + 8 LDS.32), shfl_lds128 (8 SHFL + 8 LDS.128), shfl_ffma (8 SHFL + 8 FFMA).
//       cycles = SM cycles per iteration per warp (one iteration = the 8 or 16 instructions of its mix).
// W = 1, 2, 4 keep at most one warp per sub-partition: 8 independent SHFL chains of one warp take 32 cycles per
// iteration if each sub-partition has its own 4-cycle MIO slot (the model), ~8 if the one-per-SM-cycle SHFL
// throughput is shared by the sub-partitions (an idle neighbour's share is free): that decides the model of
// FlashAttention's row-reduction bursts.
// A self-contained program; one text line per result (parsed by microbench/parse_mio_mix.py). Clocks are never
// touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a mio_mix.cu
#include "common.cuh"
#include "check.cuh"
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__shared__ __align__(16) u32 sm_buf[8192];   // 32 KiB

__device__ __forceinline__ u32 shfl(u32 v) {
  u32 r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, -1;" : "=r"(r) : "r"(v));
  return r;
}
__device__ __forceinline__ u32 lds(u32 addr) {
  u32 r;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r) : "r"(addr) : "memory");
  return r;
}
__device__ __forceinline__ u32 lds128(u32 addr) {
  u32 a, b, c, d;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
  return a ^ b ^ c ^ d;
}
__device__ __forceinline__ u32 ffma(u32 v, u32 a, u32 b) {
  u32 r;
  asm volatile("fma.rn.f32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(a), "r"(b));
  return r;
}

// MODE: 0 shfl, 1 lds, 2 lds128, 3 shfl_lds, 4 shfl_lds128, 5 shfl_ffma. out[0] = 100 x SM cycles per iteration
// per warp. bp = 0 at run time (per-thread zeros the compiler cannot fold: see alu_latency.cu).
template <int MODE>
__global__ void k_mix(u64* out, u32 ap, u32 bp, u32 iters) {
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) sm_buf[i] = 0;
  __syncthreads();
  const u32 b = bp * threadIdx.x, a = ap + b;
  const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const u32 base = smem_addr(sm_buf) + ((w * 512) % 16384);
  u32 s[8], l[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) { s[c] = a + c; l[c] = 0; }
  __syncthreads();
  u64 t0 = clk();
  __syncthreads();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      // the load address moves with the iteration and the chain (ptxas cannot merge the loads) and adds the
      // previous value (zero), so each load chain is dependent as the SHFL chains are
      const u32 addr = base + ((c * 64 + (i & 7) * 8) & 511) * 4 + l[c];
      if (MODE == 0 || MODE == 3 || MODE == 4 || MODE == 5) s[c] = shfl(s[c]);
      if (MODE == 1 || MODE == 3) l[c] = lds(addr + lane * 4);
      if (MODE == 2 || MODE == 4) l[c] = lds128(addr + lane * 16);
      if (MODE == 5) l[c] = ffma(l[c], a, b);
    }
  }
  __syncthreads();
  u64 t1 = clk();
  u32 x = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) x ^= s[c] ^ l[c];
  if (threadIdx.x == 0) out[0] = (u64)((double)(t1 - t0) / ((double)iters * (blockDim.x / 32)) * 100.0);
  if (x == 12345u) out[1] = x;
}

static u64* d_out;
static const char* NAMES[] = {"shfl", "lds", "lds128", "shfl_lds", "shfl_lds128", "shfl_ffma"};

template <int MODE>
static void run_mode() {
  for (int W : {1, 2, 4, 8, 16, 32})   // 1-4: one warp per sub-partition at most (a per-SP MIO pipe vs an SM-wide one)
    for (int rep = 0; rep < 3; ++rep) {
      k_mix<MODE><<<1, 32 * W>>>(d_out, 0x3f800000u, 0u, 32);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      u64 h;
      CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
      printf("MIX mode=%s warps=%d rep=%d cycles=%.3f\n", NAMES[MODE], W, rep, h / 100.0);
    }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64));
  run_mode<0>(); run_mode<1>(); run_mode<2>(); run_mode<3>(); run_mode<4>(); run_mode<5>();
  printf("DONE\n");
  return 0;
}
