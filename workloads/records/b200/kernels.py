"""Triton kernels of the Blackwell records (workloads/records/b200, workloads/records/rtx5090), written for this
project in the style of the Triton tutorials (03-matrix-multiplication, 06-fused-attention). Captured offline
with Triton 3.6.0 by ``capture_records.py`` beside this file."""
import triton
import triton.language as tl


@triton.jit
def _pid_mn(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    return first_m + (pid % group) % size_m, (pid % group) // size_m


@triton.jit
def gemm_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             GROUP_M: tl.constexpr):
    """C = A @ B^T through host tensor descriptors (TMA): A [M, K], B [N, K] (K-major), C [M, N] fp16."""
    pid_m, pid_n = _pid_mn(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def gemm_ptr(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             GROUP_M: tl.constexpr):
    """C = A @ B with pointer loads (cp.async / mma.sync on sm_120): A [M, K], B [K, N], C [M, N] fp16."""
    pid_m, pid_n = _pid_mn(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_p = a_ptr + rm[:, None] * K + rk[None, :]
    b_p = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_p, mask=(rm[:, None] < M) & (rk[None, :] + k * BLOCK_K < K), other=0.0)
        b = tl.load(b_p, mask=(rk[:, None] + k * BLOCK_K < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_p += BLOCK_K
        b_p += BLOCK_K * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def attn_fwd_tma(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr = False):
    """FlashAttention forward over [BH, N_CTX, HEAD_DIM] fp16 tensors through 3-D host tensor descriptors (TMA),
    online softmax in base 2 as the Triton tutorial; ``CAUSAL`` stops at the diagonal block and masks it."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_m = start_m * BLOCK_M
    q = desc_q.load([off_hz, off_m, 0]).reshape(BLOCK_M, HEAD_DIM)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = off_m + BLOCK_M if CAUSAL else N_CTX
    offs_m = off_m + tl.arange(0, BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        k = desc_k.load([off_hz, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        qk = tl.dot(q, k.T)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= start_n + tl.arange(0, BLOCK_N)[None, :], qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([off_hz, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc = tl.dot(p.to(tl.float16), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([off_hz, off_m, 0], acc.to(tl.float16).reshape(1, BLOCK_M, HEAD_DIM))


@triton.jit
def attn_fwd(Q, K, V, O, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """FlashAttention forward (non-causal) with pointer loads over contiguous [BH, N_CTX, HEAD_DIM] fp16."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16))
