// Bulk (TMA) stores shared -> global on an H200: the rate at which one SM's cp.async.bulk stores leave it, against
// the copy size and the number of SMs (issue #15: the TMA GEMMs' epilogues store their C tiles this way, and
// sm_store_rate.cu measured 32 B/cycle per SM for st.global).
// A self-contained program; one text line per result (parsed by microbench/parse_bulk_store_rate.py).
//   BSR grid=<G> bytes=<B> copies=<N> wait=<read|all>: G CTAs (one per SM: 150 KiB dynamic shared memory), thread 0
//        issues N cp.async.bulk.global.shared::cta.bulk_group copies of B bytes from shared memory to its CTA's own
//        region (N x B bytes, L2-resident after the warm-up launch), commits them as one group and waits for it:
//        wait=read (cp.async.bulk.wait_group.read 0: the shared-memory source has been read) or wait=all
//        (cp.async.bulk.wait_group 0: the writes are done). cycles = CTA-median t1 - t0; bytes_per_cycle =
//        N x B / cycles.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a bulk_store_rate.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)
#define REGION ((size_t)4 << 20)   // per CTA

__global__ void __launch_bounds__(32, 1) k_bsr(char* dst, u64* out, u32 bytes, u32 copies, u32 wait_all) {
  const u32 base = (smem_addr(dyn_smem) + 1023) & ~1023u;
  for (u32 i = threadIdx.x; i < 128 * 1024 / 4; i += blockDim.x) ((u32*)(dyn_smem + 1024))[i] = i;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncwarp();
  if (threadIdx.x != 0) return;
  char* d = dst + (size_t)blockIdx.x * REGION;
  u64 t0 = clk();
  for (u32 i = 0; i < copies; ++i) {
    const u32 src = base + (i * bytes) % (128 * 1024);   // bytes divides 128 KiB: the source stays inside
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(d + ((size_t)i * bytes) % REGION), "r"(src), "r"(bytes) : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  if (wait_all) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  else asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  u64 t1 = clk();
  out[2 * blockIdx.x] = t1 - t0;
  out[2 * blockIdx.x + 1] = smid();
}

static u64* d_out;
static char* d_dst;

static void run(int grid, u32 bytes, u32 copies, u32 wait_all) {
  for (int rep = 0; rep < 3; ++rep) {   // rep 0 warms the region into L2
    k_bsr<<<grid, 32, DYN>>>(d_dst, d_out, bytes, copies, wait_all);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (rep == 0) continue;
    std::vector<u64> h(2 * grid);
    CK(cudaMemcpy(h.data(), d_out, 16 * grid, cudaMemcpyDeviceToHost));
    std::vector<double> c;
    for (int b = 0; b < grid; ++b) c.push_back((double)h[2 * b]);
    std::sort(c.begin(), c.end());
    const double med = c[c.size() / 2];
    printf("BSR grid=%d bytes=%u copies=%u wait=%s rep=%d cycles=%.0f bytes_per_cycle=%.2f min_cycles=%.0f "
           "max_cycles=%.0f\n", grid, bytes, copies, wait_all ? "all" : "read", rep, med, (double)bytes * copies / med,
           c.front(), c.back());
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_bsr, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaMalloc(&d_out, 16 * 1024));
  CK(cudaMalloc(&d_dst, (size_t)S * REGION));
  CK(cudaMemset(d_dst, 0, (size_t)S * REGION));
  for (int g : {1, 33, S})
    for (u32 b : {1024u, 4096u, 16384u, 65536u})
      for (u32 w : {0u, 1u}) {
        run(g, b, 1, w);                       // one copy: its latency
        run(g, b, (1u << 20) / b, w);          // 1 MiB: the rate
      }
  printf("DONE\n");
  return 0;
}
