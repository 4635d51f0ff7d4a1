//! Artifact scanning end to end: wheels and installed environments built by the tests, the
//! verdict from the shipped sources, RECORD integrity, fingerprint indexes, and bad archives.

use crate::common;

use common::artifact::*;
use common::*;
use serde_json::Value;
use std::path::Path;

const R1: &str = "PINPROBE-2026-0001";

fn pinprobe(args: &[&str], cache: &Path) -> Run {
    Pinprobe::new(args).cache(cache).run()
}

fn scan_json(target: &Path, cache: &Path) -> (i32, Value) {
    let run = pinprobe(
        &["scan", target.to_str().unwrap(), "--format", "json"],
        cache,
    );
    (run.code, run.json())
}

/// Findings for `rule` in the first target, keyed by component.
fn findings<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn finding<'a>(report: &'a Value, rule: &str, component: &str) -> &'a Value {
    findings(report, rule)
        .into_iter()
        .find(|f| f["component"] == component)
        .unwrap_or_else(|| panic!("no {rule} finding for {component}: {report:#}"))
}

fn evidence<'a>(f: &'a Value, kind: &str) -> &'a Value {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} evidence: {f:#}"))
}

fn wheel(dir: &Path, version: &str, files: Files) -> std::path::PathBuf {
    let path = dir.join(format!("vllm-{version}-cp38-abi3-manylinux1_x86_64.whl"));
    write_wheel(&path, &with_dist_info("vllm", version, files));
    path
}

#[test]
fn wheel_verdicts_follow_the_shipped_source_over_the_version() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // (version, shape, status, what the version range alone would say)
    for (version, call, want, range) in [
        ("0.30.0", Sm90Call::Buggy, "affected", "affected"),
        ("0.33.0", Sm90Call::Buggy, "affected", "not_affected"), // patched back to the bug
        // Patched with the fix: the signature says not affected, the version range says
        // affected; evidence that disagrees is `unknown` with both listed (README lattice).
        ("0.30.0", Sm90Call::Fixed, "unknown", "affected"),
        ("0.33.0", Sm90Call::Fixed, "not_affected", "not_affected"),
        ("0.31.0", Sm90Call::LiteralFalse, "unknown", "affected"),
    ] {
        let dir = tmp.path().join(format!("{version}-{call:?}"));
        std::fs::create_dir_all(&dir).unwrap();
        let whl = wheel(&dir, version, vllm_files(version, call));
        let (code, report) = scan_json(&whl, &cache);
        assert_eq!(report["targets"][0]["kind"], "wheel");
        let f = finding(&report, R1, "flash-attention");
        assert_eq!(f["status"], want, "{version} {call:?}: {f:#}");
        if want != "unknown" {
            assert_eq!(f["decided_by"], "signature", "{version} {call:?}");
        } else {
            assert!(f.get("decided_by").is_none(), "{version} {call:?}: {f:#}");
            assert_eq!(evidence(f, "signature")["status"], "not_affected");
        }
        assert_eq!(
            evidence(f, "version-range")["status"],
            range,
            "{version} {call:?}"
        );
        // The other FlashAttention rules (no signature) need the commit, which no file in a
        // wheel records: without a fingerprint index they stay undecided (exit 3, fail closed).
        assert_eq!(
            code,
            if want == "affected" { 1 } else { 3 },
            "{version} {call:?}"
        );
        for other in report["targets"][0]["findings"].as_array().unwrap() {
            if other["rule"] != R1 && other["component"] == "flash-attention" {
                assert_eq!(other["status"], "unknown", "{other:#}");
            }
        }
        // The finding points at the shipped file.
        let loc = f["location"]["file"].as_str().unwrap();
        assert!(loc.starts_with("vllm/vllm_flash_attn/cute/"), "{loc}");
        let vllm = report["targets"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["component"] == "vllm")
            .unwrap();
        assert_eq!(vllm["reference"], format!("vllm {version}"));
        assert_eq!(vllm["commit"], "0a1b2c3d4");
    }
}

#[test]
fn bundled_third_party_and_standalone_copies_are_each_their_own_component() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = vllm_files("0.30.0", Sm90Call::Buggy);
    // vLLM's third_party copy builds the SM90 BlockInfo with a literal False: not affected.
    for (name, text) in [
        ("block_info.py", block_info_new()),
        ("flash_fwd_sm90.py", fwd_sm90(Sm90Call::LiteralFalse)),
    ] {
        files.push((
            format!("vllm/third_party/tml_fa4/cute/{name}"),
            text.replace("flash_attn.cute", "vllm.third_party.tml_fa4.cute")
                .into_bytes(),
        ));
    }
    let whl = wheel(tmp.path(), "0.30.0", files);
    let (_, report) = scan_json(&whl, &tmp.path().join("cache"));
    assert_eq!(
        finding(&report, R1, "flash-attention")["status"],
        "affected"
    );
    let tml = finding(&report, R1, "tml_fa4");
    assert_eq!(tml["status"], "not_affected", "{tml:#}");
    assert!(
        evidence(tml, "signature")["detail"]
            .as_str()
            .unwrap()
            .contains("sm90")
    );
}

#[test]
fn a_venv_with_two_site_packages_is_scanned_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    write(&venv, "pyvenv.cfg", "home = /usr/bin\n");
    write_tree(
        &venv.join("lib/python3.11/site-packages"),
        &with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy)),
    );
    write_tree(
        &venv.join("lib/python3.12/site-packages"),
        &with_dist_info(
            "flash-attn-4",
            "4.0.0b36",
            fa4_files(Sm90Call::LiteralFalse),
        ),
    );
    let (code, report) = scan_json(&venv, &tmp.path().join("cache"));
    assert_eq!(code, 1);
    assert_eq!(report["targets"][0]["kind"], "installed");
    let comps: Vec<&str> = report["targets"][0]["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["component"].as_str().unwrap())
        .collect();
    assert_eq!(
        comps,
        vec!["vllm", "flash-attention", "flash-attention-upstream"]
    );
    assert_eq!(
        finding(&report, R1, "flash-attention")["status"],
        "affected"
    );
    let upstream = finding(&report, R1, "flash-attention-upstream");
    assert_eq!(upstream["status"], "not_affected");
    // No vllm version range for the standalone copy.
    assert!(
        upstream["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "version-range")
    );
}

#[test]
fn a_file_modified_after_install_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site-packages");
    write_tree(
        &site,
        &with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy)),
    );
    // Someone hand-applies the fix after install: the signature follows the file, and RECORD
    // says it changed.
    write(
        &site,
        "vllm/vllm_flash_attn/cute/flash_fwd_sm90.py",
        &fwd_sm90(Sm90Call::Fixed).replace("flash_attn.cute", "vllm.vllm_flash_attn.cute"),
    );
    let (code, report) = scan_json(&site, &tmp.path().join("cache"));
    // 3: the FlashAttention rules without a signature need the commit (see above).
    assert_eq!(code, 3);
    let f = finding(&report, R1, "flash-attention");
    // The signature follows the edited file (not affected) but 0.30.0 is in the version range:
    // the two disagree, so the finding is unknown with both listed.
    assert_eq!(f["status"], "unknown");
    assert_eq!(evidence(f, "signature")["status"], "not_affected");
    assert_eq!(evidence(f, "version-range")["status"], "affected");
    let integrity = evidence(f, "integrity");
    assert!(
        integrity["detail"]
            .as_str()
            .unwrap()
            .contains("modified after install"),
        "{integrity:#}"
    );
    assert!(
        integrity["file"]
            .as_str()
            .unwrap()
            .ends_with("flash_fwd_sm90.py")
    );
}

#[test]
fn an_environment_without_vllm_is_undecided() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site-packages");
    write_tree(
        &site,
        &with_dist_info(
            "six",
            "1.16.0",
            vec![("six.py".into(), b"x = 1\n".to_vec())],
        ),
    );
    let run = pinprobe(&["scan", site.to_str().unwrap()], &tmp.path().join("cache"));
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("no vllm or FlashAttention install found")
    );
}

/// A wheel shipping the files of one synthetic commit, as vLLM would (imports rewritten).
fn wheel_of_commit(
    dir: &Path,
    history: &FaHistory,
    commit: &str,
    patch: Option<&str>,
) -> std::path::PathBuf {
    let mut files: Files = vec![("vllm/__init__.py".into(), Vec::new())];
    for name in [
        "__init__.py",
        "utils.py",
        "interface.py",
        "seqlen_info.py",
        "block_info.py",
        "flash_fwd_sm90.py",
    ] {
        let text = git(
            &history.dir,
            &["show", &format!("{commit}:flash_attn/cute/{name}")],
        ) + "\n";
        let mut text = text.replace("flash_attn.cute", "vllm.vllm_flash_attn.cute");
        if Some(name) == patch {
            text.push_str("# patched by vllm\n");
        }
        files.push((
            format!("vllm/vllm_flash_attn/cute/{name}"),
            text.into_bytes(),
        ));
    }
    std::fs::create_dir_all(dir).unwrap();
    wheel(dir, "0.30.0", files)
}

#[test]
fn fingerprint_index_names_the_commit_a_window_or_the_patched_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo_arg = format!("flash-attention={}", h.dir.display());
    let built = pinprobe(&["index", "build", "--repo", &repo_arg], &cache);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stdout.contains("9 commits (9 new)"),
        "{}",
        built.stdout
    );
    // Incremental: nothing new the second time, and then the stored index is not rewritten.
    let index_file = cache.join("index/flash-attention.idx");
    let written = std::fs::read(&index_file).unwrap();
    let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(&index_file)
        .unwrap()
        .set_modified(past)
        .unwrap();
    let again = pinprobe(&["index", "build", "--repo", &repo_arg], &cache);
    assert!(again.stdout.contains("(0 new)"), "{}", again.stdout);
    let meta = std::fs::metadata(&index_file).unwrap();
    assert_eq!(
        meta.modified().unwrap(),
        past,
        "an unchanged index is not rewritten"
    );
    assert_eq!(std::fs::read(&index_file).unwrap(), written);

    let pin_of = |report: &Value| -> Value {
        report["targets"][0]["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["component"] == "flash-attention")
            .unwrap()
            .clone()
    };
    // Exact: only the literal-False branch commit has those files.
    let whl = wheel_of_commit(&tmp.path().join("exact"), &h, &h.literal_false, None);
    let (_, report) = scan_json(&whl, &cache);
    let pin = pin_of(&report);
    assert_eq!(pin["commit"], h.literal_false.as_str(), "{pin:#}");
    assert!(
        pin["fingerprint"]["summary"]
            .as_str()
            .unwrap()
            .contains("6/6 files match commit")
    );

    // A window: the introducing commit's files stay the same for several commits.
    let whl = wheel_of_commit(&tmp.path().join("window"), &h, &h.introduce, None);
    let (_, report) = scan_json(&whl, &cache);
    let pin = pin_of(&report);
    assert!(pin.get("commit").is_none(), "{pin:#}");
    let fp = pin["fingerprint"]["summary"].as_str().unwrap();
    assert!(fp.contains("a window of 4 commits"), "{fp}");

    // A patched file is tolerated and named.
    let whl = wheel_of_commit(&tmp.path().join("patched"), &h, &h.c0, Some("utils.py"));
    let (_, report) = scan_json(&whl, &cache);
    let fp = pin_of(&report)["fingerprint"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fp.contains("5/6 files match commit"), "{fp}");
    assert!(fp.contains("differing (patched?): utils.py"), "{fp}");

    // With the exact commit and a clone, ancestry joins the evidence.
    let whl = wheel_of_commit(&tmp.path().join("exact2"), &h, &h.c0, None);
    let run = pinprobe(
        &[
            "scan",
            whl.to_str().unwrap(),
            "--format",
            "json",
            "--repo",
            &repo_arg,
        ],
        &cache,
    );
    let report = run.json();
    assert_eq!(pin_of(&report)["commit"], h.c0.as_str());
}

fn assert_bad(path: &Path, cache: &Path, needle: &str) {
    let run = pinprobe(&["scan", path.to_str().unwrap()], cache);
    assert_eq!(run.code, 2, "{needle}: {}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(needle), "`{needle}` in {}", run.stderr);
    assert!(!run.stderr.contains("panicked"));
}

#[test]
fn bad_wheels_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let good = |name: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        wheel(&dir, "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy))
    };

    let truncated = good("truncated");
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_bad(&truncated, &cache, "not a readable zip archive");

    let corrupt = good("corrupt");
    assert!(patch_bytes(&corrupt, b"PK\x01\x02", b"XX\x01\x02") > 0);
    assert_bad(&corrupt, &cache, "zip");

    let traversal = good("traversal");
    assert!(patch_bytes(&traversal, b"vllm/__init__.py", b"../../evil.py!!!") > 0);
    assert_bad(&traversal, &cache, "path traversal");

    let twice = good("twice");
    // Two members with one name: rename `vllm/__init__.py` to `vllm/_version.py` (same length).
    assert_eq!("vllm/__init__.py".len(), "vllm/_version.py".len());
    assert!(patch_bytes(&twice, b"vllm/__init__.py", b"vllm/_version.py") > 0);
    assert_bad(&twice, &cache, "appears twice");
    assert_bad(&twice, &cache, "holds 9 entries but 8 distinct names");

    let non_utf8 = good("nonutf8");
    assert!(patch_bytes(&non_utf8, b"vllm/__init__.py", b"vllm/__init\xff\xfe.py") > 0);
    assert_bad(&non_utf8, &cache, "not UTF-8");

    let bomb = good("bomb");
    // Declare a 4 GB uncompressed size in the central directory entry of the first member.
    let mut bytes = std::fs::read(&bomb).unwrap();
    let cd = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    bytes[cd + 24..cd + 28].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    std::fs::write(&bomb, bytes).unwrap();
    assert_bad(&bomb, &cache, "zip bomb");

    let missing = tmp.path().join("nope.whl");
    assert_bad(&missing, &cache, "nope.whl");
}

#[test]
fn a_wheel_with_a_wrong_record_hash_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    // Change the file after RECORD was written.
    for (name, bytes) in files.iter_mut() {
        if name.ends_with("block_info.py") {
            bytes.extend_from_slice(b"# tampered\n");
        }
    }
    let whl = tmp.path().join("vllm-0.30.0-py3-none-any.whl");
    write_wheel(&whl, &files);
    let (_, report) = scan_json(&whl, &tmp.path().join("cache"));
    let f = finding(&report, R1, "flash-attention");
    assert!(
        evidence(f, "integrity")["detail"]
            .as_str()
            .unwrap()
            .contains("block_info.py was modified after install"),
        "{f:#}"
    );
}

#[test]
fn expect_compares_the_declared_pin_with_the_shipped_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo_arg = format!("flash-attention={}", h.dir.display());
    assert_eq!(
        pinprobe(&["index", "build", "--repo", &repo_arg], &cache).code,
        0
    );
    let drift = |tree_pin: &str, wheel_commit: &str, patch: Option<&str>| -> Value {
        let name = format!(
            "{}-{}-{}",
            &tree_pin[..8],
            &wheel_commit[..8],
            patch.unwrap_or("none")
        );
        let tree = tmp.path().join(format!("tree-{name}"));
        vllm_tree(&tree, FA_REPO, tree_pin);
        let whl = wheel_of_commit(
            &tmp.path().join(format!("whl-{name}")),
            &h,
            wheel_commit,
            patch,
        );
        let run = pinprobe(
            &[
                "scan",
                "--expect",
                tree.to_str().unwrap(),
                whl.to_str().unwrap(),
                "--format",
                "json",
            ],
            &cache,
        );
        finding(&run.json(), "drift/pin-vs-artifact", "flash-attention").clone()
    };
    let same = drift(&h.literal_false, &h.literal_false, None);
    assert_eq!(same["status"], "not_affected", "{same:#}");
    let other = drift(&h.c0, &h.literal_false, None);
    assert_eq!(other["status"], "affected", "{other:#}");
    assert!(
        other["evidence"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("do not come from it")
    );
    let patched = drift(&h.c0, &h.c0, Some("utils.py"));
    assert_eq!(patched["status"], "affected");
    assert!(
        patched["evidence"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("except utils.py")
    );
    // A window that contains the pin is consistent.
    let window = drift(&h.c2, &h.introduce, None);
    assert_eq!(window["status"], "not_affected", "{window:#}");
}

#[test]
fn a_wheel_member_that_disagrees_with_record_gets_no_clean_verdict() {
    // The fixed shape, in a wheel whose RECORD was written for the buggy file: the archive was
    // altered after its build, so `not_affected` becomes `unknown` (an installed environment
    // keeps following the file: see a_file_modified_after_install_is_reported).
    let tmp = tempfile::tempdir().unwrap();
    let mut files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    for (name, bytes) in files.iter_mut() {
        if name.ends_with("flash_fwd_sm90.py") {
            *bytes = fwd_sm90(Sm90Call::Fixed)
                .replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
                .into_bytes();
        }
    }
    let whl = tmp.path().join("vllm-0.30.0-py3-none-any.whl");
    write_wheel(&whl, &files);
    let (code, report) = scan_json(&whl, &tmp.path().join("cache"));
    assert_eq!(code, 3);
    let f = finding(&report, R1, "flash-attention");
    assert_eq!(f["status"], "unknown", "{f:#}");
    let detail = evidence(f, "integrity")["detail"].as_str().unwrap();
    assert!(detail.contains("no clean verdict"), "{detail}");
}

/// A vLLM 0.30.0 wheel whose FlashAttention files fingerprint to another commit than the one
/// the release ledger records for 0.30.0 (506341a1...) is not the release as built: a
/// `drift/ledger-vs-artifact` finding. Without an index nothing is claimed either way.
#[test]
fn shipped_files_that_are_not_the_release_pin_are_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo_arg = format!("flash-attention={}", h.dir.display());
    let whl = wheel_of_commit(&tmp.path().join("exact"), &h, &h.literal_false, None);
    let (_, before) = scan_json(&whl, &cache);
    assert!(
        !before.to_string().contains("drift/ledger-vs-artifact"),
        "no index, no claim: {before:#}"
    );
    assert_eq!(
        pinprobe(&["index", "build", "--repo", &repo_arg], &cache).code,
        0
    );
    let (_, report) = scan_json(&whl, &cache);
    let drift = report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "drift/ledger-vs-artifact")
        .cloned()
        .unwrap_or_else(|| panic!("no ledger drift: {report:#}"));
    assert_eq!(drift["status"], "affected", "{drift:#}");
    let detail = drift["evidence"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("506341a143fcabd4bb79052a7605ada727d6b3f5")
            && detail.contains(&h.literal_false),
        "{detail}"
    );
}

/// Per commit: its time, the id of its `flash_attn/cute` tree, and (file, blob) of each `.py`.
type Fingerprints = std::collections::BTreeMap<String, (i64, String, Vec<(String, String)>)>;

/// What git itself says the fingerprint index of `h` holds: per commit, its time, the id of
/// its `flash_attn/cute` tree and the blob of every `.py` file under it.
fn git_fingerprints(h: &FaHistory) -> Fingerprints {
    let mut out = std::collections::BTreeMap::new();
    for commit in git(&h.dir, &["rev-list", "--all"]).lines() {
        let time = git(&h.dir, &["log", "-1", "--format=%ct", commit])
            .parse()
            .unwrap();
        let tree = git(&h.dir, &["rev-parse", &format!("{commit}:flash_attn/cute")]);
        let files = git(&h.dir, &["ls-tree", "-r", &tree])
            .lines()
            .filter_map(|line| {
                // "<mode> blob <id>\t<path>"
                let (meta, path) = line.split_once('\t')?;
                let blob = meta.split_whitespace().nth(2)?;
                path.ends_with(".py")
                    .then(|| (path.to_string(), blob.to_string()))
            })
            .collect();
        out.insert(commit.to_string(), (time, tree, files));
    }
    out
}

/// The index as the library reads it back, in git's terms.
fn index_fingerprints(index: &pinprobe::pin::fingerprint::Index) -> Fingerprints {
    index
        .commits
        .iter()
        .map(|c| {
            let state = &index.states[c.state as usize];
            let mut files: Vec<(String, String)> = state
                .files
                .iter()
                .map(|(n, blob)| (index.names[*n as usize].clone(), blob.to_string()))
                .collect();
            files.sort();
            (c.id.to_string(), (c.time, state.tree.to_string(), files))
        })
        .collect()
}

/// The exact commit a wheel of `commit`'s files fingerprints to, through `cache`.
fn fingerprinted_commit(tmp: &Path, h: &FaHistory, commit: &str, cache: &Path) -> Option<String> {
    let whl = wheel_of_commit(&tmp.join(format!("whl-{}", &commit[..8])), h, commit, None);
    let (_, report) = scan_json(&whl, cache);
    report["targets"][0]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["component"] == "flash-attention")
        .and_then(|c| c["commit"].as_str())
        .map(str::to_string)
}

/// The binary index holds exactly what git says of every commit (round trip through the file),
/// and `index list` names its format.
#[test]
fn the_binary_index_holds_what_git_says() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo_arg = format!("flash-attention={}", h.dir.display());
    let built = pinprobe(&["index", "build", "--repo", &repo_arg], &cache);
    assert_eq!(built.code, 0, "{}", built.all());
    let file = cache.join("index/flash-attention.idx");
    assert!(!cache.join("index/flash-attention.json").exists());
    let index = pinprobe::pin::fingerprint::load(&file).unwrap();
    assert_eq!(index.format, pinprobe::pin::fingerprint::Format::Binary);
    assert_eq!(index.source, h.dir.display().to_string());
    assert_eq!(index_fingerprints(&index), git_fingerprints(&h));
    // Each distinct directory state once.
    let trees: std::collections::BTreeSet<_> =
        git_fingerprints(&h).into_values().map(|v| v.1).collect();
    assert_eq!(index.states.len(), trees.len());
    let list = pinprobe(&["index", "list"], &cache);
    assert_eq!(list.code, 0, "{}", list.all());
    assert!(
        list.stdout.contains("flash-attention: 9 commits")
            && list.stdout.contains("binary (format 2)"),
        "{}",
        list.stdout
    );
}

/// An index an earlier version wrote (JSON, format 1; here written from git's own answers) is
/// read as it is, then converted by the next `index build`, which removes it; the answers
/// are the same before and after.
#[test]
fn a_json_index_of_an_earlier_version_is_read_then_converted() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let truth = git_fingerprints(&h);
    let mut trees: Vec<String> = Vec::new();
    let mut states = Vec::new();
    let mut commits = Vec::new();
    for (commit, (time, tree, files)) in &truth {
        let state = match trees.iter().position(|t| t == tree) {
            Some(s) => s,
            None => {
                trees.push(tree.clone());
                let files: serde_json::Map<String, Value> = files
                    .iter()
                    .map(|(p, b)| (p.clone(), Value::from(b.as_str())))
                    .collect();
                states.push(serde_json::json!({"tree": tree, "files": files}));
                trees.len() - 1
            }
        };
        commits.push(serde_json::json!([commit, time, state]));
    }
    let legacy = cache.join("index/flash-attention.json");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    let json = serde_json::json!({
        "format": 1,
        "component": "flash-attention",
        "source": h.dir.display().to_string(),
        "states": states,
        "commits": commits,
    });
    std::fs::write(&legacy, serde_json::to_vec(&json).unwrap()).unwrap();

    let list = pinprobe(&["index", "list"], &cache);
    assert!(list.stdout.contains("JSON (format 1"), "{}", list.all());
    let from_json = pinprobe::pin::fingerprint::load(&legacy).unwrap();
    assert_eq!(index_fingerprints(&from_json), truth);
    let literal_false = fingerprinted_commit(tmp.path(), &h, &h.literal_false, &cache);
    assert_eq!(literal_false.as_deref(), Some(h.literal_false.as_str()));

    let repo_arg = format!("flash-attention={}", h.dir.display());
    let built = pinprobe(&["index", "build", "--repo", &repo_arg], &cache);
    assert_eq!(built.code, 0, "{}", built.all());
    assert!(built.stdout.contains("(0 new)"), "{}", built.stdout);
    assert!(
        built.stderr.contains("converted the JSON index"),
        "{}",
        built.stderr
    );
    assert!(!legacy.exists(), "the JSON index is removed once converted");
    let binary = cache.join("index/flash-attention.idx");
    let converted = pinprobe::pin::fingerprint::load(&binary).unwrap();
    assert_eq!(index_fingerprints(&converted), truth);
    assert!(
        pinprobe(&["index", "list"], &cache)
            .stdout
            .contains("binary (format 2)")
    );
    assert_eq!(
        fingerprinted_commit(tmp.path(), &h, &h.literal_false, &cache),
        literal_false
    );
}

/// A damaged index is never trusted and never ignored: `scan` and `index list` stop with one
/// line naming the file (exit 2), whatever the damage, and `index build` rebuilds it from the
/// clone (with a warning), after which the scan answers again.
#[test]
fn a_damaged_index_is_an_error_naming_it_then_rebuilt() {
    use sha2::{Digest, Sha256};
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo_arg = format!("flash-attention={}", h.dir.display());
    assert_eq!(
        pinprobe(&["index", "build", "--repo", &repo_arg], &cache).code,
        0
    );
    let file = cache.join("index/flash-attention.idx");
    let good = std::fs::read(&file).unwrap();
    let whl = wheel_of_commit(&tmp.path().join("whl"), &h, &h.literal_false, None);
    // A forger's file: a count far past the end, under a checksum that fits.
    let mut absurd = good.clone();
    let names_at = 64 + 4 + "flash-attention".len() + 4 + h.dir.display().to_string().len();
    absurd[names_at..names_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let sum = Sha256::digest(&absurd[64..]);
    absurd[32..64].copy_from_slice(&sum);
    let mut wrong_magic = good.clone();
    wrong_magic[..8].copy_from_slice(b"PK\x03\x04xxxx");
    let mut damaged: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        ("header only", good[..64].to_vec(), "truncated"),
        ("empty", Vec::new(), "magic"),
        (
            "garbage",
            (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect(),
            "magic",
        ),
        ("wrong magic", wrong_magic, "magic"),
        ("absurd count", absurd, "4294967295 file names declared"),
    ];
    // Single bit flips spread over the header and the body.
    for at in (0..good.len()).step_by(good.len() / 7) {
        let mut flipped = good.clone();
        flipped[at] ^= 0x10;
        damaged.push(("bit flip", flipped, "not a pinprobe index"));
    }
    for (what, bytes, needle) in &damaged {
        std::fs::write(&file, bytes).unwrap();
        for args in [vec!["scan", whl.to_str().unwrap()], vec!["index", "list"]] {
            let run = pinprobe(&args, &cache);
            run.assert_error(&file.display().to_string());
            assert!(
                run.stderr.contains(needle),
                "{what}: `{needle}` in {}",
                run.stderr
            );
        }
    }
    let rebuilt = pinprobe(&["index", "build", "--repo", &repo_arg], &cache);
    assert_eq!(rebuilt.code, 0, "{}", rebuilt.all());
    assert!(
        rebuilt.stderr.contains("rebuilt from the clone"),
        "{}",
        rebuilt.stderr
    );
    assert!(
        rebuilt.stdout.contains("9 commits (9 new)"),
        "{}",
        rebuilt.stdout
    );
    assert_eq!(std::fs::read(&file).unwrap(), good, "the same index again");

    // The file's name is its component: another component's index under this name is refused.
    let other = cache.join("index/fmha_sm100.idx");
    std::fs::copy(&file, &other).unwrap();
    pinprobe(&["scan", whl.to_str().unwrap()], &cache).assert_error("fmha_sm100.idx");
    std::fs::remove_file(&other).unwrap();
    assert_eq!(
        fingerprinted_commit(tmp.path(), &h, &h.literal_false, &cache).as_deref(),
        Some(h.literal_false.as_str())
    );
}

/// A component name is a file name in the index directory; one that would leave it is refused
/// before anything is written.
#[test]
fn an_index_name_that_leaves_the_cache_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let h = FaHistory::build(&tmp.path().join("fa"));
    for name in ["../../escaped", "a/b", ".hidden"] {
        let run = pinprobe(
            &[
                "index",
                "build",
                "--repo",
                &format!("{name}={}", h.dir.display()),
            ],
            &cache,
        );
        assert_eq!(run.code, 2, "{name}: {}", run.all());
        assert!(
            run.stderr.contains("cannot name an index"),
            "{}",
            run.stderr
        );
    }
    assert!(!tmp.path().join("escaped.idx").exists());
    assert!(!cache.join("index").exists());
}
