//! Wheel reports reused from the cache (`cas/report/`): a wheel file scanned before is not
//! scanned again while it is the same file, unchanged, under the same rules, pinprobe and
//! settings. A warm re-scan of a vLLM wheel then reads its last 64 KiB and one cache entry,
//! not its 5,800 local headers, RECORD and the members its signatures read.
//!
//! An entry is used only when all of these are what they were when it was written:
//! - the file's stamp ([`FileStamp`]: device, inode, size, modification and status-change
//!   times to the nanosecond), so the very file that was scanned, not written to or replaced
//!   since (any write moves the status-change time, which no unprivileged process can set);
//! - the SHA-256 of its end records (the last 64 KiB: the end of the central directory, the
//!   member count, the directory's place and size), a second check for a file system whose
//!   times cannot be trusted;
//! - the target as given, the rule database digest, pinprobe's version and the settings digest
//!   `--state` uses (fingerprint indexes, fetching and mirrors);
//! - when fetching is on, the fetch cache's generation ([`fetch::generation`]), which any fetch
//!   that goes to the network changes.
//!
//! Not written, so scanned again next time: a wheel changed within two seconds before the scan
//! (a later write in the same timestamp tick could leave its stamp as it was), or changed while
//! it was scanned; a report whose pin resolved a movable reference; a report with a fetch that
//! failed (`TargetReport::provisional`). Never used with `--repo` clones, whose content no key
//! covers. What the entry holds is the report as the scan made it, before `--expect`, ignore
//! files and `--vex`, which every run applies afresh. `scan --rescan` scans every wheel again.

use super::Options;
use crate::cache::{Key, Kind, Store};
use crate::model::TargetReport;
use crate::resolve::fetch;
use crate::rules::Database;
use crate::view::identity::FileStamp;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

static STORE: OnceLock<Store> = OnceLock::new();
static REUSED: AtomicU64 = AtomicU64::new(0);

/// How long before a scan a wheel must have last changed for its report to be kept.
const SETTLED: Duration = Duration::from_secs(2);

/// Keep and reuse wheel reports in `store` (the first store named in a process is kept).
pub fn use_store(store: Store) {
    let _ = STORE.set(store);
}

/// Wheel reports this process reused.
pub fn reused() -> u64 {
    REUSED.load(Ordering::Relaxed)
}

#[derive(Serialize, Deserialize)]
struct Entry {
    report: TargetReport,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    notices: Vec<String>,
}

/// The report of the wheel `target` at `path`: the cached one when it is valid (see the
/// module doc), else `scan`'s, kept when it can be reused.
pub(super) fn wheel<E>(
    target: &str,
    path: &Path,
    opts: &Options,
    db: &Database,
    scan: impl FnOnce() -> Result<TargetReport, E>,
) -> Result<TargetReport, E> {
    let started = SystemTime::now();
    match STORE.get() {
        Some(store) if usable(opts) => wheel_in(store, started, target, path, opts, db, scan),
        _ => scan(),
    }
}

/// Whether reports can be reused with these settings: not with `--repo` clones, whose content
/// no key covers (a clone fetched or checked out anew answers differently).
fn usable(opts: &Options) -> bool {
    opts.repos.is_empty()
}

/// [`wheel`] with `store`, for a scan that began at `started`.
fn wheel_in<E>(
    store: &Store,
    started: SystemTime,
    target: &str,
    path: &Path,
    opts: &Options,
    db: &Database,
    scan: impl FnOnce() -> Result<TargetReport, E>,
) -> Result<TargetReport, E> {
    let Some((key, stamp)) = key(target, path, opts, db) else {
        return scan();
    };
    if let Some(entry) = store
        .get(Kind::Report, &key)
        .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok())
    {
        REUSED.fetch_add(1, Ordering::Relaxed);
        let mut report = entry.report;
        report.notices = entry.notices;
        return Ok(report);
    }
    let report = scan()?;
    if !report.provisional
        && super::state::reusable(&report)
        && stamp.settled(started, SETTLED)
        && FileStamp::of(path) == Some(stamp)
    {
        let entry = Entry {
            report: report.clone(),
            notices: report.notices.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            // Best effort: a cache that cannot be written only costs the next run a scan.
            let _ = store.put(Kind::Report, &key, &bytes);
        }
    }
    Ok(report)
}

/// The entry's key and the stamp it was computed from; `None` when the file has no stamp or
/// no readable end records (the scan then says what is wrong with it).
fn key(target: &str, path: &Path, opts: &Options, db: &Database) -> Option<(Key, FileStamp)> {
    let stamp = FileStamp::of(path)?;
    let end = crate::view::end_records_digest(path).ok()?;
    let canonical = std::fs::canonicalize(path).ok()?;
    let generation = opts
        .fetch
        .as_ref()
        .map(|f| fetch::generation(&f.cache))
        .unwrap_or_default();
    let key = Key::of(&[
        b"wheel-report 1",
        env!("CARGO_PKG_VERSION").as_bytes(),
        target.as_bytes(),
        canonical.as_os_str().as_encoded_bytes(),
        &stamp.to_bytes(),
        &end,
        db.digest.as_bytes(),
        super::state::settings_digest(opts).as_bytes(),
        generation.as_bytes(),
    ]);
    // The end records were read after the stamp: the file must not have changed between.
    (FileStamp::of(path) == Some(stamp)).then_some((key, stamp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::io::Write;

    fn db() -> Database {
        crate::rules::load(None).expect("built-in rules").0
    }

    /// A small wheel (a real zip) at `dir/name`.
    fn write_wheel(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        let file = std::fs::File::create(&path).expect("create");
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("demo/__init__.py", options).expect("member");
        zip.write_all(body.as_bytes()).expect("write");
        zip.finish().expect("finish");
        path
    }

    /// Run [`wheel_in`] as if the scan began `after` the file was written, with a scan that
    /// counts its calls and returns `report`.
    fn run(
        store: &Store,
        path: &Path,
        opts: &Options,
        after: Duration,
        report: &TargetReport,
        scans: &Cell<u32>,
    ) -> TargetReport {
        let target = path.display().to_string();
        let started = SystemTime::now() + after;
        wheel_in(store, started, &target, path, opts, &db(), || {
            scans.set(scans.get() + 1);
            Ok::<_, std::convert::Infallible>(report.clone())
        })
        .expect("infallible")
    }

    fn report(path: &Path, warning: &str) -> TargetReport {
        let mut report =
            TargetReport::new(path.display().to_string(), crate::model::TargetKind::Wheel);
        report.warnings.push(warning.to_string());
        report.notices.push("a notice".to_string());
        report
    }

    #[test]
    fn a_settled_wheel_is_kept_and_served_with_its_notices() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(&dir.path().join("cache"));
        let path = write_wheel(dir.path(), "demo-1.0-py3-none-any.whl", "x = 1\n");
        let opts = Options::default();
        let scans = Cell::new(0);
        let first = report(&path, "first");
        // Just written: scanned, not kept.
        run(&store, &path, &opts, Duration::ZERO, &first, &scans);
        run(&store, &path, &opts, Duration::ZERO, &first, &scans);
        assert_eq!(scans.get(), 2);
        // Settled: kept once, then served as it was, notices too.
        let later = Duration::from_secs(3);
        run(&store, &path, &opts, later, &first, &scans);
        let served = run(&store, &path, &opts, later, &report(&path, "other"), &scans);
        assert_eq!(scans.get(), 3);
        assert_eq!(served.warnings, ["first"]);
        assert_eq!(served.notices, ["a notice"]);
    }

    #[test]
    fn provisional_movable_and_clone_backed_reports_are_never_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::new(&dir.path().join("cache"));
        let path = write_wheel(dir.path(), "demo-1.0-py3-none-any.whl", "x = 1\n");
        let later = Duration::from_secs(3);
        let scans = Cell::new(0);
        // A fetch failed: scanned every time.
        let mut provisional = report(&path, "fetch failed");
        provisional.provisional = true;
        for _ in 0..2 {
            run(
                &store,
                &path,
                &Options::default(),
                later,
                &provisional,
                &scans,
            );
        }
        assert_eq!(scans.get(), 2);
        // A pin resolved from a tag through a clone: scanned every time.
        let mut movable = report(&path, "tag");
        let mut pin = crate::model::Pin::shipped(
            "cutlass",
            "f",
            Some("v4.2.1".into()),
            None,
            crate::model::FoundBy::Cmake,
        );
        pin.commit = Some("a".repeat(40).into());
        movable.components.push(pin);
        for _ in 0..2 {
            run(&store, &path, &Options::default(), later, &movable, &scans);
        }
        assert_eq!(scans.get(), 4);
        // With --repo clones (whose content no key covers), no store is used at all.
        assert!(usable(&Options::default()));
        assert!(!usable(&Options {
            repos: vec![("flash-attention".into(), dir.path().to_path_buf())],
            ..Options::default()
        }));
        assert_eq!(
            store
                .info()
                .kinds
                .iter()
                .find(|k| k.0 == "report")
                .map(|k| k.1),
            Some(0)
        );
    }

    #[test]
    fn the_key_follows_the_file_the_target_the_settings_and_the_fetched_history() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_wheel(dir.path(), "demo-1.0-py3-none-any.whl", "x = 1\n");
        let target = path.display().to_string();
        let db = db();
        let opts = Options::default();
        let (base, stamp) = key(&target, &path, &opts, &db).expect("a key");
        assert_eq!(
            key(&target, &path, &opts, &db).map(|k| k.0),
            Some(base),
            "stable"
        );
        assert_eq!(FileStamp::of(&path), Some(stamp));
        // Another spelling of the target.
        let spelled = format!("{}/./{}", dir.path().display(), "demo-1.0-py3-none-any.whl");
        assert_ne!(key(&spelled, &path, &opts, &db).map(|k| k.0), Some(base));
        // Other settings: offline fetching into a cache.
        let cache = dir.path().join("cache");
        let fetching = Options {
            fetch: Some(fetch::Settings {
                cache: cache.clone(),
                offline: true,
                mirrors: Vec::new(),
                timeout: Duration::from_secs(1),
                ca_file: None,
                token: None,
                progress: false,
            }),
            ..Options::default()
        };
        let offline = key(&target, &path, &fetching, &db).expect("a key").0;
        assert_ne!(offline, base);
        // A fetch that went to the network since.
        std::fs::create_dir_all(cache.join("repos")).expect("mkdir");
        std::fs::write(cache.join("repos/.generation"), "1 2").expect("write");
        assert_ne!(
            key(&target, &path, &fetching, &db).expect("a key").0,
            offline
        );
        // The same name, other members: other end records (and another stamp).
        let other = write_wheel(dir.path(), "demo-1.0-py3-none-any.whl", "x = 2\n");
        assert_ne!(key(&target, &other, &opts, &db).map(|k| k.0), Some(base));
        // Not a zip: no key, so the scan says what is wrong with it.
        std::fs::write(&path, b"not a zip").expect("write");
        assert!(key(&target, &path, &opts, &db).is_none());
    }
}
