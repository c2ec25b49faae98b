// gumbel_race.cuh: the noise of a token (docs/rng.md section 4), one source
// for host and device. Sixteen consecutive tokens form a group (v >> 4). The
// group's noise is drawn as an exponential race: a Gumbel variate is -log(e)
// for e ~ Exp(1), and for 16 independent e's
//   - the smallest, a, is Exp(16): a = -log(u_G) / 16 from the group's word;
//   - which of the 16 it is (the group's lead) is uniform and independent of
//     a: the group word's low 4 bits;
//   - every other e is a + Exp(1) (memorylessness): a - log(u_v) from the
//     token's own Philox word, the same word as in fs_noise_block.
// So the 16 noise values -log(e) are independent standard Gumbels, and every
// token's noise is at most the lead's, -log(a). The kernels test that bound
// (one word per 16 tokens) before they draw any token's word.
#pragma once
#include "philox.cuh"
#include "gumbel.cuh"

#define FS_GROUP_TOKENS 16
// Counter word 0 of the group words' Philox calls carries this bit; the
// tokens' calls (v >> 2 < 2^29) never do.
#define FS_GROUP_CTR_BIT 0x80000000u
// log(16) in fp32 (the lead's noise is a standard Gumbel shifted by it).
#define FS_LOG_GROUP 2.77258872f

// Counter word 0 of the Philox call that holds the group word of token v:
// one call per 64 tokens, its word (v >> 4) & 3 for v's group.
FS_HD fs_u32 fs_group_ctr(fs_u64 v) { return FS_GROUP_CTR_BIT | (fs_u32)(v >> 6); }
FS_HD int fs_group_slot(fs_u64 v) { return (int)((v >> 4) & 3u); }

// The group word of token v (row seed and offset, sample s).
FS_HD fs_u32 fs_group_word(fs_u64 seed, fs_u64 offset, fs_u64 v, fs_u32 sample) {
  fs_philox_ctr c;
  c.v[0] = fs_group_ctr(v);
  c.v[1] = sample;
  c.v[2] = (fs_u32)offset;
  c.v[3] = (fs_u32)(offset >> 32);
  const fs_philox_ctr r = fs_philox4x32_10(c, (fs_u32)seed, (fs_u32)(seed >> 32));
  const int i = fs_group_slot(v);
  return i == 0 ? r.v[0] : i == 1 ? r.v[1] : i == 2 ? r.v[2] : r.v[3];  // no indexed register array
}

// Position (v & 15) of the token whose noise is the group's largest.
FS_HD int fs_group_lead(fs_u32 group_word) { return (int)(group_word & 15u); }

// -log(u) of a word (u as in fs_uniform_from_bits): an Exp(1) variate, in (0, 16.64].
FS_HD float fs_exp1_from_bits(fs_u32 word) { return -fs_log(fs_uniform_from_bits(word)); }

// The group's smallest exponential, a = -log(u_G) / 16 (the scaling is exact).
FS_HD float fs_group_race_min(fs_u32 group_word) { return FS_FMUL(fs_exp1_from_bits(group_word), 0.0625f); }

// The noise of the token at position pos (v & 15) of a group with word
// group_word, the token's own word being `word` (unused for the lead).
FS_HD float fs_token_gumbel(fs_u32 group_word, fs_u32 word, int pos) {
  const float a = fs_group_race_min(group_word);
  const float e = pos == fs_group_lead(group_word) ? a : FS_FADD(a, fs_exp1_from_bits(word));
  return -fs_log(e);
}

// Whether a group (largest logit lmax, lead noise g_lead = fs_token_gumbel
// of its lead) may hold a value whose exact score FS_FMA(l, inv_tau, G)
// reaches `bound` (docs/rng.md section 6, upper bound 1c). Every token's
// exact noise is at most the lead's (fs_log is monotone: CPU test
// GumbelRace.LogIsMonotoneWhereTheNoiseUsesIt) and fp32 rounding is
// monotone, so for inv_tau > 0 every score of the group is at most
// FS_FMA(lmax, inv_tau, g_lead): below the bound, none can win or tie. NaN
// anywhere: may win.
// The register epilogue calls it with the lead's approximate noise
// (fs_group_lead_approx, gumbel_bound.cuh) and the threshold
// fs_prune_threshold(B) in place of B (upper bound 1d): that FMA is then an
// approximate score of the one above, and the threshold form's proof puts
// the exact one below B whenever it is below the threshold (CPU test
// GumbelRace.GroupMayWinOnTheApproximateLeadAgainstTheThreshold).
FS_HD bool fs_group_may_win(float lmax, float inv_tau, float g_lead, float bound) {
  return !(FS_FMA(lmax, inv_tau, g_lead) < bound);
}

// The noise g(seed, offset, v, s) of the contract.
FS_HD float fs_gumbel_noise(fs_u64 seed, fs_u64 offset, fs_u64 v, fs_u32 sample) {
  const fs_philox_ctr c = fs_noise_block(seed, offset, v, sample);
  return fs_token_gumbel(fs_group_word(seed, offset, v, sample), c.v[v & 3], (int)(v & 15));
}

// Bounds of the noise over all words: the largest is the lead's at the
// largest group word, -log(E_min / 16); the smallest a non-lead token's at the
// largest e. CPU tests check both (Gumbel race tests).
#define FS_NOISE_MAX 19.4082f
#define FS_NOISE_MIN -2.8722f
