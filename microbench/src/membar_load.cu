// MEMBAR.GPU under load on an H200: what a `fence.acq_rel.gpu` behind the SM's own outstanding bulk (TMA) copy
// costs as more SMs do the same. Issue #19 / #15: the cluster GEMM's `.release.cluster` arrives (MEMBAR.ALL.GPU)
// and the `cluster_sync` own_bulk case are 63-69 % of the H200 in the model once every SM runs them (871 vs 647
// cycles at grid 132 / 2), while the copy alone completes as fast at both grids (518 / 507).
// A self-contained program; one text line per result (parsed by microbench/parse_membar_load.py).
//   MBL grid=<G> fencers=<F> bytes=<B>: 1 CTA per SM (150 KiB dynamic shared memory), thread 0 of every CTA
//        loops `iters` (+8 warm-up) times: issue B bytes of cp.async.bulk global->shared (16 KiB pieces, one
//        mbarrier, L2-resident 8 MiB source), t1 = %clock64, `fence.acq_rel.gpu` if blockIdx.x < F, t2, spin on
//        the copy's mbarrier phase, t3. Per CTA: mean t2-t1 (fence) and t3-t1 (copy seen complete). Medians over
//        the fencing CTAs (fence_med, done_f) and over the others (done_o: the copy's own latency under the same
//        load). F = 0: copies alone. `flags` (k_mbl) vary who copies, who fences and the lock-step; CTA lines give
//        every CTA of a run (smid, fenced, fence, done).
// MBL_SECTION=hit_density (environment) runs only the hit-density section (run_l2_hit_density.sh).
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a membar_load.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)  // one CTA per SM
#define CHUNK 16384
#define NCHUNK 512        // 8 MiB source

// out[4*b]: mean fence cycles * 100, +1 mean t3-t1 * 100, +2 smid, +3 fenced
// flags: 1 = fencers issue no copy of their own (idle fence), 2 = non-fencers issue no copies (they idle),
// 4 = fencers are every (grid / fencers)-th block instead of the first `fencers`, 8 = each CTA first spins
// (blockIdx.x * 37) % 400 cycles (loops out of lock-step), 16 / 32 = the fencers' / the others' copies read
// `cold` instead (each CTA walks its own (iters + 8) x 16 KiB, never read before: DRAM misses; 16 KiB copies),
// 64 = the fencers keep their role (copies, flags 16) but skip the fence: their copy's own time under that load
__global__ void __launch_bounds__(32, 1) k_mbl(const char* src, u64* out, u32 iters, u32 fencers, u32 bytes,
                                                u32 flags, const char* cold) {
  const u32 base = (smem_addr(dyn_smem) + 1023) & ~1023u;
  const u32 bar = base + 8 * CHUNK;
  if (threadIdx.x != 0) return;
  mbar_init(bar, 1);
  mbar_fence_init();
  bool fence = blockIdx.x < fencers;
  if (flags & 4) fence = fencers && (blockIdx.x % (gridDim.x / fencers) == 0) && blockIdx.x / (gridDim.x / fencers) < fencers;
  const bool copy = fence ? !(flags & 1) : !(flags & 2);
  const bool from_cold = fence ? (flags & 16) : (flags & 32);
  if (flags & 8) { u64 t0 = clk(); while (clk() - t0 < (u64)((blockIdx.x * 37) % 400)) {} }
  double sf = 0, sd = 0;
  u32 ph = 0;
  for (u32 i = 0; i < iters + 8; ++i) {
    if (copy) {
      mbar_arrive_expect_tx(bar, bytes);
      if (from_cold)
        bulk_g2s(base, cold + ((size_t)blockIdx.x * (iters + 8) + i) * CHUNK, CHUNK, bar);
      else
        for (u32 o = 0; o < bytes; o += CHUNK)
          bulk_g2s(base + o, src + (size_t)((blockIdx.x * 7 + i * 5 + o / CHUNK) % NCHUNK) * CHUNK,
                   bytes - o < CHUNK ? bytes - o : CHUNK, bar);
    }
    u64 t1 = clk();
    if (fence && !(flags & 64)) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    u64 t2 = clk();
    if (copy) { mbar_wait(bar, ph); ph ^= 1; }
    u64 t3 = clk();
    if (i >= 8) { sf += (double)(t2 - t1); sd += (double)(t3 - t1); }
  }
  out[4 * blockIdx.x] = (u64)(sf / iters * 100.0);
  out[4 * blockIdx.x + 1] = (u64)(sd / iters * 100.0);
  out[4 * blockIdx.x + 2] = smid();
  out[4 * blockIdx.x + 3] = fence;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
static u64* d_out;
static char* d_src;
static char* d_cold;

static void run(int grid, int fencers, int bytes, u32 iters, u32 flags = 0, bool per_cta = false) {
  for (int rep = 0; rep < 2; ++rep) {
    CK(cudaMemset(d_out, 0, 4 * 8 * grid));
    k_mbl<<<grid, 32, DYN>>>(d_src, d_out, iters, fencers, bytes, flags, d_cold);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<u64> h(4 * grid);
    CK(cudaMemcpy(h.data(), d_out, 4 * 8 * grid, cudaMemcpyDeviceToHost));
    std::vector<double> f, df, dO;
    for (int b = 0; b < grid; ++b) {
      if (h[4 * b + 3]) { f.push_back(h[4 * b] / 100.0); df.push_back(h[4 * b + 1] / 100.0); }
      else dO.push_back(h[4 * b + 1] / 100.0);
    }
    std::vector<double> fs = f; std::sort(fs.begin(), fs.end());
    printf("MBL grid=%d fencers=%d bytes=%d flags=%u rep=%d iters=%u fence_med=%.2f fence_min=%.2f fence_max=%.2f "
           "done_f=%.2f done_o=%.2f\n", grid, fencers, bytes, flags, rep, iters, med(f), fs.empty() ? 0 : fs.front(),
           fs.empty() ? 0 : fs.back(), med(df), med(dO));
    if (per_cta && rep == 0)
      for (int b = 0; b < grid; ++b)
        printf("CTA grid=%d fencers=%d bytes=%d flags=%u block=%d smid=%llu fenced=%llu fence=%.2f done=%.2f\n", grid,
               fencers, bytes, flags, b, h[4 * b + 2], h[4 * b + 3], h[4 * b] / 100.0, h[4 * b + 1] / 100.0);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_mbl, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaMalloc(&d_out, 4 * 8 * 1024));
  CK(cudaMalloc(&d_src, (size_t)NCHUNK * CHUNK));
  CK(cudaMemset(d_src, 1, (size_t)NCHUNK * CHUNK));
  CK(cudaMalloc(&d_cold, (size_t)S * (256 + 8) * CHUNK));
  const u32 it = 256;
  const char* section = getenv("MBL_SECTION");
  if (section && !strcmp(section, "hit_density")) {
    // L2 hits behind DRAM misses against the miss density (issue 15, l2.hit_dram_queue_share): 33 CTAs copy from
    // the L2-resident source (spread, flags 4) among N CTAs streaming DRAM-missing copies (32); their copy time
    // without a fence (64: done_f) and the fence behind it (fence_med). N = 0 is the same 33 copies alone.
    for (int n : {0, 4, 8, 16, 33, 66, 99}) { run(33 + n, 33, CHUNK, it, 4 | 32 | 64); run(33 + n, 33, CHUNK, it, 4 | 32); }
    printf("DONE\n");
    return 0;
  }
  // CLK: SM clock during the run (%clock64 against %globaltimer is in cluster_sync / atomics; not repeated)
  for (int g : {1, 2, 8, 16, 33, 66, S}) { run(g, 0, CHUNK, it); run(g, g, CHUNK, it); }
  for (int f : {1, 8, 33, 66}) run(S, f, CHUNK, it);
  for (int b : {4096, 2 * CHUNK, 4 * CHUNK}) { run(2, 0, b, it); run(2, 2, b, it); run(S, 0, b, it); run(S, S, b, it); }
  // which load slows the fence: fencers without a copy of their own among copiers (1), fencers with copies among
  // idle CTAs (2), fencers spread over the GPCs (4), loops out of lock-step (8); per-CTA values for two of them
  for (int f : {1, 8, 33, 132}) run(S, f, CHUNK, it, 1);
  for (int f : {8, 33, 66}) run(S, f, CHUNK, it, 2);
  for (int f : {8, 33}) run(S, f, CHUNK, it, 4);
  run(S, S, CHUNK, it, 8); run(S, 33, CHUNK, it, 8); run(S, 33, CHUNK, it, 4 | 8);
  run(S, 33, CHUNK, it, 0, true); run(S, S, CHUNK, it, 0, true);
  // DRAM-missing copies (cold: a fresh 16 KiB per iteration and CTA, 570 MB per run, so a rerun misses again)
  for (int g : {1, 2}) { run(g, 0, CHUNK, it, 32); run(g, g, CHUNK, it, 16); }
  run(S, 0, CHUNK, it, 32); run(S, S, CHUNK, it, 16); run(S, 1, CHUNK, it, 32); run(S, 1, CHUNK, it, 48);
  run(S, 33, CHUNK, it, 4 | 32); run(S, 33, CHUNK, it, 4 | 16 | 32); run(S, S, CHUNK, it, 16, true);
  // the same CTAs without the fence: how long their own copy takes under that load (done_f)
  run(S, 1, CHUNK, it, 32 | 64); run(S, 33, CHUNK, it, 4 | 32 | 64); run(S, 33, CHUNK, it, 4 | 64);
  run(S, 1, CHUNK, it, 64); run(S, S, CHUNK, it, 64); run(S, 33, CHUNK, it, 64);
  printf("DONE\n");
  return 0;
}
