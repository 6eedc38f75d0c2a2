"""Session 46: a device's winners rows for the cells where a ``config_ab.py`` run (VARY="serial_fills=True",
REFERENCE=winner) timed the winner's ``serial_fills`` twin faster than the winner itself, bits equal, and the twin
is in CONFIGS. The device's own row of such a cell takes the twin and its measured time; a cell it borrowed from
another device of its architecture (the reference is that row's config) gets a row of its own. Any other VARY
twin is set the same way (session 47: the tall config for Lion); of several twins that won, the fastest.

    python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" \
        results/2026-12-06/session46/call6/config_ab.csv
    python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H200" $OUT/serial/config_ab.csv     (h200.sh)
"""

import ast
import csv
import sys

from forge_mcore.bench.kernel import ARMS
from forge_mcore.kernels import winners
from forge_mcore.kernels.configs import CONFIGS, TileConfig

RULE_AT, STATE_AT = winners.KEY_FIELDS.index("rule"), winners.KEY_FIELDS.index("state_dtype")


def _cell(key: tuple[str, ...]) -> tuple[str, ...]:
    return key[1], key[2], key[3], key[RULE_AT], key[STATE_AT]


def main() -> None:
    device, ab = sys.argv[1], list(csv.DictReader(open(sys.argv[2])))
    reference = {(r["cell"], r["arm"]): TileConfig(**ast.literal_eval(r["config"]))
                 for r in ab if r["reference"] == "True"}
    twins = {}
    for r in ab:
        twin = TileConfig(**ast.literal_eval(r["config"]))
        if r["reference"] == "False" and r["bits_equal_reference"] == "True" and float(r["speedup"]) > 1 and (
                twin in CONFIGS):
            shape, bt = r["cell"].split(":")
            rule, state = ARMS[r["arm"]][:2]  # (an arm's name is not its rule's: "sgdm-bf16" is sgd's)
            cell = (*shape.split("x"), bt, rule, state)
            if cell not in twins or float(r["ms"]) < twins[cell][2]:  # the fastest twin of the cell
                twins[cell] = (reference[(r["cell"], r["arm"])], twin, float(r["ms"]))
    rows = winners.read()
    own = {_cell(key) for name, _, key, _, _ in rows if name == device}
    changed = []
    for i, (name, arch, key, cfg, _) in enumerate(list(rows)):
        cell = _cell(key)
        if cell not in twins or twins[cell][0] != cfg:
            continue
        if name == device:
            rows[i] = (name, arch, key, twins[cell][1], twins[cell][2])
        elif cell not in own:  # borrowed: the device's own row
            rows.append((device, arch, key, twins[cell][1], twins[cell][2]))
            own.add(cell)
        else:
            continue
        changed.append(cell)
    winners.write(rows)
    print(f"{len(changed)} rows of {device} now the twins that won: {changed}")


if __name__ == "__main__":
    main()
