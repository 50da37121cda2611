"""Integer chains on the uniform datapath (microbench/src/uniform_chain.cu through the real pipeline) against an H100
(2026-12-07, microbench/results/h100_uniform_chain_2026-12-07/; no H200 was lent; ALU latencies are the same on both
cards: alu_latency / branch_cost): records workloads/microbench/uch_* (microbench/make_uniform_chain_records.py),
one warp, 8 x 64 dependent links, ``out[0]`` = 100 x cycles per link.

The card: warp-uniform ``mad.lo`` / ``shl`` chains (UIMAD / USHF) take 4.31 cycles per link, per-thread ``add`` /
``mad.lo`` (IMAD.IADD / IMAD) 4.15 / 4.28 -- the uniform datapath is no slower than the vector one, so it is not
what makes tma_tile's issue loop ~100 cycles longer on the card than in the model. Uniform ``add`` links cost 2.31:
ptxas folds two dependent adds into one ULEA (SASS listing in the results folder), and the model still charges each
folded PTX add its latency (docs/accuracy.md "Noticed": ptxas-folded instructions). Tolerance 6 % (issue 15's 5 %
plus the H100 / H200 difference, ~1 %)."""
from __future__ import annotations

import pytest

from _replay_helpers import MB, record_stats, simulated


@pytest.mark.parametrize("name", ["uch_u_imad", "uch_u_shf", "uch_v_iadd", "uch_v_imad"])
def test_integer_chain_replay_matches_the_card(name):
    d = MB / name
    assert simulated(d) == pytest.approx(record_stats(d)["cycles_per_link"], rel=0.06)


@pytest.mark.xfail(strict=True, reason="ptxas folds two dependent add.u32 into one ULEA (2.31 cycles per PTX add on "
                   "the card); the model charges every PTX add its 4.1-cycle latency (4.11 per link)")
def test_folded_uniform_adds_cost_half_a_link():
    d = MB / "uch_u_iadd"
    assert simulated(d) == pytest.approx(record_stats(d)["cycles_per_link"], rel=0.06)
