//! The rule database: OSV-shaped YAML (`rules/*.yaml`), embedded in the binary and layered with
//! a user's `--rules DIR`; validated as it loads, linted on demand, and evaluated against pins.

pub(crate) mod embedded;
pub mod evaluate;
pub mod feed;
pub mod ledger;
pub mod lint;
pub mod load;
pub mod model;
pub mod oci;
pub mod osv;
pub mod signature;
pub mod vectors;
pub mod version;

pub use ledger::Ledger;
pub use load::{Database, LoadedRule, Origin, RulesError, load, load_in};
pub use model::Rule;
