//! CPU references: attention in fp64, the split-KV partials the probe writes, and the combine
//! that merges them. The GPU outputs are checked against [`attention`]; the partial/combine pair
//! documents (and tests) the math the CUDA kernels implement.
//!
//! Layouts match the probe: `q` is `[batch][kv_head][q_per_kv][head_dim]` (query head
//! `kv_head * q_per_kv + j` shares KV head `kv_head`), `k` and `v` are
//! `[batch][token][kv_head][head_dim]`, outputs are `[batch][q_head][head_dim]`. Inputs are bf16
//! bit patterns.

use super::Shape;
use super::partition::split_range;

/// bf16 bits to f32 (exact).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// f32 to bf16 bits, rounding to nearest even (NaN stays NaN).
pub fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

/// The inputs of one problem, as bf16 bits.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub q: Vec<u16>,
    pub k: Vec<u16>,
    pub v: Vec<u16>,
}

impl Inputs {
    /// Fresh uniform random inputs: `q` in [-2, 2), `k` and `v` in [-1, 1). Never zeros: zeros
    /// hide unwritten outputs and wrong indexing. Filled on all cores (the long shape has 134 M
    /// values); deterministic for a given seed.
    pub fn random(shape: &Shape, seed: u64) -> Self {
        Inputs {
            q: random_bf16(shape.q_len(), 2.0, seed ^ 0x51),
            k: random_bf16(shape.kv_len(), 1.0, seed ^ 0x4b),
            v: random_bf16(shape.kv_len(), 1.0, seed ^ 0x56),
        }
    }
}

fn random_bf16(len: usize, amplitude: f32, seed: u64) -> Vec<u16> {
    let mut out = vec![0u16; len];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = len.div_ceil(threads).max(1 << 16);
    std::thread::scope(|scope| {
        for (i, part) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                // splitmix64: fast, good enough for test data, independent per chunk.
                let mut state = seed
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .wrapping_add(i as u64);
                for x in part.iter_mut() {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    z ^= z >> 31;
                    let unit = (z >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
                    *x = f32_to_bf16((unit * 2.0 - 1.0) * amplitude);
                }
            });
        }
    });
    out
}

/// Softmax scale FlashAttention uses by default: `1 / sqrt(head_dim)`.
pub fn softmax_scale(head_dim: usize) -> f64 {
    1.0 / (head_dim as f64).sqrt()
}

/// Attention of every query head over KV rows `rows`, in fp64: returns the normalised output
/// `[head_dim]` and the natural-log log-sum-exp of the scaled scores (`-inf` for no rows).
fn attend_rows(
    shape: &Shape,
    inputs: &Inputs,
    batch: usize,
    q_head: usize,
    rows: std::ops::Range<usize>,
) -> (Vec<f64>, f64) {
    let d = shape.head_dim;
    let kv_head = q_head / shape.q_per_kv;
    let scale = softmax_scale(d);
    let q_off = (batch * shape.q_heads() + q_head) * d;
    let q: Vec<f64> = inputs.q[q_off..q_off + d]
        .iter()
        .map(|&b| f64::from(bf16_to_f32(b)))
        .collect();
    let row_off = |t: usize| ((batch * shape.tokens + t) * shape.kv_heads + kv_head) * d;
    let scores: Vec<f64> = rows
        .clone()
        .map(|t| {
            let off = row_off(t);
            let dot: f64 = inputs.k[off..off + d]
                .iter()
                .zip(&q)
                .map(|(&kb, &qv)| f64::from(bf16_to_f32(kb)) * qv)
                .sum();
            dot * scale
        })
        .collect();
    let mut out = vec![0.0; d];
    if scores.is_empty() {
        return (out, f64::NEG_INFINITY);
    }
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for (t, s) in rows.zip(&scores) {
        let p = (s - max).exp();
        sum += p;
        let off = row_off(t);
        for (o, &vb) in out.iter_mut().zip(&inputs.v[off..off + d]) {
            *o += p * f64::from(bf16_to_f32(vb));
        }
    }
    for o in &mut out {
        *o /= sum;
    }
    (out, max + sum.ln())
}

/// Runs `f(batch, q_head)` for every query head on all cores and gathers the rows in order.
fn per_head<T: Send>(shape: &Shape, f: impl Fn(usize, usize) -> T + Sync) -> Vec<T> {
    let heads: Vec<(usize, usize)> = (0..shape.batch)
        .flat_map(|b| (0..shape.q_heads()).map(move |h| (b, h)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = heads.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = heads
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|&(b, h)| f(b, h)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Full attention in fp64: `[batch][q_head][head_dim]`.
pub fn attention(shape: &Shape, inputs: &Inputs) -> Vec<f64> {
    per_head(shape, |b, h| {
        attend_rows(shape, inputs, b, h, 0..shape.tokens).0
    })
    .into_iter()
    .flatten()
    .collect()
}

/// What the probe writes per split before the combine: outputs normalised within the split,
/// `o[split][batch][q_head][head_dim]`, and log-sum-exp `lse[split][batch][q_head]` (`-inf` for
/// an empty split).
#[derive(Debug, Clone)]
pub struct Partials {
    pub num_splits: usize,
    pub o: Vec<f64>,
    pub lse: Vec<f64>,
}

/// The split kernel's math in fp64: `num_splits` splits over a partition into
/// `partition_splits` (equal unless the ignored-splits bug is injected).
pub fn split_partials(
    shape: &Shape,
    inputs: &Inputs,
    num_splits: usize,
    partition_splits: usize,
) -> Partials {
    let mut o = Vec::new();
    let mut lse = Vec::new();
    for split in 0..num_splits {
        let rows = split_range(shape.tokens, shape.block_n(), partition_splits, split);
        for (out, l) in per_head(shape, |b, h| attend_rows(shape, inputs, b, h, rows.clone())) {
            o.extend(out);
            lse.push(l);
        }
    }
    Partials { num_splits, o, lse }
}

/// Merge split partials: weights `exp(lse_s - max_s lse_s)`, so empty splits (`-inf`) weigh
/// zero. Mirrors `splitkv_combine` in `kernels/splitkv_decode.cu`.
pub fn combine(shape: &Shape, partials: &Partials) -> Vec<f64> {
    let d = shape.head_dim;
    let rows = shape.batch * shape.q_heads();
    let mut out = vec![0.0; rows * d];
    for row in 0..rows {
        let lse = |s: usize| partials.lse[s * rows + row];
        let max = (0..partials.num_splits)
            .map(lse)
            .fold(f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            continue;
        }
        let mut total = 0.0;
        for s in 0..partials.num_splits {
            let w = (lse(s) - max).exp();
            if w == 0.0 {
                continue;
            }
            total += w;
            let src = &partials.o[(s * rows + row) * d..(s * rows + row + 1) * d];
            for (o, x) in out[row * d..(row + 1) * d].iter_mut().zip(src) {
                *o += w * x;
            }
        }
        for o in &mut out[row * d..(row + 1) * d] {
            *o /= total;
        }
    }
    out
}

/// `‖out − ref‖ / ‖ref‖`; NaN if any output is NaN or infinite (NaN never passes).
pub fn relative_error(out: &[f32], reference: &[f64]) -> f64 {
    if out.len() != reference.len() || out.iter().any(|x| !x.is_finite()) {
        return f64::NAN;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for (&o, &r) in out.iter().zip(reference) {
        num += (f64::from(o) - r).powi(2);
        den += r * r;
    }
    if den == 0.0 {
        return if num == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (num / den).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Shape {
        Shape {
            head_dim: 64,
            kv_heads: 2,
            q_per_kv: 3,
            batch: 2,
            tokens: 300,
        }
    }

    #[test]
    fn bf16_round_trip() {
        for x in [0.0f32, 1.0, -1.0, 0.5, 3.140625, -0.001953125, 65280.0] {
            assert_eq!(bf16_to_f32(f32_to_bf16(x)), x, "{x}");
        }
        // Round to nearest even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
        assert_eq!(bf16_to_f32(f32_to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }

    #[test]
    fn random_inputs_are_fresh_bounded_and_not_zero() {
        let s = small();
        let a = Inputs::random(&s, 1);
        let b = Inputs::random(&s, 2);
        assert_eq!(a.k.len(), s.kv_len());
        assert_ne!(a.k, b.k);
        assert!(a.k.iter().all(|&x| bf16_to_f32(x).abs() <= 1.0));
        assert!(a.q.iter().all(|&x| bf16_to_f32(x).abs() <= 2.0));
        let zeros = a.v.iter().filter(|&&x| bf16_to_f32(x) == 0.0).count();
        assert!(zeros < a.v.len() / 100);
    }

    #[test]
    fn one_row_attention_returns_that_row() {
        let s = Shape {
            tokens: 1,
            ..small()
        };
        let inputs = Inputs::random(&s, 7);
        let out = attention(&s, &inputs);
        // batch 1, q head 4 reads KV head 1 of token 0.
        let v_off = ((s.tokens) * s.kv_heads + 1) * s.head_dim;
        let o_off = (s.q_heads() + 4) * s.head_dim;
        for i in 0..s.head_dim {
            assert_eq!(out[o_off + i], f64::from(bf16_to_f32(inputs.v[v_off + i])));
        }
    }

    #[test]
    fn equal_keys_average_the_values() {
        let s = Shape {
            tokens: 4,
            batch: 1,
            ..small()
        };
        let mut inputs = Inputs::random(&s, 3);
        let first_key = inputs.k[..s.head_dim].to_vec();
        for t in 0..s.tokens {
            for kvh in 0..s.kv_heads {
                let off = (t * s.kv_heads + kvh) * s.head_dim;
                inputs.k[off..off + s.head_dim].copy_from_slice(&first_key);
            }
        }
        let out = attention(&s, &inputs);
        for (i, &o) in out.iter().enumerate().take(s.head_dim) {
            let mean: f64 = (0..s.tokens)
                .map(|t| f64::from(bf16_to_f32(inputs.v[t * s.kv_heads * s.head_dim + i])))
                .sum::<f64>()
                / s.tokens as f64;
            assert!((o - mean).abs() < 1e-12);
        }
    }

    #[test]
    fn combine_of_partials_equals_full_attention() {
        let s = small();
        let inputs = Inputs::random(&s, 11);
        let full = attention(&s, &inputs);
        for splits in [1, 2, 3, 5, 8] {
            let merged = combine(&s, &split_partials(&s, &inputs, splits, splits));
            let err = max_abs_diff(&merged, &full);
            assert!(err < 1e-12, "splits {splits}: {err}");
        }
    }

    #[test]
    fn empty_splits_weigh_zero() {
        let s = small();
        let inputs = Inputs::random(&s, 12);
        let full = attention(&s, &inputs);
        // The ignored-splits bug: 8 splits launched, partition of 1. Splits 1..8 are empty.
        let partials = split_partials(&s, &inputs, 8, 1);
        let rows = s.batch * s.q_heads();
        assert!(partials.lse[rows..].iter().all(|&l| l == f64::NEG_INFINITY));
        assert!(partials.o[rows * s.head_dim..].iter().all(|&x| x == 0.0));
        let merged = combine(&s, &partials);
        assert!(max_abs_diff(&merged, &full) < 1e-12);
    }

    #[test]
    fn relative_error_flags_nan_and_measures_distance() {
        assert!(relative_error(&[1.0, f32::NAN], &[1.0, 1.0]).is_nan());
        assert!(relative_error(&[1.0, f32::INFINITY], &[1.0, 1.0]).is_nan());
        assert_eq!(relative_error(&[3.0, 4.0], &[3.0, 4.0]), 0.0);
        let e = relative_error(&[3.0, 4.5], &[3.0, 4.0]);
        assert!((e - 0.1).abs() < 1e-12);
        assert!(relative_error(&[1.0], &[1.0, 2.0]).is_nan());
    }

    fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }
}
