"""The Gluon kernel's tile ring protocol (``gluon_wgrad._ws_fetch_halves``, ``_ring_ready``) as a
model on the CPU: one producer fills the program's column halves in order (half q into buffer
q % R once half q - R is written), fills complete in any order, and two consumers take their units'
halves in order, each waiting on a ready barrier with mbarrier parity semantics (a wait on parity P
passes while the barrier's completed phase count m has m % 2 != P). The kernel's own parity table
(``ring_parity_bits``) drives the model's waits. With serial fills (``TileConfig.serial_fills``) the
producer also waits, on the consumer's barrier and parity, for half q - 1 to land before filling half q."""

import random

import pytest

from forge_mcore.kernels.gluon_wgrad import ring_parity_bits


def _parity(k: int, ring: int) -> int:
    return (ring_parity_bits(ring) >> (k % (2 * ring))) & 1


@pytest.mark.parametrize("ring", [2, 3])
def test_ring_parity_bits_count_each_consumers_fills_of_a_buffer(ring):
    for consumer in (0, 1):
        fills = [0] * ring
        for k in range(12 * ring):  # several periods
            buffer = (4 * (k // 2) + 2 * consumer + k % 2) % ring
            assert _parity(k, ring) == fills[buffer] % 2, (consumer, k)
            fills[buffer] += 1


def _run(ring: int, units: int, seed: int, per_consumer: bool, serial: bool = False) -> None:
    """One random schedule; raises AssertionError where a consumer passes its wait on another half, or
    the serial producer its wait for half q - 1 before that half landed."""
    rnd = random.Random(seed)
    ready = [0] * (2 * ring if per_consumer else ring)  # completed phases
    written = [0] * ring
    buffer: list[int | None] = [None] * ring
    in_flight: list[int] = []
    stored: set[int] = set()
    issued, taken = 0, [0, 0]
    for _ in range(100_000):
        for q in list(in_flight):  # fills complete in any order
            if rnd.random() < 0.3:
                in_flight.remove(q)
                buffer[q % ring] = q
                ready[((q // 2) % 2) * ring + q % ring if per_consumer else q % ring] += 1
        if issued < 2 * units:  # store half issued - R once written, then fill half issued
            q, prev = issued, issued - ring
            if prev >= 0 and prev not in stored and written[prev % ring] % 2 != (prev // ring) % 2:
                stored.add(prev)
            landed = True
            if serial and q >= ring:  # ``_ring_ready`` on half q - 1 (its consumer's barrier and parity)
                p = q - 1
                landed = ready[((p // 2) % 2) * ring + p % ring] % 2 != _parity((p // 4) * 2 + p % 2, ring)
                assert not landed or p not in in_flight, f"the producer passed its wait for half {p} in flight"
            if (prev < 0 or prev in stored) and landed:
                in_flight.append(q)
                issued += 1
        for c in (0, 1):
            k = taken[c]
            if 2 * (k // 2) + c >= units or rnd.random() < 0.5:
                continue
            q = 4 * (k // 2) + 2 * c + k % 2
            if per_consumer:
                passes = ready[c * ring + q % ring] % 2 != _parity(k, ring)
            else:  # session 26's barriers: one per buffer, the parity of the buffer's fill count
                passes = ready[q % ring] % 2 != (q // ring) % 2
            if passes:
                assert buffer[q % ring] == q, f"consumer {c} passed its wait for half {q} on half {buffer[q % ring]}"
                written[q % ring] += 1
                taken[c] += 1
        if all(2 * (taken[c] // 2) + c >= units for c in (0, 1)):
            return
    raise RuntimeError(f"no progress: ring {ring}, {units} units, seed {seed}")


@pytest.mark.parametrize("ring", [2, 3])
def test_each_consumer_finds_its_own_half_behind_its_barrier(ring):
    for seed in range(150):
        for units in (1, 2, 3, 5, 8):
            _run(ring, units, seed, per_consumer=True)


@pytest.mark.parametrize("ring", [2, 3])
def test_serial_fills_wait_for_the_half_before_and_never_stall(ring):
    for seed in range(150):
        for units in (1, 2, 3, 5, 8):
            _run(ring, units, seed, per_consumer=True, serial=True)


@pytest.mark.parametrize("ring", [2, 3])
def test_a_ready_barrier_shared_by_the_consumers_lets_one_read_the_others_fill(ring):
    """What session 27's two-buffer GPU tests failed on (and the three-buffer ring risked)."""
    with pytest.raises(AssertionError, match="passed its wait"):
        for seed in range(150):
            for units in (2, 3, 5, 8):
                _run(ring, units, seed, per_consumer=False)
