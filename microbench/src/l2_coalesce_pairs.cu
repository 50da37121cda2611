// Which SMs share L2 lookups? (run_l2_pairs.sh). Two parts:
// 1. cta_smid: the SM (%smid) each CTA of a launch runs on, for several grid shapes (no ncu): the CTA -> SM order
//    of the hardware CTA scheduler (components/cta_scheduler.py places CTA i of the first wave on SM sm_order[i]).
// 2. l2_pair_read: 132 CTAs, one per SM (1024 threads, 120 KiB of dynamic shared memory each), but only the CTAs
//    whose %smid is in a set read the same 1 MiB with ld.global.cg in lock step (l2_shared_read with a mask); the
//    others exit. Under ncu (--cache-control all), SM reads per L2 lookup = bytes delivered / lookup bytes: 2 for a
//    pair of SMs whose same-line reads share one lookup, 1 for a pair that does not.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

extern "C" __global__ void cta_smid(int* out, int spin) {
    if (threadIdx.x == 0) out[blockIdx.x] = (int)smid();
    // hold the SM a little so that later CTAs cannot reuse it before the first wave is placed
    long long t0 = clock64();
    while (clock64() - t0 < spin) { }
}

extern "C" __global__ void l2_pair_read(const int4* __restrict__ base, int n_int4, const unsigned* mask, int* out) {
    extern __shared__ int pad[];
    unsigned s = smid();
    if (!((mask[s >> 5] >> (s & 31)) & 1u)) return;
    int acc = 0;
    for (int i = threadIdx.x; i < n_int4; i += blockDim.x) {
        int a, b, c, d;
        asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(base + i));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x12345678) { pad[threadIdx.x] = acc; out[blockIdx.x] = pad[(threadIdx.x + 1) & 1023]; }
}

// plain ld.global (L1-allocating, LDG.E.128 without .STRONG): does a lookup share across SMs as ld.global.cg's does?
// (argv[1] == "ca", run_l2_pairs_ca.sh; the timing model keys both alike since 2026-12-05)
extern "C" __global__ void l2_pair_read_ca(const int4* __restrict__ base, int n_int4, const unsigned* mask, int* out) {
    extern __shared__ int pad[];
    unsigned s = smid();
    if (!((mask[s >> 5] >> (s & 31)) & 1u)) return;
    int acc = 0;
    for (int i = threadIdx.x; i < n_int4; i += blockDim.x) {
        int a, b, c, d;
        asm volatile("ld.global.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(base + i));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x12345678) { pad[threadIdx.x] = acc; out[blockIdx.x] = pad[(threadIdx.x + 1) & 1023]; }
}

int main(int argc, char** argv) {
    int n_sm = 0; cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, 0);
    bool map_only = argc > 1 && !strcmp(argv[1], "map");
    int* out; cudaMalloc(&out, 65536 * sizeof(int));
    if (map_only) {
        // grid shapes: (blocks, threads, dynamic smem bytes)
        struct Shape { int blocks, threads, smem; } shapes[] = {
            {132, 1024, 120 << 10}, {8, 128, 0}, {33, 128, 0}, {132, 128, 0}, {264, 128, 0},
            {256, 128, 64 << 10}, {264, 256, 100 << 10}, {1056, 128, 0}};
        cudaFuncSetAttribute(cta_smid, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10);
        for (auto& sh : shapes) {
            cta_smid<<<sh.blocks, sh.threads, sh.smem>>>(out, 200000);
            cudaDeviceSynchronize();
            std::vector<int> h(sh.blocks);
            cudaMemcpy(h.data(), out, sh.blocks * sizeof(int), cudaMemcpyDeviceToHost);
            printf("MAP blocks=%d threads=%d smem=%d smid:", sh.blocks, sh.threads, sh.smem);
            for (int v : h) printf(" %d", v);
            printf("\n");
        }
        printf("n_sm %d status %s\n", n_sm, cudaGetErrorString(cudaGetLastError()));
        return 0;
    }
    const int S = 1 << 20;
    int4* buf; unsigned* dmask;
    cudaMalloc(&buf, S); cudaMemset(buf, 1, S);
    cudaMalloc(&dmask, 8 * sizeof(unsigned));
    cudaFuncSetAttribute(l2_pair_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 << 10);
    cudaFuncSetAttribute(l2_pair_read_ca, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 << 10);
    const bool ca = argc > 1 && !strcmp(argv[1], "ca");
    std::vector<std::vector<int>> sets;
    if (ca) {
        // a pair of one GPC, a pair of two, 4 SMs of one GPC, every 2nd SM, all: each with ld.global.cg, then plain
        std::vector<std::vector<int>> base = {{0, 1}, {0, 2}, {124, 125, 126, 127}};
        { std::vector<int> v; for (int j = 0; j < n_sm; j += 2) v.push_back(j); base.push_back(v); }
        { std::vector<int> v; for (int j = 0; j < n_sm; ++j) v.push_back(j); base.push_back(v); }
        int idx = 0;
        for (int plain = 0; plain < 2; ++plain)
            for (auto& set : base) {
                unsigned m[8] = {0};
                for (int j : set) m[j >> 5] |= 1u << (j & 31);
                cudaMemcpy(dmask, m, sizeof(m), cudaMemcpyHostToDevice);
                printf("PLAN %d n=%zu plain=%d sms=", idx++, set.size(), plain);
                for (size_t k = 0; k < set.size(); ++k) printf(k ? ",%d" : "%d", set[k]);
                printf("\n");
                if (plain) l2_pair_read_ca<<<n_sm, 1024, 120 << 10>>>(buf, S / 16, dmask, out);
                else l2_pair_read<<<n_sm, 1024, 120 << 10>>>(buf, S / 16, dmask, out);
                cudaDeviceSynchronize();
            }
        cudaError_t e = cudaGetLastError();
        printf("status %s\n", cudaGetErrorString(e));
        return e != cudaSuccess;
    }
    for (int a : {0, 1, 7})
        for (int j = 0; j < n_sm; ++j)
            if (j != a) sets.push_back({a, j});
    for (int q = 0; q + 3 < n_sm; q += 4) sets.push_back({q, q + 1, q + 2, q + 3});
    for (int g : {2, 4, 8, 16}) {            // every SM index that is a multiple of g
        std::vector<int> v; for (int j = 0; j < n_sm; j += g) v.push_back(j); sets.push_back(v);
    }
    { std::vector<int> v; for (int j = 0; j < n_sm; ++j) v.push_back(j); sets.push_back(v); }
    int idx = 0;
    for (auto& set : sets) {
        unsigned m[8] = {0};
        for (int j : set) m[j >> 5] |= 1u << (j & 31);
        cudaMemcpy(dmask, m, sizeof(m), cudaMemcpyHostToDevice);
        printf("PLAN %d n=%zu sms=", idx++, set.size());
        for (size_t k = 0; k < set.size(); ++k) printf(k ? ",%d" : "%d", set[k]);
        printf("\n");
        l2_pair_read<<<n_sm, 1024, 120 << 10>>>(buf, S / 16, dmask, out);
        cudaDeviceSynchronize();
    }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
