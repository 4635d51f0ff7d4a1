//! The command line end to end on small trees built here: every verb, report format, exit code, bad input and policy.
//!
//! One test binary for the group (`cargo test --test cli`); each module was once its own
//! binary. Shared helpers: `tests/common/` (the runner and the fixture builder).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../common/mod.rs"]
mod common;

mod action;
mod architecture;
mod bad_inputs;
mod book;
mod cli;
mod corruption;
mod diff;
mod docs;
mod exchange;
mod freshness;
mod fuzz_seeds;
mod headline;
mod judge;
mod layouts;
mod osv_semantics;
mod output_hygiene;
mod outputs;
mod patches;
mod pin_forms;
mod policy;
mod reports;
mod roots;
mod rules;
mod sarif;
mod scan;
mod schema;
mod trust_settings;
mod verbose;
