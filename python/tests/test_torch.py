"""The torch path against torch.nn.functional.conv_transpose3d."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch tests need it")
import torch.nn.functional as F  # noqa: E402

import convt3d  # noqa: E402
import convt3d.torch  # noqa: E402,F401
from convt3d import _lib  # noqa: E402
from conftest import convt3d_f64, kwargs, random_problem, tensors, tolerance  # noqa: E402

DEVICES = ["cpu"]
if torch.cuda.is_available() and convt3d.cuda_device_count() > 0:
    DEVICES.append("cuda")


def close(y, ref, tol=1e-5):
    y, ref = y.detach().double().cpu(), ref.detach().double().cpu()
    err = (torch.linalg.vector_norm(y - ref) / max(torch.linalg.vector_norm(ref).item(), 1e-30)).item()
    assert err <= tol, "relative L2 error %.3e (tolerance %.0e)" % (err, tol)


def f64(x, w, b=None, **kw):
    """The float64 formula on the tensors as they are (half-rounded ones included)."""
    def np64(t):
        return None if t is None else t.detach().double().cpu().numpy()
    return torch.from_numpy(convt3d_f64(np64(x), np64(w), np64(b), **kw))


HALF = [torch.float16, torch.bfloat16]
DTYPE_CODES = {torch.float32: _lib.F32, torch.float16: _lib.F16, torch.bfloat16: _lib.BF16}


@pytest.fixture(autouse=True)
def exact_torch():
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(30))
def test_random_problems(device, seed):
    rng = np.random.default_rng(2000 + seed)
    pr = random_problem(rng)
    x, w, b = (None if a is None else torch.from_numpy(a).to(device) for a in tensors(rng, pr))
    channels_last = bool(rng.integers(0, 2))
    if channels_last:
        x = x.to(memory_format=torch.channels_last_3d)
    kw = kwargs(pr)
    ref = F.conv_transpose3d(x, w, b, **kw)
    y = convt3d.conv_transpose3d(x, w, b, **kw)
    assert isinstance(y, torch.Tensor) and y.device == x.device and y.dtype == torch.float32
    assert y.shape == ref.shape
    if channels_last and not x.is_contiguous():
        assert y.is_contiguous(memory_format=torch.channels_last_3d)
    else:
        assert y.is_contiguous()
    if device == "cuda":
        torch.cuda.synchronize()
    close(y, ref)


@pytest.mark.parametrize("device", DEVICES)
def test_output_size_like_the_module(device):
    m = torch.nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 3, 2), padding=1, groups=2).to(device)
    x = torch.randn(2, 4, 3, 4, 5, device=device)
    for size in [(5, 10, 9), (6, 11, 10), (2, 6, 6, 9, 10)]:
        ref = m(x, output_size=size)
        y = convt3d.conv_transpose3d(x, m.weight, m.bias, m.stride, m.padding, 0, m.groups,
                                     m.dilation, output_size=size)
        assert y.shape == ref.shape
        close(y, ref)
    with pytest.raises(ValueError):
        m(x, output_size=(8, 12, 10))
    with pytest.raises(ValueError):
        convt3d.conv_transpose3d(x, m.weight, m.bias, m.stride, m.padding, 0, m.groups,
                                 output_size=(8, 12, 10))


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_and_unbatched(device):
    x = torch.randn(2, 3, 8, 5, 6, device=device)[:, :, ::2]
    w = torch.randn(3, 2, 3, 3, 3, device=device)
    assert not x.is_contiguous()
    close(convt3d.conv_transpose3d(x, w, stride=2), F.conv_transpose3d(x, w, stride=2))
    xu = torch.randn(3, 4, 4, 4, device=device)
    close(convt3d.conv_transpose3d(xu, w, padding=1), F.conv_transpose3d(xu, w, padding=1))
    mu = torch.nn.ConvTranspose3d(3, 2, 3, stride=2).to(device)
    ref = mu(xu, output_size=(2, 10, 9, 10))
    y = convt3d.torch.from_module(mu)(xu, output_size=(2, 10, 9, 10))
    assert y.shape == ref.shape == (2, 10, 9, 10)
    close(y, ref)
    wt = torch.randn(2, 3, 3, 3, 3, device=device).transpose(0, 1)  # a non-contiguous weight
    close(convt3d.conv_transpose3d(x, wt, stride=2), F.conv_transpose3d(x, wt, stride=2))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [
    dict(stride=0), dict(padding=-1), dict(dilation=0), dict(output_padding=2, stride=2),
    dict(groups=4), dict(stride=(1, 2)),
])
def test_invalid_problems_raise_where_torch_raises(device, bad):
    x = torch.randn(1, 2, 3, 3, 3, device=device)
    w = torch.randn(2, 2, 3, 3, 3, device=device)
    with pytest.raises((RuntimeError, ValueError)):
        F.conv_transpose3d(x, w, **bad)
    with pytest.raises(ValueError) as e:
        convt3d.conv_transpose3d(x, w, **bad)
    assert isinstance(e.value, convt3d.Error) and str(e.value)


@pytest.mark.parametrize("device", DEVICES)
def test_errors_mixed_and_unsupported_dtypes(device):
    x = torch.randn(1, 2, 3, 3, 3, device=device)
    w = torch.randn(2, 2, 3, 3, 3, device=device)
    with pytest.raises(RuntimeError):
        F.conv_transpose3d(x, torch.randn(3, 2, 3, 3, 3, device=device))
    with pytest.raises(convt3d.InvalidProblemError, match="channels"):
        convt3d.conv_transpose3d(x, torch.randn(3, 2, 3, 3, 3, device=device))
    b = torch.randn(2, device=device)
    for args in [(x.half(), w), (x, w.bfloat16()), (x.half(), w.half(), b),
                 (x.bfloat16(), w.bfloat16(), b.half()), (x.half(), w.bfloat16())]:
        with pytest.raises(convt3d.UnsupportedError) as e:
            convt3d.conv_transpose3d(*args)
        assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"
        assert "one dtype" in str(e.value) and "float32, float16 or bfloat16" in str(e.value)
    with pytest.raises(convt3d.UnsupportedError) as e:
        convt3d.conv_transpose3d(x.double(), w.double())
    assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"
    assert "torch.float64" in str(e.value)
    with pytest.raises(convt3d.UnsupportedError) as e:
        convt3d.conv_transpose3d(x, w, math_mode=7)
    assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_MATH_MODE"
    with pytest.raises(convt3d.InvalidProblemError):
        convt3d.conv_transpose3d(x, w, math_mode="bf16")
    with pytest.raises(convt3d.InvalidProblemError):
        convt3d.conv_transpose3d(x, w, device="cuda:7" if device == "cpu" else "cpu")


def test_cpu_tensor_shares_memory_with_numpy():
    x = torch.randn(1, 2, 3, 3, 3)
    w = torch.randn(2, 2, 2, 2, 2)
    y = convt3d.conv_transpose3d(x, w, stride=2)
    close(y, torch.from_numpy(convt3d.conv_transpose3d(x.numpy(), w.numpy(), stride=2)), 0)


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device (or convt3d built without CUDA)")
def test_cuda_side_stream():
    x = torch.randn(4, 16, 8, 8, 8, device="cuda")
    w = torch.randn(16, 8, 3, 3, 3, device="cuda")
    b = torch.randn(8, device="cuda")
    ref = F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        ys = [convt3d.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1)
              for _ in range(3)]
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    for y in ys:
        close(y, ref)


# ---- data types and math modes ----------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("seed", range(12))
def test_random_problems_in_half(device, dtype, seed):
    rng = np.random.default_rng(3000 + seed)
    pr = random_problem(rng)
    x, w, b = (None if a is None else torch.from_numpy(a).to(device, dtype)
               for a in tensors(rng, pr))
    channels_last = bool(rng.integers(0, 2))
    if channels_last:
        x = x.to(memory_format=torch.channels_last_3d)
    kw = kwargs(pr)
    y = convt3d.conv_transpose3d(x, w, b, **kw)
    assert y.dtype == dtype and y.device == x.device
    if channels_last and not x.is_contiguous():
        assert y.is_contiguous(memory_format=torch.channels_last_3d)
    ref = f64(x, w, b, **kw)  # from the same half-rounded inputs
    assert y.shape == ref.shape
    close(y, ref, tolerance(dtype))


def _tensor_core_sized(device, dtype, channels_last):
    # enough channels a group for the GPU's tensor-core (igemm mma) kernels
    g = torch.Generator().manual_seed(13)
    x = (torch.rand(2, 32, 4, 5, 6, generator=g) * 2 - 1).to(device, dtype)
    w = (torch.rand(32, 16, 3, 3, 3, generator=g) * 2 - 1).to(device, dtype)
    b = (torch.rand(16, generator=g) * 2 - 1).to(device, dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last_3d)
    return x, w, b, dict(stride=2, padding=1, output_padding=1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("mode", ["f32", "fp32", "tf32", "3xtf32", 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32] + HALF)
def test_dtypes_and_math_modes_against_f64(device, dtype, mode, channels_last):
    x, w, b, kw = _tensor_core_sized(device, dtype, channels_last)
    y = convt3d.conv_transpose3d(x, w, b, math_mode=mode, **kw)
    assert y.dtype == dtype and y.device == x.device
    assert y.is_contiguous(memory_format=torch.channels_last_3d if channels_last
                           else torch.contiguous_format)
    if device == "cuda":
        torch.cuda.synchronize()
    close(y, f64(x, w, b, **kw), tolerance(dtype, mode))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF)
def test_half_autograd_matches_torch(device, dtype):
    # the backward is torch's own in the tensors' dtype: check it is wired right
    g = torch.Generator().manual_seed(14)
    x = torch.randn(2, 8, 3, 4, 5, generator=g).to(device, dtype).requires_grad_()
    w = torch.randn(8, 3, 3, 3, 3, generator=g).to(device, dtype).requires_grad_()
    b = torch.randn(6, generator=g).to(device, dtype).requires_grad_()
    kw = dict(stride=2, padding=1, output_padding=1, groups=2)
    y = convt3d.conv_transpose3d(x, w, b, **kw)
    yr = F.conv_transpose3d(x, w, b, **kw)
    assert y.dtype == dtype
    close(y, f64(x, w, b, **kw), tolerance(dtype))
    gy = torch.randn(yr.shape, generator=g).to(device, dtype)
    got = torch.autograd.grad(y, (x, w, b), gy)
    want = torch.autograd.grad(yr, (x, w, b), gy)
    for a, e in zip(got, want):
        assert a.dtype == dtype
        close(a, e, 1e-2)


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device (or convt3d built without CUDA)")
@pytest.mark.parametrize("dtype", HALF)
def test_cuda_half_runs_half_kernels(dtype):
    # half data on the GPU: a cuda/<dtype>_ implementation, on a side stream too
    x, w, b, kw = _tensor_core_sized("cuda", dtype, False)
    name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    p = convt3d.make_problem(x.shape, w.shape, b.shape, dtypes=(DTYPE_CODES[dtype],) * 4, **kw)
    plan = convt3d.Plan(p, "cuda:%d" % x.device.index, w.data_ptr(), b.data_ptr())
    assert plan.implementation.startswith("cuda/%s_" % name), plan.implementation
    plan.close()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = convt3d.conv_transpose3d(x, w, b, **kw)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    close(y, f64(x, w, b, **kw), tolerance(dtype))
