//! The rule database: OSV-shaped YAML, loaded, linted and evaluated.

pub mod signature;
