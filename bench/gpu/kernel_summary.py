#!/usr/bin/env python3
"""Sums ncu's per-kernel gpu__time_duration (CSV from `ncu --csv --metrics
gpu__time_duration.sum`) by kernel name and prints the largest, with their share."""
import collections
import csv
import sys

SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}


def main():
    rows = [line for line in open(sys.argv[1]) if line.startswith('"')]
    totals, counts = collections.defaultdict(float), collections.Counter()
    for r in csv.DictReader(rows):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = r["Kernel Name"][:90]
        totals[name] += float(r["Metric Value"].replace(",", "")) * SCALE.get(r["Metric Unit"], 1.0)
        counts[name] += 1
    total = sum(totals.values())
    print(f"{sys.argv[2] if len(sys.argv) > 2 else ''}: {total / 1e3:.3f} ms of kernels, {sum(counts.values())} launches")
    for name, us in sorted(totals.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {us / 1e3:8.3f} ms {100 * us / total:5.1f}%  x{counts[name]:<4d} {name}")


if __name__ == "__main__":
    main()
