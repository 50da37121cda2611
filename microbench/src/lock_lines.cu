// Spin locks with many lock words on few L2 lines, and one-lane atomics on one line from many SMs
// (run_lock_lines.sh; parse_lock_lines.py). Written 2026-12-05 for the gallery's layer-norm backward (Triton's
// per-group atom.cas / atom.exch lock, 64 lock words in two 128-B lines, 4,096 CTAs, ~1,300 resident): the H200
// runs it 1.5x longer than the model, whose lock hand-off is measured with 1-132 CTAs on one word (atomics.cu
// LOCK) and whose L2 line unit is measured with 32-lane requests only (atomics.cu TPUT shared_line: 4.8 cycles per
// request). Two questions: does a line's unit take a one-lane request in ~0.15 or ~4.8 cycles, and what does a hot
// line of spinning waiters add to a hand-off?
//  LKL  G CTAs of 128 threads; CTA b takes lock (b % L) once, Triton's loop (bar.sync; thread 0
//       atom.global.acq_rel.gpu.cas; st.shared; bar.sync; ld.shared; again while taken), lock words `stride` words
//       apart (1: 32 locks per line; 32: one lock per line); cs=1: the holder adds its 16 B per thread to two 2-KiB
//       partial rows of its group, one after the other (as layer-norm backward's dw then db), bar.sync; thread 0
//       atom.global.gpu.acq_rel.exch releases. kernel_cycles = the kernel's cudaEvent time x the SM clock (CLK);
//       per_acq = kernel_cycles / (G / L) (the chain of one lock); spins = failed cas per CTA.
//  CLN  G CTAs of one warp; lane 0 only issues K independent atom.global.cas.b32 that always fail (compare value
//       never stored) on word (b % words) of one line (acq_rel: Triton's atom.global.acq_rel.gpu.cas, a fence each);
//       cycles = the longest CTA's %clock64 span; lane_ops_per_cycle = G * K / cycles.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "check.cuh"
#include "host.cuh"

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clk_probe(long long spin_ns, double* out) {
  unsigned long long g0 = gtimer();
  long long c0 = clock64();
  while (gtimer() - g0 < (unsigned long long)spin_ns) {}
  unsigned long long g1 = gtimer();
  long long c1 = clock64();
  out[0] = (double)(c1 - c0) / (double)(g1 - g0) * 1000.0;  // MHz
}

// ------------------------------------------------------------------------------------------------------------ LKL
__global__ void lock_lines(int* locks, int stride, int nlocks, float4* rows, int cs, unsigned* spins) {
  __shared__ int sh;
  const int g = blockIdx.x % nlocks;
  int* lk = locks + g * stride;
  unsigned my_spins = 0;
  int taken;
  do {
    __syncthreads();
    if (threadIdx.x == 0) {
      int old;
      asm volatile("atom.global.acq_rel.gpu.cas.b32 %0, [%1], 0, 1;" : "=r"(old) : "l"(lk) : "memory");
      sh = old;
      if (old) ++my_spins;
    }
    __syncthreads();
    taken = sh;
  } while (taken == 1);
  if (cs) {
    float4* dw = rows + (size_t)g * 256;          // two 2-KiB rows per group: 128 threads x 16 B each
    float4* db = dw + 128;
    float4 x = dw[threadIdx.x];
    x.x += 1.f; x.y += 1.f; x.z += 1.f; x.w += 1.f;
    dw[threadIdx.x] = x;
    float4 y = db[threadIdx.x];
    y.x += 1.f; y.y += 1.f; y.z += 1.f; y.w += 1.f;
    db[threadIdx.x] = y;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int o;
    asm volatile("atom.global.gpu.acq_rel.exch.b32 %0, [%1], 0;" : "=r"(o) : "l"(lk) : "memory");
    sh = o;                                   // (keeps the result: no unused-variable warning)
    spins[blockIdx.x] = my_spins;
  }
}

// ------------------------------------------------------------------------------------------------------------ CLN
template <int ACQREL>
__global__ void cas_line(unsigned* line, int words, int k, long long* cyc, unsigned* sink) {
  unsigned* a = line + (blockIdx.x % words);
  unsigned acc = 0;
  __syncwarp();
  long long t0 = clock64();
  if ((threadIdx.x & 31) == 0) {
    for (int j = 0; j < k; ++j) {
      unsigned v;
      if (ACQREL)
        asm volatile("atom.global.acq_rel.gpu.cas.b32 %0, [%1], %2, 7;" : "=r"(v) : "l"(a), "r"(0xFFFFFFFFu) : "memory");
      else
        asm volatile("atom.global.gpu.relaxed.cas.b32 %0, [%1], %2, 7;" : "=r"(v) : "l"(a), "r"(0xFFFFFFFFu) : "memory");
      acc += v;
    }
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  }
  __syncwarp();
  long long t1 = clock64();
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

static int* d_locks;
static float4* d_rows;
static unsigned* d_spins;
static long long* d_cyc;
static unsigned* d_line;
static unsigned* d_sink;
static double g_mhz;

static void lkl(int G, int nlocks, int stride, int cs) {
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemset(d_locks, 0, 1 << 20));
    CK(cudaMemset(d_spins, 0, G * sizeof(unsigned)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    lock_lines<<<G, 128>>>(d_locks, stride, nlocks, d_rows, cs, d_spins);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    std::vector<unsigned> s(G);
    CK(cudaMemcpy(s.data(), d_spins, G * sizeof(unsigned), cudaMemcpyDeviceToHost));
    double tot = 0;
    for (unsigned v : s) tot += v;
    const double cyc = ms * 1e3 * g_mhz;
    printf("LKL G=%d locks=%d stride=%d cs=%d rep=%d kernel_cycles=%.0f per_acq=%.1f spins=%.2f\n", G, nlocks, stride, cs,
           rep, cyc, cyc / ((double)G / nlocks), tot / G);
  }
}

template <int ACQREL>
static void cln(int G, int words, int k) {
  for (int rep = 0; rep < 3; ++rep) {
    cas_line<ACQREL><<<G, 32>>>(d_line, words, k, d_cyc, d_sink);
    CK(cudaDeviceSynchronize());
    std::vector<long long> h(G);
    CK(cudaMemcpy(h.data(), d_cyc, G * sizeof(long long), cudaMemcpyDeviceToHost));
    const double c = (double)*std::max_element(h.begin(), h.end());
    printf("CLN acqrel=%d G=%d words=%d K=%d rep=%d cycles=%.0f lane_ops_per_cycle=%.4f\n", ACQREL, G, words, k, rep, c,
           (double)G * k / c);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  double* dmhz;
  CK(cudaMalloc(&dmhz, sizeof(double)));
  clk_probe<<<1, 1>>>(20000000LL, dmhz);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&g_mhz, dmhz, sizeof(double), cudaMemcpyDeviceToHost));
  printf("CLK mhz=%.1f\n", g_mhz);
  CK(cudaMalloc(&d_locks, 1 << 20));
  CK(cudaMalloc(&d_rows, 256 * 4096 * sizeof(float4)));
  CK(cudaMemset(d_rows, 0, 256 * 4096 * sizeof(float4)));
  CK(cudaMalloc(&d_spins, 1 << 20));
  CK(cudaMalloc(&d_cyc, 1 << 20));
  CK(cudaMalloc(&d_line, 4096));
  CK(cudaMemset(d_line, 0, 4096));
  CK(cudaMalloc(&d_sink, 64));
  // LKL: the layer-norm backward shape (4,096 CTAs, 64 locks packed in two lines) and its neighbours: locks one per
  // line, fewer / more locks, a grid of about one wave (10 CTAs per SM), no critical section
  for (int cs : {1, 0})
    for (int stride : {1, 32})
      for (int L : {8, 64, 256})
        for (int G : {10 * S, 4096}) lkl(G, L, stride, cs);
  // CLN: one-lane cas on one line (32 words) or one word, relaxed and acq_rel, 1-8 CTAs per SM
  for (int words : {32, 1})
    for (int G : {S, 2 * S, 4 * S, 8 * S}) { cln<0>(G, words, 64); cln<1>(G, words, 16); }
  cln<0>(1, 1, 64);
  cln<1>(1, 1, 16);
  printf("DONE\n");
  return 0;
}
