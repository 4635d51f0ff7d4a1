//! The one place a test decides it cannot run. Every conditional test asks here first and
//! returns when the answer is `false`; nothing else in `tests/` prints a skip.
//!
//! - [`require`]: a prerequisite the suite is meant to have (a tool such as `skopeo`, `python3`,
//!   a schema file). With `PINPROBE_CI=1` (`.ci/run` sets it) a missing one **fails** the test:
//!   CI must never go green on a test that did not run.
//! - [`opt_in`] / [`opt_in_var`]: a test that downloads third-party artifacts or needs real clones, run only when
//!   its variable is set. Not set: skipped, even in CI. Set: every later failure (pip failing)
//!   is a failure, never a skip.
//! - [`hardware`] / [`no_hardware`]: a GPU (or its absence). CI has none, so missing hardware is a skip there too,
//!   unless `PINPROBE_CI_GPU=1` says this CI machine has one.
//!
//! A skip is never swallowed by the test harness (which captures only `print!`/`eprint!`): it is
//! written to `/dev/tty` when there is one, else straight to the process's stderr, and appended
//! to `target/tmp/pinprobe-skips.txt`; each test binary also prints its own skips once more when
//! it exits. `.ci/run` empties the file before `cargo test` and prints it after.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Mutex, Once};

/// Why a test might not run; decides what a missing prerequisite means in CI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The suite is meant to have it: a failure in CI.
    Prerequisite,
    /// Run only when asked for: a skip everywhere.
    OptIn,
    /// A GPU: a skip unless `PINPROBE_CI_GPU=1`.
    Hardware,
    /// No GPU (the no-GPU path): a skip wherever one is present.
    NoHardware,
}

/// `true` when running under CI's contract (`PINPROBE_CI=1`).
pub fn in_ci() -> bool {
    std::env::var("PINPROBE_CI").as_deref() == Ok("1")
}

/// Whether `tool` runs (`tool --version` starts; its exit status is not judged, since some
/// tools, such as `docker-registry`, exit non-zero on `--version`).
pub fn tool(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// A prerequisite the suite is meant to have: `present`, or a failure in CI and a visible skip
/// elsewhere. `what` names it and how to get it.
#[track_caller]
pub fn require(present: bool, what: &str) -> bool {
    decide(Need::Prerequisite, present, what)
}

/// An opt-in test: runs when `var` is `1`, else a visible skip (never a failure).
#[track_caller]
pub fn opt_in_var(var: &str, what: &str) -> bool {
    let set = std::env::var(var).as_deref() == Ok("1");
    decide(Need::OptIn, set, &format!("set {var}=1 to {what}"))
}

/// An opt-in test asked for some other way (`asked`, e.g. a path variable is set).
#[track_caller]
pub fn opt_in(asked: bool, what: &str) -> bool {
    decide(Need::OptIn, asked, what)
}

/// Hardware: `present`, or a visible skip (a failure when `PINPROBE_CI_GPU=1`).
#[track_caller]
pub fn hardware(present: bool, what: &str) -> bool {
    decide(Need::Hardware, present, what)
}

/// The absence of hardware (the no-GPU path): `absent`, or a visible skip (never a failure:
/// a GPU machine cannot exercise it).
#[track_caller]
pub fn no_hardware(absent: bool, what: &str) -> bool {
    decide(Need::NoHardware, absent, what)
}

#[track_caller]
fn decide(need: Need, present: bool, what: &str) -> bool {
    if present {
        return true;
    }
    let test = test_name();
    let fail = match need {
        Need::Prerequisite => in_ci(),
        Need::OptIn | Need::NoHardware => false,
        Need::Hardware => std::env::var("PINPROBE_CI_GPU").as_deref() == Ok("1"),
    };
    if fail {
        panic!(
            "{test}: missing prerequisite under PINPROBE_CI=1 (a skip would hide it): {what} (at {})",
            std::panic::Location::caller()
        );
    }
    let kind = match need {
        Need::Prerequisite => "missing prerequisite",
        Need::OptIn => "opt-in",
        Need::Hardware => "hardware",
        Need::NoHardware => "hardware present",
    };
    let line = format!("skipped {test} ({kind}): {what}");
    announce(&line);
    record(&line);
    false
}

/// The running test's name: libtest names each test's thread after it.
fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(str::to_string)
        .unwrap_or_else(|| "a test".to_string())
}

/// Past the harness's capture: the terminal if there is one, else the real stderr.
pub fn announce(line: &str) {
    match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        Ok(mut tty) => {
            let _ = writeln!(tty, "{line}");
        }
        Err(_) => {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
}

static SKIPS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// The run's skip file (`.ci/run` prints it at the end).
pub fn summary_file() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pinprobe-skips.txt")
}

fn record(line: &str) {
    let path = summary_file();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{line}");
    }
    if let Ok(mut skips) = SKIPS.lock() {
        skips.push(line.to_string());
    }
    AT_EXIT.call_once(|| {
        // SAFETY: `atexit` is given a plain `extern "C"` function that never unwinds.
        unsafe {
            atexit(summarise);
        }
    });
}

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

/// Runs once when the test binary exits, after the harness printed its result line.
extern "C" fn summarise() {
    let Ok(skips) = SKIPS.lock() else {
        return;
    };
    if skips.is_empty() {
        return;
    }
    let mut text = format!(
        "\n{} test(s) in this binary did not run (all of this run's skips: {}):\n",
        skips.len(),
        summary_file().display()
    );
    for line in skips.iter() {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    announce(text.trim_end());
}
