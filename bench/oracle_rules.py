#!/usr/bin/env python3
"""Reads convt3d-bench --all-kernels --json files and prints, per device and
automatic kernel, the problems where another implementation was faster by
more than --min (default 10%), grouped by that winner and sorted by the
features a walk rule reads, so that a rule can be read off the rows.

usage: bench/oracle_rules.py [--min 1.10] FILE.json [FILE.json ...]
"""
import argparse
import json
import math
from collections import defaultdict


def usable(r):
    v = r.get("verification", {})
    return (r.get("state") == "ok" and r.get("time", {}).get("median_ms")
            and not (v.get("checked") and not v.get("ok")))


def taps_per_phase(p):
    # per dim, the phases that get any tap (s / gcd(s, dilation)) share the
    # kernel: ceil(k / phases) taps each; the product over d, h, w
    t = 1
    for k, s, d in zip(p["kernel"], p["stride"], p["dilation"]):
        t *= -(-k // (s // math.gcd(s, d)))
    return t


def features(case, out_size):
    p = case["problem"]
    g = p["groups"]
    return {
        "cin_g": p["in_channels"] // g, "cout_g": p["out_channels"] // g, "g": g,
        "npos": p["batch"] * out_size[0] * out_size[1] * out_size[2],
        "taps": taps_per_phase(p),
        "stride": "x".join(str(s) for s in p["stride"]),
        "layout": p["layout"], "dtype": case["dtype"],
    }


def losses(paths, threshold):
    """(device, automatic, winner) -> [(loss, features, label, descriptor)]"""
    out = defaultdict(list)
    seen = defaultdict(int)
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        for case in run["cases"]:
            for dev in case.get("devices", []):
                o = dev.get("oracle")
                ours = [r for r in dev["impls"] if not r["baseline"]]
                if not o or not ours or not usable(ours[0]):
                    continue
                auto, auto_ms = o["automatic"], ours[0]["time"]["median_ms"]
                seen[(dev["device"], auto)] += 1
                others = [r for r in o["forced"] if r["detail"] != auto and usable(r)]
                if not others:
                    continue
                win = min(others, key=lambda r: r["time"]["median_ms"])
                loss = auto_ms / win["time"]["median_ms"]
                if loss > threshold:
                    out[(dev["device"], auto, win["detail"])].append(
                        (loss, features(case, o["out_size"]), case["label"],
                         case["descriptor"]))
    return out, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min", type=float, default=1.10,
                    help="report a loss automatic/fastest above this (default 1.10)")
    ap.add_argument("json", nargs="+")
    a = ap.parse_args()
    out, seen = losses(a.json, a.min)
    head = "%7s %6s %6s %4s %10s %5s %7s %6s %5s  %s" % (
        "loss", "cin/G", "cout/G", "G", "N*outpos", "taps", "stride", "layout", "dtype",
        "label / descriptor")
    for dev, auto in sorted(seen):
        groups = sorted(((w, rows) for (d, au, w), rows in out.items() if (d, au) == (dev, auto)),
                        key=lambda x: -len(x[1]))
        lost = sum(len(rows) for _, rows in groups)
        print("== %s  automatic %s: %d problems, another kernel > %.0f%% faster on %d" %
              (dev, auto, seen[(dev, auto)], (a.min - 1) * 100, lost))
        for winner, rows in groups:
            gm = math.exp(sum(math.log(r[0]) for r in rows) / len(rows))
            print("  -> %s: %d problems, geomean %.2fx" % (winner, len(rows), gm))
            print("   " + head)
            rows.sort(key=lambda r: (r[1]["cin_g"], r[1]["cout_g"], r[1]["taps"], r[1]["npos"]))
            for loss, ft, label, desc in rows:
                print("   %6.2fx %6d %6d %4d %10d %5d %7s %6s %5s  %s %s" % (
                    loss, ft["cin_g"], ft["cout_g"], ft["g"], ft["npos"], ft["taps"],
                    ft["stride"], ft["layout"], ft["dtype"], label, desc))


if __name__ == "__main__":
    main()
