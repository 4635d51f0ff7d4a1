//! GPU verifier: the bundled split-KV decode probe, swept over `num_splits`, and a statistical
//! verdict on whether latency scales.
//!
//! (Stub: lands with the verifier work.)
