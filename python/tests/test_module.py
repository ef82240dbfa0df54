"""convt3d.torch.ConvTranspose3d against torch.nn.ConvTranspose3d."""
import copy
import io

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch tests need it")

import convt3d  # noqa: E402
import convt3d.torch as ct  # noqa: E402
from conftest import convt3d_f64, tolerance  # noqa: E402

DEVICES = ["cpu"]
if torch.cuda.is_available() and convt3d.cuda_device_count() > 0:
    DEVICES.append("cuda")


def close(y, ref, tol=1e-5):
    y, ref = y.detach().double().cpu(), ref.detach().double().cpu()
    err = (torch.linalg.vector_norm(y - ref) / max(torch.linalg.vector_norm(ref).item(), 1e-30)).item()
    assert err <= tol, "relative L2 error %.3e" % err


def f64(x, w, b=None, **kw):
    """The float64 formula on the tensors as they are (half-rounded ones included)."""
    def np64(t):
        return None if t is None else t.detach().double().cpu().numpy()
    return torch.from_numpy(convt3d_f64(np64(x), np64(w), np64(b), **kw))


@pytest.fixture(autouse=True)
def exact_torch():
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32 = old


ARGS = [
    dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1,
         groups=2),
    dict(in_channels=3, out_channels=2, kernel_size=(2, 3, 1), stride=(2, 1, 3), bias=False,
         dilation=(1, 2, 1)),
    dict(in_channels=4, out_channels=4, kernel_size=3, stride=2, padding=1, groups=4),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args", ARGS)
def test_state_dict_round_trip(device, args):
    torch.manual_seed(0)
    ref = torch.nn.ConvTranspose3d(**args, device=device)
    m = ct.ConvTranspose3d(**args, device=device)
    assert list(m.state_dict()) == list(ref.state_dict())
    m.load_state_dict(ref.state_dict())
    x = torch.randn(2, args["in_channels"], 3, 4, 5, device=device)
    close(m(x), ref(x))
    back = torch.nn.ConvTranspose3d(**args, device=device)
    back.load_state_dict(m.state_dict())
    close(back(x), ref(x))
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    m2 = ct.ConvTranspose3d(**args, device=device)
    m2.load_state_dict(torch.load(buf))
    close(m2(x), ref(x))
    m3 = copy.deepcopy(m)
    close(m3(x), ref(x))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args", ARGS)
def test_autograd_matches_torch(device, args):
    torch.manual_seed(1)
    ref = torch.nn.ConvTranspose3d(**args, device=device)
    m = ct.from_module(ref, share=False)
    assert m.weight is not ref.weight
    x = torch.randn(2, args["in_channels"], 3, 4, 5, device=device, requires_grad=True)
    for cl in (False, True):
        xin = x.to(memory_format=torch.channels_last_3d) if cl else x
        y, yr = m(xin), ref(xin)
        g = torch.randn_like(yr)
        params = [x, m.weight] + ([m.bias] if m.bias is not None else [])
        rparams = [x, ref.weight] + ([ref.bias] if ref.bias is not None else [])
        got = torch.autograd.grad(y, params, g)
        want = torch.autograd.grad(yr, rparams, g)
        for a, b in zip(got, want):
            close(a, b)


def test_gradcheck_small():
    # the backward is torch's own; check it is wired to the right arguments
    # (float64 is not computed by convt3d, so compare finite differences in f32)
    torch.manual_seed(2)
    m = ct.ConvTranspose3d(2, 2, 2, stride=2, padding=0, output_padding=1, dilation=1)
    x = torch.randn(1, 2, 2, 2, 2, requires_grad=True)
    y = m(x, output_size=(5, 5, 5))
    g = torch.randn_like(y)
    (gx,) = torch.autograd.grad(y, x, g)
    eps = 1e-2
    num = torch.zeros_like(x)
    with torch.no_grad():
        for i in range(x.numel()):
            d = torch.zeros_like(x).view(-1)
            d[i] = eps
            d = d.view_as(x)
            num.view(-1)[i] = ((m(x + d, output_size=(5, 5, 5)) - m(x - d, output_size=(5, 5, 5)))
                               * g).sum() / (2 * eps)
    close(gx, num, 1e-3)


def test_plans_cached_and_rebuilt_when_weights_change():
    torch.manual_seed(3)
    ref = torch.nn.ConvTranspose3d(4, 6, 3, stride=2)
    m = ct.from_module(ref)  # shares the parameters
    assert m.weight is ref.weight
    x = torch.randn(1, 4, 3, 3, 3)
    with torch.no_grad():
        m(x)
        m(x)
        assert m.plan_cache.builds == 1
        m(torch.randn(2, 4, 3, 3, 3))
        assert m.plan_cache.builds == 2
        m(x.to(memory_format=torch.channels_last_3d))
        assert m.plan_cache.builds == 3
        ref.weight.mul_(2)  # an in-place write bumps the version counter
        close(m(x), ref(x))
        assert m.plan_cache.builds == 4
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m(x).sum().backward()
    opt.step()
    with torch.no_grad():
        close(m(x), ref(x))
    assert m.plan_cache.builds == 5  # the same plan for the forward with autograd; one after the step


def test_fast_path_follows_the_cache():
    # repeated calls reuse what the first derived; evictions, weight changes,
    # layouts and changed arguments still take the whole path
    torch.manual_seed(4)
    ref = torch.nn.ConvTranspose3d(3, 5, 3, stride=2, padding=1)
    m = ct.from_module(ref)
    m.plan_cache.capacity = 2
    xs = [torch.randn(n, 3, 4, 3, 2) for n in (1, 2, 3)]
    with torch.no_grad():
        for x in xs + xs:  # capacity 2: every call evicts the plan needed next
            close(m(x), ref(x))
        assert m.plan_cache.builds == 6 and len(m.plan_cache) == 2
        close(m(xs[2]), ref(xs[2]))
        assert m.plan_cache.builds == 6
        xc = xs[2].to(memory_format=torch.channels_last_3d)
        y = m(xc)
        assert y.is_contiguous(memory_format=torch.channels_last_3d)
        close(y, ref(xc))
        xt = xs[2].transpose(2, 4)  # neither layout: copied, as before
        close(m(xt), ref(xt))
        close(m(xt), ref(xt))
        m.stride = (1, 2, 1)
        ref.stride = (1, 2, 1)
        close(m(xs[0]), ref(xs[0]))
        ref.bias.add_(1)
        close(m(xs[0]), ref(xs[0]))
        close(m(xs[0], output_size=(4, 6, 2)), ref(xs[0], output_size=(4, 6, 2)))
        with pytest.raises(convt3d.UnsupportedError):
            m(xs[0].double())  # the same shape, another dtype: checked again
        builds = m.plan_cache.builds
        close(m(xs[0]), ref(xs[0]))
        assert m.plan_cache.builds == builds


def test_constructor_like_torch():
    with pytest.raises(ValueError):
        ct.ConvTranspose3d(2, 2, 3, padding_mode="reflect")
    m = ct.ConvTranspose3d(2, 4, 3, dtype=torch.float32, math_mode="f32")
    assert isinstance(m, torch.nn.ConvTranspose3d) and "math_mode" in repr(m)
    with pytest.raises(convt3d.InvalidProblemError):
        ct.ConvTranspose3d(2, 4, 3, math_mode="bogus")  # at construction, not at forward
    with pytest.raises(TypeError):
        ct.from_module(torch.nn.Conv3d(2, 2, 3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["tf32", "3xtf32"])
def test_math_modes_of_the_module(device, mode):
    torch.manual_seed(6)
    ref = torch.nn.ConvTranspose3d(32, 16, 3, stride=2, padding=1, device=device)
    m = ct.from_module(ref, math_mode=mode)
    assert "math_mode=%r" % mode in repr(m)
    x = torch.randn(2, 32, 4, 5, 6, device=device)
    with torch.no_grad():
        y = m(x)
    assert m.plan_cache.plans()[0].math_mode == mode
    close(y, f64(x, ref.weight, ref.bias, stride=2, padding=1), tolerance(torch.float32, mode))


def test_plan_cache_keys_on_dtype_and_math_mode():
    torch.manual_seed(7)
    m = ct.ConvTranspose3d(4, 6, 3, stride=2, padding=1)
    x = torch.randn(2, 4, 3, 4, 5)
    kw = dict(stride=2, padding=1)
    with torch.no_grad():
        m(x)
        assert m.plan_cache.builds == 1
        for bad in (x.half(), x.bfloat16()):  # same shape and weights: not the f32 plan
            with pytest.raises(convt3d.UnsupportedError) as e:
                m(bad)
            assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"
        assert m.plan_cache.builds == 1
        m.math_mode = "tf32"  # a plan of its own, beside the f32 one
        m(x)
        assert m.plan_cache.builds == 2 and len(m.plan_cache) == 2
        assert sorted(p.math_mode for p in m.plan_cache.plans()) == ["f32", "tf32"]
        for same in (1, "TF32"):  # the same mode, the same plan
            m.math_mode = same
            m(x)
        for same in (None, "f32", "fp32", 0):  # all the default
            m.math_mode = same
            close(m(x), f64(x, m.weight, m.bias, **kw))
        assert m.plan_cache.builds == 2
        m.math_mode = "bogus"
        with pytest.raises(convt3d.InvalidProblemError):
            m(x)
        m.math_mode = None
        for dtype, code in ((torch.float16, 1), (torch.bfloat16, 2), (torch.float32, 0)):
            m.to(dtype)  # new parameters: the plans are rebuilt for them
            builds = m.plan_cache.builds
            xd = x.to(dtype)
            y = m(xd)
            assert y.dtype == dtype and m.plan_cache.builds == builds + 1
            assert [p.problem.x_type for p in m.plan_cache.plans()] == [code]
            close(y, f64(xd, m.weight, m.bias, **kw), tolerance(dtype))
            m(xd)
            assert m.plan_cache.builds == builds + 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_parameters(device, dtype):
    torch.manual_seed(8)
    ref = torch.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                   device=device)
    m = ct.from_module(ref, share=False)
    m = m.half() if dtype == torch.float16 else m.to(torch.bfloat16)
    assert m.weight.dtype == dtype and m.bias.dtype == dtype
    ref = ref.to(dtype)
    x = torch.randn(2, 4, 3, 4, 5, device=device).to(dtype)
    kw = dict(stride=2, padding=1, output_padding=1, groups=2)
    for cl in (False, True):
        xin = (x.to(memory_format=torch.channels_last_3d) if cl else x).detach()
        xin.requires_grad_()
        y = m(xin)
        assert y.dtype == dtype and y.device == x.device
        close(y, f64(xin, m.weight, m.bias, **kw), tolerance(dtype))
        yr = ref(xin)
        g = torch.randn_like(yr)
        got = torch.autograd.grad(y, (xin, m.weight, m.bias), g)
        want = torch.autograd.grad(yr, (xin, ref.weight, ref.bias), g)
        for a, e in zip(got, want):  # the backward is torch's own, in the dtype
            assert a.dtype == dtype
            close(a, e, 1e-2)
    m2 = ct.ConvTranspose3d(4, 6, 3, stride=2, dtype=dtype, device=device)  # dtype= too
    assert m2(x).dtype == dtype
