"""SASS expansion of decoded PTX: issue slots (SASS warp-instructions) per PTX instruction.

PTX is not SASS: ptxas folds register moves and parameter loads into operands (cost 0), lowers integer
division to a ~20-instruction sequence, splits 64-bit integer arithmetic into two 32-bit halves, and so on.
The timing model charges ``sass_per_ptx(...)`` issue slots for each executed PTX instruction; the reported
``warp_instructions`` is the SASS-equivalent count (comparable to Nsight Compute's
``smsp__inst_executed.sum`` / measured ``sass_warp_instructions``), ``ptx_warp_instructions`` the raw count.

This is the ONE place for the table. Each entry carries its justification (PTX→SASS lowering as produced by
ptxas for sm_90a; instruction names from ``cuobjdump -sass`` listings of Triton kernels). The values are
per-opcode lowering knowledge, never fitted per kernel; a global fit over all calibration kernels' SASS counts
may later replace them (``overrides``).
"""
from __future__ import annotations

__all__ = ["SASS_TABLE", "sass_per_ptx", "WIDE_MODS"]

# opcode -> (issue slots, justification)
SASS_TABLE: dict[str, tuple[int, str]] = {
    # --- moves / conversions folded by ptxas -------------------------------------------------------------
    "mov": (0, "register-to-register / immediate moves are coalesced by register allocation or folded as "
               "immediates; special registers (%tid, %ctaid...) are charged 1 (S2R/S2UR) by a rule below"),
    "cvta": (0, "cvta.param / generic<->shared conversions fold into the address operand (c[0x0][...] bank)"),
    "ld.param": (0, "kernel params are constant-bank operands c[0x0][off] of their consumers (no LDC)"),
    # --- integer / logic ALU: 1 SASS per 32-bit op ---------------------------------------------------------
    "add": (1, "IADD3 / FADD"), "sub": (1, "IADD3 with negated operand / FADD"),
    "mul": (1, "IMAD (mul.lo) / FMUL"), "mad": (1, "IMAD / FFMA"), "fma": (1, "FFMA / HFMA2 / DFMA"),
    "mul24": (1, "IMAD"), "mad24": (1, "IMAD"), "sad": (1, "IADD3 + abs folded"),
    "and": (1, "LOP3.LUT"), "or": (1, "LOP3.LUT"), "xor": (1, "LOP3.LUT"), "not": (1, "LOP3.LUT"),
    "cnot": (1, "ISETP+SEL folded"), "lop3": (1, "LOP3.LUT"),
    "shl": (1, "SHF.L / IMAD.SHL"), "shr": (1, "SHF.R"), "shf": (1, "SHF"),
    "min": (1, "IMNMX / FMNMX"), "max": (1, "IMNMX / FMNMX"),
    "setp": (1, "ISETP / FSETP"), "set": (1, "ISETP+SEL"), "selp": (1, "SEL / FSEL"), "slct": (1, "FSEL"),
    "bfe": (1, "SHF/SGXT or UBFE-like LOP3 sequence, 1 in the common constant-field case"),
    "bfi": (1, "BMSK+LOP3, folded to 1 for constant fields"), "prmt": (1, "PRMT"),
    "popc": (1, "POPC"), "clz": (1, "FLO"), "brev": (1, "BREV"), "bfind": (1, "FLO"),
    "abs": (1, "IABS; float abs is an operand modifier (rule below)"),
    "neg": (1, "IADD3 with negated operand; float neg is an operand modifier (rule below)"),
    "copysign": (1, "LOP3.LUT"), "testp": (1, "FSETP/ISETP"),
    "mul.wide": (1, "IMAD.WIDE (one SASS writes the 64-bit pair)"),
    "mad.wide": (1, "IMAD.WIDE (one SASS writes the 64-bit pair incl. the 64-bit addend)"),
    "mul.hi": (1, "IMAD.HI"), "mad.hi": (1, "IMAD.HI"),
    "cvt": (1, "F2F / F2I / I2F / F2FP.PACK_AB; integer widening is charged by the rule below"),
    # --- division: no hardware divider ------------------------------------------------------------------
    "div.int": (20, "integer div.s32 / div.u32: I2F.RP + MUFU.RCP + F2I + ~15 IMAD.HI/IADD3/ISETP fix-up ops"),
    "rem.int": (22, "rem.s32 / rem.u32: the division sequence plus IMAD for the remainder"),
    "div.approx": (2, "div.approx.f32: MUFU.RCP + FMUL"),
    "div.full": (5, "div.full.f32: FSETP.GT (|d| > 2^126) + @P FMUL d*0.25 + FSEL scale + MUFU.RCP + FMUL by the scale "
                    "(cuobjdump -sass of swiglu/rmsnorm, microbench/dump_sass.sh; numerator 1.0 folded)"),
    "div.rn": (8, "div.rn.f32 IEEE: MUFU.RCP + 2 FFMA Newton steps + FCHK + branch to a rarely-taken slow path"),
    # --- SFU (MUFU) ------------------------------------------------------------------------------------
    "ex2": (4, "ex2.approx.f32 (non-ftz): FSETP.GEU x >= -126 + @!P FMUL x*0.5 + MUFU.EX2 + @!P FMUL r*r "
               "(cuobjdump -sass of swiglu, microbench/dump_sass.sh; the ftz variant is 1 MUFU)"),
    "lg2": (2, "FSETP/FMUL denormal scaling + MUFU.LG2"), "rcp": (2, "MUFU.RCP + FFMA (approx.ftz: 1)"),
    "sqrt": (2, "MUFU.SQRT / MUFU.RSQ + FMUL"), "rsqrt": (1, "MUFU.RSQ"),
    "sin": (2, "FMUL (range scale) + MUFU.SIN"), "cos": (2, "FMUL (range scale) + MUFU.COS"),
    "tanh": (1, "MUFU.TANH"),
    # --- control -------------------------------------------------------------------------------------------
    "bra": (1, "BRA"), "ret": (1, "EXIT"), "exit": (1, "EXIT"), "call": (2, "CALL.REL + return"),
    "trap": (1, "BPT.TRAP"), "brkpt": (1, "BPT"), "nanosleep": (1, "NANOSLEEP"),
    "bar": (1, "BAR.SYNC / BAR.ARV"), "barrier": (1, "BAR.SYNC"), "bar.warp": (1, "WARPSYNC"),
    "membar": (1, "MEMBAR"), "fence": (1, "FENCE.VIEW.ASYNC.S / MEMBAR"),
    "elect": (1, "ELECT (sm_90)"), "shfl": (1, "SHFL.IDX/BFLY/UP/DOWN"), "vote": (1, "VOTE"),
    "match": (1, "MATCH"), "redux": (1, "REDUX"), "activemask": (1, "VOTE.ANY"),
    # --- memory ------------------------------------------------------------------------------------------
    "ld": (1, "LDG / LDS / LDL (one SASS for any vector width up to 128 bits)"),
    "st": (1, "STG / STS / STL"), "atom": (1, "ATOMG / ATOMS"), "red": (1, "REDG / ATOMS"),
    "ldu": (1, "LDG.CONSTANT"), "prefetch": (1, "CCTL"), "ldmatrix": (1, "LDSM"), "stmatrix": (1, "STSM"),
    "cp.async": (1, "LDGSTS"), "cp.async.commit_group": (1, "LDGDEPBAR"), "cp.async.wait_group": (1, "DEPBAR.LE"),
    "cp.async.wait_all": (1, "DEPBAR"),
    "cp.async.bulk": (2, "UTMALDG/UTMASTG/UBLKCP + R2UR of the coordinates into uniform registers"),
    "cp.async.bulk.tensor": (2, "UTMALDG/UTMASTG + R2UR of the coordinates into uniform registers"),
    "cp.async.bulk.commit_group": (1, "UTMACMDFLUSH"), "cp.async.bulk.wait_group": (1, "DEPBAR.LE SB0"),
    "cp.reduce.async.bulk": (2, "UTMAREDG + R2UR"),
    "mbarrier.init": (1, "SYNCS.EXCH.64"), "mbarrier.arrive": (1, "SYNCS.ARRIVE.TRANS64"),
    "mbarrier.arrive.expect_tx": (1, "SYNCS.ARRIVE.TRANS64 with tx count"),
    "mbarrier.expect_tx": (1, "SYNCS.ARRIVE.TRANS64 (expect only)"),
    "mbarrier.try_wait": (1, "SYNCS.PHASECHK.TRANS64.TRYWAIT (the retry branch is its own PTX bra)"),
    "mbarrier.test_wait": (1, "SYNCS.PHASECHK.TRANS64"), "mbarrier.inval": (1, "SYNCS.EXCH"),
    # --- tensor cores ------------------------------------------------------------------------------------
    "mma": (1, "HMMA.16816 / HMMA.1688 / IMMA (one SASS per PTX mma.sync shape)"),
    "wgmma.mma_async": (1, "HGMMA.64xNx16 (one SASS per PTX instruction; accumulators stay in registers)"),
    "wgmma.fence": (1, "WARPGROUP.ARRIVE"), "wgmma.commit_group": (1, "WARPGROUP.DEPBAR commit (HGMMA gsb0)"),
    "wgmma.wait_group": (1, "WARPGROUP.DEPBAR.LE gsb0"),
    "griddepcontrol": (1, "ACQBULK / PREEXIT"), "setmaxnreg": (1, "USETMAXREG"),
    "getctarank": (1, "S2R %cluster_ctarank"), "mapa": (1, "PRMT/IADD3 on the shared window"),
}

#: modifiers that make integer arithmetic 64-bit (two 32-bit SASS halves)
WIDE_MODS = frozenset({"s64", "u64", "b64"})
_SPECIAL_REGS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%smid", "%nsmid", "%clock",
                 "%globaltimer", "%lanemask", "%cluster", "%dynamic_smem_size", "%total_smem_size")
_INT64_SPLIT = frozenset({"add", "sub", "and", "or", "xor", "not", "min", "max", "neg", "abs", "selp", "setp",
                          "shl", "shr"})
_FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "e4m3x2", "e5m2x2"})


def sass_per_ptx(opcode: str, mods: tuple[str, ...] = (), text: str = "") -> tuple[int, str]:
    """Issue slots for one executed PTX instruction and the rule that chose it (for reports)."""
    mods = tuple(mods)
    ms = set(mods)
    # special registers: S2R / CS2R
    if opcode == "mov" and any(s in text for s in _SPECIAL_REGS):
        return 1, "mov from a special register: S2R / S2UR / CS2R"
    if opcode in ("div", "rem"):
        if ms & _FLOAT_TYPES:
            if "rn" in ms or "rz" in ms or "rm" in ms or "rp" in ms:
                return SASS_TABLE["div.rn"][0], "div.rn"
            if "full" in ms:
                return SASS_TABLE["div.full"][0], "div.full"
            return SASS_TABLE["div.approx"][0], "div.approx"
        base = SASS_TABLE[f"{opcode}.int"][0]
        return (base * 2 if ms & WIDE_MODS else base), f"{opcode}.int" + ("(64-bit x2)" if ms & WIDE_MODS else "")
    if opcode in ("mul", "mad") and "wide" in ms:
        return SASS_TABLE[f"{opcode}.wide"][0], f"{opcode}.wide"
    if opcode in ("mul", "mad") and "hi" in ms:
        return (4 if ms & WIDE_MODS else 1), f"{opcode}.hi"
    if opcode in ("ex2", "rcp", "lg2", "sqrt") and "ftz" in ms and "approx" in ms:
        return 1, f"{opcode}.approx.ftz: single MUFU"
    if opcode in ("abs", "neg") and ms & _FLOAT_TYPES:
        return 0, "float abs/neg is an operand modifier of its consumer"
    if opcode == "cvt":
        # widening / narrowing of integers: zero-extension uses RZ as the high word (free); sign-extension SHF
        ints = [m for m in mods if m[:1] in ("s", "u", "b") and m[1:].isdigit()]
        if len(ints) == 2 and not (ms & _FLOAT_TYPES):
            dst, src = ints
            if dst[1:] == "64" and src[1:] == "32":
                return (1 if dst[0] == "s" else 0), "cvt int widening (sign-extend 1 SHF, zero-extend free)"
            return 0, "cvt int narrowing / same width: register alias"
        return 1, "cvt"
    if opcode == "ld" and "param" in ms:
        return 0, "ld.param"
    if opcode == "mbarrier" or opcode.startswith("mbarrier"):
        key = opcode
        for m in mods:
            if f"{key}.{m}" in SASS_TABLE:
                key = f"{key}.{m}"
        v = SASS_TABLE.get(key, SASS_TABLE["mbarrier.arrive"])
        return v[0], key
    # longest dotted prefix of opcode + mods present in the table (e.g. cp.async.bulk.tensor)
    key = opcode
    best = SASS_TABLE.get(opcode)
    best_key = opcode if best is not None else None
    for m in mods:
        key = f"{key}.{m}"
        if key in SASS_TABLE:
            best, best_key = SASS_TABLE[key], key
    if best is None:
        return 1, f"default 1 (no entry for {opcode})"
    n = best[0]
    if opcode in _INT64_SPLIT and ms & WIDE_MODS and not (ms & _FLOAT_TYPES) and n > 0:
        return 2 * n, f"{best_key} 64-bit: two 32-bit halves (IADD3+IADD3.X, SHF pairs, LOP3 pairs)"
    if opcode in ("mul", "mad") and ms & WIDE_MODS and "lo" in ms:
        return 3, "mul.lo.64: IMAD.WIDE.U32 + 2 IMAD"
    return n, best_key
