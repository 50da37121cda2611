// Distributed shared memory (thread-block clusters). Launch with a cluster of 2 (or more) CTAs.
// dsm_bw: every thread of every CTA moves 16-byte words to/from the shared memory of CTA (rank ^ 1)
// (ld/st.volatile so ptxas keeps every access) op 0 = remote load, 1 = remote store, 2 = local load (baseline). out[2*blockIdx.x] = cycles,
// out[2*blockIdx.x+1] = SM id. Bytes per CTA = blockDim * 16 * 4 * iters.
#include "common.cuh"

__device__ __forceinline__ u32 cluster_rank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ u32 mapa(u32 a, u32 rank) {
  u32 r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)); return r;
}

extern "C" __global__ void dsm_bw(u64* out, u32* sink, u32 iters, u32 op) {
  __shared__ __align__(16) u32 s[8192];  // 32 KB
  for (u32 i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = i * 2654435761u;
  cluster_sync();
  u32 peer = cluster_rank() ^ 1;
  u32 local = smem_addr(s);
  u32 base = (op == 2) ? local : mapa(local, peer);
  u32 off = (threadIdx.x * 16) % 32768;
  u32 x0 = 0, x1 = 0, x2 = 0, x3 = 0;
  u64 t0 = clk();
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
  __syncthreads();
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = smid(); }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3;
  cluster_sync();  // keep our shared memory alive until the peer is done
}

// DSM latency: thread 0 of rank 0 chases a zero-filled word in the peer's (remote=1) or its own (remote=0)
// shared memory: iters dependent ld.shared::cluster. out[0] = cycles, out[1] = iters, out[2] = SM id.
extern "C" __global__ void dsm_lat(u64* out, u32 iters, u32 remote) {
  __shared__ __align__(16) u32 s[1024];
  for (u32 i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = 0;
  cluster_sync();
  if (cluster_rank() == 0 && threadIdx.x == 0) {
    u32 a = remote ? mapa(smem_addr(s), 1) : mapa(smem_addr(s), 0);
    u64 t0 = clk();
    for (u32 i = 0; i < iters; ++i) {
      u32 v;
      asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
      a += v;
    }
    u64 t1 = clk();
    out[0] = t1 - t0; out[1] = iters; out[2] = smid(); out[3] = a;
  }
  cluster_sync();
}
