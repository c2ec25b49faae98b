#!/usr/bin/env python3
"""resource_report.py: issue #3's resource report (registers, spills, shared memory, cubin bytes) of the specs the
built-in tuning tables pick, as a markdown table for BENCHMARKS.md. No GPU needed: each spec is compiled with
`fusedsample compile --spec SPEC` (NVRTC + ptxas -v) into a fresh module cache.

  python3 scripts/resource_report.py [TABLE.json ...]   (default: every autotune/builtin/*.json)

A bucket's pick is the config the runtime's lookup takes (interleaved timings before flushed ones, then the lowest
median). Specs that differ only in
`l2pN` share one binary (a launch setting), so they are listed once, with the `l2pN` forms beside.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

CLI = os.environ.get("FUSEDSAMPLE_CLI", "build/fusedsample")


def picks(paths):
    """spec -> sorted list of 'GPU vocab x d N=bucket' that pick it."""
    out = {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for e in doc["entries"]:
            # the runtime's order (TuningEntry::best, ranks_before): interleaved timings first, then the median,
            # then the spec text
            best = min(e["configs"], key=lambda c: (c.get("method") != "interleaved", c["median_us"], c["spec"]))
            where = f'{e["gpu_name"].replace("NVIDIA ", "")} {e["vocab"]}x{e["d_model"]} N={e["bucket"]}'
            out.setdefault(best["spec"], []).append(where)
    return out


def compile_report(spec, cache):
    env = dict(os.environ, FUSEDSAMPLE_CACHE_DIR=cache)
    r = subprocess.run([CLI, "compile", "--spec", spec], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{CLI} compile --spec '{spec}' failed:\n{r.stderr}")
    field = lambda pat: re.search(pat, r.stdout, re.M).group(1)
    return {
        "threads": field(r"^threads\s+(\d+)"),
        "smem": field(r"^shared memory\s+(\d+)"),
        "fused": field(r"^resources\s+fs_fused_kernel: (.*)$"),
        "cubin": field(r"^cubin\s+(\d+) bytes"),
    }


def main():
    paths = sys.argv[1:] or sorted(glob.glob("autotune/builtin/*.json"))
    by_spec = picks(paths)
    binaries = {}  # spec without l2pN -> the picked spellings
    for spec in by_spec:
        binaries.setdefault(re.sub(r" l2p\d+$", "", spec), []).append(spec)
    print(f"Tables: {', '.join(paths)}\n")
    print("| spec (l2pN forms picked) | threads | shared memory (bytes) | fs_fused_kernel | cubin bytes | picked for |")
    print("|---|---:|---:|---|---:|---|")
    with tempfile.TemporaryDirectory(prefix="fs-resources-") as cache:
        for base in sorted(binaries):
            forms = binaries[base]
            rep = compile_report(forms[0], cache)
            where = sorted({w for s in forms for w in by_spec[s]})
            label = " / ".join(f"`{s}`" for s in sorted(forms))
            print(f'| {label} | {rep["threads"]} | {rep["smem"]} | {rep["fused"]} | {rep["cubin"]} | '
                  f'{"; ".join(where)} |')


if __name__ == "__main__":
    main()
