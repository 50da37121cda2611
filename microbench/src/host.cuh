// Host-side helpers the standalone microbenchmark programs written from 2026-12-05 on share (the programs that ran
// before keep their own copies: their sources are what ran).
#pragma once
#include <algorithm>
#include <vector>

// median of the values (the upper one of an even count, as the earlier programs take c[c.size() / 2]); 0 if none
static inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
