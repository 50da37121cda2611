// DRAM latency of a warp load that fans out over L lines, unloaded and under background load (run_dram_fanout.sh).
// A warp instruction's result is ready when its LAST line returns, and a CTA that meets at bar.sync waits for its
// slowest warp: the latency that matters for a multi-line request is the maximum over its lines, not the mean a
// pointer chase measures (k_loaded.cu). Kernel fanout_latency: block 0, warp 0 runs L independent pointer chases
// in lock step (lane i holds chains i, i+32, ...; L = 1..128), each step one dependent ld.global.cg per chain over
// a random cyclic permutation of 128-B lines in a 2 GiB region (every step a DRAM miss, fresh lines). The cycles
// per step are the expected maximum of L line latencies. Blocks 1..B (256 threads) stream 16-B ld.global.cg reads of
// a separate 1 GiB buffer until block 0 is done, as in k_loaded.cu (background bandwidth from %globaltimer).
// out[0] = cycles, out[1] = steps, out[2] = background bytes, out[3] = min start ns, out[4] = max end ns.
#include <algorithm>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cuda_runtime.h>
#include "common.cuh"

__device__ __forceinline__ u32 ldcg(const u32* p) { u32 v; asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

extern "C" __global__ void scatter_chain(u32* region, const u32* next, u64 lines) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < lines; i += (u64)gridDim.x * blockDim.x)
    region[i * 32] = next[i] * 32u;   // word index of the next line
}

extern "C" __global__ void fanout_latency(const u32* region, const u32* starts, int L, u32 steps, const uint4* bg,
                                          u64 bg_n, u64* out, volatile u32* flag) {
  if (blockIdx.x == 0) {
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x;
    const int per = L > 32 ? L / 32 : 1;            // chains per lane
    const bool on = lane < L;
    u32 j0 = 0, j1 = 0, j2 = 0, j3 = 0;
    if (on) {
      j0 = starts[lane];
      if (per > 1) j1 = starts[lane + 32];
      if (per > 2) { j2 = starts[lane + 64]; j3 = starts[lane + 96]; }
    }
    __syncwarp();
    u64 t0 = 0, t1 = 0;
    for (u32 i = 0; i < steps + 16; ++i) {          // 16 warm-up steps (the background is starting)
      if (i == 16) { __syncwarp(); t0 = clk(); }
      if (on) {
        j0 = ldcg(region + j0);
        if (per > 1) j1 = ldcg(region + j1);
        if (per > 2) { j2 = ldcg(region + j2); j3 = ldcg(region + j3); }
      }
      __syncwarp();                                  // the step ends when every lane's lines are back
    }
    t1 = clk();
    if (lane == 0) {
      out[0] = t1 - t0; out[1] = steps; out[5] = j0 ^ j1 ^ j2 ^ j3;
      __threadfence();
      *flag = 1;
    }
    return;
  }
  u64 g0 = gtimer();
  u64 nthreads = (u64)(gridDim.x - 1) * blockDim.x;
  u64 i = (u64)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  u32 acc = 0; u64 bytes = 0;
  while (true) {
    uint4 v0, v1, v2, v3;
    u64 k = i % bg_n;
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v0.x), "=r"(v0.y), "=r"(v0.z), "=r"(v0.w) : "l"(bg + k) : "memory");
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v1.x), "=r"(v1.y), "=r"(v1.z), "=r"(v1.w) : "l"(bg + (k + nthreads) % bg_n) : "memory");
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v2.x), "=r"(v2.y), "=r"(v2.z), "=r"(v2.w) : "l"(bg + (k + 2 * nthreads) % bg_n) : "memory");
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v3.x), "=r"(v3.y), "=r"(v3.z), "=r"(v3.w) : "l"(bg + (k + 3 * nthreads) % bg_n) : "memory");
    acc += v0.x ^ v1.y ^ v2.z ^ v3.w;
    bytes += 64;
    i += 4 * nthreads;
    if (*flag) break;
  }
  u64 g1 = gtimer();
  if (acc == 0x9e3779b9u) out[6] = acc;
  atomicAdd(&out[2], bytes);
  atomicMin(&out[3], g1 > g0 ? g0 : g1);
  atomicMax(&out[4], g1);
}

// Contiguous variant: the L lines of a step are consecutive lines of one random 16 KiB block (lane i reads line i,
// i+32, ...): a tile row or a norm row rather than scattered lines. Every line of a block holds the word index of
// the next block; each lane's next address depends on all of its loads (max of equal values).
extern "C" __global__ void fanout_contig(const u32* region, u32 start, int L, u32 steps, const uint4* bg, u64 bg_n,
                                         u64* out, volatile u32* flag) {
  if (blockIdx.x == 0) {
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x;
    const int per = L > 32 ? L / 32 : 1;
    const bool on = lane < L;
    u32 j = start;
    __syncwarp();
    u64 t0 = 0, t1 = 0;
    for (u32 i = 0; i < steps + 16; ++i) {
      if (i == 16) { __syncwarp(); t0 = clk(); }
      if (on) {
        u32 v = ldcg(region + j + lane * 32u);
        if (per > 1) v = max(v, ldcg(region + j + (lane + 32u) * 32u));
        if (per > 2) { v = max(v, ldcg(region + j + (lane + 64u) * 32u)); v = max(v, ldcg(region + j + (lane + 96u) * 32u)); }
        j = v;
      }
      __syncwarp();
    }
    t1 = clk();
    if (lane == 0) { out[0] = t1 - t0; out[1] = steps; out[5] = j; __threadfence(); *flag = 1; }
    return;
  }
  u64 g0 = gtimer();
  u64 nthreads = (u64)(gridDim.x - 1) * blockDim.x;
  u64 i = (u64)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  u32 acc = 0; u64 bytes = 0;
  while (true) {
    uint4 v0, v1;
    u64 k = i % bg_n;
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v0.x), "=r"(v0.y), "=r"(v0.z), "=r"(v0.w) : "l"(bg + k) : "memory");
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v1.x), "=r"(v1.y), "=r"(v1.z), "=r"(v1.w) : "l"(bg + (k + nthreads) % bg_n) : "memory");
    acc += v0.x ^ v1.y;
    bytes += 32;
    i += 2 * nthreads;
    if (*flag) break;
  }
  u64 g1 = gtimer();
  if (acc == 0x9e3779b9u) out[6] = acc;
  atomicAdd(&out[2], bytes);
  atomicMin(&out[3], g0);
  atomicMax(&out[4], g1);
}

extern "C" __global__ void scatter_blocks(u32* region, const u32* next, u64 blocks) {
  // every line of block b holds the word index of block next[b]
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < blocks * 128; i += (u64)gridDim.x * blockDim.x)
    region[i * 32] = next[i / 128] * 128u * 32u;
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

int main() {
  const u64 region_bytes = 2ull << 30, lines = region_bytes / 128, bg_bytes = 1ull << 30;
  u32* region; uint4* bg; u32* d_next; u32* d_starts; u64* d_out; u32* flag; char* flush;
  CK(cudaMalloc(&region, region_bytes)); CK(cudaMalloc(&bg, bg_bytes)); CK(cudaMalloc(&d_next, lines * 4));
  CK(cudaMalloc(&d_starts, 128 * 4)); CK(cudaMalloc(&d_out, 8 * 8)); CK(cudaMalloc(&flag, 4));
  CK(cudaMalloc(&flush, 256u << 20));
  CK(cudaMemset(bg, 1, bg_bytes));
  // one random cyclic permutation of all lines (Sattolo), so chains started far apart never meet in a run
  std::vector<u32> perm(lines);
  for (u64 i = 0; i < lines; ++i) perm[i] = (u32)i;
  std::mt19937_64 rng(20261203);
  for (u64 i = lines - 1; i > 0; --i) { u64 j = rng() % i; std::swap(perm[i], perm[j]); }
  std::vector<u32> next(lines);
  for (u64 i = 0; i < lines; ++i) next[perm[i]] = perm[(i + 1) % lines];
  CK(cudaMemcpy(d_next, next.data(), lines * 4, cudaMemcpyHostToDevice));
  scatter_chain<<<1024, 256>>>(region, d_next, lines);
  CK(cudaDeviceSynchronize());
  const u32 steps = 400;
  // one measured launch on a cold L2: (cycles per step, background GB/s)
  auto measure = [&](auto launch, int bg_blocks, int rep) {
    CK(cudaMemset(flush, rep, 256u << 20));       // evict the L2 (50 MiB) between runs
    CK(cudaMemset(flag, 0, 4));
    u64 init[8] = {0, 0, 0, ~0ull, 0, 0, 0, 0};
    CK(cudaMemcpy(d_out, init, sizeof init, cudaMemcpyHostToDevice));
    launch();
    CK(cudaDeviceSynchronize());
    u64 o[8]; CK(cudaMemcpy(o, d_out, sizeof o, cudaMemcpyDeviceToHost));
    double gbs = bg_blocks ? (double)o[2] / (double)(o[4] - o[3]) : 0.0;
    return std::make_pair((double)o[0] / o[1], gbs);
  };
  u64 pos = 0;                                        // position along the permutation: fresh lines every run
  printf("L bg_blocks rep cycles_per_step bg_gb_per_s\n");
  for (int blocks : {0, 66, 132, 264, 528, 1056}) {
    for (int L : {1, 2, 4, 8, 16, 32, 64, 128}) {
      for (int rep = 0; rep < 3; ++rep) {
        // chain c starts at permutation position pos + c * gap: each advances steps + 16 lines per run
        std::vector<u32> starts(128);
        const u64 gap = steps + 32;
        for (int c = 0; c < 128; ++c) starts[c] = perm[(pos + c * gap) % lines] * 32u;
        pos += 128 * gap;
        CK(cudaMemcpy(d_starts, starts.data(), 128 * 4, cudaMemcpyHostToDevice));
        auto r = measure([&] {
          fanout_latency<<<1 + blocks, 256>>>(region, d_starts, L, steps, bg, bg_bytes / 16, d_out, flag);
        }, blocks, rep);
        printf("%d %d %d %.1f %.1f\n", L, blocks, rep, r.first, r.second);
      }
    }
  }
  // contiguous lines: a random cyclic permutation of 16 KiB blocks (the same 2 GiB region, rewritten)
  {
    const u64 blocks = lines / 128;
    std::vector<u32> bp(blocks);
    for (u64 i = 0; i < blocks; ++i) bp[i] = (u32)i;
    for (u64 i = blocks - 1; i > 0; --i) { u64 j = rng() % i; std::swap(bp[i], bp[j]); }
    std::vector<u32> bn(blocks);
    for (u64 i = 0; i < blocks; ++i) bn[bp[i]] = bp[(i + 1) % blocks];
    CK(cudaMemcpy(d_next, bn.data(), blocks * 4, cudaMemcpyHostToDevice));
    scatter_blocks<<<1024, 256>>>(region, d_next, blocks);
    CK(cudaDeviceSynchronize());
    u64 bpos = 0;
    printf("CONTIG L bg_blocks rep cycles_per_step bg_gb_per_s\n");
    for (int blocks_bg : {0, 132, 264}) {
      for (int L : {1, 4, 16, 32, 64, 128}) {
        for (int rep = 0; rep < 3; ++rep) {
          u32 st = bp[bpos % blocks] * 128u * 32u;
          bpos += steps + 32;
          auto r = measure([&] {
            fanout_contig<<<1 + blocks_bg, 256>>>(region, st, L, steps, bg, bg_bytes / 16, d_out, flag);
          }, blocks_bg, rep);
          printf("C %d %d %d %.1f %.1f\n", L, blocks_bg, rep, r.first, r.second);
        }
      }
    }
  }
  printf("status %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
