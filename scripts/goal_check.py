#!/usr/bin/env python3
"""goal_check.py: issue #3's three goals against fusedsample_bench summary
tables (the --fs_table file or the bench's stdout; several files are merged
per shape, so a sweep run in chunks can be checked at once; a later row of
the same shape and N replaces an earlier one).

  goal 1: every N <= 64 with fused <= LIMIT x the floor (default 1.05);
  goal 2: N = 128 and N = 256 with fused <= cuBLAS GEMM;
  goal 3: every N with fused < unfused (cuBLAS GEMM + our sampler).

A ratio of 0 (the bench prints 0.000 over a line it did not time) is no
pass: the goal's cell names the N where that line was not timed, and
counts as missed.

Prints one markdown row per shape (worst ratio, where, and every N that
misses) and exits 1 if any goal is missed at any N the tables hold, 2 if
they hold no rows or the command line is bad (a missing or non-numeric
--limit, no table, a table that cannot be read). Standard library only.
Usage: goal_check.py [--limit 1.05] TABLE.md [TABLE.md ...]"""
import re
import sys


def parse(paths):
    """{(V, d): {N: (fused / floor, fused / cuBLAS, fused / unfused)}}: the
    tables' own ratio columns (computed from unrounded times); None where the
    line was not timed (printed 0.000). A later row of the same shape and N
    replaces an earlier one."""
    shapes, current = {}, None
    for path in paths:
        for line in open(path, encoding="utf-8"):
            m = re.match(r"### V=(\d+), d=(\d+) \(\w+\), median", line)
            if m:
                current = shapes.setdefault((int(m.group(1)), int(m.group(2))), {})
                continue
            if line.startswith("#"):
                current = None  # another table (the sweep, the predecessors)
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is not None and len(cells) == 9 and cells[0].isdigit():
                current[int(cells[0])] = tuple(x if x > 0 else None for x in (float(c) for c in cells[5:8]))
    return {k: v for k, v in shapes.items() if v}


def ranges(ns):
    """[1, 2, 3, 7] -> '1-3, 7'."""
    out, start = [], None
    for i, n in enumerate(ns):
        if start is None:
            start = n
        if i + 1 == len(ns) or ns[i + 1] != n + 1:
            out.append(f"{start}" if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def check(rows, limit):
    """The three goals for one shape: (cells, missed anywhere)."""
    def split(ratios, line):
        """The timed ratios, and the note naming the N where `line` was not timed."""
        untimed = sorted(n for n, x in ratios.items() if x is None)
        note = f"{line} not timed at N = {ranges(untimed)}" if untimed else ""
        return {n: x for n, x in ratios.items() if x is not None}, note

    def cell(text, note):
        return "; ".join(t for t in (text, note) if t) or "-"

    small, small_note = split({n: r[0] for n, r in rows.items() if n <= 64}, "floor")
    big, big_note = split({n: rows[n][1] for n in (128, 256) if n in rows}, "cuBLAS")
    unf, unf_note = split({n: r[2] for n, r in rows.items()}, "unfused")
    missed = bool(small_note or big_note or unf_note)
    cells = []
    text = ""
    if small:
        worst = max(small, key=small.get)
        over = sorted(n for n, x in small.items() if x > limit)
        missed |= bool(over)
        text = (f"{len(small)} N: max {small[worst]:.3f} (N = {worst})"
                + (f"; > {limit} at N = {ranges(over)}" if over else ""))
    cells.append(cell(text, small_note))
    text = ""
    if big:
        missed |= any(x > 1.0 for x in big.values())
        text = ", ".join(f"N = {n}: {x:.3f}" for n, x in sorted(big.items()))
    cells.append(cell(text, big_note))
    text = ""
    if unf:
        worst = max(unf, key=unf.get)
        over = sorted(n for n, x in unf.items() if x >= 1.0)
        missed |= bool(over)
        text = (f"{len(unf)} N: max {unf[worst]:.3f} (N = {worst})"
                + (f"; >= 1 at N = {ranges(over)}" if over else ""))
    cells.append(cell(text, unf_note))
    return cells, missed


def usage(why):
    print(f"goal_check.py: {why}\n{__doc__}", file=sys.stderr)
    return 2


def main(argv):
    limit, paths = 1.05, []
    it = iter(argv)
    for a in it:
        if a == "--limit":
            try:
                limit = float(next(it))
            except (StopIteration, ValueError):
                return usage("--limit needs a number, such as 1.05")
        else:
            paths.append(a)
    if not paths:
        return usage("no table given")
    try:
        shapes = parse(paths)
    except OSError as e:
        return usage(f"cannot read {e.filename}: {e.strerror}")
    if not shapes:
        print("goal_check.py: no table rows in " + ", ".join(paths), file=sys.stderr)
        return 2
    print(f"| shape | N <= 64: fused / floor (goal <= {limit}) | fused / cuBLAS (goal <= 1) | fused / unfused (goal < 1) |")
    print("|---|---|---|---|")
    any_missed = False
    for (v, d), rows in sorted(shapes.items()):
        cells, missed = check(rows, limit)
        any_missed |= missed
        print(f"| {v} x {d} | " + " | ".join(cells) + " |")
    return 1 if any_missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
