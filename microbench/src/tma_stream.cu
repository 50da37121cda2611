// Steady-state TMA streaming from an L2-resident tensor on 1-132 SMs at once (run_tma_stream.sh;
// parse_tma_stream.py). Written 2026-12-07: the TMA GEMMs that run short in the model are the ones whose L2 traffic
// is highest (gemm_fp8 / gemm_f16_M256 of the gallery, the M4096 calibration GEMMs: 4,300-5,800 lts__t_bytes per
// SM cycle, ~8.5 TB/s at most whatever the SM clock), and no microbenchmark has measured how many bytes a cycle
// the L2 delivers to TMA boxes when every SM streams at once (tma_tile.cu: one SM 100-122 B/cycle; k_tma.cu 95.5).
//  STREAM  one CTA per SM (200 KiB of dynamic shared memory); the CTAs whose %smid is in the set (smid % stride == 0
//          and smid < limit) stream nbox boxes of 64 fp16 columns x 128 rows (16 KiB, 128-B swizzle: a GEMM's
//          operand stage) through `stages` shared-memory buffers, each with its own mbarrier: thread 0 keeps
//          `stages` boxes in flight, waits for the oldest and re-issues into its buffer. Box i of a CTA is box
//          (i % region) of its group's region of `region` boxes; group = smid (distinct = 1: its own data) or
//          0 (distinct = 0: every SM reads the same boxes). The tensor's rows are 8 KiB apart (K = 4096).
// out[blockIdx.x * 5 + {0..4}] = cycles from the first issue to the last completion, globaltimer at start and end
// (ns), SM id, 1 if the CTA streamed (0: not in the set).
#include <cuda.h>
#include "common.cuh"

static const unsigned BOX_BYTES = 64 * 2 * 128;

__device__ __forceinline__ void tile_g2s(u32 dst, const CUtensorMap* tm, int col, int row, u32 bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(dst), "l"((u64)tm), "r"(col), "r"(row), "r"(bar) : "memory");
}

__device__ __forceinline__ void issue_box(const CUtensorMap* tm, u32 dst, u32 bar, u32 k) {
  mbar_arrive_expect_tx(bar, BOX_BYTES);
  tile_g2s(dst, tm, (int)((k % 64) * 64), (int)((k / 64) * 128), bar);
}

extern "C" __global__ void tma_stream(const __grid_constant__ CUtensorMap tm, u64* out, u32 nbox, u32 stages,
                                      u32 region, u32 distinct, u32 stride, u32 limit) {
  u32 sm = smid();
  u64* o = out + (u64)blockIdx.x * 5;
  if (sm % stride != 0 || sm >= limit) {
    if (threadIdx.x == 0) { o[0] = 0; o[1] = 0; o[2] = 0; o[3] = sm; o[4] = 0; }
    return;
  }
  u32 bars = smem_addr(dyn_smem);
  u32 dst0 = bars + 1024;                      // 128-B swizzled boxes land 1 KiB-aligned
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
    mbar_fence_init();
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 base = (distinct ? sm : 0) * region;
  u64 g0 = gtimer();
  u64 t0 = clk();
  for (u32 s = 0; s < stages && s < nbox; ++s) issue_box(&tm, dst0 + s * BOX_BYTES, bars + 8 * s, base + s % region);
  for (u32 i = 0; i < nbox; ++i) {
    u32 s = i % stages;
    mbar_wait(bars + 8 * s, (i / stages) & 1);
    u32 j = i + stages;
    if (j < nbox) issue_box(&tm, dst0 + s * BOX_BYTES, bars + 8 * s, base + j % region);
  }
  u64 t1 = clk();
  u64 g1 = gtimer();
  o[0] = t1 - t0; o[1] = g0; o[2] = g1; o[3] = sm; o[4] = 1;
}

#ifndef TMA_STREAM_NO_HOST
#include <cstdio>
#include <algorithm>
#include <cudaTypedefs.h>
#include "host.cuh"

static PFN_cuTensorMapEncodeTiled_v12000 encode;
static const int SMEM = 200 * 1024;
static const int K = 4096;                     // fp16 columns: rows 8 KiB apart, 64 boxes across
static const int REGION = 8;                   // boxes per SM: 132 x 128 KiB = 16.5 MiB, L2-resident

static void run(CUtensorMap* tm, u64* out, int nbox, int stages, int distinct, int stride, int limit, int launches) {
  int g = 132;
  std::vector<u64> h((size_t)g * 5);
  for (int l = 0; l < launches; ++l) {
    tma_stream<<<g, 128, SMEM>>>(*tm, out, nbox, stages, REGION, distinct, stride, limit);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (l == 0) continue;                      // launch 0 brings the region into L2
    CK(cudaMemcpy(h.data(), out, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    std::vector<double> cyc;
    u64 gmin = ~0ull, gmax = 0;
    double ns_sum = 0;
    for (int c = 0; c < g; ++c) {
      const u64* r = &h[(size_t)c * 5];
      if (!r[4]) continue;
      cyc.push_back((double)r[0]);
      gmin = std::min(gmin, r[1]);
      gmax = std::max(gmax, r[2]);
      ns_sum += (double)(r[2] - r[1]);
    }
    int n = (int)cyc.size();
    if (!n) { printf("STREAM none active\n"); continue; }
    double med = median_of(cyc);
    double mx = *std::max_element(cyc.begin(), cyc.end()), mn = *std::min_element(cyc.begin(), cyc.end());
    double bytes = (double)nbox * BOX_BYTES;
    double sum_cyc = 0;
    for (double c : cyc) sum_cyc += c;
    double mhz = sum_cyc / ns_sum * 1e3;       // the SM clock over the CTAs' own windows
    double span = (double)(gmax - gmin);
    printf("STREAM sms=%d stride=%d limit=%d distinct=%d stages=%d nbox=%d launch=%d med_cycles=%.0f min_cycles=%.0f "
           "max_cycles=%.0f span_ns=%.0f sm_mhz=%.1f per_sm_bpc=%.2f agg_bpc=%.1f agg_gbps=%.1f\n",
           n, stride, limit, distinct, stages, nbox, l, med, mn, mx, span, mhz, bytes / med,
           n * bytes / (span * mhz * 1e-3), n * bytes / span);
    fflush(stdout);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d l2=%d\n", p.name, p.multiProcessorCount, p.major, p.minor, p.l2CacheSize);
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void**)&encode, cudaEnableDefault, &q));
  CK(cudaFuncSetAttribute(tma_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const size_t rows = (size_t)((132 * REGION + 63) / 64) * 128;
  char* buf;
  u64* out;
  CK(cudaMalloc(&buf, rows * K * 2));
  CK(cudaMemset(buf, 1, rows * K * 2));
  CK(cudaMalloc(&out, (size_t)132 * 5 * sizeof(u64)));
  CUtensorMap tm;
  cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows};
  cuuint64_t strides[1] = {(cuuint64_t)K * 2};
  cuuint32_t box[2] = {64, 128}, es[2] = {1, 1};
  CUresult e = encode(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf, dims, strides, box, es,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS) { printf("encode failed %d\n", (int)e); return 1; }
  const int nbox = 512;                        // 8 MiB per SM
  // SM sets: one SM, a TPC pair, the first 16 ids, every 4th / 2nd, all; distinct data, then all SMs on the same
  const int sets[6][2] = {{1, 1}, {1, 2}, {1, 16}, {4, 132}, {2, 132}, {1, 132}};
  for (int stages : {4, 8, 2})
    for (auto& s : sets) run(&tm, out, nbox, stages, 1, s[0], s[1], 3);
  for (int stages : {4, 8})
    for (auto& s : sets) run(&tm, out, nbox, stages, 0, s[0], s[1], 3);
  printf("DONE\n");
  return 0;
}
#endif
