//! Resumable fleet runs (`scan --state FILE`): every finished target is recorded with its
//! identity (the target as given), its content digest ([`crate::view::identity`]), the rule
//! database digest, the pinprobe version and a digest of the settings that shape a target's
//! report; a later run with the same file reuses the recorded report of a target whose five
//! are unchanged instead of scanning it again, and scans the rest.
//!
//! The file is a log, one line a target, appended (and synced) as each target finishes, so a
//! run killed at any point loses at most the targets in flight. Each line is `SHA256 JSON`,
//! the hash over the JSON text: a line is trusted only whole. The first line names the format.
//! - A last line cut short (a write a crash interrupted: no newline at its end) is dropped with
//!   a warning and its target scanned again.
//! - Anything else that is not such a file (another format, a damaged line before the last) is
//!   an error, not a guess: the run stops before scanning (exit 2) and says to delete the file.
//!
//! One run at a time: the file is locked for the whole run (a second run on it is an error).
//! What is recorded is the report as the scan made it, before `--expect`, the ignore files
//! and `--vex`, which every run applies afresh. Not recorded, so scanned every time: a target
//! whose content cannot be digested, one that changed while it was scanned, and one whose
//! verdict rests on a movable reference (a tag or branch pin resolved to a commit through a
//! clone or a fetch: the same content can resolve differently tomorrow).

use super::Options;
use crate::model::{FoundBy, TargetReport, is_full_sha};
use crate::view::identity::{self, Identity};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first line of a state file.
const HEADER: &str = "pinprobe-state 1";

/// The largest state file read (1 GiB).
const MAX_STATE: u64 = 1 << 30;

/// An open, locked state file and what it recorded.
#[derive(Debug)]
pub struct State {
    path: PathBuf,
    file: Mutex<File>,
    recorded: HashMap<String, Entry>,
    /// The rule database digest, pinprobe version and settings digest of this run.
    run: RunKey,
    reused: AtomicUsize,
    scanned: AtomicUsize,
    /// Warnings from opening (a dropped torn line), for the run's notices.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RunKey {
    rules_digest: String,
    pinprobe: String,
    settings: String,
}

/// One recorded target.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    target: String,
    digest: String,
    #[serde(flatten)]
    run: RunKey,
    report: TargetReport,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    notices: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("--state {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "--state {path}: in use by another pinprobe run (it is locked); wait for it, or name another file"
    )]
    Locked { path: PathBuf },
    #[error("--state {path}: line {line}: {message}; delete the file to start the sweep over")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl State {
    /// Open (or create) and lock the state file at `path` for a run with `opts` and the rule
    /// database `rules_digest`.
    pub fn open(path: &Path, opts: &Options, rules_digest: &str) -> Result<State, StateError> {
        let io = |source| StateError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        if !file.metadata().map_err(io)?.is_file() {
            return Err(io(std::io::Error::other("not a regular file")));
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StateError::Locked {
                    path: path.to_path_buf(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let bytes = crate::input::read_file(path, MAX_STATE).map_err(io)?;
        let (recorded, good_len, warnings) = parse(path, &bytes)?;
        if good_len < bytes.len() as u64 {
            // Cut the torn line off, so the next entry starts on a line of its own.
            file.set_len(good_len).map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        if good_len == 0 {
            file.write_all(format!("{HEADER}\n").as_bytes())
                .map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        Ok(State {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            recorded,
            run: RunKey {
                rules_digest: rules_digest.to_string(),
                pinprobe: env!("CARGO_PKG_VERSION").to_string(),
                settings: settings_digest(opts),
            },
            reused: AtomicUsize::new(0),
            scanned: AtomicUsize::new(0),
            warnings,
        })
    }

    /// The report of `target`: the recorded one when its content, the rules, pinprobe and the
    /// settings are those recorded, else `scan`'s, recorded when it can be reused later.
    pub fn scan<E>(
        &self,
        target: &str,
        opts: &Options,
        scan: impl FnOnce() -> Result<TargetReport, E>,
    ) -> Result<TargetReport, E>
    where
        E: From<StateError>,
    {
        let images = opts.image();
        let rev = opts.rev.as_deref();
        let before = identity::of(target, rev, &images);
        if let (Some(id), Some(entry)) = (&before, self.recorded.get(target))
            && entry.digest == id.digest
            && entry.run == self.run
        {
            self.reused.fetch_add(1, Ordering::SeqCst);
            let mut report = entry.report.clone();
            report.notices = entry.notices.clone();
            return Ok(report);
        }
        let report = scan()?;
        self.scanned.fetch_add(1, Ordering::SeqCst);
        if let Some(id) = before
            && reusable(&report)
            && id.unchanged(target, rev, &images)
        {
            self.record(target, &id, &report)?;
        }
        Ok(report)
    }

    /// (reused, scanned) so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.reused.load(Ordering::SeqCst),
            self.scanned.load(Ordering::SeqCst),
        )
    }

    fn record(&self, target: &str, id: &Identity, report: &TargetReport) -> Result<(), StateError> {
        let entry = Entry {
            target: target.to_string(),
            digest: id.digest.clone(),
            run: self.run.clone(),
            report: report.clone(),
            notices: report.notices.clone(),
        };
        let json = serde_json::to_string(&entry).map_err(|e| StateError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        let line = format!("{} {json}\n", hex::encode(Sha256::digest(json.as_bytes())));
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // One write of the whole line, then synced: a crash leaves it whole or cut short.
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(|source| StateError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// The recorded entries (the last line of a target wins), the length of the whole lines, and
/// warnings.
type Parsed = (HashMap<String, Entry>, u64, Vec<String>);

fn parse(path: &Path, bytes: &[u8]) -> Result<Parsed, StateError> {
    let corrupt = |line: usize, message: &str| StateError::Corrupt {
        path: path.to_path_buf(),
        line,
        message: message.to_string(),
    };
    let mut recorded = HashMap::new();
    let mut warnings = Vec::new();
    let mut good = 0u64;
    let mut rest = bytes;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            // The last line, without its newline: a write cut short.
            warnings.push(format!(
                "--state {}: line {number} is incomplete (a run was stopped while writing it): dropped, its target is scanned again",
                path.display()
            ));
            break;
        };
        let line = std::str::from_utf8(&rest[..end]).map_err(|_| corrupt(number, "not UTF-8"))?;
        rest = &rest[end + 1..];
        if number == 1 {
            if line != HEADER {
                return Err(corrupt(1, "not a pinprobe state file"));
            }
        } else {
            let (sum, json) = line
                .split_once(' ')
                .ok_or_else(|| corrupt(number, "not `SHA256 JSON`"))?;
            if hex::encode(Sha256::digest(json.as_bytes())) != sum {
                return Err(corrupt(number, "its checksum does not match (damaged)"));
            }
            let entry: Entry = serde_json::from_str(json)
                .map_err(|e| corrupt(number, &format!("not a recorded target ({e})")))?;
            recorded.insert(entry.target.clone(), entry);
        }
        good += end as u64 + 1;
    }
    Ok((recorded, good, warnings))
}

/// Whether a report can be reused for the same content: no pin resolved a movable reference
/// (a tag or branch) to a commit, which a clone or a fetch may answer differently later.
pub(super) fn reusable(report: &TargetReport) -> bool {
    let movable = |reference: Option<&str>, commit: Option<&str>| {
        commit.is_some() && !reference.is_some_and(is_full_sha)
    };
    report
        .components
        .iter()
        .filter(|p| p.found_by == FoundBy::Cmake)
        .all(|p| {
            !movable(p.reference.as_deref(), p.commit.as_deref())
                && p.possible
                    .iter()
                    .all(|v| !movable(v.reference.as_deref(), v.commit.as_deref()))
        })
}

/// A digest of the settings that shape a target's report: `--rev`, the `--repo` clones, the
/// fingerprint indexes, the image platform and layer policy, and whether and how pinned history
/// is fetched. (Registry TLS, timeouts, jobs and progress change how, not what.)
pub(super) fn settings_digest(opts: &Options) -> String {
    let mut h = Sha256::new();
    let mut put = |s: &str| {
        h.update(s.len().to_le_bytes());
        h.update(s.as_bytes());
    };
    put(&format!("rev {:?}", opts.rev));
    for (name, path) in &opts.repos {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        put(&format!("repo {name}={}", path.display()));
    }
    // An index is named by its checksum (of the binary body, or of the whole legacy file):
    // no need to hash its commits one by one.
    for index in &opts.indexes {
        put(&format!(
            "index {} {} {:?} {}",
            index.component,
            index.source,
            index.format,
            hex::encode(index.checksum)
        ));
    }
    let image = opts.image();
    put(&format!(
        "image {} fast={}",
        image.platform, image.fast_layers
    ));
    match &opts.fetch {
        None => put("fetch none"),
        Some(f) => {
            put(&format!("fetch offline={}", f.offline));
            for (from, to) in &f.mirrors {
                put(&format!("mirror {from}={to}"));
            }
        }
    }
    format!("sha256:{}", hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_line(target: &str) -> String {
        let entry = Entry {
            target: target.to_string(),
            digest: "sha256:00".into(),
            run: RunKey {
                rules_digest: "r".into(),
                pinprobe: "p".into(),
                settings: "s".into(),
            },
            report: TargetReport::new(target.to_string(), crate::model::TargetKind::Wheel),
            notices: Vec::new(),
        };
        let json = serde_json::to_string(&entry).expect("serialises");
        format!("{} {json}\n", hex::encode(Sha256::digest(json.as_bytes())))
    }

    #[test]
    fn whole_lines_are_read_a_torn_last_line_is_dropped_anything_else_refused() {
        let path = Path::new("state.log");
        let good = format!("{HEADER}\n{}{}", entry_line("a"), entry_line("b"));
        let (recorded, len, warnings) = parse(path, good.as_bytes()).expect("parses");
        assert_eq!(recorded.len(), 2);
        assert_eq!(len, good.len() as u64);
        assert!(warnings.is_empty());
        // A write cut short: the whole lines before it stand.
        let c = entry_line("c");
        let torn = format!("{good}{}", &c[..c.len() / 2]);
        let (recorded, len, warnings) = parse(path, torn.as_bytes()).expect("parses");
        assert_eq!((recorded.len(), len), (2, good.len() as u64));
        assert!(warnings[0].contains("line 4 is incomplete"), "{warnings:?}");
        // Damage before the last line, another format, a flipped byte: errors naming the line.
        let flipped = good.replacen("\"a\"", "\"x\"", 1);
        let err = parse(path, flipped.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("line 2: its checksum does not match"), "{err}");
        let err = parse(path, b"{\"targets\": []}\n").unwrap_err().to_string();
        assert!(err.contains("line 1: not a pinprobe state file"), "{err}");
        let err = parse(path, format!("{HEADER}\ngarbage\n").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    /// An index is part of the settings by its checksum: the same index, the same digest; an
    /// index with any other content (another checksum), another digest.
    #[test]
    fn the_settings_name_each_index_by_its_checksum() {
        use crate::pin::fingerprint::{Format, Index};
        let index = |checksum: u8| Index {
            component: "flash-attention".into(),
            source: "/src/fa".into(),
            hash: gix::hash::Kind::Sha1,
            names: Vec::new(),
            states: Vec::new(),
            commits: Vec::new(),
            format: Format::Binary,
            checksum: [checksum; 32],
        };
        let with = |indexes: Vec<Index>| {
            settings_digest(&Options {
                indexes,
                ..Default::default()
            })
        };
        let none = with(Vec::new());
        assert_eq!(with(vec![index(1)]), with(vec![index(1)]));
        assert_ne!(with(vec![index(1)]), none);
        assert_ne!(with(vec![index(1)]), with(vec![index(2)]));
        let legacy = Index {
            format: Format::LegacyJson,
            ..index(1)
        };
        assert_ne!(with(vec![legacy]), with(vec![index(1)]));
    }

    #[test]
    fn a_pin_resolved_from_a_tag_is_not_reusable() {
        let mut report = TargetReport::new("t".into(), crate::model::TargetKind::SourceTree);
        let pin =
            crate::model::Pin::shipped("cutlass", "f", Some("v4.2.1".into()), None, FoundBy::Cmake);
        report.components.push(pin.clone());
        assert!(
            reusable(&report),
            "an unresolved tag: decided by content alone"
        );
        report.components[0].commit = Some("a".repeat(40).into());
        assert!(!reusable(&report), "a tag a clone resolved");
        report.components[0].reference = Some("a".repeat(40));
        assert!(reusable(&report), "a full SHA");
    }
}
