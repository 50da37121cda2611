// Distributed shared memory over the GPC fabric of an H200: a self-contained program (its own main).
// Sections (one text line per result, parsed by microbench/parse_dsm_fabric.py):
//   MAP  %smid / %cluster_ctarank / %clusterid of every CTA of the co-resident clusters, cluster sizes 2..16
//   OCC  cudaOccupancyMaxActiveClusters per cluster size (1 CTA per SM: 150 KiB dynamic shared memory)
//   LAT  dependent-chain latency per access from each CTA rank r to rank (r + shift) % C, %clock64:
//        op ld   : ld.shared::cluster.u32, the loaded value feeds the next address
//        op atom : atom.shared::cluster.add.u32, the returned value feeds the next address
//        op pp   : store ping-pong: rank 0 stores a sequence number into rank `shift`'s shared memory and spins on
//                  its own flag until rank `shift` has stored it back (st.volatile.shared::cluster both ways);
//                  one iteration = two one-way store latencies + two local polls
//   BW   remote load / store bandwidth: `active` CTAs of a cluster each stream 16-B words to/from the shared
//        memory of CTA (rank + shift) % C (the k_dsm.cu:dsm_bw access pattern), single cluster or every
//        co-resident cluster of the GPU; op local = the same loads from the CTA's own shared memory.
//        shift C/2 with active <= C/2: every target is an idle CTA; shift 1: active targets also serve.
//        Cluster 2 also with 64-256 threads per CTA (fewer accesses in flight)
//   MC   bulk-copy multicast: cp.async.bulk.shared::cluster.global.multicast::cluster of 16 KiB chunks through a
//        4-stage ring, one issuing CTA per group of F (fan-out) CTAs, every CTA receiving every chunk of its
//        group; consumers release a stage with a remote mbarrier arrive on the issuer's `empty` barrier.
//        Ring depth 4 or 8 stages of 16 KiB, 4 of 32 KiB or 2 of 64 KiB; the consumer's remote arrive .release.cluster or
//        .relaxed.cluster (relaxed=1).
//        F = 1 also without multicast (plain cp.async.bulk), source L2-resident (8 MiB region) or DRAM (fresh)
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a dsm_fabric.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

__device__ __forceinline__ u32 crank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ u32 cnrank() { u32 r; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ u32 cid() { u32 r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ u32 mapa_(u32 a, u32 rank) {
  u32 r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)); return r;
}

// ---------------- MAP ----------------
extern "C" __global__ void fab_map(u32* out) {
  if (threadIdx.x == 0) {
    u32 b = blockIdx.x;
    out[4 * b] = smid(); out[4 * b + 1] = crank(); out[4 * b + 2] = cid(); out[4 * b + 3] = cnrank();
  }
  csync();
}

// ---------------- LAT ----------------
// out[8*b]: cycles, +1 smid, +2 rank, +3 dst rank, +4 sink
extern "C" __global__ void fab_lat(u64* out, u32 iters, u32 shift, u32 op) {
  u32* s = (u32*)dyn_smem;
  for (u32 i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = 0;
  csync();
  const u32 r = crank(), n = cnrank();
  const u32 dst = (r + shift) % n;
  u64 t0 = 0, t1 = 0;
  u32 a = 0;
  if (threadIdx.x == 0) {
    if (op == 0 || op == 1) {
      a = mapa_(smem_addr(s) + 4 * 32 * r, dst);  // each source its own 128-B line of the target
      u32 v;
      asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");  // warm the path
      a += v;
      t0 = clk();
      if (op == 0) {
        for (u32 i = 0; i < iters; ++i) {
          asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
          a += v;
        }
      } else {
        for (u32 i = 0; i < iters; ++i) {
          asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;" : "=r"(v) : "r"(a) : "memory");
          a += (v >> 31) << 2;  // always 0 (fewer than 2^31 adds), but a true data dependence
        }
      }
      t1 = clk();
    } else if (shift != 0 && (r == 0 || r == shift)) {  // op 2: ping-pong between rank 0 and rank `shift`
      const u32 flag = smem_addr(s + 512);
      const u32 peer = (r == 0) ? shift : 0;
      const u32 rflag = mapa_(flag, peer);
      t0 = clk();
      for (u32 i = 1; i <= iters; ++i) {
        if (r == 0) {
          asm volatile("st.volatile.shared::cluster.u32 [%0], %1;" ::"r"(rflag), "r"(i) : "memory");
          u32 v;
          do { asm volatile("ld.volatile.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(flag) : "memory"); } while (v != i);
        } else {
          u32 v;
          do { asm volatile("ld.volatile.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(flag) : "memory"); } while (v != i);
          asm volatile("st.volatile.shared::cluster.u32 [%0], %1;" ::"r"(rflag), "r"(i) : "memory");
        }
      }
      t1 = clk();
    }
    const u32 b = blockIdx.x;
    out[8 * b] = t1 - t0; out[8 * b + 1] = smid(); out[8 * b + 2] = r; out[8 * b + 3] = dst; out[8 * b + 4] = a;
  }
  csync();
}

// ---------------- BW ----------------
// op 0 remote load, 1 remote store, 2 local load. out[4*b]: cycles, +1 smid, +2 rank, +3 active
extern "C" __global__ void fab_bw(u64* out, u32* sink, u32 iters, u32 op, u32 active, u32 shift) {
  u32* s = (u32*)dyn_smem;  // 32 KiB used
  for (u32 i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = i * 2654435761u;
  csync();
  const u32 r = crank(), n = cnrank();
  const u32 peer = (r + shift) % n;
  const u32 local = smem_addr(s);
  const u32 base = (op == 2) ? local : mapa_(local, peer);
  const u32 off = (threadIdx.x * 16) % 32768;
  u32 x0 = 0, x1 = 0, x2 = 0, x3 = 0;
  const bool act = r < active;
  u64 t0 = clk();
  if (act) {
    if (op == 1) {
      for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          u32 ad = base + ((off + u * 8192) % 32768);
          asm volatile("st.volatile.shared::cluster.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(ad), "r"(i), "r"(u), "r"(x0), "r"(x1) : "memory");
        }
      }
    } else {
      for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          u32 a, b, c, d;
          u32 ad = base + ((off + u * 8192 + (i & 1) * 4096) % 32768);
          asm volatile("ld.volatile.shared::cluster.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(ad) : "memory");
          x0 += a; x1 += b; x2 += c; x3 += d;
        }
      }
    }
  }
  __syncthreads();
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[4 * blockIdx.x] = t1 - t0; out[4 * blockIdx.x + 1] = smid(); out[4 * blockIdx.x + 2] = r; out[4 * blockIdx.x + 3] = act; }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3;
  csync();
}

// ---------------- MC ----------------
#define MC_MAX_STAGES 8
__device__ __forceinline__ void mbar_wait_cluster(u32 bar, u32 parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WAITC_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAITC_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}
// out[4*b]: cycles (consumer), +1 smid, +2 rank, +3 issuer flag
extern "C" __global__ void fab_mc(const char* src, u64 region, u64* out, u32 nchunks, u32 chunk, u32 F, u32 multicast,
                                   u32 MC_STAGES, u32 relaxed) {
  char* ring = dyn_smem;  // MC_STAGES (<= 8) * chunk bytes, 1024-aligned
  u64* bars = (u64*)(dyn_smem + MC_STAGES * chunk);  // full[0..S), empty[S..2S)
  const u32 r = crank();
  const u32 issuer = r - r % F;
  const bool is_issuer = (r % F) == 0;
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < MC_STAGES; ++s) { mbar_init(smem_addr(&bars[s]), 1); mbar_init(smem_addr(&bars[MC_STAGES + s]), F); }
    mbar_fence_init();
  }
  csync();
  u64 t0 = clk(), t1 = t0;
  if (threadIdx.x == 32) {  // consumer (every CTA)
    for (u32 k = 0; k < nchunks; ++k) {
      const u32 s = k % MC_STAGES, ph = (k / MC_STAGES) & 1;
      const u32 full = smem_addr(&bars[s]);
      mbar_arrive_expect_tx(full, chunk);
      mbar_wait(full, ph);
      const u32 rempty = mapa_(smem_addr(&bars[MC_STAGES + s]), issuer);
      if (relaxed)  // the data is never read: no release ordering needed, only the count
        asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(rempty) : "memory");
      else
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rempty) : "memory");
    }
    t1 = clk();
  } else if (threadIdx.x == 0 && is_issuer) {
    const u32 nsrc = (u32)(region / chunk);
    const u32 g = cid() * (cnrank() / F) + r / F;  // global issuer index
    const unsigned short mask = (unsigned short)(((1u << F) - 1) << r);
    for (u32 k = 0; k < nchunks; ++k) {
      const u32 s = k % MC_STAGES;
      if (k >= MC_STAGES) mbar_wait_cluster(smem_addr(&bars[MC_STAGES + s]), ((k / MC_STAGES) - 1) & 1);
      const u64 off = (u64)(((u64)g * (region > (64ull << 20) ? nchunks : 37) + k) % nsrc) * chunk;  // DRAM: disjoint; L2: staggered
      const u32 dst = smem_addr(ring + s * chunk), full = smem_addr(&bars[s]);
      if (multicast) {
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;"
            ::"r"(dst), "l"(src + off), "r"(chunk), "r"(full), "h"(mask) : "memory");
      } else {
        bulk_g2s(dst, src + off, chunk, full);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 32) { out[4 * blockIdx.x] = t1 - t0; out[4 * blockIdx.x + 1] = smid(); out[4 * blockIdx.x + 2] = r; out[4 * blockIdx.x + 3] = is_issuer; }
  csync();
}

// ---------------- host ----------------
static const size_t DYN = 150 * 1024;  // > half of the 228 KiB per SM: one CTA per SM
static u64* d_out;
static u32* d_sink;

static cudaLaunchConfig_t make_cfg(cudaLaunchAttribute* at, int csize, int grid, int block) {
  cudaLaunchConfig_t cfg = {};
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = csize; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid); cfg.blockDim = dim3(block); cfg.dynamicSmemBytes = DYN; cfg.attrs = at; cfg.numAttrs = 1;
  return cfg;
}
template <typename K>
static void prep(K k) {
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}
template <typename K>
static int max_clusters(K k, int csize, int block) {
  cudaLaunchAttribute at[1];
  cudaLaunchConfig_t cfg = make_cfg(at, csize, csize, block);
  int n = 0;
  cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
  if (e != cudaSuccess) { printf("OCCERR C=%d %s\n", csize, cudaGetErrorString(e)); cudaGetLastError(); return 0; }
  return n;
}
static std::vector<u64> fetch(size_t n) {
  std::vector<u64> h(n);
  CK(cudaMemcpy(h.data(), d_out, n * 8, cudaMemcpyDeviceToHost));
  return h;
}
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d smem_per_sm=%zu cc=%d.%d\n", p.name, p.multiProcessorCount, p.sharedMemPerMultiprocessor, p.major, p.minor);
  CK(cudaMalloc(&d_out, 1 << 20));
  CK(cudaMalloc(&d_sink, 132 * 1024 * 4 * 2));
  prep(fab_map); prep(fab_lat); prep(fab_bw); prep(fab_mc);
  const int sizes[] = {2, 4, 8, 16};
  const char* only = getenv("DSM_SECTIONS");  // e.g. "MC": run only these sections (OCC/MAP always)
  auto want = [&](const char* sec) { return !only || strstr(only, sec) != nullptr; };
  int occ[17] = {0};
  // ---- OCC + MAP ----
  for (int C : sizes) {
    occ[C] = max_clusters(fab_map, C, 128);
    printf("OCC C=%d max_active_clusters=%d\n", C, occ[C]);
    if (!occ[C]) continue;
    for (int rep = 0; rep < 2; ++rep) {
      cudaLaunchAttribute at[1];
      cudaLaunchConfig_t cfg = make_cfg(at, C, occ[C] * C, 128);
      cudaError_t e = cudaLaunchKernelEx(&cfg, fab_map, (u32*)d_out);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { printf("MAPERR C=%d %s\n", C, cudaGetErrorString(e)); cudaGetLastError(); occ[C] = 0; break; }
      std::vector<u32> h(4 * occ[C] * C);
      CK(cudaMemcpy(h.data(), d_out, h.size() * 4, cudaMemcpyDeviceToHost));
      for (int b = 0; b < occ[C] * C; ++b)
        printf("MAP C=%d rep=%d block=%d smid=%u rank=%u cluster=%u nrank=%u\n", C, rep, b, h[4 * b], h[4 * b + 1], h[4 * b + 2], h[4 * b + 3]);
    }
  }
  // ---- LAT ----
  const char* lat_ops[] = {"ld", "atom", "pp"};
  for (int C : sizes) {
    if (!occ[C] || !want("LAT")) continue;
    for (u32 op = 0; op < 3; ++op)
      for (int shift = (op == 2 ? 1 : 0); shift < C; ++shift)
        for (int rep = 0; rep < 3; ++rep) {
          const u32 iters = op == 2 ? 256 : 1024;
          cudaLaunchAttribute at[1];
          cudaLaunchConfig_t cfg = make_cfg(at, C, C, 32);
          CK(cudaLaunchKernelEx(&cfg, fab_lat, d_out, iters, (u32)shift, op));
          CK(cudaDeviceSynchronize());
          auto h = fetch(8 * C);
          for (int b = 0; b < C; ++b) {
            if (op == 2 && h[8 * b + 2] != 0) continue;
            printf("LAT op=%s C=%d shift=%d rep=%d rank=%llu dst=%llu smid=%llu dst_smid=%llu cycles_per_iter=%.2f\n", lat_ops[op], C, shift, rep,
                   h[8 * b + 2], h[8 * b + 3], h[8 * b + 1], h[8 * (b - h[8 * b + 2] + h[8 * b + 3]) + 1],
                   (double)h[8 * b] / iters);
          }
        }
  }
  // ---- BW ----
  const char* bw_ops[] = {"remote_load", "remote_store", "local_load"};
  for (int C : sizes) {
    if (!occ[C] || !want("BW")) continue;
    for (int block : {64, 128, 256, 512, 1024})
      for (u32 op = 0; op < 3; ++op) {
        if (block < 512 && (op == 2 || C != 2)) continue;  // the thread-count scan: cluster 2 only
        std::vector<int> acts;
        for (int a = 1; a <= C; a *= 2) acts.push_back(a);
        for (int a : acts)
          for (int shift : (C == 2 ? std::vector<int>{1} : std::vector<int>{1, C / 2})) {
            for (int full = 0; full < 2; ++full) {
              if (full && a != C && !(shift == C / 2 && a == C / 2)) continue;
              const int grid = full ? occ[C] * C : C;
              const u32 iters = 64;
              std::vector<double> bpc;
              float ms_total = 0;
              for (int rep = 0; rep < 3; ++rep) {
                cudaLaunchAttribute at[1];
                cudaLaunchConfig_t cfg = make_cfg(at, C, grid, block);
                cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
                cudaEventRecord(e0);
                CK(cudaLaunchKernelEx(&cfg, fab_bw, d_out, d_sink, iters, op, (u32)a, (u32)shift));
                cudaEventRecord(e1);
                CK(cudaDeviceSynchronize());
                float ms; cudaEventElapsedTime(&ms, e0, e1); ms_total += ms;
                auto h = fetch(4 * grid);
                for (int b = 0; b < grid; ++b)
                  if (h[4 * b + 3]) bpc.push_back((double)block * 64 * iters / h[4 * b]);
              }
              std::sort(bpc.begin(), bpc.end());
              printf("BW op=%s C=%d block=%d active=%d shift=%d grid=%d bytes_per_cycle_per_sm_median=%.3f min=%.3f max=%.3f active_ctas=%zu event_ms=%.4f\n",
                     bw_ops[op], C, block, a, shift, grid, med(bpc), bpc.front(), bpc.back(), bpc.size() / 3, ms_total / 3);
            }
          }
      }
  }
  // ---- MC ----
  const u64 BIG = 4ull << 30;
  char* d_src;
  CK(cudaMalloc(&d_src, BIG));
  CK(cudaMemset(d_src, 1, BIG));
  for (int src_l2 = 1; src_l2 >= 0 && want("MC"); --src_l2) {
    const u64 region = src_l2 ? (8ull << 20) : BIG;
    struct V { int F, mc, C; };
    const V vs[] = {{1, 0, 4}, {1, 1, 4}, {2, 1, 4}, {4, 1, 4}, {8, 1, 8}, {16, 1, 16}};
    struct R { u32 stages, chunk, relaxed; };
    const R rs[] = {{4, 16384, 0}, {8, 16384, 0}, {4, 32768, 0}, {4, 16384, 1}, {8, 16384, 1}, {4, 32768, 1}, {2, 65536, 1}};
    for (const V& v : vs)
     for (const R& rr : rs) {
      const u32 stages = rr.stages, chunk = rr.chunk, nchunks = (8u << 20) / chunk;
      if (!occ[v.C]) continue;
      for (int full = 0; full < 2; ++full) {
        const int grid = full ? max_clusters(fab_mc, v.C, 64) * v.C : v.C;
        if (!grid) continue;
        std::vector<double> bpc;
        float ms_total = 0;
        for (int rep = 0; rep < 3; ++rep) {
          if (!src_l2) CK(cudaMemset(d_src, rep, 1ull << 30));  // flush the L2 of the previous repetition
          cudaLaunchAttribute at[1];
          cudaLaunchConfig_t cfg = make_cfg(at, v.C, grid, 64);
          cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
          cudaEventRecord(e0);
          CK(cudaLaunchKernelEx(&cfg, fab_mc, (const char*)d_src + (src_l2 ? 0 : (1ull << 30)), region - (src_l2 ? 0 : (1ull << 30)), d_out, nchunks, chunk, (u32)v.F, (u32)v.mc, stages, rr.relaxed));
          cudaEventRecord(e1);
          CK(cudaDeviceSynchronize());
          float ms; cudaEventElapsedTime(&ms, e0, e1); ms_total += ms;
          auto h = fetch(4 * grid);
          for (int b = 0; b < grid; ++b) bpc.push_back((double)chunk * nchunks / h[4 * b]);
        }
        std::sort(bpc.begin(), bpc.end());
        const double ms = ms_total / 3;
        const double delivered = (double)grid * chunk * nchunks, read = delivered / v.F;
        printf("MC src=%s F=%d multicast=%d stages=%u chunk=%u relaxed=%u C=%d grid=%d delivered_bytes_per_cycle_per_sm_median=%.3f min=%.3f max=%.3f event_ms=%.4f delivered_GBps=%.1f read_GBps=%.1f\n",
               src_l2 ? "l2" : "dram", v.F, v.mc, stages, chunk, rr.relaxed, v.C, grid, med(bpc), bpc.front(), bpc.back(), ms, delivered / ms / 1e6, read / ms / 1e6);
      }
    }
  }
  CK(cudaGetLastError());
  printf("DONE\n");
  return 0;
}
