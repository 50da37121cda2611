// mbarrier wake-up latency on an H200: how long after another warp's mbarrier.arrive does a waiting warp see it.
// A self-contained program (its own main); one text line per result, parsed by microbench/parse_mbar_wakeup.py.
// Why: a local warp-to-warp mbarrier ping-pong costs the H200 240 / 390 cycles per round trip (cluster_sync PING
// local) while the model (a suspended try_wait returns try_wait_cycles = 40 after the phase completes) gives 89.5.
// One launch of one 2-CTA cluster (cudaLaunchKernelEx, 1 CTA per SM, 64 threads), every mode in the same launch
// (REPS timed repetitions after WARM warm-up ones each); three launches. Per repetition r: barrier.cluster; rank 0
// thread 0 reads %clock64 once and publishes T = now + D + (97 r mod 512) in shared memory (the jitter spreads the
// arrive over the waiter's poll phase); bar.sync; the waiter (warp 0) enters its wait loop at once (well before
// T), the arriver (warp 1) spins on %clock64 until >= T (t_go), lane 0 arrives, and it reads %clock64 again
// (t_arr); the waiter reads %clock64 as soon as its wait returns true (t_ret). conv=1: all 32 lanes of the waiting
// and the arriving warp run the loops (as Triton emits them); conv=0: lane 0 alone, the other 31 lanes parked at
// __syncwarp (as cluster_sync.cu's PING does). sleep=1: the arriver naps (__nanosleep(200)) between clock reads.
// Results of a first run without jitter and with lane-0-only warps (every repetition bit-identical, try_wait
// polling every ~150 cycles like test_wait) are in the results README.
// Sections (WAKE lines, percentiles over the REPS repetitions of one launch):
//   mode L_try D=<D>  : local, waiter = warp 0 in `mbarrier.try_wait.parity.shared::cta.b64` (no hint, the form
//                       Triton emits) looped until true; arriver = warp 1, mbarrier.arrive.shared::cta.b64.
//                       wake = t_ret - T, wake_go = t_ret - t_go, arrive = t_arr - t_go, over = t_go - T,
//                       iters = polls the waiter issued (1 = one suspended try_wait covered the whole wait).
//   mode L_test D=<D> : the same with a `mbarrier.test_wait.parity` spin loop.
//   mode L_try_done / L_test_done : the phase is already complete (warp 1 arrived before the bar.sync); wake =
//                       t_ret - t_issue (the waiter's clock just before its first poll): the poll's own latency.
//   mode R_<a><b> D=<D>: remote, across the 2-CTA cluster: rank 0 warp 1 at T arrives
//                       (mbarrier.arrive.release.cluster.shared::cluster, mapa) on rank 1's barrier; rank 1 warp 0
//                       waits (a: s = test_wait spin, t = try_wait; .acquire.cluster), reads its clock (t1_ret),
//                       arrives back on rank 0's barrier (t1_arr); rank 0 warp 0 waits (b) and reads t_ret.
//                       rt = t_ret - t_go (round trip), turn = t1_arr - t1_ret. %clock64 is per SM: the rank 1 - rank 0
//                       clock offset is taken from R_ss (both waiters spin, the two one-way trips assumed equal):
//                       off = median((t_ret - t1_arr) - (t1_ret - t_go)) / 2; fwd = t1_ret - t_go + off (arrive
//                       by rank 0 -> seen by rank 1's waiter), bwd = t_ret - t1_arr - off. The same launch's off is
//                       applied to R_ts / R_st / R_tt.
// Clocks are never touched. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a mbar_wakeup.cu
#include "common.cuh"
#include "check.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define REPS 512
#define WARM 16
#define PER (REPS + WARM)
#define NF 8  // fields per repetition: T, t_go, t_arr, t_ret, iters0, t1_ret, t1_arr, iters1
// mode table: kind (0 L_try, 1 L_test, 2 L_try_done, 3 L_test_done, 4 R_ss, 5 R_ts, 6 R_st, 7 R_tt), D
#define NMODE 14
#define NLOCAL 9  // local modes first: the remote ones (which also complete rank 1's barrier) come last
#define JIT(r) (((r) * 97u) % 512u)  // per-repetition jitter added to D: spreads the arrive over the poll phase
// kind: 0 L_try, 1 L_test, 2 L_try_done, 3 L_test_done, 4 R_ss, 5 R_ts, 6 R_st, 7 R_tt
// conv: 1 = all 32 lanes of the waiting / arriving warps run the loop (as Triton emits; lane 0 arrives and
//       records), 0 = lane 0 alone (the other lanes wait at __syncwarp, as in cluster_sync.cu's PING)
// sleep: 1 = the arriver waits for T with __nanosleep(200) between clock reads instead of a tight clock spin
#define MODES(X) X(0, 2000, 1, 0) X(1, 2000, 1, 0) X(0, 2000, 0, 0) X(1, 2000, 0, 0) X(0, 20000, 1, 0) \
  X(0, 20000, 1, 1) X(2, 0, 1, 0) X(3, 0, 1, 0) X(2, 0, 0, 0) X(4, 2000, 1, 0) X(5, 2000, 1, 0) X(6, 2000, 1, 0)   \
  X(7, 2000, 1, 0) X(7, 2000, 0, 0)
#define XK(k, d, c, sl) k,
#define XD(k, d, c, sl) d,
#define XC(k, d, c, sl) c,
#define XS(k, d, c, sl) sl,
__constant__ int c_kind[NMODE] = {MODES(XK)};
__constant__ int c_d[NMODE] = {MODES(XD)};
__constant__ int c_conv[NMODE] = {MODES(XC)};
__constant__ int c_sleep[NMODE] = {MODES(XS)};
static const int h_kind[NMODE] = {MODES(XK)};
static const int h_d[NMODE] = {MODES(XD)};
static const int h_conv[NMODE] = {MODES(XC)};
static const int h_sleep[NMODE] = {MODES(XS)};
static const char* kind_names[] = {"L_try", "L_test", "L_try_done", "L_test_done", "R_ss", "R_ts", "R_st", "R_tt"};

__device__ __forceinline__ u32 crank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ u32 mapa_(u32 a, u32 rank) {
  u32 r; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank)); return r;
}
// one poll; returns 1 when phase `par` has completed
template <bool TRY, bool CL>
__device__ __forceinline__ u32 poll(u32 bar, u32 par) {
  u32 ok;
  if (TRY && !CL)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok) : "r"(bar), "r"(par) : "memory");
  if (!TRY && !CL)
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok) : "r"(bar), "r"(par) : "memory");
  if (TRY && CL)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(bar), "r"(par) : "memory");
  if (!TRY && CL)
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(bar), "r"(par) : "memory");
  return ok;
}
template <bool TRY, bool CL>
__device__ __forceinline__ u32 wait_n(u32 bar, u32 par) {
  u32 n = 0;
  while (true) { ++n; if (poll<TRY, CL>(bar, par)) break; }
  return n;
}
__device__ __forceinline__ void arrive_remote(u32 rbar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rbar) : "memory");
}

__global__ void __launch_bounds__(64, 1) k_wake(u64* out) {
  __shared__ __align__(8) u64 bars[2];
  __shared__ volatile u64 sT;
  const u32 tid = threadIdx.x, rank = crank(), warp = tid / 32, lane = tid % 32;
  const u32 b0 = smem_addr(&bars[0]);
  const u32 rb = mapa_(b0, rank ^ 1);  // the peer CTA's barrier
  if (tid == 0) { mbar_init(b0, 1); mbar_fence_init(); }
  __syncthreads();
  csync();
  for (u32 g = 0; g < NMODE * PER; ++g) {
    const int m = g / PER;
    const int kind = c_kind[m], conv = c_conv[m], slp = c_sleep[m];
    const u64 D = (u64)c_d[m] + JIT(g % PER);
    u64* o = out + (u64)g * NF;
    const u32 par0 = g & 1;                                       // rank 0's barrier completes every repetition
    const u32 par1 = (g >= NLOCAL * PER) ? ((g - NLOCAL * PER) & 1) : 0;  // rank 1's: remote repetitions only
    const bool active = conv || lane == 0;
    csync();
    if (rank == 0 && tid == 0 && (kind < 2 || kind >= 4)) sT = clk() + D;
    if (rank == 0 && tid == 32 && (kind == 2 || kind == 3)) mbar_arrive(b0);
    __syncthreads();
    if (rank == 0 && warp == 0 && active) {           // waiter
      u64 T = sT, tr; u32 n;
      if (kind == 0) { n = wait_n<true, false>(b0, par0); tr = clk(); }
      else if (kind == 1) { n = wait_n<false, false>(b0, par0); tr = clk(); }
      else if (kind == 2) { T = clk(); n = wait_n<true, false>(b0, par0); tr = clk(); }
      else if (kind == 3) { T = clk(); n = wait_n<false, false>(b0, par0); tr = clk(); }
      else if (kind == 4 || kind == 5) { n = wait_n<false, true>(b0, par0); tr = clk(); }
      else { n = wait_n<true, true>(b0, par0); tr = clk(); }
      if (lane == 0) { o[0] = T; o[3] = tr; o[4] = n; }
    } else if (rank == 0 && warp == 1 && active && (kind < 2 || kind >= 4)) {  // arriver
      const u64 T = sT;
      u64 tg;
      if (slp) { while ((tg = clk()) < T) __nanosleep(200); }
      else { do { tg = clk(); } while (tg < T); }
      if (lane == 0) { if (kind < 2) mbar_arrive(b0); else arrive_remote(rb); }
      u64 ta = clk();
      if (lane == 0) { o[1] = tg; o[2] = ta; }
    } else if (rank == 1 && warp == 0 && active && kind >= 4) {  // remote turn-around
      u32 n;
      if (kind == 4 || kind == 6) n = wait_n<false, true>(b0, par1); else n = wait_n<true, true>(b0, par1);
      u64 t1 = clk();
      if (lane == 0) arrive_remote(rb);
      u64 t2 = clk();
      if (lane == 0) { o[5] = t1; o[6] = t2; o[7] = n; }
    }
    __syncwarp();
    __syncthreads();
  }
  csync();
}

static double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(size_t)(q * (v.size() - 1) + 0.5)];
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("DEV name=%s sms=%d cc=%d.%d\n", p.name, p.multiProcessorCount, p.major, p.minor);
  const size_t n = (size_t)NMODE * PER * NF;
  u64* d_out;
  CK(cudaMalloc(&d_out, n * 8));
  CK(cudaFuncSetAttribute(k_wake, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::vector<u64> h(n);
  for (int launch = 0; launch < 3; ++launch) {
    CK(cudaMemset(d_out, 0, n * 8));
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 2; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(2); cfg.blockDim = dim3(64); cfg.dynamicSmemBytes = 0; cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, k_wake, d_out));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d_out, n * 8, cudaMemcpyDeviceToHost));
    double off = 0;
    for (int m = 0; m < NMODE; ++m) {
      std::vector<double> wake, wgo, arr, over, it, fwdr, bwdr, rt, turn, it1, dd;
      for (int r = WARM; r < PER; ++r) {
        const u64* o = &h[((size_t)m * PER + r) * NF];
        long long T = o[0], tg = o[1], ta = o[2], tr = o[3], t1 = o[5], t2 = o[6];
        wake.push_back((double)(tr - T)); it.push_back((double)o[4]);
        if (h_kind[m] == 2 || h_kind[m] == 3) continue;
        wgo.push_back((double)(tr - tg)); arr.push_back((double)(ta - tg)); over.push_back((double)(tg - T));
        if (h_kind[m] >= 4) {
          fwdr.push_back((double)(t1 - tg)); bwdr.push_back((double)(tr - t2)); rt.push_back((double)(tr - tg));
          turn.push_back((double)(t2 - t1)); it1.push_back((double)o[7]); dd.push_back((double)((tr - t2) - (t1 - tg)));
        }
      }
      if (h_kind[m] == 4) off = pct(dd, 0.5) / 2;
      printf("WAKE mode=%s D=%d conv=%d sleep=%d launch=%d n=%d wake_p50=%.0f wake_p10=%.0f wake_p25=%.0f wake_p75=%.0f wake_p90=%.0f "
             "wake_min=%.0f wake_max=%.0f iters_p50=%.0f iters_max=%.0f",
             kind_names[h_kind[m]], h_d[m], h_conv[m], h_sleep[m], launch, REPS, pct(wake, .5), pct(wake, .1), pct(wake, .25), pct(wake, .75),
             pct(wake, .9), pct(wake, 0), pct(wake, 1), pct(it, .5), pct(it, 1));
      if (!wgo.empty())
        printf(" wake_go_p50=%.0f wake_go_p10=%.0f wake_go_p90=%.0f arrive_p50=%.0f over_p50=%.0f", pct(wgo, .5),
               pct(wgo, .1), pct(wgo, .9), pct(arr, .5), pct(over, .5));
      if (!rt.empty()) {
        std::vector<double> fwd, bwd;
        for (size_t i = 0; i < fwdr.size(); ++i) { fwd.push_back(fwdr[i] + off); bwd.push_back(bwdr[i] - off); }
        printf(" rt_p50=%.0f rt_p10=%.0f rt_p90=%.0f fwd_p50=%.0f fwd_p10=%.0f fwd_p90=%.0f bwd_p50=%.0f bwd_p10=%.0f "
               "bwd_p90=%.0f turn_p50=%.0f iters1_p50=%.0f off=%.1f",
               pct(rt, .5), pct(rt, .1), pct(rt, .9), pct(fwd, .5), pct(fwd, .1), pct(fwd, .9), pct(bwd, .5),
               pct(bwd, .1), pct(bwd, .9), pct(turn, .5), pct(it1, .5), off);
      }
      printf("\n");
    }
    // wake_go histograms (16-cycle bins) of the jittered local modes 0-3
    for (int m = 0; m < 4; ++m) {
      std::vector<int> hist(64, 0);
      for (int r = WARM; r < PER; ++r) {
        const u64* o = &h[((size_t)m * PER + r) * NF];
        long long v = (long long)(o[3] - o[1]);
        int b = (int)(v / 16); if (b < 0) b = 0; if (b > 63) b = 63; hist[b]++;
      }
      printf("HIST mode=%s D=%d conv=%d launch=%d bin16:", kind_names[h_kind[m]], h_d[m], h_conv[m], launch);
      for (int b = 0; b < 64; ++b) if (hist[b]) printf(" %d:%d", b * 16, hist[b]);
      printf("\n");
    }
  }
  printf("DONE\n");
  return 0;
}
