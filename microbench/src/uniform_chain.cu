// Dependent chains on the uniform datapath (run_uniform_chain.sh; parse_uniform_chain.py). Written 2026-12-07: the
// TMA GEMMs' producer path and tma_tile.cu's issue loop are chains of uniform-datapath SASS (UIADD3 / UIMAD /
// ULOP3 / USHF, a division by a kernel parameter as I2F.U32.RP -> MUFU.RCP -> F2I -> R2UR -> ~15 UIMAD / UIADD3),
// which the H100 runs slower than the model charges (tma_tile: 245-270 cycles before one copy against 153-158).
// alu_latency.cu's chains are per-thread values on purpose (vector datapath); these are the same chains with
// warp-uniform operands (kernel parameters only), which ptxas puts on the uniform datapath (see the run's .sass).
//  UCH  mode=lat op=<name>: one warp, one dependent chain of 64 links per unrolled iteration, 8 iterations after a
//       warm-up pass: cycles per link. u_iadd / u_imad / u_shf: add.u32 / mad.lo.u32 / shl.b32 on warp-uniform
//       operands (UIADD3 / UIMAD / USHF); v_iadd / v_imad: the same links on per-thread operands (IADD3 / IMAD),
//       the references (alu_latency.cu measured IMAD at 4.3).
#include "common.cuh"
#include "check.cuh"
#include <cstdio>
#include <cuda_runtime.h>

template <int OP>
__device__ __forceinline__ u32 link(u32 v, u32 a, u32 b) {
  u32 r;
  if (OP == 0 || OP == 3) asm volatile("add.u32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(b));                // UIADD3 / IADD3
  if (OP == 1 || OP == 4) asm volatile("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(a), "r"(b));  // UIMAD / IMAD
  if (OP == 2) asm volatile("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(b));                            // USHF
  return r;
}

// out[0] = 100 x cycles per link, out[1] = sink. OP < 3: operands warp-uniform; OP >= 3: per thread (bp * tid).
template <int OP>
__global__ void k_uch(u64* out, u32 ap, u32 bp, u32 iters) {
  const u32 b = OP >= 3 ? bp * threadIdx.x : bp, a = ap + (OP >= 3 ? b : 0u);
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

static u64* d_out;
static const char* NAMES[] = {"u_iadd", "u_imad", "u_shf", "v_iadd", "v_imad"};

template <int OP>
static void run_op() {
  for (int rep = 0; rep < 3; ++rep) {
    k_uch<OP><<<1, 32>>>(d_out, 1u, 0u, 8);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    u64 h;
    CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
    printf("UCH mode=lat op=%s rep=%d cycles=%.2f\n", NAMES[OP], rep, h / 100.0);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 64));
  run_op<0>(); run_op<1>(); run_op<2>(); run_op<3>(); run_op<4>();
  printf("DONE\n");
  return 0;
}
