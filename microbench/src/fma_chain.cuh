// Helpers of the branch microbenchmarks (branch_cost.cu, branch_fwd.cu): a %clock64 read without a memory clobber
// (common.cuh's clk() has one, which would change the SASS these were measured with) and a dependent chain of L
// fma.rn.f32 links in inline PTX, so that nothing folds.
#pragma once
typedef unsigned long long u64;

__device__ __forceinline__ u64 clk() {
  u64 t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
  return t;
}

template <int L>
__device__ __forceinline__ float chain(float x, float a, float b) {
#pragma unroll
  for (int j = 0; j < L; ++j) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  return x;
}
