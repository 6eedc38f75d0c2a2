"""ForgeLinear and its autograd.Function against nn.Linear + torch.optim.AdamW (torch backend)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from forge_mcore.nn import ForgeLinear, patch
from tests.helpers import assert_close_verbose, grid_tensor
from tests.unit.nn.reference import HP

OUT, IN, TOKENS = 37, 29, (3, 5)  # odd shapes, a 3-D input


def _adamw_reference(weight: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """One torch.optim.AdamW step of ``weight`` from ``grad``."""
    p = nn.Parameter(weight.detach().clone())
    p.grad = grad.clone()
    torch.optim.AdamW([p], **HP).step()
    return p.detach()


def test_unbound_forge_linear_is_nn_linear():
    torch.manual_seed(0)
    ref = nn.Linear(IN, OUT)
    layer = ForgeLinear(IN, OUT)
    layer.load_state_dict(ref.state_dict())
    assert isinstance(layer, nn.Linear) and list(layer.state_dict()) == ["weight", "bias"]
    x = torch.randn(*TOKENS, IN)
    torch.testing.assert_close(layer(x), ref(x), rtol=0, atol=0)
    layer(x).sum().backward()
    assert layer.weight.grad is not None  # nothing is fused until patch() binds it


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_backward_computes_dx_from_the_pre_update_weight_then_steps(bias, input_requires_grad):
    gen = torch.Generator().manual_seed(0)
    layer = nn.Linear(IN, OUT, bias=bias)
    with torch.no_grad():
        layer.weight.copy_(grid_tensor(OUT, IN, generator=gen))
    w0 = layer.weight.detach().clone()
    b0 = layer.bias.detach().clone() if bias else None
    x = grid_tensor(*TOKENS, IN, generator=gen).requires_grad_(input_requires_grad)
    dy = grid_tensor(*TOKENS, OUT, generator=gen)
    opt = patch(layer, state_dtype="fp32", clip="none", probe_inputs=(x,), **HP)

    y = layer(x)
    torch.testing.assert_close(y, torch.nn.functional.linear(x, w0, b0), rtol=0, atol=0)
    y.backward(dy)
    opt.step()
    if input_requires_grad:  # exact: grid inputs sum without rounding
        torch.testing.assert_close(x.grad, dy @ w0, rtol=0, atol=0)
    grad_w = dy.reshape(-1, OUT).t() @ x.detach().reshape(-1, IN)
    assert_close_verbose(layer.weight, _adamw_reference(w0, grad_w), rtol=1e-6, atol=1e-7, what="weight")
    if bias:
        assert_close_verbose(layer.bias, _adamw_reference(b0, dy.reshape(-1, OUT).sum(0)), rtol=1e-6, atol=1e-7,
                             what="bias")
    assert layer.weight.grad is None and layer.weight.requires_grad
    assert opt.engine.iteration == 1


def test_hf_conv1d_transposed_weight():
    from transformers.pytorch_utils import Conv1D

    torch.manual_seed(0)
    ref, layer = Conv1D(OUT, IN), Conv1D(OUT, IN)  # weight stored (in, out)
    with torch.no_grad():
        ref.bias.normal_()
    layer.load_state_dict(ref.state_dict())
    x = torch.randn(*TOKENS, IN)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = patch(layer, state_dtype="fp32", clip="none", probe_inputs=(x,), **HP)
    assert opt.report.fused == ["weight", "bias"] and type(layer).__name__ == "ForgeConv1D"
    for _ in range(3):
        for m, o in ((ref, ref_opt), (layer, opt)):
            m(x).square().sum().backward()
            o.step()
            o.zero_grad()
    assert_close_verbose(layer.weight, ref.weight.detach(), rtol=1e-5, atol=1e-6, what="Conv1D weight")
    assert_close_verbose(layer.bias, ref.bias.detach(), rtol=1e-5, atol=1e-6, what="Conv1D bias")


def test_bf16_autocast_with_fp32_weights_behaves_as_nn_linear():
    torch.manual_seed(0)
    ref, layer = nn.Linear(IN, OUT), nn.Linear(IN, OUT)
    layer.load_state_dict(ref.state_dict())
    w0, b0 = ref.weight.detach().clone(), ref.bias.detach().clone()
    x_ref, x = (torch.randn(*TOKENS, IN).requires_grad_() for _ in range(2))
    with torch.no_grad():
        x.copy_(x_ref)
    dy = torch.randn(*TOKENS, OUT, dtype=torch.bfloat16)
    opt = patch(layer, state_dtype="fp32", clip="none", probe_inputs=(x.detach(),), **HP)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y_ref, y = ref(x_ref), layer(x)
    assert y.dtype == y_ref.dtype == torch.bfloat16
    torch.testing.assert_close(y, y_ref, rtol=0, atol=0)
    y_ref.backward(dy)
    y.backward(dy)
    opt.step()
    assert x.grad.dtype == torch.float32
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=0, atol=0)
    # the fused gradient is the fp32 sum of the same bf16 products (nn.Linear rounds it to bf16)
    grad_w = dy.reshape(-1, OUT).float().t() @ x.detach().to(torch.bfloat16).reshape(-1, IN).float()
    assert_close_verbose(layer.weight, _adamw_reference(w0, grad_w), rtol=1e-6, atol=1e-7, what="weight")
    assert_close_verbose(layer.bias, _adamw_reference(b0, dy.float().reshape(-1, OUT).sum(0)), rtol=1e-6,
                         atol=1e-7, what="bias")
    assert layer.weight.dtype == torch.float32


def test_moving_the_model_after_patch_raises():
    layer = nn.Linear(IN, OUT)
    patch(layer, clip="none", probe_inputs=(torch.randn(2, IN),))
    layer.double()
    with pytest.raises(RuntimeError, match="replaced or moved after forge_mcore.patch"):
        layer(torch.randn(2, IN, dtype=torch.float64))


def test_compiling_a_patched_model_keeps_fused_layers_eager():
    torch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(IN, 16), nn.GELU(), nn.Linear(16, 3))
    compiled = nn.Sequential(nn.Linear(IN, 16), nn.GELU(), nn.Linear(16, 3))
    compiled.load_state_dict(eager.state_dict())
    x = torch.randn(4, IN)
    opts = [patch(m, state_dtype="fp32", clip="none", probe_inputs=(x,), **HP) for m in (eager, compiled)]
    run = torch.compile(compiled, backend="eager")
    for _ in range(3):
        for fn, opt in ((eager, opts[0]), (run, opts[1])):
            fn(x).square().sum().backward()
            opt.step()
    for a, b in zip(eager.parameters(), compiled.parameters()):
        assert torch.equal(a, b)
    assert opts[1].engine.iteration == 3 and all(p.grad is None for p in compiled.parameters())
