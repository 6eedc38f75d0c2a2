"""The Gluon step's phase timeline (``bench/timeline.summarize``) on a hand-made trace."""

from __future__ import annotations

import torch

from forge_mcore.bench.timeline import summarize
from forge_mcore.kernels.gluon_wgrad import TRACE_PHASE_NAMES


def _unit(turn, loop, loop_done, ready, issued, released):
    return [turn, loop, loop_done, ready, issued, released]


def test_summary_of_a_ping_pong_timeline():
    """One SM, two units per consumer. Consumer 0: main loops [10, 50) and [90, 130), epilogues
    [50, 80) and [130, 160); consumer 1: main loops [50, 90) and [130, 170), epilogues [95, 120)
    and [170, 200), a 5-cycle tile wait before the first. Its main loop [50, 90) overlaps c0's
    epilogue [50, 80) for 30 cycles, [130, 170) overlaps [130, 160) for 30; c0's loop [90, 130)
    overlaps c1's epilogue [95, 120) for 25: 85 of a 190-cycle span. A second program that ran no
    unit (all zeros) is left out."""
    trace = torch.zeros(2, 2, 3, len(TRACE_PHASE_NAMES), dtype=torch.int64)
    trace[0, 0, 0] = torch.tensor(_unit(10, 10, 50, 50, 70, 80))
    trace[0, 0, 1] = torch.tensor(_unit(80, 90, 130, 130, 150, 160))
    trace[0, 1, 0] = torch.tensor(_unit(10, 50, 90, 95, 110, 120))
    trace[0, 1, 1] = torch.tensor(_unit(120, 130, 170, 170, 190, 200))
    s = summarize(trace)
    assert s["programs"] == 1
    assert s["span cycles"] == 190
    assert s["main loop cycles c0"] == 80 and s["main loop cycles c1"] == 80
    assert s["turn wait cycles c0"] == 10 and s["turn wait cycles c1"] == 50
    assert s["tile wait cycles c1"] == 5 and s["tile wait cycles c0"] == 0
    assert s["rule + stores issued cycles c0"] == 40 and s["stores drained cycles c1"] == 20
    assert abs(s["overlap / span"] - 85 / 190) < 1e-6
    assert abs(s["main loop / span"] - 80 / 190) < 1e-6


def test_a_cooperative_unit_without_a_release_stamp_ends_at_its_stores():
    """The cooperative schedule hands its buffer back during the next unit: no release stamp, so
    the epilogue ends where its stores were issued."""
    trace = torch.zeros(1, 2, 1, len(TRACE_PHASE_NAMES), dtype=torch.int64)
    trace[0, 0, 0] = torch.tensor(_unit(5, 5, 40, 45, 60, 0))
    trace[0, 1, 0] = torch.tensor(_unit(5, 5, 40, 45, 70, 0))
    s = summarize(trace)
    assert s["span cycles"] == 65
    assert s["stores drained cycles c0"] == 0
    assert s["overlap / span"] == 0.0
