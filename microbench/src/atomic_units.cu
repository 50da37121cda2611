// Which lines share an L2 atomic unit (run_atomic_units.sh; parse_atomic_units.py). Written 2026-12-07 for the
// spin-lock model (components/atomics.py AtomicUnits.park): 4,096 CTAs spinning on 32 lock words in each of two
// adjacent lines (lock_lines LKL locks=64 stride=1) wait as long per hand-off as 8 lock words in one line do, while
// 256 lock words in 8 adjacent lines wait no longer than one lock per line: do two adjacent 128-B lines share the
// unit that serves one-lane atomics (~1.4 cycles a request, lock_lines CLN), and how far apart must lines be to be
// served apart?
//  AUN  G CTAs of one warp; lane 0 issues K independent one-lane atom.global.cas.b32 that always fail (compare
//       value never stored), relaxed (acqrel=0) or Triton's atom.global.acq_rel.gpu.cas (acqrel=1), on word
//       ((b / lines) % 32) of line (b % lines), the lines `stride` bytes apart; cycles = the longest CTA's
//       %clock64 span; req_per_cycle = G * K / cycles. One line at 1.39 cycles a request: lines served apart
//       divide the time by their number, lines sharing a unit do not (32 lines: how many units 4 / 32 / 128 KiB
//       of lines spread over).
//  AUF  the same CTAs, every lane of the warp on its own word of the line (red.global.add.u32, lane i word i): K
//       full-line requests; tells the L2's atomic ALUs apart (the model: 1 KiB spans of 8 lines on 64 ALUs,
//       l2.atomic_lane_unit_bytes / atomic_lane_units, fitted to atomics.cu TPUT): lines 128-512 B apart share
//       an ALU, 1 KiB and more do not.
//  AUT  (added 2026-12-07 after the H100 run contradicted the H200 TPUT fit) G CTAs of W warps, CTA b's warps all on
//       line (b % lines), lane i word i (red.global.add.u32): atomics.cu TPUT cta_line is G=S W=16 lines=S stride=128
//       (one SM per line, 2.75 requests a cycle on the H200 where 33 four-line units at AUF's 0.2 would give 6.6);
//       the same lines from 8 one-warp CTAs each (G=8S W=1) tell a per-SM limit from a per-line one.
//  AUV  vector and float atomics (the gallery's RMSNorm backward adds atom.global.acq_rel.add.v4.f32 into one row):
//       8S one-warp CTAs, lane i on 16 B at i*16 of region (b % regions) (a warp covers 512 B = 4 lines; regions
//       512 B apart): op 0 red.global.add.v4.f32, op 1 atom.global.gpu.acq_rel.add.v4.f32 with the results unused
//       (Triton's form), op 2 red.global.add.f32 lane i word i of the region's first line (one line, 32 elements,
//       the AUF request in f32), op 3 red.global.add.v2.f32 lane i on 8 B (256 B = 2 lines); elements_per_cycle
//       = the float additions done GPU-wide a cycle.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "check.cuh"
#include "host.cuh"

template <int ACQREL>
__global__ void cas_lines(unsigned* base, int lines, int stride_words, int k, long long* cyc, unsigned* sink) {
  const int b = blockIdx.x;
  unsigned* a = base + (size_t)(b % lines) * stride_words + ((b / lines) % 32);
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
  if (threadIdx.x == 0) cyc[b] = t1 - t0;
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

__global__ void red_lines(unsigned* base, int lines, int stride_words, int k, long long* cyc) {
  const int b = blockIdx.x;
  unsigned* a = base + (size_t)(b % lines) * stride_words + (threadIdx.x & 31);
  __syncwarp();
  long long t0 = clock64();
  for (int j = 0; j < k; ++j) asm volatile("red.global.gpu.relaxed.add.u32 [%0], 1;" :: "l"(a) : "memory");
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  __syncwarp();
  long long t1 = clock64();
  if (threadIdx.x == 0) cyc[b] = t1 - t0;
}

__global__ void red_cta_lines(unsigned* base, int lines, int stride_words, int k, long long* cyc) {
  const int b = blockIdx.x;
  unsigned* a = base + (size_t)(b % lines) * stride_words + (threadIdx.x & 31);
  __syncthreads();
  long long t0 = clock64();
  for (int j = 0; j < k; ++j) asm volatile("red.global.gpu.relaxed.add.u32 [%0], 1;" :: "l"(a) : "memory");
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cyc[b] = t1 - t0;
}

template <int OP>
__global__ void vec_red(float* base, int regions, int k, long long* cyc, unsigned* sink) {
  const int b = blockIdx.x, lane = threadIdx.x & 31;
  float* r = base + (size_t)(b % regions) * 128;  // 512 B a region
  unsigned acc = 0;
  __syncwarp();
  long long t0 = clock64();
  for (int j = 0; j < k; ++j) {
    if (OP == 0)
      asm volatile("red.global.gpu.relaxed.add.v4.f32 [%0], {%1, %1, %1, %1};" :: "l"(r + 4 * lane), "f"(1.0f) : "memory");
    if (OP == 1) {
      unsigned v0, v1, v2, v3;
      asm volatile("atom.global.gpu.acq_rel.add.v4.f32 {%0, %1, %2, %3}, [%4], {%5, %5, %5, %5};"
                   : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "l"(r + 4 * lane), "f"(1.0f) : "memory");
    }
    if (OP == 2) asm volatile("red.global.gpu.relaxed.add.f32 [%0], %1;" :: "l"(r + lane), "f"(1.0f) : "memory");
    if (OP == 3)
      asm volatile("red.global.gpu.relaxed.add.v2.f32 [%0], {%1, %1};" :: "l"(r + 2 * lane), "f"(1.0f) : "memory");
  }
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  __syncwarp();
  long long t1 = clock64();
  if (lane == 0) cyc[b] = t1 - t0;
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

static unsigned* d_buf;
static long long* d_cyc;
static unsigned* d_sink;

template <int ACQREL>
static void aun(int G, int lines, int stride, int k) {
  for (int rep = 0; rep < 3; ++rep) {
    cas_lines<ACQREL><<<G, 32>>>(d_buf, lines, stride / 4, k, d_cyc, d_sink);
    CK(cudaDeviceSynchronize());
    std::vector<long long> h(G);
    CK(cudaMemcpy(h.data(), d_cyc, G * sizeof(long long), cudaMemcpyDeviceToHost));
    const double c = (double)*std::max_element(h.begin(), h.end());
    printf("AUN acqrel=%d G=%d lines=%d stride=%d K=%d rep=%d cycles=%.0f req_per_cycle=%.4f\n", ACQREL, G, lines,
           stride, k, rep, c, (double)G * k / c);
  }
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const int S = p.multiProcessorCount;
  CK(cudaMalloc(&d_buf, 16 << 20));
  CK(cudaMemset(d_buf, 0, 16 << 20));
  CK(cudaMalloc(&d_cyc, 1 << 20));
  CK(cudaMalloc(&d_sink, 64));
  aun<0>(S, 1, 128, 64);   // warm-up (not parsed apart: same keys as below are averaged, so run it once more)
  for (int stride : {128, 256, 512, 1024, 2048, 4096, 65536})
    for (int lines : {1, 2, 4, 8, 32}) {
      if (lines == 1 && stride != 128) continue;
      if (lines == 32 && stride != 128 && stride != 1024 && stride != 4096) continue;
      aun<0>(8 * S, lines, stride, 64);
    }
  for (int stride : {128, 256, 4096})
    for (int lines : {1, 2}) {
      if (lines == 1 && stride != 128) continue;
      aun<1>(8 * S, lines, stride, 16);
    }
  for (int stride : {128, 256, 512, 1024, 2048, 65536})
    for (int lines : {1, 2, 8, 32}) {
      if (lines == 1 && stride != 128) continue;
      for (int rep = 0; rep < 3; ++rep) {
        red_lines<<<8 * S, 32>>>(d_buf, lines, stride / 4, 64, d_cyc);
        CK(cudaDeviceSynchronize());
        std::vector<long long> h(8 * S);
        CK(cudaMemcpy(h.data(), d_cyc, 8 * S * sizeof(long long), cudaMemcpyDeviceToHost));
        const double c = (double)*std::max_element(h.begin(), h.end());
        printf("AUF G=%d lines=%d stride=%d K=64 rep=%d cycles=%.0f req_per_cycle=%.4f\n", 8 * S, lines, stride, rep,
               c, 8.0 * S * 64 / c);
      }
    }
  for (int W : {1, 4, 16})
    for (int stride : {128, 1024})
      for (int G : {S, 8 * S}) {
        if (G == 8 * S && W != 1) continue;
        for (int lines : {S, 32}) {
          if (lines == 32 && (W != 16 && G == S)) continue;
          for (int rep = 0; rep < 3; ++rep) {
            red_cta_lines<<<G, 32 * W>>>(d_buf, lines, stride / 4, 64, d_cyc);
            CK(cudaDeviceSynchronize());
            std::vector<long long> h(G);
            CK(cudaMemcpy(h.data(), d_cyc, G * sizeof(long long), cudaMemcpyDeviceToHost));
            const double c = (double)*std::max_element(h.begin(), h.end());
            printf("AUT G=%d W=%d lines=%d stride=%d K=64 rep=%d cycles=%.0f req_per_cycle=%.4f\n", G, W, lines, stride,
                   rep, c, (double)G * W * 64 / c);
          }
        }
      }
  CK(cudaMemset(d_buf, 0, 16 << 20));
  for (int op = 0; op < 4; ++op)
    for (int regions : {1, 2, 16}) {
      for (int rep = 0; rep < 3; ++rep) {
        float* fb = reinterpret_cast<float*>(d_buf);
        const int G = 8 * S;
        if (op == 0) vec_red<0><<<G, 32>>>(fb, regions, 32, d_cyc, d_sink);
        if (op == 1) vec_red<1><<<G, 32>>>(fb, regions, 32, d_cyc, d_sink);
        if (op == 2) vec_red<2><<<G, 32>>>(fb, regions, 32, d_cyc, d_sink);
        if (op == 3) vec_red<3><<<G, 32>>>(fb, regions, 32, d_cyc, d_sink);
        CK(cudaDeviceSynchronize());
        std::vector<long long> h(G);
        CK(cudaMemcpy(h.data(), d_cyc, G * sizeof(long long), cudaMemcpyDeviceToHost));
        const double c = (double)*std::max_element(h.begin(), h.end());
        const int elems = op == 0 || op == 1 ? 4 : (op == 3 ? 2 : 1);
        printf("AUV op=%d G=%d regions=%d K=32 rep=%d cycles=%.0f req_per_cycle=%.4f elements_per_cycle=%.3f\n", op, G,
               regions, rep, c, (double)G * 32 / c, (double)G * 32 * 32 * elems / c);
      }
    }
  printf("DONE\n");
  return 0;
}
