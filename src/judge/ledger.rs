//! The release ledger in a scan: which vLLM release a target is (its `vllm/_version.py`), and
//! what the ledger (`rules/ledger.yaml`) knows of that release's pins. A source tree's version
//! counts as version-range evidence only when its pin is the release's own; a wheel, environment
//! or image, which records no pin, gets the release's pin from the ledger. Verdicts recorded in
//! the ledger become evidence, with their provenance.

use crate::model::{Evidence, EvidenceKind, Status};
use crate::pin::shipped::env;
use crate::rules::Database;
use crate::rules::ledger::{DEFAULT_CONFIGURATION, LedgerPatch};
use crate::view::{TargetError, View};

/// What a target says of its own vLLM release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseId {
    pub version: String,
    /// vLLM's commit (`__commit_id__`, abbreviated), when the file records one.
    pub commit: Option<String>,
    /// The file it was read from.
    pub file: String,
}

/// Read `vllm/_version.py` at `path` in `view`; `None` when absent or without a version.
pub fn release_of(view: &dyn View, path: &str) -> Result<Option<ReleaseId>, TargetError> {
    // A version file behind a link that cannot be resolved names no release (no ledger pin).
    let bytes = match view.read(path) {
        Err(TargetError::Unreadable { .. }) => None,
        other => other?,
    };
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(version_of(&text).map(|version| ReleaseId {
        version,
        commit: env::vllm_commit(&text),
        file: path.to_string(),
    }))
}

/// `__version__` from a setuptools-scm version file (`__version__ = version = '0.30.0'`).
pub fn version_of(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("__version__")?;
        let value = rest.rsplit('=').next()?.trim();
        let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let inner = value.strip_prefix(quote)?.strip_suffix(quote)?;
        (!inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_')))
        .then(|| inner.to_string())
    })
}

/// What the ledger says of one component's pin in a target.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The release's pin of the component (a full SHA), when the target is that release.
    pub commit: Option<String>,
    /// The repository that pin declares (`GIT_REPOSITORY`), where its history is fetched from.
    pub repo: Option<String>,
    /// `(ecosystem, name, version)` for version ranges: set only when the pin is the release's.
    pub packages: Vec<(String, String, String)>,
    /// Verdicts recorded for this pin, by rule id.
    pub recorded: Vec<(crate::model::RuleId, Evidence)>,
    /// The patch files the release applies to this pin (`None`: the ledger does not say), for
    /// [`recorded_for_tree`].
    pub release_patches: Option<Vec<LedgerPatch>>,
    /// Why the ledger could not be used, for the evidence text (empty when it was).
    pub why_not: Option<String>,
}

/// Resolve `component`'s pin through the ledger. `pin` is the commit the target itself declares
/// (a source tree), `None` for an artifact that records none.
pub fn resolve(
    db: &Database,
    release: Option<&ReleaseId>,
    component: &str,
    pin: Option<&str>,
) -> Resolution {
    let Some(id) = release else {
        return Resolution {
            why_not: Some("the target has no vllm/_version.py naming its vLLM release".into()),
            ..Resolution::default()
        };
    };
    let not = |why: String| Resolution {
        why_not: Some(why),
        ..Resolution::default()
    };
    let Some(entry) = db.ledger().release(&id.version) else {
        return not(format!(
            "vLLM {} ({}) is not in the release ledger",
            id.version, id.file
        ));
    };
    if let Some(commit) = &id.commit
        && entry.is_vllm_commit(commit) == Some(false)
    {
        return not(format!(
            "{} says vLLM {} at commit {commit}, but release {} was built from {}: another build of that version",
            id.file,
            id.version,
            entry.version,
            entry.vllm_commit.as_deref().unwrap_or("?")
        ));
    }
    let pins: Vec<_> = entry.pins_of(component, DEFAULT_CONFIGURATION).collect();
    let [ledger_pin] = pins.as_slice() else {
        return not(format!(
            "the release ledger has {} {component} pins for vLLM {}",
            pins.len(),
            entry.version
        ));
    };
    let Some(ledger_commit) = ledger_pin.commit.clone() else {
        return not(format!(
            "vLLM {}'s {component} pin is `{}`, not a commit SHA",
            entry.version, ledger_pin.reference
        ));
    };
    if let Some(own) = pin
        && !own.eq_ignore_ascii_case(&ledger_commit)
    {
        return not(format!(
            "the {component} pin {} is not vLLM {}'s ({}, rules/ledger.yaml): the tree was changed after the release, so its version says nothing of this pin",
            short(own),
            entry.version,
            short(&ledger_commit)
        ));
    }
    let recorded = ledger_pin
        .verdicts
        .iter()
        .map(|v| {
            let status = match v.status.as_str() {
                "affected" => Status::Affected,
                "not_affected" => Status::NotAffected,
                _ => Status::Unknown,
            };
            let commits: Vec<&str> = v.commits.iter().map(|c| short(c)).collect();
            let detail = if v.from_wheel() {
                format!(
                    "release ledger: vLLM {}'s {component} pin {} was decided {} by the signatures on the release's wheel {} (sha256 {}), read by {}, checked by {}",
                    entry.version,
                    short(&ledger_commit),
                    v.status,
                    v.wheel.as_deref().unwrap_or("?"),
                    short(v.wheel_sha256.as_deref().unwrap_or("?")),
                    v.pinprobe.as_deref().unwrap_or("?"),
                    v.checked_by.as_deref().unwrap_or("nothing else")
                )
            } else {
                format!(
                    "release ledger: vLLM {}'s {component} pin {} was decided {} by {} in a clone of {} (commits {})",
                    entry.version,
                    short(&ledger_commit),
                    v.status,
                    v.decided_by,
                    v.clone,
                    commits.join(", ")
                )
            };
            (
                v.rule.clone(),
                Evidence {
                    kind: EvidenceKind::Recorded,
                    status,
                    detail,
                    file: Some(ledger_pin.file.clone()),
                    line: Some(ledger_pin.line),
                },
            )
        })
        .collect();
    Resolution {
        commit: Some(ledger_commit),
        repo: Some(ledger_pin.repo.clone()).filter(|r| !r.is_empty()),
        packages: vec![("PyPI".into(), "vllm".into(), entry.version.clone())],
        recorded,
        release_patches: ledger_pin.patches.clone(),
        why_not: None,
    }
}

/// A source tree's use of the recorded verdicts: they describe the release's build, so they
/// apply only when the tree declares byte-identical patch files (`tree_patches`: each declared
/// patch's path and its bytes, `None` when the tree declares it but does not hold it) as well
/// as the release's pin (which [`resolve`] checked). Otherwise they are dropped and the reason
/// returned, for a warning. Patches that differ from the ones the ledger records also drop the
/// version range: the tree then builds something the release did not.
pub fn recorded_for_tree(
    resolution: &mut Resolution,
    component: &str,
    tree_patches: &[(String, Option<Vec<u8>>)],
) -> Option<String> {
    use sha2::{Digest as _, Sha256};
    let why = match resolution.release_patches.clone() {
        None if resolution.recorded.is_empty() => None,
        None => Some(format!(
            "the release ledger does not record the patches of this {component} pin, so the tree cannot be shown to build what the release built"
        )),
        Some(release) => {
            let mut ours: Vec<(String, Option<String>)> = tree_patches
                .iter()
                .map(|(path, bytes)| {
                    (
                        path.clone(),
                        bytes.as_ref().map(|b| hex::encode(Sha256::digest(b))),
                    )
                })
                .collect();
            ours.sort();
            let mut theirs: Vec<(String, Option<String>)> = release
                .iter()
                .map(|p| (p.file.clone(), Some(p.sha256.to_ascii_lowercase())))
                .collect();
            theirs.sort();
            (ours != theirs).then(|| {
                let list = |v: &[(String, Option<String>)]| {
                    if v.is_empty() {
                        "none".to_string()
                    } else {
                        v.iter()
                            .map(|(p, h)| match h {
                                Some(h) => format!("{p} ({})", short(h)),
                                None => format!("{p} (not in the tree)"),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                };
                format!(
                    "the tree's {component} patches ({}) are not the release's ({}, rules/ledger.yaml): the release's recorded verdicts and version describe its build, not this tree's",
                    list(&ours),
                    list(&theirs)
                )
            })
            .inspect(|_| resolution.packages.clear())
        }
    };
    if why.is_some() {
        // The recorded verdicts and the release's version range stand on the same claim (this
        // tree builds what the release built): dropping one while keeping the other could let
        // the version say `not_affected` where the recorded verdict said `affected`.
        resolution.recorded.clear();
        resolution.packages.clear();
    }
    why
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Database {
        crate::rules::load(None).expect("built-in rules").0
    }

    fn id(version: &str, commit: Option<&str>) -> ReleaseId {
        ReleaseId {
            version: version.into(),
            commit: commit.map(String::from),
            file: "vllm/_version.py".into(),
        }
    }

    #[test]
    fn version_file_forms() {
        let text = "__version__ = version = '0.30.0'\n__commit_id__ = commit_id = 'gced6857af'\n";
        assert_eq!(version_of(text).as_deref(), Some("0.30.0"));
        assert_eq!(
            version_of("__version__ = \"0.33.0\"\n").as_deref(),
            Some("0.33.0")
        );
        assert_eq!(version_of("__version__ = get_version()\n"), None);
        assert_eq!(version_of("__version__ = ''\n"), None);
    }

    #[test]
    fn an_artifact_gets_the_release_pin_and_a_tree_only_its_own() {
        let db = db();
        let r = resolve(&db, Some(&id("0.30.0", None)), "flash-attention", None);
        assert_eq!(
            r.commit.as_deref(),
            Some("506341a143fcabd4bb79052a7605ada727d6b3f5")
        );
        assert_eq!(r.packages.len(), 1);
        // The tree pins what the release pinned: the version counts.
        let r = resolve(
            &db,
            Some(&id("0.30.0", Some("ced6857af"))),
            "flash-attention",
            Some("506341a143fcabd4bb79052a7605ada727d6b3f5"),
        );
        assert!(r.why_not.is_none(), "{:?}", r.why_not);
        // A 0.33.0 tree whose pin was moved back to the buggy commit: its version says nothing.
        let r = resolve(
            &db,
            Some(&id("0.33.0", None)),
            "flash-attention",
            Some("506341a143fcabd4bb79052a7605ada727d6b3f5"),
        );
        assert!(r.packages.is_empty() && r.commit.is_none());
        assert!(
            r.why_not
                .unwrap_or_default()
                .contains("changed after the release")
        );
    }

    #[test]
    fn another_build_of_a_version_or_an_unknown_version_is_not_resolved() {
        let db = db();
        let r = resolve(
            &db,
            Some(&id("0.30.0", Some("1234567"))),
            "flash-attention",
            None,
        );
        assert!(r.commit.is_none());
        assert!(r.why_not.unwrap_or_default().contains("another build"));
        let r = resolve(&db, Some(&id("9.9.9", None)), "flash-attention", None);
        assert!(
            r.why_not
                .unwrap_or_default()
                .contains("not in the release ledger")
        );
        let r = resolve(&db, None, "flash-attention", None);
        assert!(r.commit.is_none());
    }

    const FA_REPO: &str = "https://github.com/vllm-project/flash-attention.git";
    /// A commit no rule names (not a known pin, not an event): only the ledger can decide it.
    const PIN: &str = "1111111111111111111111111111111111111111";

    /// The built-in rules with a one-release ledger: vLLM 0.29.0 (outside the FA4 rule's PyPI
    /// range) pins flash-attention at [`PIN`], from `repo`, with the FA4 rule's verdict
    /// recorded as `status`.
    fn db_with_ledger(status: &str, repo: &str) -> Database {
        let text = format!(
            r#"schema: 1
generated_by: t
source: t
extracted_with: t
releases:
  - version: "0.29.0"
    vllm_commit: "4bdc8a788"
    pins:
      - component: flash-attention
        declared_name: vllm-flash-attn
        command: FetchContent_Declare
        repo: "{repo}"
        reference: "{PIN}"
        commit: "{PIN}"
        file: cmake/external_projects/vllm_flash_attn.cmake
        line: 7
        configurations: [cuda]
        patches: []
        verdicts:
          - rule: PINPROBE-2026-0001
            status: {status}
            decided_by: signature
            git_ancestry: unknown
            clone: vllm-project/flash-attention at {PIN}
            commits: ["{PIN}"]
"#
        );
        let mut db = db();
        db.set_ledger(crate::rules::Ledger::parse("ledger.yaml", &text).expect("valid ledger"));
        db
    }

    /// A vLLM 0.29.0 source tree (its `vllm/_version.py`) pinning flash-attention at `pin`.
    fn release_tree(pin: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\n",
        );
        write(
            "cmake/external_projects/vllm_flash_attn.cmake",
            &format!(
                "include(FetchContent)\nFetchContent_Declare(\n  vllm-flash-attn\n  GIT_REPOSITORY {FA_REPO}\n  GIT_TAG {pin}\n)\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
            ),
        );
        write(
            "vllm/_version.py",
            "__version__ = version = '0.29.0'\n__commit_id__ = commit_id = 'g4bdc8a788'\n",
        );
        dir
    }

    /// The FA4 rule's status when the tree at `dir` is judged with `db` (no clone).
    fn fa4_status(dir: &std::path::Path, db: &Database) -> Status {
        let view = crate::view::open(dir, None).expect("view");
        let found = crate::pin::from_cmake(view.as_ref(), &db.registry).expect("cmake");
        let release = release_of(view.as_ref(), "vllm/_version.py").expect("version file");
        let judge = crate::judge::Judge {
            view: view.as_ref(),
            db,
            release: release.as_ref(),
            others: &[],
        };
        let mut findings = Vec::new();
        for mut pin in found.pins {
            findings.extend(
                judge
                    .pin_values(&mut pin, &|_| None)
                    .expect("judged")
                    .findings,
            );
        }
        findings
            .iter()
            .find(|f| f.rule == "PINPROBE-2026-0001")
            .map(|f| f.status)
            .unwrap_or_else(|| panic!("no FA4 finding: {findings:?}"))
    }

    /// Without a clone, nothing else decides the FA4 rule on this pin (no known pin, no event,
    /// a version outside the PyPI range): a recorded `affected` makes the release's tree
    /// `affected`, a recorded `not_affected` makes it `not_affected`, and the same tree with
    /// its pin moved gets neither.
    #[test]
    fn a_recorded_verdict_decides_the_release_tree() {
        let tree = release_tree(PIN);
        assert_eq!(
            fa4_status(tree.path(), &db_with_ledger("affected", FA_REPO)),
            Status::Affected
        );
        assert_eq!(
            fa4_status(tree.path(), &db_with_ledger("not_affected", FA_REPO)),
            Status::NotAffected
        );
        let moved = release_tree("3333333333333333333333333333333333333333");
        assert_eq!(
            fa4_status(moved.path(), &db_with_ledger("affected", FA_REPO)),
            Status::Unknown
        );
        // A ledger that does not record the pin's patches cannot show the tree builds what the
        // release built: the recorded `affected` does not apply, and neither does the release's
        // version range (outside the rule's range, it would say `not_affected`).
        let mut unpatched = db_with_ledger("affected", FA_REPO);
        let mut ledger = unpatched.ledger().clone();
        for release in &mut ledger.releases {
            for pin in &mut release.pins {
                pin.patches = None;
            }
        }
        unpatched.set_ledger(ledger);
        assert_eq!(fa4_status(tree.path(), &unpatched), Status::Unknown);
    }

    /// The evidence of a recorded verdict names the pin (abbreviated) and the clone; the
    /// ledger's repository is where the pin's history is fetched from, and an empty one
    /// names none.
    #[test]
    fn a_resolution_names_the_pin_and_its_repository() {
        let db = db_with_ledger("affected", FA_REPO);
        let r = resolve(&db, Some(&id("0.29.0", None)), "flash-attention", None);
        assert_eq!(r.commit.as_deref(), Some(PIN));
        assert_eq!(r.repo.as_deref(), Some(FA_REPO));
        assert!(r.why_not.is_none(), "{:?}", r.why_not);
        let [(rule, e)] = r.recorded.as_slice() else {
            panic!("one recorded verdict: {:?}", r.recorded);
        };
        assert_eq!(rule, "PINPROBE-2026-0001");
        assert_eq!(e.status, Status::Affected);
        assert_eq!(
            e.detail,
            format!(
                "release ledger: vLLM 0.29.0's flash-attention pin 111111111111 was decided affected by signature in a clone of vllm-project/flash-attention at {PIN} (commits 111111111111)"
            )
        );
        assert_eq!(
            e.file.as_deref(),
            Some("cmake/external_projects/vllm_flash_attn.cmake")
        );
        assert_eq!(e.line, Some(7));
        let r = resolve(
            &db_with_ledger("affected", ""),
            Some(&id("0.29.0", None)),
            "flash-attention",
            None,
        );
        assert_eq!(r.commit.as_deref(), Some(PIN));
        assert_eq!(r.repo, None);
        // A moved pin: the reason names both commits, abbreviated.
        let r = resolve(
            &db,
            Some(&id("0.29.0", None)),
            "flash-attention",
            Some("3333333333333333333333333333333333333333"),
        );
        let why = r.why_not.unwrap_or_default();
        assert!(
            why.starts_with("the flash-attention pin 333333333333 is not vLLM 0.29.0's (111111111111, rules/ledger.yaml)"),
            "{why}"
        );
    }

    /// Every way the ledger is not used says why (the reason lands in the scan's warnings and
    /// evidence), and then gives no pin, packages or verdicts.
    #[test]
    fn an_unused_ledger_always_says_why() {
        let db = db();
        for (release, pin) in [
            (None, None),
            (Some(id("9.9.9", None)), None),
            (Some(id("0.30.0", Some("1234567"))), None),
            (
                Some(id("0.33.0", None)),
                Some("506341a143fcabd4bb79052a7605ada727d6b3f5"),
            ),
        ] {
            let r = resolve(&db, release.as_ref(), "flash-attention", pin);
            assert!(r.why_not.is_some(), "{release:?}");
            assert!(r.commit.is_none() && r.packages.is_empty() && r.recorded.is_empty());
        }
        let r = resolve(&db, None, "flash-attention", None);
        assert_eq!(
            r.why_not.as_deref(),
            Some("the target has no vllm/_version.py naming its vLLM release")
        );
    }

    #[test]
    fn recorded_verdicts_become_evidence_with_provenance() {
        let db = db();
        let r = resolve(&db, Some(&id("0.26.0", None)), "flash-attention", None);
        let (rule, e) = r
            .recorded
            .iter()
            .find(|(rule, _)| rule == "PINPROBE-2026-0001")
            .expect("0.26.0's FA4 verdict is recorded");
        assert_eq!(rule, "PINPROBE-2026-0001");
        assert_eq!(e.status, Status::NotAffected);
        assert!(
            e.detail.contains("vllm-project/flash-attention"),
            "{}",
            e.detail
        );
    }

    /// A resolution that has a recorded verdict and the release's version range, with the
    /// release's patches as the ledger records them (`None`: not recorded).
    fn resolved(release_patches: Option<Vec<LedgerPatch>>) -> Resolution {
        Resolution {
            commit: Some(PIN.into()),
            packages: vec![("PyPI".into(), "vllm".into(), "0.29.0".into())],
            recorded: vec![(
                crate::model::RuleId::rule("PINPROBE-2026-0001"),
                Evidence {
                    kind: EvidenceKind::Recorded,
                    status: Status::Affected,
                    detail: "recorded".into(),
                    file: None,
                    line: None,
                },
            )],
            release_patches,
            ..Resolution::default()
        }
    }

    fn patch(file: &str, bytes: &[u8]) -> LedgerPatch {
        use sha2::{Digest as _, Sha256};
        LedgerPatch {
            file: file.into(),
            sha256: hex::encode(Sha256::digest(bytes)).to_ascii_uppercase(),
        }
    }

    /// The recorded verdicts and the version range stand only for a tree that builds what the
    /// release built: the same patch files, byte for byte (in any order; the ledger's hash in
    /// any case).
    #[test]
    fn recorded_verdicts_apply_only_to_the_releases_patches() {
        let tree = |items: &[(&str, Option<&[u8]>)]| -> Vec<(String, Option<Vec<u8>>)> {
            items
                .iter()
                .map(|(p, b)| (p.to_string(), b.map(<[u8]>::to_vec)))
                .collect()
        };
        // The same patches, listed in another order: kept.
        let mut r = resolved(Some(vec![
            patch("p/a.patch", b"a"),
            patch("p/b.patch", b"b"),
        ]));
        let same = tree(&[("p/b.patch", Some(b"b")), ("p/a.patch", Some(b"a"))]);
        assert_eq!(recorded_for_tree(&mut r, "flash-attention", &same), None);
        assert_eq!((r.recorded.len(), r.packages.len()), (1, 1));
        // No patches on either side: kept.
        let mut r = resolved(Some(Vec::new()));
        assert_eq!(recorded_for_tree(&mut r, "flash-attention", &[]), None);
        assert_eq!((r.recorded.len(), r.packages.len()), (1, 1));
        // A patch whose bytes differ, and one the tree declares but does not hold: dropped.
        let mut r = resolved(Some(vec![patch("p/a.patch", b"a")]));
        let why = recorded_for_tree(
            &mut r,
            "flash-attention",
            &tree(&[("p/a.patch", Some(b"A")), ("p/c.patch", None)]),
        );
        let a = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"a"));
        let big_a = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"A"));
        assert_eq!(
            why.as_deref(),
            Some(
                format!(
                    "the tree's flash-attention patches (p/a.patch ({}), p/c.patch (not in the tree)) are not the release's (p/a.patch ({}), rules/ledger.yaml): the release's recorded verdicts and version describe its build, not this tree's",
                    &big_a[..12],
                    &a[..12]
                )
                .as_str()
            )
        );
        assert_eq!((r.recorded.len(), r.packages.len()), (0, 0));
        // The tree applies none where the release applied one.
        let mut r = resolved(Some(vec![patch("p/a.patch", b"a")]));
        let why = recorded_for_tree(&mut r, "flash-attention", &[]).unwrap_or_default();
        assert!(
            why.starts_with("the tree's flash-attention patches (none) are not the release's"),
            "{why}"
        );
        assert!(r.recorded.is_empty() && r.packages.is_empty());
        // The ledger does not record the patches: nothing shows the tree builds the release.
        let mut r = resolved(None);
        assert_eq!(
            recorded_for_tree(&mut r, "flash-attention", &[]).as_deref(),
            Some(
                "the release ledger does not record the patches of this flash-attention pin, so the tree cannot be shown to build what the release built"
            )
        );
        assert!(r.recorded.is_empty() && r.packages.is_empty());
        // ... unless there is nothing recorded to drop: the version range stays.
        let mut r = resolved(None);
        r.recorded.clear();
        assert_eq!(recorded_for_tree(&mut r, "flash-attention", &[]), None);
        assert_eq!(r.packages.len(), 1);
    }

    #[test]
    fn abbreviations_keep_short_text_whole() {
        assert_eq!(short(PIN), "111111111111");
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn a_target_names_its_release_by_its_version_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("vllm")).expect("mkdir");
        std::fs::write(
            tmp.path().join("vllm/_version.py"),
            "__version__ = version = '0.30.0'\n__commit_id__ = commit_id = 'gCED6857AF'\n",
        )
        .expect("write");
        std::fs::write(tmp.path().join("vllm/other.py"), "__version__ = x\n").expect("write");
        let view = crate::view::open(tmp.path(), None).expect("view");
        assert_eq!(
            release_of(view.as_ref(), "vllm/_version.py").expect("reads"),
            Some(ReleaseId {
                version: "0.30.0".into(),
                commit: Some("ced6857af".into()),
                file: "vllm/_version.py".into(),
            })
        );
        assert_eq!(
            release_of(view.as_ref(), "vllm/other.py").expect("reads"),
            None
        );
        assert_eq!(
            release_of(view.as_ref(), "vllm/missing.py").expect("reads"),
            None
        );
        assert_eq!(
            version_of("x = 1\n  __version__ = '0.31.0rc1+cu129.dev_2'  \n").as_deref(),
            Some("0.31.0rc1+cu129.dev_2")
        );
        assert_eq!(version_of("__version__ = '0.30.0\"\n"), None);
        assert_eq!(version_of("__version__ = '0.30 0'\n"), None);
        assert_eq!(version_of("__version__ = 0.30.0\n"), None);
    }
}
