#!/usr/bin/env python3
"""group_size_mc.py: how many 16-token halves pass the register epilogue's
one-FMA group test (fma(lmax, 1/tau, G_lead) < B rules a group out;
templates/gumbel_race.cuh) per row when G_lead is the lead noise of the
contract's 16-token groups, and when it would be that of 32-token groups (a
warp's 16 rows tested against the lead of 32). Monte Carlo over rows of V
logits drawn N(0, sd^2) (the benchmark's data has sd = 1, `fusedsample demo`'s
sd = 3), standard Gumbel noise, tau = 1, the bound B = the row's final best
score minus `delta` (0: a perfect bound; the kernels' bound lags it early in
a launch). Each passing half is a take-up round's work. Standard library only.
  group_size_mc.py [ROWS] [SEED]      (defaults 8, 1)"""
import math
import random
import sys


def gumbel(rnd):
    return -math.log(-math.log(rnd.random() or 5e-324))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    vocab = 151936 // 32 * 32
    print("| logit sd | bound | passing halves per row, 16-token groups | 32-token groups | ratio |")
    print("|---:|---|---:|---:|---:|")
    for sd in (1.0, 3.0):
        for delta in (0.0, 0.5):
            p16 = p32 = 0
            for _ in range(rows):
                logits = [rnd.gauss(0.0, sd) for _ in range(vocab)]
                noise = [gumbel(rnd) for _ in range(vocab)]
                bound = max(l + g for l, g in zip(logits, noise)) - delta
                for h in range(0, vocab, 32):
                    lm = (max(logits[h:h + 16]), max(logits[h + 16:h + 32]))
                    gl = (max(noise[h:h + 16]), max(noise[h + 16:h + 32]))
                    g32 = max(gl)
                    p16 += (lm[0] + gl[0] >= bound) + (lm[1] + gl[1] >= bound)
                    p32 += (lm[0] + g32 >= bound) + (lm[1] + g32 >= bound)
            print(f"| {sd:g} | best - {delta:g} | {p16 / rows:.2f} | {p32 / rows:.2f} | {p32 / max(p16, 1):.2f} |")


if __name__ == "__main__":
    main()
