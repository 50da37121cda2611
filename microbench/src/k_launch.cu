// CTA turnaround: how long after a CTA retires does the next CTA start on the same SM (cta_scheduler.
// launch_latency_cycles). Each CTA: thread 0 reads %smid and %clock64 at entry, all threads spin `spin` cycles,
// __syncthreads, thread 0 reads %clock64 again and writes out[4b] = smid, out[4b+1] = start, out[4b+2] = end.
// With dynamic shared memory large enough for one CTA per SM, consecutive CTAs on an SM do not overlap, so
// start(next) - end(previous) on the same SM is the turnaround (clock64 is per SM).
#include "common.cuh"

extern "C" __global__ void cta_turnaround(u64* out, u32 spin) {
  extern __shared__ char dyn[];
  u64 t0 = clk();
  u32 sm = smid();
  if (threadIdx.x == 0) dyn[0] = 1;
  u64 t = t0;
  while (t - t0 < spin) t = clk();
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 t1 = clk();
    out[4 * blockIdx.x] = sm;
    out[4 * blockIdx.x + 1] = t0;
    out[4 * blockIdx.x + 2] = t1;
    out[4 * blockIdx.x + 3] = dyn[0];
  }
}
