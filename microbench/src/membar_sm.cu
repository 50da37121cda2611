// Does MEMBAR.GPU wait for the *other* warps' outstanding requests of its SM? Issue #15: in the gallery's atomic
// kernels (column sums, RMSNorm / layer-norm backward) every acq_rel atomic is preceded by MEMBAR.ALL.GPU, and the
// H200 shows 17 membar stall cycles per issued instruction on the column sums (the model, whose fence waits for
// the warp's own stores / atomics only: 2.4). membar_load.cu measured one thread per SM (its own bulk copies);
// this program adds loader warps beside the fencer in the same CTA (model option latencies.membar_drains: warp | sm).
// A self-contained program; one text line per result (parsed by microbench/parse_membar_sm.py).
//   MSM grid=<G> loaders=<L> flags=<F>: G CTAs of 32 * (1 + L) threads (one per SM: 150 KiB dynamic shared
//        memory). Warps 1..L stream `batches` (256) batches of ld.global.cg of 16-B pieces, 8 independent loads
//        per lane in flight, from `warm` (8 MiB, L2-resident after the first pass) or `cold` (each CTA walks its
//        own 1 MiB, 132 MiB in all: DRAM misses): they outlast warp 0's fences (a batch takes >= ~500 cycles,
//        the fences at most ~16 x 2,500). Warp 0's lane 0 waits ~2,000 cycles (500 dependent IMADs: the loaders' stream is established), then
//        `iters` times: t1 = %clock64, fence.acq_rel.gpu (or, flag 4, an acq_rel atom.add.u32 on its own word,
//        result used), t2, ~200 cycles of dependent IMADs. Per CTA: mean t2 - t1 (fence), the loaders' mean cycles per 8-load
//        batch (load), smid. Medians over the CTAs: fence_med, load_med.
// flags: 1 = loaders read `cold` (DRAM misses) instead of `warm`, 2 = loaders store (st.global.cg 16 B) instead of
// loading, 4 = warp 0 times an acq_rel atom.add (its own word) instead of a bare fence, 8 = only CTA 0 has
// loaders (the other CTAs' warps 1..L exit at once): the SM-local effect without GPU-wide load.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a membar_sm.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)            // one CTA per SM
#define WARM_BYTES (8u << 20)
#define COLD_BYTES ((size_t)64 << 20)    // the lone loader CTA (flag 8)
#define CTA_COLD ((size_t)1 << 20)       // per CTA otherwise

__device__ __forceinline__ void ldcg16(const char* p, u32& a, u32& b, u32& c, u32& d) {
  asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p) : "memory");
}
__device__ __forceinline__ void stcg16(char* p, u32 v) {
  asm volatile("st.global.cg.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}

// n dependent integer multiply-adds (IMAD, ~4 cycles each): a wait that does not read the clock
__device__ __forceinline__ u32 busy(u32 x, u32 n) {
  for (u32 i = 0; i < n; ++i) asm volatile("mad.lo.u32 %0, %0, 1664525, 1013904223;" : "+r"(x));
  return x;
}

// out[4*b]: mean fence (or atomic) cycles * 100, +1 the loaders' summed cycles of their 8-load batches, +2 smid,
// +3 the loaders' batches (host: load = out[1] / out[3])
__global__ void __launch_bounds__(1024, 1) k_msm(const char* warm, char* cold, u32* words, u64* out, u32 iters,
                                                  u32 flags, u32 batches) {
  __shared__ volatile u32 sink;
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) { out[4 * blockIdx.x + 1] = 0; out[4 * blockIdx.x + 3] = 0; }
  __syncthreads();                         // the loaders' sums start from zero (no host memset needed)
  if (warp > 0) {
    if ((flags & 8) && blockIdx.x != 0) return;
    // spans are powers of two (masks, not divisions, keep the loaders' address arithmetic short): 1 MiB of
    // `cold` per CTA (132 MiB in all, 2.6 x the L2: the re-walks miss again), 64 MiB for the lone loader CTA
    const size_t cspan = (flags & 8) ? COLD_BYTES : CTA_COLD;
    const size_t mask = ((flags & 1) ? cspan : WARM_BYTES) - 1;
    const char* base = (flags & 1) ? cold + (size_t)blockIdx.x * CTA_COLD : warm;
    char* sbase = cold + (size_t)blockIdx.x * CTA_COLD;
    const u32 loaders = blockDim.x / 32 - 1;
    size_t off = ((size_t)(warp - 1) * 32 + lane) * 16;
    const size_t step = (size_t)loaders * 32 * 16;
    u32 acc = 0;
    u64 s = 0, n = 0;
    for (u32 it = 0; it < batches; ++it) {
      u64 t0 = clk();
      if (flags & 2) {
#pragma unroll
        for (int j = 0; j < 8; ++j) stcg16(sbase + ((off + j * step) & (CTA_COLD - 1)), acc + j);
      } else {
        u32 a[8], b[8], c[8], d[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) ldcg16(base + ((off + j * step) & mask), a[j], b[j], c[j], d[j]);
#pragma unroll
        for (int j = 0; j < 8; ++j) acc ^= a[j] ^ b[j] ^ c[j] ^ d[j];
        sink = acc;                        // the batch's loads are back before t1
      }
      u64 t1 = clk();
      s += t1 - t0;
      ++n;
      off = (off + 8 * step) & mask;
    }
    if (lane == 0) { atomicAdd(&out[4 * blockIdx.x + 1], s); atomicAdd(&out[4 * blockIdx.x + 3], n); }
    return;
  }
  if (lane != 0) return;
  // waits are dependent ALU chains, not clock spins, so that the control flow never reads the clock (the
  // simulator's replay then needs no clock oracle): ~2,000 cycles before the first fence, ~200 between fences
  u32 x = busy(blockIdx.x + 1, 500);
  double sf = 0;
  for (u32 i = 0; i < iters; ++i) {
    u64 t1 = clk();
    if (flags & 4) {
      u32 r;
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(r) : "l"(words + blockIdx.x) : "memory");
      sink = r;                            // the STS waits for the atomic's result: t2 is after it
    } else {
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    u64 t2 = clk();
    sf += (double)(t2 - t1);
    x = busy(x, 50);
  }
  if (x == 0x9E3779B9u) words[3072] = x;
  out[4 * blockIdx.x] = (u64)(sf / iters * 100.0);
  out[4 * blockIdx.x + 2] = smid();
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
static u64* d_out;
static char* d_warm;
static char* d_cold;
static u32* d_words;

static void run(int grid, int loaders, u32 flags, u32 iters = 16, u32 batches = 256) {
  for (int rep = 0; rep < 2; ++rep) {
    CK(cudaMemset(d_out, 0, 4 * 8 * grid));
    k_msm<<<grid, 32 * (1 + loaders), DYN>>>(d_warm, d_cold, d_words, d_out, iters, flags, batches);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<u64> h(4 * grid);
    CK(cudaMemcpy(h.data(), d_out, 4 * 8 * grid, cudaMemcpyDeviceToHost));
    std::vector<double> f, ld;
    for (int b = 0; b < grid; ++b) {
      f.push_back(h[4 * b] / 100.0);
      if (h[4 * b + 3]) ld.push_back((double)h[4 * b + 1] / (double)h[4 * b + 3]);
    }
    std::vector<double> fs = f;
    std::sort(fs.begin(), fs.end());
    printf("MSM grid=%d loaders=%d flags=%u rep=%d iters=%u fence_med=%.2f fence_min=%.2f fence_max=%.2f "
           "fence_cta0=%.2f load_med=%.2f\n", grid, loaders, flags, rep, iters, med(f), fs.front(), fs.back(), f[0],
           med(ld));
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_msm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaMalloc(&d_out, 4 * 8 * 1024));
  CK(cudaMalloc(&d_warm, WARM_BYTES));
  CK(cudaMemset(d_warm, 1, WARM_BYTES));
  CK(cudaMalloc(&d_cold, std::max(COLD_BYTES, (size_t)S * CTA_COLD)));
  CK(cudaMalloc(&d_words, 4 * 4096));
  CK(cudaMemset(d_words, 0, 4 * 4096));
  // the bare fence and the acq_rel atomic with an idle SM (no loaders), one SM and every SM
  for (int g : {1, S}) for (u32 fl : {0u, 4u}) run(g, 0, fl);
  // loaders beside the fencer in its own CTA: L2-resident (0) / DRAM-missing (1) loads, stores (2 | 1)
  for (int l : {1, 4, 8, 15}) for (u32 fl : {0u, 1u, 3u}) { run(S, l, fl); run(S, l, fl | 4); }
  // the same on one SM only (flag 8: the other CTAs have no loaders): SM-local without a GPU-wide stream
  for (u32 fl : {0u, 1u, 3u}) { run(S, 8, fl | 8); run(1, 8, fl); }
  printf("DONE\n");
  return 0;
}
