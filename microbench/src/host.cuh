// Host-side helpers the standalone microbenchmark programs written from 2026-12-05 on share (the programs that ran
// before keep their own copies: their sources are what ran).
#pragma once
#include <algorithm>
#include <vector>
#include "check.cuh"

// median of the values (the upper one of an even count, as the earlier programs take c[c.size() / 2]); 0 if none
static inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// after the last launch: the median over `rows` of column `col` of a device array of `rows` x `stride` 64-bit values
// (per-CTA or per-warp results)
static inline double median_column(const unsigned long long* dev, int rows, int stride, int col) {
  CK(cudaDeviceSynchronize());
  std::vector<unsigned long long> h((size_t)rows * stride);
  CK(cudaMemcpy(h.data(), dev, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<double> c;
  for (int r = 0; r < rows; ++r) c.push_back((double)h[(size_t)r * stride + col]);
  return median_of(c);
}
