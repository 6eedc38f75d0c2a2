"""State codecs and weight stores, torch twins: round-trip bounds, tails, floors, SR.

(The Triton halves are exercised through the kernel in test_fused_kernel.py /
test_ops.py; fp8's Triton half runs on the GPU only.)
"""

from __future__ import annotations

import pytest
import torch

from forge_mcore.codecs import get_codec, get_weight_store, stochastic_round_bf16

SHAPES = [(7, 196), (5, 70), (3, 1), (2, 64), (4, 129)]


def _sample(shape, nonnegative, gen):
    # Magnitudes spanning 8 decades inside every block: what second moments look like.
    x = torch.randn(shape, generator=gen) * torch.exp(torch.randn(shape, generator=gen) * 4)
    return x.abs() if nonnegative else x


def _step(scale, n):
    return scale.repeat_interleave(64, dim=1)[:, :n]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("nonnegative", [False, True])
def test_int8_round_trip_within_half_a_step(shape, nonnegative):
    codec = get_codec("int8")
    gen = torch.Generator().manual_seed(0)
    x = _sample(shape, nonnegative, gen)
    x[:, ::7] = 0.0  # entries that saw only zero gradients
    x[-1] = 0.0  # and a row of blocks that are all zeros (flushed)
    enc = codec.zeros(shape, "cpu", nonnegative)
    codec.encode_(enc, x)
    assert enc.scale.shape == (shape[0], -(-shape[1] // 64))
    y = codec.decode(enc)
    assert not y[-1].any(), "an all-zero block did not stay zero"
    step = _step(enc.scale, shape[1])
    if nonnegative:
        assert enc.data.dtype == torch.uint8
        du = (y.sqrt() - x.sqrt()).abs()
        floored = (x.sqrt() < step / 2) & (step > 0)
        # half a step on sqrt(v); entries below half a step (zeros included) are floored up to one step
        assert (du[~floored] <= step[~floored] / 2 * (1 + 1e-5)).all()
        assert torch.equal(y[floored], step[floored] ** 2)
        assert (y[step > 0] > 0).all(), "a second moment decoded to zero in a block that is not flushed"
    else:
        assert enc.data.dtype == torch.int8
        assert ((y - x).abs() <= step / 2 * (1 + 1e-5)).all()
    blocks_absmax = torch.nn.functional.pad(x.abs(), (0, -shape[1] % 64)).view(shape[0], -1, 64).amax(-1)
    err = (y - x).abs().view(-1)
    bound = codec.relative_error * blocks_absmax.repeat_interleave(64, 1)[:, : shape[1]].reshape(-1)
    if not nonnegative:
        assert (err <= bound * (1 + 1e-5)).all(), "documented relative_error exceeded"


@pytest.mark.parametrize("nonnegative", [False, True])
def test_int8_codes_are_stored_in_fragment_order_in_whole_blocks(nonnegative):
    """Position 16a + 2j + e of a 64-column block holds column 8j + 2a + e; a partial last block is
    stored whole, its missing columns as encoding zeros writes them (one step, for sqrt v, in a block
    that is not flushed; zero otherwise)."""
    codec = get_codec("int8")
    rows, cols = 3, 133  # two whole blocks and a block of 5 columns
    q = torch.arange(cols).remainder(64).float().repeat(rows, 1) + (2.0 if nonnegative else -40.0)
    q[:, 63::64] = 255.0 if nonnegative else 127.0  # each block's absmax: codes are the values themselves
    q[:, 128 + 4] = 255.0 if nonnegative else 127.0
    q[2, 128:] = 0.0  # a flushed partial block
    enc = codec.zeros((rows, cols), "cpu", nonnegative)
    codec.encode_(enc, q.square() if nonnegative else q)
    assert enc.shape == (rows, cols) and enc.data.shape == (rows, 192)
    stored = enc.data.float()
    for a, j, e in [(0, 0, 0), (0, 0, 1), (1, 0, 0), (3, 7, 1), (2, 5, 0), (0, 7, 1)]:
        for block in range(3):
            col = 64 * block + 8 * j + 2 * a + e
            want = q[:2, col] if col < cols else torch.full((2,), 1.0 if nonnegative else 0.0)
            assert torch.equal(stored[:2, 64 * block + 16 * a + 2 * j + e], want), (a, j, e, block)
    assert torch.equal(codec.codes(enc)[:2, :cols].float(), q[:2])
    assert not codec.codes(enc)[2, 128:].any(), "a flushed block's codes must be zeros, padding included"
    assert torch.equal(codec.decode(enc), (q.square() if nonnegative else q))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("nonnegative", [False, True])
def test_fp8_round_trip(shape, nonnegative):
    codec = get_codec("fp8")
    gen = torch.Generator().manual_seed(1)
    x = _sample(shape, nonnegative, gen)
    enc = codec.zeros(shape, "cpu", nonnegative)
    codec.encode_(enc, x)
    assert enc.data.dtype == torch.float8_e4m3fn
    y = codec.decode(enc)
    scale = _step(enc.scale, shape[1])
    # e4m3: 3 significand bits (half-ulp 2^-4 relative) down to 2^-6, then subnormal steps of 2^-9
    bound = torch.maximum(2.0**-4 * x.abs(), 2.0**-10 * scale) * (1 + 1e-5)
    floored = nonnegative & (x > 0) & (x < 2.0**-10 * scale)
    assert ((y - x).abs()[~floored] <= bound[~floored]).all()
    if nonnegative:
        assert (y[x > 0] > 0).all(), "a positive second moment decoded to zero"


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_plain_codecs(name):
    codec = get_codec(name)
    x = torch.randn(5, 70)
    enc = codec.zeros((5, 70), "cpu", False, init=0.25)
    assert torch.equal(codec.decode(enc), torch.full((5, 70), 0.25))
    codec.encode_(enc, x)
    y = codec.decode(enc)
    assert y.data_ptr() != enc.data.data_ptr(), "decode must return a fresh tensor"
    assert ((y - x).abs() <= codec.relative_error * x.abs()).all()


@pytest.mark.parametrize("name", ["int8", "fp8"])
def test_block_codec_init_value_and_zero_block(name):
    codec = get_codec(name)
    enc = codec.zeros((3, 70), "cpu", True, init=0.1)
    assert torch.allclose(codec.decode(enc), torch.full((3, 70), 0.1), rtol=2**-4)
    codec.encode_(enc, torch.zeros(3, 70))
    assert torch.equal(codec.decode(enc), torch.zeros(3, 70))
    assert torch.equal(enc.scale, torch.zeros_like(enc.scale))


def test_unknown_names_raise():
    with pytest.raises(ValueError, match="available"):
        get_codec("int4")
    with pytest.raises(ValueError, match="available"):
        get_weight_store("fp16")


def test_stochastic_rounding_is_unbiased_and_has_no_dead_zone():
    # x = 1 + a quarter of a bf16 ulp: round-to-nearest never moves it (the dead zone)
    ulp = 2.0**-7
    x = torch.full((200_000,), 1.0 + ulp / 4)
    gen = torch.Generator().manual_seed(3)
    y = stochastic_round_bf16(x, gen).float()
    assert set(y.unique().tolist()) == {1.0, 1.0 + ulp}
    assert abs(y.mean().item() - (1.0 + ulp / 4)) < 0.01 * ulp
    assert x.bfloat16().float().unique().tolist() == [1.0]
    neg = stochastic_round_bf16(-x, gen).float()
    assert abs(neg.mean().item() + (1.0 + ulp / 4)) < 0.01 * ulp


@pytest.mark.parametrize("name", ["int8", "fp8"])
def test_vanishing_block_is_coded_as_zeros(name):
    """A momentum decaying over zero gradients reaches ~1e-37, where qmax / absmax
    overflows fp32: such blocks are coded as zeros (no NaN codes, zeros stay zero)."""
    codec = get_codec(name)
    x = torch.zeros(2, 64)
    x[0, :32] = 1e-37  # half the block tiny, half exactly zero
    x[1, :] = torch.linspace(-1.0, 1.0, 64)  # an ordinary block beside it
    enc = codec.zeros(tuple(x.shape), "cpu", nonnegative=False)
    codec.encode_(enc, x)
    decoded = codec.decode(enc)
    assert torch.isfinite(decoded).all()
    assert torch.equal(decoded[0], torch.zeros(64))
    assert (decoded[1] - x[1]).abs().max() <= x[1].abs().max() * codec.relative_error * 1.01


def test_vanishing_int8_momentum_in_the_kernel_matches_the_twin():
    """The same flush on the Triton path (interpreter): SGD momentum in int8, zero gradient."""
    import forge_mcore as fm

    w = torch.ones(4, 64)
    states = {}
    for backend in ("triton", "torch"):
        state = fm.ForgeParamState.create(w.clone(), "sgd", dict(momentum=0.9, lr=0.1), "int8", "fp32")
        momentum = state.slots[state.specs[0].slot]
        momentum.data[:, :32] = 127  # (half of each row's columns: the codes' first 32 positions)
        momentum.scale.fill_(1e-37 / 127)  # decodes to 1e-37 there, 0 in the rest
        weight = w.clone()
        group = state.rule.make_group(momentum=0.9, lr=0.1)
        state.prepare_step(group)  # step 1 initializes the buffer from the gradient; use step 2
        fm.fused_wgrad_step(torch.zeros(3, 4), torch.zeros(3, 64), weight, state, state.prepare_step(group),
                            backend=backend)
        states[backend] = state.codec.decode(momentum)
    assert torch.isfinite(states["triton"]).all()
    assert torch.equal(states["triton"], states["torch"])
    assert torch.equal(states["triton"], torch.zeros(4, 64))


@pytest.mark.parametrize("q,wrong", [(127.0, 0), (255.0, 0), (448.0, 18724)])
def test_scale_division_by_a_constant_rounds_as_div_rn_or_the_codec_cannot_use_it(q, wrong):
    """The int8 scales' ``x / Q`` as a corrected product (``tl_bits.div_exact_by_constant``): its arithmetic
    against the correctly rounded quotient over the operands whose quotients are subnormal or barely normal,
    where it can fail (fp8's 448 does: that codec keeps div_rn), and one ordinary binade. Every operand:
    ``python scripts/check_division.py``; the compiled code: the GPU test against div_rn."""
    from scripts.check_division import mismatches

    assert mismatches(q, 0, 1 << 24, chunk=1 << 22) == wrong
    assert mismatches(q, 0x3F800000, 0x3F800000 + (1 << 22)) == 0  # [1, 1.5)
