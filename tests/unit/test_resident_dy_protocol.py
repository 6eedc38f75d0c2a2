"""The dY-resident schedule's protocol (``TileConfig.dy_resident``; ``gluon_wgrad._ws_slab_producer``,
``_ws_consumer``) as a model on the CPU: one slab producer walks the program's run of tiles, loading
a row block's dY chunks into the resident buffer once all slabs issued before are released, then
each tile's X slabs through the ring; two ping-pong consumers take alternate tiles, each k-step
waiting for its ring slot and for dY chunk k on parity (row blocks since the run's first) & 1,
with mbarrier parity semantics (a wait on parity P passes while the barrier's completed phase
count m has m % 2 != P). TMA copies complete in any order, and a wgmma reads its dY chunk until
the consumer's next k-step retires it. The model fails if a consumer reads a chunk of another
row block, or one the TMA is still writing."""

import random

import pytest

from forge_mcore.kernels.gluon_wgrad import run_length


class _Barrier:
    def __init__(self) -> None:
        self.phases = 0  # completed phases (count-1 barriers: every arrival completes one)

    def passes(self, parity: int) -> bool:
        return self.phases % 2 != parity


def _run(rows: list[int], num_k: int, stages: int, seed: int, drain: bool = True) -> None:
    rnd = random.Random(seed)
    slab_ready = [_Barrier() for _ in range(stages)]
    slab_empty = [_Barrier() for _ in range(stages)]
    dy_ready = [_Barrier() for _ in range(num_k)]
    order = [_Barrier(), _Barrier()]
    dy_buf: list[object] = [None] * num_k  # the row block a chunk holds; "writing" while a copy is in flight
    in_flight: list[tuple] = []

    def producer():
        step, resident = 0, None
        for row in rows:
            if row != resident:
                if drain:
                    for d in range(stages):
                        s = (step + d) % stages
                        yield lambda s=s, p=(((step + d) // stages) & 1) ^ 1: slab_empty[s].passes(p)
                for k in range(num_k):
                    dy_buf[k] = "writing"
                    in_flight.append(("dy", k, row))
                resident = row
            for _ in range(num_k):
                s = step % stages
                yield lambda s=s, p=((step // stages) & 1) ^ 1: slab_empty[s].passes(p)
                in_flight.append(("slab", s, None))
                step += 1

    def consumer(c: int):
        reading: list[tuple] = []  # (chunk, row) of the wgmma not yet retired
        for j in range((len(rows) - c + 1) // 2):
            u = 2 * j + c
            if c == 1:
                yield lambda j=j: order[0].passes(j & 1)
            elif j > 0:
                yield lambda j=j: order[1].passes((j - 1) & 1)
            step = u * num_k
            for k in range(num_k):
                s = step % stages
                yield lambda s=s, p=(step // stages) & 1: slab_ready[s].passes(p)
                yield lambda k=k, p=(rows[u] - rows[0]) & 1: dy_ready[k].passes(p)
                assert dy_buf[k] == rows[u], (u, k, dy_buf[k])
                for chunk, row in reading:  # the previous step's wgmma retires: it read its chunk throughout
                    assert dy_buf[chunk] == row, (u, k, chunk)
                reading = [(k, rows[u])]
                if k > 0:
                    slab_empty[(step - 1) % stages].phases += 1
                step += 1
            order[c].phases += 1
            for chunk, row in reading:
                assert dy_buf[chunk] == row
            reading = []
            slab_empty[(step - 1) % stages].phases += 1

    actors = [producer(), consumer(0), consumer(1)]
    waits: list = [None] * 3
    for _ in range(1_000_000):
        for copy in list(in_flight):  # copies complete in any order
            if rnd.random() < 0.3:
                in_flight.remove(copy)
                kind, i, row = copy
                if kind == "dy":
                    dy_buf[i] = row
                    dy_ready[i].phases += 1
                else:
                    slab_ready[i].phases += 1
        runnable = [a for a in range(3) if actors[a] is not None and (waits[a] is None or waits[a]())]
        if not runnable:
            if all(a is None for a in actors) and not in_flight:
                return
            assert in_flight, "deadlock"
            continue
        a = rnd.choice(runnable)
        try:
            waits[a] = next(actors[a])
        except StopIteration:
            actors[a] = None
            waits[a] = None
    raise AssertionError("did not finish")


def _runs(tiles_m: int, tiles_n: int, sms: int) -> list[list[int]]:
    """Each program's row blocks, tile by tile (the kernel's ROW_RUNS order)."""
    tiles = tiles_m * tiles_n
    run = run_length(tiles, sms)
    return [[t // tiles_n for t in range(pid * run, min(pid * run + run, tiles))] for pid in range(-(-tiles // run))]


@pytest.mark.parametrize("tiles_m,tiles_n,sms,num_k,stages", [
    (313, 2, 132, 2, 3),  # runs of 5 over rows of 2: three row blocks per program
    (47, 8, 132, 6, 7),  # runs of 3 over rows of 8
    (16, 32, 132, 16, 4),  # a run per row block
    (4, 1, 2, 3, 2),  # a run of 2 over rows of 1, a two-deep ring
])
def test_consumers_read_only_their_own_row_blocks_dy(tiles_m, tiles_n, sms, num_k, stages):
    for program, rows in enumerate(_runs(tiles_m, tiles_n, sms)[:6]):
        for seed in range(20):
            _run(rows, num_k, stages, seed=program * 100 + seed)


def test_without_the_drain_a_consumer_reads_the_next_blocks_dy():
    """The model can fail: loading a row block's dY without waiting for every slab issued before
    lets the TMA overwrite a chunk an earlier tile's wgmma still reads."""
    failures = 0
    for seed in range(200):
        try:
            _run([0, 0, 1, 1, 2], 2, 3, seed, drain=False)
        except AssertionError as e:
            failures += "deadlock" not in str(e)  # (a wrong read, not a stall)
    assert failures > 0
