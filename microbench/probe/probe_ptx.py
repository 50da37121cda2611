"""Insert clock64 probes into a launch record's PTX, so one real launch says when each CTA's thread 0 passed each
mbarrier wait, TMA load issue and wgmma wait (issue 15: the lone CTA's TMA -> mbarrier -> wgmma pipeline
iteration runs ~1,170 cycles on the card and ~740-970 in the model; this measures where the time goes).

Each probe is four or five instructions on thread (0, 0, 0) of the CTA: read %clock64, store (clock, probe id, SM
id) into a module-scope `.global` array `wg_probe`, 16 bytes per probe, `max_probes` slots per CTA (linear CTA
id); the last slot is overwritten once a CTA has more. The kernel's parameters do not change, so the record's
buffers and tensormaps launch it as they are; the host reads `wg_probe` with cuModuleGetGlobal.

Probe ids (what the thread had just done, or was about to do):
  1 start     the kernel's first instruction (after the entry's declarations)
  2 wait      an inline-asm mbarrier.try_wait / test_wait loop had completed
  3 tma       about to issue a cp.async.bulk.tensor global -> shared load
  4 wgwait    a wgmma.wait_group had returned
  5 end       about to leave the kernel (each `ret;`, or the entry's closing brace)
  6 arrive    about to execute a bar.sync / barrier.sync (per-warp mode only)
  7 bar       that bar.sync had returned (per-warp mode only)

Per-warp mode (``warps`` = warps per CTA > 0): lane 0 of every warp records instead, into slots of its own (linear
CTA id * warps + linear thread id / 32), and the barriers are probed too: the spread of a CTA's warps reaching a
bar.sync is how unevenly their loads came back (Nsight Compute's `barrier` stall).
Pure text; needs neither a GPU nor warpgraph.
usage: python3 probe_ptx.py IN.ptx OUT.ptx [--grid-ctas N] [--max-probes N] [--warps W]
"""
import argparse
import re

PROBES = {"start": 1, "wait": 2, "tma": 3, "wgwait": 4, "end": 5, "arrive": 6, "bar": 7}
SLOT_BYTES = 16


def _probe(kind):
    i = PROBES[kind]
    return [f"\t// wg_probe {kind}",
            "\tmul.wide.u32 \t%wgd3, %wgq5, 16;",
            "\tadd.u64 \t%wgd3, %wgd0, %wgd3;",
            "\tmov.u64 \t%wgd2, %clock64;",
            "\t@%wgp0 st.global.u64 \t[%wgd3], %wgd2;",
            f"\t@%wgp0 st.global.v2.u32 \t[%wgd3+8], {{{i}, %wgq6}};",
            "\tadd.u32 \t%wgq5, %wgq5, 1;",
            "\tmin.u32 \t%wgq5, %wgq5, %wgq7;"]


def _prologue(max_probes, warps=0):
    """Recorder predicate %wgp0 and slot base %wgd0: thread (0,0,0) and the CTA's slots, or (``warps`` > 0)
    lane 0 of each warp and that warp's slots."""
    lin = ["\tmov.u32 \t%wgq0, %tid.x;", "\tmov.u32 \t%wgq1, %tid.y;", "\tmov.u32 \t%wgq2, %ntid.x;",
           "\tmad.lo.u32 \t%wgq0, %wgq1, %wgq2, %wgq0;", "\tmov.u32 \t%wgq1, %tid.z;", "\tmov.u32 \t%wgq3, %ntid.y;",
           "\tmul.lo.u32 \t%wgq2, %wgq2, %wgq3;", "\tmad.lo.u32 \t%wgq4, %wgq1, %wgq2, %wgq0;"]  # %wgq4 linear tid
    if warps:
        who = lin + ["\tand.b32 \t%wgq0, %wgq4, 31;", "\tsetp.eq.u32 \t%wgp0, %wgq0, 0;", "\tshr.u32 \t%wgq4, %wgq4, 5;"]
    else:
        who = lin + ["\tsetp.eq.u32 \t%wgp0, %wgq4, 0;", "\tmov.u32 \t%wgq4, 0;"]
    return (["\t// wg_probe prologue: " + ("lane 0 of each warp records; slot base = wg_probe + (linear CTA id * "
                                           f"{warps} + warp) * slots" if warps else
                                           "thread (0,0,0) of each CTA records; slot base = wg_probe + linear CTA id * slots")]
            + who +
            ["\tmov.u32 \t%wgq1, %ctaid.x;", "\tmov.u32 \t%wgq2, %ctaid.y;", "\tmov.u32 \t%wgq3, %nctaid.x;",
             "\tmad.lo.u32 \t%wgq1, %wgq2, %wgq3, %wgq1;", "\tmov.u32 \t%wgq2, %ctaid.z;",
             "\tmov.u32 \t%wgq0, %nctaid.y;", "\tmul.lo.u32 \t%wgq3, %wgq3, %wgq0;",
             "\tmad.lo.u32 \t%wgq1, %wgq2, %wgq3, %wgq1;",
             f"\tmad.lo.u32 \t%wgq1, %wgq1, {max(warps, 1)}, %wgq4;",
             f"\tmul.wide.u32 \t%wgd0, %wgq1, {max_probes * SLOT_BYTES};",
             "\tmov.u64 \t%wgd1, wg_probe;", "\tadd.u64 \t%wgd0, %wgd0, %wgd1;",
             "\tmov.u32 \t%wgq6, %smid;", "\tmov.u32 \t%wgq5, 0;", f"\tmov.u32 \t%wgq7, {max_probes - 1};"])


_DECLS = ["\t.reg .pred \t%wgp<1>;", "\t.reg .b32 \t%wgq<8>;", "\t.reg .b64 \t%wgd<4>;"]


def instrument(ptx, grid_ctas, max_probes=1024, warps=0):
    """The probed PTX text, the byte size of `wg_probe` (grid_ctas * max(warps, 1) * max_probes * 16) and the
    probes placed per kind."""
    lines = ptx.splitlines()
    out, i, n = [], 0, len(lines)
    while i < n and not re.match(r"\s*\.visible\s+\.entry\b|\s*\.entry\b", lines[i]):
        out.append(lines[i])
        i += 1
    if i == n:
        raise ValueError("no .entry in the PTX")
    size = grid_ctas * max(warps, 1) * max_probes * SLOT_BYTES
    out.insert(next(k for k, l in enumerate(out) if l.strip().startswith(".address_size")) + 1,
               f".global .align 16 .b8 wg_probe[{size}];")
    while lines[i].strip() != "{":
        out.append(lines[i])
        i += 1
    out.append(lines[i])
    out += _DECLS
    i += 1
    depth, prologue_done, pending, after_ret = 1, False, None, False
    counts = dict.fromkeys(PROBES if warps else list(PROBES)[:5], 0)
    while i < n and depth > 0:
        line = lines[i]
        s = line.strip()
        code = s.split("//", 1)[0].strip()
        if not prologue_done and code and not code.startswith(".") and not code.endswith(":"):
            out += _prologue(max_probes, warps) + _probe("start")
            counts["start"] += 1
            prologue_done = True
        if code == "{":
            depth += 1
        elif code == "}":
            depth -= 1
            if depth == 0:
                if not after_ret:  # a kernel that falls off its end
                    out += _probe("end")
                    counts["end"] += 1
                out.append(line)
                i += 1
                break
        if re.match(r"(@!?%\w+\s+)?ret\b", code):
            out += _probe("end")
            counts["end"] += 1
        if code and not code.endswith(":") and not code.startswith("."):
            after_ret = code.startswith("ret")
        if "cp.async.bulk.tensor" in code and ".global.mbarrier" in code:
            out += _probe("tma")
            counts["tma"] += 1
        is_bar = warps and re.match(r"(bar|barrier)\.sync\b", code)
        if is_bar:
            out += _probe("arrive")
            counts["arrive"] += 1
        out.append(line)
        if is_bar:
            out += _probe("bar")
            counts["bar"] += 1
        if "mbarrier.try_wait" in code or "mbarrier.test_wait" in code:
            pending = "wait"
        elif "wgmma.wait_group" in code:
            pending = "wgwait"
        if pending and s == "// end inline asm":
            out += _probe(pending)
            counts[pending] += 1
            pending = None
        i += 1
    out += lines[i:]
    return "\n".join(out) + "\n", size, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--grid-ctas", type=int, default=1)
    ap.add_argument("--max-probes", type=int, default=1024)
    ap.add_argument("--warps", type=int, default=0, help="warps per CTA: per-warp mode (lane 0 of each warp)")
    a = ap.parse_args()
    text, size, counts = instrument(open(a.inp).read(), a.grid_ctas, a.max_probes, a.warps)
    open(a.out, "w").write(text)
    print(f"{a.out}: wg_probe {size} bytes; probes placed: {counts}")


if __name__ == "__main__":
    main()
