// Which SMs share an L2 lookup for TMA (bulk) loads? (run_l2_tma_pairs.sh). l2_coalesce_pairs.cu measured it for
// ld.global.cg: SMs of one GPC reading the same lines together share a lookup (2.00 reads per lookup for a pair,
// 1.00 across GPCs, 3.8 over 132 SMs), and the model applies the same rule to TMA boxes (components/tma.py). The
// TMA GEMMs count only 0.60-0.91 of the card's L2 bytes in the model (no sharing for boxes: 1.21-1.54; docs/
// accuracy.md "The TMA GEMM pipeline on the card"), so the rule is measured here for bulk copies: 132 CTAs, one per
// SM (120 KiB of dynamic shared memory each); the CTAs whose %smid is in a set let thread 0 stream the same 1 MiB
// through two 16 KiB buffers with cp.async.bulk (two copies in flight, as a 3-stage GEMM keeps), in lock step; the
// others exit. Under ncu (--cache-control all): SM reads per L2 lookup = n_sms x 1 MiB / 32 / lookup sectors.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "common.cuh"

extern "C" __global__ void l2_tma_pair_read(const char* __restrict__ base, int nbytes, int chunk, const unsigned* mask,
                                             int* out) {
    __shared__ __align__(8) u64 bar[2];
    unsigned s = smid();
    if (!((mask[s >> 5] >> (s & 31)) & 1u)) return;
    if (threadIdx.x != 0) return;
    u32 b0 = smem_addr(&bar[0]), b1 = smem_addr(&bar[1]);
    mbar_init(b0, 1);
    mbar_init(b1, 1);
    mbar_fence_init();
    const u32 buf = smem_addr(dyn_smem);
    const int n = nbytes / chunk;
    u32 ph[2] = {0, 0};
    for (int i = 0; i < n; ++i) {
        const int k = i & 1;
        const u32 b = k ? b1 : b0;
        if (i >= 2) { mbar_wait(b, ph[k]); ph[k] ^= 1; }     // the buffer's previous copy has landed
        mbar_arrive_expect_tx(b, chunk);
        bulk_g2s(buf + k * chunk, base + (size_t)i * chunk, chunk, b);
    }
    for (int i = n > 2 ? n - 2 : 0; i < n; ++i) { const int k = i & 1; mbar_wait(k ? b1 : b0, ph[k]); ph[k] ^= 1; }
    if (ph[0] == 7u) out[blockIdx.x] = (int)ph[1];   // never: keeps the loop
}

int main() {
    int n_sm = 0; cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, 0);
    const int S = 1 << 20, C = 16 << 10;
    char* buf; unsigned* dmask; int* out;
    cudaMalloc(&buf, S); cudaMemset(buf, 1, S);
    cudaMalloc(&dmask, 8 * sizeof(unsigned));
    cudaMalloc(&out, 1024 * sizeof(int));
    cudaFuncSetAttribute(l2_tma_pair_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 << 10);
    // the sets of l2_coalesce_pairs.cu's "ca" mode: a pair of one GPC, a pair of two, 4 SMs of one GPC, every 2nd
    // SM, all; plus each single SM of the first pair (one reader: 1.00 by construction, the control)
    std::vector<std::vector<int>> sets = {{0}, {0, 1}, {0, 2}, {124, 125, 126, 127}};
    { std::vector<int> v; for (int j = 0; j < n_sm; j += 2) v.push_back(j); sets.push_back(v); }
    { std::vector<int> v; for (int j = 0; j < n_sm; ++j) v.push_back(j); sets.push_back(v); }
    int idx = 0;
    for (auto& set : sets) {
        unsigned m[8] = {0};
        for (int j : set) m[j >> 5] |= 1u << (j & 31);
        cudaMemcpy(dmask, m, sizeof(m), cudaMemcpyHostToDevice);
        printf("PLAN %d n=%zu sms=", idx++, set.size());
        for (size_t k = 0; k < set.size(); ++k) printf(k ? ",%d" : "%d", set[k]);
        printf("\n");
        l2_tma_pair_read<<<n_sm, 32, 120 << 10>>>(buf, S, C, dmask, out);
        cudaDeviceSynchronize();
    }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
