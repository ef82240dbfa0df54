#!/usr/bin/env python3
"""convt3d against PyTorch, in one process: ConvTranspose3d, fp32.

    python3 bench/vs_pytorch.py                       # the bench suite, CPU (+ cuda:0 when present)
    python3 bench/vs_pytorch.py --suite kernelbench   # one suite shape (or --suite all)
    python3 bench/vs_pytorch.py --device cuda         # the GPU only
    python3 bench/vs_pytorch.py --n 8 --cin 32 --cout 32 --in 12,24,48 --kernel 3,5,7 \\
        --stride 2 --padding 1,2,3 --output-padding 1 --groups 4        # a shape from flags

Each problem runs through torch.nn.ConvTranspose3d and through
convt3d.torch.ConvTranspose3d sharing its parameters (plan built during the
warm-up), under torch.no_grad(), on the same fresh uniform [-1, 1) data.  On a
GPU PyTorch is timed twice: cuDNN in exact fp32 (torch.backends.cudnn.allow_tf32
= False) and with PyTorch's default setting (allow_tf32 as found at start,
True in stock PyTorch: TF32 tensor cores).  Times are medians of the timed runs
after warm-up (CUDA events on the GPU, on torch's current stream).  The outputs
are checked against each other: convt3d vs PyTorch fp32 must agree within a
relative L2 error of 1e-5; the TF32 row's error is shown for information
(tolerance 1e-2).  The library is found as `import convt3d` finds it
($CONVT3D_LIBRARY, configure's libdir, the build tree, the system loader);
this script adds ../python to sys.path so that it runs from a source tree.
"""

import argparse
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The six shapes of bench/suite.c (DESIGN.md section 5), transcribed:
# name: (N, Cin, Cout, G, in (d,h,w), k, s, p, op, bias)
SUITE = [
    ("kernelbench", 8, 32, 32, 4, (12, 24, 48), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), False),
    ("unet_up_k2s2", 2, 128, 64, 1, (32, 64, 64), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), True),
    ("k4s2p1", 4, 64, 32, 1, (16, 32, 32), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), True),
    ("k3s2p1op1_wide", 1, 256, 128, 1, (8, 16, 16), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1),
     True),
    ("depthwise", 2, 64, 64, 64, (16, 32, 32), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), False),
    ("k3s1p1", 2, 32, 32, 1, (32, 32, 32), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), False),
]

TOL_FP32 = 1e-5
TOL_TF32 = 1e-2


class Shape:
    def __init__(self, name, n, cin, cout, groups, ins, k, s, p, op, bias, dil=(1, 1, 1)):
        self.name, self.n, self.cin, self.cout, self.groups = name, n, cin, cout, groups
        self.ins, self.k, self.s, self.p, self.op, self.bias, self.dil = ins, k, s, p, op, bias, dil

    def out(self):
        return tuple((self.ins[d] - 1) * self.s[d] - 2 * self.p[d] + self.dil[d] * (self.k[d] - 1)
                     + self.op[d] + 1 for d in range(3))

    def macs(self):
        """Useful MACs as convt3d-bench counts them (bench/verify.c): the
        (input, tap) pairs whose output padding does not crop."""
        out = self.out()
        total = float(self.n * self.cin * (self.cout // self.groups))
        for d in range(3):
            pairs = 0
            for kk in range(self.k[d]):
                base = kk * self.dil[d] - self.p[d]
                lo = 0 if base >= 0 else -(base // self.s[d])  # ceil(-base / s)
                hi = min((out[d] - 1 - base) // self.s[d], self.ins[d] - 1)
                if hi >= lo:
                    pairs += hi - lo + 1
            total *= pairs
        return total


def triple(text, name):
    try:
        v = [int(t) for t in str(text).split(",")]
    except ValueError:
        raise SystemExit("vs_pytorch.py: --%s wants N or D,H,W, got %r" % (name, text))
    if len(v) == 1:
        v = v * 3
    if len(v) != 3:
        raise SystemExit("vs_pytorch.py: --%s wants N or D,H,W, got %r" % (name, text))
    return tuple(v)


def parse():
    ap = argparse.ArgumentParser(description="convt3d vs PyTorch ConvTranspose3d, fp32")
    ap.add_argument("--suite", help="a suite shape's name, or all (default: all, unless shape flags)")
    ap.add_argument("--device", default="all", choices=["cpu", "cuda", "all"],
                    help="where to run (all: the CPU and cuda:0 when present)")
    ap.add_argument("--layout", default="ncdhw", choices=["ncdhw", "ndhwc"],
                    help="x and y memory format (ndhwc: torch.channels_last_3d)")
    ap.add_argument("--budget", type=float, default=1.0,
                    help="seconds of timed runs per measurement (at least 3 runs)")
    ap.add_argument("--reps", type=int, help="a fixed number of timed runs instead of --budget")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up runs (default 2)")
    ap.add_argument("--threads", type=int,
                    help="CPU threads for both (torch.set_num_threads and OMP_NUM_THREADS)")
    ap.add_argument("--seed", type=int, default=1)
    g = ap.add_argument_group("a problem from flags (PyTorch's names; N or D,H,W)")
    g.add_argument("--n", type=int)
    g.add_argument("--cin", type=int)
    g.add_argument("--cout", type=int)
    g.add_argument("--in", dest="ins")
    g.add_argument("--kernel")
    g.add_argument("--stride", default="1")
    g.add_argument("--padding", default="0")
    g.add_argument("--output-padding", default="0")
    g.add_argument("--dilation", default="1")
    g.add_argument("--groups", type=int, default=1)
    g.add_argument("--bias", action="store_true")
    a = ap.parse_args()
    flags = [a.n, a.cin, a.cout, a.ins, a.kernel]
    if any(f is not None for f in flags):
        if not all(f is not None for f in flags):
            ap.error("a problem from flags needs --n, --cin, --cout, --in and --kernel")
        if a.suite:
            ap.error("--suite and shape flags exclude each other")
        shapes = [Shape("flags", a.n, a.cin, a.cout, a.groups, triple(a.ins, "in"),
                        triple(a.kernel, "kernel"), triple(a.stride, "stride"),
                        triple(a.padding, "padding"), triple(a.output_padding, "output-padding"),
                        a.bias, triple(a.dilation, "dilation"))]
    else:
        want = a.suite or "all"
        shapes = [Shape(*s) for s in SUITE if want in ("all", s[0])]
        if not shapes:
            ap.error("no suite shape %r (the suite: %s)" % (want, ", ".join(s[0] for s in SUITE)))
    return a, shapes


def rel_errors(y, ref):
    y, ref = y.double(), ref.double()
    diff = (y - ref)
    rel_l2 = (diff.norm() / max(ref.norm().item(), 1e-300)).item()
    max_rel = (diff.abs().max() / max(ref.abs().max().item(), 1e-300)).item()
    finite = bool(torch.isfinite(y).all().item())
    return rel_l2, max_rel, finite


def time_cpu(fn, args):
    for _ in range(max(args.warmup, 1)):
        fn()
    times = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if args.reps is not None:
            if len(times) >= args.reps:
                break
        elif len(times) >= 3 and time.perf_counter() - start >= args.budget:
            break
        if args.reps is None and len(times) >= 1000:
            break
    return times


def time_cuda(fn, args, device):
    """Per-call GPU time: batches of back-to-back calls between two CUDA events, so that the
    host's per-call work (Python, plan-cache lookup, launch) overlaps the GPU's as it does in a
    model, rather than a lone call whose launch the GPU sits waiting for."""
    for _ in range(max(args.warmup, 1)):
        fn()
    torch.cuda.synchronize(device)
    stream = torch.cuda.current_stream(device)

    def batch_ms(calls):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(stream)
        for _ in range(calls):
            fn()
        e1.record(stream)
        e1.synchronize()
        return e0.elapsed_time(e1) / calls

    calls = max(1, min(100, int(2.0 / max(batch_ms(1), 1e-3))))  # about 2 ms a batch
    times = []
    start = time.perf_counter()
    while True:
        times.append(batch_ms(calls))
        if args.reps is not None:
            if len(times) >= args.reps:
                break
        elif len(times) >= 3 and time.perf_counter() - start >= args.budget:
            break
        if args.reps is None and len(times) >= 2000:
            break
    return times


ROW = "%-28s %-7s %-24s %11s %9s %9s %9s %9s  %s"


def run_device(shape, dev, args, results):
    """Times PyTorch and convt3d on one device; appends rows to results."""
    torch.manual_seed(args.seed)
    tm = torch.nn.ConvTranspose3d(shape.cin, shape.cout, shape.k, shape.s, shape.p, shape.op,
                                  shape.groups, shape.bias, shape.dil)
    with torch.no_grad():
        tm.weight.uniform_(-1, 1)
        if tm.bias is not None:
            tm.bias.uniform_(-1, 1)
    tm = tm.to(dev)
    x = (torch.rand((shape.n, shape.cin) + shape.ins, generator=torch.Generator().manual_seed(args.seed))
         * 2 - 1).to(dev)
    if args.layout == "ndhwc":
        x = x.to(memory_format=torch.channels_last_3d)
    cm = convt3d.torch.from_module(tm)
    cuda = dev.type == "cuda"
    timer = (lambda fn: time_cuda(fn, args, dev)) if cuda else (lambda fn: time_cpu(fn, args))
    flops = 2 * shape.macs()
    rows = []
    with torch.no_grad():
        # convt3d
        try:
            y_c = cm(x)
            impl = cm.plan_cache.plans()[-1].implementation
            t_c = timer(lambda: cm(x))
            rows.append(dict(impl="convt3d", detail=impl, times=t_c, y=y_c, tol=TOL_FP32))
        except convt3d.Error as e:
            rows.append(dict(impl="convt3d", error=str(e)))
            y_c = None
        # PyTorch
        variants = [("torch fp32", False)]
        if cuda:
            variants = [("torch cuDNN fp32", False),
                        ("torch default" + (" (TF32)" if DEFAULT_TF32 else ""), DEFAULT_TF32)]
        for label, tf32 in variants:
            torch.backends.cudnn.allow_tf32 = tf32
            try:
                y_t = tm(x)
                t_t = timer(lambda: tm(x))
                rows.append(dict(impl=label, times=t_t, y=y_t,
                                 tol=TOL_TF32 if tf32 else TOL_FP32, tf32=tf32))
            finally:
                torch.backends.cudnn.allow_tf32 = DEFAULT_TF32
    # verification: every output against the other side's exact one
    ref_t = next((r["y"] for r in rows if r["impl"].startswith("torch") and not r.get("tf32")
                  and "y" in r), None)
    for r in rows:
        if "y" not in r:
            continue
        ref = ref_t if r["impl"] == "convt3d" else y_c
        if ref is None:
            r["check"] = "skipped"
            continue
        r["rel_l2"], r["max_rel"], finite = rel_errors(r["y"], ref)
        r["ok"] = finite and r["rel_l2"] <= r["tol"]
        r["check"] = ("" if r["ok"] else "FAIL ") + ("tf32" if r.get("tf32") else "fp32")
    c_ms = next((statistics.median(r["times"]) for r in rows
                 if r["impl"] == "convt3d" and "times" in r), None)
    for r in rows:
        r.pop("y", None)
        if "times" in r:
            r["median"] = statistics.median(r["times"])
            r["gflops"] = flops / (r["median"] * 1e-3) * 1e-9
            if r["impl"] != "convt3d" and c_ms:
                r["speedup"] = r["median"] / c_ms
    results.append((shape, dev, rows))
    print_rows(shape, dev, rows)
    sys.stdout.flush()


def print_rows(shape, dev, rows):
    first = True
    for r in rows:
        name = shape.name if first else ""
        dname = ("cuda:%d" % dev.index if dev.type == "cuda" else "cpu") if first else ""
        first = False
        if "error" in r:
            print("%-28s %-7s %-24s failed: %s" % (name, dname, r["impl"], r["error"]))
            continue
        med = "%.3f%s" % (r["median"], "*" if len(r["times"]) < 3 else "")
        gf = ("%.2f" if r["gflops"] < 10 else "%.1f") % r["gflops"]
        sp = "%.2fx" % r["speedup"] if "speedup" in r else ""
        err = "%.1e" % r["max_rel"] if "max_rel" in r else "-"
        l2 = "%.1e" % r["rel_l2"] if "rel_l2" in r else "-"
        print(ROW % (name, dname, r["impl"], med, gf, sp, err, l2, r.get("check", "")))
        if r.get("detail"):
            print("%37s %s" % ("", r["detail"]))


def main():
    args, shapes = parse()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    global torch, convt3d, DEFAULT_TF32
    try:
        import torch
    except ImportError as e:
        print("vs_pytorch.py: PyTorch is not installed (import torch: %s); it is what this "
              "script compares with.  convt3d-bench compares with oneDNN and cuDNN without it."
              % e, file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
    try:
        import convt3d
        import convt3d.torch  # noqa: F401
    except ImportError as e:
        print("vs_pytorch.py: cannot import convt3d: %s" % e, file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    DEFAULT_TF32 = torch.backends.cudnn.allow_tf32
    devices = []
    notes = []
    if args.device in ("cpu", "all"):
        devices.append(torch.device("cpu"))
    if args.device in ("cuda", "all"):
        if not torch.cuda.is_available():
            notes.append("cuda: skipped: PyTorch sees no CUDA device")
        elif convt3d.cuda_device_count() < 1:
            notes.append("cuda: skipped: convt3d has no CUDA device (%s)" % (
                "built without CUDA" if not convt3d.has_cuda_support() else "none usable"))
        else:
            devices.append(torch.device("cuda", 0))
    if args.device == "cuda" and not devices:
        print("vs_pytorch.py: " + "; ".join(notes), file=sys.stderr)
        return 2

    cpu_model = "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    print("vs_pytorch.py (convt3d %s, PyTorch %s): ConvTranspose3d, fp32, median of timed runs "
          "after warm-up" % (convt3d.library_version(), torch.__version__))
    print("  library: %s" % convt3d.library_path)
    for dev in devices:
        if dev.type == "cpu":
            print("  cpu     %s; PyTorch %d threads, convt3d OMP_NUM_THREADS=%s (%d cores)"
                  % (cpu_model, torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS", "unset"),
                     os.cpu_count() or 0))
        else:
            print("  %-7s %s; cuDNN %s; PyTorch default cudnn.allow_tf32=%s" % (
                "cuda:%d" % dev.index, torch.cuda.get_device_name(dev),
                torch.backends.cudnn.version(), DEFAULT_TF32))
    for n in notes:
        print("  " + n)
    if args.reps is not None:
        print("  timing: %d warm-up, %d timed runs per measurement (--reps)" % (args.warmup, args.reps))
    else:
        print("  timing: %d warm-up, then timed runs for --budget=%g s per measurement (at least 3)"
              % (args.warmup, args.budget))
    print("  layout: %s; data uniform [-1,1), seed %d\n" % (args.layout, args.seed))
    print(ROW % ("shape", "device", "impl", "median ms", "GFLOP/s", "speed-up", "max err",
                 "rel L2", "check"))
    print(ROW % ("-" * 28, "-" * 7, "-" * 24, "-" * 11, "-" * 9, "-" * 9, "-" * 9, "-" * 9,
                 "-----"))
    results = []
    for shape in shapes:
        for dev in devices:
            try:
                run_device(shape, dev, args, results)
            except RuntimeError as e:  # e.g. out of memory on one device: go on
                print("%-28s %-7s failed: %s" % (shape.name, dev, str(e).splitlines()[0]))
    print()
    print("  GFLOP/s = useful MACs x 2 / time (convt3d-bench's count); speed-up = that row's median /"
          " convt3d's;")
    print("  max err = max |y - other| / max |other| against the other side (convt3d vs PyTorch fp32,")
    print("  PyTorch vs convt3d); pass: relative L2 error <= %g (fp32), <= %g (tf32)\n"
          % (TOL_FP32, TOL_TF32))
    failed = 0
    for dev in devices:
        wins, speedups, n = 0, {}, 0
        for shape, d, rows in results:
            if d != dev:
                continue
            n += 1
            for r in rows:
                if "speedup" in r:
                    speedups.setdefault(r["impl"], []).append(r["speedup"])
                if r.get("ok") is False:
                    failed += 1
        dname = "cuda:%d" % dev.index if dev.type == "cuda" else "cpu"
        for impl, sps in speedups.items():
            gm = math.exp(sum(math.log(s) for s in sps) / len(sps))
            wins = sum(1 for s in sps if s > 1)
            print("  %s: convt3d faster than %s on %d/%d shapes; geometric-mean speed-up %.2fx"
                  % (dname, impl, wins, len(sps), gm))
    print("  verification: %s" % ("no mismatch" if not failed else "%d MISMATCH(ES)" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
