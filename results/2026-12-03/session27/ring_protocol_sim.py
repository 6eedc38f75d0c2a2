"""A model of the tile ring's protocol (gluon_wgrad._ws_fetch_halves, _ring_ready), session 27.

One producer issues fills of column halves q = 0, 1, ... in order (half q into buffer q % R once
half q - R is written), fills complete in random order, and two consumers take their units' halves
in order (consumer c: units c, c + 2, ...; its k-th half is q = 4 (k // 2) + 2 c + k % 2). Ready
barriers follow mbarrier parity semantics: a wait on parity P passes while the barrier's completed
phase count m has m & 1 != P. The model asserts that a consumer passing its wait finds its own
half in the buffer.

    python results/2026-12-03/session27/ring_protocol_sim.py

prints, for R = 2 and 3, whether a ready barrier shared by the consumers (session 26: parity of
q // R) aliases, and that one barrier per consumer and buffer (_ring_ready's parity) never does.
"""
import random


def ring_parity(k: int, ring: int) -> int:
    """_ring_ready's parity for a consumer's k-th half."""
    return (k // 2) & 1 if ring == 2 else (0b110100 >> (k % 6)) & 1


def simulate(ring: int, units: int, seed: int, per_consumer: bool) -> None:
    rnd = random.Random(seed)
    ready = [0] * (2 * ring)  # completed phases per barrier
    written = [0] * ring
    buffer = [None] * ring
    pending, stored, issued = [], set(), 0
    taken = [0, 0]  # halves each consumer has taken
    for _ in range(200_000):
        for q in list(pending):  # fills complete in any order
            if rnd.random() < 0.3:
                pending.remove(q)
                buffer[q % ring] = q
                ready[((q // 2) % 2) * ring + q % ring if per_consumer else q % ring] += 1
        if issued < 2 * units:  # the producer: store half issued - R once written, then fill
            q, prev = issued, issued - ring
            if prev >= 0 and prev not in stored and written[prev % ring] & 1 != (prev // ring) & 1:
                stored.add(prev)
            if prev < 0 or prev in stored:
                pending.append(q)
                issued += 1
        for c in (0, 1):
            k = taken[c]
            if 2 * (k // 2) + c >= units or rnd.random() < 0.5:
                continue
            q = 4 * (k // 2) + 2 * c + k % 2
            bar = c * ring + q % ring if per_consumer else q % ring
            parity = ring_parity(k, ring) if per_consumer else (q // ring) & 1
            if ready[bar] & 1 != parity:
                assert buffer[q % ring] == q, f"consumer {c} passed its wait for half {q} on half {buffer[q % ring]}"
                written[q % ring] += 1
                taken[c] += 1
        if all(2 * (taken[c] // 2) + c >= units for c in (0, 1)):
            return
    raise RuntimeError("deadlock")


if __name__ == "__main__":
    for per_consumer in (False, True):
        for ring in (2, 3):
            try:
                for seed in range(300):
                    for units in (1, 2, 3, 5, 8):
                        simulate(ring, units, seed, per_consumer)
                verdict = "no alias in 1500 random runs"
            except AssertionError as e:
                verdict = f"aliases: {e}"
            print(f"{'per-consumer' if per_consumer else 'shared'} ready barriers, {ring} buffers: {verdict}")
