//! Artifacts built here (wheels, installed environments, ELF libraries, fleets) and the network paths (git over HTTP, TLS) on loopback servers.
//!
//! One test binary for the group (`cargo test --test artifacts`); each module was once its own
//! binary. Shared helpers: `tests/common/` (the runner and the fixture builder).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../common/mod.rs"]
mod common;
// `tests/image/registry.rs` (included by rules_pull) names `crate::require`.
use common::require;

mod artifact;
mod artifact_bug_keeping;
mod artifact_pip;
mod elf;
mod fetch;
mod fleet;
mod ledger_wheel;
mod rules_pull;
mod security;
