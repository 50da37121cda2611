// How close in time must two SMs' reads of the same line be to share one L2 lookup? (run_l2_shared.sh l2_coalesce_skew)
// G = 132 CTAs (one per SM, 1024 threads) all read the same 1 MiB with ld.global.cg (L1 bypassed), but CTA i starts
// at offset i * R bytes (mod 1 MiB) and wraps around: at any moment CTAs i and j read lines (i - j) * R bytes apart,
// so the same line reaches the L2 from them (i - j) * R / r cycles apart (r = one CTA's read rate, measured as
// 1 MiB / cycles). R = 0 is lock step (l2_shared_read). Under ncu --cache-control all the first pass is cold.
#include <cstdio>
#include <cuda_runtime.h>

extern "C" __global__ void l2_coalesce_skew(const int4* __restrict__ base, int rot_int4, int n_int4, int* out) {
    int start = (int)(((long long)blockIdx.x * rot_int4) % n_int4);
    int acc = 0;
    for (int i = threadIdx.x; i < n_int4; i += blockDim.x) {
        int j = start + i;
        if (j >= n_int4) j -= n_int4;
        int a, b, c, d;
        asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(base + j));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x12345678) out[blockIdx.x] = acc;
}

int main() {
    const int S = 1 << 20, G = 132;
    const int Rs[] = {0, 128, 512, 1024, 2048, 4096, 8192, 16384, 65536};
    int4* buf; int* out;
    cudaMalloc(&buf, S); cudaMemset(buf, 1, S);
    cudaMalloc(&out, G * sizeof(int));
    int idx = 0;
    for (int R : Rs) {
        printf("PLAN %d G=%d R=%d S=%d\n", idx++, G, R, S);
        l2_coalesce_skew<<<G, 1024>>>(buf, R / 16, S / 16, out);
        cudaDeviceSynchronize();
    }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
