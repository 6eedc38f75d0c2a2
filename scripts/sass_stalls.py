"""Where a kernel's warps stall, by loop: Nsight Compute's per-SASS stall samples summed over the
whole kernel and over each loop body (a backward branch's range).

    python scripts/sass_stalls.py REPORT_sass.csv[.gz] [--min-len 500]

REPORT_sass.csv is what ``SOURCE=1 bash scripts/device/ncu_kernel.sh`` writes (``ncu --page source
--csv --print-source sass``). Prints, for the kernel and for every loop of at least ``--min-len``
instructions (its wgmma and MUFU counts say which is a main loop and which a rule), the loop's
share of all stall samples and its top reasons ("selected": issuing; "no_inst": instruction
fetch; "dispatch": a busy pipe; "wait": fixed latency; "short_sb"/"long_sb": shared/global
memory; "barrier": a named barrier).
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


def loops(header: list[str], rows: list[tuple[int, list[str]]], min_len: int) -> list[tuple[int, int]]:
    """[start, end] row indices of every innermost backward branch's body of at least ``min_len`` rows."""
    source = header.index("Source")
    index = {a: i for i, (a, _) in enumerate(rows)}
    found = set()
    for i, (a, r) in enumerate(rows):
        target = re.search(r"BRA\b.*?0x([0-9a-f]+)", r[source])
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--min-len", type=int, default=500)
    args = p.parse_args()
    header, rows = read_rows(args.csv)
    source = header.index("Source")
    whole = stall_counts(header, rows)
    total = sum(whole.values())
    print(f"{args.csv}: {len(rows)} instructions, {total:.0f} samples; kernel: {shares(whole)}")
    for start, end in loops(header, rows, args.min_len):
        body = rows[start:end + 1]
        counts = stall_counts(header, body)
        kinds = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", r[source]).split(".")[0].split()[0]
                                    for _, r in body if r[source])
        print(f"  loop {hex(body[0][0])}-{hex(body[-1][0])}: {len(body)} instructions (HGMMA {kinds['HGMMA']}, "
              f"MUFU {kinds['MUFU']}), {sum(counts.values()) / total:.3f} of samples: {shares(counts)}")


if __name__ == "__main__":
    main()
