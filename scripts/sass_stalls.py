"""Where a kernel's warps stall, by loop: Nsight Compute's per-SASS stall samples summed over the
whole kernel and over each loop body (a backward branch's range).

    python scripts/sass_stalls.py REPORT_sass.csv[.gz] [--min-len 500] [--waits]
    python scripts/sass_stalls.py DIR/073.sass [...] [--min-len 500]    # loops of compiled SASS, no GPU

A ``.sass`` file is what ``scripts/compile_check.py --dump-sass DIR`` writes (``cuobjdump -sass``): for
it the loops' sizes and the opcodes that matter to the rule (FFMA, FMUL, MUFU, PRMT, LDS, STS, HGMMA)
are printed instead of stall samples.

REPORT_sass.csv(.gz) is what ``SOURCE=1 bash scripts/device/ncu_kernel.sh`` writes (``ncu --page source
--csv --print-source sass``). Prints, for the kernel and for every loop of at least ``--min-len``
instructions (its wgmma and MUFU counts say which is a main loop and which a rule), the loop's
share of all stall samples and its top reasons ("selected": issuing; "no_inst": instruction
fetch; "dispatch": a busy pipe; "wait": fixed latency; "short_sb"/"long_sb": shared/global
memory; "barrier": a named barrier). ``--waits`` also prints the samples spent at each mbarrier wait
(a ``SYNCS.PHASECHK`` try-wait and the branch that retries it, named by the barrier's shared-memory
offset: which ring slot, turn or tile barrier a warp waits on) and after each named-barrier sync.
Take the samples with ``--warp-sampling-interval 0``: ncu's automatic interval can leave a few samples
per SM sub-partition, at nearly the same cycles on every SM, so whole phases go unsampled.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import re


def read_rows(path: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(address, row)]) of an ncu SASS source CSV."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    header_at = next(i for i, r in enumerate(rows) if "Address" in r and "Source" in r)
    header = rows[header_at]
    at = header.index("Address")
    body = []
    for r in rows[header_at + 1:]:
        if len(r) > at and r[at].startswith("0x"):
            body.append((int(r[at], 16), r))
    return header, body


def stall_counts(header: list[str], rows: list[tuple[int, list[str]]]) -> collections.Counter:
    columns = [i for i, h in enumerate(header) if h.startswith("stall_") and "Not Issued" not in h]
    counts: collections.Counter = collections.Counter()
    for _, r in rows:
        for i in columns:
            if r[i]:
                counts[header[i][len("stall_"):]] += float(r[i])
    return counts


def read_dump(path: str) -> list[tuple[int, str]]:
    """[(address, instruction)] of a ``cuobjdump -sass`` listing."""
    found = (re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line) for line in open(path))
    return [(int(m.group(1), 16), m.group(2)) for m in found if m]


def opcode(instruction: str) -> str:
    """An instruction's opcode without its predicate or modifiers: ``@!P0 FFMA.FTZ R1, ...`` -> FFMA."""
    return re.sub(r"^@!?U?P\w+\s+", "", instruction).split(".")[0].split()[0]


def loops(instructions: list[tuple[int, str]], min_len: int) -> list[tuple[int, int]]:
    """[start, end] indices of every innermost backward branch's body of at least ``min_len``
    instructions, in [(address, SASS text)]."""
    index = {a: i for i, (a, _) in enumerate(instructions)}
    found = set()
    for i, (a, text) in enumerate(instructions):
        target = re.search(r"BRA\b.*?0x([0-9a-f]+)", text)
        if target and int(target.group(1), 16) < a and int(target.group(1), 16) in index:
            start = index[int(target.group(1), 16)]
            if i + 1 - start >= min_len:
                found.add((start, i))
    # innermost only: a retry path laid out after the function's body branches back into it and
    # spans the loops in between
    return sorted(a for a in found if not any(b != a and b[0] <= a[1] and a[0] <= b[1]
                                              and b[1] - b[0] < a[1] - a[0] for b in found))


def shares(counts: collections.Counter, top: int = 7) -> str:
    total = sum(counts.values()) or 1.0
    return ", ".join(f"{k} {v / total:.2f}" for k, v in counts.most_common(top))


def sample_count(header: list[str], row: list[str]) -> float:
    return sum(stall_counts(header, [(0, row)]).values())


def print_waits(header: list[str], rows: list[tuple[int, list[str]]], total: float) -> None:
    """Samples at each mbarrier try-wait site (with its retry branch) and after each bar.sync."""
    source = header.index("Source")
    sites = []
    for i, (address, r) in enumerate(rows):
        wait = re.search(r"SYNCS\.PHASECHK\S* \w+, \[(?:\w+\+)*?(0x[0-9a-f]+)\]", r[source])
        if wait:
            retry = rows[i + 1][1] if i + 1 < len(rows) else r
            sites.append((sample_count(header, r) + sample_count(header, retry), hex(address),
                          f"mbarrier at +{wait.group(1)}"))
        elif "BAR.SYNC" in r[source] and i + 1 < len(rows):  # a warp held at bar.sync is sampled on the next
            sites.append((sample_count(header, rows[i + 1][1]), hex(address), r[source].strip()))
    for n, address, what in sorted(sites, reverse=True):
        if n / total >= 0.005:
            print(f"  wait {address} {what}: {n / total:.3f} of samples")


def print_dump_loops(path: str, min_len: int) -> None:
    instructions = read_dump(path)
    print(f"{path}: {len(instructions)} instructions")
    for start, end in loops(instructions, min_len):
        kinds = collections.Counter(opcode(text) for _, text in instructions[start:end + 1])
        print(f"  loop {hex(instructions[start][0])}-{hex(instructions[end][0])}: {end + 1 - start} instructions ("
              + ", ".join(f"{k} {kinds[k]}" for k in ("HGMMA", "MUFU", "FFMA", "FMUL", "PRMT", "LDS", "STS")) + ")")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="+", help="an ncu SASS CSV, or cuobjdump .sass listings")
    p.add_argument("--min-len", type=int, default=500)
    p.add_argument("--waits", action="store_true", help="samples at each mbarrier wait and bar.sync")
    args = p.parse_args()
    if all(path.endswith(".sass") for path in args.csv):
        for path in args.csv:
            print_dump_loops(path, args.min_len)
        return
    if len(args.csv) != 1:
        p.error("one ncu SASS CSV at a time")
    args.csv = args.csv[0]
    header, rows = read_rows(args.csv)
    source = header.index("Source")
    whole = stall_counts(header, rows)
    total = sum(whole.values())
    print(f"{args.csv}: {len(rows)} instructions, {total:.0f} samples; kernel: {shares(whole)}")
    for start, end in loops([(a, r[source]) for a, r in rows], args.min_len):
        body = rows[start:end + 1]
        counts = stall_counts(header, body)
        kinds = collections.Counter(opcode(r[source]) for _, r in body if r[source])
        print(f"  loop {hex(body[0][0])}-{hex(body[-1][0])}: {len(body)} instructions (HGMMA {kinds['HGMMA']}, "
              f"MUFU {kinds['MUFU']}), {sum(counts.values()) / total:.3f} of samples: {shares(counts)}")
    if args.waits:
        print_waits(header, rows, total)


if __name__ == "__main__":
    main()
