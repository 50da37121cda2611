"""tma_load against TMA images captured on an NVIDIA H200 (driver 580, CUDA 13, sm_90a).

Probe (run once with the device tool; source not kept in the repo): a 40 x 200 fp16 tensor holding
u16 value ``(3 i + 1) & 0xFFFF`` at flat index i, encoded with cuTensorMapEncodeTiled (dims {200, 40}, stride
400 B, element strides 1) and loaded by ``cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx``
into a 1024-aligned static smem buffer (address 0x400); the raw smem bytes were hashed. Box coordinates
(190, 35) raised an illegal-instruction fault on the hardware for every configuration and are not recorded.
"""
from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np
import pytest

from warpgraph.workloads.functional.tma_ops import tma_load

BASE = 0x7F00_0000_0000
H, W = 40, 200
CFG = [(128, 64, 16, False), (64, 32, 16, False), (32, 16, 16, False), (0, 24, 8, False), (128, 64, 16, True)]
COORDS = {0: (0, 0), 1: (64, 8), 3: (-8, -3), 4: (136, -15)}
H200_SHA256_16 = {
    (0, 0): "b8b8ed1659367b7b", (0, 1): "b52fdd2fea14a86c", (0, 3): "4912f1f594744006", (0, 4): "8aaea53deec57ef3",
    (1, 0): "4df62e127d9be8b2", (1, 1): "89ba22996bab6c2c", (1, 3): "e7ec84852e915ee4", (1, 4): "776ec8000feaf3d1",
    (2, 0): "080cb4daa775991a", (2, 1): "13babb8e46c88cc1", (2, 3): "db1c557f8ec83bf4", (2, 4): "53afff0f4eb0ac31",
    (3, 0): "0a5d8e9c3efc9f88", (3, 1): "92202c6a5222202e", (3, 3): "45560dc342931a10", (3, 4): "a1a4f5721c1c4610",
    (4, 0): "b8b8ed1659367b7b", (4, 1): "b52fdd2fea14a86c", (4, 3): "27db5ed44403f9f0", (4, 4): "bebaf56120824f3a",
}


@pytest.mark.parametrize("c,k", sorted(H200_SHA256_16))
def test_tma_image_matches_h200(c, k):
    sw, bw, bh, nan = CFG[c]
    g = ((np.arange(H * W) * 3 + 1) & 0xFFFF).astype(np.uint16)
    tm = SimpleNamespace(dtype=np.dtype(np.float16), elem_bytes=2, dims=[W, H], strides_bytes=[W * 2],
                         box=[bw, bh], swizzle_bytes=sw, oob_fill="nan" if nan else "zero", base_addr=BASE)
    img = tma_load(g.view(np.uint8), BASE, tm, np.array([COORDS[k]]), smem_addrs=np.array([0x400]))[0][0]
    assert hashlib.sha256(img.tobytes()).hexdigest()[:16] == H200_SHA256_16[(c, k)]
