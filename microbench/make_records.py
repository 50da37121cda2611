"""Write launch records (launch-record/1) for the simulator's replay tests under workloads/microbench/<name>/.

Each record's kernel.ptx is the single .entry extracted from `nvcc -ptx -arch=sm_90a src/<file>.cu` (the same
source the H200 ran), launch.json says how to launch it; `check` is omitted: the kernels write %clock64 deltas
into the `out` buffer (layout documented at each kernel in src/). source.hardware names the matching result
in microbench/results/h200_2026-12-02.json (bench + params) so a replay test can compare.

usage: python3 microbench/make_records.py [--nvcc nvcc]
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEST = os.path.join(ROOT, "workloads", "microbench")
RESULTS = "microbench/results/h200_2026-12-02.json"
L1_RESULTS = "microbench/results/h200_l1_2026-12-02.json"
LAUNCH_RESULTS = "microbench/results/h200_launch_2026-12-02.json"
STREAM_RESULTS = "microbench/results/h200_stream_sizes_2026-12-03/stream_sizes.csv"


def compile_ptx(nvcc, src):
    out = os.path.join(tempfile.mkdtemp(), os.path.basename(src)[:-3] + ".ptx")
    subprocess.run([nvcc, "-ptx", "-arch=sm_90a", "-O3", "-o", out, src], check=True, cwd=os.path.join(HERE, "src"))
    return open(out).read()


def extract_entry(ptx, entry):
    """Header + module-level declarations + the one .entry (brace-matched)."""
    m = re.search(r"(?:^// \.globl\s+%s\s*\n)?^\.(?:visible|weak)?\s*\.entry\s+%s\s*\(" % (entry, entry), ptx, re.M)
    if not m:
        raise KeyError(entry)
    start = ptx.index(".entry " + entry + "(")
    start = ptx.rfind("\n", 0, start) + 1
    depth, i, opened = 0, ptx.index("(", start), False
    while True:
        c = ptx[i]
        if c == "{":
            depth += 1; opened = True
        elif c == "}":
            depth -= 1
            if opened and depth == 0:
                break
        i += 1
    body = ptx[start:i + 1]
    first = re.search(r"^(?://.*\n|\s*\n)*(?:\.visible|\.weak|\.entry)", ptx[ptx.index(".address_size"):], re.M)
    head_end = ptx.index(".address_size")
    head_end = ptx.index("\n", head_end) + 1
    header = ptx[:head_end]
    # module-level declarations (extern shared, globals) between header and the first entry/func
    first_def = min([p for p in (ptx.find("\n.visible .entry"), ptx.find("\n.entry"), ptx.find("\n.visible .func"),
                                 ptx.find("\n.func")) if p > 0] or [len(ptx)])
    decls = "\n".join(l for l in ptx[head_end:first_def].splitlines() if l.startswith((".extern", ".global", ".shared", ".const")))
    if ".func" in body or re.search(r"\bcall(\.uni)?\b", body):
        raise RuntimeError(f"{entry}: calls a .func; extraction would be incomplete")
    return header + "\n" + decls + ("\n\n" if decls else "\n") + "\t// .globl\t" + entry + "\n" + body + "\n"


def nvcc_version(nvcc) -> str:
    """The release line of ``nvcc --version`` ("Cuda compilation tools, release 13.0, V13.0.88")."""
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2]


def write_record(name, ptx, entry, *, src, generator, what, hardware, compiler, grid, block, cluster=(1, 1, 1),
                 shared_bytes=0, buffers, params):
    """Write ``workloads/microbench/<name>/``: the entry's PTX (from the module ``ptx`` of ``microbench/src/<src>``),
    its launch.json and the ptxas facts (:func:`_annotate`)."""
    d = os.path.join(DEST, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "kernel.ptx"), "w").write(extract_entry(ptx, entry))
    lj = {"format": "launch-record/1", "name": name,
          "source": {"compiler": compiler, "command": "nvcc -ptx -arch=sm_90a -O3",
                     "kernel": f"microbench/src/{src}:{entry}", "target": "sm_90a", "generator": generator,
                     "what": what, "hardware": hardware},
          "ptx": "kernel.ptx", "entry": entry, "grid": list(grid), "block": list(block), "cluster": list(cluster),
          "shared_bytes": shared_bytes, "buffers": buffers, "params": params}
    json.dump(lj, open(os.path.join(d, "launch.json"), "w"), indent=1)
    _annotate(d)


def rec(name, src, entry, grid, block, buffers, params, shared=0, cluster=(1, 1, 1), note="", hw=None):
    return dict(name=name, src=src, entry=entry, grid=list(grid), block=list(block), cluster=list(cluster),
                shared=shared, buffers=buffers, params=params, note=note, hw=hw)


OUT = lambda n: {"dtype": "uint64", "shape": [n], "init": "poison"}
SRC = {"dtype": "float16", "shape": [1 << 20], "init": {"normal": 0.1}}  # 2 MiB


def records():
    R = []
    for n in range(1, 25):
        R.append(rec(f"tma_issue_n{n:02d}", "k_tma.cu", f"tma_issue_n{n}", [1, 1, 1], [32, 1, 1],
                     {"src": SRC, "out": OUT(3 * 4)},
                     [{"ptr": "src"}, {"ptr": "out"}, {"u32": 1024}, {"u64": 0}, {"u32": 4}, {"u32": 0}],
                     shared=128 + n * 1024,
                     note="one thread issues N back-to-back cp.async.bulk (1 KiB each) on one mbarrier; 4 reps from the "
                          "same source (rep 0 cold, reps 1-3 L2-hot). out[3r]=issue span, out[3r+1]=completion, out[3r+2]=smid",
                     hw={"bench": "tma_issue", "params": {"n": n, "bytes": 1024, "level": "l2"}}))
    R.append(rec("tma_4tx_serial", "k_tma.cu", "tma_serial4", [1, 1, 1], [32, 1, 1], {"src": SRC, "out": OUT(8)},
                 [{"ptr": "src"}, {"ptr": "out"}, {"u32": 1024}, {"u64": 0}, {"u32": 4}], shared=128 + 4 * 1024,
                 note="4 x (issue 1 KiB bulk copy, wait); out[2r]=cycles for the four",
                 hw={"bench": "tma_4tx", "params": {"bytes": 1024, "level": "l2"}, "stat": "serial_completion_median"}))
    R.append(rec("tma_4tx_pipelined", "k_tma.cu", "tma_issue_n4", [1, 1, 1], [32, 1, 1], {"src": SRC, "out": OUT(12)},
                 [{"ptr": "src"}, {"ptr": "out"}, {"u32": 1024}, {"u64": 0}, {"u32": 4}, {"u32": 0}], shared=128 + 4 * 1024,
                 note="4 bulk copies back to back from one warp, one wait",
                 hw={"bench": "tma_4tx", "params": {"bytes": 1024, "level": "l2"}, "stat": "pipelined_completion_median"}))
    R.append(rec("tma_4tx_parallel", "k_tma.cu", "tma_parallel4", [1, 1, 1], [128, 1, 1], {"src": SRC, "out": OUT(4 * 9)},
                 [{"ptr": "src"}, {"ptr": "out"}, {"u32": 1024}, {"u64": 0}, {"u32": 4}], shared=128 + 4 * 1024,
                 note="lane 0 of each of 4 warps issues one bulk copy at once; out[8r+2w]/[8r+2w+1]=absolute clocks "
                      "before/after issue, out[32+r]=absolute clock at completion",
                 hw={"bench": "tma_4tx", "params": {"bytes": 1024, "level": "l2"}, "stat": "parallel_issue_span_median"}))
    for b in (1024, 4096, 16384):
        R.append(rec(f"tma_size_{b}", "k_tma.cu", "tma_issue_n1", [1, 1, 1], [32, 1, 1], {"src": SRC, "out": OUT(12)},
                     [{"ptr": "src"}, {"ptr": "out"}, {"u32": b}, {"u64": 0}, {"u32": 4}, {"u32": 0}], shared=128 + b,
                     note="one bulk copy of `bytes`: completion staircase point",
                     hw={"bench": "tma_size", "params": {"bytes": b, "level": "l2"}, "stat": "completion_median"}))
    R.append(rec("tma_stream_16k", "k_tma.cu", "tma_stream", [1, 1, 1], [32, 1, 1], {"src": SRC, "out": OUT(2)},
                 [{"ptr": "src"}, {"ptr": "out"}, {"u32": 16384}, {"u32": 8}, {"u32": 64}, {"u64": 1 << 21}, {"u64": 0}],
                 shared=1024 + 8 * 16384, note="8-stage ring of 16 KiB bulk copies, 64 chunks over a 2 MiB region; out[0]=cycles",
                 hw={"bench": "tma_stream", "params": {"ctas": 1, "stages": 8, "chunk_bytes": 16384, "level": "l2"}}))
    forms = [("test_wait", 1, 0, 1), ("try_wait", 2, 0, 1), ("try_wait_hint", 3, 1000, 1), ("control_alu", 0, 0, 1),
             ("test_wait_incomplete", 1, 0, 0)]
    for nm, mode, hint, complete in forms:
        R.append(rec(f"mbarrier_{nm}", "k_mbar.cu", "mbar_wait_chain", [1, 1, 1], [32, 1, 1], {"out": OUT(4)},
                     [{"ptr": "out"}, {"u32": mode}, {"u32": hint}, {"u32": 256}, {"u32": complete}, {"u32": 0}, {"u32": 0}],
                     note="dependent chain of 256 waits (predicate feeds the next address); out[0]=cycles, out[1]=iters",
                     hw={"bench": "mbarrier_wait", "params": {"form": nm.replace("_incomplete", ""), "complete": complete}
                         | ({"hint_ns": hint} if mode == 3 else {}), "stat": "cycles_per_link"}))
    for dt, shape in (("f16", "m16n8k16"), ("bf16", "m16n8k8"), ("tf32", "m16n8k8"), ("s8", "m16n8k32")):
        for chains, warps in ((1, 1), (8, 1), (8, 4)):
            R.append(rec(f"mma_{dt}_{shape}_c{chains}_w{warps}", "k_mma.cu", f"mma_{dt}_{shape}_c{chains}", [1, 1, 1],
                         [32 * warps, 1, 1], {"out": OUT(2 * warps), "sink": {"dtype": "uint32", "shape": [32 * warps], "init": "poison"}},
                         [{"ptr": "out"}, {"ptr": "sink"}, {"u32": 64}],
                         note=f"each warp: 64 iterations x {chains} independent mma.sync chains; out[2w]=cycles",
                         hw={"bench": "mma_sync", "params": {"dtype": dt, "shape": shape, "chains": chains, "warps": warps},
                             "stat": "cycles_per_mma_per_warp"}))
    for kind in ("lat", "tput"):
        for wgs in ((1,) if kind == "lat" else (1, 2)):
            R.append(rec(f"wgmma_{kind}_ss_m64n128k16_wg{wgs}", "k_wgmma.cu", f"wgmma_{kind}_ss_n128", [1, 1, 1], [128 * wgs, 1, 1],
                         {"out": OUT(2 * wgs), "sink": {"dtype": "float32", "shape": [128 * wgs], "init": "poison"}},
                         [{"ptr": "out"}, {"ptr": "sink"}, {"u32": 16}],
                         note="16 iterations; lat: 1 wgmma + commit + wait(0) each; tput: 4 wgmma + commit + wait(1) each",
                         hw={"bench": "wgmma_latency" if kind == "lat" else "wgmma_throughput",
                             "params": {"n": 128, "ab": "ss", "warpgroups": wgs}}))
    for op, bg in ((0, 0), (0, 1), (1, 0), (1, 1)):
        R.append(rec(f"nontensor_{'ffma' if op == 0 else 'mufu'}_bg{bg}", "k_wgmma.cu", "nontensor_bg", [1, 1, 1], [256, 1, 1],
                     {"out": OUT(10), "sink": {"dtype": "float32", "shape": [256], "init": "poison"}},
                     [{"ptr": "out"}, {"ptr": "sink"}, {"u32": 64}, {"u32": op}, {"u32": bg}],
                     note="warps 4-7: 64 x 64 FFMA/MUFU per warp; warps 0-3: background m64n256k16 wgmma while bg=1",
                     hw={"bench": "nontensor_under_wgmma", "params": {"op": "ffma" if op == 0 else "mufu_rsqrt", "background_wgmma": bg}}))
    for stride in (1, 2, 4, 8, 16, 32):
        R.append(rec(f"smem_bank_{stride:02d}way", "k_mem.cu", "smem_bank_lat", [1, 1, 1], [32, 1, 1], {"out": OUT(2)},
                     [{"ptr": "out"}, {"u32": stride}, {"u32": 32}],
                     note="one warp, dependent chain of 256 ld.shared at lane*stride words (n-way bank conflict); out[0]=cycles",
                     hw={"bench": "smem_bank", "params": {"stride_words": stride}, "stat": "latency_cycles"}))
    R.append(rec("hbm_stream_read_32MiB", "k_mem.cu", "stream_read", [528, 1, 1], [256, 1, 1],
                 {"src": {"dtype": "float32", "shape": [1 << 23], "init": {"normal": 1.0}},
                  "sink": {"dtype": "uint32", "shape": [528 * 256], "init": "poison"}},
                 [{"ptr": "src"}, {"u64": (1 << 25) // 16}, {"ptr": "sink"}, {"u32": 1}, {"u32": 0}],
                 note="grid-stride 16-byte loads over 32 MiB (the H200 run used 1 GiB); bandwidth = bytes / simulated time",
                 hw={"bench": "hbm_read", "params": {"grid": 528}, "stat": "gb_per_s"}))
    R.append(rec("pchase_l1", "k_mem.cu", "pchase", [1, 1, 1], [32, 1, 1],
                 {"arr": {"dtype": "uint32", "shape": [4096], "init": "zeros"}, "out": OUT(4 + 256)},
                 [{"ptr": "arr"}, {"ptr": "out"}, {"u32": 4096}, {"u32": 32}, {"u32": 0}, {"u32": 128}, {"u32": 256}, {"u32": 2}],
                 note="kernel builds arr[i]=(i+32)%4096 (128-byte stride over 16 KiB), warms 128 steps, times 256 ld.global; "
                      "out[4+i]=per-load cycles",
                 hw={"bench": "pchase", "params": {"level": "l1"}, "stat": "per_load_median"}))
    R.append(rec("pchase_l2", "k_mem.cu", "pchase", [1, 1, 1], [256, 1, 1],
                 {"arr": {"dtype": "uint32", "shape": [1 << 20], "init": "zeros"}, "out": OUT(4 + 512)},
                 [{"ptr": "arr"}, {"ptr": "out"}, {"u32": 1 << 20}, {"u32": 32 * 97}, {"u32": 0}, {"u32": 0}, {"u32": 512}, {"u32": 3}],
                 note="kernel writes a chain over 4 MiB (stride 97 lines; the stores leave it L2-resident), times 512 "
                      "ld.global.cg; out[4+i]=per-load cycles (H200: near/far L2 bimodal)",
                 hw={"bench": "pchase", "params": {"level": "l2_first_touch"}, "stat": "per_load_median"}))
    R.append(rec("smem_bandwidth", "k_mem.cu", "smem_bw", [1, 1, 1], [1024, 1, 1],
                 {"out": OUT(64), "sink": {"dtype": "uint32", "shape": [1024], "init": "poison"}},
                 [{"ptr": "out"}, {"ptr": "sink"}, {"u32": 16}],
                 note="1024 threads x 4 x 16-byte ld.volatile.shared per iteration; out[2w]/[2w+1]=absolute start/end clocks",
                 hw={"bench": "smem_bandwidth", "params": {}, "stat": "bytes_per_cycle_per_sm"}))
    R.append(rec("dsm_remote_latency", "k_dsm.cu", "dsm_lat", [2, 1, 1], [32, 1, 1], {"out": OUT(4)},
                 [{"ptr": "out"}, {"u32": 256}, {"u32": 1}], cluster=(2, 1, 1),
                 note="cluster of 2: CTA 0 thread 0 chases 256 dependent ld.shared::cluster in CTA 1's shared memory",
                 hw={"bench": "dsm_latency", "params": {"target": "remote"}, "stat": "latency_cycles"}))
    for op, nm in ((0, "remote_load"), (1, "remote_store")):
        R.append(rec(f"dsm_bw_{nm}", "k_dsm.cu", "dsm_bw", [2, 1, 1], [512, 1, 1],
                     {"out": OUT(4), "sink": {"dtype": "uint32", "shape": [1024], "init": "poison"}},
                     [{"ptr": "out"}, {"ptr": "sink"}, {"u32": 16}, {"u32": op}], cluster=(2, 1, 1),
                     note="cluster of 2, 512 threads each move 4 x 16 B per iteration to/from the peer CTA",
                     hw={"bench": "dsm_bandwidth", "params": {"cluster": 2, "ctas": 2, "op": nm}, "stat": "bytes_per_cycle_per_sm_median"}))
    # k_l1.cu l1_scatter (results in h200_l1_2026-12-02.json): 4 blocks are enough, the L1 is per SM
    for kind, stride, adv, warps in (("hit", 16, 0, 8), ("hit", 64, 0, 8), ("hit", 256, 0, 8), ("hit", 6000, 0, 8),
                                     ("hit", 6000, 0, 1), ("miss", 6000, 256, 8)):
        iters = 8 if adv else 16
        wstride = 32 * stride if adv else 0
        bstride = wstride * warps + 32 * stride + 8192
        blocks = 4
        R.append(rec(f"l1_scatter_{kind}_s{stride}_w{warps}", "k_l1.cu", "l1_scatter", [blocks, 1, 1], [32 * warps, 1, 1],
                     {"base": {"dtype": "uint8", "shape": [blocks * bstride + 256], "init": "zeros"},
                      "out": OUT(2 * blocks * warps), "sink": {"dtype": "uint32", "shape": [4], "init": "zeros"}},
                     [{"ptr": "base"}, {"ptr": "out"}, {"ptr": "sink"}, {"u32": stride}, {"u32": wstride},
                      {"u32": bstride}, {"u32": adv}, {"u32": iters}],
                     note=f"{warps} warps x {iters} iterations x 32 ld.global.b16 at lane*{stride} + 8j bytes "
                          f"({kind}: {'fresh 256 B per lane each iteration' if adv else 'same lines every iteration'}); "
                          "out[2g] = cycles of warp g",
                     hw={"results": L1_RESULTS, "bench": "l1_scatter",
                         "params": {"lane_stride": stride, "kind": kind, "warps_per_sm": warps},
                         "stat": "sm_cycles_per_warp_load"}))
    # k_launch.cu cta_turnaround (results in h200_launch_2026-12-02.json): 200 KiB dynamic shared memory -> one CTA
    # per SM; 2 waves over 132 SMs
    R.append(rec("cta_turnaround_t32", "k_launch.cu", "cta_turnaround", [264, 1, 1], [32, 1, 1], {"out": OUT(4 * 264)},
                 [{"ptr": "out"}, {"u32": 500}], shared=200 * 1024,
                 note="one CTA per SM, 2 waves, 500-cycle spin (the H200 gap does not depend on spin or threads); "
                      "out[4b] = SM, out[4b+1] = first clock, out[4b+2] = last clock of CTA b",
                 hw={"results": LAUNCH_RESULTS, "bench": "cta_turnaround", "params": {"threads": 32, "spin_cycles": 2000},
                     "stat": "gap_median"}))
    # stream_sizes.cu (results in h200_stream_sizes_2026-12-03/, ncu cold L2): one 16-B element per thread, one CTA
    # per 256 threads, as Triton writes elementwise kernels; 4-32 MiB: the sizes whose copies fit in one or two waves
    for mib in (4, 8, 16, 32, 64):
        n = mib * (1 << 20) // 16
        grid = [n // 256, 1, 1]
        vec = lambda init: {"dtype": "uint32", "shape": [4 * n], "init": init}
        hwr = lambda k: {"results": STREAM_RESULTS, "bench": "ncu", "params": {"kernel": k, "size_mib": mib},
                         "stat": "gpc__cycles_elapsed.max"}
        R.append(rec(f"ew_read_{mib}MiB", "stream_sizes.cu", "ew_read", grid, [256, 1, 1],
                     {"src": vec("zeros"), "sink": {"dtype": "uint32", "shape": [16], "init": "poison"}},
                     [{"ptr": "src"}, {"ptr": "sink"}, {"u64": n}],
                     note=f"one 16-B ld.global per thread over {mib} MiB (cold L2)", hw=hwr("ew_read")))
        R.append(rec(f"ew_copy_{mib}MiB", "stream_sizes.cu", "ew_copy", grid, [256, 1, 1],
                     {"src": vec("zeros"), "dst": vec("poison")}, [{"ptr": "src"}, {"ptr": "dst"}, {"u64": n}],
                     note=f"dst[i] = src[i], 16 B per thread, {mib} MiB each way (cold L2)", hw=hwr("ew_copy")))
        R.append(rec(f"ew_triad_{mib}MiB", "stream_sizes.cu", "ew_triad", grid, [256, 1, 1],
                     {"a": vec("zeros"), "b": vec("zeros"), "c": vec("poison")},
                     [{"ptr": "a"}, {"ptr": "b"}, {"ptr": "c"}, {"u64": n}],
                     note=f"c = a * b (fp16x8), {mib} MiB per operand (cold L2)", hw=hwr("ew_triad")))
    return R


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--only", default=None, help="write only the records whose name starts with this prefix")
    a = ap.parse_args()
    ptx = {}
    for f in ("k_tma.cu", "k_mbar.cu", "k_mma.cu", "k_wgmma.cu", "k_mem.cu", "k_dsm.cu", "k_l1.cu", "k_launch.cu",
              "stream_sizes.cu"):
        ptx[f] = compile_ptx(a.nvcc, os.path.join(HERE, "src", f))
    nv = subprocess.run([a.nvcc, "--version"], capture_output=True, text=True).stdout
    nv = (re.findall(r"release [\d.]+, V[\d.]+", nv) or ["nvcc"])[0]
    todo = [r for r in records() if a.only is None or r["name"].startswith(a.only)]
    if os.path.isdir(DEST) and a.only is None:
        for d in os.listdir(DEST):
            if os.path.isfile(os.path.join(DEST, d, "launch.json")):
                shutil.rmtree(os.path.join(DEST, d))
    os.makedirs(DEST, exist_ok=True)
    for r in todo:
        write_record(r["name"], ptx[r["src"]], r["entry"], src=r["src"], generator="microbench/make_records.py",
                     what=r["note"], hardware=dict({"results": RESULTS, **(r["hw"] or {})}), compiler=f"nvcc {nv}",
                     grid=r["grid"], block=r["block"], cluster=r["cluster"], shared_bytes=r["shared"],
                     buffers=r["buffers"], params=r["params"])
    print(f"wrote {len(todo)} records under {os.path.relpath(DEST, ROOT)}")


def _annotate(d):
    """ptxas facts for the three bundled ISAs (the record alone decides its registers: workloads/compiled.py);
    PTX that needs sm_90a features gets the sm_90a block only (needs warpgraph installed, as pip install -e .)."""
    try:
        from warpgraph.core.errors import UserError
        from warpgraph.workloads.compiled import annotate_record
    except ImportError:
        print(f"{d}: warpgraph not importable, no compiled block written (run `warpgraph compile --write`)")
        return
    for isa in ("sm_90a", "sm_100a", "sm_120"):
        try:
            annotate_record(d, isa, prefer="cuda")
        except UserError:
            if isa == "sm_90a":
                raise


if __name__ == "__main__":
    main()
