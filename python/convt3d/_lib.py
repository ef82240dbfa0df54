"""ctypes binding of libconvt3d: finding the library, the C structs, the errors.

The structs mirror include/convt3d.h field for field (int64_t sizes, C enums
as int, size_t struct_size, const char *implementation); a change of the
header's layouts must be made here too (tests/test_abi.py checks the sizes
the library agrees with).
"""

import ctypes
import ctypes.util
import os
import sys

# ---- statuses (convt3d_status, in the header's order) ---------------------

STATUS_NAMES = (
    "CONVT3D_SUCCESS",
    "CONVT3D_ERR_NULL_POINTER",
    "CONVT3D_ERR_BAD_SIZE",
    "CONVT3D_ERR_BAD_GROUPS",
    "CONVT3D_ERR_BAD_KERNEL",
    "CONVT3D_ERR_BAD_STRIDE",
    "CONVT3D_ERR_BAD_PADDING",
    "CONVT3D_ERR_BAD_OUTPUT_PADDING",
    "CONVT3D_ERR_BAD_DILATION",
    "CONVT3D_ERR_BAD_LAYOUT",
    "CONVT3D_ERR_BAD_OUTPUT_SIZE",
    "CONVT3D_ERR_OVERFLOW",
    "CONVT3D_ERR_BAD_DEVICE_STRING",
    "CONVT3D_ERR_NO_CUDA_SUPPORT",
    "CONVT3D_ERR_NO_DEVICE",
    "CONVT3D_ERR_POINTER_LOCATION",
    "CONVT3D_ERR_OUT_OF_MEMORY",
    "CONVT3D_ERR_CUDA",
    "CONVT3D_ERR_INTERNAL",
    "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE",
    "CONVT3D_ERR_UNSUPPORTED_MATH_MODE",
    "CONVT3D_ERR_BAD_OPTIONS",
    "CONVT3D_ERR_UNKNOWN_IMPLEMENTATION",
    "CONVT3D_ERR_NOT_APPLICABLE",
)
STATUS = {name: code for code, name in enumerate(STATUS_NAMES)}
SUCCESS = 0

LAYOUT_NCDHW, LAYOUT_NDHWC = 0, 1
F32, F16, BF16 = 0, 1, 2
DTYPE_NAMES = {F32: "f32", F16: "f16", BF16: "bf16"}
DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA = 0, 1, 2
DEVICE_KIND_NAMES = {DEVICE_AUTO: "auto", DEVICE_CPU: "cpu", DEVICE_CUDA: "cuda"}
MATH_MODES = {"f32": 0, "tf32": 1, "3xtf32": 2}  # convt3d_math_mode; names as Plan.math_mode gives them
MATH_MODE_ALIASES = dict(MATH_MODES, fp32=0)  # what a math_mode argument may say (any case)


# ---- exceptions -----------------------------------------------------------


class Error(Exception):
    """A failure reported by libconvt3d (or by this binding before calling it).

    ``status`` is the convt3d_status code and ``status_name`` its name
    ("CONVT3D_ERR_BAD_STRIDE"), or None for a check made in Python only;
    ``message`` is convt3d_last_error()'s text."""

    def __init__(self, message, status=None):
        self.status = status
        self.status_name = None if status is None else status_string(status)
        self.message = message
        text = message if self.status_name is None else "%s: %s" % (self.status_name, message)
        super().__init__(text)


class InvalidProblemError(Error, ValueError):
    """The problem or an argument is invalid (sizes, stride, padding, ...)."""


class UnsupportedError(Error, ValueError):
    """Valid, but not offered: a data type the library does not compute
    (float64, a mix of dtypes), an int that is not a math mode, an unknown
    implementation, or one that does not apply."""


class DeviceError(Error, RuntimeError):
    """The device side failed: no CUDA support or device, a pointer in the
    wrong place, out of memory, a CUDA error, an internal error."""


_UNSUPPORTED = {
    "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE",
    "CONVT3D_ERR_UNSUPPORTED_MATH_MODE",
    "CONVT3D_ERR_UNKNOWN_IMPLEMENTATION",
    "CONVT3D_ERR_NOT_APPLICABLE",
}
_DEVICE = {
    "CONVT3D_ERR_NO_CUDA_SUPPORT",
    "CONVT3D_ERR_NO_DEVICE",
    "CONVT3D_ERR_POINTER_LOCATION",
    "CONVT3D_ERR_OUT_OF_MEMORY",
    "CONVT3D_ERR_CUDA",
    "CONVT3D_ERR_INTERNAL",
}


for _cls in (Error, InvalidProblemError, UnsupportedError, DeviceError):
    _cls.__module__ = "convt3d"  # as they are reached: convt3d.Error, ...


def error_class(status):
    name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else None
    if name in _UNSUPPORTED:
        return UnsupportedError
    if name in _DEVICE or name is None:
        return DeviceError
    return InvalidProblemError


# ---- structs ---------------------------------------------------------------

_i64x3 = ctypes.c_int64 * 3


class Problem(ctypes.Structure):
    _fields_ = [
        ("batch", ctypes.c_int64),
        ("in_channels", ctypes.c_int64),
        ("out_channels", ctypes.c_int64),
        ("groups", ctypes.c_int64),
        ("in_size", _i64x3),
        ("kernel", _i64x3),
        ("stride", _i64x3),
        ("padding", _i64x3),
        ("output_padding", _i64x3),
        ("dilation", _i64x3),
        ("layout", ctypes.c_int),
        ("has_bias", ctypes.c_int),
        ("x_type", ctypes.c_int),
        ("w_type", ctypes.c_int),
        ("bias_type", ctypes.c_int),
        ("y_type", ctypes.c_int),
    ]


class Device(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("ordinal", ctypes.c_int)]


class PlanOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("math_mode", ctypes.c_int),
        ("implementation", ctypes.c_char_p),
    ]


# ---- finding and loading the library --------------------------------------

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _config():
    try:
        from . import _config  # written by configure from _config.py.in
    except ImportError:
        return None
    return _config


def _configured(name):
    value = getattr(_config(), name, "")
    return value if value and "@" not in value else ""


def _soname():
    if sys.platform == "darwin":
        return "libconvt3d.dylib"
    if sys.platform == "win32":
        return "convt3d.dll"
    return "libconvt3d.so"


def library_candidates():
    """Where the library is looked for, in order: $CONVT3D_LIBRARY, the libdir
    configure recorded in _config.py, the build tree (../.libs relative to the
    python/ source directory when the package runs from it, else the build
    directory configure recorded), then the system loader (find_library).
    A list of (origin, path)."""
    out = []
    env = os.environ.get("CONVT3D_LIBRARY")
    if env:
        out.append(("CONVT3D_LIBRARY", env))
    libdir = _configured("LIBDIR")
    if libdir:
        out.append(("configured libdir", os.path.join(libdir, _soname())))
    # the build tree: ../.libs from python/ when the package runs from the
    # source tree, else the build directory configure recorded
    pydir = os.path.dirname(_PKG_DIR)
    if os.path.exists(os.path.join(pydir, "pyproject.toml")):
        out.append(("build tree", os.path.join(os.path.dirname(pydir), ".libs", _soname())))
    elif _configured("BUILDDIR"):
        out.append(("build tree", os.path.join(_configured("BUILDDIR"), ".libs", _soname())))
    found = ctypes.util.find_library("convt3d")
    if found:
        out.append(("system loader", found))
    return out


def _load():
    tried = []
    candidates = library_candidates()
    for origin, path in candidates:
        if origin != "system loader" and not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (origin, path))
        else:
            try:
                return ctypes.CDLL(path), path
            except OSError as e:
                tried.append("%s: %s (%s)" % (origin, path, e))
        if origin == "CONVT3D_LIBRARY":
            break  # an explicit choice: never fall back to another library
    else:
        if candidates[-1][0] != "system loader":
            tried.append("system loader: find_library('convt3d') found nothing")
    raise ImportError(
        "convt3d: cannot load libconvt3d; set CONVT3D_LIBRARY to its path. Tried:\n  "
        + "\n  ".join(tried)
    )


lib, library_path = _load()


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_P = ctypes.POINTER
_vp = ctypes.c_void_p
_int = ctypes.c_int
_plan_p = ctypes.c_void_p

c_status_string = _fn("convt3d_status_string", ctypes.c_char_p, _int)
c_last_error = _fn("convt3d_last_error", ctypes.c_char_p)
c_version = _fn("convt3d_version", ctypes.c_char_p)
c_version_number = _fn("convt3d_version_number", _int)
c_problem_init = _fn("convt3d_problem_init", None, _P(Problem))
c_validate = _fn("convt3d_validate", _int, _P(Problem))
c_set_output_size = _fn("convt3d_set_output_size", _int, _P(Problem), _P(ctypes.c_int64))
c_problem_to_string = _fn(
    "convt3d_problem_to_string", _int, _P(Problem), ctypes.c_char_p, ctypes.c_size_t
)
c_output_dims = _fn("convt3d_output_dims", _int, _P(Problem), _P(ctypes.c_int64))
c_device_parse = _fn("convt3d_device_parse", _int, ctypes.c_char_p, _P(Device))
c_cuda_device_count = _fn("convt3d_cuda_device_count", _int)
c_has_cuda_support = _fn("convt3d_has_cuda_support", _int)
c_plan_options_init = _fn("convt3d_plan_options_init", None, _P(PlanOptions))
c_plan_create_ex = _fn(
    "convt3d_plan_create_ex", _int, _P(_plan_p), _P(Problem), Device, _vp, _vp, _P(PlanOptions)
)
c_execute = _fn("convt3d_execute", _int, _plan_p, _vp, _vp)
c_execute_on_stream = _fn("convt3d_execute_on_stream", _int, _plan_p, _vp, _vp, _vp)
c_plan_destroy = _fn("convt3d_plan_destroy", None, _plan_p)
c_plan_device = _fn("convt3d_plan_device", Device, _plan_p)
c_plan_kernel_name = _fn("convt3d_plan_kernel_name", ctypes.c_char_p, _plan_p)
c_plan_math_mode = _fn("convt3d_plan_math_mode", _int, _plan_p)
c_implementation_count = _fn("convt3d_implementation_count", _int)
c_implementation_name = _fn("convt3d_implementation_name", ctypes.c_char_p, _int)
c_implementation_device = _fn("convt3d_implementation_device", _int, _int)
c_implementation_applies = _fn(
    "convt3d_implementation_applies", _int, ctypes.c_char_p, _P(Problem), Device, _P(PlanOptions)
)
c_reference = _fn("convt3d_reference", _int, _P(Problem), _vp, _vp, _vp, _vp)


def status_string(status):
    s = c_status_string(status)
    return s.decode() if s else "CONVT3D_STATUS_%d" % status


def last_error():
    s = c_last_error()
    return s.decode(errors="replace") if s else ""


def check(status):
    """Raises the Error subclass for a failed status, with the thread's
    convt3d_last_error() message."""
    if status != SUCCESS:
        raise error_class(status)(last_error() or status_string(status), status)
