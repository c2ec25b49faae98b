#!/usr/bin/env python3
"""group_test_sim.py: how many noise groups of one row pass the register
epilogue's group test, against two tighter tests a changed noise contract
would allow (CPU simulation, numpy; BENCHMARKS.md "Session 54").

A group is 16 consecutive tokens (docs/rng.md section 4). Its exponentials
e_v are i.i.d. Exp(1); the lead (the smallest, a) has the largest noise
-log(a). A row's winner is argmax l_v + g_v (tau = 1). With a bound B on the
row's best score, the tests are:
  old:    max_v l_v - log(a) >= B              (fs_group_may_win today)
  ideal:  l_lead - log(a) >= B  or  max_v l_v - log(a2) >= B
          (a2 the second-smallest exponential: the lead's own score, and a
          bound on every other token's noise)
  strat:  as ideal, but a2 only known as a + m_lb(k), k the stratum (one of
          32 equal-probability strata of a2 - a ~ Exp(15), 5 bits of the
          group word).
B is the row's final best minus d (d = 0: a block's later tiles, whose bound
is near final; larger d: earlier tiles). Logits are standard normal, as the
benchmark's data (bench/bench_data.cpp: logits of std 1).

  pip install numpy && python3 scripts/group_test_sim.py [ROWS] [VOCAB]
"""
import sys

import numpy as np


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    vocab = int(sys.argv[2]) if len(sys.argv) > 2 else 151936
    groups = vocab // 16
    rng = np.random.default_rng(1)
    gaps = (0, 1, 2, 3)
    counts = {d: np.zeros(4) for d in gaps}  # old, ideal, strat, true
    idx = np.arange(groups)
    for _ in range(rows):
        logit = rng.standard_normal((groups, 16))
        expo = rng.exponential(1.0, (groups, 16))
        score = logit - np.log(expo)
        best = score.max()
        lead = expo.argmin(1)
        a = expo[idx, lead]
        a2 = np.sort(expo, 1)[:, 1]
        lmax = logit.max(1)
        l_lead = logit[idx, lead]
        stratum = np.floor(32 * (1 - np.exp(-15 * (a2 - a))))
        m_lb = -np.log(1 - stratum / 32) / 15
        for d in gaps:
            b = best - d
            lead_ok = l_lead - np.log(a) >= b
            counts[d] += [
                np.sum(lmax - np.log(a) >= b),
                np.sum(lead_ok | (lmax - np.log(a2) >= b)),
                np.sum(lead_ok | (lmax - np.log(a + m_lb) >= b)),
                np.sum(score.max(1) >= b),
            ]
    print(f"passing groups per row (V = {vocab}, {rows} rows, logits N(0, 1), tau = 1)")
    print("| bound | old test | ideal | 5-bit strata | groups that reach B | old / strata |")
    print("|---|---:|---:|---:|---:|---:|")
    for d in gaps:
        o, i, s, t = counts[d] / rows
        print(f"| final best - {d} | {o:.2f} | {i:.2f} | {s:.2f} | {t:.2f} | {o / s:.2f} |")


if __name__ == "__main__":
    main()
