// Arithmetic, SFU, conversion and shuffle latency / throughput on an H200: the per-unit-class latencies and issue
// intervals the SM core charges (topologies `latencies.<class>`: int, fp32, fp16, fp64, sfu, cvt, mio), which were
// Accel-Sim / estimate values. Issue #15: the row kernels (softmax, layer norm, RMSNorm) wait on fixed-latency
// chains, MUFU and SHFL (Nsight Compute `wait` and `short_scoreboard`) more than the model charges.
// A self-contained program; one text line per result (parsed by microbench/parse_alu_latency.py):
//   ALU mode=lat op=<name>: one warp, one dependent chain of 512 links (64 per unrolled iteration, 8 iterations,
//       after a warm-up pass): cycles per link. Operands that are not the chain come from kernel parameters, so
//       ptxas cannot fold the chain.
//   ALU mode=tput op=<name> warps=<W>: one CTA of W warps on one SM, each running 8 independent chains of 256
//       links: SM cycles per warp-instruction (thread 0's clocks around two bar.syncs).
//   BAR mode=lat warps=<W>: W warps, 256 back-to-back bar.sync 0: cycles per barrier.
// The op list is OPS below; the SASS each becomes is in the run's alu_latency.sass. Clocks are never touched.
// Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a alu_latency.cu
#include "common.cuh"
#include "check.cuh"
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// one link of each chain: v is the chain value (32-bit), a / b runtime operands (1.0f / 0.0f, or 1 / 0) that
// differ per thread as far as the compiler knows (ap + bp * tid, bp * tid with bp = 0 at run time): a chain of
// warp-uniform values would run on the uniform datapath (UIMAD) or vanish (a SHFL of a uniform value)
template <int OP>
__device__ __forceinline__ u32 link(u32 v, u32 a, u32 b) {
  u32 r;
  if (OP == 0) asm volatile("add.f32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(b));                       // FADD
  if (OP == 1) asm volatile("fma.rn.f32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(a), "r"(b));       // FFMA
  if (OP == 2) asm volatile("max.f32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(b));                       // FMNMX
  if (OP == 3) asm volatile("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(a), "r"(b));       // IMAD
  if (OP == 4) asm volatile("{ .reg .pred p; setp.lt.u32 p, %1, %2; selp.b32 %0, %1, %2, p; }" : "=r"(r) : "r"(v), "r"(b));  // ISETP+SEL
  if (OP == 5) asm volatile("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(a), "r"(b));     // HFMA2
  if (OP == 6) asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=r"(r) : "r"(v));                        // MUFU.EX2
  if (OP == 7) asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=r"(r) : "r"(v));                        // MUFU.RCP
  if (OP == 8) asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=r"(r) : "r"(v));                      // MUFU.RSQ
  if (OP == 9) asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, -1;" : "=r"(r) : "r"(v));           // SHFL.BFLY
  if (OP == 10) asm volatile("{ .reg .b16 h; cvt.rn.f16.f32 h, %1; cvt.f32.f16 %0, h; }" : "=r"(r) : "r"(v));  // F2F x2
  if (OP == 12) asm volatile("{ .reg .pred p; setp.lt.f32 p, %1, %2; selp.b32 %0, %1, %2, p; }" : "=r"(r) : "r"(v), "r"(b));  // FSETP+SEL
  return r;
}

// out[0] = 100 x cycles per link, out[1] = sink
template <int OP>
__global__ void k_lat(u64* out, u32 ap, u32 bp, u32 iters) {
  const u32 b = bp * threadIdx.x, a = ap + b;
  u32 v = a;
  u64 t0 = 0;
  for (u32 i = 0; i < iters + 1; ++i) {
    if (i == 1) t0 = clk();
#pragma unroll
    for (int k = 0; k < 64; ++k) v = link<OP>(v, a, b);
  }
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[0] = (u64)((double)(t1 - t0) / ((double)iters * 64) * 100.0); out[1] = v; }
}

// out[0] = 100 x SM cycles per warp-instruction (link), out[1] = sink
template <int OP>
__global__ void k_tput(u64* out, u32 ap, u32 bp, u32 iters) {
  const u32 b = bp * threadIdx.x, a = ap + b;
  u32 v[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) v[c] = a + c;
  __syncthreads();
  u64 t0 = clk();
  __syncthreads();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 32; ++k)
#pragma unroll
      for (int c = 0; c < 8; ++c) v[c] = link<OP>(v[c], a, b);
  }
  __syncthreads();
  u64 t1 = clk();
  u32 s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s ^= v[c];
  if (threadIdx.x == 0) out[0] = (u64)((double)(t1 - t0) / ((double)iters * 32 * 8 * (blockDim.x / 32)) * 100.0);
  if (s == 12345u) out[1] = s;
}

// out[0] = 100 x cycles per bar.sync
__global__ void k_bar(u64* out, u32 iters) {
  __syncthreads();
  u64 t0 = clk();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k) asm volatile("bar.sync 0;" ::: "memory");
  }
  u64 t1 = clk();
  if (threadIdx.x == 0) out[0] = (u64)((double)(t1 - t0) / ((double)iters * 16) * 100.0);
}

static u64* d_out;
static const u32 ONE_F = 0x3f800000u, ZERO = 0u;
static const char* NAMES[] = {"fadd", "ffma", "fmnmx", "imad", "isetp_sel", "hfma2", "mufu_ex2", "mufu_rcp",
                              "mufu_rsq", "shfl_bfly", "cvt_f16_f32_pair", "unused", "fsetp_sel"};

template <int OP>
static void run_op() {
  // integer ops multiply by 1 and add 0; float ops by 1.0f and add 0.0f; the MUFU chains stay finite
  const u32 a = (OP == 3 || OP == 4) ? 1u : (OP == 5 ? 0x3c003c00u : ONE_F), b = ZERO;
  for (int rep = 0; rep < 3; ++rep) {
    k_lat<OP><<<1, 32>>>(d_out, a, b, 8);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    u64 h;
    CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
    printf("ALU mode=lat op=%s rep=%d cycles=%.2f\n", NAMES[OP], rep, h / 100.0);
  }
  for (int W : {4, 8, 16, 32})
    for (int rep = 0; rep < 2; ++rep) {
      k_tput<OP><<<1, 32 * W>>>(d_out, a, b, 4);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      u64 h;
      CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
      printf("ALU mode=tput op=%s warps=%d rep=%d cycles=%.3f\n", NAMES[OP], W, rep, h / 100.0);
    }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64));
  run_op<0>(); run_op<1>(); run_op<2>(); run_op<3>(); run_op<5>(); run_op<6>();   // op 4: ptxas fuses two links (VIMNMX3)
  run_op<7>(); run_op<8>(); run_op<9>(); run_op<10>(); run_op<12>();
  for (int W : {1, 4, 8, 32})
    for (int rep = 0; rep < 3; ++rep) {
      k_bar<<<1, 32 * W>>>(d_out, 16);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      u64 h;
      CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
      printf("BAR mode=lat warps=%d rep=%d cycles=%.2f\n", W, rep, h / 100.0);
    }
  printf("DONE\n");
  return 0;
}
