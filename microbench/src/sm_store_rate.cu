// Per-SM global store throughput on an H200 (issue #15): how many bytes per cycle one SM's warps can push into the
// memory system, against warps, access width and the number of SMs doing the same, with loads of the same pattern
// beside for reference. membar_sm.cu (2026-12-05) saw 8 warps of one SM issue 8 x 16-B st.global.cg per lane in
// 935 cycles per 32 KiB batch (35 B/cycle) where the same loads took 505 (65 B/cycle); the model issued the stores
// at 140 B/cycle.
// A self-contained program; one text line per result (parsed by microbench/parse_sm_store_rate.py).
//   SSR grid=<G> warps=<W> width=<B> op=<st|ld|stw> region=<R> (st: st.global.cg, stw: plain st.global): G CTAs (one per SM: 150 KiB dynamic shared memory) of
//        32 W threads; every warp issues `reps` rounds of 8 coalesced accesses (B bytes per lane: 32 B lanes per
//        access) into its CTA's own region of R bytes (wrapping; R = 256 KiB stays in L2, 64 MiB per CTA spills);
//        t0 = %clock64 after a __syncthreads, t1 = %clock64 after the CTA's last warp is done (a second
//        __syncthreads; stores: before the kernel's end, so their drain is not in t1 - t0). bytes_per_cycle =
//        G-median of CTA bytes / (t1 - t0); cyc_per_round = that CTA's (t1 - t0) / reps.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a sm_store_rate.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)

template <int W>
__device__ __forceinline__ void st_w(char* p, u32 v) {
  if (W == 4) asm volatile("st.global.cg.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  if (W == 8) asm volatile("st.global.cg.v2.u32 [%0], {%1,%1};" ::"l"(p), "r"(v) : "memory");
  if (W == 16) asm volatile("st.global.cg.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}
// plain (weak) st.global, what Triton emits (STG.E instead of .cg's STG.E.STRONG.GPU)
template <int W>
__device__ __forceinline__ void st_plain(char* p, u32 v) {
  if (W == 4) asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  if (W == 8) asm volatile("st.global.v2.u32 [%0], {%1,%1};" ::"l"(p), "r"(v) : "memory");
  if (W == 16) asm volatile("st.global.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}
template <int W>
__device__ __forceinline__ u32 ld_w(const char* p) {
  u32 a, b, c, d;
  if (W == 4) { asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(a) : "l"(p) : "memory"); return a; }
  if (W == 8) { asm volatile("ld.global.cg.v2.u32 {%0,%1}, [%2];" : "=r"(a), "=r"(b) : "l"(p) : "memory"); return a ^ b; }
  asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p) : "memory");
  return a ^ b ^ c ^ d;
}

// out[2*b]: t1 - t0 of CTA b, out[2*b+1]: its smid
template <int W>
__global__ void __launch_bounds__(1024, 1) k_ssr(char* buf, u64* out, u32 reps, u32 op_ld, size_t region) {
  __shared__ volatile u32 sink;
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  char* base = buf + (size_t)blockIdx.x * region;
  const size_t mask = region - 1;
  const size_t step = (size_t)nw * 32 * W;          // one access of every warp
  size_t off = ((size_t)warp * 32 + lane) * W;
  u32 acc = threadIdx.x;
  __syncthreads();
  u64 t0 = clk();
  for (u32 r = 0; r < reps; ++r) {
    if (op_ld == 2) {
#pragma unroll
      for (int j = 0; j < 8; ++j) st_plain<W>(base + ((off + j * step) & mask), acc + j);
    } else if (op_ld) {
      u32 v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = ld_w<W>(base + ((off + j * step) & mask));
#pragma unroll
      for (int j = 0; j < 8; ++j) acc ^= v[j];
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) st_w<W>(base + ((off + j * step) & mask), acc + j);
    }
    off = (off + 8 * step) & mask;
  }
  if (op_ld == 1) sink = acc;
  __syncthreads();
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = smid(); }
}

static u64* d_out;
static char* d_buf;

static void run(int grid, int warps, int width, int ld, size_t region, u32 reps) {
  for (int rep = 0; rep < 2; ++rep) {
    if (width == 4) k_ssr<4><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, ld, region);
    if (width == 8) k_ssr<8><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, ld, region);
    if (width == 16) k_ssr<16><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, ld, region);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<u64> h(2 * grid);
    CK(cudaMemcpy(h.data(), d_out, 16 * grid, cudaMemcpyDeviceToHost));
    std::vector<double> c;
    for (int b = 0; b < grid; ++b) c.push_back((double)h[2 * b]);
    std::sort(c.begin(), c.end());
    const double med = c[c.size() / 2];
    const double bytes = (double)reps * 8 * 32 * width * warps;
    printf("SSR grid=%d warps=%d width=%d op=%s region=%zu rep=%d reps=%u cycles=%.0f bytes_per_cycle=%.2f "
           "cyc_per_round=%.2f min_cycles=%.0f max_cycles=%.0f\n", grid, warps, width, ld == 2 ? "stw" : ld ? "ld" : "st", region, rep,
           reps, med, bytes / med, med / reps, c.front(), c.back());
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_ssr<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k_ssr<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k_ssr<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  const size_t big = (size_t)64 << 20, small = (size_t)256 << 10;
  CK(cudaMalloc(&d_out, 16 * 1024));
  CK(cudaMalloc(&d_buf, (size_t)S * big / 8));   // 8 MiB per CTA for the spilling cases (S x 8 MiB = 1 GiB)
  CK(cudaMemset(d_buf, 0, (size_t)S * big / 8));
  const size_t spill = (size_t)8 << 20;
  const u32 reps = 64;
  // one SM: warps x width, stores and loads, L2-resident region
  for (int w : {1, 2, 4, 8, 16, 32})
    for (int b : {4, 8, 16}) { run(1, w, b, false, small, reps); run(1, w, b, true, small, reps); }
  // more SMs: 8 and 32 warps, 16-B accesses, L2-resident and spilling regions
  for (int g : {2, 8, 33, 66, S})
    for (int w : {8, 32}) {
      run(g, w, 16, false, small, reps); run(g, w, 16, true, small, reps);
      run(g, w, 16, false, spill, reps); run(g, w, 16, true, spill, reps);
    }
  // plain (weak) stores: one SM by warps and width, then every SM
  for (int w : {1, 4, 8, 32})
    for (int b : {4, 16}) run(1, w, b, 2, small, reps);
  for (int g : {33, S}) { run(g, 8, 16, 2, small, reps); run(g, 8, 16, 2, spill, reps); }
  // bursts: one SM's 4 / 8 / 32 warps issue 1-8 rounds of 16-B stores (16 / 32 / 128 KiB per round): how many
  // bytes the SM queues before its warps wait for the 32 B/cycle store path (t1 - t0 against bytes)
  for (int r : {1, 2, 3, 4, 8}) { run(1, 4, 16, 0, small, r); run(1, 8, 16, 0, small, r); }
  for (int r : {1, 2}) run(1, 32, 16, 0, small, r);
  for (int r : {1, 2, 4, 8}) run(1, 8, 4, 2, small, r);
  printf("DONE\n");
  return 0;
}
