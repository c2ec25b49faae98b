#!/usr/bin/env python3
"""supergroup_mc.py: what a coarser noise hierarchy would save. Today every
16-token group of a row has a group word and lead noise, made for every
(row, group) of every tile (the k-loop hook), and one test,
fma(lmax, 1/tau, G_lead) < B, per (row, group) (templates/gumbel_race.cuh).
A race one level up (K tokens, K/16 groups: the smallest of K Exp(1) first,
then each group's smallest above it) would bound the K tokens' noise with one
word, so the hook and the tests would run per (row, K tokens), and only a
passing K-block would make its K/16 group words and leads (the rare path).

Monte Carlo over rows of V logits drawn N(0, sd^2) (the benchmark's data has
sd = 1, `fusedsample demo`'s sd = 3), standard Gumbel noise (either contract
gives independent standard Gumbels; a block's lead noise is the largest of
its tokens' noise), tau = 1, the bound B = the row's final best score minus
`delta` (0: a perfect bound; the kernels' bound lags it early in a launch).
Per row it counts the passing 16-token groups (the take-ups of either
design), the passing K-blocks, and the group evaluations either design makes:
V/16 (today) against V/K + passing K-blocks x K/16. Standard library only.
  supergroup_mc.py [ROWS] [SEED]      (defaults 8, 1)"""
import math
import random
import sys

from group_size_mc import gumbel  # the same standard Gumbel draw (scripts/ is on the path of a script run from it)

BLOCKS = (64, 128, 256)

def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    vocab = 151936 // max(BLOCKS) * max(BLOCKS)
    head = " | ".join(f"K = {k}: passing blocks, group evaluations" for k in BLOCKS)
    print(f"V = {vocab}, {rows} rows per line, per row:\n")
    print(f"| logit sd | bound | passing groups | group evaluations today | {head} |")
    print("|---:|---|---:|---:|" + "---:|" * len(BLOCKS))
    for sd in (1.0, 3.0):
        for delta in (0.0, 0.5):
            passing16 = 0
            passing = {k: 0 for k in BLOCKS}
            for _ in range(rows):
                best = -math.inf
                lmax16, gmax16 = [], []
                for _group in range(vocab // 16):
                    lm = gm = -math.inf
                    for _v in range(16):
                        l = rnd.gauss(0.0, sd)
                        n = gumbel(rnd)
                        best = max(best, l + n)
                        lm, gm = max(lm, l), max(gm, n)
                    lmax16.append(lm)
                    gmax16.append(gm)
                bound = best - delta
                passing16 += sum(lm + gm >= bound for lm, gm in zip(lmax16, gmax16))
                for k in BLOCKS:
                    per = k // 16
                    for b in range(0, len(lmax16), per):
                        if max(lmax16[b:b + per]) + max(gmax16[b:b + per]) >= bound:
                            passing[k] += 1
            cells = " | ".join(f"{passing[k] / rows:.1f}, {vocab / k + passing[k] / rows * k / 16:.0f}" for k in BLOCKS)
            print(f"| {sd:g} | best - {delta:g} | {passing16 / rows:.2f} | {vocab / 16:.0f} | {cells} |")


if __name__ == "__main__":
    main()
