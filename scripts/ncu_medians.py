#!/usr/bin/env python3
"""ncu_medians.py: medians of the fs_fused_kernel launches in a file of
scripts/ncu_cublas.sh outputs, one line per label ("== LABEL" lines before
each output, as the carry/s5x_call*.sh scripts write them; a label that
appears again adds its launches to the first). Prints, per label: launches,
median SM cycles (sm__cycles_elapsed.max, k), tensor-pipe % and µs, and every
launch's cycles. Standard library only.  Usage: ncu_medians.py NCU.txt"""
import statistics
import sys


def main(path):
    data, order = {}, []
    label = None
    for line in open(path, encoding="utf-8"):
        if line.startswith("== "):
            label = line[3:].strip()
            if label not in data:
                data[label] = []
                order.append(label)
        elif label and line.startswith("| ") and "fs_fused_kernel" in line:
            cols = [c.strip() for c in line.split("|")]
            # | launch | kernel | time | cycles.max | clock | dram read | dram write | lts bytes | tensor % |
            us = float(cols[3].split()[0].replace(",", "")) / 1000
            cycles = float(cols[4].split()[0].replace(",", ""))
            tensor = float(cols[9].split()[0])
            data[label].append((cycles, tensor, us))
    for label in order:
        v = data[label]
        if not v:
            print(f"{label}: no fs_fused_kernel launches")
            continue
        med = [statistics.median(x[i] for x in v) for i in range(3)]
        print(f"{label:70s} n={len(v)} cyc {med[0] / 1e3:8.1f}k  tensor {med[1]:5.1f}%  {med[2]:7.1f}us  "
              f"all={[round(x[0] / 1e3, 1) for x in v]}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
