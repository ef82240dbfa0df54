"""The binding itself: struct layouts, version, library loading, errors."""
import ctypes
import os
import re
import subprocess
import sys

import pytest

import convt3d
from convt3d import _lib

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)


def test_plan_options_struct_size_matches_the_library():
    opt = _lib.PlanOptions()
    _lib.c_plan_options_init(ctypes.byref(opt))
    assert opt.struct_size == ctypes.sizeof(_lib.PlanOptions)
    assert opt.math_mode == 0 and opt.implementation is None


def test_problem_init_fills_exactly_the_struct():
    size = ctypes.sizeof(_lib.Problem)
    buf = (ctypes.c_ubyte * (size + 64))(*([0xAB] * (size + 64)))
    _lib.c_problem_init(ctypes.cast(buf, ctypes.POINTER(_lib.Problem)))
    assert all(b == 0xAB for b in buf[size:]), "convt3d_problem_init wrote past the ctypes struct"
    p = _lib.Problem.from_buffer_copy(bytes(buf[:size]))
    assert (p.batch, p.in_channels, p.out_channels, p.groups) == (0, 0, 0, 1)
    assert list(p.stride) == [1, 1, 1] and list(p.dilation) == [1, 1, 1]
    assert list(p.padding) == [0, 0, 0] and list(p.output_padding) == [0, 0, 0]
    assert (p.layout, p.has_bias, p.x_type, p.w_type, p.bias_type, p.y_type) == (0,) * 6


def test_status_names_match_the_library():
    for code, name in enumerate(_lib.STATUS_NAMES):
        assert _lib.status_string(code) == name


def test_versions_agree():
    assert convt3d.__version__ == convt3d.library_version()
    ac = os.path.join(PYDIR, "..", "configure.ac")
    if os.path.exists(ac):
        text = open(ac).read()
        parts = [re.search(r"m4_define\(\[convt3d_%s\], \[(\d+)\]\)" % k, text).group(1)
                 for k in ("major", "minor", "patch")]
        assert convt3d.__version__ == ".".join(parts)


def test_library_from_env_and_a_bad_env_is_not_replaced():
    env = dict(os.environ, CONVT3D_LIBRARY="/nonexistent/libconvt3d.so", PYTHONPATH=PYDIR)
    r = subprocess.run([sys.executable, "-c", "import convt3d"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "CONVT3D_LIBRARY: /nonexistent/libconvt3d.so (no such file)" in r.stderr
    assert "build tree" not in r.stderr  # an explicit choice: no fallback


def test_library_candidates_order():
    origins = [o for o, _ in _lib.library_candidates()]
    expected = ["CONVT3D_LIBRARY", "configured libdir", "build tree", "system loader"]
    assert origins == [o for o in expected if o in origins]
    assert "build tree" in origins  # the tests run from the source tree


def test_implementations_listed():
    impls = convt3d.implementations()
    assert impls and all(dev in ("cpu", "cuda") for _, dev in impls)
    assert any(dev == "cpu" for _, dev in impls)


def test_errors_carry_status_and_message():
    import numpy as np
    x = np.zeros((1, 2, 3, 3, 3), np.float32)
    w = np.zeros((2, 2, 3, 3, 3), np.float32)
    with pytest.raises(convt3d.InvalidProblemError) as e:
        convt3d.conv_transpose3d(x, w, stride=(1, 0, 1))
    assert isinstance(e.value, ValueError) and isinstance(e.value, convt3d.Error)
    assert e.value.status_name == "CONVT3D_ERR_BAD_STRIDE"
    assert "stride[1]" in str(e.value) and e.value.message in str(e.value)
    with pytest.raises(convt3d.InvalidProblemError) as e:
        convt3d.conv_transpose3d(x, w, stride=2, output_padding=2)
    assert e.value.status_name == "CONVT3D_ERR_BAD_OUTPUT_PADDING"
    with pytest.raises(convt3d.InvalidProblemError) as e:
        convt3d.conv_transpose3d(x, w, groups=4)
    assert e.value.status_name == "CONVT3D_ERR_BAD_GROUPS"
    with pytest.raises(convt3d.InvalidProblemError) as e:
        convt3d.conv_transpose3d(x, w, device="gpu")
    assert e.value.status_name == "CONVT3D_ERR_BAD_DEVICE_STRING"


MODE_NAMES = [("f32", "f32"), ("fp32", "f32"), ("FP32", "f32"), (None, "f32"), (0, "f32"),
              ("tf32", "tf32"), ("TF32", "tf32"), (1, "tf32"),
              ("3xtf32", "3xtf32"), ("3xTF32", "3xtf32"), (2, "3xtf32")]


@pytest.mark.parametrize("mode,name", MODE_NAMES)
def test_math_modes_are_accepted(mode, name):
    import numpy as np
    x = np.ones((1, 2, 3, 3, 3), np.float32)
    w = np.ones((2, 2, 3, 3, 3), np.float32)
    y = convt3d.conv_transpose3d(x, w, math_mode=mode)
    assert y.shape == (1, 2, 5, 5, 5) and y.dtype == np.float32
    assert y.max() == 54.0  # small integers: exact in every mode
    plan = convt3d.Plan(convt3d.make_problem(x.shape, w.shape), "cpu", w.ctypes.data,
                        math_mode=mode)
    assert plan.math_mode == name
    plan.close()


def test_invalid_math_modes_raise():
    import numpy as np
    x = np.zeros((1, 2, 3, 3, 3), np.float32)
    w = np.zeros((2, 2, 3, 3, 3), np.float32)
    for mode in (7, -1, 2 ** 40):  # ints reach the library (or would not fit its int)
        with pytest.raises(convt3d.UnsupportedError) as e:
            convt3d.conv_transpose3d(x, w, math_mode=mode)
        assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_MATH_MODE"
    for mode in ("bogus", "f16", "", True, 1.0):  # names are checked in Python
        with pytest.raises(convt3d.InvalidProblemError) as e:
            convt3d.conv_transpose3d(x, w, math_mode=mode)
        assert e.value.status_name is None and "tf32" in str(e.value)


def test_data_types_reach_the_library():
    import numpy as np
    x = np.ones((1, 2, 3, 3, 3), np.float32)
    w = np.ones((2, 2, 3, 3, 3), np.float32)
    b = np.ones(2, np.float32)
    y = convt3d.conv_transpose3d(x.astype(np.float16), w.astype(np.float16), b.astype(np.float16))
    assert y.dtype == np.float16 and y.max() == 55.0
    with pytest.raises(convt3d.UnsupportedError) as e:
        convt3d.conv_transpose3d(x.astype(np.float64), w)
    assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"
    assert "float64" in str(e.value) and "float32, float16 or bfloat16" in str(e.value)
    for args in [(x.astype(np.float16), w), (x, w.astype(np.float16)),
                 (x.astype(np.float16), w.astype(np.float16), b),
                 (x, w, b.astype(np.float16))]:
        with pytest.raises(convt3d.UnsupportedError) as e:
            convt3d.conv_transpose3d(*args)
        assert e.value.status_name == "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"
        assert "one dtype" in str(e.value) and "float32, float16 or bfloat16" in str(e.value)
    with pytest.raises(convt3d.UnsupportedError) as e:
        convt3d.conv_transpose3d(x, w, implementation="cpu/no_such_kernel")
    assert e.value.status_name == "CONVT3D_ERR_UNKNOWN_IMPLEMENTATION"


def test_device_errors_are_runtime_errors():
    import numpy as np
    if convt3d.cuda_device_count() > 0:
        pytest.skip("a GPU is present: cuda:9999 may still be out of range, tested below")
    x = np.zeros((1, 2, 3, 3, 3), np.float32)
    w = np.zeros((2, 2, 3, 3, 3), np.float32)
    with pytest.raises(convt3d.DeviceError) as e:
        convt3d.conv_transpose3d(x, w, device="cuda:0")
    assert isinstance(e.value, RuntimeError)
    assert e.value.status_name in ("CONVT3D_ERR_NO_CUDA_SUPPORT", "CONVT3D_ERR_NO_DEVICE")
