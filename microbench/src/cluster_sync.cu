// Cluster-scope synchronisation on an H200: what `.release.cluster` / fence / barrier.cluster cost.
// A self-contained program (its own main); one text line per result, parsed by microbench/parse_cluster_sync.py.
// Why: a cluster GEMM (src/cluster_gemm.cu) releases each stage with two `mbarrier.arrive.release.cluster`
// (local + remote); ptxas puts MEMBAR.ALL.CTA; MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR before each SYNCS.ARRIVE, and
// Nsight Compute charges that kernel ~2.3 membar stall cycles per issued instruction.
// Sections:
//   FENCE op=<op> cond=<cond> grid=<g>: thread 0 of warp 0 of every CTA (clusters of 2, 1 CTA per SM) times one
//        instruction between two %clock64 reads, `iters` times, mean over iterations after 8 warm-up ones:
//        op  none | arrive_cta (mbarrier.arrive, default .release.cta, local) | arrive_rel_cl_local
//            (mbarrier.arrive.release.cluster.shared::cta) | arrive_rel_cl_remote (.release.cluster.shared::cluster
//            on the peer CTA's mbarrier, mapa) | arrive_rlx_cl_remote (.relaxed.cluster, peer) | fence_cta
//            (fence.acq_rel.cta) | fence_cluster (fence.acq_rel.cluster) | fence_gpu (fence.acq_rel.gpu) |
//            fence_proxy_async (fence.proxy.async.shared::cta)
//        cond idle: nothing outstanding | own_bulk: the same thread issued a 16 KiB cp.async.bulk global->shared
//            (L2-resident source) just before the first clock read; `after` = cycles from the second clock read
//            until that copy's mbarrier phase is seen | own_store: one st.global.u32 just before |
//            peer_stream: warp 1 of the CTA keeps a 4-stage ring of 16 KiB bulk copies streaming meanwhile
//        grid 2 = one cluster (an idle GPU), grid = every co-resident cluster (all SMs do the same)
//   PING op=<rel|rlx|local> : round trip of an mbarrier ping-pong: rank 0 arrives on rank 1's mbarrier and waits
//        for its own; rank 1 waits for its own and arrives on rank 0's (remote arrive .release.cluster or
//        .relaxed.cluster; `local` = the same between warp 0 and warp 1 of one CTA, mbarrier.arrive.shared::cta).
//        One iteration = two arrive -> visible-to-try_wait one-way trips.
//   CBAR sem=<rel|rlx> C=<c> threads=<t> : barrier.cluster.arrive(.release|.relaxed).aligned +
//        barrier.cluster.wait(.acquire).aligned, back to back, cycles per iteration (rank 0, thread 0), one cluster.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a cluster_sync.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)  // one CTA per SM
#define CHUNK 16384
#define SINK_COUNT ((1u << 20) - 1)

__device__ __forceinline__ u32 crank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ u32 mapa_(u32 a, u32 rank) {
  u32 r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)); return r;
}
__device__ __forceinline__ void wait_cl(u32 bar, u32 parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WCL_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WCL_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}

template <int OP>
__device__ __forceinline__ void the_op(u32 sink, u32 rsink) {
  if (OP == 1) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sink) : "memory");
  if (OP == 2) asm volatile("mbarrier.arrive.release.cluster.shared::cta.b64 _, [%0];" ::"r"(sink) : "memory");
  if (OP == 3) asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rsink) : "memory");
  if (OP == 4) asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(rsink) : "memory");
  if (OP == 5) asm volatile("fence.acq_rel.cta;" ::: "memory");
  if (OP == 6) asm volatile("fence.acq_rel.cluster;" ::: "memory");
  if (OP == 7) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  if (OP == 8) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
static const char* op_names[] = {"none", "arrive_cta", "arrive_rel_cl_local", "arrive_rel_cl_remote",
                                 "arrive_rlx_cl_remote", "fence_cta", "fence_cluster", "fence_gpu",
                                 "fence_proxy_async"};
static const char* cond_names[] = {"idle", "own_bulk", "own_store", "peer_stream"};

// out[4*b]: mean op cycles, +1 mean `after` cycles (own_bulk), +2 smid, +3 sink
template <int OP, int COND>
__global__ void __launch_bounds__(64, 1) k_fence(const char* src, u32* gsink, u64* out, u32 iters) {
  const u32 base = (smem_addr(dyn_smem) + 1023) & ~1023u;
  const u32 bars = base + 8 * CHUNK;             // ring: 4 chunks for warp 1, 1 chunk (+4) for warp 0
  const u32 sink = bars, cbar = bars + 8, ring_full = bars + 16;  // ring_full[s] = bars + 16 + 8s
  volatile u32* stop = (volatile u32*)(dyn_smem + (bars - smem_addr(dyn_smem)) + 64);
  const u32 tid = threadIdx.x, rank = crank();
  if (tid == 0) {
    mbar_init(sink, SINK_COUNT); mbar_init(cbar, 1);
    for (int s = 0; s < 4; ++s) mbar_init(ring_full + 8 * s, 1);
    *stop = 0;
    mbar_fence_init();
  }
  csync();
  const u32 rsink = mapa_(sink, rank ^ 1);
  double sum = 0, sum_after = 0;
  if (tid == 0) {
    u32 ph = 0;
    for (u32 i = 0; i < iters + 8; ++i) {
      if (COND == 1) {
        mbar_arrive_expect_tx(cbar, CHUNK);
        bulk_g2s(base + 4 * CHUNK, src + (size_t)((blockIdx.x * 7 + i) % 512) * CHUNK, CHUNK, cbar);
      }
      if (COND == 2) gsink[blockIdx.x * 64 + (i & 63)] = i;
      u64 t1 = clk();
      the_op<OP>(sink, rsink);
      u64 t2 = clk();
      u64 t3 = t2;
      if (COND == 1) { mbar_wait(cbar, ph); ph ^= 1; t3 = clk(); }
      if (i >= 8) { sum += (double)(t2 - t1); sum_after += (double)(t3 - t2); }
    }
    *stop = 1;
    out[4 * blockIdx.x] = (u64)(sum / iters * 100.0);
    out[4 * blockIdx.x + 1] = (u64)(sum_after / iters * 100.0);
    out[4 * blockIdx.x + 2] = smid();
  } else if (tid == 32 && COND == 3) {
    u32 n = 0;
    for (; n < 4; ++n) {
      mbar_arrive_expect_tx(ring_full + 8 * n, CHUNK);
      bulk_g2s(base + n * CHUNK, src + (size_t)((blockIdx.x * 13 + n) % 512) * CHUNK, CHUNK, ring_full + 8 * n);
    }
    while (true) {
      const u32 s = n % 4;
      mbar_wait(ring_full + 8 * s, ((n / 4) - 1) & 1);
      if (*stop) break;
      mbar_arrive_expect_tx(ring_full + 8 * s, CHUNK);
      bulk_g2s(base + s * CHUNK, src + (size_t)((blockIdx.x * 13 + n) % 512) * CHUNK, CHUNK, ring_full + 8 * s);
      ++n;
    }
    // drain the 3 copies still in flight
    for (u32 j = n + 1; j < n + 4; ++j) mbar_wait(ring_full + 8 * (j % 4), ((j / 4) - 1) & 1);
  }
  __syncwarp();
  csync();
}

// PING: out[0] = cycles per round trip * 100 (rank 0), out[1] = iterations
template <int OP>  // 0 rel (remote .release.cluster), 1 rlx (remote .relaxed.cluster), 2 local (warp 0 <-> warp 1)
__global__ void __launch_bounds__(64, 1) k_ping(u64* out, u32 iters) {
  const u32 base = (smem_addr(dyn_smem) + 1023) & ~1023u;
  const u32 b0 = base, b1 = base + 8;
  const u32 tid = threadIdx.x, rank = crank();
  if (tid == 0) { mbar_init(b0, 1); mbar_init(b1, 1); mbar_fence_init(); }
  csync();
  if (OP < 2) {
    const u32 rb = mapa_(b0, rank ^ 1);
    if (tid == 0) {
      u64 t0 = 0;
      for (u32 i = 0; i < iters + 8; ++i) {
        if (i == 8) t0 = clk();
        if (rank == 0) {
          if (OP == 0) asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb) : "memory");
          else asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb) : "memory");
          wait_cl(b0, i & 1);
        } else {
          wait_cl(b0, i & 1);
          if (OP == 0) asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb) : "memory");
          else asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb) : "memory");
        }
      }
      u64 t1 = clk();
      if (rank == 0) { out[0] = (u64)((double)(t1 - t0) / iters * 100.0); out[1] = iters; }
    }
  } else if (rank == 0) {  // local: warp 0 thread 0 <-> warp 1 thread 0, barriers b0 (for warp 0) / b1 (warp 1)
    if (tid == 0) {
      u64 t0 = 0;
      for (u32 i = 0; i < iters + 8; ++i) {
        if (i == 8) t0 = clk();
        mbar_arrive(b1);
        mbar_wait(b0, i & 1);
      }
      u64 t1 = clk();
      out[0] = (u64)((double)(t1 - t0) / iters * 100.0); out[1] = iters;
    } else if (tid == 32) {
      for (u32 i = 0; i < iters + 8; ++i) { mbar_wait(b1, i & 1); mbar_arrive(b0); }
    }
  }
  __syncwarp();
  csync();
}

// CBAR: out[0] = cycles per iteration * 100 (rank 0 thread 0)
template <int SEM>  // 0 .release/.acquire, 1 .relaxed/.acquire
__global__ void k_cbar(u64* out, u32 iters) {
  u64 t0 = 0;
  for (u32 i = 0; i < iters + 8; ++i) {
    if (i == 8) t0 = clk();
    if (SEM == 0) asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    else asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
  u64 t1 = clk();
  if (threadIdx.x == 0 && crank() == 0 && blockIdx.x == 0) out[0] = (u64)((double)(t1 - t0) / iters * 100.0);
}

static cudaLaunchConfig_t make_cfg(cudaLaunchAttribute* at, int csize, int grid, int block, size_t dyn) {
  cudaLaunchConfig_t cfg = {};
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = csize; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid); cfg.blockDim = dim3(block); cfg.dynamicSmemBytes = dyn; cfg.attrs = at; cfg.numAttrs = 1;
  return cfg;
}
template <typename K>
static void prep(K k) {
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}
static u64* d_out;
static char* d_src;
static u32* d_gsink;
static int g_all = 2;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }

template <int OP, int COND>
static void run_fence(u32 iters) {
  auto k = k_fence<OP, COND>;
  prep(k);
  for (int grid : {2, g_all}) {
    for (int rep = 0; rep < 2; ++rep) {
      cudaLaunchAttribute at[1];
      cudaLaunchConfig_t cfg = make_cfg(at, 2, grid, 64, DYN);
      CK(cudaMemset(d_out, 0, 4 * 8 * grid));
      CK(cudaLaunchKernelEx(&cfg, k, (const char*)d_src, d_gsink, d_out, iters));
      CK(cudaDeviceSynchronize());
      std::vector<u64> h(4 * grid);
      CK(cudaMemcpy(h.data(), d_out, 4 * 8 * grid, cudaMemcpyDeviceToHost));
      std::vector<double> c, a;
      for (int b = 0; b < grid; ++b) { c.push_back(h[4 * b] / 100.0); a.push_back(h[4 * b + 1] / 100.0); }
      std::vector<double> cs = c; std::sort(cs.begin(), cs.end());
      printf("FENCE op=%s cond=%s grid=%d rep=%d iters=%u cycles_median=%.2f min=%.2f max=%.2f after_median=%.2f\n",
             op_names[OP], cond_names[COND], grid, rep, iters, med(c), cs.front(), cs.back(), med(a));
    }
  }
}
template <int OP>
static void run_fence_all(u32 iters) {
  run_fence<OP, 0>(iters); run_fence<OP, 1>(iters); run_fence<OP, 2>(iters); run_fence<OP, 3>(iters);
}
template <int OP>
static void run_ping(const char* name, u32 iters) {
  auto k = k_ping<OP>;
  prep(k);
  for (int rep = 0; rep < 3; ++rep) {
    cudaLaunchAttribute at[1];
    cudaLaunchConfig_t cfg = make_cfg(at, 2, 2, 64, DYN);
    CK(cudaLaunchKernelEx(&cfg, k, d_out, iters));
    CK(cudaDeviceSynchronize());
    u64 h[2];
    CK(cudaMemcpy(h, d_out, 16, cudaMemcpyDeviceToHost));
    printf("PING op=%s rep=%d iters=%u cycles_per_round_trip=%.2f\n", name, rep, iters, h[0] / 100.0);
  }
}
template <int SEM>
static void run_cbar(const char* name, u32 iters) {
  auto k = k_cbar<SEM>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (int C : {2, 4, 8})
    for (int threads : {32, 128})
      for (int rep = 0; rep < 2; ++rep) {
        cudaLaunchAttribute at[1];
        cudaLaunchConfig_t cfg = make_cfg(at, C, C, threads, 0);
        CK(cudaLaunchKernelEx(&cfg, k, d_out, iters));
        CK(cudaDeviceSynchronize());
        u64 h;
        CK(cudaMemcpy(&h, d_out, 8, cudaMemcpyDeviceToHost));
        printf("CBAR sem=%s C=%d threads=%d rep=%d iters=%u cycles_per_iter=%.2f\n", name, C, threads, rep, iters, h / 100.0);
      }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  CK(cudaMalloc(&d_out, 4 * 8 * 1024));
  CK(cudaMalloc(&d_src, 512 * CHUNK));          // 8 MiB source: L2-resident after the first touch
  CK(cudaMemset(d_src, 1, 512 * CHUNK));
  CK(cudaMalloc(&d_gsink, 64 * 4 * 1024));
  {
    auto k = k_fence<0, 0>;
    prep(k);
    cudaLaunchAttribute at[1];
    cudaLaunchConfig_t cfg = make_cfg(at, 2, 2, 64, DYN);
    int n = 0;
    CK(cudaOccupancyMaxActiveClusters(&n, k, &cfg));
    g_all = 2 * n;
    printf("OCC max_active_clusters=%d grid_all=%d\n", n, g_all);
  }
  const u32 it = 256;
  run_fence_all<0>(it); run_fence_all<1>(it); run_fence_all<2>(it); run_fence_all<3>(it); run_fence_all<4>(it);
  run_fence_all<5>(it); run_fence_all<6>(it); run_fence_all<7>(it); run_fence_all<8>(it);
  run_ping<0>("rel", 1024); run_ping<1>("rlx", 1024); run_ping<2>("local", 1024);
  run_cbar<0>("rel", 1024); run_cbar<1>("rlx", 1024);
  printf("DONE\n");
  return 0;
}
