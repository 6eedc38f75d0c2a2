"""Session 27's three grids (calls 1, 3, 6): how far apart the same BT <= 1024 cell on the same
config lands between grids (max / min - 1 of its FORGE time), over the cells whose config did not
change between them.   python results/2026-12-03/session27/grid_spread.py"""
import ast
import csv
import statistics

HERE = "results/2026-12-03/session27/"
GRIDS = [HERE + p for p in ("call1/grid/kernel.csv", "call3/g/grid/kernel.csv", "call6/grid/kernel.csv")]


def config_key(text: str) -> str:
    fields = ast.literal_eval(text)
    if isinstance(fields.get("tile_ring"), bool):  # call 1 predates the buffer count (True: three)
        fields["tile_ring"] = 3 if fields["tile_ring"] else 0
    return str(sorted(fields.items()))


grids = [{(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(p))} for p in GRIDS]
spreads = []
for cell in grids[0]:
    if int(cell[1]) <= 1024 and len({config_key(g[cell]["config"]) for g in grids}) == 1:
        times = [float(g[cell]["forge_ms"]) for g in grids]
        spreads.append((100 * (max(times) / min(times) - 1), cell))
print(f"{len(spreads)} unchanged BT <= 1024 cells: spread median {statistics.median(s for s, _ in spreads):.1f}%, "
      f"max {max(spreads)[0]:.1f}% ({max(spreads)[1]})")
