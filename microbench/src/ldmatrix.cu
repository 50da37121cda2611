// ldmatrix (LDSM) on an H200: the dependent latency and the per-SM throughput of ldmatrix.sync.aligned.m8n8
// .x1 / .x2 / .x4 [.trans] .shared.b16, the shared-memory path that sm_80-style Triton kernels (mma.sync GEMM and
// FlashAttention) feed their tensor cores through. Issue #15: gemm80 / attn80 run +10.5 / +5.6 % long in the model
// with short_scoreboard (waiting on an MIO result) 2.45 per issue vs the H200's 1.42.
// A self-contained program; one text line per result (parsed by microbench/parse_ldmatrix.py).
//   LDSM mode=lat num=<1|2|4> trans=<0|1>: one warp, a dependent chain (the next row address adds the loaded
//        value, zero), `iters` links after 16 warm-up: cycles per link (includes the IADD that forms the address).
//   CTRL mode=lat: the same chain with ld.shared.b32 instead (the plain shared-load latency, for the difference).
//   LDSM mode=tput num=<n> warps=<W>: one CTA of W warps on one SM, each issuing 8 independent ldmatrix per
//        iteration (conflict-free rows: lane l reads 16 B at l * 16, the rows move with the iteration so that
//        ptxas cannot merge the unrolled loop's loads), `iters` iterations: SM cycles per ldmatrix
//        (from thread 0's clocks around two bar.syncs) and bytes per SM cycle.
//   LDS mode=tput vec=<4|16> warps=<W>: the same loop with ld.shared.b32 / ld.shared.v4.b32 at the same addresses
//        (the plain shared-load throughput, for comparison; num = bytes per lane / 4).
// Every asm carries a "memory" clobber: without it ptxas merges the unrolled loop's repeated loads of one
// address (a first run counted 4x the loads it issued). Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a ldmatrix.cu
#include "common.cuh"
#include "check.cuh"
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__shared__ __align__(1024) unsigned short sm_buf[16 * 1024];   // 32 KiB of zeros

template <int NUM, int TRANS>
__device__ __forceinline__ u32 ldsm(u32 addr) {
  u32 a, b, c, d;
  if (NUM == 1) {
    if (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(addr) : "memory");
    else asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(addr) : "memory");
    return a;
  } else if (NUM == 2) {
    if (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
    else asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
    return a ^ b;
  } else {
    if (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
    else asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                      : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
    return a ^ b ^ c ^ d;
  }
}

// out[0] = 100 x cycles per link, out[1] = sink
template <int NUM, int TRANS, int CTRL>
__global__ void k_lat(u64* out, u32 iters) {
  for (int i = threadIdx.x; i < 16 * 1024; i += blockDim.x) sm_buf[i] = 0;
  __syncthreads();
  const u32 base = smem_addr(sm_buf) + (threadIdx.x & 31) * 16;
  u32 addr = base, v = 0;
  u64 t0 = 0;
  for (u32 i = 0; i < iters + 16; ++i) {
    if (i == 16) t0 = clk();
    if (CTRL) asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    else v = ldsm<NUM, TRANS>(addr);
    addr = base + v;
  }
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[0] = (u64)((double)(t1 - t0) / iters * 100.0); out[1] = v; }
}

// out[0] = 100 x SM cycles per ldmatrix, out[1] = sink
template <int NUM>
__device__ __forceinline__ u32 lds(u32 addr) {
  u32 a, b, c, d;
  if (NUM == 1) { asm volatile("ld.shared.b32 %0, [%1];" : "=r"(a) : "r"(addr) : "memory"); return a; }
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
  return a ^ b ^ c ^ d;
}

template <int NUM, int PLAIN>
__global__ void k_tput(u64* out, u32 iters) {
  for (int i = threadIdx.x; i < 16 * 1024; i += blockDim.x) sm_buf[i] = 0;
  __syncthreads();
  const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const u32 base = smem_addr(sm_buf) + ((w * 512) % (16 * 1024)) + lane * 16;
  u32 acc = 0;
  u64 t0 = clk();
  __syncthreads();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {   // the address moves with i: ptxas cannot merge an unrolled loop's loads
      const u32 a = base + k * 512 + ((i & 3) << 12);
      acc ^= PLAIN ? lds<NUM>(a) : ldsm<NUM, 0>(a);
    }
  }
  __syncthreads();
  u64 t1 = clk();
  if (threadIdx.x == 0) {
    out[0] = (u64)((double)(t1 - t0) / ((double)iters * 8 * (blockDim.x / 32)) * 100.0);
  }
  if (acc == 12345) out[1] = acc;
}

static u64* d_out;
template <int NUM, int TRANS, int CTRL>
static void lat(u32 iters) {
  for (int rep = 0; rep < 3; ++rep) {
    k_lat<NUM, TRANS, CTRL><<<1, 32>>>(d_out, iters);
    CK(cudaDeviceSynchronize());
    u64 h;
    CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
    if (CTRL) printf("CTRL mode=lat rep=%d iters=%u cycles=%.2f\n", rep, iters, h / 100.0);
    else printf("LDSM mode=lat num=%d trans=%d rep=%d iters=%u cycles=%.2f\n", NUM, TRANS, rep, iters, h / 100.0);
  }
}
template <int NUM, int PLAIN = 0>
static void tput(u32 iters) {
  for (int W : {1, 2, 4, 8, 16, 32})
    for (int rep = 0; rep < 2; ++rep) {
      k_tput<NUM, PLAIN><<<1, 32 * W>>>(d_out, iters);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      u64 h;
      CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
      double c = h / 100.0;
      if (PLAIN)
        printf("LDS mode=tput vec=%d warps=%d rep=%d iters=%u cycles_per_inst_sm=%.3f bytes_per_cycle_sm=%.1f\n",
               4 * NUM, W, rep, iters, c, 128.0 * NUM / c);
      else
        printf("LDSM mode=tput num=%d warps=%d rep=%d iters=%u cycles_per_inst_sm=%.3f bytes_per_cycle_sm=%.1f\n", NUM,
               W, rep, iters, c, 128.0 * NUM / c);
    }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64));
  lat<1, 0, 1>(1024);
  lat<1, 0, 0>(1024); lat<2, 0, 0>(1024); lat<4, 0, 0>(1024);
  lat<1, 1, 0>(1024); lat<2, 1, 0>(1024); lat<4, 1, 0>(1024);
  tput<1>(256); tput<2>(256); tput<4>(256);
  tput<1, 1>(256); tput<4, 1>(256);
  printf("DONE\n");
  return 0;
}
