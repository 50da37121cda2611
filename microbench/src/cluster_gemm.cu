// A real thread-block-cluster GEMM for the H200: C = A @ B^T, bf16 in, fp32 accumulate, bf16 out.
// A [M, K] and B [N, K] row-major (K-major). One CTA = one warpgroup (128 threads) computing a 128 x 128 tile
// with wgmma.m64n128k16 (two per k16 step). Clusters of 2 CTAs along M share the B tile: each CTA loads its
// own A tile (TMA, cp.async.bulk.tensor.2d) and HALF of the shared B tile (64 of its 128 rows), which it
// multicasts into both CTAs' shared memory (cp.async.bulk.tensor ... .multicast::cluster, ctaMask 0b11).
// 4-stage ring of 32 KiB (A 16 KiB + B 16 KiB, 128-B swizzle); a stage is filled when its mbarrier has seen
// 32 KiB (16 KiB own A, 8 KiB own B half, 8 KiB from the peer); it is released to BOTH producers (an `empty`
// mbarrier of count 2 in each CTA, the peer's one reached with mapa + a remote mbarrier.arrive), because the
// next fill of that stage writes into both CTAs.
// Launch: grid (M/128)*(N/128) CTAs (M/128 even), cluster (2,1,1), block 128, dynamic shared memory SMEM_BYTES.
// PTX for the launch record: nvcc -arch=sm_90a -ptx (microbench/cluster_gemm/make_record.py).
// With -DCG_TIMING (microbench/cluster_gemm/make_timing_record.py, never a calibration record) the kernel takes one
// more parameter, u64 tim[grid * CG_NT], and thread 0 of every CTA sums %clock64 intervals of its k loop in
// registers (no memory operation inside the loop, so the fences see what they see in the plain kernel) and writes
// them once at the end: the stage wait, the wgmma + bar.sync, each release arrive (MEMBAR.ALL.GPU + arrive), the
// wait for both CTAs' releases, the TMA issue, the largest local release, and how many of the next 3 stages'
// copies had not landed (mbarrier.test_wait) when each fence began. -DCG_SYNC_AFTER (with CG_TIMING) adds a bar.sync
// after thread 0's release and refill, so the other three warps wait there instead of at the next wgmma; -DCG_SPIN=D
// spins D cycles before the local release (not counted in its interval); -DCG_NOMC loads both halves of the B tile
// in each CTA instead of multicasting one half to both; -DCG_NOMMA replaces the wgmma by a 600-cycle spin.
#include <cuda.h>
#include <cuda_bf16.h>
#include <stdint.h>

#define BM 128
#define BN 128
#define BK 64
#define STAGES 4
#define STAGE_BYTES 32768
#define SMEM_BYTES (STAGES * STAGE_BYTES + 1024 + 1024)  // ring + barriers + alignment slack
#define CG_NT 10

__device__ __forceinline__ uint32_t s_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "W_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra W_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "WC_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WC_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}
// 128-B swizzled, K-major operand: rows of 128 B, 8-row core groups 1024 B apart (SBO), LBO unused (1)
__device__ __forceinline__ uint64_t sdesc(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}
__device__ __forceinline__ void wgmma_m64n128k16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, 1, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(128, 1)
cluster_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, __nv_bfloat16* C,
             uint32_t M, uint32_t N, uint32_t K
#ifdef CG_TIMING
             , unsigned long long* tim
#endif
             ) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t base = (s_addr(smem_raw) + 1023) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE_BYTES;  // full[s] at bars + 8s, empty[s] at bars + 64 + 8s
  uint32_t rank, cl;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cl));
  const uint32_t mpairs = M / (2 * BM);
  const uint32_t m_tile = (cl % mpairs) * 2 + rank, n_tile = cl / mpairs;
  const uint32_t KT = K / BK;
  const uint32_t tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(bars + 8 * s, 1); mbar_init(bars + 64 + 8 * s, 2); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");

  auto issue = [&](uint32_t kt) {
    const uint32_t s = kt % STAGES;
    const uint32_t sa = base + s * STAGE_BYTES, sb = sa + BM * BK * 2, full = bars + 8 * s;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full), "r"(STAGE_BYTES) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(sa), "l"((uint64_t)&tmA), "r"(kt * BK), "r"(m_tile * BM), "r"(full) : "memory");
#ifndef CG_NOMC
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(sb + rank * (BN / 2) * BK * 2), "l"((uint64_t)&tmB), "r"(kt * BK), "r"(n_tile * BN + rank * (BN / 2)),
        "r"(full), "h"((unsigned short)3) : "memory");
#else  // (timing variant) no multicast: each CTA loads both halves of the B tile itself
    for (uint32_t h = 0; h < 2; ++h)
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
          ::"r"(sb + h * (BN / 2) * BK * 2), "l"((uint64_t)&tmB), "r"(kt * BK), "r"(n_tile * BN + h * (BN / 2)),
          "r"(full) : "memory");
#endif
  };
  auto release = [&](uint32_t kt) {  // both CTAs' producers may refill stage kt % STAGES once we are done with it
    const uint32_t e = bars + 64 + 8 * (kt % STAGES);
    uint32_t re;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(re) : "r"(e), "r"(rank ^ 1));
    asm volatile("mbarrier.arrive.release.cluster.shared::cta.b64 _, [%0];" ::"r"(e) : "memory");
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(re) : "memory");
  };

  if (tid == 0)
    for (uint32_t kt = 0; kt < KT && kt < STAGES; ++kt) issue(kt);

#ifdef CG_TIMING
  // [0] stage wait [1] wgmma + bar.sync [2] local release [3] remote release [4] empty wait [5] issue
  // [6] max local release [7] copies not landed at the local release [8] ... at the remote release [9] iterations
  unsigned long long ts[CG_NT] = {0}, t0, t1;
  auto now = [] { unsigned long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory"); return t; };
  auto pending = [&](uint32_t kt) {   // copies of stages kt+1 .. kt+3 that have not landed yet
    uint32_t n = 0;
    for (uint32_t j = 1; j < STAGES; ++j) {
      if (kt + j >= KT) break;
      uint32_t done;
      asm volatile("{\n .reg .pred q;\n mbarrier.test_wait.parity.shared::cta.b64 q, [%1], %2;\n selp.u32 %0, 1, 0, q;\n}"
                   : "=r"(done) : "r"(bars + 8 * ((kt + j) % STAGES)), "r"(((kt + j) / STAGES) & 1) : "memory");
      n += 1 - done;
    }
    return n;
  };
#endif
  float acc0[64], acc1[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) { acc0[i] = 0.f; acc1[i] = 0.f; }

  for (uint32_t kt = 0; kt < KT; ++kt) {
    const uint32_t s = kt % STAGES;
    const uint32_t sa = base + s * STAGE_BYTES, sb = sa + BM * BK * 2;
#ifdef CG_TIMING
    if (tid == 0) t0 = now();
#endif
    mbar_wait(bars + 8 * s, (kt / STAGES) & 1);
#ifdef CG_TIMING
    if (tid == 0) { t1 = now(); ts[0] += t1 - t0; t0 = t1; }
#endif
#ifndef CG_NOMMA
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      wgmma_m64n128k16(acc0, sdesc(sa + kk * 32), sdesc(sb + kk * 32));
      wgmma_m64n128k16(acc1, sdesc(sa + 64 * 128 + kk * 32), sdesc(sb + kk * 32));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");  // (waiting for 1 group in flight makes
    // ptxas serialize the wgmmas, C7515: the accumulators are live across the loop back-edge)
#else  // (timing variant) no tensor core: a 600-cycle spin stands for the wgmma (the output is not the product)
    { unsigned long long t2 = now(); while (now() - t2 < 600) {} }
#endif
    asm volatile("bar.sync 1, 128;" ::: "memory");  // every warp is done with stage s
#ifndef CG_TIMING
    if (tid == 0) {
      release(kt);
      if (kt + STAGES < KT) {
        mbar_wait_cluster(bars + 64 + 8 * s, (kt / STAGES) & 1);  // both CTAs are done with stage s
        issue(kt + STAGES);
      }
    }
#else
    if (tid == 0) {   // release(kt), timed arrive by arrive
      t1 = now(); ts[1] += t1 - t0; t0 = t1;
#ifdef CG_SPIN
      while (now() - t1 < CG_SPIN) {}   // the fence CG_SPIN cycles later (the copies in flight age)
#endif
      ts[7] += pending(kt);
      const uint32_t e = bars + 64 + 8 * (kt % STAGES);
      uint32_t re;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(re) : "r"(e), "r"(rank ^ 1));
      t0 = now();
      asm volatile("mbarrier.arrive.release.cluster.shared::cta.b64 _, [%0];" ::"r"(e) : "memory");
      t1 = now(); ts[2] += t1 - t0; ts[6] = ts[6] > t1 - t0 ? ts[6] : t1 - t0;
      ts[8] += pending(kt);
      t0 = now();
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(re) : "memory");
      t1 = now(); ts[3] += t1 - t0; t0 = t1;
      if (kt + STAGES < KT) {
        mbar_wait_cluster(bars + 64 + 8 * s, (kt / STAGES) & 1);
        t1 = now(); ts[4] += t1 - t0; t0 = t1;
        issue(kt + STAGES);
        t1 = now(); ts[5] += t1 - t0; t0 = t1;
      }
      ts[9] += 1;
    }
#ifdef CG_SYNC_AFTER
    asm volatile("bar.sync 1, 128;" ::: "memory");  // the other warps wait here, not at the next wgmma
#endif
#endif
    __syncwarp();
  }

  // epilogue: m64nNk16 f32 fragment: d[4j + {0,1}] at (w*16 + l/4, 8j + 2(l%4) + {0,1}), d[4j + {2,3}] 8 rows lower
  const uint32_t w = tid / 32, l = tid % 32;
  const uint32_t row0 = m_tile * BM + w * 16 + l / 4, col0 = n_tile * BN + 2 * (l % 4);
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const uint32_t col = col0 + 8 * j;
    *(__nv_bfloat162*)&C[(size_t)row0 * N + col] = __floats2bfloat162_rn(acc0[4 * j], acc0[4 * j + 1]);
    *(__nv_bfloat162*)&C[(size_t)(row0 + 8) * N + col] = __floats2bfloat162_rn(acc0[4 * j + 2], acc0[4 * j + 3]);
    *(__nv_bfloat162*)&C[(size_t)(row0 + 64) * N + col] = __floats2bfloat162_rn(acc1[4 * j], acc1[4 * j + 1]);
    *(__nv_bfloat162*)&C[(size_t)(row0 + 72) * N + col] = __floats2bfloat162_rn(acc1[4 * j + 2], acc1[4 * j + 3]);
  }
#ifdef CG_TIMING
  if (tid == 0)
    for (int i = 0; i < CG_NT; ++i) tim[(size_t)blockIdx.x * CG_NT + i] = ts[i];
#endif
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
