// DRAM latency under load. One launch: block 0 (one thread) chases a random cyclic permutation of 128-B lines
// over a region far larger than L2 (every step a DRAM miss) and records the mean cycles per step; blocks 1..B
// (256 threads each) stream 16-B ld.global.cg over a separate buffer until block 0 is done (a flag), counting the
// bytes they read and their first/last %globaltimer. Background bandwidth = bytes / (last - first).
// out[0] = chase cycles, out[1] = steps, out[2] = bytes streamed (sum over blocks, atomics), out[3] = min start ns,
// out[4] = max end ns.
#include "common.cuh"

extern "C" __global__ void loaded_latency(const u32* chain, u32 start, u32 steps, const uint4* bg, unsigned long long bg_n,
                                          u64* out, volatile u32* flag) {
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    u32 j = start;
    // warm-up steps (the background is starting)
    for (u32 i = 0; i < 64; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j) : "memory");
    u64 t0 = clk();
    for (u32 i = 0; i < steps; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j) : "memory");
    u64 t1 = clk();
    out[0] = t1 - t0; out[1] = steps; out[5] = j;
    __threadfence();
    *flag = 1;
    return;
  }
  u64 g0 = gtimer();
  unsigned long long nthreads = (unsigned long long)(gridDim.x - 1) * blockDim.x;
  unsigned long long i = (unsigned long long)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  u32 acc = 0; unsigned long long bytes = 0;
  while (true) {
    uint4 v0, v1, v2, v3;
    unsigned long long k = i % bg_n;
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
  atomicAdd((unsigned long long*)&out[2], bytes);
  atomicMin((unsigned long long*)&out[3], g0);
  atomicMax((unsigned long long*)&out[4], g1);
}
