//! Shared by the fuzz targets: the embedded rule database and small helpers.
#![allow(dead_code)]

use pinprobe::rules::Database;
use pinprobe::view::SourceFiles;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The embedded rule database, loaded once per process.
pub fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| pinprobe::rules::load(None).expect("embedded rules load").0)
}

/// Scan an opened artifact view (wheel, environment, image filesystem) with the embedded rules.
pub fn scan_artifact(view: &dyn pinprobe::view::View) {
    let _ = pinprobe::scan::scan_artifact(
        view,
        &pinprobe::scan::Options::default(),
        db(),
        &pinprobe::resolve::Clones::default(),
    );
}

/// The FA4 rule (its signature and its source test vectors).
pub fn fa4_rule() -> &'static pinprobe::rules::Rule {
    &db()
        .get("PINPROBE-2026-0001")
        .expect("the FA4 rule is embedded")
        .rule
}

/// The FA4 rule's buggy-shape vector files (path -> text).
pub fn buggy_files() -> BTreeMap<String, String> {
    fa4_rule()
        .database_specific
        .tests
        .iter()
        .find(|t| t.name == "buggy-shape-affected")
        .expect("buggy vector")
        .files
        .clone()
}

/// Files in memory for a signature.
pub struct Files(pub BTreeMap<String, String>);

impl SourceFiles for Files {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.0.get(path).cloned())
    }
}

/// Split `data` at NUL bytes into at most `n` parts (the last keeps the rest).
pub fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.splitn(n, |b| *b == 0).collect()
}
