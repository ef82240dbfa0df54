"""Shared helpers: a float64 NumPy ConvTranspose3d and random problems."""
import os
import sys
import zlib

import numpy as np
import pytest

# the package from this source tree, whatever is installed
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def triple(v):
    return (v,) * 3 if isinstance(v, int) else tuple(v)


def convt3d_f64(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The formula of include/convt3d.h in float64, independent of the library:
    scatter each input voxel's contribution through each kernel tap."""
    s, p, op, l = triple(stride), triple(padding), triple(output_padding), triple(dilation)
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, cin = x.shape[:2]
    ins = x.shape[2:]
    k = w.shape[2:]
    cog = w.shape[1]
    cig = cin // groups
    out = [(ins[d] - 1) * s[d] - 2 * p[d] + l[d] * (k[d] - 1) + op[d] + 1 for d in range(3)]
    # full (uncropped) output, then crop the padding
    full = [(ins[d] - 1) * s[d] + l[d] * (k[d] - 1) + 1 + op[d] for d in range(3)]
    full = [max(full[d], p[d] + out[d]) for d in range(3)]
    y = np.zeros((n, groups * cog) + tuple(full))
    for g in range(groups):
        xg = x[:, g * cig:(g + 1) * cig]
        wg = w[g * cig:(g + 1) * cig]
        for kd in range(k[0]):
            for kh in range(k[1]):
                for kw in range(k[2]):
                    # (n, oc, D, H, W) contribution of tap (kd, kh, kw)
                    c = np.einsum("nidhw,io->nodhw", xg, wg[:, :, kd, kh, kw])
                    od, oh, ow = kd * l[0], kh * l[1], kw * l[2]
                    y[:, g * cog:(g + 1) * cog,
                      od:od + (ins[0] - 1) * s[0] + 1:s[0],
                      oh:oh + (ins[1] - 1) * s[1] + 1:s[1],
                      ow:ow + (ins[2] - 1) * s[2] + 1:s[2]] += c
    y = y[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1], p[2]:p[2] + out[2]]
    if b is not None:
        y = y + b.astype(np.float64)[None, :, None, None, None]
    return y


def random_problem(rng, small=True):
    """Keyword arguments of a random valid problem (PyTorch's rules)."""
    groups = int(rng.choice([1, 1, 2, 3]))
    cin = groups * int(rng.integers(1, 4))
    cout = groups * int(rng.integers(1, 4))
    k = tuple(int(v) for v in rng.integers(1, 4, size=3))
    s = tuple(int(v) for v in rng.integers(1, 4, size=3))
    l = tuple(int(v) for v in rng.integers(1, 3, size=3))
    ins = tuple(int(v) for v in rng.integers(1, 6, size=3))
    p = []
    op = []
    for d in range(3):
        full = (ins[d] - 1) * s[d] + l[d] * (k[d] - 1) + 1
        p.append(int(rng.integers(0, max(1, (full - 1) // 2 + 1))))
        op.append(int(rng.integers(0, max(s[d], l[d]))))
    return dict(
        n=int(rng.integers(1, 3)), cin=cin, cout=cout, groups=groups, ins=ins, k=k,
        stride=s, padding=tuple(p), output_padding=tuple(op), dilation=l,
        bias=bool(rng.integers(0, 2)),
    )


def tensors(rng, pr):
    x = rng.uniform(-1, 1, size=(pr["n"], pr["cin"]) + pr["ins"]).astype(np.float32)
    w = rng.uniform(-1, 1, size=(pr["cin"], pr["cout"] // pr["groups"]) + pr["k"]).astype(np.float32)
    b = rng.uniform(-1, 1, size=pr["cout"]).astype(np.float32) if pr["bias"] else None
    return x, w, b


def kwargs(pr):
    return dict(stride=pr["stride"], padding=pr["padding"], output_padding=pr["output_padding"],
                groups=pr["groups"], dilation=pr["dilation"])


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


# Relative L2 tolerances against convt3d_f64 on the same inputs (for half data,
# the half-rounded ones): f32 data by math mode; f16/bf16 data by dtype (their
# products are exact in every mode, the output is rounded once to the dtype).
TOL_MODE = {"f32": 1e-5, "fp32": 1e-5, "3xtf32": 1e-5, "tf32": 1e-3, 0: 1e-5, 1: 1e-3, 2: 1e-5}
TOL_HALF = {"float16": 1e-3, "bfloat16": 8e-3}


def tolerance(dtype, mode="f32"):
    """dtype: a NumPy or torch dtype (or its name); mode: a math_mode argument."""
    if str(dtype).startswith("torch."):
        name = str(dtype)[len("torch."):]
    else:
        name = np.dtype(dtype).name  # np.float16, "float16", ml_dtypes.bfloat16
    if name in TOL_HALF:
        return TOL_HALF[name]
    return TOL_MODE[mode.lower() if isinstance(mode, str) else mode]


def rel_l2(y, ref):
    y = np.asarray(y, np.float64)
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-30))
