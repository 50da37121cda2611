// warpgraph H200 microbenchmark driver: runs every benchmark once and writes one JSON file.
// usage: bench OUT.json [quick]
#include <cuda_runtime.h>
#include <algorithm>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include "k_tma.cu"
#include "k_mbar.cu"
#include "k_mma.cu"
#include "k_wgmma.cu"
#include "k_mem.cu"
#include "k_dsm.cu"
#include "k_l1.cu"
#include "k_launch.cu"
#include "k_loaded.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "CUDA error %s at %s:%d: %s\n", \
  cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)
#define LAUNCHED() do { CK(cudaGetLastError()); CK(cudaDeviceSynchronize()); } while (0)

static std::vector<std::string> g_results;
static std::vector<std::string> g_errors;
static bool g_quick = false;

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double vmin(const std::vector<double>& v) { return v.empty() ? -1 : *std::min_element(v.begin(), v.end()); }
static std::string num(double x) { char b[64]; snprintf(b, sizeof b, "%.6g", x); return b; }
static std::string arr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + num(v[i]);
  return s + "]";
}
// kv: "\"k\":v" pieces joined
struct Obj {
  std::string s;
  Obj& n(const char* k, double v) { add(k, num(v)); return *this; }
  Obj& t(const char* k, const std::string& v) { add(k, "\"" + v + "\""); return *this; }
  Obj& a(const char* k, const std::vector<double>& v) { add(k, arr(v)); return *this; }
  Obj& o(const char* k, const Obj& v) { add(k, v.str()); return *this; }
  void add(const char* k, const std::string& v) { s += (s.empty() ? "" : ",") + std::string("\"") + k + "\":" + v; }
  std::string str() const { return "{" + s + "}"; }
};
static void record(const char* bench, const Obj& params, const Obj& stats, const std::vector<double>& raw = {}) {
  Obj r; r.t("bench", bench).o("params", params).o("stats", stats);
  if (!raw.empty()) r.a("raw", raw);
  g_results.push_back(r.str());
  fprintf(stderr, "%-22s %s %s\n", bench, params.str().c_str(), stats.str().c_str());
}

static u64* d_out; static u32* d_sink; static char* d_big; static char* d_scratch;
static const size_t OUT_WORDS = 1 << 16, BIG = 1ull << 30, SCRATCH = 512ull << 20;
static std::vector<u64> fetch(size_t n) { std::vector<u64> h(n); CK(cudaMemcpy(h.data(), d_out, n * 8, cudaMemcpyDeviceToHost)); return h; }
static void flush_l2() { CK(cudaMemset(d_scratch, 0x3c, SCRATCH)); CK(cudaDeviceSynchronize()); }
template <class F> static void smem_attr(F f, int bytes) { CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)); }

typedef void (*tma_fn)(const char*, u64*, u32, u64, u32, u32);
static tma_fn TMA_FNS[33] = {nullptr, tma_issue_n1, tma_issue_n2, tma_issue_n3, tma_issue_n4, tma_issue_n5, tma_issue_n6,
  tma_issue_n7, tma_issue_n8, tma_issue_n9, tma_issue_n10, tma_issue_n11, tma_issue_n12, tma_issue_n13, tma_issue_n14,
  tma_issue_n15, tma_issue_n16, tma_issue_n17, tma_issue_n18, tma_issue_n19, tma_issue_n20, tma_issue_n21, tma_issue_n22,
  tma_issue_n23, tma_issue_n24, tma_issue_n25, tma_issue_n26, tma_issue_n27, tma_issue_n28, tma_issue_n29, tma_issue_n30,
  tma_issue_n31, tma_issue_n32};

static double clock_mhz(int blocks, const char* when) {
  clock_probe<<<blocks, 32>>>(d_out, 20000000u); LAUNCHED();
  auto h = fetch(3 * blocks);
  std::vector<double> mhz;
  for (int b = 0; b < blocks; ++b) mhz.push_back(1000.0 * h[3 * b] / h[3 * b + 1]);
  double m = median(mhz);
  record("clock_probe", Obj().n("blocks", blocks).t("when", when), Obj().n("sm_mhz_median", m).n("sm_mhz_min", vmin(mhz)));
  return m;
}

// ---------------- TMA ----------------
static void tma_issue_run(int N, u32 bytes, bool dram, int reps, u64 base_off, std::vector<double>& span, std::vector<double>& comp,
                          u32 dst_window = 0) {
  int sm = 128 + (dst_window ? dst_window : N * bytes);
  smem_attr(TMA_FNS[N], sm);
  u64 stride = dram ? (1ull << 20) : 0;
  if (dram) flush_l2();
  TMA_FNS[N]<<<1, 32, sm>>>(d_big + base_off, d_out, bytes, stride, reps, dst_window); LAUNCHED();
  auto h = fetch(3 * reps);
  for (int r = 1; r < reps; ++r) { span.push_back(h[3 * r]); comp.push_back(h[3 * r + 1]); }
}
static void bench_tma() {
  // issue gap T(N) and admission depth
  struct Cfg { u32 bytes; bool dram; } cfgs[] = {{1024, false}, {4096, false}, {1024, true}, {256, false}};
  for (auto c : cfgs) {
    for (int N = 1; N <= 32; ++N) {
      std::vector<double> span, comp;
      for (int k = 0; k < (c.dram ? 1 : 3); ++k) tma_issue_run(N, c.bytes, c.dram, c.dram ? 24 : 12, (u64)(k * 64 + N * 2) << 20 % BIG, span, comp);
      record("tma_issue", Obj().n("n", N).n("bytes", c.bytes).t("level", c.dram ? "dram" : "l2"),
             Obj().n("issue_span_median", median(span)).n("issue_span_min", vmin(span)).n("completion_median", median(comp)), span);
    }
  }
  // admission with large transactions (destinations wrap in a 64 KB window)
  for (u32 bytes : {8192u, 16384u}) for (bool dram : {false, true}) for (int N = 1; N <= 32; ++N) {
    std::vector<double> span, comp;
    tma_issue_run(N, bytes, dram, dram ? 8 : 8, (u64)(N * 16) << 20, span, comp, 65536);
    record("tma_admission", Obj().n("n", N).n("bytes", bytes).t("level", dram ? "dram" : "l2").n("dst_window", 65536),
           Obj().n("issue_span_median", median(span)).n("issue_span_min", vmin(span)).n("completion_median", median(comp)), span);
  }
  // staircase: one transaction, size sweep, L2-hot
  for (u32 bytes = 128; bytes <= 16384; bytes += 128) {
    std::vector<double> span, comp;
    tma_issue_run(1, bytes, false, 16, 0, span, comp);
    record("tma_size", Obj().n("bytes", bytes).t("level", "l2"), Obj().n("completion_median", median(comp)).n("completion_min", vmin(comp)).n("issue_span_median", median(span)));
  }
  // DRAM round trip of one load
  for (u32 bytes : {128u, 1024u, 8192u}) {
    std::vector<double> span, comp;
    tma_issue_run(1, bytes, true, 32, 256ull << 20, span, comp);
    record("tma_dram_round_trip", Obj().n("bytes", bytes).t("level", "dram"), Obj().n("completion_median", median(comp)).n("completion_min", vmin(comp)), comp);
  }
  // serial vs pipelined vs parallel (4 transactions)
  for (bool dram : {false, true}) for (u32 bytes : {1024u, 4096u}) {
    const int reps = 16;
    u64 stride = dram ? (1ull << 20) : 0;
    int sm = 128 + 4 * bytes;
    smem_attr(tma_serial4, sm); smem_attr(tma_parallel4, sm);
    if (dram) flush_l2();
    tma_serial4<<<1, 32, sm>>>(d_big + (512ull << 20), d_out, bytes, stride, reps); LAUNCHED();
    auto h = fetch(2 * reps);
    std::vector<double> ser; for (int r = 1; r < reps; ++r) ser.push_back(h[2 * r]);
    std::vector<double> span, comp;
    tma_issue_run(4, bytes, dram, reps, 600ull << 20, span, comp);
    if (dram) flush_l2();
    tma_parallel4<<<1, 128, sm>>>(d_big + (700ull << 20), d_out, bytes, stride, reps); LAUNCHED();
    h = fetch(reps * 9);
    std::vector<double> pspan, pcomp;
    for (int r = 1; r < reps; ++r) {
      u64 s0 = ~0ull, e1 = 0;
      for (int w = 0; w < 4; ++w) { s0 = std::min<u64>(s0, h[r * 8 + 2 * w]); e1 = std::max<u64>(e1, h[r * 8 + 2 * w + 1]); }
      pspan.push_back((double)(e1 - s0)); pcomp.push_back((double)(h[reps * 8 + r] - s0));
    }
    record("tma_4tx", Obj().n("bytes", bytes).t("level", dram ? "dram" : "l2"),
           Obj().n("serial_completion_median", median(ser)).n("pipelined_issue_span_median", median(span))
                .n("pipelined_completion_median", median(comp)).n("parallel_issue_span_median", median(pspan))
                .n("parallel_completion_median", median(pcomp)));
  }
  // streaming bandwidth
  struct S { int ctas; u32 stages; bool dram; u32 chunk; } ss[] = {{1, 2, true, 8192}, {1, 4, true, 8192}, {1, 8, true, 8192},
    {1, 16, true, 8192}, {1, 8, false, 8192}, {1, 16, false, 8192}, {132, 8, true, 8192}, {132, 4, false, 8192},
    {1, 32, false, 1024}, {1, 16, false, 2048}, {1, 16, false, 4096}, {1, 8, false, 16384}, {1, 4, false, 32768}, {1, 32, true, 4096}};
  for (auto s : ss) {
    u32 chunk = s.chunk, chunks = (u32)((s.dram ? (s.ctas > 1 ? (4ull << 20) : (32ull << 20)) : (64ull << 20)) / chunk);
    u64 region = s.dram ? BIG : (4ull << 20);
    int sm = 1024 + s.stages * chunk;
    smem_attr(tma_stream, sm);
    std::vector<double> bpc, cyc;
    for (int k = 0; k < 3; ++k) {
      if (s.dram) flush_l2();
      tma_stream<<<s.ctas, 32, sm>>>(d_big, d_out, chunk, s.stages, chunks, region, s.dram ? (u64)chunks * chunk : 0); LAUNCHED();
      auto h = fetch(2 * s.ctas);
      for (int b = 0; b < s.ctas; ++b) { cyc.push_back(h[2 * b]); bpc.push_back((double)chunk * chunks / h[2 * b]); }
    }
    record("tma_stream", Obj().n("ctas", s.ctas).n("stages", s.stages).n("chunk_bytes", chunk).t("level", s.dram ? "dram" : "l2"),
           Obj().n("bytes_per_cycle_per_sm_median", median(bpc)).n("bytes_per_cycle_per_sm_min", vmin(bpc)).n("cycles_median", median(cyc)));
  }
}

// ---------------- mbarrier ----------------
static double mbar_run(u32 mode, u32 hint, u32 iters, u32 complete, double* ns_per = nullptr, double* ntrue = nullptr) {
  std::vector<double> c, g, t;
  for (int k = 0; k < 5; ++k) {
    mbar_wait_chain<<<1, 32>>>(d_out, mode, hint, iters, complete, 0, 0); LAUNCHED();
    auto h = fetch(4);
    c.push_back((double)h[0] / iters); g.push_back((double)h[3] / iters); t.push_back((double)h[2]);
  }
  if (ns_per) *ns_per = median(g);
  if (ntrue) *ntrue = median(t);
  return median(c);
}
static void bench_mbar() {
  const char* names[] = {"control_alu", "test_wait", "try_wait", "try_wait_hint"};
  for (u32 complete : {1u, 0u}) {
    double ctrl = mbar_run(0, 0, 4096, complete);
    if (complete) {
      double cyc = mbar_run(4, 0, 4096, 1);
      record("mbarrier_wait", Obj().t("form", "control_add_only").n("complete", 1).n("iters", 4096), Obj().n("cycles_per_link", cyc));
    }
    for (u32 mode = 0; mode < 3; ++mode) {
      u32 iters = (complete || mode == 1 || mode == 0) ? 4096 : 64;
      double ns, nt, cyc = mbar_run(mode, 0, iters, complete, &ns, &nt);
      record("mbarrier_wait", Obj().t("form", names[mode]).n("complete", complete).n("iters", iters),
             Obj().n("cycles_per_link", cyc).n("control_cycles_per_link", ctrl).n("cycles_minus_control", cyc - ctrl).n("ns_per_link", ns).n("true_predicates", nt));
    }
    std::vector<u32> hints = complete ? std::vector<u32>{0, 100, 1000, 100000} :
      std::vector<u32>{0, 16, 32, 64, 128, 256, 512, 1000, 1024, 2000, 4096, 10000, 20000, 65536, 100000, 1000000};
    for (u32 hint : hints) {
      u32 iters = complete ? 4096 : (hint >= 100000 ? 4 : 32);
      double ns, nt, cyc = mbar_run(3, hint, iters, complete, &ns, &nt);
      record("mbarrier_wait", Obj().t("form", names[3]).n("complete", complete).n("hint_ns", hint).n("iters", iters),
             Obj().n("cycles_per_link", cyc).n("control_cycles_per_link", ctrl).n("cycles_minus_control", cyc - ctrl).n("ns_per_link", ns).n("true_predicates", nt));
    }
  }
}

// ---------------- mma.sync ----------------
typedef void (*mma_fn)(u64*, u32*, u32);
struct MmaK { const char* dtype; const char* shape; mma_fn c1, c8; int flops_per_mma; };
static void bench_mma() {
  MmaK ks[] = {
    {"f16", "m16n8k16", mma_f16_m16n8k16_c1, mma_f16_m16n8k16_c8, 2 * 16 * 8 * 16},
    {"f16", "m16n8k8", mma_f16_m16n8k8_c1, mma_f16_m16n8k8_c8, 2 * 16 * 8 * 8},
    {"bf16", "m16n8k16", mma_bf16_m16n8k16_c1, mma_bf16_m16n8k16_c8, 2 * 16 * 8 * 16},
    {"bf16", "m16n8k8", mma_bf16_m16n8k8_c1, mma_bf16_m16n8k8_c8, 2 * 16 * 8 * 8},
    {"tf32", "m16n8k8", mma_tf32_m16n8k8_c1, mma_tf32_m16n8k8_c8, 2 * 16 * 8 * 8},
    {"tf32", "m16n8k4", mma_tf32_m16n8k4_c1, mma_tf32_m16n8k4_c8, 2 * 16 * 8 * 4},
    {"s8", "m16n8k32", mma_s8_m16n8k32_c1, mma_s8_m16n8k32_c8, 2 * 16 * 8 * 32},
    {"s8", "m16n8k16", mma_s8_m16n8k16_c1, mma_s8_m16n8k16_c8, 2 * 16 * 8 * 16},
    {"e4m3", "m16n8k32", mma_e4m3_m16n8k32_c1, mma_e4m3_m16n8k32_c8, 2 * 16 * 8 * 32},
  };
  const u32 I1 = 256, I2 = 1280;
  for (auto& k : ks) {
    for (int chains : {1, 8}) for (int warps : {1, 4, 8, 16}) {
      if (chains == 1 && warps > 1) continue;
      mma_fn f = chains == 1 ? k.c1 : k.c8;
      std::vector<double> slopes;
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<double> t[2];
        for (int q = 0; q < 2; ++q) {
          f<<<1, 32 * warps>>>(d_out, d_sink, q ? I2 : I1); LAUNCHED();
          auto h = fetch(2 * warps);
          for (int w = 0; w < warps; ++w) t[q].push_back(h[2 * w]);
        }
        slopes.push_back((median(t[1]) - median(t[0])) / (I2 - I1) / chains);  // cycles per mma per warp
      }
      double s = median(slopes);
      Obj st; st.n("cycles_per_mma_per_warp", s);
      if (chains == 1) st.n("latency_cycles", s);
      else st.n("issue_gap_per_warp", s).n("issue_gap_per_sm", s / warps).n("flop_per_cycle_per_sm", k.flops_per_mma * warps / s);
      record("mma_sync", Obj().t("dtype", k.dtype).t("shape", k.shape).n("chains", chains).n("warps", warps), st, slopes);
    }
  }
}

// ---------------- wgmma ----------------
typedef void (*wg_fn)(u64*, float*, u32);
static void bench_wgmma() {
  struct W { int n; const char* ab; wg_fn lat, tput; } ws[] = {
    {64, "ss", wgmma_lat_ss_n64, wgmma_tput_ss_n64}, {64, "rs", wgmma_lat_rs_n64, wgmma_tput_rs_n64},
    {128, "ss", wgmma_lat_ss_n128, wgmma_tput_ss_n128}, {128, "rs", wgmma_lat_rs_n128, wgmma_tput_rs_n128},
    {256, "ss", wgmma_lat_ss_n256, wgmma_tput_ss_n256}, {256, "rs", wgmma_lat_rs_n256, wgmma_tput_rs_n256}};
  const u32 I1 = 64, I2 = 320;
  for (auto& w : ws) {
    for (int kind = 0; kind < 2; ++kind) for (int wgs : {1, 2}) {
      if (kind == 0 && wgs == 2) continue;
      wg_fn f = kind == 0 ? w.lat : w.tput;
      std::vector<double> slopes;
      for (int rep = 0; rep < 3; ++rep) {
        double t[2];
        for (int q = 0; q < 2; ++q) {
          f<<<1, 128 * wgs>>>(d_out, (float*)d_sink, q ? I2 : I1); LAUNCHED();
          auto h = fetch(2 * wgs);
          std::vector<double> v; for (int g = 0; g < wgs; ++g) v.push_back(h[2 * g]);
          t[q] = median(v);
        }
        slopes.push_back((t[1] - t[0]) / (I2 - I1) / (kind == 0 ? 1 : 4));
      }
      double s = median(slopes);
      double flop = 2.0 * 64 * w.n * 16;
      Obj st;
      if (kind == 0) st.n("latency_cycles", s);
      else st.n("issue_interval_per_wg", s).n("flop_per_cycle_per_sm", flop * wgs / s);
      record(kind == 0 ? "wgmma_latency" : "wgmma_throughput", Obj().n("n", w.n).t("ab", w.ab).t("dtype", "f16").n("warpgroups", wgs), st, slopes);
    }
  }
}

static void bench_nontensor() {
  const u32 iters = 4096;
  for (u32 op : {0u, 1u}) for (u32 bg : {0u, 1u}) {
    std::vector<double> cpi, bgrate;
    for (int rep = 0; rep < 3; ++rep) {
      nontensor_bg<<<1, 256>>>(d_out, (float*)d_sink, iters, op, bg); LAUNCHED();
      auto h = fetch(10);
      for (int w = 0; w < 4; ++w) cpi.push_back((double)h[2 * w] / (iters * 64.0));
      if (bg) bgrate.push_back(h[9] ? 2.0 * 64 * 256 * 16 * h[8] / h[9] : 0);
    }
    record("nontensor_under_wgmma", Obj().t("op", op ? "mufu_rsqrt" : "ffma").n("background_wgmma", bg).n("fg_warps", 4).n("chains", 8),
           Obj().n("cycles_per_warp_instr", median(cpi)).n("bg_wgmma_flop_per_cycle", bg ? median(bgrate) : 0));
  }
}

// ---------------- memory ----------------
static std::vector<u32> perm_chain(size_t n_lines, size_t line_elems, unsigned seed) {
  std::vector<u32> order(n_lines); std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(seed); std::shuffle(order.begin(), order.end(), rng);
  std::vector<u32> a(n_lines * line_elems, 0);
  for (size_t i = 0; i < n_lines; ++i) a[(size_t)order[i] * line_elems] = (u32)(order[(i + 1) % n_lines] * line_elems);
  return a;
}
static void chase(const char* level, size_t region_bytes, u32 mode_cg, bool warm, bool flush, u32 steps) {
  size_t lines = region_bytes / 128;
  auto h = perm_chain(lines, 32, 1234);
  u32* d = (u32*)d_big;
  CK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  // start at line reached after some steps so the timed part is not the warm part's beginning
  u32 start = 0; for (size_t k = 0; k < 7; ++k) start = h[start];
  std::vector<double> lat, tot;
  for (int rep = 0; rep < 2; ++rep) {
    u32 st = start;
    if (!warm) { for (int k = 0; k < 5000 * (rep + 1); ++k) st = h[st]; }  // fresh lines each rep
    if (flush) flush_l2();
    u32 ws = warm ? (u32)std::min<size_t>(lines, 1u << 20) : 0;
    pchase<<<1, 32>>>(d, d_out, (u32)h.size(), 0, st, ws, steps, mode_cg | 2); LAUNCHED();
    auto o = fetch(4 + steps);
    for (u32 i = 1; i < steps; ++i) lat.push_back(o[4 + i]);
    if (flush) flush_l2();
    if (!warm) { for (int k = 0; k < 20000; ++k) st = h[st]; }
    pchase<<<1, 32>>>(d, d_out, (u32)h.size(), 0, st, ws, steps, mode_cg); LAUNCHED();
    o = fetch(4);
    tot.push_back((double)o[0] / steps);
  }
  std::vector<double> s = lat; std::sort(s.begin(), s.end());
  auto pct = [&](double p) { return s.empty() ? -1 : s[(size_t)(p * (s.size() - 1))]; };
  record("pchase", Obj().t("level", level).n("region_bytes", (double)region_bytes).t("load", mode_cg ? "ld.global.cg" : "ld.global").n("steps", steps),
         Obj().n("per_load_median", median(lat)).n("p10", pct(0.1)).n("p25", pct(0.25)).n("p75", pct(0.75)).n("p90", pct(0.9))
              .n("chain_avg_cycles", median(tot)), lat);
}
static void bench_memory() {
  chase("l1", 16 << 10, 0, true, false, 2048);
  chase("l2", 4 << 20, 1, true, false, 4096);
  chase("l2_16MB", 16 << 20, 1, true, false, 4096);
  chase("l2_first_touch", 16 << 20, 1, false, false, 4096);
  chase("dram", 32 << 20, 1, false, true, 2048);
  chase("dram_1GB", BIG, 1, false, true, 2048);
  // shared memory
  for (u32 stride : {0u, 1u, 2u, 4u, 8u, 16u, 32u}) {
    std::vector<double> lat, tp;
    const u32 iters = 512;
    for (int rep = 0; rep < 3; ++rep) {
      smem_bank_lat<<<1, 32>>>(d_out, stride, iters); LAUNCHED();
      lat.push_back((double)fetch(1)[0] / (iters * 8));
      smem_bank_tput<<<1, 512>>>(d_out, stride, iters); LAUNCHED();
      auto h = fetch(32); std::vector<double> v; for (int w = 0; w < 16; ++w) v.push_back(h[2 * w]);
      tp.push_back(median(v) / (iters * 8.0 * 16));  // SM cycles per warp-wide load
    }
    int ways = stride == 0 ? 1 : (int)std::__gcd(stride, 32u);
    record("smem_bank", Obj().n("stride_words", stride).n("ways", ways),
           Obj().n("latency_cycles", median(lat)).n("sm_cycles_per_warp_load", median(tp)));
  }
  {
    std::vector<double> bpc; const u32 iters = 2048;
    for (int rep = 0; rep < 3; ++rep) {
      smem_bw<<<1, 1024>>>(d_out, d_sink, iters); LAUNCHED();
      auto h = fetch(64); u64 s0 = ~0ull, e1 = 0;
      for (int w = 0; w < 32; ++w) { s0 = std::min<u64>(s0, h[2 * w]); e1 = std::max<u64>(e1, h[2 * w + 1]); }
      bpc.push_back(1024.0 * 64 * iters / (double)(e1 - s0));
    }
    record("smem_bandwidth", Obj().n("threads", 1024).n("vector_bytes", 16), Obj().n("bytes_per_cycle_per_sm", median(bpc)));
  }
}

static float time_ms(std::function<void()> f, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(); LAUNCHED();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
    float m; CK(cudaEventElapsedTime(&m, a, b)); ms.push_back(m);
  }
  return (float)median(ms);
}
static void bench_bandwidth(int sms) {
  // HBM read: 1 GiB (16x the L2)
  u64 nvec = BIG / 16;
  for (int bpsm : {4, 8, 16}) {
    int grid = sms * bpsm;
    float ms = time_ms([&] { stream_read<<<grid, 256>>>((const uint4*)d_big, nvec, d_sink, 1, 0); }, 10);
    record("hbm_read", Obj().n("bytes", (double)BIG).n("grid", grid).n("block", 256), Obj().n("gb_per_s", BIG / ms / 1e6).n("ms", ms));
  }
  float ms = time_ms([&] { stream_copy<<<sms * 8, 256>>>((const uint4*)d_big, (uint4*)d_scratch, (SCRATCH / 2) / 16); }, 10);
  record("hbm_copy", Obj().n("bytes_each_way", (double)(SCRATCH / 2)).n("grid", sms * 8), Obj().n("gb_per_s_read_plus_write", SCRATCH / ms / 1e6).n("ms", ms));
  for (u64 reg : {8ull << 20, 24ull << 20}) {
    float m2 = time_ms([&] { stream_read<<<sms * 8, 256>>>((const uint4*)d_big, reg / 16, d_sink, 20, 1); }, 5);
    record("l2_read", Obj().n("region_bytes", (double)reg).n("passes", 20).t("load", "ld.global.cg"), Obj().n("gb_per_s", reg * 20.0 / m2 / 1e6).n("ms", m2));
  }
}

static void bench_dsm(int sms) {
  for (int csize : {2, 4}) for (int grid : {csize, (sms / csize) * csize / 2 * 2}) for (u32 op : {0u, 1u, 2u}) {
    cudaLaunchConfig_t cfg = {}; cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = csize; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(grid / csize * csize); cfg.blockDim = dim3(512); cfg.attrs = at; cfg.numAttrs = 1;
    const u32 iters = 1024;
    std::vector<double> bpc;
    bool ok = true;
    for (int rep = 0; rep < 3 && ok; ++rep) {
      cudaError_t e = cudaLaunchKernelEx(&cfg, dsm_bw, d_out, d_sink, iters, op);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { g_errors.push_back(std::string("dsm_bw: ") + cudaGetErrorString(e)); cudaGetLastError(); ok = false; break; }
      auto h = fetch(2 * cfg.gridDim.x);
      for (u32 b = 0; b < cfg.gridDim.x; ++b) bpc.push_back(512.0 * 64 * iters / h[2 * b]);
    }
    if (ok) record("dsm_bandwidth", Obj().n("cluster", csize).n("ctas", cfg.gridDim.x).t("op", op == 0 ? "remote_load" : op == 1 ? "remote_store" : "local_load"),
                   Obj().n("bytes_per_cycle_per_sm_median", median(bpc)).n("bytes_per_cycle_per_sm_min", vmin(bpc)));
  }
  for (u32 remote : {0u, 1u}) {
    cudaLaunchConfig_t cfg = {}; cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = 2; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(2); cfg.blockDim = dim3(32); cfg.attrs = at; cfg.numAttrs = 1;
    std::vector<double> c;
    for (int rep = 0; rep < 3; ++rep) {
      cudaError_t e = cudaLaunchKernelEx(&cfg, dsm_lat, d_out, 4096u, remote);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { g_errors.push_back(std::string("dsm_lat: ") + cudaGetErrorString(e)); cudaGetLastError(); break; }
      c.push_back((double)fetch(1)[0] / 4096);
    }
    record("dsm_latency", Obj().t("target", remote ? "remote" : "local_via_cluster_addr").n("cluster", 2), Obj().n("latency_cycles", median(c)));
  }
}

// ---------------- L1 with many lines per warp-load ----------------
static void bench_l1(int sms) {
  // hit: the same lines every iteration (warmed by the first); miss: fresh 256-B spans per lane every iteration
  struct C { u32 lane_stride; u32 advance; const char* kind; };
  const C cases[] = {{2, 0, "hit"}, {16, 0, "hit"}, {64, 0, "hit"}, {256, 0, "hit"}, {6000, 0, "hit"},
                     {256, 8192, "miss"}, {6000, 256, "miss"}};
  for (const C& c : cases) {
    for (int warps : {1, 2, 4, 8, 16}) {
      const u32 iters = c.advance ? 8 : 64;
      // miss mode: lane_stride 256 -> the warp's 8 KiB span moves by `advance` each iteration; lane_stride 6000 ->
      // each lane walks along its own 6000-B row (fresh 256 B per iteration). Fewer blocks keep the footprint in L2.
      const u32 warp_stride = c.advance ? (c.lane_stride == 256 ? 8192u * iters : 32u * c.lane_stride) : 0u;
      const size_t block_stride = (size_t)warp_stride * warps + 32u * c.lane_stride + 8192;
      const int blocks = c.advance ? (c.lane_stride == 256 ? 32 : 16) : sms;
      if ((size_t)blocks * block_stride + 256 > BIG) { g_errors.push_back("l1_scatter footprint"); continue; }
      std::vector<double> per_load, sm_rate;
      for (int rep = 0; rep < 3; ++rep) {
        // warm L2 with the region (misses then come from L2, not DRAM)
        l1_scatter<<<blocks, 32 * warps>>>(d_big, d_out, d_sink, c.lane_stride, warp_stride, (u32)block_stride, c.advance, iters); LAUNCHED();
        l1_scatter<<<blocks, 32 * warps>>>(d_big, d_out, d_sink, c.lane_stride, warp_stride, (u32)block_stride, c.advance, iters); LAUNCHED();
        auto h = fetch(2 * (size_t)blocks * warps);
        std::vector<double> cyc;
        for (int g = 0; g < blocks * warps; ++g) cyc.push_back((double)h[2 * g]);
        double m = median(cyc), mx = *std::max_element(cyc.begin(), cyc.end());
        per_load.push_back(m / (iters * 32.0));
        sm_rate.push_back(mx / (iters * 32.0 * warps));   // SM cycles per warp-load (all warps of the SM)
      }
      u32 lines = c.lane_stride >= 128 ? 32u : (32u * c.lane_stride + 127) / 128;
      record("l1_scatter", Obj().n("lane_stride", c.lane_stride).n("lines_per_warp_load", lines).t("kind", c.kind)
                 .n("warps_per_sm", warps).n("iters", iters).n("advance", c.advance).n("blocks", blocks)
                 .n("footprint_bytes", (double)blocks * block_stride),
             Obj().n("cycles_per_warp_load", median(per_load)).n("sm_cycles_per_warp_load", median(sm_rate))
                 .n("sm_cycles_per_line", median(sm_rate) / lines));
    }
  }
}

// ---------------- CTA turnaround (launch latency) ----------------
static void bench_launch(int sms) {
  const int smem = 200 * 1024;   // one CTA per SM
  smem_attr(cta_turnaround, smem);
  for (int threads : {32, 256, 1024}) {
    for (u32 spin : {2000u, 20000u}) {
      const int waves = 8, blocks = sms * waves;
      std::vector<double> gaps;
      for (int rep = 0; rep < 3; ++rep) {
        cta_turnaround<<<blocks, threads, smem>>>(d_out, spin); LAUNCHED();
        auto h = fetch(4 * (size_t)blocks);
        std::vector<std::vector<std::pair<u64, u64>>> per(sms + 8);
        for (int b = 0; b < blocks; ++b) per[h[4 * b] % (sms + 8)].push_back({h[4 * b + 1], h[4 * b + 2]});
        for (auto& v : per) {
          std::sort(v.begin(), v.end());
          for (size_t i = 1; i < v.size(); ++i)
            if (v[i].first >= v[i - 1].second) gaps.push_back((double)(v[i].first - v[i - 1].second));
        }
      }
      std::vector<double> s = gaps; std::sort(s.begin(), s.end());
      auto pct = [&](double p) { return s.empty() ? -1 : s[(size_t)(p * (s.size() - 1))]; };
      record("cta_turnaround", Obj().n("threads", threads).n("spin_cycles", spin).n("ctas_per_sm", 1).n("waves", waves),
             Obj().n("gap_median", median(gaps)).n("p10", pct(0.1)).n("p90", pct(0.9)).n("n", (double)gaps.size()));
    }
  }
}

// ---------------- DRAM latency under load ----------------
static void bench_loaded(int sms) {
  // chain: random cyclic permutation over 256 MiB of 128-B lines (in d_big); background: the other 512 MiB of d_big
  const size_t chain_bytes = 256ull << 20, lines = chain_bytes / 128;
  auto h = perm_chain(lines, 32, 4321);
  u32* chain = (u32*)d_big;
  CK(cudaMemcpy(chain, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  const uint4* bg = (const uint4*)(d_big + (512ull << 20));
  const unsigned long long bg_n = (512ull << 20) / 16;
  u32* flag = d_sink + 1024;
  u32 st = 0;
  for (int blocks : {0, 33, 66, 132, 264, 528, 1056}) {
    std::vector<double> lat, gbs;
    for (int rep = 0; rep < 3; ++rep) {
      for (int k = 0; k < 3000; ++k) st = h[st];          // fresh part of the chain each run
      flush_l2();
      CK(cudaMemset(flag, 0, 4));
      std::vector<u64> init = {0, 0, 0, ~0ull, 0, 0, 0, 0};
      CK(cudaMemcpy(d_out, init.data(), init.size() * 8, cudaMemcpyHostToDevice));
      loaded_latency<<<1 + blocks, 256>>>(chain, st, 1500, bg, bg_n, d_out, flag); LAUNCHED();
      auto o = fetch(8);
      lat.push_back((double)o[0] / o[1]);
      if (blocks) gbs.push_back((double)o[2] / (double)(o[4] - o[3]));   // bytes per ns = GB/s
    }
    record("loaded_latency", Obj().n("bg_blocks", blocks).n("bg_threads", 256).n("chain_region_bytes", (double)chain_bytes),
           Obj().n("latency_cycles", median(lat)).n("bg_gb_per_s", gbs.empty() ? 0.0 : median(gbs)));
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: bench OUT.json [quick]\n"); return 1; }
  g_quick = argc > 2;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int drv = 0, rt = 0, clk_khz = 0, memclk_khz = 0; CK(cudaDriverGetVersion(&drv)); CK(cudaRuntimeGetVersion(&rt));
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0); cudaDeviceGetAttribute(&memclk_khz, cudaDevAttrMemoryClockRate, 0);
  CK(cudaMalloc(&d_out, OUT_WORDS * 8)); CK(cudaMalloc(&d_sink, 1 << 24)); CK(cudaMalloc(&d_big, BIG)); CK(cudaMalloc(&d_scratch, SCRATCH));
  CK(cudaMemset(d_big, 0x5a, BIG)); CK(cudaDeviceSynchronize());
  double mhz0 = clock_mhz(1, "start_1sm");
  clock_mhz(p.multiProcessorCount, "start_all_sms");
  struct { const char* name; std::function<void()> f; } sections[] = {
    {"tma", bench_tma}, {"mbarrier", bench_mbar}, {"mma_sync", bench_mma}, {"wgmma", bench_wgmma},
    {"nontensor", bench_nontensor}, {"memory", bench_memory},
    {"bandwidth", [&] { bench_bandwidth(p.multiProcessorCount); }}, {"dsm", [&] { bench_dsm(p.multiProcessorCount); }},
    {"l1", [&] { bench_l1(p.multiProcessorCount); }}, {"launch", [&] { bench_launch(p.multiProcessorCount); }},
    {"loaded", [&] { bench_loaded(p.multiProcessorCount); }}};
  for (auto& s : sections) {
    if (argc > 3 && !strstr(argv[3], s.name)) continue;
    fprintf(stderr, "== %s\n", s.name);
    s.f();
    clock_mhz(1, (std::string("after_") + s.name).c_str());
  }
  FILE* f = fopen(argv[1], "w");
  Obj dev; dev.t("name", p.name).n("sm_count", p.multiProcessorCount).n("cc_major", p.major).n("cc_minor", p.minor)
      .n("l2_bytes", p.l2CacheSize).n("smem_per_block_optin", (double)p.sharedMemPerBlockOptin).n("smem_per_sm", (double)p.sharedMemPerMultiprocessor)
      .n("global_mem_bytes", (double)p.totalGlobalMem).n("cuda_driver_version", drv).n("cuda_runtime_version", rt)
      .n("clock_rate_attr_khz", clk_khz).n("mem_clock_attr_khz", memclk_khz).n("sm_mhz_probe_start", mhz0);
  fprintf(f, "{\"device\":%s,\n\"results\":[\n", dev.str().c_str());
  for (size_t i = 0; i < g_results.size(); ++i) fprintf(f, "%s%s\n", g_results[i].c_str(), i + 1 < g_results.size() ? "," : "");
  fprintf(f, "],\n\"errors\":[");
  for (size_t i = 0; i < g_errors.size(); ++i) fprintf(f, "%s\"%s\"", i ? "," : "", g_errors[i].c_str());
  fprintf(f, "]}\n");
  fclose(f);
  fprintf(stderr, "wrote %s (%zu results, %zu errors)\n", argv[1], g_results.size(), g_errors.size());
  return 0;
}
