// Row streams that write what they read, and DRAM misses whose L2 victims are dirty (issue #15: the gallery's row
// kernels run 18-34 % short in the model; its persistent softmax over 8192 rows of 3,000 fp32 writes 98 MB from two
// CTAs an SM). Does a row take longer once the output has filled the L2 and every store evicts a dirty line? The
// model spread the launch's write-backs evenly over its stores (memory.py write_back_ratio) and charged them as DRAM
// bytes only. (Comment corrected after the runs of 2026-12-07; the program is unchanged.)
// A self-contained program; one text line per result (parsed by microbench/parse_dirty_l2.py).
//   ROW grid=<G> cols=<C> rows=<R> flags=<F> pre=<P>: G CTAs of 128 threads walk rows r = b, b + G, ... < R of a
//       row-major fp32 matrix (row stride C): each thread loads its <= 24 elements t, t + 128, ... (plain scalar
//       ld.global, all issued before their use), the CTA sums the row (shuffles, shared memory, two bar.syncs) and
//       writes every element divided by the sum to the same place of an output matrix of the same shape (flags 0),
//       writes nothing (flags 1), or writes into two rows of its own that it reuses (flags 2: the stores stay in L2).
//       Flags 4: the row comes through shared memory by 4-B cp.async.ca (LDGSTS); 12: and the next row's copies
//       are issued right after this row is read from shared memory (Triton's pipelined loop over rows).
//       Thread 0 stores %clock64 at the start of each of its first 64 rows and at its end. Before the launch the L2
//       is left full of clean lines (pre=clean: a 1 GiB read) or of dirty lines (pre=dirty: a 256 MiB write).
//       Per CTA: total (first clock to end), early (mean cycles per row over its rows 1-4), late (its last 8 rows);
//       medians over the CTAs; us = event time of the launch; curve = the median over the CTAs of each row's cycles,
//       rows 0-63.
//   CHASE pre=<P> steps=<N>: one thread chases a random cycle of 128-B lines over 1 GiB (every step a DRAM miss)
//       after the same pre-pass; pre=dirty_idle waits ~2 ms after the dirty write before the chase. cyc = mean
//       cycles per dependent ld.global.cg.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a dirty_l2.cu
#include "common.cuh"
#include "check.cuh"
#include "host.cuh"
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define THREADS 128
#define PER_THREAD 24          // cols <= 3072
#define MAXIT 64
#define CLK_STRIDE (MAXIT + 2) // per CTA: clocks of rows 0..63, the end clock, the row count

__device__ __forceinline__ void ldgsts4(float* dst, const float* src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(ok ? 4 : 0)
               : "memory");
}
// flags 4: the row comes through shared memory by 4-B cp.async.ca (LDGSTS, what Triton emits for these rows);
// flags 8 (with 4): the next row's copies are issued as soon as this row is read from shared memory, before its
// sum and stores (Triton's num_stages=2 loop over rows)
extern "C" __global__ void __launch_bounds__(THREADS) k_row(const float* in, float* out, u64* clocks, u32 rows,
                                                            u32 cols, u32 flags) {
  __shared__ float part[THREADS / 32];
  __shared__ float total;
  __shared__ float stage[THREADS * PER_THREAD];
  const u32 t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const bool async = flags & 4, pre = flags & 8;
  if (pre && blockIdx.x < rows) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const u32 j = t + i * THREADS;
      ldgsts4(&stage[j], in + (size_t)blockIdx.x * cols + (j < cols ? j : 0), j < cols);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  u32 k = 0;
  for (u32 r = blockIdx.x; r < rows; r += gridDim.x, ++k) {
    if (t == 0 && k < MAXIT) clocks[(size_t)blockIdx.x * CLK_STRIDE + k] = clk();
    const float* src = in + (size_t)r * cols;
    float v[PER_THREAD];
    if (async) {
      if (!pre) {
#pragma unroll
        for (int i = 0; i < PER_THREAD; ++i) {
          const u32 j = t + i * THREADS;
          ldgsts4(&stage[j], src + (j < cols ? j : 0), j < cols);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
      asm volatile("cp.async.wait_group 0;" ::: "memory");
      __syncthreads();
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) v[i] = stage[t + i * THREADS];
      if (pre) {
        __syncthreads();
        const u32 rn = r + gridDim.x;
        if (rn < rows) {
#pragma unroll
          for (int i = 0; i < PER_THREAD; ++i) {
            const u32 j = t + i * THREADS;
            ldgsts4(&stage[j], in + (size_t)rn * cols + (j < cols ? j : 0), j < cols);
          }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
    } else {
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) {
        const u32 j = t + i * THREADS;
        v[i] = j < cols ? src[j] : 0.0f;
      }
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) s += v[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) part[warp] = s;
    __syncthreads();
    if (t == 0) total = part[0] + part[1] + part[2] + part[3] + 1.0f;
    __syncthreads();
    const float inv = 1.0f / total;
    if (!(flags & 1)) {
      float* dst = (flags & 2) ? out + (size_t)(2 * blockIdx.x + (k & 1)) * cols : out + (size_t)r * cols;
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) {
        const u32 j = t + i * THREADS;
        if (j < cols) dst[j] = v[i] * inv;
      }
    }
  }
  if (t == 0) {
    clocks[(size_t)blockIdx.x * CLK_STRIDE + MAXIT] = clk();
    clocks[(size_t)blockIdx.x * CLK_STRIDE + MAXIT + 1] = k;
  }
}

extern "C" __global__ void k_chase(const u32* chain, u32 start, u32 steps, u64* out) {
  u32 j = start;
  for (u32 i = 0; i < 16; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j) : "memory");
  const u64 t0 = clk();
  for (u32 i = 0; i < steps; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j) : "memory");
  const u64 t1 = clk();
  out[0] = t1 - t0;
  out[1] = j;
}

// the pre-passes: every thread reads (clean) or writes (dirty) 16 B per step over n 16-B words
__global__ void k_read_all(const uint4* p, size_t n, u32* sink) {
  u32 acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void k_write_all(uint4* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = make_uint4((u32)i, 1u, 2u, 3u);
}
__global__ void k_idle(u64 ns) {
  const u64 t0 = gtimer();
  while (gtimer() - t0 < ns) {}
}

static const size_t CLEAN_BYTES = (size_t)1 << 30, DIRTY_BYTES = (size_t)256 << 20, CHAIN_BYTES = (size_t)1 << 30;
static uint4 *d_clean, *d_dirty;
static u32* d_sink;
static int S;

static void pre(const char* how) {
  if (how[0] == 'c') k_read_all<<<S * 8, 256>>>(d_clean, CLEAN_BYTES / 16, d_sink);
  else k_write_all<<<S * 8, 256>>>(d_dirty, DIRTY_BYTES / 16);
  if (std::string(how) == "dirty_idle") k_idle<<<1, 1>>>(2000000ull);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

static void row(const float* in, float* out, u64* d_clk, int grid, u32 cols, u32 rows, u32 flags, const char* how) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (int rep = 0; rep < 2; ++rep) {
    pre(how);
    CK(cudaEventRecord(e0));
    k_row<<<grid, THREADS>>>(in, out, d_clk, rows, cols, flags);
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<u64> h((size_t)grid * CLK_STRIDE);
    CK(cudaMemcpy(h.data(), d_clk, h.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<double> tot, early, late;
    std::vector<std::vector<double>> curve(MAXIT);
    for (int b = 0; b < grid; ++b) {
      const u64* c = &h[(size_t)b * CLK_STRIDE];
      const u32 n = (u32)c[MAXIT + 1];
      if (n == 0) continue;
      tot.push_back((double)(c[MAXIT] - c[0]));
      const u32 m = std::min(n, (u32)MAXIT);
      std::vector<double> per;  // cycles of rows 0..m-1 (the last from its start to the end clock if n <= MAXIT)
      for (u32 i = 0; i + 1 < m; ++i) per.push_back((double)(c[i + 1] - c[i]));
      if (n <= MAXIT) per.push_back((double)(c[MAXIT] - c[m - 1]));
      for (size_t i = 0; i < per.size(); ++i) curve[i].push_back(per[i]);
      if (per.size() >= 5) early.push_back((per[1] + per[2] + per[3] + per[4]) / 4);
      if (per.size() >= 9) {
        double s = 0;
        for (size_t i = per.size() - 8; i < per.size(); ++i) s += per[i];
        late.push_back(s / 8);
      }
    }
    printf("ROW grid=%d cols=%u rows=%u flags=%u pre=%s rep=%d total=%.0f early=%.0f late=%.0f us=%.2f curve=", grid,
           cols, rows, flags, how, rep, median_of(tot), early.empty() ? 0.0 : median_of(early),
           late.empty() ? 0.0 : median_of(late), ms * 1000.0);
    for (int i = 0; i < MAXIT && !curve[i].empty(); ++i) printf("%s%.0f", i ? "," : "", median_of(curve[i]));
    printf("\n");
    fflush(stdout);
  }
  CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
}

static void chase(const u32* chain, u32 start, u64* d_o, const char* how, u32 steps) {
  for (int rep = 0; rep < 3; ++rep) {
    pre(how);
    k_chase<<<1, 1>>>(chain, start + 4096u * rep, steps, d_o);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    u64 h[2];
    CK(cudaMemcpy(h, d_o, 16, cudaMemcpyDeviceToHost));
    printf("CHASE pre=%s steps=%u rep=%d cyc=%.1f\n", how, steps, rep, (double)h[0] / steps);
    fflush(stdout);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  S = p.multiProcessorCount;
  printf("DEV name=%s sms=%d cc=%d.%d l2=%d\n", p.name, S, p.major, p.minor, p.l2CacheSize);
  CK(cudaMalloc(&d_clean, CLEAN_BYTES));
  CK(cudaMemset(d_clean, 1, CLEAN_BYTES));
  CK(cudaMalloc(&d_dirty, DIRTY_BYTES));
  CK(cudaMalloc(&d_sink, 4));
  // the chain: a random cycle over the 128-B lines of 1 GiB, each line's first word pointing at the next line
  const size_t nl = CHAIN_BYTES / 128;
  std::vector<u32> order(nl);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(12345);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<u32> chain_h(CHAIN_BYTES / 4, 0u);
  for (size_t i = 0; i < nl; ++i) chain_h[(size_t)order[i] * 32] = order[(i + 1) % nl] * 32u;
  u32* d_chain;
  CK(cudaMalloc(&d_chain, CHAIN_BYTES));
  CK(cudaMemcpy(d_chain, chain_h.data(), CHAIN_BYTES, cudaMemcpyHostToDevice));
  u64* d_o;
  CK(cudaMalloc(&d_o, 64));
  // a 1,500-step chase evicts ~190 KB: every victim is dirty after the dirty pre-pass
  for (const char* how : {"clean", "dirty", "dirty_idle", "clean", "dirty"}) chase(d_chain, order[0] * 32u, d_o, how, 1500);

  const u32 cols = 3000, rows = 8192;
  float *d_in, *d_outm;
  CK(cudaMalloc(&d_in, (size_t)rows * cols * 4));
  CK(cudaMemset(d_in, 0, (size_t)rows * cols * 4));
  CK(cudaMalloc(&d_outm, (size_t)rows * cols * 4));
  CK(cudaMemset(d_outm, 0, (size_t)rows * cols * 4));
  const int gmax = 16 * S;
  u64* d_clk;
  CK(cudaMalloc(&d_clk, (size_t)gmax * CLK_STRIDE * 8));
  // one CTA an SM (62 rows each: reads and write-backs well below the DRAM's bandwidth; does a write-back still
  // delay the reads queued behind it?), the gallery softmax's shape (2 CTAs an SM, 31 rows each), then 4 and 16
  for (u32 fl : {0u, 2u}) row(d_in, d_outm, d_clk, S, cols, rows, fl, "clean");
  for (int g : {2 * S, 4 * S, 16 * S})
    for (u32 fl : {0u, 1u, 2u})
      for (const char* how : {"clean", "dirty"}) row(d_in, d_outm, d_clk, g, cols, rows, fl, how);
  // a smaller matrix (2048 rows, 24 MB out: fits the L2) at 2 CTAs an SM
  for (u32 fl : {0u, 1u}) row(d_in, d_outm, d_clk, 2 * S, cols, 2048, fl, "clean");
  // rows through shared memory by LDGSTS (4), and with the next row's copies issued before the stores (12)
  for (u32 fl : {4u, 5u, 6u, 12u, 13u, 14u}) row(d_in, d_outm, d_clk, 2 * S, cols, rows, fl, "clean");
  for (u32 fl : {4u, 12u}) row(d_in, d_outm, d_clk, 4 * S, cols, rows, fl, "clean");
  printf("DONE\n");
  return 0;
}
