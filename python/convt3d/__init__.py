"""convt3d from Python: PyTorch's ConvTranspose3d computed by libconvt3d.

    import numpy as np, convt3d
    y = convt3d.conv_transpose3d(x, w, b, stride=2, padding=1)   # NumPy float32 arrays
    y = convt3d.conv_transpose3d(xt, wt, bt, stride=2)           # torch tensors (CPU or CUDA)
    m = convt3d.torch.ConvTranspose3d(32, 16, 3, stride=2)       # a torch.nn.Module

The library is loaded with ctypes from, in order: $CONVT3D_LIBRARY, the libdir
configure recorded, the build tree (../.libs from python/), the system loader.
Arguments follow torch.nn.functional.conv_transpose3d.  Data types: float32,
float16 and bfloat16 (x, weight and bias of one dtype; the output has it too);
NumPy has no bfloat16 of its own (ml_dtypes' is taken when installed).  Math
modes (math_mode=): "f32" (alias "fp32", the default: exact fp32), "tf32",
"3xtf32", or the enum's ints 0, 1, 2.
"""

import ctypes
import numbers
import sys

from . import _lib
from ._lib import DeviceError, Error, InvalidProblemError, UnsupportedError
from ._version import __version__

__all__ = [
    "conv_transpose3d",
    "reference",
    "Plan",
    "Error",
    "InvalidProblemError",
    "UnsupportedError",
    "DeviceError",
    "library_version",
    "library_path",
    "implementations",
    "cuda_device_count",
    "has_cuda_support",
    "output_shape",
    "__version__",
]

library_path = _lib.library_path


def library_version():
    """convt3d_version() of the loaded library ("0.2.0")."""
    return _lib.c_version().decode()


def cuda_device_count():
    return _lib.c_cuda_device_count()


def has_cuda_support():
    return bool(_lib.c_has_cuda_support())


def implementations():
    """Every implementation compiled into the library: a list of
    (name, device kind) in each backend's order of preference."""
    out = []
    for i in range(_lib.c_implementation_count()):
        name = _lib.c_implementation_name(i).decode()
        out.append((name, _lib.DEVICE_KIND_NAMES.get(_lib.c_implementation_device(i), "?")))
    return out


# ---- arguments ------------------------------------------------------------


def _triple(name, value):
    """An int or a sequence of 3 ints, as torch accepts them."""
    if type(value) is tuple and len(value) == 3:  # the common case, checked cheaply
        a, b, c = value
        if type(a) is int and type(b) is int and type(c) is int:
            return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * 3
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError("convt3d: %s must be an int or a tuple of 3 ints, got %r" % (name, value))
    if len(items) == 1:
        items = items * 3
    if len(items) != 3:
        raise InvalidProblemError(
            "expected %s to be a single integer value or a list of 3 values to match the "
            "convolution dimensions, but got %s=%r" % (name, name, list(items))
        )
    for v in items:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError("convt3d: %s must hold ints, got %r" % (name, value))
    return tuple(int(v) for v in items)


def _math_mode(mode):
    """A math_mode argument as the convt3d_math_mode int (None stays None: the
    defaults).  Names: "f32" (or "fp32"), "tf32", "3xtf32", any case; ints go
    to the library as they are, which refuses one that is not a mode
    (UnsupportedError, CONVT3D_ERR_UNSUPPORTED_MATH_MODE)."""
    if mode is None:
        return None
    if isinstance(mode, numbers.Integral) and not isinstance(mode, bool):
        mode = int(mode)
        if not -(2 ** 31) <= mode < 2 ** 31:  # would not survive the C int
            raise UnsupportedError(
                "math_mode=%d is not a convt3d_math_mode (f32 0, tf32 1, 3xtf32 2)" % mode,
                _lib.STATUS["CONVT3D_ERR_UNSUPPORTED_MATH_MODE"],
            )
        return mode
    if isinstance(mode, str):
        key = mode.lower()
        if key in _lib.MATH_MODE_ALIASES:
            return _lib.MATH_MODE_ALIASES[key]
    raise InvalidProblemError(
        "unknown math_mode %r: use None, %s or the enum's ints %s"
        % (mode, ", ".join(repr(k) for k in _lib.MATH_MODE_ALIASES),
           ", ".join(str(v) for v in _lib.MATH_MODES.values()))
    )


def _options(math_mode, implementation):
    if math_mode is None and implementation is None:
        return None
    opt = _lib.PlanOptions()
    _lib.c_plan_options_init(ctypes.byref(opt))
    mode = _math_mode(math_mode)
    if mode is not None:
        opt.math_mode = int(mode)
    if implementation is not None:
        opt.implementation = str(implementation).encode()
    return opt


def _device(device, default="cpu"):
    text = default if device is None else str(device)
    dev = _lib.Device()
    _lib.check(_lib.c_device_parse(text.encode(), ctypes.byref(dev)))
    return dev


def _device_name(dev):
    if dev.kind == _lib.DEVICE_CUDA:
        return "cuda:%d" % dev.ordinal
    return _lib.DEVICE_KIND_NAMES.get(dev.kind, "?")


ACCEPTED_DTYPES = "float32, float16 or bfloat16"


def _unsupported_dtype(what, dtype):
    return UnsupportedError(
        "%s has dtype %s, which convt3d does not compute: x, weight and bias must all be %s"
        % (what, dtype, ACCEPTED_DTYPES),
        _lib.STATUS["CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"],
    )


def _one_dtype(named):
    """named: ((what, dtype, convt3d_dtype), ...) for x, weight and bias (when
    given).  The (x, weight, bias, y) types of the problem -- bias_type is
    x's without a bias, as the library wants all four equal -- or
    UnsupportedError (CONVT3D_ERR_UNSUPPORTED_DATA_TYPE) for a mix."""
    what0, dtype0, code0 = named[0]
    for what, dtype, code in named[1:]:
        if code != code0:
            raise UnsupportedError(
                "%s is %s but %s is %s: x, weight and bias must have one dtype (%s)"
                % (what0, dtype0, what, dtype, ACCEPTED_DTYPES),
                _lib.STATUS["CONVT3D_ERR_UNSUPPORTED_DATA_TYPE"],
            )
    return (code0,) * 4


def make_problem(
    x_shape,
    w_shape,
    bias_shape=None,
    stride=1,
    padding=0,
    output_padding=0,
    groups=1,
    dilation=1,
    output_size=None,
    layout=_lib.LAYOUT_NCDHW,
    dtypes=(_lib.F32,) * 4,
):
    """A validated convt3d_problem (ctypes) for a 5-D x of shape (N, C_in, D,
    H, W) and a weight (C_in, C_out/groups, kD, kH, kW), with PyTorch's
    rules; output_size (3 spatial sizes, or 5 with N and C in front) sets
    output_padding through convt3d_set_output_size."""
    x_shape, w_shape = tuple(x_shape), tuple(w_shape)
    if len(x_shape) != 5:
        raise InvalidProblemError(
            "expected a 5-D input (N, C_in, D, H, W), got shape %s" % (x_shape,)
        )
    if len(w_shape) != 5:
        raise InvalidProblemError(
            "expected a 5-D weight (C_in, C_out/groups, kD, kH, kW), got shape %s" % (w_shape,)
        )
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError("convt3d: groups must be an int, got %r" % (groups,))
    if w_shape[0] != x_shape[1]:
        raise InvalidProblemError(
            "weight of size %s expects the input to have %d channels, but got %d channels "
            "(input of size %s)" % (list(w_shape), w_shape[0], x_shape[1], list(x_shape))
        )
    p = _lib.Problem()
    _lib.c_problem_init(ctypes.byref(p))
    p.batch, p.in_channels = x_shape[0], x_shape[1]
    p.out_channels = w_shape[1] * int(groups)
    p.groups = int(groups)
    p.in_size[:] = x_shape[2:]
    p.kernel[:] = w_shape[2:]
    p.stride[:] = _triple("stride", stride)
    p.padding[:] = _triple("padding", padding)
    p.output_padding[:] = _triple("output_padding", output_padding)
    p.dilation[:] = _triple("dilation", dilation)
    p.layout = layout
    p.has_bias = bias_shape is not None
    p.x_type, p.w_type, p.bias_type, p.y_type = dtypes
    if bias_shape is not None and tuple(bias_shape) != (p.out_channels,):
        raise InvalidProblemError(
            "bias of shape %s, expected (%d,) (out_channels)" % (tuple(bias_shape), p.out_channels)
        )
    if output_size is not None:
        sizes = [int(s) for s in output_size]
        if len(sizes) == 5:
            sizes = sizes[2:]
        if len(sizes) != 3:
            raise InvalidProblemError(
                "ConvTranspose3D: for 5D input, output_size must have 3 or 5 elements (got %d)"
                % len(sizes)
            )
        _lib.check(_lib.c_set_output_size(ctypes.byref(p), (ctypes.c_int64 * 3)(*sizes)))
    else:
        _lib.check(_lib.c_validate(ctypes.byref(p)))
    return p


def output_shape(problem):
    """(N, C_out, D, H, W) of a problem's output (validates)."""
    out = (ctypes.c_int64 * 3)()
    _lib.check(_lib.c_output_dims(ctypes.byref(problem), out))
    return (problem.batch, problem.out_channels) + tuple(out)


def problem_string(problem):
    """convt3d_problem_to_string(): the problem as convt3d-bench reads it."""
    n = _lib.c_problem_to_string(ctypes.byref(problem), None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    _lib.c_problem_to_string(ctypes.byref(problem), buf, n + 1)
    return buf.value.decode()


# ---- plans ----------------------------------------------------------------


class Plan:
    """A convt3d_plan: the problem, the device and the repacked weights.

    weight and bias are addresses (int) of host or device memory in the
    problem's data types; they are read during construction only.  execute()
    takes addresses too; for a CUDA plan, stream is a cudaStream_t as an int
    (None: the default stream, synchronised before return -- see
    convt3d_execute_on_stream)."""

    _handle = None

    def __init__(self, problem, device, weight, bias=None, math_mode=None, implementation=None):
        self.problem = _lib.Problem.from_buffer_copy(problem)
        dev = device if isinstance(device, _lib.Device) else _device(device, "auto")
        opt = _options(math_mode, implementation)
        handle = ctypes.c_void_p()
        _lib.check(
            _lib.c_plan_create_ex(
                ctypes.byref(handle),
                ctypes.byref(self.problem),
                dev,
                weight,
                bias,
                None if opt is None else ctypes.byref(opt),
            )
        )
        self._handle = handle.value
        self.output_shape = output_shape(self.problem)
        self._on_del = None

    @property
    def implementation(self):
        """The exact name of the implementation the plan runs."""
        return _lib.c_plan_kernel_name(self._handle).decode()

    @property
    def device(self):
        return _device_name(_lib.c_plan_device(self._handle))

    @property
    def math_mode(self):
        code = _lib.c_plan_math_mode(self._handle)
        return {v: k for k, v in _lib.MATH_MODES.items()}.get(code, code)

    def execute(self, x, y, stream=None):
        if self._handle is None:
            raise InvalidProblemError("convt3d: the plan was closed")
        if stream is None:
            _lib.check(_lib.c_execute(self._handle, x, y))
        else:
            _lib.check(_lib.c_execute_on_stream(self._handle, x, y, stream))

    def close(self):
        """convt3d_plan_destroy(), now.  (No execute may be in flight.)"""
        h, self._handle = self._handle, None
        if h is not None:
            _lib.c_plan_destroy(h)

    def __del__(self):
        if self._handle is None:
            return
        hook = getattr(self, "_on_del", None)
        if hook is not None:
            try:
                hook(self)  # the torch layer keeps it until its stream is done
                return
            except Exception:
                pass
        self.close()

    def __repr__(self):
        if self._handle is None:
            return "<convt3d.Plan closed>"
        return "<convt3d.Plan %s on %s: %s>" % (
            problem_string(self.problem),
            self.device,
            self.implementation,
        )


# ---- NumPy ----------------------------------------------------------------


def _np():
    import numpy

    return numpy


def _np_dtype(what, dtype):
    np = _np()
    if dtype == np.float32:
        return _lib.F32
    if dtype == np.float16:
        return _lib.F16
    if getattr(dtype, "name", "") == "bfloat16":  # ml_dtypes
        return _lib.BF16
    raise _unsupported_dtype(what, dtype)


def _numpy_args(x, weight, bias):
    np = _np()
    x = np.ascontiguousarray(x)
    weight = np.ascontiguousarray(weight)
    bias = None if bias is None else np.ascontiguousarray(bias)
    unbatched = x.ndim == 4
    if x.ndim not in (4, 5):
        raise InvalidProblemError(
            "expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input "
            "of size: %s" % (list(x.shape),)
        )
    if unbatched:
        x = x[None]
    named = [("x", x.dtype, _np_dtype("x", x.dtype)),
             ("weight", weight.dtype, _np_dtype("weight", weight.dtype))]
    if bias is not None:
        named.append(("bias", bias.dtype, _np_dtype("bias", bias.dtype)))
    return x, weight, bias, unbatched, _one_dtype(named)


def _batched_size(output_size, unbatched):
    # an unbatched input's output_size may have C_out in front (4 elements)
    if unbatched and output_size is not None and len(output_size) == 4:
        return tuple(output_size)[1:]
    return output_size


def _is_torch(obj):
    t = sys.modules.get("torch")
    return t is not None and isinstance(obj, t.Tensor)


def conv_transpose3d(
    x,
    weight,
    bias=None,
    stride=1,
    padding=0,
    output_padding=0,
    groups=1,
    dilation=1,
    output_size=None,
    device=None,
    *,
    math_mode=None,
    implementation=None,
):
    """torch.nn.functional.conv_transpose3d through libconvt3d.

    x: (N, C_in, D, H, W) or unbatched (C_in, D, H, W); weight: (C_in,
    C_out/groups, kD, kH, kW); bias: (C_out,) or None.  stride, padding,
    output_padding, dilation: ints or 3-tuples.  output_size: the output's
    (D, H, W), or (N, C_out, D, H, W), in place of output_padding (as
    ConvTranspose3d.forward takes it).

    x, weight and bias share one dtype: float32, float16 or bfloat16 (NumPy:
    float32, float16, and ml_dtypes.bfloat16 when installed; torch: the three
    torch dtypes); the output has it too.  Half data is computed in fp32 and
    rounded once.  Another dtype or a mix: UnsupportedError
    (CONVT3D_ERR_UNSUPPORTED_DATA_TYPE).

    NumPy arrays run on the CPU by default (device="cuda" stages them through
    a GPU) and give a new C-contiguous array.  torch tensors run where they
    live (CPU or CUDA, in place, on torch's current stream) and give a torch
    tensor, channels_last_3d when x is; autograd works.

    math_mode: None or "f32" (alias "fp32": exact fp32, the default), "tf32"
    (tensor cores, inputs rounded to TF32: relative L2 error about 1e-4..1e-3),
    "3xtf32" (tensor cores at fp32 accuracy), or the enum's ints 0, 1, 2.  A
    mode permits reduced precision on the GPU; the CPU computes every mode in
    full fp32, and for half data the mode changes nothing.  An unknown name is
    InvalidProblemError, an int that is not a mode UnsupportedError.
    implementation: an exact name from convt3d.implementations() (the
    library refuses one that does not apply: UnsupportedError).
    """
    if _is_torch(x) or _is_torch(weight):
        from . import _torch_ops

        return _torch_ops.conv_transpose3d(
            x,
            weight,
            bias,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
            output_size,
            device,
            math_mode=math_mode,
            implementation=implementation,
        )
    x, weight, bias, unbatched, p, y = _numpy_problem(
        x, weight, bias, stride, padding, output_padding, groups, dilation, output_size
    )
    plan = Plan(
        p,
        _device(device, "cpu"),
        weight.ctypes.data,
        None if bias is None else bias.ctypes.data,
        math_mode,
        implementation,
    )
    try:
        plan.execute(x.ctypes.data, y.ctypes.data)
    finally:
        plan.close()
    return y[0] if unbatched else y


def _numpy_problem(x, weight, bias, stride, padding, output_padding, groups, dilation,
                   output_size):
    """NumPy arguments made contiguous arrays of one dtype, the problem they state (NCDHW) and a
    new output array: what conv_transpose3d and reference share."""
    np = _np()
    x, weight, bias, unbatched, dtypes = _numpy_args(x, weight, bias)
    output_size = _batched_size(output_size, unbatched)
    p = make_problem(
        x.shape,
        weight.shape,
        None if bias is None else bias.shape,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        output_size,
        _lib.LAYOUT_NCDHW,
        dtypes,
    )
    return x, weight, bias, unbatched, p, np.empty(output_shape(p), dtype=x.dtype)


def reference(
    x,
    weight,
    bias=None,
    stride=1,
    padding=0,
    output_padding=0,
    groups=1,
    dilation=1,
    output_size=None,
):
    """convt3d_reference(): the library's oracle (double accumulation,
    single-threaded, slow by design) on NumPy arrays, same arguments and
    dtypes as conv_transpose3d; half data is widened to f32 and each output
    rounded once to its dtype."""
    x, weight, bias, unbatched, p, y = _numpy_problem(
        x, weight, bias, stride, padding, output_padding, groups, dilation, output_size
    )
    _lib.check(
        _lib.c_reference(
            ctypes.byref(p),
            x.ctypes.data,
            weight.ctypes.data,
            None if bias is None else bias.ctypes.data,
            y.ctypes.data,
        )
    )
    return y[0] if unbatched else y


def __getattr__(name):
    # convt3d.torch on first use, so that importing convt3d needs no torch
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'convt3d' has no attribute %r" % name)
