"""The NumPy path against convt3d.reference and a float64 NumPy formula."""
import numpy as np
import pytest

import convt3d
from conftest import convt3d_f64, kwargs, random_problem, rel_l2, tensors, tolerance

# device="cuda" stages the host arrays through a GPU (skipped without one)
DEVICES = ["cpu"] + (["cuda"] if convt3d.cuda_device_count() > 0 else [])


def close(y, ref, tol=1e-5):
    err = rel_l2(y.astype(np.float64), ref)
    assert err <= tol, "relative L2 error %.3e (tolerance %.0e)" % (err, tol)


def _cast(arrays, dtype):
    return tuple(None if a is None else a.astype(dtype) for a in arrays)


@pytest.mark.parametrize("seed", range(40))
def test_random_problems(seed):
    rng = np.random.default_rng(1000 + seed)
    pr = random_problem(rng)
    x, w, b = tensors(rng, pr)
    y = convt3d.conv_transpose3d(x, w, b, **kwargs(pr))
    assert y.dtype == np.float32 and y.flags.c_contiguous
    ref = convt3d.reference(x, w, b, **kwargs(pr))
    f64 = convt3d_f64(x, w, b, **kwargs(pr))
    assert y.shape == ref.shape == f64.shape
    close(y, f64)
    close(ref, f64, 1e-6)


def test_suite_like_shape_against_f64():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 8, 3, 4, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (8, 2, 3, 5, 7)).astype(np.float32)
    kw = dict(stride=2, padding=(1, 2, 3), output_padding=1, groups=4)
    close(convt3d.conv_transpose3d(x, w, None, **kw), convt3d_f64(x, w, None, **kw))


def test_non_contiguous_input_is_made_contiguous():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 3, 4, 5, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 2, 2, 2)).astype(np.float32)
    xt = np.transpose(np.ascontiguousarray(np.transpose(x, (0, 2, 3, 4, 1))), (0, 4, 1, 2, 3))
    assert not xt.flags.c_contiguous
    y = convt3d.conv_transpose3d(xt, w[:, :, ::-1][:, :, ::-1], stride=2)
    close(y, convt3d_f64(x, w, stride=2))
    y2 = convt3d.conv_transpose3d(x[:, :, ::2], w, stride=2)
    close(y2, convt3d_f64(np.ascontiguousarray(x[:, :, ::2]), w, stride=2))


def test_output_size():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (1, 2, 3, 4, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 3, 3, 3, 3)).astype(np.float32)
    # stride 2, padding 1: sizes 5..6, 7..8, 9..10
    y = convt3d.conv_transpose3d(x, w, stride=2, padding=1, output_size=(6, 7, 10))
    assert y.shape == (1, 3, 6, 7, 10)
    close(y, convt3d_f64(x, w, stride=2, padding=1, output_padding=(1, 0, 1)))
    y5 = convt3d.conv_transpose3d(x, w, stride=2, padding=1, output_size=(1, 3, 6, 7, 10))
    np.testing.assert_array_equal(y, y5)
    with pytest.raises(convt3d.InvalidProblemError) as e:
        convt3d.conv_transpose3d(x, w, stride=2, padding=1, output_size=(7, 7, 10))
    assert e.value.status_name == "CONVT3D_ERR_BAD_OUTPUT_SIZE" and "[5, 6]" in str(e.value)
    with pytest.raises(ValueError):
        convt3d.conv_transpose3d(x, w, stride=2, output_size=(6, 7))


def test_unbatched_input():
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 4, 2, 2, 2)).astype(np.float32)
    y = convt3d.conv_transpose3d(x, w, stride=2)
    assert y.shape == (4, 6, 6, 6)
    close(y, convt3d_f64(x[None], w, stride=2)[0])
    y4 = convt3d.conv_transpose3d(x, w, stride=2, output_size=(4, 7, 6, 7))
    assert y4.shape == (4, 7, 6, 7)
    close(y4, convt3d_f64(x[None], w, stride=2, output_padding=(1, 0, 1))[0])


def test_every_applicable_cpu_implementation_agrees():
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (1, 4, 3, 4, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 4, 3, 3, 3)).astype(np.float32)
    ref = convt3d_f64(x, w, stride=2, padding=1)
    ran = 0
    for name, dev in convt3d.implementations():
        if dev != "cpu":
            continue
        try:
            y = convt3d.conv_transpose3d(x, w, stride=2, padding=1, implementation=name)
        except convt3d.UnsupportedError as e:
            assert e.status_name == "CONVT3D_ERR_NOT_APPLICABLE" and name in str(e)
            continue
        close(y, ref)
        ran += 1
    assert ran >= 1


@pytest.mark.parametrize("bad", [
    dict(stride=0), dict(padding=-1), dict(dilation=0), dict(output_padding=1),
    dict(groups=3), dict(stride=(1, 2)), dict(padding=5),
])
def test_invalid_problems_raise_with_the_message(bad):
    x = np.zeros((1, 2, 3, 3, 3), np.float32)
    w = np.zeros((2, 2, 3, 3, 3), np.float32)
    with pytest.raises(ValueError) as e:
        convt3d.conv_transpose3d(x, w, **bad)
    assert isinstance(e.value, convt3d.Error) and str(e.value)


def test_shape_mismatches():
    x = np.zeros((1, 2, 3, 3, 3), np.float32)
    with pytest.raises(convt3d.InvalidProblemError, match="channels"):
        convt3d.conv_transpose3d(x, np.zeros((3, 2, 3, 3, 3), np.float32))
    with pytest.raises(convt3d.InvalidProblemError, match="bias"):
        convt3d.conv_transpose3d(x, np.zeros((2, 2, 3, 3, 3), np.float32),
                                 np.zeros(3, np.float32))
    with pytest.raises(convt3d.InvalidProblemError, match="5-D weight"):
        convt3d.conv_transpose3d(x, np.zeros((2, 2, 3, 3), np.float32))


def test_plan_object():
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (1, 2, 3, 3, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 2, 3, 3, 3)).astype(np.float32)
    p = convt3d.make_problem(x.shape, w.shape, stride=2)
    plan = convt3d.Plan(p, "cpu", w.ctypes.data)
    assert plan.device == "cpu" and plan.implementation.startswith("cpu/")
    assert plan.math_mode == "f32" and plan.output_shape == (1, 2, 7, 7, 7)
    y = np.empty(plan.output_shape, np.float32)
    plan.execute(x.ctypes.data, y.ctypes.data)
    close(y, convt3d_f64(x, w, stride=2))
    assert "mb1" in repr(plan)
    plan.close()
    plan.close()


# ---- data types and math modes ----------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(16))
def test_float16_random_problems(device, seed):
    rng = np.random.default_rng(4000 + seed)
    pr = random_problem(rng)
    x, w, b = _cast(tensors(rng, pr), np.float16)
    y = convt3d.conv_transpose3d(x, w, b, device=device, **kwargs(pr))
    assert y.dtype == np.float16 and y.flags.c_contiguous
    f64 = convt3d_f64(x, w, b, **kwargs(pr))  # from the same half-rounded inputs
    assert y.shape == f64.shape
    close(y, f64, tolerance(np.float16))
    ref = convt3d.reference(x, w, b, **kwargs(pr))
    assert ref.dtype == np.float16
    close(ref, f64, tolerance(np.float16))


def test_bfloat16_through_ml_dtypes():
    # NumPy has no bfloat16: ml_dtypes' is taken when installed (else bf16 is
    # reached from torch tensors only, see test_torch.py)
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    rng = np.random.default_rng(11)
    x, w, b = _cast((rng.uniform(-1, 1, (2, 6, 3, 4, 5)), rng.uniform(-1, 1, (6, 2, 3, 3, 3)),
                     rng.uniform(-1, 1, 4)), ml_dtypes.bfloat16)
    kw = dict(stride=2, padding=1, groups=2)
    y = convt3d.conv_transpose3d(x, w, b, **kw)
    assert y.dtype == ml_dtypes.bfloat16
    close(y, convt3d_f64(x, w, b, **kw), tolerance("bfloat16"))
    with pytest.raises(convt3d.UnsupportedError) as e:
        convt3d.conv_transpose3d(x, w.astype(np.float16), **kw)
    assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"


def _tensor_core_sized(rng):
    # enough channels a group for the GPU's tensor-core (igemm mma) kernels
    x = rng.uniform(-1, 1, (2, 32, 4, 5, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (32, 16, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 16).astype(np.float32)
    return x, w, b, dict(stride=2, padding=1, output_padding=1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["f32", "tf32", "3xtf32"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_math_modes_against_f64(device, mode, dtype):
    rng = np.random.default_rng(12)
    x, w, b, kw = _tensor_core_sized(rng)
    x, w, b = _cast((x, w, b), dtype)
    y = convt3d.conv_transpose3d(x, w, b, device=device, math_mode=mode, **kw)
    assert y.dtype == dtype
    close(y, convt3d_f64(x, w, b, **kw), tolerance(dtype, mode))
