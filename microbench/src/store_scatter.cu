// Per-SM throughput of scattered and partial-sector global stores (issue #15), written 2026-12-07: the cluster
// GEMM's epilogue (64 st.global.u32 per thread in mma-fragment order: a warp's store covers 8 rows x 16 B, i.e. 8
// lines with half a sector each) shows lg_throttle 0.97 per issue on the H200 against the model's 0.26, and the
// fp32 elementwise gallery launches a `drain` of 15-21 per issue where bf16 / fp16 ones show 0.2-0.5. sm_store_rate.cu
// measured only coalesced stores (32 B/cycle an SM): is the store path charged per byte, per 32-B sector or per
// 128-B line a warp instruction touches?
//   SCT grid=<G> warps=<W> layout=<L> width=<B>: G CTAs (one per SM: 150 KiB dynamic shared memory) of 32 W threads;
//        every warp issues `reps` rounds of 8 plain st.global (B = 4: .u32, 8: .v2.u32, 16: .v4.u32 per lane) whose
//        lane addresses follow layout L inside its CTA's own 256 KiB region (stays in L2):
//          0 coalesced: lane i at B*i (32 B lanes contiguous)
//          1 rows8: lane i at row (i>>2), byte B*(i&3) of the row; rows 4 KiB apart (the mma fragment epilogue:
//            8 lines, B=4: 16 B of one sector each)
//          2 rows32: lane i at row i (32 lines, B bytes each)
//          3 sector_half: lane i at 2*B*i (B of every 2B bytes written: B=4 spans 2 lines, B=16 is the fp32
//            elementwise pattern, 16 of every 32-B sector over 8 lines)
//          4 rows4: lane i at row (i>>3), byte B*(i&7) (4 lines, B=4: one full sector each)
//        t0 = %clock64 after a __syncthreads, t1 after the second __syncthreads (the stores' drain is not in it).
//        lines/sectors = the 128-B lines / 32-B sectors one warp instruction touches; *_per_cycle = CTA totals over
//        the G-median cycles.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a store_scatter.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define DYN (150 * 1024)
#define ROW 4096u

template <int B>
__device__ __forceinline__ void st_plain(char* p, u32 v) {
  if (B == 4) asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  if (B == 8) asm volatile("st.global.v2.u32 [%0], {%1,%1};" ::"l"(p), "r"(v) : "memory");
  if (B == 16) asm volatile("st.global.v4.u32 [%0], {%1,%1,%1,%1};" ::"l"(p), "r"(v) : "memory");
}

__host__ __device__ inline u32 lane_off(int layout, u32 lane, u32 B) {
  switch (layout) {
    case 0: return B * lane;
    case 1: return (lane >> 2) * ROW + B * (lane & 3);
    case 2: return lane * ROW;
    case 3: return 2 * B * lane;
    default: return (lane >> 3) * ROW + B * (lane & 7);
  }
}

// out[2*b]: t1 - t0 of CTA b, out[2*b+1]: its smid
template <int B>
__global__ void __launch_bounds__(1024, 1) k_sct(char* buf, u64* out, u32 reps, int layout) {
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  char* base = buf + (size_t)blockIdx.x * (256u << 10);
  const u32 mask = (256u << 10) - 1;
  const u32 lo = lane_off(layout, lane, B);
  // every warp instruction a fresh 128-B-aligned block of the region: warps and rounds step by 256 B (rows 4 KiB
  // apart keep their own lines: 16 steps of 256 B fit between two rows)
  u32 blk = warp * 8u;
  u32 acc = threadIdx.x;
  __syncthreads();
  u64 t0 = clk();
  for (u32 r = 0; r < reps; ++r) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const u32 b = blk + j;
      const u32 off = ((b & 15u) * 256u + (b >> 4) * (ROW * 32u) + lo) & mask;
      st_plain<B>(base + off, acc + j);
    }
    blk += 8u * nw;
  }
  __syncthreads();
  u64 t1 = clk();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = smid(); }
}

static u64* d_out;
static char* d_buf;

static void footprint(int layout, u32 B, int* lines, int* sectors) {
  std::vector<u32> l, s;
  for (u32 i = 0; i < 32; ++i) {
    const u32 o = lane_off(layout, i, B);
    for (u32 k = 0; k < B; k += 4) { l.push_back((o + k) >> 7); s.push_back((o + k) >> 5); }
  }
  std::sort(l.begin(), l.end()); std::sort(s.begin(), s.end());
  *lines = (int)(std::unique(l.begin(), l.end()) - l.begin());
  *sectors = (int)(std::unique(s.begin(), s.end()) - s.begin());
}

static void run(int grid, int warps, int layout, int B, u32 reps) {
  int lines, sectors;
  footprint(layout, B, &lines, &sectors);
  for (int rep = 0; rep < 3; ++rep) {
    if (B == 4) k_sct<4><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, layout);
    if (B == 8) k_sct<8><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, layout);
    if (B == 16) k_sct<16><<<grid, 32 * warps, DYN>>>(d_buf, d_out, reps, layout);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<u64> h(2 * grid);
    CK(cudaMemcpy(h.data(), d_out, 16 * grid, cudaMemcpyDeviceToHost));
    std::vector<double> c;
    for (int b = 0; b < grid; ++b) c.push_back((double)h[2 * b]);
    std::sort(c.begin(), c.end());
    const double med = c[c.size() / 2];
    const double insts = (double)reps * 8 * warps;
    printf("SCT grid=%d warps=%d layout=%d width=%d rep=%d reps=%u lines=%d sectors=%d cycles=%.0f "
           "cyc_per_inst=%.3f bytes_per_cycle=%.2f sectors_per_cycle=%.3f lines_per_cycle=%.3f max_cycles=%.0f\n",
           grid, warps, layout, B, rep, reps, lines, sectors, med, med / insts, insts * 32 * B / med,
           insts * sectors / med, insts * lines / med, c.back());
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaFuncSetAttribute(k_sct<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k_sct<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaFuncSetAttribute(k_sct<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)DYN));
  CK(cudaMalloc(&d_out, 16 * 1024));
  CK(cudaMalloc(&d_buf, (size_t)S << 18));
  CK(cudaMemset(d_buf, 0, (size_t)S << 18));
  run(1, 4, 0, 4, 32);   // warm-up
  for (int layout = 0; layout < 5; ++layout)
    for (int B : {4, 8, 16}) {
      if (B != 4 && (layout == 1 || layout == 4)) continue;   // (rows of 16 / 32 B: the 4-B cases name them)
      for (int w : {1, 4, 8}) run(1, w, layout, B, 64);
      run(S, 4, layout, B, 64);
    }
  printf("DONE\n");
  return 0;
}
