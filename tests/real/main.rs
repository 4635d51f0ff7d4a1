//! Real data, opt-in: real vLLM releases and wheels, and the GPU verifier (skips visibly without a GPU).
//!
//! One test binary for the group (`cargo test --test real`); each module was once its own
//! binary. Shared helpers: `tests/common/` (the runner and the fixture builder).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../common/mod.rs"]
mod common;

mod real_releases;
mod real_wheels;
mod verify;
mod verify_deployed;
