// mbarrier polling latency: a dependent chain of `iters` waits, each wait's predicate feeding the next wait's
// address (off = p ? z0 : z1 with z0 = z1 = 0 passed at run time, so the compiler cannot fold it away).
// mode 0: control chain (setp on the address instead of a wait: ALU cost of the link, subtract it)
// mode 1: mbarrier.test_wait.parity       mode 2: mbarrier.try_wait.parity (no hint)
// mode 3: mbarrier.try_wait.parity with suspendTimeHint = hint (ns)
// mode 4: ALU calibration chain without the wait or setp (p from the previous link's selp, one add)
// complete = 1: barrier phase 0 already completed (init count 1 + one arrive); 0: incomplete (count 2, no arrive).
// out[0] = total cycles, out[1] = iters, out[2] = number of true predicates seen, out[3] = globaltimer ns elapsed.
#include "common.cuh"

#define CHAIN_LOOP(WAITSTR, ...)                                                   \
  for (u32 i = 0; i < iters; ++i) {                                                \
    asm volatile("{\n .reg .pred p;\n .reg .u32 o;\n" WAITSTR                      \
                 " selp.u32 o, %2, %3, p;\n"                                      \
                 " add.u32 %0, %0, o;\n"                                           \
                 " selp.u32 o, 1, 0, p;\n"                                         \
                 " add.u32 %1, %1, o;\n}"                                          \
                 : "+r"(addr), "+r"(ntrue)                                         \
                 : "r"(z0), "r"(z1), ##__VA_ARGS__ : "memory");                    \
  }

extern "C" __global__ void mbar_wait_chain(u64* out, u32 mode, u32 hint, u32 iters, u32 complete, u32 z0, u32 z1) {
  __shared__ __align__(8) u64 bars[2];
  u32 bar = smem_addr(&bars[0]);
  if (threadIdx.x == 0) {
    mbar_init(bar, complete ? 1 : 2);
    mbar_init(bar + 8, complete ? 1 : 2);
    mbar_fence_init();
    if (complete) { mbar_arrive(bar); mbar_arrive(bar + 8); }
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  u32 addr = bar, ntrue = 0;
  u64 g0 = gtimer();
  u64 t0 = clk();
  if (mode == 0) {
    CHAIN_LOOP(" setp.ne.u32 p, %0, 0xffffffff;\n")
  } else if (mode == 1) {
    CHAIN_LOOP(" mbarrier.test_wait.parity.shared::cta.b64 p, [%0], 0;\n")
  } else if (mode == 2) {
    CHAIN_LOOP(" mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n")
  } else if (mode == 3) {
    CHAIN_LOOP(" mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0, %4;\n", "r"(hint))
  } else {
    for (u32 i = 0; i < iters; ++i) asm volatile("add.u32 %0, %0, %1;" : "+r"(addr) : "r"(z0));
  }
  u64 t1 = clk();
  u64 g1 = gtimer();
  out[0] = t1 - t0;
  out[1] = iters;
  out[2] = ntrue + (addr - bar);  // addr - bar is 0; keeps the chain live
  out[3] = g1 - g0;
}
