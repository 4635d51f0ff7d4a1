//! pinprobe's CMake evaluation judged by real CMake: generated programs, recorded answers, and (opt-in) real vLLM sdists.
//!
//! One test binary for the group (`cargo test --test cmake`); each module was once its own
//! binary. Shared helpers: `tests/common/` (the runner and the fixture builder).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../common/mod.rs"]
mod common;

mod cmake_adversarial;
mod cmake_corpus;
mod cmake_differential;
mod cmake_fatal;
mod cmake_git_reads;
mod cmake_locations;
mod cmake_outside;
mod cmake_partial;
mod cmake_real_sdists;
