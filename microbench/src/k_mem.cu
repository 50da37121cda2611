// Memory-hierarchy microbenchmarks: pointer chase (L1 / L2 near-far / DRAM), shared-memory latency, bank
// conflicts and bandwidth, HBM / L2 streaming bandwidth, SM clock probe.
#include "common.cuh"

// Pointer chase over u32 element indices. If build_stride != 0 the block first writes the chain
// arr[i] = (i + build_stride) % n itself (so a launch record needs no host-side init); otherwise the host
// wrote it (e.g. a random cyclic permutation). Thread 0 then chases warm_steps untimed steps from `start`
// (cache warm-up) and `steps` timed ones. mode bit0: 1 = ld.global.cg (L2, bypass L1), 0 = plain ld.global (L1-cached);
// mode bit1: 1 = record each load's latency (clock, load, dependent shared store, clock).
// out[0] = total timed cycles, out[1] = steps, out[2] = SM id, out[3] = final index, out[4..4+steps) = per-step
// latencies when recorded (steps <= 4096).
extern "C" __global__ void pchase(u32* arr, u64* out, u32 n, u32 build_stride, u32 start, u32 warm_steps,
                                  u32 steps, u32 mode) {
  __shared__ u32 lat[4096];
  __shared__ u32 sidx[4096];
  if (build_stride) {
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) arr[i] = (i + build_stride) % n;
    __threadfence();
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  u32 j = start;
  const bool cg = mode & 1, rec = mode & 2;
  for (u32 i = 0; i < warm_steps; ++i) {
    if (cg) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
    else asm volatile("ld.global.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
  }
  u64 T0 = clk();
  if (rec) {
    for (u32 i = 0; i < steps; ++i) {
      u64 t0 = clk();
      if (cg) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
      else asm volatile("ld.global.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
      sidx[i & 4095] = j;
      u64 t1 = clk();
      lat[i & 4095] = (u32)(t1 - t0);
    }
  } else {
    if (cg) {
      for (u32 i = 0; i < steps; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
    } else {
      for (u32 i = 0; i < steps; ++i) asm volatile("ld.global.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
    }
  }
  u64 T1 = clk();
  out[0] = T1 - T0; out[1] = steps; out[2] = smid(); out[3] = j + (rec ? sidx[0] * 0u : 0u);
  if (rec) for (u32 i = 0; i < steps && i < 4096; ++i) out[4 + i] = lat[i];
}

// Shared-memory latency / bank conflicts: each lane chases a zero-filled word at (lane*stride_words) % 8192
// (n-way conflict = gcd(stride, 32); stride 0 = broadcast). ilp=1: one dependent chain (latency per load);
// kernel smem_bank_tput: 8 independent chains per lane (issue-limited throughput).
// out[2*warp] = cycles for iters*8 loads (per chain), out[2*warp+1] = SM id.
extern "C" __global__ void smem_bank_lat(u64* out, u32 stride_words, u32 iters) {
  __shared__ __align__(16) u32 s[8192];
  for (u32 i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = 0;
  __syncthreads();
  u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u32 a = smem_addr(s) + ((lane * stride_words) % 8192) * 4;
  u64 t0 = clk();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      u32 v;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
      a += v;
    }
  }
  u64 t1 = clk();
  if (lane == 0) { out[2 * warp] = t1 - t0; out[2 * warp + 1] = smid(); }
  if (a == 0xffffffffu) out[0] = 0;  // keep the chain live
}

extern "C" __global__ void smem_bank_tput(u64* out, u32 stride_words, u32 iters) {
  __shared__ __align__(16) u32 s[8192];
  for (u32 i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = 0;
  __syncthreads();
  u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u32 a[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) a[c] = smem_addr(s) + (((lane * stride_words) + c * 1024) % 8192) * 4;
  u64 t0 = clk();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      u32 v;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a[c]) : "memory");
      a[c] += v;
    }
  }
  u64 t1 = clk();
  if (lane == 0) { out[2 * warp] = t1 - t0; out[2 * warp + 1] = smid(); }
  u32 x = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) x ^= a[c];
  if (x == 0xffffffffu) out[0] = 0;
}

// Shared-memory bandwidth: every thread 4 independent conflict-free 16-byte loads per iteration from a 48 KB
// buffer (ld.volatile so ptxas keeps every load). out[2*warp] = clock at start, out[2*warp+1] = clock at end
// (one SM: the host takes max end - min start); bytes = blockDim*64*iters.
extern "C" __global__ void smem_bw(u64* out, u32* sink, u32 iters) {
  __shared__ __align__(16) u32 s[12288];
  for (u32 i = threadIdx.x; i < 12288; i += blockDim.x) s[i] = i * 2654435761u;
  __syncthreads();
  u32 base = smem_addr(s);
  u32 x0 = 0, x1 = 0, x2 = 0, x3 = 0;
  u32 off = (threadIdx.x * 16) % 49152;
  u64 t0 = clk();
  for (u32 i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      u32 a, b, c, d;
      u32 ad = base + ((off + u * 16384 + (i & 1) * 8192) % 49152);
      asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(ad) : "memory");
      x0 ^= a; x1 ^= b; x2 ^= c; x3 ^= d;
    }
  }
  u64 t1 = clk();
  u32 warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) { out[2 * warp] = t0; out[2 * warp + 1] = t1; }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}

// Streaming read: grid-stride 16-byte loads (4 in flight per thread), `reps` passes over n_vec uint4.
// cg=1 uses ld.global.cg (L2; for L2 bandwidth over an L2-resident region), else ld.global.nc-free default.
extern "C" __global__ void stream_read(const uint4* src, u64 n_vec, u32* sink, u32 reps, u32 cg) {
  u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x, nth = (u64)gridDim.x * blockDim.x;
  u32 x = 0;
  for (u32 r = 0; r < reps; ++r) {
    u64 i = tid;
    for (; i + 3 * nth < n_vec; i += 4 * nth) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const uint4* p = src + i + u * nth;
        if (cg) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p));
        else asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p));
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n_vec; i += nth) { uint4 v = src[i]; x ^= v.x ^ v.y ^ v.z ^ v.w; }
  }
  sink[tid] = x;
}

// Streaming copy (device to device): grid-stride 16-byte loads and stores.
extern "C" __global__ void stream_copy(const uint4* src, uint4* dst, u64 n_vec) {
  u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x, nth = (u64)gridDim.x * blockDim.x;
  u64 i = tid;
  for (; i + 3 * nth < n_vec; i += 4 * nth) {
    uint4 v0 = src[i], v1 = src[i + nth], v2 = src[i + 2 * nth], v3 = src[i + 3 * nth];
    dst[i] = v0; dst[i + nth] = v1; dst[i + 2 * nth] = v2; dst[i + 3 * nth] = v3;
  }
  for (; i < n_vec; i += nth) dst[i] = src[i];
}

// SM clock probe: thread 0 of each block spins `spin` cycles; out[3*b] = cycles, [3*b+1] = globaltimer ns,
// [3*b+2] = SM id. MHz = cycles / ns * 1000.
extern "C" __global__ void clock_probe(u64* out, u32 spin) {
  if (threadIdx.x) return;
  u64 g0 = gtimer(), t0 = clk(), t1 = t0;
  while (t1 - t0 < spin) t1 = clk();
  u64 g1 = gtimer();
  out[3 * blockIdx.x] = t1 - t0; out[3 * blockIdx.x + 1] = g1 - g0; out[3 * blockIdx.x + 2] = smid();
}
