// L2 capacity / write-back microbenchmark for warpgraph's DRAM-byte model (what Nsight Compute reports with
// --cache-control all, i.e. L2 flushed+invalidated before each launch and dirty lines still in L2 at kernel end
// not counted).
//
// Experiment 1 (reread_*): one persistent launch (all blocks co-resident) reads a footprint F twice. Warp w owns the
// contiguous chunk range [w*N/nw, (w+1)*N/nw) of 512-B chunks (32 lanes x 16-B ld.global.v4); pass 1 reads it in
// order; a grid barrier; pass 2 re-reads it in one of these orders:
//   reread_1pass   : no pass 2 (baseline: DRAM read should be F)
//   reread_same    : same order (oldest line first: the LRU worst case, cyclic reuse)
//   reread_reverse : reverse order (newest first: under LRU the hits equal the capacity)
//   reread_perm    : modular-stride permutation k -> (k*7919 + 13) mod L of the warp's L chunks
//   reread_shift   : same order, but warp w re-reads the range of warp (w + nw/2) mod nw (lines read first by
//                    another SM: tests the near/far L2 partition effect)
// Experiment 2 (stream_rw): a Triton-like elementwise kernel (non-persistent grid, 16 KiB of output per block, in
// block order): out[i] = f(in0[i] [, in1[i]]) with k = R/W input arrays of W bytes each (k = 0: write only).
//
// usage: l2_capacity time OUT.jsonl   timing (CUDA events; L2 flushed by a 1 GiB read before each launch)
//        l2_capacity ncu              one launch per config (x2 reps), run under ncu with --cache-control all;
//                                     the launch plan is printed as "PLAN idx kernel F R W rep" lines.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "CUDA error %s at %s:%d: %s\n", \
  cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)
#define LAUNCHED() do { CK(cudaGetLastError()); CK(cudaDeviceSynchronize()); } while (0)

static const u64 MiB = 1ull << 20;
static const int RR_THREADS = 256;

__device__ __forceinline__ uint4 ldg16(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ u32 ld_acquire(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Grid barrier: all blocks must be co-resident (host sizes the grid from the occupancy calculator).
__device__ __forceinline__ void grid_barrier(u32* ctr, u32 target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(ctr, 1u);
    while (ld_acquire(ctr) < target) __nanosleep(64);
  }
  __syncthreads();
}

// ORDER: 0 = 1 pass only, 1 = same, 2 = reverse, 3 = modular permutation, 4 = same order, range of warp w+nw/2.
template <int ORDER>
__device__ __forceinline__ void reread_body(const uint4* buf, u64 nchunks, u32* bar, u32* sink) {
  const u32 lane = threadIdx.x & 31;
  const u64 wpb = blockDim.x >> 5, nw = gridDim.x * wpb, w = blockIdx.x * wpb + (threadIdx.x >> 5);
  u32 x = 0;
  {
    const u64 c0 = w * nchunks / nw, L = (w + 1) * nchunks / nw - c0;
    const uint4* p = buf + c0 * 32 + lane;
    u64 k = 0;
    for (; k + 4 <= L; k += 4) {
      uint4 v0 = ldg16(p + (k + 0) * 32), v1 = ldg16(p + (k + 1) * 32), v2 = ldg16(p + (k + 2) * 32), v3 = ldg16(p + (k + 3) * 32);
      x ^= v0.x ^ v1.y ^ v2.z ^ v3.w;
    }
    for (; k < L; ++k) { uint4 v = ldg16(p + k * 32); x ^= v.x; }
  }
  if (ORDER != 0) {
    grid_barrier(bar, gridDim.x);
    const u64 w2 = ORDER == 4 ? (w + nw / 2) % nw : w;
    const u64 c0 = w2 * nchunks / nw, L = (w2 + 1) * nchunks / nw - c0;
    const uint4* p = buf + c0 * 32 + lane;
    auto idx = [&](u64 k) -> u64 {
      if (ORDER == 2) return L - 1 - k;
      if (ORDER == 3) return (k * 7919ull + 13ull) % L;
      return k;
    };
    u64 k = 0;
    for (; k + 4 <= L; k += 4) {
      uint4 v0 = ldg16(p + idx(k + 0) * 32), v1 = ldg16(p + idx(k + 1) * 32), v2 = ldg16(p + idx(k + 2) * 32),
            v3 = ldg16(p + idx(k + 3) * 32);
      x ^= v0.x ^ v1.y ^ v2.z ^ v3.w;
    }
    for (; k < L; ++k) { uint4 v = ldg16(p + idx(k) * 32); x ^= v.x; }
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
extern "C" __global__ void __launch_bounds__(RR_THREADS) reread_1pass(const uint4* b, u64 n, u32* bar, u32* s) { reread_body<0>(b, n, bar, s); }
extern "C" __global__ void __launch_bounds__(RR_THREADS) reread_same(const uint4* b, u64 n, u32* bar, u32* s) { reread_body<1>(b, n, bar, s); }
extern "C" __global__ void __launch_bounds__(RR_THREADS) reread_reverse(const uint4* b, u64 n, u32* bar, u32* s) { reread_body<2>(b, n, bar, s); }
extern "C" __global__ void __launch_bounds__(RR_THREADS) reread_perm(const uint4* b, u64 n, u32* bar, u32* s) { reread_body<3>(b, n, bar, s); }
extern "C" __global__ void __launch_bounds__(RR_THREADS) reread_shift(const uint4* b, u64 n, u32* bar, u32* s) { reread_body<4>(b, n, bar, s); }

// Elementwise stream: 256 threads x 4 float4 = 16 KiB of output per block; k input arrays of n4 float4 each.
extern "C" __global__ void __launch_bounds__(256) stream_rw(const float4* in, float4* out, u64 n4, u32 k) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const u64 i = (u64)blockIdx.x * 1024 + j * 256 + threadIdx.x;
    if (i >= n4) return;
    float4 a = make_float4(1.f, 2.f, 3.f, 4.f), b = make_float4(0.5f, 0.5f, 0.5f, 0.5f);
    if (k >= 1) a = in[i];
    if (k >= 2) b = in[n4 + i];
    out[i] = make_float4(a.x * 1.5f + b.x, a.y * 1.5f + b.y, a.z * 1.5f + b.z, a.w * 1.5f + b.w);
  }
}

extern "C" __global__ void init_buf(u32* p, u64 n, u32 seed) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    p[i] = 0x3f800000u | (((u32)(i * 2654435761ull) ^ seed) & 0x007fffffu);  // floats in [1, 2): finite, nonzero
}
extern "C" __global__ void flush_read(const uint4* p, u64 n, u32* sink) {
  u32 x = 0;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) x ^= ldg16(p + i).x;
  if (x == 0x12345678u) sink[0] = x;
}

typedef void (*rr_fn)(const uint4*, u64, u32*, u32*);
struct RR { const char* name; rr_fn fn; };
static const RR RRS[] = {{"reread_1pass", reread_1pass}, {"reread_same", reread_same}, {"reread_reverse", reread_reverse},
                         {"reread_perm", reread_perm}, {"reread_shift", reread_shift}};
static const int F_MIB[] = {8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128};
static const int RW_MIB[][2] = {{8, 8}, {16, 16}, {24, 24}, {32, 32}, {48, 48}, {64, 32}, {64, 64}, {128, 128}, {0, 32}, {0, 64}};

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s time OUT.jsonl | ncu\n", argv[0]); return 1; }
  const bool timing = !strcmp(argv[1], "time");
  FILE* jf = nullptr;
  if (timing) { if (argc < 3 || !(jf = fopen(argv[2], "w"))) { fprintf(stderr, "need OUT.jsonl\n"); return 1; } }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, reread_perm, RR_THREADS, 0));
  occ = std::min(occ, 4);
  const int rr_grid = prop.multiProcessorCount * occ;
  printf("DEVICE %s sms=%d l2=%d occ=%d rr_grid=%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize, occ, rr_grid);
  char *A, *B, *FL = nullptr; u32 *bar, *sink;
  CK(cudaMalloc(&A, 128 * MiB)); CK(cudaMalloc(&B, 128 * MiB));
  CK(cudaMalloc(&bar, 4096)); CK(cudaMalloc(&sink, (size_t)rr_grid * RR_THREADS * 4 + 4096));
  const u64 FLB = 1024 * MiB;
  if (timing) CK(cudaMalloc(&FL, FLB));
  init_buf<<<1024, 256>>>((u32*)A, 128 * MiB / 4, 0x1234u); LAUNCHED();
  init_buf<<<1024, 256>>>((u32*)B, 128 * MiB / 4, 0x9876u); LAUNCHED();
  if (FL) { init_buf<<<1024, 256>>>((u32*)FL, FLB / 4, 0x5555u); LAUNCHED(); }
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int reps = timing ? 5 : 2;
  int idx = 0;
  auto flush = [&]() { if (FL) { flush_read<<<prop.multiProcessorCount * 8, 256>>>((const uint4*)FL, FLB / 16, sink); LAUNCHED(); } };
  auto timed = [&](auto&& launch) -> double {
    flush();
    CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); LAUNCHED();
    float ms = 0; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1e6;
  };
  // Experiment 1
  for (int fi = 0; fi < (int)(sizeof F_MIB / sizeof F_MIB[0]); ++fi) {
    const u64 F = F_MIB[fi] * MiB, nchunks = F / 512;
    for (const RR& r : RRS) {
      std::vector<double> ns;
      for (int rep = 0; rep < reps; ++rep) {
        CK(cudaMemset(bar, 0, 4096)); CK(cudaDeviceSynchronize());
        if (!timing) printf("PLAN %d %s %llu 0 0 %d\n", idx, r.name, (unsigned long long)F, rep);
        ns.push_back(timed([&]() { r.fn<<<rr_grid, RR_THREADS>>>((const uint4*)A, nchunks, bar, sink); }));
        ++idx;
      }
      if (timing) {
        std::sort(ns.begin(), ns.end());
        fprintf(jf, "{\"experiment\":\"reuse\",\"kernel\":\"%s\",\"F\":%llu,\"duration_ns_median\":%.1f,\"duration_ns_min\":%.1f}\n",
                r.name, (unsigned long long)F, ns[ns.size() / 2], ns[0]);
        printf("%-15s F=%4d MiB  median %9.1f ns\n", r.name, F_MIB[fi], ns[ns.size() / 2]);
      }
    }
  }
  // Experiment 2
  for (auto& rw : RW_MIB) {
    const u64 R = rw[0] * MiB, W = rw[1] * MiB, n4 = W / 16;
    const u32 k = (u32)(R / W);
    const u32 grid = (u32)((n4 + 1023) / 1024);
    std::vector<double> ns;
    for (int rep = 0; rep < reps; ++rep) {
      CK(cudaMemset(B, 0xff, W));  // poison (NaN) the output; also dirties L2, so flush follows (ncu flushes itself)
      CK(cudaDeviceSynchronize());
      if (!timing) printf("PLAN %d stream_rw 0 %llu %llu %d\n", idx, (unsigned long long)R, (unsigned long long)W, rep);
      ns.push_back(timed([&]() { stream_rw<<<grid, 256>>>((const float4*)A, (float4*)B, n4, k); }));
      ++idx;
    }
    // check a few outputs against the host formula
    std::vector<float> hin(8), hin2(8), hout(8);
    const u64 probe = n4 * 4 - 8;
    CK(cudaMemcpy(hout.data(), B + probe * 4, 32, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hin.data(), A + probe * 4, 32, cudaMemcpyDeviceToHost));
    if (k >= 2) CK(cudaMemcpy(hin2.data(), A + W + probe * 4, 32, cudaMemcpyDeviceToHost));
    for (int j = 0; j < 8; ++j) {  // device may fuse a*1.5+b into one FMA: compare with a relative tolerance
      const float a = k >= 1 ? hin[j] : (float)(1 + (probe + j) % 4), b = k >= 2 ? hin2[j] : 0.5f, ref = a * 1.5f + b;
      if (!(fabsf(hout[j] - ref) <= 1e-6f * fabsf(ref))) fprintf(stderr, "CHECK FAILED stream_rw R=%d W=%d j=%d %g vs %g\n", rw[0], rw[1], j, hout[j], ref);
    }
    if (timing) {
      std::sort(ns.begin(), ns.end());
      fprintf(jf, "{\"experiment\":\"writeback\",\"kernel\":\"stream_rw\",\"R\":%llu,\"W\":%llu,\"duration_ns_median\":%.1f,\"duration_ns_min\":%.1f}\n",
              (unsigned long long)R, (unsigned long long)W, ns[ns.size() / 2], ns[0]);
      printf("stream_rw R=%3d W=%3d MiB  median %9.1f ns\n", rw[0], rw[1], ns[ns.size() / 2]);
    }
  }
  if (jf) fclose(jf);
  printf("DONE launches=%d\n", idx);
  return 0;
}
