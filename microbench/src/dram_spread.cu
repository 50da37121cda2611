// How much one DRAM miss's latency varies, and what a warp that waits for the slowest of its lanes' misses pays
// (issue #15, written 2026-12-07): the gallery's latency-bound row kernels with barriers run short in the model
// (column sums -21 %: H200 `barrier` stall 11.65 per issue against the model's 0.67 -- its warps' loads come back
// together, the card's do not), and the model gives every DRAM miss the same latency plus queueing.
// A self-contained program; one text line per result (parsed by microbench/parse_dram_spread.py).
//   SPREAD region=<MiB> order=<random|page>: one thread chases N dependent ld.global.cg over the 128-B lines of a
//       region (random: a random cycle over all of it; page: random inside each 2 MiB page, pages in turn, so the
//       TLB stays warm), the L2 flushed first (a 512 MiB read of another buffer); each step's %clock64 delta is
//       kept; prints mean, sd and percentiles of the per-load cycles.
//   GATHER lanes=<K> region=<MiB>: one warp, K lanes active; each step every active lane loads its own random cold
//       line (independent of the others), the warp then waits for all of them (the next addresses depend on every
//       loaded value through a shuffle reduction); mean cycles per step = the expected slowest of K misses.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a dram_spread.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#define STEPS 2048
#define GSTEPS 512

extern "C" __global__ void k_spread(const u32* chain, u32 start, u32 steps, u64* dt, u32* sink) {
  __shared__ volatile u32 use;
  u32 j = start;
  u64 t = clk();
  for (u32 i = 0; i < steps; ++i) {
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(j) : "l"(chain + j) : "memory");
    use = j;                // st.shared waits for the load's value; the clock read issues after it (in order)
    const u64 t1 = clk();
    dt[i] = t1 - t;
    t = t1;
  }
  sink[0] = j;
}

// chain: per lane its own random cycle over the region's lines (lane l's next line index in word 0 of each line,
// lines of lane l are those with index % 32 == l); each step the warp XORs all loaded values into every lane's
// next index offset, which is 0 by construction (all lines hold indices of the same lane), so the next address
// depends on every lane's load
extern "C" __global__ void k_gather(const u32* chain, const u32* start, u32 lanes, u32 steps, u32 zero, u64* out,
                                    u32* sink) {
  const u32 lane = threadIdx.x & 31;
  u32 j = start[lane];
  u32 acc = 0;
  const u64 t0 = clk();
  for (u32 i = 0; i < steps; ++i) {
    u32 v = 0;
    if (lane < lanes) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(chain + j) : "memory");
    u32 d = v;
    for (int o = 16; o; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);   // waits for every lane's value
    j = (lane < lanes ? v : j) + (d & zero);                                // zero = 0, unknown to the compiler
    acc += v;
  }
  const u64 t1 = clk();
  if (lane == 0) out[0] = t1 - t0;
  sink[lane] = acc;
}

__global__ void k_flush(const uint4* p, size_t n, u32* sink) {
  u32 acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

static uint4* d_flush;
static u32* d_sink;
static const size_t FLUSH = (size_t)512 << 20;

static void flush() {
  k_flush<<<1056, 256>>>(d_flush, FLUSH / 16, d_sink);
  CK(cudaDeviceSynchronize());
}

static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, (size_t)(q * (v.size() - 1) + 0.5))];
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d l2=%d\n", p.name, p.multiProcessorCount, p.major, p.minor, p.l2CacheSize);
  CK(cudaMalloc(&d_flush, FLUSH));
  CK(cudaMemset(d_flush, 1, FLUSH));
  CK(cudaMalloc(&d_sink, 256));
  u64* d_dt;
  CK(cudaMalloc(&d_dt, STEPS * 8));
  std::mt19937 rng(2026);
  for (size_t mib : {256, 1024}) {
    const size_t bytes = mib << 20, nl = bytes / 128;
    u32* d_chain;
    CK(cudaMalloc(&d_chain, bytes));
    std::vector<u32> h(bytes / 4, 0u);
    for (const char* order : {"random", "page"}) {
      std::vector<u32> ord(nl);
      std::iota(ord.begin(), ord.end(), 0u);
      if (order[0] == 'r') std::shuffle(ord.begin(), ord.end(), rng);
      else
        for (size_t pg = 0; pg < nl; pg += 16384) std::shuffle(ord.begin() + pg, ord.begin() + std::min(nl, pg + 16384), rng);
      for (size_t i = 0; i < nl; ++i) h[(size_t)ord[i] * 32] = ord[(i + 1) % nl] * 32u;
      CK(cudaMemcpy(d_chain, h.data(), bytes, cudaMemcpyHostToDevice));
      for (int rep = 0; rep < 3; ++rep) {
        flush();
        k_spread<<<1, 1>>>(d_chain, ord[(size_t)rep * 5000 % nl] * 32u, STEPS, d_dt, d_sink);
        CK(cudaDeviceSynchronize());
        std::vector<u64> dt(STEPS);
        CK(cudaMemcpy(dt.data(), d_dt, STEPS * 8, cudaMemcpyDeviceToHost));
        std::vector<double> v(dt.begin() + 16, dt.end());   // the first steps warm the instruction path
        const double m = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
        double s = 0;
        for (double x : v) s += (x - m) * (x - m);
        printf("SPREAD region=%zu order=%s rep=%d n=%zu mean=%.1f sd=%.1f p01=%.0f p10=%.0f p25=%.0f p50=%.0f p75=%.0f "
               "p90=%.0f p99=%.0f max=%.0f\n", mib, order, rep, v.size(), m, std::sqrt(s / v.size()), pct(v, 0.01),
               pct(v, 0.10), pct(v, 0.25), pct(v, 0.5), pct(v, 0.75), pct(v, 0.9), pct(v, 0.99), pct(v, 1.0));
        fflush(stdout);
      }
    }
    // per-lane cycles for GATHER: lane l walks the lines with index % 32 == l in random order (page-local)
    {
      std::vector<std::vector<u32>> per(32);
      for (size_t i = 0; i < nl; ++i) per[i % 32].push_back((u32)i);
      std::vector<u32> starts(32);
      for (int l = 0; l < 32; ++l) {
        auto& o = per[l];
        for (size_t pg = 0; pg < o.size(); pg += 512) std::shuffle(o.begin() + pg, o.begin() + std::min(o.size(), pg + 512), rng);
        for (size_t i = 0; i < o.size(); ++i) h[(size_t)o[i] * 32] = o[(i + 1) % o.size()] * 32u;
        starts[l] = o[0] * 32u;
      }
      CK(cudaMemcpy(d_chain, h.data(), bytes, cudaMemcpyHostToDevice));
      u32* d_st;
      CK(cudaMalloc(&d_st, 128));
      CK(cudaMemcpy(d_st, starts.data(), 128, cudaMemcpyHostToDevice));
      for (u32 lanes : {1u, 2u, 4u, 8u, 16u, 32u})
        for (int rep = 0; rep < 3; ++rep) {
          flush();
          k_gather<<<1, 32>>>(d_chain, d_st, lanes, GSTEPS, 0u, d_dt, d_sink);
          CK(cudaDeviceSynchronize());
          u64 c;
          CK(cudaMemcpy(&c, d_dt, 8, cudaMemcpyDeviceToHost));
          printf("GATHER lanes=%u region=%zu rep=%d steps=%d cyc_per_step=%.1f\n", lanes, mib, rep, GSTEPS,
                 (double)c / GSTEPS);
          fflush(stdout);
        }
      CK(cudaFree(d_st));
    }
    CK(cudaFree(d_chain));
  }
  printf("DONE\n");
  return 0;
}
