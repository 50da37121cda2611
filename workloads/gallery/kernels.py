"""A gallery of Triton kernel styles written for warpgraph (issue 15/17 test set; not the Triton tutorials).

Each kernel exercises a capture or simulation feature: launch-option name clashes (``num_stages`` as a kernel
parameter), string constexprs (``ACT``), constexpr defaults, atomics and spin locks, persistent loops,
host and device-side tensor descriptors (``tl.make_tensor_descriptor`` -> global scratch + ``tensormap.*``),
warp specialization, device pointer tables (grouped GEMM), fp8 / bf16 / fp16 and masked odd shapes.
The launches (sizes, grids, checks) are in ``cases.py``.
"""
import triton
import triton.language as tl


# ------------------------------------------------------------------------------------------ elementwise
@triton.jit
def _act(x, ACT: tl.constexpr):
    if ACT == "relu":
        x = tl.maximum(x, 0.0)
    elif ACT == "leaky_relu":
        x = tl.where(x >= 0, x, 0.01 * x)
    elif ACT == "silu":
        x = x * tl.sigmoid(x)
    return x


@triton.jit
def axpby(x_ptr, y_ptr, out_ptr, n, alpha, beta, ACT: tl.constexpr = "none", BLOCK: tl.constexpr = 1024):
    """out = act(alpha * x + beta * y), any float dtype (computed in fp32), masked tail."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=m, other=0.0).to(tl.float32)
    r = _act(alpha * x + beta * y, ACT)
    tl.store(out_ptr + offs, r.to(out_ptr.dtype.element_ty), mask=m)


# ---------------------------------------------------------------------------------------- row kernels
@triton.jit
def softmax_rows(out_ptr, in_ptr, n_rows, n_cols, row_stride, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    """Persistent row softmax: each program walks rows pid, pid + grid, ...; ``num_stages`` is a kernel
    parameter that is also a launch option (Triton passes the same value to both)."""
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    for r in tl.range(pid, n_rows, step, num_stages=num_stages):
        x = tl.load(in_ptr + r * row_stride + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + r * row_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def layernorm_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    """Two-pass (mean, then variance) layer norm over one row per program, looping over column blocks."""
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    var_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        d = tl.where(cols < n_cols, v - mean, 0.0)
        var_acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(var_acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for c in range(0, n_cols, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        m = cols < n_cols
        v = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
        bb = tl.load(b_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, ((v - mean) * rstd * w + bb).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def layernorm_bwd_dx(x_ptr, dy_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_ptr, db_ptr, lock_ptr, n_rows, n_cols,
                     GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    """Layer-norm backward: dx per row, and dw/db partial sums accumulated into ``GROUPS`` rows of fp32
    partials under a per-group spin lock (atomic_cas / atomic_xchg), the last-writer style of a two-stage
    reduction."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(m, (x - mean) * rstd, 0.0)
    wdy = tl.where(m, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * n_cols + cols, dx.to(dx_ptr.dtype.element_ty), mask=m)
    g = row % GROUPS
    lock = lock_ptr + g
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    pw = dw_ptr + g * n_cols + cols
    pb = db_ptr + g * n_cols + cols
    tl.store(pw, tl.load(pw, mask=m, other=0.0) + dy * xhat, mask=m)
    tl.store(pb, tl.load(pb, mask=m, other=0.0) + dy, mask=m)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def rmsnorm_bwd(x_ptr, w_ptr, dy_ptr, dx_ptr, dw_ptr, n_rows, n_cols, eps, ROWS: tl.constexpr,
                BLOCK: tl.constexpr):
    """RMSNorm backward: each program handles ROWS rows, writes dx and adds its dw partial with atomics."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ROWS):
        row = pid * ROWS + i
        ok = row < n_rows
        x = tl.load(x_ptr + row * n_cols + cols, mask=m & ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n_cols + cols, mask=m & ok, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        xh = x * rstd
        wdy = w * dy
        dx = (wdy - xh * (tl.sum(xh * wdy, axis=0) / n_cols)) * rstd
        tl.store(dx_ptr + row * n_cols + cols, dx.to(dx_ptr.dtype.element_ty), mask=m & ok)
        dw += dy * xh
    tl.atomic_add(dw_ptr + cols, dw, mask=m)


@triton.jit
def col_sum_atomic(x_ptr, out_ptr, n_rows, n_cols, ROWS_PER: tl.constexpr, BLOCK_C: tl.constexpr):
    """Column sums of a [n_rows, n_cols] fp32 matrix: a 2-D grid of (row chunk, column block) programs, each
    reducing ROWS_PER rows and adding its partial with tl.atomic_add."""
    rb = tl.program_id(0)
    cb = tl.program_id(1)
    cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
    rows = rb * ROWS_PER + tl.arange(0, ROWS_PER)
    m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=m, other=0.0)
    tl.atomic_add(out_ptr + cols, tl.sum(x, axis=0), mask=cols < n_cols)


# ------------------------------------------------------------------------------------------------ GEMMs
@triton.jit
def _tile_mn(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first = (tile // per_group) * GROUP
    gsz = min(tiles_m - first, GROUP)
    return first + (tile % per_group) % gsz, (tile % per_group) // gsz


@triton.jit
def gemm_epilogue(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, ACT: tl.constexpr, GROUP: tl.constexpr = 4):
    """C = act(A @ B + bias) with masked edges (any M, N, K), pointer loads; A [M, K], B [K, N] row-major."""
    pm, pn = _tile_mn(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * lda + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * ldb + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    acc = _act(acc, ACT)
    tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_splitk(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                SPLIT: tl.constexpr):
    """Split-K: program (tile, s) reduces K-slice s and adds into the fp32 C with tl.atomic_add."""
    pm = tl.program_id(0) // tl.cdiv(N, BN)
    pn = tl.program_id(0) % tl.cdiv(N, BN)
    s = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(s * BK, K, BK * SPLIT):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_persistent_tma(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                        GROUP: tl.constexpr, SUBTILE: tl.constexpr):
    """Persistent GEMM over host tensor descriptors (A [M, K], B [N, K], C [M, N]): programs stride over
    tiles; with SUBTILE the epilogue stores the accumulator as two BN/2 halves (tl.split)."""
    n_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), flatten=True):
        pm, pn = _tile_mn(tile, M, N, BM, BN, GROUP)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, k * BK])
            b = b_desc.load([pn * BN, k * BK])
            acc = tl.dot(a, b.T, acc)
        if SUBTILE:
            acc = tl.reshape(acc, (BM, 2, BN // 2))
            acc = tl.permute(acc, (0, 2, 1))
            c0, c1 = tl.split(acc)
            c_desc.store([pm * BM, pn * BN], c0.to(c_desc.dtype))
            c_desc.store([pm * BM, pn * BN + BN // 2], c1.to(c_desc.dtype))
        else:
            c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


@triton.jit
def gemm_fp8(a_desc, b_desc, c_ptr, M, N, K, scale, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """fp8 (e4m3) GEMM with host descriptors: A [M, K], B [N, K], C = scale * A @ B^T in bf16."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pm * BM, k]), b_desc.load([pn * BN, k]).T, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], (acc * scale).to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """GEMM whose TMA descriptors are built on the device (tl.make_tensor_descriptor: global scratch +
    tensormap.replace); A [M, K], B [N, K], C [M, N] fp16."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pm * BM, k]), b_desc.load([pn * BN, k]).T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def gemm_warp_spec(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   STAGES: tl.constexpr):
    """Warp-specialized GEMM (a producer partition feeds TMA loads to two MMA warp groups): device-side
    descriptors for A [M, K] and B [N, K] (Triton sizes their boxes to its data partitioning), a masked
    pointer store of C [M, N]."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES, warp_specialize=True):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([pn * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def grouped_gemm(a_tab, b_tab, c_tab, dims_ptr, n_groups, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Grouped GEMM over device tables: a_tab/b_tab/c_tab hold the u64 addresses of each group's A [m, k],
    B [k, n], C [m, n] (fp16); dims_ptr holds (m, n, k) per group. A persistent loop over all groups' tiles."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    seen = 0
    for g in range(n_groups):
        m = tl.load(dims_ptr + 3 * g)
        n = tl.load(dims_ptr + 3 * g + 1)
        k = tl.load(dims_ptr + 3 * g + 2)
        tn = tl.cdiv(n, BN)
        tiles = tl.cdiv(m, BM) * tn
        a_p = tl.load(a_tab + g).to(tl.pointer_type(tl.float16))
        b_p = tl.load(b_tab + g).to(tl.pointer_type(tl.float16))
        c_p = tl.load(c_tab + g).to(tl.pointer_type(tl.float16))
        t = ((pid - seen) % nprog + nprog) % nprog  # first tile of this group that is ours
        while t < tiles:
            pm = t // tn
            pn = t % tn
            rm = pm * BM + tl.arange(0, BM)
            rn = pn * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k0 in range(0, k, BK):
                a = tl.load(a_p + rm[:, None] * k + (k0 + rk)[None, :],
                            mask=(rm[:, None] < m) & ((k0 + rk)[None, :] < k), other=0.0)
                b = tl.load(b_p + (k0 + rk)[:, None] * n + rn[None, :],
                            mask=((k0 + rk)[:, None] < k) & (rn[None, :] < n), other=0.0)
                acc = tl.dot(a, b, acc)
            tl.store(c_p + rm[:, None] * n + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < m) & (rn[None, :] < n))
            t += nprog
        seen += tiles


# --------------------------------------------------------------------------------------------- attention
@triton.jit
def attn_rowblock(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  CAUSAL: tl.constexpr, DTYPE: tl.constexpr = tl.float16):
    """Online-softmax attention over [BH, seq, D] tensors (pointer loads, masked for any seq); exp2 form."""
    bh = tl.program_id(1)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    base = bh * seq * D
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < seq, other=0.0)
    m_i = tl.full([BM], -float("inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    qk_scale = scale * 1.4426950408889634
    hi = tl.minimum(seq, (tl.program_id(0) + 1) * BM) if CAUSAL else seq
    for n0 in range(0, hi, BN):
        rn = n0 + tl.arange(0, BN)
        kt = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None], mask=rn[None, :] < seq, other=0.0)
        s = tl.dot(q, kt) * qk_scale
        ok = rn[None, :] < seq
        if CAUSAL:
            ok = ok & (rm[:, None] >= rn[None, :])
        s = tl.where(ok, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(DTYPE), v)
        m_i = m_new
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(DTYPE), mask=rm[:, None] < seq)
