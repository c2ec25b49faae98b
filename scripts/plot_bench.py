#!/usr/bin/env python3
"""plot_bench.py: draw µs against batch N (log-log) for the four lines of each
shape in a fusedsample_bench summary table (--fs_table output) as one SVG.
Standard library only.  Usage: plot_bench.py TABLE.md OUT.svg [CAPTION]
CAPTION (for example "NVIDIA H200, 2026-11-22, scripts/gpu_session.sh all
--fs_reps=20") is printed above the panels."""
import math
import re
import sys

COLUMNS = [("fused", 1, "#d62728"), ("floor", 2, "#7f7f7f"), ("cuBLAS GEMM", 3, "#1f77b4"),
           ("unfused (GEMM+sample)", 4, "#2ca02c")]


def parse(path):
    shapes, current = [], None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"### V=(\d+), d=(\d+)", line)
        if m:
            current = {"title": f"V={m.group(1)}, d={m.group(2)} (bf16)", "rows": []}
            shapes.append(current)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if current is not None and len(cells) == 9 and cells[0].isdigit():
            current["rows"].append([int(cells[0])] + [float(c) for c in cells[1:5]])
    return [s for s in shapes if s["rows"]]


def panel(shape, x0, y0, w, h):
    rows = shape["rows"]
    ns = [r[0] for r in rows]
    ys = [v for r in rows for v in r[1:5] if v > 0]
    lx0, lx1 = math.log2(min(ns)), math.log2(max(ns))
    ly0, ly1 = math.log10(min(ys) * 0.9), math.log10(max(ys) * 1.1)
    X = lambda n: x0 + (math.log2(n) - lx0) / max(lx1 - lx0, 1e-9) * w
    Y = lambda v: y0 + h - (math.log10(v) - ly0) / (ly1 - ly0) * h
    out = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#000"/>',
           f'<text x="{x0 + w / 2}" y="{y0 - 10}" text-anchor="middle" font-size="14">{shape["title"]}</text>']
    for n in ns:
        out.append(f'<text x="{X(n)}" y="{y0 + h + 16}" text-anchor="middle" font-size="11">{n}</text>')
    v = 10 ** math.floor(ly0)
    while v <= 10 ** ly1:
        for m in (1, 2, 5):
            t = v * m
            if 10 ** ly0 <= t <= 10 ** ly1:
                out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{Y(t)}" y2="{Y(t)}" stroke="#ddd"/>')
                out.append(f'<text x="{x0 - 6}" y="{Y(t) + 4}" text-anchor="end" font-size="11">{t:g}</text>')
        v *= 10
    for name, col, color in COLUMNS:
        pts = [(X(r[0]), Y(r[col])) for r in rows if r[col] > 0]
        out.append('<polyline fill="none" stroke-width="2" stroke="%s" points="%s"/>' %
                   (color, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in pts]
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 34}" text-anchor="middle" font-size="12">batch rows N</text>')
    out.append(f'<text x="{x0 - 48}" y="{y0 + h / 2}" font-size="12" transform="rotate(-90 {x0 - 48} {y0 + h / 2})" '
               f'text-anchor="middle">median µs (log)</text>')
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    shapes = parse(sys.argv[1])
    if not shapes:
        sys.exit(f"no summary tables found in {sys.argv[1]}")
    w, h, pad = 420, 300, 80
    width = pad + len(shapes) * (w + pad)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 2 * pad + 30}" '
           f'font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>']
    if len(sys.argv) == 4:
        caption = sys.argv[3].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        svg.append(f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="13">{caption}</text>')
    for i, s in enumerate(shapes):
        svg += panel(s, pad + i * (w + pad), pad, w, h)
    for i, (name, _, color) in enumerate(COLUMNS):
        x = pad + i * 170
        svg.append(f'<rect x="{x}" y="{h + pad + 48}" width="14" height="4" fill="{color}"/>')
        svg.append(f'<text x="{x + 20}" y="{h + pad + 54}" font-size="12">{name}</text>')
    svg.append("</svg>")
    open(sys.argv[2], "w", encoding="utf-8").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
