#!/usr/bin/env python3
"""Sums ncu's per-kernel gpu__time_duration (CSV from `ncu --csv --metrics
gpu__time_duration.sum,dram__bytes_read.sum`) by kernel name and grid size and prints the
largest, with their share and, where ncu measured DRAM reads, the bandwidth they reached."""
import collections
import csv
import sys

SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def main():
    rows = [line for line in open(sys.argv[1]) if line.startswith('"')]
    totals, reads, counts = collections.defaultdict(float), collections.defaultdict(float), collections.Counter()
    for r in csv.DictReader(rows):
        key = f'{r["Kernel Name"][:80]} grid{r.get("Grid Size", "")}'
        value = float(r["Metric Value"].replace(",", ""))
        if r.get("Metric Name") == "gpu__time_duration.sum":
            totals[key] += value * SCALE.get(r["Metric Unit"], 1.0)
            counts[key] += 1
        elif r.get("Metric Name") == "dram__bytes_read.sum":
            reads[key] += value * BYTES.get(r["Metric Unit"], 1.0)
    total = sum(totals.values())
    print(f"{sys.argv[2] if len(sys.argv) > 2 else ''}: {total / 1e3:.3f} ms of kernels, {sum(counts.values())} launches")
    for key, us in sorted(totals.items(), key=lambda kv: -kv[1])[:18]:
        bandwidth = f"{reads[key] / (us * 1e-6) / 1e12:5.2f} TB/s" if reads.get(key) else ""
        print(f"  {us / 1e3:8.3f} ms {100 * us / total:5.1f}%  x{counts[key]:<4d} {bandwidth:>10} {key}")


if __name__ == "__main__":
    main()
