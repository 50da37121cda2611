// Do cp.async fills of shared memory take the shared-memory bandwidth that ldmatrix reads use? (run_smem_fill.sh)
// One CTA on one SM: R reader warps run ldmatrix.x4 throughput loops (8 independent conflict-free loads per
// iteration, the rows moving with the iteration, as ldmatrix.cu's k_tput: 128 B per SM cycle alone on an H200),
// while F filler warps stream cp.async.cg 16 B per lane from a 256 KiB L2-resident region into their own 64 KiB of
// shared memory (16 copies = 8 KiB per warp per round, at most 4 rounds in flight), until the readers are done.
// Prints per case: the readers' SM cycles per ldmatrix and bytes per cycle, the fillers' bytes per cycle. If fills
// and reads share the 128 B/cycle data path, reads + fills <= 128 B/cycle. Why: the timing model charges cp.async
// (and TMA) writes of shared memory nothing (components/sm_core.py), and with ptxas's issue order
// (sass.issue_order=2) the sm_80 GEMM gemm80 runs 13 % short of the H200 (docs/accuracy.md).
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a smem_fill.cu
// As run (results/h100_window_2026-12-07): filler warp w streams 256 KiB from (w x 8 KiB) mod 256 KiB on, past the
// source's end for w > 0 (up to 312 KiB into its 2 MiB allocation); make_smem_fill_records.py models a 320 KiB source.
#include "common.cuh"
#include "check.cuh"
#include <cstdio>
#include <cuda_runtime.h>

constexpr int LDSM_BYTES = 32 * 1024;   // the readers' rows (zeros)
constexpr int FILL_BYTES = 64 * 1024;   // each filler warp's 8 KiB slots, 8 warps at most
constexpr int SRC_BYTES = 256 * 1024;

__device__ __forceinline__ u32 ldsm4(u32 addr) {
  u32 a, b, c, d;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
  return a ^ b ^ c ^ d;
}

// out: [0] reader cycles (max over reader warps), [1] reader LDSMs, [2] filler cycles (max), [3] filler bytes
extern "C" __global__ void smem_fill(const int4* __restrict__ src, int readers, u32 iters, int fill_rounds,
                                     u64* out) {
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ volatile int done;
  const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int i = threadIdx.x; i < LDSM_BYTES / 4; i += blockDim.x) ((u32*)dyn)[i] = 0;
  // bring the source into L2 (and not L1: .cg)
  int acc0 = 0;
  for (int i = threadIdx.x; i < SRC_BYTES / 16; i += blockDim.x) {
    int a, b, c, d;
    asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(src + i));
    acc0 ^= a ^ b ^ c ^ d;
  }
  if (threadIdx.x == 0) done = 0;
  __syncthreads();
  if ((int)w < readers) {
    const u32 base = smem_addr(dyn) + ((w * 512) % LDSM_BYTES) + lane * 16;
    u32 acc = 0;
    u64 t0 = clk();
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
      for (int k = 0; k < 8; ++k) acc ^= ldsm4(base + ((k * 512 + ((i & 3) << 12)) % LDSM_BYTES));
    }
    u64 t1 = clk();
    if (lane == 0) { atomicMax(&out[0], t1 - t0); atomicAdd(&out[1], (u64)iters * 8); }
    if (lane == 0) done = 1;            // any reader ends the fillers' window
    if (acc == 12345u) out[4] = acc;
  } else {
    const u32 fw = w - readers;
    const u32 slot = smem_addr(dyn) + LDSM_BYTES + (fw % 8) * 8192 + lane * 16;
    const int4* s = src + ((fw * 8192) % SRC_BYTES) / 16 + lane;
    u64 bytes = 0;
    u64 t0 = clk();
    for (int r = 0; fill_rounds ? r < fill_rounds : !done; ++r) {
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const int4* g = s + (((r * 16 + k) * 32) % (SRC_BYTES / 16));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(slot + (k & 15) * 512), "l"(g) : "memory");
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
      asm volatile("cp.async.wait_group 3;" ::: "memory");
      bytes += 16 * 512;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    u64 t1 = clk();
    if (lane == 0) { atomicMax(&out[2], t1 - t0); atomicAdd(&out[3], bytes); }
  }
  if (acc0 == 0x12345678) out[5] = acc0;
}

int main() {
  int4* src; u64* out;
  CK(cudaMalloc(&src, SRC_BYTES)); CK(cudaMemset(src, 1, SRC_BYTES));
  CK(cudaMalloc(&out, 8 * sizeof(u64)));
  CK(cudaFuncSetAttribute(smem_fill, cudaFuncAttributeMaxDynamicSharedMemorySize, LDSM_BYTES + FILL_BYTES));
  struct Case { int r, f; } cases[] = {{8, 0}, {16, 0}, {0, 4}, {0, 8}, {8, 4}, {8, 8}, {4, 8}, {16, 8}, {4, 4}};
  for (auto c : cases)
    for (int rep = 0; rep < 3; ++rep) {
      CK(cudaMemset(out, 0, 8 * sizeof(u64)));
      smem_fill<<<1, 32 * (c.r + c.f), LDSM_BYTES + FILL_BYTES>>>(src, c.r, 512, c.r ? 0 : 400, out);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      u64 h[4];
      CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
      const double rb = h[0] ? (double)h[1] * 512 / h[0] : 0, fb = h[2] ? (double)h[3] / h[2] : 0;
      printf("FILL readers=%d fillers=%d rep=%d ldsm=%llu ldsm_cycles=%llu ldsm_bytes_per_cycle=%.1f "
             "fill_bytes=%llu fill_cycles=%llu fill_bytes_per_cycle=%.1f\n", c.r, c.f, rep,
             (unsigned long long)h[1], (unsigned long long)h[0], rb, (unsigned long long)h[3],
             (unsigned long long)h[2], fb);
    }
  printf("DONE\n");
  return 0;
}
