"""DirectLauncher: a compiled kernel is reused exactly where Triton's specialization says so.

The launcher's cache logic runs on CPU against a fake ``JITFunction`` and a fake
driver; the real launches (and their results) are checked by the GPU parity tests,
whose second and later steps go through the direct path.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import torch
from triton.backends.compiler import BaseBackend
from triton.runtime.driver import driver

from forge_mcore.kernels.launch import DirectLauncher, no_launch_hooks


class FakeCompiled:
    function, packed_metadata = "function", "metadata"

    def __init__(self, log):
        self.log = log

    def run(self, gx, gy, gz, stream, function, metadata, launch_metadata, enter, exit, *args):
        self.log.append(("direct", (gx, gy, gz), stream, args))


class FakeKernel:
    """Parameters (a, b, n, BLOCK: constexpr, MODE: constexpr); JIT launches are logged."""

    arg_names = ["a", "b", "n", "BLOCK", "MODE"]
    constexprs = [3, 4]

    def __init__(self):
        self.log = []
        self.device_caches = defaultdict(lambda: (None, None, None, BaseBackend, None))

    def __getitem__(self, grid):
        def run(*args, **kwargs):
            self.log.append(("jit", grid, args, kwargs))
            return FakeCompiled(self.log)
        return run


class FakeDriver:
    def get_current_device(self):
        return 0

    def get_current_stream(self, device):
        return 1234


@pytest.fixture
def launcher(monkeypatch):
    monkeypatch.setattr(driver, "_active", FakeDriver())
    monkeypatch.setattr(DirectLauncher, "_direct_allowed", staticmethod(lambda: True))
    return DirectLauncher(FakeKernel())


def test_same_specialization_launches_directly_with_every_argument(launcher):
    a, b = torch.zeros(64), torch.zeros(64)
    plan = launcher.plan({"BLOCK": 16, "MODE": 0}, {"num_warps": 4})
    launcher((4,), (a, b, 32), plan)
    launcher((8,), (a, b, 48), launcher.plan({"MODE": 0, "BLOCK": 16}, {"num_warps": 4}))  # 48: still /16
    kinds = [entry[0] for entry in launcher.kernel.log]
    assert kinds == ["jit", "direct"]
    _, grid, stream, args = launcher.kernel.log[1]
    assert grid == (8, 1, 1) and stream == 1234
    assert args[:3] == (a, b, 48) and args[3:] == (16, 0)  # runtime arguments, then constexprs in order
    assert launcher.direct_launches == 1


@pytest.mark.parametrize("change", ["int_alignment", "int_one", "pointer_alignment", "dtype", "constexpr", "option"])
def test_any_specialization_change_goes_through_triton(launcher, change):
    a, b = torch.zeros(64), torch.zeros(64)
    base = ((a, b, 32), {"BLOCK": 16, "MODE": 0}, {"num_warps": 4})
    launcher((4,), base[0], launcher.plan(*base[1:]))
    args, constexprs, options = base
    if change == "int_alignment":
        args = (a, b, 33)
    elif change == "int_one":
        args = (a, b, 1)
    elif change == "pointer_alignment":
        args = (a[1:], b, 32)  # 4 bytes off a 16-byte boundary
    elif change == "dtype":
        args = (a.to(torch.bfloat16), b, 32)
    elif change == "constexpr":
        constexprs = {"BLOCK": 32, "MODE": 0}
    else:
        options = {"num_warps": 8}
    launcher((4,), args, launcher.plan(constexprs, options))
    assert [entry[0] for entry in launcher.kernel.log] == ["jit", "jit"]
    launcher((4,), args, launcher.plan(constexprs, options))
    assert [entry[0] for entry in launcher.kernel.log] == ["jit", "jit", "direct"]


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("FORGE_DIRECT_LAUNCH", "0")
    launcher = DirectLauncher(FakeKernel())
    for _ in range(2):
        launcher((4,), (torch.zeros(4), torch.zeros(4), 32), launcher.plan({"BLOCK": 16, "MODE": 0}, {}))
    assert [entry[0] for entry in launcher.kernel.log] == ["jit", "jit"]


def test_plan_names_every_constexpr(launcher):
    with pytest.raises(ValueError, match="constexprs must name exactly"):
        launcher.plan({"BLOCK": 16}, {})


def test_refuses_constexprs_before_runtime_arguments():
    kernel = FakeKernel()
    kernel.constexprs = [1, 4]
    with pytest.raises(ValueError, match="constexpr after the runtime arguments"):
        DirectLauncher(kernel)


def test_launch_hooks_are_detected(monkeypatch):
    from triton import knobs

    assert no_launch_hooks()  # Triton's defaults: empty hook chains
    knobs.runtime.launch_enter_hook.add(print)
    try:
        assert not no_launch_hooks()  # a profiler's hook must see every launch: JITFunction.run
    finally:
        knobs.runtime.launch_enter_hook.remove(print)
    assert no_launch_hooks()


def test_stable_positions_name_the_weights_own_objects():
    from forge_mcore import ops
    from forge_mcore.kernels.fused_wgrad import fused_wgrad_step_kernel

    names = {fused_wgrad_step_kernel.arg_names[i] for i in ops._STABLE_ARGS}
    assert names == {"w", "master", "s0", "s0_scale_ptr", "s1", "s1_scale_ptr", "s2", "s2_scale_ptr",
                     "hyper_ptr", "sumsq_ptr", "nonfinite_ptr", "w_raw", "s0_raw", "s1_raw", "s2_raw"}


class FakeCudaLauncher:
    """Triton 3.6's CudaLauncher around a logging C launcher: its ``launch`` is Triton's own
    descriptor-expanding wrapper (``wrap_handle_tensordesc``)."""

    global_scratch_size = profile_scratch_size = 0
    launch_cooperative_grid = launch_pdl = False

    def __init__(self, signature, log):
        from triton.backends.nvidia.driver import wrap_handle_tensordesc

        self.launch = wrap_handle_tensordesc(lambda *a: log.append(a), signature, None)

    def __call__(self, gx, gy, gz, stream, function, *args):
        self.launch(gx, gy, gz, stream, function, self.launch_cooperative_grid, self.launch_pdl, None, None, *args)


def test_raw_launch_expands_like_triton_and_keeps_stable_encodings():
    from triton.tools.tensor_descriptor import TensorDescriptor

    from forge_mcore.kernels.launch import LaunchPlan, RawLaunch

    log = []
    compiled = FakeCompiled(log)
    compiled.run = FakeCudaLauncher({0: "tensordesc<bf16[16, 16]>", 1: "tensordesc<bf16[16, 16]>", 2: "i32",
                                     3: "constexpr"}, log)
    raw = RawLaunch(compiled)
    assert raw.c_launch is not None
    encoded = []
    make = raw.make_tensordesc_arg
    raw.make_tensordesc_arg = lambda arg, meta: encoded.append(arg) or make(arg, meta)
    stable = TensorDescriptor.from_tensor(torch.zeros(32, 32, dtype=torch.bfloat16), [16, 16])
    plan = LaunchPlan({}, {}, (0,), (7,), stable=frozenset([1]))

    def fresh():
        return TensorDescriptor.from_tensor(torch.zeros(32, 32, dtype=torch.bfloat16), [16, 16])

    for _ in range(3):
        args = (fresh(), stable, 5)
        raw((2, 1, 1), 99, args, plan)
        compiled.run(2, 1, 1, 99, compiled.function, compiled.packed_metadata, None, None, None, *args, 7)
        ours, triton_s = log[-2], log[-1]
        assert len(ours) == len(triton_s) and all(a is b or a == b for a, b in zip(ours, triton_s))
    assert [a is stable for a in encoded] == [False, True, False, False]  # the stable one encoded once
    stable.base = torch.zeros(32, 32, dtype=torch.bfloat16)  # its tensor moved: encoded again
    raw((2, 1, 1), 99, (fresh(), stable, 5), plan)
    assert [a is stable for a in encoded[4:]] == [False, True]


def test_raw_launch_falls_back_without_triton_36_launcher():
    from forge_mcore.kernels.launch import LaunchPlan, RawLaunch

    log = []
    raw = RawLaunch(FakeCompiled(log))
    assert raw.c_launch is None
    raw((1, 1, 1), 5, (1, 2), LaunchPlan({}, {}, (0,), (3,)))
    assert log == [("direct", (1, 1, 1), 5, (1, 2, 3))]


def _bound_setup(log):
    from forge_mcore.kernels.launch import LaunchPlan, RawLaunch

    compiled = FakeCompiled(log)
    compiled.run = FakeCudaLauncher({0: "tensordesc<bf16[16, 16]>", 1: "tensordesc<bf16[16, 16]>", 2: "*fp32",
                                     3: "i32", 4: "constexpr"}, log)
    return compiled, RawLaunch(compiled), LaunchPlan({}, {}, (0,), (7,), stable=frozenset([1]))


def _desc(t):
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor.from_tensor(t, [16, 16])


def test_bound_launch_equals_a_full_launch_with_the_new_varying_arguments():
    log = []
    compiled, raw, plan = _bound_setup(log)
    stable, scale = _desc(torch.zeros(32, 32, dtype=torch.bfloat16)), torch.zeros(1)
    bound = raw.bind((2,), (_desc(torch.zeros(32, 32, dtype=torch.bfloat16)), stable, scale, 5), plan, (0, 2))
    for _ in range(3):
        dy, new_scale = torch.randn(32, 32).bfloat16(), torch.zeros(1)
        bound(99, dy, new_scale)
        compiled.run(2, 1, 1, 99, compiled.function, compiled.packed_metadata, None, None, None,
                     _desc(dy), stable, new_scale, 5, 7)
        ours, triton_s = log[-2], log[-1]
        assert len(ours) == len(triton_s) and all(a is b or a == b for a, b in zip(ours, triton_s))
        assert any(a is dy for a in ours) and any(a is new_scale for a in ours)


def test_bound_launch_reencodes_only_its_varying_descriptors():
    log, encoded = [], []
    compiled, raw, plan = _bound_setup(log)
    # as on a GPU: encoded descriptors (a fake encoding that records the base it was given)
    raw.desc_meta = {0: "meta", 1: "meta"}
    raw.make_tensordesc_arg = lambda d, meta: encoded.append(d.base) or [("map", d.base.data_ptr()), *d.shape,
                                                                           *d.strides]
    first, stable = torch.zeros(32, 32, dtype=torch.bfloat16), torch.zeros(32, 32, dtype=torch.bfloat16)
    bound = raw.bind((2, 1, 1), (_desc(first), _desc(stable), torch.zeros(1), 5), plan, (0, 2))
    assert [t is first for t in encoded] == [True, False]  # each encoded once while binding
    dy = torch.zeros(32, 32, dtype=torch.bfloat16)
    bound(99, dy, torch.zeros(1))
    assert len(encoded) == 3 and encoded[-1] is dy
    maps = [a for a in log[-1] if isinstance(a, tuple) and a[:1] == ("map",)]
    assert maps == [("map", dy.data_ptr()), ("map", stable.data_ptr())]


def test_raw_launch_without_c_launcher_cannot_bind():
    from forge_mcore.kernels.launch import LaunchPlan, RawLaunch

    assert RawLaunch(FakeCompiled([])).bind((1, 1, 1), (1,), LaunchPlan({}, {}, (0,), ()), (0,)) is None


def test_pointer_only_kernel_launches_through_its_c_launcher(capsys):
    """Without descriptor arguments Triton's ``launch`` is the C launcher itself (here: a
    builtin that prints its arguments); a bound launch calls it with the new pointer."""
    from types import SimpleNamespace

    from forge_mcore.kernels.launch import LaunchPlan, RawLaunch

    compiled = FakeCompiled([])
    compiled.run = SimpleNamespace(launch=print, global_scratch_size=0, profile_scratch_size=0,
                                   launch_cooperative_grid=False, launch_pdl=False)
    raw = RawLaunch(compiled)
    assert raw.c_launch is print and raw.desc_meta == {}
    raw.bind((3,), ("old", 5), LaunchPlan({}, {}, (0,), (7,)), (0,))(99, "new")
    expected = (3, 1, 1, 99, "function", False, False, None, None, "metadata", None, None, None, "new", 5, 7)
    assert capsys.readouterr().out.split() == [str(a) for a in expected]


def test_bound_launch_keeps_no_varying_tensor_alive():
    """dY and X are megabytes per layer: a bound launch that kept the last ones (or the ones it
    was bound with) would hold every fused layer's activation gradient between steps."""
    import gc
    import weakref

    log = []
    _, raw, plan = _bound_setup(log)
    encoded = {0: "meta", 1: "meta"}
    raw.desc_meta = encoded
    raw.make_tensordesc_arg = lambda d, meta: [("map", d.base.data_ptr()), *d.shape, *d.strides]
    first, scale = torch.zeros(32, 32, dtype=torch.bfloat16), torch.zeros(1)
    bound = raw.bind((2,), (_desc(first), _desc(torch.zeros(32, 32, dtype=torch.bfloat16)), scale, 5), plan, (0, 2))
    later, later_scale = torch.zeros(32, 32, dtype=torch.bfloat16), torch.zeros(1)
    bound(99, later, later_scale)
    refs = [weakref.ref(t) for t in (first, scale, later, later_scale)]
    log.clear()
    del first, scale, later, later_scale
    gc.collect()
    assert [r() for r in refs] == [None] * 4
