// The host-side CUDA error check the standalone microbenchmark programs share: a failed call prints one
// `CUDAERR <call> line <n>: <message>` line (run_with_sass.sh greps for it) and exits 1.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                              \
  do {                                                                                                     \
    cudaError_t e_ = (x);                                                                                  \
    if (e_ != cudaSuccess) {                                                                               \
      printf("CUDAERR %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));                           \
      exit(1);                                                                                             \
    }                                                                                                      \
  } while (0)
