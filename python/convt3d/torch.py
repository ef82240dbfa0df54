"""convt3d.torch: torch.nn.ConvTranspose3d computed by libconvt3d.

    m = convt3d.torch.ConvTranspose3d(32, 16, kernel_size=3, stride=2, padding=1)
    m.load_state_dict(torch_module.state_dict())      # same keys: weight, bias
    m = convt3d.torch.from_module(torch_module)       # or convert one (shares parameters)
    y = m(x)                                          # CPU or CUDA tensors, autograd works

The module is a subclass of torch.nn.ConvTranspose3d (same constructor,
parameters, state_dict, repr); only forward differs.  float32, float16 and
bfloat16 parameters (``dtype=``, ``m.half()``, ``m.to(torch.bfloat16)``) with
an input of the same dtype; the output has it.  Plans are cached per
(input shape, device, dtype, layout, output_padding, math mode) and rebuilt when the
weight or bias changes: their data_ptr and autograd version counters are
compared on every call (no copy, no hash of the data).  Writes that bypass the
version counter (``m.weight.data.copy_(...)``) are not seen: call
``m.reset_plans()`` after those.
"""

import collections

import torch as _torch

from . import _math_mode, _torch_ops

__all__ = ["ConvTranspose3d", "from_module", "conv_transpose3d", "PlanCache"]

conv_transpose3d = _torch_ops.conv_transpose3d


def _state(t):
    if t is None:
        return None
    try:
        version = t._version
    except Exception:  # inference tensors have no version counter
        return object()  # never equal: rebuild every call
    return (t.data_ptr(), version, t.device, t.dtype, tuple(t.shape), tuple(t.stride()))


class PlanCache:
    """Plans keyed by problem and device, valid for one state of the weights."""

    def __init__(self, capacity=16):
        self.capacity = capacity
        self._plans = collections.OrderedDict()
        # the per-call fast path (_torch_ops.forward): a key made of the call's
        # arguments (x's shape, dtype, device, layout and the spec) -> (plan
        # key, plan, output shape, memory format, is CUDA), filled after a
        # call that went the whole way (validation, problem, plan); valid for
        # the weights' state of self._weights only (emptied with the plans)
        self._fast = {}
        self._weights = None
        self.builds = 0  # plans created so far (for tests and curiosity)

    def clear(self):
        plans, self._plans = self._plans, collections.OrderedDict()
        self._fast = {}
        for plan in plans.values():
            _torch_ops.retire(plan)

    def get(self, problem, dev, weight, bias, spec):
        return self._get(problem, dev, weight, bias, spec)[1]

    def _get(self, problem, dev, weight, bias, spec):
        state = (_state(weight), _state(bias))
        if state != self._weights:
            self.clear()
            self._weights = state
        # the problem's bytes hold the data types (x_type .. y_type) with the
        # sizes and layout; spec.math_mode is the normalised int
        key = (bytes(problem), dev.kind, dev.ordinal, spec.math_mode, spec.implementation)
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return key, plan
        plan = _torch_ops.create_plan(problem, dev, weight, bias, spec)
        self.builds += 1
        self._plans[key] = plan
        while len(self._plans) > self.capacity:
            _torch_ops.retire(self._plans.popitem(last=False)[1])
        return key, plan

    def _lookup(self, fast_key, weight, bias):
        """The fast-path entry of fast_key when the weights are in the state the
        plans were made for and its plan is still cached (then most recently
        used, as get() would make it), else None (changing nothing)."""
        entry = self._fast.get(fast_key)
        if entry is None:
            return None
        if (_state(weight), _state(bias)) != self._weights:
            return None  # the slow path (get) drops the plans
        key, plan = entry[0], entry[1]
        if self._plans.get(key) is not plan:  # evicted since
            del self._fast[fast_key]
            return None
        self._plans.move_to_end(key)
        return entry

    def _remember(self, fast_key, entry):
        if len(self._fast) >= 4 * max(self.capacity, 1):
            self._fast = {}
        self._fast[fast_key] = entry

    def __len__(self):
        return len(self._plans)

    def plans(self):
        """The cached convt3d.Plan objects, least recently used first."""
        return list(self._plans.values())

    # plans are not data: copies and pickles of a module start empty
    def __deepcopy__(self, memo):
        return PlanCache(self.capacity)

    def __getstate__(self):
        return {"capacity": self.capacity}

    def __setstate__(self, state):
        self.__init__(state.get("capacity", 16))


class ConvTranspose3d(_torch.nn.ConvTranspose3d):
    """torch.nn.ConvTranspose3d whose forward runs libconvt3d.

    Extra keywords: math_mode and implementation, passed to the plan options
    (see convt3d.conv_transpose3d); both are attributes that may be changed
    later (each mode keeps its own plans).  The default math_mode (None, the
    same as "f32") is exact fp32 on every device, whatever
    torch.backends.cudnn.allow_tf32 says: torch's default for a CUDA
    ConvTranspose3d in float32 is TF32 (allow_tf32 is True unless changed),
    which math_mode="tf32" mirrors -- e.g.
    ``math_mode="tf32" if torch.backends.cudnn.allow_tf32 else "f32"``.
    For float16 and bfloat16 parameters the mode changes nothing (their
    products are exact and accumulate in fp32)."""

    def __init__(self, *args, math_mode=None, implementation=None, **kwargs):
        _math_mode(math_mode)  # an unknown name raises now, not at the first forward
        super().__init__(*args, **kwargs)
        self.math_mode = math_mode
        self.implementation = implementation
        self._convt3d_plans = PlanCache()

    def reset_plans(self):
        """Drops the cached plans (after writes the version counters miss)."""
        self._convt3d_plans.clear()

    @property
    def plan_cache(self):
        return self._convt3d_plans

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError("Only 'zeros' padding mode is supported for ConvTranspose3d")
        spec = _torch_ops.Spec(
            self.stride,
            self.padding,
            self.output_padding,
            self.groups,
            self.dilation,
            output_size,
            self.math_mode,
            self.implementation,
        )
        return _torch_ops.run(input, self.weight, self.bias, spec, None, self._convt3d_plans)

    def extra_repr(self):
        s = super().extra_repr()
        if self.math_mode is not None:
            s += ", math_mode=%r" % (self.math_mode,)
        if self.implementation is not None:
            s += ", implementation=%r" % (self.implementation,)
        return s


def from_module(module, share=True, math_mode=None, implementation=None):
    """A convt3d.torch.ConvTranspose3d computing what ``module`` (a
    torch.nn.ConvTranspose3d) computes.  share=True: the same Parameter
    objects (training either trains both); share=False: copies."""
    if not isinstance(module, _torch.nn.ConvTranspose3d):
        raise TypeError("from_module expects a torch.nn.ConvTranspose3d, got %s" % type(module))
    m = module
    new = ConvTranspose3d(
        m.in_channels,
        m.out_channels,
        m.kernel_size,
        stride=m.stride,
        padding=m.padding,
        output_padding=m.output_padding,
        groups=m.groups,
        bias=m.bias is not None,
        dilation=m.dilation,
        padding_mode=m.padding_mode,
        device=m.weight.device,
        dtype=m.weight.dtype,
        math_mode=math_mode,
        implementation=implementation,
    )
    if share:
        new.weight = m.weight
        new.bias = m.bias
    else:
        with _torch.no_grad():
            new.weight = _torch.nn.Parameter(m.weight.detach().clone(),
                                             requires_grad=m.weight.requires_grad)
            if m.bias is not None:
                new.bias = _torch.nn.Parameter(m.bias.detach().clone(),
                                               requires_grad=m.bias.requires_grad)
    new.train(m.training)
    return new
