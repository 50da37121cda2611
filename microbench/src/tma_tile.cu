// TMA tensor-tile loads (cp.async.bulk.tensor.2d, fp16, 128-B swizzle: the boxes Triton's and CUTLASS's GEMMs
// load) against plain bulk copies of the same bytes (run_tma_tile.sh; parse_tma_tile.py). Written 2026-12-06:
// every tma.* parameter of the model comes from plain cp.async.bulk copies (k_tma.cu), and the TMA GEMMs that
// wait on their tiles (one CTA per SM) run ~17 % short; this measures the tiles themselves.
//  TILE  G CTAs (one per SM: 200 KiB of dynamic shared memory), thread 0 of each issues N boxes of 64 fp16 columns
//        (128 B) x R rows at once, all completing on one mbarrier; clock before the first issue, after the last,
//        and when try_wait sees the phase: issue span and completion. fresh = 0: the same boxes every rep (L2-hot
//        after rep 0); fresh = 1: boxes never read before (rep r, tile i of CTA group g = blockIdx / share: tile
//        index t = (g * reps + r) * N + i, rows (t % row_blocks) * R, columns (t / row_blocks) * 64). share CTAs
//        read the same boxes (a GEMM's A tile is read by the CTAs of its row). The row pitch is the tensor's
//        K * 2 bytes: K = 4096 (8 KiB, a GEMM operand), K = 64 (128 B: the box is 16 KiB of contiguous memory).
//  BULK  the same with N plain cp.async.bulk copies of R * 128 contiguous bytes each (tile t at t * R * 128).
// out[(blockIdx.x * reps + r) * 3 + {0, 1, 2}] = issue span, completion, SM id. Printed per case (TILE / BULK lines):
// the median over CTAs and reps (reps >= 1 when hot).
#include <cuda.h>
#include "common.cuh"

__device__ __forceinline__ void tile_g2s(u32 dst, const CUtensorMap* tm, int col, int row, u32 bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(dst), "l"((u64)tm), "r"(col), "r"(row), "r"(bar) : "memory");
}

__device__ __forceinline__ u32 tile_index(u32 fresh, u32 share, u32 reps, u32 n, u32 r, u32 i) {
  u32 g = blockIdx.x / share;
  return fresh ? (g * reps + r) * n + i : g * n + i;
}

extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap tm, u64* out, u32 n, u32 rows, u32 reps,
                                    u32 fresh, u32 share, u32 row_blocks) {
  u32 bar = smem_addr(dyn_smem);
  u32 dst0 = bar + 1024;                       // 128-B swizzled boxes land 1 KiB-aligned
  if (threadIdx.x == 0) { mbar_init(bar, 1); mbar_fence_init(); }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 parity = 0, box = rows * 128;
  for (u32 r = 0; r < reps; ++r) {
    mbar_arrive_expect_tx(bar, n * box);
    u64 t0 = clk();
    for (u32 i = 0; i < n; ++i) {
      u32 t = tile_index(fresh, share, reps, n, r, i);
      tile_g2s(dst0 + i * box, &tm, (int)((t / row_blocks) * 64), (int)((t % row_blocks) * rows), bar);
    }
    u64 t1 = clk();
    mbar_wait(bar, parity);
    u64 t2 = clk();
    parity ^= 1;
    u64* o = out + ((u64)blockIdx.x * reps + r) * 3;
    o[0] = t1 - t0;
    o[1] = t2 - t0;
    o[2] = smid();
  }
}

extern "C" __global__ void tma_bulk(const char* src, u64* out, u32 n, u32 rows, u32 reps, u32 fresh, u32 share) {
  u32 bar = smem_addr(dyn_smem);
  u32 dst0 = bar + 1024;
  if (threadIdx.x == 0) { mbar_init(bar, 1); mbar_fence_init(); }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 parity = 0, box = rows * 128;
  for (u32 r = 0; r < reps; ++r) {
    mbar_arrive_expect_tx(bar, n * box);
    u64 t0 = clk();
    for (u32 i = 0; i < n; ++i)
      bulk_g2s(dst0 + i * box, src + (u64)tile_index(fresh, share, reps, n, r, i) * box, box, bar);
    u64 t1 = clk();
    mbar_wait(bar, parity);
    u64 t2 = clk();
    parity ^= 1;
    u64* o = out + ((u64)blockIdx.x * reps + r) * 3;
    o[0] = t1 - t0;
    o[1] = t2 - t0;
    o[2] = smid();
  }
}

#ifndef TMA_TILE_NO_HOST
#include <cstdio>
#include <cudaTypedefs.h>
#include "host.cuh"

static PFN_cuTensorMapEncodeTiled_v12000 encode;
static const int SMEM = 200 * 1024;
static const size_t BUF = (size_t)1 << 30;     // 1 GiB of fp16: fresh boxes never repeat within a case

// median over CTAs and reps >= skip of column col
static double med(const u64* d, int ctas, int reps, int col, int skip) {
  CK(cudaDeviceSynchronize());
  std::vector<u64> h((size_t)ctas * reps * 3);
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
  std::vector<double> v;
  for (int c = 0; c < ctas; ++c)
    for (int r = skip; r < reps; ++r) v.push_back((double)h[((size_t)c * reps + r) * 3 + col]);
  return median_of(v);
}

static void run(const char* kind, char* buf, u64* out, int K, int n, int rows, int reps, int fresh, int g, int share) {
  size_t total_rows = BUF / 2 / K;
  u32 row_blocks = (u32)(total_rows / rows);
  CK(cudaMemset(buf, 1, BUF));                 // touches every page and leaves only the buffer's tail in L2
  if (kind[0] == 't') {
    CUtensorMap tm;
    cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)total_rows};
    cuuint64_t strides[1] = {(cuuint64_t)K * 2};
    cuuint32_t box[2] = {64, (cuuint32_t)rows}, es[2] = {1, 1};
    CUresult e = encode(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (e != CUDA_SUCCESS) { printf("encode failed %d\n", (int)e); exit(1); }
    tma_tile<<<g, 128, SMEM>>>(tm, out, n, rows, reps, fresh, share, row_blocks);
  } else {
    tma_bulk<<<g, 128, SMEM>>>(buf, out, n, rows, reps, fresh, share);
  }
  CK(cudaGetLastError());
  int skip = fresh ? 0 : 1;
  printf("%s K=%d n=%d rows=%d fresh=%d ctas=%d share=%d reps=%d issue_span=%.1f completion=%.1f\n",
         kind[0] == 't' ? "TILE" : "BULK", K, n, rows, fresh, g, share, reps, med(out, g, reps, 0, skip),
         med(out, g, reps, 1, skip));
  fflush(stdout);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void**)&encode, cudaEnableDefault, &q));
  CK(cudaFuncSetAttribute(tma_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CK(cudaFuncSetAttribute(tma_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  char* buf;
  u64* out;
  CK(cudaMalloc(&buf, BUF));
  CK(cudaMalloc(&out, (size_t)132 * 64 * 3 * sizeof(u64)));
  const int reps = 16;
  // one SM: size staircase, hot and fresh, tile (pitch 8 KiB and 128 B) and bulk
  for (int fresh = 0; fresh < 2; ++fresh)
    for (int rows : {8, 32, 64, 128, 256})
      for (int n : {1, 2, 4}) {
        if (n * rows * 128 > 128 * 1024) continue;
        run("tile", buf, out, 4096, n, rows, reps, fresh, 1, 1);
        run("tile", buf, out, 64, n, rows, reps, fresh, 1, 1);
        run("bulk", buf, out, 4096, n, rows, reps, fresh, 1, 1);
      }
  // a GEMM's stage: A + B boxes of 128 rows, 64 / 132 CTAs, each box read by share CTAs, fresh every rep
  for (int g : {64, 132})
    for (int share : {1, 8})
      for (int n : {2, 4}) {
        run("tile", buf, out, 4096, n, 128, reps, 1, g, share);
        run("bulk", buf, out, 4096, n, 128, reps, 1, g, share);
      }
  // the same, L2-hot
  for (int g : {64, 132}) run("tile", buf, out, 4096, 2, 128, reps, 0, g, 1);
  printf("DONE\n");
  return 0;
}
#endif
