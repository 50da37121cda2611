// Same-line reads from many SMs (L2 hit-on-miss / fill merging), microbench/run_l2_shared.sh.
// G CTAs (one per SM, 1024 threads) each read S bytes with ld.global.cg (L1 bypassed) either from the SAME
// buffer (shared=1: every line is requested by G SMs at about the same time; cold under ncu --cache-control all)
// or from G distinct buffers (shared=0). iters=2 reads the buffer twice (second pass L2-hot).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

extern "C" __global__ void l2_shared_read(const int4* __restrict__ base, long long stride_int4, int n_int4, int iters,
                                          int* out) {
    const int4* p = base + blockIdx.x * stride_int4;
    int acc = 0;
    for (int it = 0; it < iters; ++it)
        for (int i = threadIdx.x; i < n_int4; i += blockDim.x) {
            int a, b, c, d;
            asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p + i));
            acc ^= a ^ b ^ c ^ d;
        }
    if (acc == 0x12345678) out[blockIdx.x] = acc;
}

int main(int argc, char** argv) {
    const long long S = 1 << 20;                       // bytes per CTA
    const int Gs[] = {1, 8, 33, 66, 132};
    int4* buf; int* out;
    cudaMalloc(&buf, 132 * S); cudaMemset(buf, 1, 132 * S);
    cudaMalloc(&out, 132 * sizeof(int));
    int idx = 0;
    for (int iters = 1; iters <= 2; ++iters)
        for (int shared = 1; shared >= 0; --shared)
            for (int G : Gs) {
                printf("PLAN %d G=%d shared=%d iters=%d S=%lld\n", idx++, G, shared, iters, S);
                l2_shared_read<<<G, 1024>>>(buf, shared ? 0 : S / 16, (int)(S / 16), iters, out);
                cudaDeviceSynchronize();
            }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
