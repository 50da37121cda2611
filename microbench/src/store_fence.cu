// Two questions membar_sm.cu and sm_store_rate.cu (2026-12-05) left open (issue #15, #19):
//  FST: a fence beside 8 store warps of its SM takes 1,110 cycles on the H200 (the model: 668), 3,388-3,858 with every
//       SM storing. Does MEMBAR.GPU wait for the stores issued before it only (a snapshot of the SM's outstanding
//       requests) or until the SM has nothing outstanding (stores issued after it too)? The store warps issue a fixed
//       number of batches and stop; the fencer fences once at a fixed time. A snapshot gives a fence that does not
//       grow with the batches the stream has left; draining to zero gives a fence that ends with the stream.
//  SLM: do stores take what loads need (L1 miss-status entries, the SM -> L2 request path)? S store warps and L
//       load warps of one CTA run at once; each role's time against the role alone.
// A self-contained program; one text line per result (parsed by microbench/parse_store_fence.py).
//   FST grid=<G> warps=<W> batches=<B> delay=<D> flags=<F>: G CTAs (one per SM: 150 KiB dynamic shared memory) of
//        32 (1 + W) threads. Warps 1..W issue B batches of 8 st.global.cg.v4 (16 B per lane) into their CTA's own
//        region (flag 2: 64 KiB, L2-resident; else 1 MiB, 132 MiB over 132 SMs) and stop; flag 1: 8 ld.global.cg.v4
//        per lane per batch from an 8 MiB L2-resident buffer instead (one asm block, consumed after the batch).
//        Warp 0's lane 0 runs D dependent IMADs (~4 cycles each), then t1 = %clock64, fence.acq_rel.gpu, t2.
//        Per CTA (cycles from the CTA's common start t0 after __syncthreads): fence_start t1, fence_end t2, fence
//        t2 - t1, streams_end (the last store warp's clock after its last store issued), first_end (the first).
//        Medians over the CTAs.
//   SLM grid=<G> st=<S> ld=<L> reps=<R> flags=<F>: warps 0..S-1 issue R rounds of 8 st.global.v4 (plain, what Triton
//        emits; 16 B per lane) into their CTA's own 256 KiB (L2-resident); warps S..S+L-1 R rounds of 8
//        ld.global.cg.v4 (one asm block) from their CTA's own 256 KiB (L2-resident), or, flag 1, 8 MiB (DRAM
//        misses). st_cyc / ld_cyc: the last warp of each role's clock after its last round; bytes per cycle of each
//        role; medians over the CTAs.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a store_fence.cu
#include "common.cuh"
#include "check.cuh"
#include "host.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)
#define FST_SPAN ((size_t)1 << 20)
#define FST_SPAN_L2 ((size_t)64 << 10)
#define WARM_BYTES ((size_t)8 << 20)
#define SLM_SMALL ((size_t)256 << 10)
#define SLM_BIG ((size_t)8 << 20)

__device__ __forceinline__ void stcg16(char* p, u32 v) {
  asm volatile("st.global.cg.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st16(char* p, u32 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}
// eight independent 16-B loads in one asm block, so that the PTX (which the simulator issues in order) has all
// eight before their consumers, as the SASS does; returns the xor of the 32 words
__device__ __forceinline__ u32 ld8(const char* p, size_t off, size_t step, size_t mask) {
  u32 r;
  asm volatile(
      "{\n .reg .b32 a<32>;\n"
      " ld.global.cg.v4.u32 {a0,a1,a2,a3}, [%1];\n ld.global.cg.v4.u32 {a4,a5,a6,a7}, [%2];\n"
      " ld.global.cg.v4.u32 {a8,a9,a10,a11}, [%3];\n ld.global.cg.v4.u32 {a12,a13,a14,a15}, [%4];\n"
      " ld.global.cg.v4.u32 {a16,a17,a18,a19}, [%5];\n ld.global.cg.v4.u32 {a20,a21,a22,a23}, [%6];\n"
      " ld.global.cg.v4.u32 {a24,a25,a26,a27}, [%7];\n ld.global.cg.v4.u32 {a28,a29,a30,a31}, [%8];\n"
      " xor.b32 a0, a0, a4;\n xor.b32 a1, a1, a5;\n xor.b32 a2, a2, a6;\n xor.b32 a3, a3, a7;\n"
      " xor.b32 a8, a8, a12;\n xor.b32 a9, a9, a13;\n xor.b32 a10, a10, a14;\n xor.b32 a11, a11, a15;\n"
      " xor.b32 a16, a16, a20;\n xor.b32 a17, a17, a21;\n xor.b32 a18, a18, a22;\n xor.b32 a19, a19, a23;\n"
      " xor.b32 a24, a24, a28;\n xor.b32 a25, a25, a29;\n xor.b32 a26, a26, a30;\n xor.b32 a27, a27, a31;\n"
      " xor.b32 a0, a0, a8;\n xor.b32 a1, a1, a9;\n xor.b32 a2, a2, a10;\n xor.b32 a3, a3, a11;\n"
      " xor.b32 a16, a16, a24;\n xor.b32 a17, a17, a25;\n xor.b32 a18, a18, a26;\n xor.b32 a19, a19, a27;\n"
      " xor.b32 a0, a0, a16;\n xor.b32 a1, a1, a17;\n xor.b32 a2, a2, a18;\n xor.b32 a3, a3, a19;\n"
      " xor.b32 a0, a0, a1;\n xor.b32 a2, a2, a3;\n xor.b32 %0, a0, a2;\n}"
      : "=r"(r)
      : "l"(p + (off & mask)), "l"(p + ((off + step) & mask)), "l"(p + ((off + 2 * step) & mask)),
        "l"(p + ((off + 3 * step) & mask)), "l"(p + ((off + 4 * step) & mask)), "l"(p + ((off + 5 * step) & mask)),
        "l"(p + ((off + 6 * step) & mask)), "l"(p + ((off + 7 * step) & mask))
      : "memory");
  return r;
}

// n dependent integer multiply-adds (IMAD, ~4 cycles each): a wait that does not read the clock
__device__ __forceinline__ u32 busy(u32 x, u32 n) {
  for (u32 i = 0; i < n; ++i) asm volatile("mad.lo.u32 %0, %0, 1664525, 1013904223;" : "+r"(x));
  return x;
}

// out[8*b + k]: 0 fence start, 1 fence end, 2 last stream warp's end, 3 first stream warp's end, 4 smid
__global__ void __launch_bounds__(1024, 1) k_fst(char* buf, const char* warm, u64* out, u32 batches, u32 delay,
                                                  u32 flags) {
  __shared__ u64 ends[32];
  __shared__ volatile u32 sink;
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  const u64 t0 = clk();
  if (warp > 0) {
    const size_t span = (flags & 2) ? FST_SPAN_L2 : FST_SPAN;
    char* base = buf + (size_t)blockIdx.x * FST_SPAN;
    const size_t step = (size_t)(nw - 1) * 32 * 16;
    size_t off = ((size_t)(warp - 1) * 32 + lane) * 16;
    u32 acc = threadIdx.x;
    for (u32 b = 0; b < batches; ++b) {
      if (flags & 1) {
        acc ^= ld8(warm, off, step, WARM_BYTES - 1);
        off = (off + 8 * step) & (WARM_BYTES - 1);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) stcg16(base + ((off + j * step) & (span - 1)), acc + j);
        off = (off + 8 * step) & (span - 1);
      }
    }
    if (flags & 1) sink = acc;
    const u64 te = clk();
    if (lane == 0) ends[warp] = te - t0;
  } else if (lane == 0) {
    u32 x = busy(blockIdx.x + 1, delay);
    const u64 t1 = clk();
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    const u64 t2 = clk();
    sink = x;
    out[8 * blockIdx.x] = t1 - t0;
    out[8 * blockIdx.x + 1] = t2 - t0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 hi = 0, lo = ~0ull;
    for (u32 w = 1; w < nw; ++w) { hi = ends[w] > hi ? ends[w] : hi; lo = ends[w] < lo ? ends[w] : lo; }
    out[8 * blockIdx.x + 2] = hi;
    out[8 * blockIdx.x + 3] = nw > 1 ? lo : 0;
    out[8 * blockIdx.x + 4] = smid();
  }
}

// out[8*b + k]: 0 the store warps' last end, 1 the load warps' last end, 2 smid
__global__ void __launch_bounds__(1024, 1) k_slm(char* sbuf, const char* lbuf, u64* out, u32 reps, u32 nst,
                                                  u32 flags) {
  __shared__ u64 ends[32];
  __shared__ volatile u32 sink;
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  const u64 t0 = clk();
  u32 acc = threadIdx.x;
  if (warp < nst) {
    char* base = sbuf + (size_t)blockIdx.x * SLM_SMALL;
    const size_t step = (size_t)nst * 32 * 16, mask = SLM_SMALL - 1;
    size_t off = ((size_t)warp * 32 + lane) * 16;
    for (u32 r = 0; r < reps; ++r) {
#pragma unroll
      for (int j = 0; j < 8; ++j) st16(base + ((off + j * step) & mask), acc + j);
      off = (off + 8 * step) & mask;
    }
  } else {
    const size_t span = (flags & 1) ? SLM_BIG : SLM_SMALL;
    const char* base = lbuf + (size_t)blockIdx.x * span;
    const u32 nld = nw - nst;
    const size_t step = (size_t)nld * 32 * 16, mask = span - 1;
    size_t off = ((size_t)(warp - nst) * 32 + lane) * 16;
    for (u32 r = 0; r < reps; ++r) {
      acc ^= ld8(base, off, step, mask);
      off = (off + 8 * step) & mask;
    }
    sink = acc;
  }
  const u64 te = clk();
  if (lane == 0) ends[warp] = te - t0;
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 s = 0, l = 0;
    for (u32 w = 0; w < nw; ++w) {
      if (w < nst) s = ends[w] > s ? ends[w] : s;
      else l = ends[w] > l ? ends[w] : l;
    }
    out[8 * blockIdx.x] = s;
    out[8 * blockIdx.x + 1] = l;
    out[8 * blockIdx.x + 2] = smid();
  }
}

static u64* d_out;
static char* d_buf;
static char* d_warm;

static std::vector<u64> fetch(int grid) {
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<u64> h(8 * grid);
  CK(cudaMemcpy(h.data(), d_out, 64 * grid, cudaMemcpyDeviceToHost));
  return h;
}

static void fst(int grid, int warps, u32 batches, u32 delay, u32 flags) {
  for (int rep = 0; rep < 2; ++rep) {
    k_fst<<<grid, 32 * (1 + warps), DYN>>>(d_buf, d_warm, d_out, batches, delay, flags);
    std::vector<u64> h = fetch(grid);
    std::vector<double> fs, fe, f, se, sf;
    for (int b = 0; b < grid; ++b) {
      fs.push_back((double)h[8 * b]); fe.push_back((double)h[8 * b + 1]);
      f.push_back((double)(h[8 * b + 1] - h[8 * b]));
      se.push_back((double)h[8 * b + 2]); sf.push_back((double)h[8 * b + 3]);
    }
    printf("FST grid=%d warps=%d batches=%u delay=%u flags=%u rep=%d fence=%.0f fence_start=%.0f fence_end=%.0f "
           "streams_end=%.0f first_end=%.0f fence_cta0=%.0f\n", grid, warps, batches, delay, flags, rep, median_of(f), median_of(fs),
           median_of(fe), median_of(se), median_of(sf), f[0]);
  }
}

static void slm(int grid, int st, int ld, u32 reps, u32 flags) {
  for (int rep = 0; rep < 2; ++rep) {
    k_slm<<<grid, 32 * (st + ld), DYN>>>(d_buf, d_warm, d_out, reps, st, flags);
    std::vector<u64> h = fetch(grid);
    std::vector<double> s, l;
    for (int b = 0; b < grid; ++b) { s.push_back((double)h[8 * b]); l.push_back((double)h[8 * b + 1]); }
    const double bytes = (double)reps * 8 * 32 * 16;
    const double sc = median_of(s), lc = median_of(l);
    printf("SLM grid=%d st=%d ld=%d reps=%u flags=%u rep=%d st_cyc=%.0f ld_cyc=%.0f st_bpc=%.2f ld_bpc=%.2f\n", grid,
           st, ld, reps, flags, rep, sc, lc, st ? bytes * st / sc : 0.0, ld ? bytes * ld / lc : 0.0);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_fst, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k_slm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaMalloc(&d_out, 64 * 1024));
  const size_t nbuf = std::max((size_t)S * FST_SPAN, (size_t)S * SLM_BIG);
  CK(cudaMalloc(&d_buf, nbuf));
  CK(cudaMemset(d_buf, 0, nbuf));
  CK(cudaMalloc(&d_warm, nbuf));
  CK(cudaMemset(d_warm, 1, nbuf));
  // FST: the fence at ~2,000 cycles (500 IMADs) beside 8 store warps that stop after 0-64 batches of 32 KiB
  // (one SM: ~1,000 cycles a batch at 32 B/cycle), one SM and every SM; DRAM-bound and L2-resident regions
  for (int g : {1, S})
    for (u32 fl : {0u, 2u})
      for (u32 b : {0u, 1u, 2u, 3u, 4u, 6u, 8u, 16u, 64u}) fst(g, 8, b, 500, fl);
  // the fence earlier / later inside a 16-batch stream
  for (int g : {1, S})
    for (u32 d : {100u, 1000u, 2000u}) fst(g, 8, 16, d, 0);
  // loads instead (L2 hits): does the fence wait for loads issued after it?
  for (int g : {1, S})
    for (u32 b : {0u, 1u, 4u, 16u, 64u}) fst(g, 8, b, 500, 1);
  // SLM: store warps and load warps of one SM, alone and together; L2-resident loads, then DRAM-missing loads
  for (u32 fl : {0u, 1u})
    for (int n : {4, 8, 16}) { slm(1, n, 0, 64, fl); slm(1, 0, n, 64, fl); slm(1, n, n, 64, fl); }
  for (u32 fl : {0u, 1u}) { slm(1, 8, 24, 64, fl); slm(1, 24, 8, 64, fl); }
  // every SM
  for (u32 fl : {0u, 1u}) { slm(S, 8, 0, 64, fl); slm(S, 0, 8, 64, fl); slm(S, 8, 8, 64, fl); }
  printf("DONE\n");
  return 0;
}
