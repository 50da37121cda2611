// Global atomics at the L2 (run_atomics.sh): latency, throughput per address, and a spin-lock handoff.
// Triton lowers tl.atomic_* (default sem="acq_rel", scope="gpu") to `atom.global.gpu.acq_rel.<op>`, which ptxas
// makes MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; ATOMG.E.<op>.STRONG.GPU; CCTL.IVALL (cuobjdump -sass of the gallery
// records colsum_atomic / layernorm_bwd). Sections (one line each, "SECTION key=value ..."):
//  CLK   SM MHz from %clock64 against %globaltimer over a ~20 ms spin.
//  LAT   one thread, 512 dependent accesses to one L2-resident word (the next address = base + (old & zero)):
//        mode ld_cg (ld.global.cg), atom_relaxed / atom_acqrel (atom.add.u32), cas_relaxed / cas_acqrel
//        (atom.cas.b32 that always fails), exch_acqrel, fence (fence.acq_rel.gpu alone: cycles per fence with no
//        memory operation outstanding), st_fence (st.global then fence.acq_rel.gpu: the store-ack round trip),
//        red_fence (red.add then fence). Cycles per link, median over 5 repetitions.
//  TPUT  G CTAs x W warps, each thread K atomics back to back (independent), address pattern: same (one word for
//        every thread of the launch), warp_word (each warp its own word, lanes the same word), warp_line (each
//        warp its own 128-B line, lane i word i), shared_line (every warp the same line, lane i word i),
//        cta_line (the warps of a CTA share a line, lane i word i). Ops red_u32, atom_u32 (relaxed, result used),
//        atom_acqrel_f32 (Triton's). Cycles = the longest CTA (%clock64 around the loop, ended by a fence so that
//        the last reductions are acknowledged), lane-ops per cycle, warp-instructions per cycle.
//  LOCK  G CTAs of 128 threads take one lock N times each, Triton's loop: bar.sync; thread 0
//        atom.global.acq_rel.gpu.cas [lock], 0, 1; st.shared; bar.sync; ld.shared; loop while it was taken. Holder:
//        thread 0 reads and bumps a sequence word and stamps %globaltimer; cs=1: every thread also loads, adds to
//        and stores one 16-B word of a 2 KiB buffer; bar.sync; thread 0 atom.global.gpu.acq_rel.exch [lock], 0.
//        Handoff = (last stamp - first stamp) / (acquisitions - 1), in ns and SM cycles (CLK); spins = failed
//        cas per acquisition.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}

__global__ void clk_probe(long long spin_ns, double* out) {
    unsigned long long g0 = gtimer(); long long c0 = clock64();
    while (gtimer() - g0 < (unsigned long long)spin_ns) {}
    unsigned long long g1 = gtimer(); long long c1 = clock64();
    out[0] = (double)(c1 - c0) / (double)(g1 - g0) * 1000.0;  // MHz
}

// ---------------------------------------------------------------------------------------------------------- LAT
template <int M>
__global__ void lat_chain(unsigned* base, int n, unsigned zero, long long* out) {
    unsigned* a = base;
    unsigned v = 0, w = 1;
    long long t0 = clock64();
    for (int i = 0; i < n; ++i) {
        if (M == 0) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
        if (M == 1) asm volatile("atom.global.gpu.relaxed.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(a) : "memory");
        if (M == 2) asm volatile("atom.global.gpu.acq_rel.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(a) : "memory");
        if (M == 3) asm volatile("atom.global.gpu.relaxed.cas.b32 %0, [%1], 0xFFFFFFFF, 7;" : "=r"(v) : "l"(a) : "memory");
        if (M == 4) asm volatile("atom.global.gpu.acq_rel.cas.b32 %0, [%1], 0xFFFFFFFF, 7;" : "=r"(v) : "l"(a) : "memory");
        if (M == 5) asm volatile("atom.global.gpu.acq_rel.exch.b32 %0, [%1], 3;" : "=r"(v) : "l"(a) : "memory");
        if (M == 6) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); v = w + v; }
        if (M == 7) { asm volatile("st.global.u32 [%0], %1;" :: "l"(a), "r"(w) : "memory");
                      asm volatile("fence.acq_rel.gpu;" ::: "memory"); v = w + v; }
        if (M == 8) { asm volatile("red.global.gpu.relaxed.add.u32 [%0], 1;" :: "l"(a) : "memory");
                      asm volatile("fence.acq_rel.gpu;" ::: "memory"); v = w + v; }
        a = base + (v & zero);
        w = v;
    }
    long long t1 = clock64();
    out[0] = t1 - t0;
    out[1] = v;
}

// --------------------------------------------------------------------------------------------------------- TPUT
template <int OP>
__global__ void tput(unsigned* p, int pattern, int k, long long* cyc, unsigned* sink) {
    int lane = threadIdx.x & 31;
    int gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned* a;
    if (pattern == 0) a = p;
    else if (pattern == 1) a = p + gw * 32;
    else if (pattern == 2) a = p + gw * 32 + lane;
    else if (pattern == 3) a = p + lane;
    else a = p + blockIdx.x * 32 + lane;
    unsigned acc = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int j = 0; j < k; ++j) {
        unsigned v = 0;
        if (OP == 0) asm volatile("red.global.gpu.relaxed.add.u32 [%0], 1;" :: "l"(a) : "memory");
        if (OP == 1) asm volatile("atom.global.gpu.relaxed.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(a) : "memory");
        if (OP == 2) asm volatile("atom.global.gpu.acq_rel.add.f32 %0, [%1], 0f3F800000;" : "=r"(v) : "l"(a) : "memory");
        acc += v;
    }
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
    if (acc == 0x9e3779b9u) sink[0] = acc;
}

// --------------------------------------------------------------------------------------------------------- LOCK
__global__ void lock_k(int* lock, unsigned* seq, unsigned long long* ts, int4* buf, int n, int cs,
                       unsigned* spins, long long* cyc) {
    __shared__ int sh;
    unsigned my_spins = 0;
    long long t0 = clock64();
    for (int it = 0; it < n; ++it) {
        int taken;
        do {
            __syncthreads();
            if (threadIdx.x == 0) {
                int old;
                asm volatile("atom.global.acq_rel.gpu.cas.b32 %0, [%1], 0, 1;" : "=r"(old) : "l"(lock) : "memory");
                sh = old;
                if (old) ++my_spins;
            }
            __syncthreads();
            taken = sh;
        } while (taken == 1);
        if (threadIdx.x == 0) {
            unsigned s = *(volatile unsigned*)seq;
            ts[s] = gtimer();
            *(volatile unsigned*)seq = s + 1;
        }
        if (cs) {
            int4 x = buf[threadIdx.x];
            x.x += 1; x.y += 1; x.z += 1; x.w += 1;
            buf[threadIdx.x] = x;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int o;
            asm volatile("atom.global.gpu.acq_rel.exch.b32 %0, [%1], 0;" : "=r"(o) : "l"(lock) : "memory");
        }
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) { atomicAdd(spins, my_spins); cyc[blockIdx.x] = t1 - t0; }
}

template <int M>
static double run_lat(unsigned* base, long long* dout) {
    std::vector<double> r;
    for (int rep = 0; rep < 5; ++rep) {
        lat_chain<M><<<1, 1>>>(base, 512, 0u, dout);
        CK(cudaDeviceSynchronize());
        long long h[2]; CK(cudaMemcpy(h, dout, sizeof(h), cudaMemcpyDeviceToHost));
        r.push_back(h[0] / 512.0);
    }
    std::sort(r.begin(), r.end());
    return r[2];
}

template <int OP>
static void run_tput(const char* opn, unsigned* p, int G, int W, int pattern, int k, long long* dcyc, unsigned* sink) {
    static const char* pn[] = {"same", "warp_word", "warp_line", "shared_line", "cta_line"};
    std::vector<double> best;
    for (int rep = 0; rep < 3; ++rep) {
        CK(cudaMemset(p, 0, 64 << 20));
        tput<OP><<<G, 32 * W>>>(p, pattern, k, dcyc, sink);
        CK(cudaDeviceSynchronize());
        std::vector<long long> h(G);
        CK(cudaMemcpy(h.data(), dcyc, G * sizeof(long long), cudaMemcpyDeviceToHost));
        best.push_back((double)*std::max_element(h.begin(), h.end()));
    }
    std::sort(best.begin(), best.end());
    double c = best[1];
    double lane_ops = (double)G * W * 32 * k, warp_ops = (double)G * W * k;
    printf("TPUT op=%s pattern=%s G=%d W=%d K=%d cycles=%.0f lane_ops_per_cycle=%.4f warp_insts_per_cycle=%.4f "
           "cycles_per_warp_inst_per_sm=%.3f\n", opn, pn[pattern], G, W, k, c, lane_ops / c, warp_ops / c,
           c / ((double)W * k));
}

int main() {
    double* dmhz; CK(cudaMalloc(&dmhz, sizeof(double)));
    clk_probe<<<1, 1>>>(20000000LL, dmhz); CK(cudaDeviceSynchronize());
    double mhz; CK(cudaMemcpy(&mhz, dmhz, sizeof(double), cudaMemcpyDeviceToHost));
    printf("CLK sm_mhz=%.1f\n", mhz);

    unsigned* base; long long* dout;
    CK(cudaMalloc(&base, 64 << 20)); CK(cudaMemset(base, 0, 64 << 20));
    CK(cudaMalloc(&dout, 1 << 20));
    const char* ln[] = {"ld_cg", "atom_relaxed", "atom_acqrel", "cas_relaxed", "cas_acqrel", "exch_acqrel", "fence",
                        "st_fence", "red_fence"};
    double L[9];
    L[0] = run_lat<0>(base, dout); L[1] = run_lat<1>(base, dout); L[2] = run_lat<2>(base, dout);
    L[3] = run_lat<3>(base, dout); L[4] = run_lat<4>(base, dout); L[5] = run_lat<5>(base, dout);
    L[6] = run_lat<6>(base, dout); L[7] = run_lat<7>(base, dout); L[8] = run_lat<8>(base, dout);
    for (int m = 0; m < 9; ++m) printf("LAT mode=%s cycles_per_link=%.1f\n", ln[m], L[m]);

    unsigned* sink; CK(cudaMalloc(&sink, 64));
    struct Cfg { int G, W; };
    const Cfg cf[] = {{1, 1}, {1, 4}, {1, 32}, {132, 1}, {132, 4}, {132, 16}};
    for (const Cfg& c : cf)
        for (int pat = 0; pat < 5; ++pat) {
            run_tput<0>("red_u32", base, c.G, c.W, pat, 64, dout, sink);
            run_tput<1>("atom_u32", base, c.G, c.W, pat, 64, dout, sink);
            run_tput<2>("atom_acqrel_f32", base, c.G, c.W, pat, 16, dout, sink);
        }

    int* lock; unsigned* seq; unsigned* spins; unsigned long long* ts; int4* buf;
    CK(cudaMalloc(&lock, 128)); CK(cudaMalloc(&seq, 128)); CK(cudaMalloc(&spins, 128));
    CK(cudaMalloc(&ts, 8 << 20)); CK(cudaMalloc(&buf, 1 << 20));
    const int Gs[] = {1, 2, 4, 8, 32, 132};
    for (int cs = 0; cs < 2; ++cs)
        for (int G : Gs) {
            int n = std::max(16, 4096 / G);
            CK(cudaMemset(lock, 0, 128)); CK(cudaMemset(seq, 0, 128)); CK(cudaMemset(spins, 0, 128));
            lock_k<<<G, 128>>>(lock, seq, ts, buf, n, cs, spins, dout);
            CK(cudaDeviceSynchronize());
            int tot = G * n;
            std::vector<unsigned long long> h(tot);
            CK(cudaMemcpy(h.data(), ts, tot * 8, cudaMemcpyDeviceToHost));
            unsigned hs; CK(cudaMemcpy(&hs, spins, 4, cudaMemcpyDeviceToHost));
            unsigned hq; CK(cudaMemcpy(&hq, seq, 4, cudaMemcpyDeviceToHost));
            std::vector<long long> cy(G);
            CK(cudaMemcpy(cy.data(), dout, G * 8, cudaMemcpyDeviceToHost));
            double ns = (double)(h[tot - 1] - h[0]) / (tot - 1);
            printf("LOCK cs=%d G=%d N=%d acquisitions=%u handoff_ns=%.2f handoff_cycles=%.1f spins_per_acq=%.3f "
                   "cta_cycles_max=%lld\n", cs, G, n, hq, ns, ns * mhz / 1000.0, (double)hs / tot,
                   *std::max_element(cy.begin(), cy.end()));
        }
    cudaError_t e = cudaGetLastError();
    printf("status %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
