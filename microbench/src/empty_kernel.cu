// Fixed per-launch cost seen by Nsight Compute's gpc__cycles_elapsed.max: empty kernels of growing grids, and
// kernels whose CTAs each spin a fixed number of cycles (so the body's length is known), profiled with
// ncu --clock-control none --cache-control all (microbench/run_launch_overhead.sh).
#include <cstdio>
#include <cuda_runtime.h>
extern "C" __global__ void empty_k() {}
extern "C" __global__ void spin_k(unsigned spin) {
  unsigned long long t0 = clock64();
  while (clock64() - t0 < spin) {}
}
int main() {
  int grids[] = {1, 132, 1056, 4224};
  for (int g : grids) { empty_k<<<g, 128>>>(); cudaDeviceSynchronize(); }
  for (int g : grids) { spin_k<<<g, 128>>>(10000); cudaDeviceSynchronize(); }
  printf("ok %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
