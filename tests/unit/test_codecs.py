"""State codecs and weight stores, torch twins: round-trip bounds, tails, floors, SR.

(The Triton halves are exercised through the kernel in test_fused_kernel.py /
test_ops.py, and the int8 one bit for bit against its twin here; fp8's Triton half
runs on the GPU only.)
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from forge_mcore.codecs import get_codec, get_weight_store, stochastic_round_bf16
from forge_mcore.codecs.blockwise import FLUSH_BELOW, int8_load, int8_store
from forge_mcore.kernels.tile_io import load_tile, store_tile
from forge_mcore.kernels.tl_bits import INTERPRETING

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


@triton.jit
def _int8_codec_kernel(x_ptr, codes_ptr, scale_ptr, decoded_ptr, M, N, NB, BM: tl.constexpr, NONNEG: tl.constexpr):
    """The kernels' int8 codec on one 64-column block of BM rows: ``x`` encoded (``int8_store``), then
    what was stored decoded (``int8_load``)."""
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * 64
    int8_store(codes_ptr, scale_ptr, om, on, M, N, NB, load_tile(x_ptr, om, on, M, N, BM, 64, False), NONNEG, False)
    decoded = int8_load(codes_ptr, scale_ptr, om, on, M, N, NB, BM, 64, NONNEG, False)
    store_tile(decoded_ptr, om, on, M, N, decoded, False)


def _int8_edge_rows(nonnegative: bool, cols: int) -> torch.Tensor:
    """Rows that each probe one way the kernel's arithmetic could part from the twin's: codes exactly
    half-way between two steps (absmax 127, or 255 on sqrt v: the quotient is the value itself), blocks
    flushed or just above the flush, huge and subnormal magnitudes side by side, zeros and entries below
    half a step in blocks that are not flushed, random values over eight decades."""
    gen = torch.Generator().manual_seed(3)
    qmax = 255.0 if nonnegative else 127.0
    ties = (torch.arange(cols) % 120).float() + 0.5  # k + 1/2 for k < 120, each block's absmax set below
    sign = torch.ones(cols) if nonnegative else torch.where(torch.arange(cols) % 3 == 0, -1.0, 1.0)
    rows = [
        ties * sign,
        torch.zeros(cols),
        torch.full((cols,), FLUSH_BELOW),  # (flushed: the codec flushes absmax <= FLUSH_BELOW)
        torch.full((cols,), FLUSH_BELOW * 1.5),
        # fp32's largest magnitudes beside subnormal ones (sqrt v: v = 2.25e38 and 1e-40)
        torch.where(torch.arange(cols) % 5 == 0, 1.5e19 if nonnegative else 3.0e37, 1e-20 if nonnegative else 1e-40),
        torch.where(torch.arange(cols) % 4 == 0, 0.0, 1.0e-4),
        torch.randn(cols, generator=gen) * torch.exp(torch.randn(cols, generator=gen) * 4),
    ]
    u = torch.stack(rows)
    u[0, 63::64] = qmax  # the ties' blocks: inv = qmax / qmax = 1 exactly
    u[5, ::64] = 1.0  # a step of 1 / qmax: 1e-4 sits below half of it (sqrt v: 1e-2 does not)
    if nonnegative:
        return u.abs().square()  # v, whose sqrt the codec codes: exact for the ties
    return u


@pytest.mark.skipif(not INTERPRETING, reason="compiled, division and sqrt are the approximate instructions "
                    "(tl_bits: FORGE_IEEE_MATH=0), so bits may differ from the twin's by design")
@pytest.mark.parametrize("cols", [192, 150])  # whole blocks; a partial last block of 22 columns
@pytest.mark.parametrize("nonnegative", [False, True])
def test_int8_triton_codec_is_the_twin_bit_for_bit(nonnegative, cols):
    """The kernels' int8 encode and decode (``int8_store`` / ``int8_load``, under the interpreter) give the
    twin's codes, scales and decoded values bit for bit, the padding codes of a partial block included:
    the kernel's parity tests allow a code step per requantization, which a biased rounding would pass."""
    codec = get_codec("int8")
    x = _int8_edge_rows(nonnegative, cols)
    rows = x.shape[0]
    twin = codec.zeros((rows, cols), "cpu", nonnegative)
    codec.encode_(twin, x)
    kernel = codec.zeros((rows, cols), "cpu", nonnegative)
    kernel.data.fill_(77)  # poisoned: every code and scale must be written
    kernel.scale.fill_(float("nan"))
    decoded = torch.full_like(x, float("nan"))
    nb = codec.scale_blocks(cols)
    _int8_codec_kernel[(triton.cdiv(rows, 4), nb)](x, kernel.data, kernel.scale, decoded, rows, cols, nb, BM=4,
                                                   NONNEG=nonnegative)
    assert torch.equal(kernel.scale, twin.scale), (kernel.scale, twin.scale)
    differ = (kernel.data != twin.data).nonzero().tolist()
    assert not differ, f"codes differ at {differ[:8]}: kernel {kernel.data[kernel.data != twin.data][:8].tolist()}, " \
                       f"twin {twin.data[kernel.data != twin.data][:8].tolist()}"
    assert torch.equal(decoded, codec.decode(twin))
    assert torch.equal(codec.decode(twin)[1:3], torch.zeros(2, cols)), "flushed blocks must decode to zeros"


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
    with pytest.raises(TypeError, match="state_dtype"):
        get_codec(8)
    with pytest.raises(TypeError, match="weight_store"):
        get_weight_store(torch.bfloat16)


def test_a_codec_name_cannot_be_registered_twice():
    from forge_mcore.codecs.base import register

    with pytest.raises(ValueError, match="registered twice"):
        register(type(get_codec("int8")))
    assert get_codec("INT8") is get_codec("int8")


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
