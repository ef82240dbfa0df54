"""torch tensors through libconvt3d: the functional form and its autograd.

Memory is used in place (data_ptr); on a GPU the work goes on torch's current
stream.  A CUDA plan is destroyed only once the streams it ran on have passed the work
queued with it (an event on each), because convt3d_execute_on_stream returns
before the GPU is done.
"""

import collections
import ctypes

import torch

from . import _lib
from . import (
    InvalidProblemError,
    Plan,
    _device_name,
    _math_mode,
    _one_dtype,
    _triple,
    _unsupported_dtype,
    make_problem,
    output_shape,
)

_DTYPES = {torch.float32: _lib.F32, torch.float16: _lib.F16, torch.bfloat16: _lib.BF16}


def _dtype(what, t):
    try:
        return _DTYPES[t.dtype]
    except KeyError:
        raise _unsupported_dtype(what, t.dtype) from None


# ---- plans whose work may still be queued ----------------------------------

_pending = collections.deque()


def _sweep():
    while _pending and all(ev.query() for ev in _pending[0][0]):
        _pending.popleft()[1].close()


def retire(plan):
    """Destroys plan once every stream it was executed on has passed the work
    enqueued so far (an event on each); a CPU plan at once."""
    streams = getattr(plan, "_streams", None)
    if plan._handle is None or not streams:
        plan.close()
        return
    events = []
    for stream in streams.values():
        ev = torch.cuda.Event()
        ev.record(stream)
        events.append(ev)
    _pending.append((events, plan))
    _sweep()


def _device_of(t):
    if t.device.type == "cpu":
        return _lib.Device(_lib.DEVICE_CPU, 0)
    if t.device.type == "cuda":
        idx = t.device.index if t.device.index is not None else torch.cuda.current_device()
        return _lib.Device(_lib.DEVICE_CUDA, idx)
    raise _lib.DeviceError("convt3d runs on the CPU and on CUDA devices, not on %s" % t.device)


class Spec:
    """Everything but the tensors: the arguments of one call."""

    __slots__ = (
        "stride",
        "padding",
        "output_padding",
        "groups",
        "dilation",
        "output_size",
        "math_mode",
        "implementation",
    )

    def __init__(self, stride, padding, output_padding, groups, dilation, output_size,
                 math_mode=None, implementation=None):
        self.stride = _triple("stride", stride)
        self.padding = _triple("padding", padding)
        self.output_padding = _triple("output_padding", output_padding)
        self.groups = groups
        self.dilation = _triple("dilation", dilation)
        self.output_size = None if output_size is None else tuple(int(s) for s in output_size)
        # the convt3d_math_mode int (None: the default, f32), so that "tf32",
        # "TF32" and 1 share plans; an unknown name raises here, before any lookup
        mode = _math_mode(math_mode)
        self.math_mode = _lib.MATH_MODES["f32"] if mode is None else mode
        self.implementation = implementation


def _prepare(x, weight, bias, spec, device):
    """Checks devices and dtypes, picks the layout, returns
    (problem, convt3d device, x, weight, bias) with dense tensors."""
    if not isinstance(x, torch.Tensor) or not isinstance(weight, torch.Tensor):
        raise TypeError("convt3d: x and weight must both be torch tensors (or both NumPy arrays)")
    if bias is not None and not isinstance(bias, torch.Tensor):
        raise TypeError("convt3d: bias must be a torch tensor like x")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.device != x.device:
            raise RuntimeError(
                "convt3d: x is on %s but %s is on %s: all tensors must be on one device"
                % (x.device, name, t.device)
            )
    dev = _device_of(x)
    if device is not None:
        want = torch.device(device)
        if want.type == "cuda" and want.index is None:
            want = torch.device("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0)
        if (want.type, want.index if want.type == "cuda" else None) != (
            x.device.type,
            dev.ordinal if dev.kind == _lib.DEVICE_CUDA else None,
        ):
            raise InvalidProblemError(
                "device=%s but the tensors are on %s (torch tensors run where they are; NumPy "
                "arrays can be staged with device=)" % (device, x.device)
            )
    if x.dim() == 5 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last_3d):
        layout = _lib.LAYOUT_NDHWC
    else:
        layout = _lib.LAYOUT_NCDHW
        x = x.contiguous()
    weight = weight.contiguous()
    if bias is not None:
        bias = bias.contiguous()
    named = [("x", x.dtype, _dtype("x", x)), ("weight", weight.dtype, _dtype("weight", weight))]
    if bias is not None:
        named.append(("bias", bias.dtype, _dtype("bias", bias)))
    dtypes = _one_dtype(named)
    p = make_problem(
        x.shape,
        weight.shape,
        None if bias is None else bias.shape,
        spec.stride,
        spec.padding,
        spec.output_padding,
        spec.groups,
        spec.dilation,
        spec.output_size,
        layout,
        dtypes,
    )
    return p, dev, x, weight, bias


def create_plan(p, dev, weight, bias, spec):
    _sweep()
    if dev.kind == _lib.DEVICE_CUDA:
        # the plan copies the weights with its own calls: let torch's queued
        # writes to them land first
        torch.cuda.current_stream(weight.device).synchronize()
    plan = Plan(
        p,
        dev,
        weight.data_ptr(),
        None if bias is None else bias.data_ptr(),
        spec.math_mode,
        spec.implementation,
    )
    if dev.kind == _lib.DEVICE_CUDA:
        plan._streams = {}  # every stream it ran on, for retire()
        plan._on_del = _defer_del
    return plan


def _defer_del(plan):
    # a CUDA plan dropped without retire(): park it until its stream is done
    retire(plan)


def _execute(plan, p, dev, x):
    shape = output_shape(p)
    fmt = torch.channels_last_3d if p.layout == _lib.LAYOUT_NDHWC else torch.contiguous_format
    return _launch(plan, shape, fmt, dev.kind == _lib.DEVICE_CUDA, x)


_CUDA_STREAM_LEGACY = 0x1  # cudaStreamLegacy in CUDA's driver_types.h


def _launch(plan, shape, fmt, cuda, x):
    y = torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)
    if cuda:
        with torch.cuda.device(x.device):
            stream = torch.cuda.current_stream(x.device)
            plan._streams.setdefault((x.device.index, stream.cuda_stream), stream)
            # torch's default stream has handle 0, which the C API takes as "the default
            # stream, synchronised before return": pass cudaStreamLegacy (the same stream)
            # instead, so the call stays asynchronous like every torch op
            handle = stream.cuda_stream or _CUDA_STREAM_LEGACY
            plan.execute(x.data_ptr(), y.data_ptr(), ctypes.c_void_p(handle))
    else:
        plan.execute(x.data_ptr(), y.data_ptr())
    return y


def forward(x, weight, bias, spec, device=None, plan_cache=None):
    """y for a 5-D x, no autograd.  plan_cache (convt3d.torch's PlanCache)
    keeps plans across calls; without it the plan lives for this call."""
    if plan_cache is not None:
        # the fast path: a call like one already made with these weights
        # (same x shape, dtype, device and layout, same spec -- math mode
        # included; the weights' dtype is part of their state) reuses what that
        # call derived -- its validation, problem, plan and output shape.
        # Only for dense weights (a copy would be new weights each call) and
        # device=None (whose check depends on the current CUDA device).
        fast_key = None
        if (
            device is None
            and type(x) is torch.Tensor
            and isinstance(weight, torch.Tensor)
            and weight.is_contiguous()
            and (bias is None or (isinstance(bias, torch.Tensor) and bias.is_contiguous()))
        ):
            if x.is_contiguous():
                layout = _lib.LAYOUT_NCDHW
            elif x.is_contiguous(memory_format=torch.channels_last_3d):
                layout = _lib.LAYOUT_NDHWC
            else:
                layout = None  # copied to NCDHW below, as _prepare does
            fast_key = (
                x.shape, x.dtype, x.device, layout,
                spec.stride, spec.padding, spec.output_padding, spec.dilation,
                type(spec.groups), spec.groups, spec.output_size,
                type(spec.math_mode), spec.math_mode,
                type(spec.implementation), spec.implementation,
            )
            entry = plan_cache._lookup(fast_key, weight, bias)
            if entry is not None:
                if layout is None:
                    x = x.contiguous()
                return _launch(entry[1], entry[2], entry[3], entry[4], x)
        p, dev, x, weight, bias = _prepare(x, weight, bias, spec, device)
        key, plan = plan_cache._get(p, dev, weight, bias, spec)
        shape = output_shape(p)
        fmt = torch.channels_last_3d if p.layout == _lib.LAYOUT_NDHWC else torch.contiguous_format
        cuda = dev.kind == _lib.DEVICE_CUDA
        y = _launch(plan, shape, fmt, cuda, x)
        if fast_key is not None:
            plan_cache._remember(fast_key, (key, plan, shape, fmt, cuda))
        return y
    p, dev, x, weight, bias = _prepare(x, weight, bias, spec, device)
    plan = create_plan(p, dev, weight, bias, spec)
    try:
        return _execute(plan, p, dev, x)
    finally:
        retire(plan)


class ConvTranspose3dFunction(torch.autograd.Function):
    """y = convt3d(x, weight, bias); the gradients by torch's own
    convolution_backward (transposed=True), grad_bias included."""

    @staticmethod
    def forward(ctx, x, weight, bias, spec, device, plan_cache):
        y = forward(x, weight, bias, spec, device, plan_cache)
        ctx.save_for_backward(x, weight)
        ctx.spec = spec
        # the output_padding the problem resolved (output_size included)
        ctx.output_padding = tuple(
            y.shape[2 + d]
            - ((x.shape[2 + d] - 1) * spec.stride[d] - 2 * spec.padding[d]
               + spec.dilation[d] * (weight.shape[2 + d] - 1) + 1)
            for d in range(3)
        )
        ctx.bias_sizes = None if bias is None else list(bias.shape)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_y):
        x, weight = ctx.saved_tensors
        s = ctx.spec
        mask = [
            ctx.needs_input_grad[0],
            ctx.needs_input_grad[1],
            ctx.bias_sizes is not None and ctx.needs_input_grad[2],
        ]
        gx, gw, gb = torch.ops.aten.convolution_backward(
            grad_y,
            x,
            weight,
            ctx.bias_sizes,
            list(s.stride),
            list(s.padding),
            list(s.dilation),
            True,
            list(ctx.output_padding),
            s.groups,
            mask,
        )
        return (gx if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None,
                None, None, None)


def run(x, weight, bias, spec, device=None, plan_cache=None):
    """The whole call: unbatched input, autograd or not."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("convt3d: x and weight must both be torch tensors (or both NumPy arrays)")
    if x.dim() not in (4, 5):
        raise InvalidProblemError(
            "expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input "
            "of size: %s" % (list(x.shape),)
        )
    unbatched = x.dim() == 4
    if unbatched:
        x = x.unsqueeze(0)
        if spec.output_size is not None and len(spec.output_size) == 4:
            spec.output_size = spec.output_size[1:]
    grads = torch.is_grad_enabled() and (
        x.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad)
    )
    if grads:
        y = ConvTranspose3dFunction.apply(x, weight, bias, spec, device, plan_cache)
    else:
        y = forward(x, weight, bias, spec, device, plan_cache)
    return y.squeeze(0) if unbatched else y


def conv_transpose3d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, device=None, *, math_mode=None,
                     implementation=None):
    spec = Spec(stride, padding, output_padding, groups, dilation, output_size, math_mode,
                implementation)
    return run(x, weight, bias, spec, device)


__all__ = ["conv_transpose3d", "run", "forward", "retire", "create_plan", "Spec",
           "ConvTranspose3dFunction", "_device_name"]
