// Does MEMBAR.ALL.GPU (the release half of an acq_rel atomic) wait for the warp's earlier ATOMG whose result
// is discarded (ATOMG ... RZ, as Triton's split-K / RMSNorm-bwd atomics)? One warp, 16 atomics to its own line
// (lane i word i), %clock64 around the loop, median of 5. run: nvcc -O3 -arch=sm_90a; output "RZ mode=.. cyc_per_op=.."
#include <cstdio>
#include <algorithm>
__global__ void k(float* p, long long* o, int mode) {
    float* a = p + threadIdx.x;
    float acc = 0.f;
    long long t0 = clock64();
    for (int j = 0; j < 16; ++j) {
        float v = 0.f;
        if (mode == 0) asm volatile("{.reg .f32 t; atom.global.gpu.acq_rel.add.f32 t, [%0], 0f3F800000;}" :: "l"(a) : "memory");
        if (mode == 1) asm volatile("{.reg .f32 t; atom.global.gpu.relaxed.add.f32 t, [%0], 0f3F800000;}" :: "l"(a) : "memory");
        if (mode == 2) asm volatile("red.global.gpu.release.add.f32 [%0], 0f3F800000;" :: "l"(a) : "memory");
        if (mode == 3) asm volatile("atom.global.gpu.acq_rel.add.f32 %0, [%1], 0f3F800000;" : "=f"(v) : "l"(a) : "memory");
        if (mode == 4) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        acc += v;
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) o[0] = t1 - t0;
    if (acc == 12345.f) o[1] = 1;
}
int main() {
    float* p; long long* o; cudaMalloc(&p, 4096); cudaMalloc(&o, 64); cudaMemset(p, 0, 4096);
    const char* nm[] = {"acqrel_rz", "relaxed_rz", "red_release", "acqrel_used", "fence"};
    for (int m = 0; m < 5; ++m) {
        long long r[5];
        for (int i = 0; i < 5; ++i) { k<<<1, 32>>>(p, o, m); cudaDeviceSynchronize(); cudaMemcpy(&r[i], o, 8, cudaMemcpyDeviceToHost); }
        std::sort(r, r + 5);
        printf("RZ mode=%s cyc_per_op=%.1f\n", nm[m], r[2] / 16.0);
    }
    printf("status %s\n", cudaGetErrorString(cudaGetLastError()));
}
