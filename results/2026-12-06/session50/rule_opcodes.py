"""SASS opcodes of two loops side by side, per unit of work: session 50's count of int8's and bf16's rule on
cooperative-tall tiles (the README's "What int8's rule costs").

    python scripts/compile_check.py --gluon --dump-sass /tmp/sass
    python results/2026-12-06/session50/rule_opcodes.py /tmp/sass/108.sass:2d10-6e70:1 /tmp/sass/042.sass:16830-1acd0:2

Each argument: a ``.sass`` file (``compile_check.py --dump-sass``), a loop's address range in hex (``sass_stalls.py``
prints the loops), and how many 64 x 64 column halves one pass of the loop rules on (counts are divided by it).
The numbered files depend on compile_check's order: the int8 and bf16 AdamW ``gluon_coop_tall`` s5 variants.
"""

from __future__ import annotations

import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from sass_stalls import opcode, read_dump  # noqa: E402


def opcodes(path: str, start: int, end: int) -> collections.Counter:
    """Opcode counts of the instructions at addresses start..end of a ``.sass`` listing."""
    return collections.Counter(opcode(text) for address, text in read_dump(path) if start <= address <= end)


def main() -> None:
    columns = []
    for arg in sys.argv[1:]:
        path, span, halves = arg.split(":")
        start, end = (int(x, 16) for x in span.split("-"))
        columns.append({op: n / int(halves) for op, n in opcodes(path, start, end).items()})
    ops = sorted(set().union(*columns), key=lambda op: -max(c.get(op, 0) for c in columns))
    print("opcode " + " ".join(f"{a.split(':')[0].rsplit('/', 1)[-1]:>10}" for a in sys.argv[1:]))
    for op in ops:
        print(f"{op:<8}" + " ".join(f"{c.get(op, 0):10.1f}" for c in columns))
    print(f"{'total':<8}" + " ".join(f"{sum(c.values()):10.1f}" for c in columns))


if __name__ == "__main__":
    main()
