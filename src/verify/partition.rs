//! Split-KV partition math, exactly as FlashAttention splits the KV range, and FlashAttention's
//! `num_splits` heuristic.
//!
//! The KV range of `seqlen` rows is cut into tiles of `block_n` rows (`n_blocks` tiles, the last
//! one possibly short). With `num_splits` splits, each split takes `ceil(n_blocks / num_splits)`
//! consecutive tiles; trailing splits may get nothing. The CUDA kernel in `kernels/` computes the
//! same ranges; the coverage check compares what each split reports against [`split_range`].

use std::ops::Range;

/// Number of `block_n`-row tiles covering `seqlen` rows.
pub fn n_blocks(seqlen: usize, block_n: usize) -> usize {
    seqlen.div_ceil(block_n.max(1))
}

/// Tiles each split takes: `ceil(n_blocks / num_splits)`.
pub fn blocks_per_split(n_blocks: usize, num_splits: usize) -> usize {
    n_blocks.div_ceil(num_splits.max(1))
}

/// The KV rows split `split` processes when the range is partitioned into `partition_splits`
/// splits. Empty (`start == end`) for splits past the last tile. With `partition_splits == 1`
/// (the ignored-splits bug) split 0 takes everything and every other split is empty.
pub fn split_range(
    seqlen: usize,
    block_n: usize,
    partition_splits: usize,
    split: usize,
) -> Range<usize> {
    let n = n_blocks(seqlen, block_n);
    let per = blocks_per_split(n, partition_splits);
    let first = split.saturating_mul(per).min(n);
    let last = first.saturating_add(per).min(n);
    let start = (first * block_n).min(seqlen);
    let end = (last * block_n).min(seqlen);
    start..end
}

/// Splits that get at least one row.
pub fn non_empty_splits(seqlen: usize, block_n: usize, num_splits: usize) -> usize {
    (0..num_splits)
        .filter(|&s| !split_range(seqlen, block_n, num_splits, s).is_empty())
        .count()
}

/// FlashAttention's `num_splits_heuristic`, reimplemented from its description.
///
/// `total_mblocks` is `batch * num_kv_heads * m_blocks` (the CTAs one split would launch),
/// `num_sms` the multiprocessor count, `n_blocks` the KV tiles and `max_splits` the cap
/// (FlashAttention passes `min(128, num_sms, n_blocks)`).
///
/// If one split already fills 80% of the SMs, use one. Otherwise, for every split count whose
/// tiles-per-split differs from the previous count's (others launch idle CTAs for nothing),
/// compute the wave efficiency `n_waves / ceil(n_waves)` with
/// `n_waves = total_mblocks * s / num_sms`, and take the smallest count within 85% of the best.
pub fn fa_num_splits_heuristic(
    total_mblocks: usize,
    num_sms: usize,
    n_blocks: usize,
    max_splits: usize,
) -> usize {
    if num_sms == 0 || n_blocks == 0 || max_splits <= 1 {
        return 1;
    }
    if total_mblocks as f64 >= 0.8 * num_sms as f64 {
        return 1;
    }
    let max_splits = max_splits.min(num_sms).min(n_blocks);
    let eligible = |s: usize| s == 1 || n_blocks.div_ceil(s) != n_blocks.div_ceil(s - 1);
    let efficiency = |s: usize| {
        let n_waves = (total_mblocks * s) as f64 / num_sms as f64;
        n_waves / n_waves.ceil()
    };
    let candidates: Vec<(usize, f64)> = (1..=max_splits)
        .filter(|&s| eligible(s))
        .map(|s| (s, efficiency(s)))
        .collect();
    let best = candidates.iter().map(|&(_, e)| e).fold(0.0_f64, f64::max);
    candidates
        .iter()
        .find(|&&(_, e)| e >= 0.85 * best)
        .map_or(1, |&(s, _)| s)
}

/// The cap FlashAttention applies before running the heuristic: at most 128 splits, at most one
/// split per SM and per tile.
pub fn fa_max_splits(num_sms: usize, n_blocks: usize) -> usize {
    128.min(num_sms).min(n_blocks).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_tile_the_sequence_without_gaps() {
        for &(seqlen, block_n) in &[(7168, 64), (32768, 128), (1000, 64), (1, 64), (63, 64)] {
            for splits in [1, 2, 3, 4, 7, 8, 16, 56, 64, 200] {
                let mut next = 0;
                for s in 0..splits {
                    let r = split_range(seqlen, block_n, splits, s);
                    assert!(r.start <= r.end);
                    if !r.is_empty() {
                        assert_eq!(r.start, next, "gap before split {s}");
                        assert_eq!(r.start % block_n, 0, "split starts on a tile");
                        next = r.end;
                    }
                }
                assert_eq!(next, seqlen, "seqlen {seqlen} splits {splits}");
            }
        }
    }

    #[test]
    fn reported_shape_partition() {
        // 7,168 tokens in 64-row tiles: 112 tiles; 64 splits take 2 tiles each, so only 56 work.
        assert_eq!(n_blocks(7168, 64), 112);
        assert_eq!(blocks_per_split(112, 64), 2);
        assert_eq!(split_range(7168, 64, 64, 0), 0..128);
        assert_eq!(split_range(7168, 64, 64, 55), 7040..7168);
        assert!(split_range(7168, 64, 64, 56).is_empty());
        assert_eq!(non_empty_splits(7168, 64, 64), 56);
    }

    #[test]
    fn ignored_splits_give_everything_to_split_zero() {
        assert_eq!(split_range(7168, 64, 1, 0), 0..7168);
        for s in 1..64 {
            assert!(split_range(7168, 64, 1, s).is_empty());
        }
    }

    #[test]
    fn short_last_tile() {
        assert_eq!(split_range(100, 64, 2, 0), 0..64);
        assert_eq!(split_range(100, 64, 2, 1), 64..100);
        assert!(split_range(100, 64, 4, 2).is_empty());
    }

    #[test]
    fn heuristic_one_split_when_grid_is_full() {
        assert_eq!(fa_num_splits_heuristic(132, 132, 112, 112), 1);
        assert_eq!(fa_num_splits_heuristic(106, 132, 112, 112), 1); // 106 >= 0.8 * 132
    }

    #[test]
    fn heuristic_reported_shape() {
        // 2 KV heads on 132 SMs, 112 tiles. Eligible counts change ceil(112/s); s = 56 gives
        // 112 CTAs (0.85 of a wave), the best efficiency any eligible count reaches.
        let n = n_blocks(7168, 64);
        let s = fa_num_splits_heuristic(2, 132, n, fa_max_splits(132, n));
        assert_eq!(s, 56);
    }

    #[test]
    fn heuristic_long_shape() {
        // 8 KV heads, 256 tiles: s = 14 fills 112 of 132 SMs (0.848), within 85% of the best.
        let n = n_blocks(32768, 128);
        let s = fa_num_splits_heuristic(8, 132, n, fa_max_splits(132, n));
        assert_eq!(s, 14);
    }

    #[test]
    fn heuristic_degenerate_inputs() {
        assert_eq!(fa_num_splits_heuristic(1, 0, 10, 10), 1);
        assert_eq!(fa_num_splits_heuristic(1, 132, 0, 10), 1);
        assert_eq!(fa_num_splits_heuristic(1, 132, 1, 128), 1);
    }
}
