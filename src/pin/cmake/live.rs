//! Real CMake for the unit tests that judge pinprobe's models of its commands against it
//! (`string(JSON)`, the regex commands): whether it runs, and the log of one configure run.
//!
//! A log is kept in the temporary directory under the digest of CMake's version and the lists
//! file, so a test run again (mutation testing runs these tests hundreds of times) reads the
//! same CMake's answers to the same file instead of configuring again. Any change to either
//! is a new key.

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::process::Command;

/// CMake's `--version` output, or `None` (and a visible skip line naming `what` is not judged)
/// when it does not run. With `PINPROBE_REQUIRE_CMAKE` set, a missing CMake fails the test.
pub(super) fn version(what: &str) -> Option<String> {
    let version = Command::new("cmake")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if version.is_none() {
        assert!(
            std::env::var_os("PINPROBE_REQUIRE_CMAKE").is_none(),
            "PINPROBE_REQUIRE_CMAKE is set but `cmake --version` does not run"
        );
        eprintln!("skipped: cmake not found (pip install cmake); {what} not judged");
    }
    version
}

/// The standard error of `cmake -S <dir> -B <dir>/build` on a directory holding only
/// `lists` as its `CMakeLists.txt` (where `message()` and errors go).
pub(super) fn configure(version: &str, lists: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(version.as_bytes());
    digest.update([0]);
    digest.update(lists.as_bytes());
    let kept: PathBuf = std::env::temp_dir()
        .join("pinprobe-live-cmake")
        .join(hex::encode(digest.finalize()));
    if let Ok(log) = std::fs::read_to_string(&kept) {
        return log;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("CMakeLists.txt"), lists).expect("write");
    let run = Command::new("cmake")
        .arg("-S")
        .arg(dir.path())
        .arg("-B")
        .arg(dir.path().join("build"))
        .output()
        .expect("cmake runs");
    let log = String::from_utf8_lossy(&run.stderr).into_owned();
    // Written whole then renamed: a test running beside this one reads all of it or none.
    if let Some(parent) = kept.parent()
        && std::fs::create_dir_all(parent).is_ok()
    {
        let part = parent.join(format!("{}.{}", std::process::id(), rand::random::<u64>()));
        if std::fs::write(&part, &log).is_ok() {
            let _ = std::fs::rename(&part, &kept);
        }
    }
    log
}
