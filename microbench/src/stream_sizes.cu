// Fixed and per-byte cost of short streaming launches (issue 15: launches of 7k-80k cycles run 19-23 % short in
// the model). One-element-per-thread kernels in the style Triton writes elementwise code (one CTA per block of
// 256 threads x 16 B, no grid-stride loop), at sizes 1-512 MiB per operand, under Nsight Compute with a cold L2
// (run_stream_sizes.sh: --cache-control all --clock-control none, gpc__cycles_elapsed.max as in the records):
//   ew_read   one 16-B ld.global per thread (a sink store that never fires keeps the loads)
//   ew_copy   dst[i] = src[i]
//   ew_triad  c[i] = a[i] * b[i] (fp16x8, two reads and one write per thread, the SwiGLU traffic pattern)
//   page_touch one 16-B load per thread at i * stride (4096 threads; strides 128 B, 64 KiB, 2 MiB): the cost of
//              first-touching many pages with few bytes
// Without ncu (argument "chase") it runs dependent pointer chases of one thread, lines `stride` apart, 512 loads:
// cold (after a 1 GiB write evicts the L2) and warm (the same chain again), printing cycles per load.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "common.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

extern "C" __global__ void ew_read(const uint4* __restrict__ src, u32* sink, u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src + i));
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x9e3779b9u) sink[0] = (u32)i;
}

extern "C" __global__ void ew_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

extern "C" __global__ void ew_triad(const uint4* __restrict__ a, const uint4* __restrict__ b, uint4* __restrict__ c,
                                    u64 n) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint4 x = a[i], y = b[i], z;
  const __half2* hx = reinterpret_cast<const __half2*>(&x);
  const __half2* hy = reinterpret_cast<const __half2*>(&y);
  __half2* hz = reinterpret_cast<__half2*>(&z);
#pragma unroll
  for (int k = 0; k < 4; ++k) hz[k] = __hmul2(hx[k], hy[k]);
  c[i] = z;
}

extern "C" __global__ void page_touch(const char* __restrict__ base, u64 stride, u32* sink, u32 n) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(base + (u64)i * stride));
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x9e3779b9u) sink[0] = i;
}

extern "C" __global__ void chase(const u32* __restrict__ arr, u32 start, u32 steps, u64* out) {
  u32 j = start;
  u64 t0 = clk();
  for (u32 s = 0; s < steps; ++s) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(arr + j) : "memory");
  u64 t1 = clk();
  out[0] = t1 - t0;
  out[1] = j;
}

static void streams() {
  const u64 MiB = 1ull << 20, maxb = 512 * MiB;
  uint4 *a, *b, *c;
  u32* sink;
  CK(cudaMalloc(&a, maxb)); CK(cudaMalloc(&b, maxb)); CK(cudaMalloc(&c, maxb)); CK(cudaMalloc(&sink, 64));
  CK(cudaMemset(a, 0x3c, maxb)); CK(cudaMemset(b, 0x3c, maxb)); CK(cudaMemset(c, 0, maxb));
  for (u64 mib = 1; mib <= 512; mib *= 2) {
    u64 n = mib * MiB / 16;
    unsigned grid = (unsigned)((n + 255) / 256);
    printf("size_mib %llu n_vec %llu grid %u\n", (unsigned long long)mib, (unsigned long long)n, grid);
    ew_read<<<grid, 256>>>(a, sink, n);
    ew_copy<<<grid, 256>>>(a, c, n);
    ew_triad<<<grid, 256>>>(a, b, c, n);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(c));
  char* big;
  const u64 span = 8192 * MiB;
  CK(cudaMalloc(&big, span));
  CK(cudaMemset(big, 1, span));
  const u64 strides[3] = {128, 64 * 1024, 2 * MiB};
  for (int s = 0; s < 3; ++s) {
    printf("page_touch stride %llu n 4096\n", (unsigned long long)strides[s]);
    page_touch<<<16, 256>>>(big, strides[s], sink, 4096);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaFree(big)); CK(cudaFree(sink));
}

static void chases() {
  const u64 MiB = 1ull << 20;
  const u64 region = 1024 * MiB;                        // 1 GiB: every chain fits for strides up to 2 MiB
  u32 *arr, *flush;
  u64* out;
  CK(cudaMalloc(&arr, region)); CK(cudaMalloc(&flush, region)); CK(cudaMalloc(&out, 16));
  const u64 strides[3] = {64 * 1024, 2 * MiB, 128};
  const u32 steps = 512;
  for (int s = 0; s < 3; ++s) {
    const u64 sw = strides[s] / 4;                        // stride in words
    std::vector<u32> h(region / 4, 0);
    for (u32 k = 0; k < steps; ++k) h[k * sw] = (u32)(((k + 1) % steps) * sw);
    CK(cudaMemcpy(arr, h.data(), region, cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 3; ++rep) {
      CK(cudaMemset(flush, rep, region));                 // evict the L2 (60 MiB) with a 1 GiB write
      CK(cudaDeviceSynchronize());
      u64 r[2];
      for (int pass = 0; pass < 2; ++pass) {             // pass 0 cold (DRAM), pass 1 warm (L2 hit)
        chase<<<1, 1>>>(arr, 0, steps, out);
        CK(cudaMemcpy(r, out, 16, cudaMemcpyDeviceToHost));
        printf("chase stride %llu rep %d pass %s cycles %llu per_load %.2f\n", (unsigned long long)strides[s], rep,
               pass ? "warm" : "cold", (unsigned long long)r[0], (double)r[0] / steps);
      }
    }
  }
  CK(cudaFree(arr)); CK(cudaFree(flush)); CK(cudaFree(out));
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "chase")) chases();
  else streams();
  return 0;
}
