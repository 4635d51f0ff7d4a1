//! The deterministic coverage check: every split reports the KV rows it processed (first row and
//! count, counted inside the kernel's loop); their union must be the whole range, and the counts
//! must match a partition. Matching the `num_splits` partition means the splits were honoured;
//! matching the one-split partition (split 0 everything, the rest nothing) means they were
//! ignored. No timing is involved, so this alone tells the two apart.

use super::Shape;
use super::partition::split_range;
use serde::Serialize;

/// What a run's coverage shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Coverage {
    /// Each split processed exactly its share of the `num_splits` partition.
    Honoured,
    /// Split 0 processed everything, every other split nothing (the FA4 SM90 bug).
    Ignored,
    /// Both partitions coincide (one split, or one KV tile), so honoured and ignored look alike.
    Either,
    /// Rows missing, processed twice, or counts matching neither partition.
    Broken,
}

impl Coverage {
    /// Whether this observation agrees with what was expected.
    pub fn consistent_with(self, expected: Coverage) -> bool {
        self == expected || (self == Coverage::Either && expected != Coverage::Broken)
    }
}

/// The kernel's per-split report: first row processed (`-1` if none) and the number of rows.
pub type Reported = (i32, i32);

/// Classify the coverage reported by one launch of `num_splits` splits. `reported` is laid out
/// `[split][batch][kv_head]`, as the kernel writes it.
pub fn classify(shape: &Shape, num_splits: usize, reported: &[Reported]) -> Coverage {
    let groups = shape.batch * shape.kv_heads;
    if reported.len() != num_splits * groups {
        return Coverage::Broken;
    }
    let matches = |partition_splits: usize| {
        (0..groups).all(|g| {
            (0..num_splits).all(|s| {
                let want = split_range(shape.tokens, shape.block_n(), partition_splits, s);
                let (first, count) = reported[s * groups + g];
                if want.is_empty() {
                    count == 0
                } else {
                    i64::from(first) == want.start as i64 && i64::from(count) == want.len() as i64
                }
            })
        })
    };
    if !(0..groups).all(|g| union_is_whole(shape.tokens, num_splits, groups, g, reported)) {
        return Coverage::Broken;
    }
    match (matches(num_splits), matches(1)) {
        (true, true) => Coverage::Either,
        (true, false) => Coverage::Honoured,
        (false, true) => Coverage::Ignored,
        (false, false) => Coverage::Broken,
    }
}

/// The reported ranges of group `g` tile `[0, tokens)` exactly: no gap, no overlap.
fn union_is_whole(
    tokens: usize,
    num_splits: usize,
    groups: usize,
    g: usize,
    reported: &[Reported],
) -> bool {
    let mut ranges: Vec<(i64, i64)> = (0..num_splits)
        .map(|s| reported[s * groups + g])
        .filter(|&(_, count)| count != 0)
        .map(|(first, count)| (i64::from(first), i64::from(first) + i64::from(count)))
        .collect();
    if ranges.iter().any(|&(a, b)| a < 0 || b <= a) {
        return false;
    }
    ranges.sort_unstable();
    let mut next = 0i64;
    for (a, b) in ranges {
        if a != next {
            return false;
        }
        next = b;
    }
    next == tokens as i64
}

/// One word for a whole sweep: `broken` if any run was, else what every run agrees on.
pub fn summarise(runs: &[Coverage]) -> Option<Coverage> {
    if runs.is_empty() {
        return None;
    }
    let all = |c: Coverage| runs.iter().all(|&r| r == c || r == Coverage::Either);
    Some(if runs.contains(&Coverage::Broken) {
        Coverage::Broken
    } else if runs.iter().all(|&r| r == Coverage::Either) {
        Coverage::Either
    } else if all(Coverage::Honoured) {
        Coverage::Honoured
    } else if all(Coverage::Ignored) {
        Coverage::Ignored
    } else {
        Coverage::Broken
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a correct kernel reports for `num_splits` splits over `partition_splits`.
    fn report(shape: &Shape, num_splits: usize, partition_splits: usize) -> Vec<Reported> {
        let groups = shape.batch * shape.kv_heads;
        (0..num_splits)
            .flat_map(|s| {
                let r = split_range(shape.tokens, shape.block_n(), partition_splits, s);
                let entry = if r.is_empty() {
                    (-1, 0)
                } else {
                    (r.start as i32, r.len() as i32)
                };
                std::iter::repeat_n(entry, groups)
            })
            .collect()
    }

    #[test]
    fn honoured_and_ignored_are_told_apart() {
        let shape = Shape::REPORTED;
        for splits in [2, 4, 8, 56, 64] {
            assert_eq!(
                classify(&shape, splits, &report(&shape, splits, splits)),
                Coverage::Honoured
            );
            assert_eq!(
                classify(&shape, splits, &report(&shape, splits, 1)),
                Coverage::Ignored
            );
        }
        assert_eq!(classify(&shape, 1, &report(&shape, 1, 1)), Coverage::Either);
    }

    #[test]
    fn gaps_overlaps_and_wrong_counts_are_broken() {
        let shape = Shape::LONG;
        let good = report(&shape, 4, 4);
        let groups = shape.batch * shape.kv_heads;

        let mut gap = good.clone();
        gap[groups].1 -= 1; // split 1, group 0 stops one row short
        assert_eq!(classify(&shape, 4, &gap), Coverage::Broken);

        let mut overlap = good.clone();
        overlap[groups].0 -= 128;
        overlap[groups].1 += 128;
        assert_eq!(classify(&shape, 4, &overlap), Coverage::Broken);

        // Whole range covered, but cut where neither partition cuts.
        let mut shifted = good.clone();
        for g in 0..groups {
            shifted[g].1 += 128;
            shifted[groups + g].0 += 128;
            shifted[groups + g].1 -= 128;
        }
        assert_eq!(classify(&shape, 4, &shifted), Coverage::Broken);

        // Poison left in place: nothing was written.
        let poisoned = vec![(-1, -1); good.len()];
        assert_eq!(classify(&shape, 4, &poisoned), Coverage::Broken);
        assert_eq!(classify(&shape, 4, &good[1..]), Coverage::Broken);
    }

    #[test]
    fn consistency_and_summary() {
        use Coverage::*;
        assert!(Either.consistent_with(Honoured));
        assert!(Either.consistent_with(Ignored));
        assert!(!Ignored.consistent_with(Honoured));
        assert_eq!(summarise(&[Either, Honoured, Honoured]), Some(Honoured));
        assert_eq!(summarise(&[Either, Ignored]), Some(Ignored));
        assert_eq!(summarise(&[Honoured, Ignored]), Some(Broken));
        assert_eq!(summarise(&[Honoured, Broken]), Some(Broken));
        assert_eq!(summarise(&[Either]), Some(Either));
        assert_eq!(summarise(&[]), None);
    }
}
