"""Session 47: why Lion with weight decay is slower than without on the tall config (session 46's rule_probe, an
H100: 89.0 against 85.1 us at 4096^2 BT 1024, the same binary; on an H200's sweep Lion on tall 79.8 us against
SGD-m's 72.4). Is it the decay's value (the same kernel, hyper[1] = 1 - lr wd), or where each arm's buffers lie?

    python3 results/2026-12-06/session47/decay_probe.py     (device; env CELLS, CONFIGS=tall,ring3, ROUNDS)
    -> $OUT/decay_probe.csv

Per config, interleaved (``bench.common.time_graphs``), each arm with buffers of its own (allocated in the order
listed): Lion (lr 1e-5) with the benchmark's decay 1 - 1e-7 (0x3F7FFFFE) on three allocations, with decay 1.0 on
two, with decay 1 + 1.2e-7 (0x3F800001: the same distance from 1, its mantissa zeros) and 1 - 2^-12 (0x3F7FF000),
Lion with lr 1e-3 (most weights change every step, as SGD-m's do), and SGD-m (lr 1e-4, momentum 0.9). The decay
is written into each set's hyper buffer after ``prepare_step``. Session 46's ``rule_probe.py`` runs them (its
``main``, on these arms); calls 2 and 5 ran this probe before that was shared, with the same steps.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "session46"))
from rule_probe import main  # noqa: E402

LION = ("lion", dict(lr=1e-5, weight_decay=0.01))
ARMS = {  # name: (rule, hyperparameters[, the decay written into hyper[1]])
    "lion 1-1e-7 a": LION, "lion 1-1e-7 b": LION, "lion 1-1e-7 c": LION,
    "lion 1.0 a": (*LION, 1.0), "lion 1.0 b": (*LION, 1.0),
    "lion 1+1.2e-7": (*LION, 1.0 + 2.0 ** -23), "lion 1-2^-12": (*LION, 1.0 - 2.0 ** -12),
    "lion lr 1e-3": ("lion", dict(lr=1e-3, weight_decay=0.01)),
    "sgdm": ("sgd", dict(lr=1e-4, momentum=0.9)),
}

if __name__ == "__main__":
    main(ARMS, "decay_probe.csv", "arm")
