//! Properties on rewritten and corrupted inputs, asserted on the verdict (each rule's `status`),
//! never on the exit code alone: the demo tree and the artifacts leave other rules `unknown`, so
//! a scan exits 3 whether or not the FA4 rule (PINPROBE-2026-0001) flipped to `not_affected`.
//!
//! - **Semantic mutants**, truth from how each is built: FA4 sources generated with random
//!   bug-keeping edits (comments that mention the fix, keyword arguments, one-line calls, helper
//!   methods, renamed locals, CRLF) and, half the time, a bug-removing one (the fix, a literal
//!   `False`, `BlockInfo` without the field); also moves (a file under another name) and renames
//!   (an import alias). Shipped in a wheel and in an image layer whose vLLM version (0.29.0) the
//!   version range calls clean, so only the files can say otherwise. CMake rewrites of the pin
//!   file that keep the affected pin (indirection, quoting, CRLF, the fix SHA in a comment or a
//!   dead branch, the declare moved to another file) or change it (the fix, an unknown commit).
//!   Bug kept => never `not_affected`; bug kept and the shape visible => `affected`; bug
//!   removed => never `affected`.
//! - **Byte mutants**: random flips, truncations, insertions, overwrites and deletions of an
//!   affected pin file, wheel and image (both `docker save` forms). The FA4 rule is never
//!   `not_affected`, no rule becomes `not_affected` that was not so before, and a scan that
//!   lost the FA4 finding altogether never exits 0.
//!
//! The seed is random per run and printed past the harness's capture;
//! `PINPROBE_CORRUPTION_SEED=N` replays a run. `PINPROBE_CORRUPTION_CASES` (default 48) bounds
//! the cases per target.

use crate::common;

use common::image as build;

use build::{Compression, Image, Layer, SITE};
use clap::Parser;
use common::artifact::{with_dist_info, write_wheel};
use common::{Sm90Call, block_info_new, block_info_old, fwd_sm90};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const RULE: &str = "PINPROBE-2026-0001";
const AFFECTED_PIN: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";

fn cases() -> usize {
    std::env::var("PINPROBE_CORRUPTION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// This run's seed: `PINPROBE_CORRUPTION_SEED`, else random; announced once per binary.
fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let seed = std::env::var("PINPROBE_CORRUPTION_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(rand::random);
        common::require::announce(&format!(
            "corruption: seed {seed} (PINPROBE_CORRUPTION_SEED={seed} replays this run)"
        ));
        seed
    })
}

fn rng(stream: u64) -> StdRng {
    StdRng::seed_from_u64(seed() ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// What a scan said: the exit code and each (rule, component)'s status.
#[derive(Debug)]
struct Verdict {
    code: i32,
    status: BTreeMap<(String, String), String>,
}

impl Verdict {
    /// The FA4 rule's statuses (one per component it applies to).
    fn fa4(&self) -> Vec<&str> {
        self.status
            .iter()
            .filter(|((rule, _), _)| rule == RULE)
            .map(|(_, s)| s.as_str())
            .collect()
    }
}

/// Scan through the CLI entry point (in process).
fn scan(target: &Path, cache: &Path) -> Verdict {
    let args = [
        "pinprobe",
        "scan",
        "--format",
        "json",
        "--cache",
        cache.to_str().expect("utf-8 path"),
        target.to_str().expect("utf-8 path"),
    ];
    let cli = pinprobe::cli::Cli::try_parse_from(args).expect("args parse");
    let mut out = Vec::new();
    match pinprobe::cli::run(cli, &mut out) {
        Err(_) => Verdict {
            code: 2,
            status: BTreeMap::new(),
        },
        Ok(exit) => {
            let report: Value = serde_json::from_slice(&out).expect("json report");
            let status = report["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| t["findings"].as_array().into_iter().flatten())
                .map(|f| {
                    (
                        (
                            f["rule"].as_str().unwrap_or("").to_string(),
                            f["component"].as_str().unwrap_or("").to_string(),
                        ),
                        f["status"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            Verdict {
                code: exit.code(),
                status,
            }
        }
    }
}

// ---- semantic mutants of the FA4 sources ----------------------------------------------------

/// One generated pair of FA4 sources and the truth of its construction.
#[derive(Debug, Clone)]
struct Sources {
    /// The edits, for the failure message.
    what: Vec<String>,
    block_info: String,
    sm90: String,
    /// File names under `cute/`.
    block_info_file: &'static str,
    sm90_file: &'static str,
    /// The bug is in the code (by construction).
    buggy: bool,
    /// The shape is where and how the rule's signature reads it (no rename, no move).
    visible: bool,
    /// The bug was removed by the canonical fix or the literal False (the rule's own vectors'
    /// shapes): the verdict must be exactly `not_affected`.
    plainly_fixed: bool,
}

fn random_sources(rng: &mut StdRng) -> Sources {
    let mut what = Vec::new();
    let flag = |p: f64, name: &str, what: &mut Vec<String>, rng: &mut StdRng| {
        let on = rng.random_bool(p);
        if on {
            what.push(name.to_string());
        }
        on
    };
    // Bug-keeping edits.
    let keyword_split = flag(0.3, "is_split_kv as keyword", &mut what, rng);
    let one_line = flag(0.3, "call on one line", &mut what, rng);
    let helper = flag(0.3, "call moved into a helper method", &mut what, rng);
    let rename_var = flag(0.3, "local renamed", &mut what, rng);
    let alias = flag(0.15, "BlockInfo imported under an alias", &mut what, rng);
    let crlf = flag(0.2, "CRLF", &mut what, rng);
    let moved = flag(
        0.1,
        "flash_fwd_sm90.py moved to flash_fwd_hopper.py",
        &mut what,
        rng,
    );
    // At most one bug-removing edit, half the time.
    let removal = if rng.random_bool(0.5) {
        let r = rng.random_range(0..4);
        what.push(
            [
                "fix: num_splits=num_splits",
                "literal False",
                "BlockInfo without the field",
                "no override in get_n_block_min_max",
            ][r]
                .to_string(),
        );
        Some(r)
    } else {
        None
    };
    let fix = removal == Some(0);
    let literal_false = removal == Some(1);
    let block_info = match removal {
        Some(2) => block_info_old(),
        Some(3) => block_info_new().replace("            num_splits = self.num_splits\n", ""),
        _ => block_info_new(),
    };

    let name = if alias { "BI" } else { "BlockInfo" };
    let split = match (literal_false, keyword_split) {
        (true, true) => "is_split_kv=False",
        (true, false) => "False",
        (false, true) => "is_split_kv=self.is_split_kv",
        (false, false) => "self.is_split_kv",
    };
    let mut args = vec![
        "self.tile_m",
        "self.tile_n",
        "self.is_causal",
        "self.is_local",
        split,
    ];
    if fix {
        args.push("num_splits=num_splits");
    }
    let call = |indent: &str| {
        if one_line {
            format!("{name}({})", args.join(", "))
        } else {
            let inner: String = args.iter().map(|a| format!("{indent}    {a},\n")).collect();
            format!("{name}(\n{inner}{indent})")
        }
    };
    let var = if rename_var { "binfo" } else { "block_info" };
    let import_alias = if alias { " as BI" } else { "" };
    let (helper_def, build) = if helper {
        (
            format!(
                "\n    def _block_info(self, num_splits):\n        return {}\n",
                call("        ")
            ),
            "self._block_info(num_splits)".to_string(),
        )
    } else {
        (String::new(), call("        "))
    };
    let sm90 = format!(
        "from flash_attn.cute.block_info import BlockInfo{import_alias}\n\n\nclass FlashAttentionForwardSm90:\n    def __init__(self, tile_m, tile_n, is_causal, is_local, is_split_kv):\n        self.tile_m = tile_m\n        self.tile_n = tile_n\n        self.is_causal = is_causal\n        self.is_local = is_local\n        self.is_split_kv = is_split_kv\n{helper_def}\n    def kernel(self, mQ, mK, mV, num_splits):\n        {var} = {build}\n        return {var}\n"
    );
    // Comments that talk about the fix, at random full-line positions (legal anywhere, even
    // inside the call's parentheses).
    let mut lines: Vec<String> = sm90.lines().map(str::to_string).collect();
    let mut block_lines: Vec<String> = block_info.lines().map(str::to_string).collect();
    for _ in 0..rng.random_range(0..4) {
        let at = rng.random_range(1..=lines.len());
        lines.insert(
            at,
            "        # BlockInfo(..., num_splits=num_splits) fixes this".into(),
        );
    }
    for _ in 0..rng.random_range(0..3) {
        let at = rng.random_range(1..=block_lines.len());
        block_lines.insert(
            at,
            "    # num_splits: Int32 = 1  (num_splits = self.num_splits)".into(),
        );
    }
    let eol = if crlf { "\r\n" } else { "\n" };
    let join = |l: Vec<String>| l.join(eol) + eol;
    let block_info_buggy = removal != Some(2) && removal != Some(3);
    let buggy = block_info_buggy && !fix && !literal_false;
    Sources {
        what,
        block_info: join(block_lines),
        sm90: join(lines),
        block_info_file: "block_info.py",
        sm90_file: if moved {
            "flash_fwd_hopper.py"
        } else {
            "flash_fwd_sm90.py"
        },
        buggy,
        visible: !alias && !moved,
        plainly_fixed: !buggy && (fix || literal_false) && !alias && !moved,
    }
}

/// The truth of a mutant against the FA4 rule's statuses; `None` when it holds.
fn violation(src: &Sources, v: &Verdict) -> Option<String> {
    let fa4 = v.fa4();
    if fa4.is_empty() {
        return (v.code == 0).then(|| "no FA4 finding and exit 0".to_string());
    }
    if src.buggy && fa4.contains(&"not_affected") {
        return Some("the bug is kept but the FA4 rule says not_affected (a false clean)".into());
    }
    if src.buggy && src.visible && !fa4.iter().all(|s| *s == "affected") {
        return Some("the bug's shape is visible but the FA4 rule is not affected".into());
    }
    if !src.buggy && fa4.contains(&"affected") {
        return Some("the bug was removed but the FA4 rule says affected".into());
    }
    if src.plainly_fixed && !fa4.iter().all(|s| *s == "not_affected") {
        return Some("plainly fixed but the FA4 rule is not not_affected".into());
    }
    None
}

fn rewrite_imports(s: &str) -> Vec<u8> {
    s.replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
        .into_bytes()
}

/// A vLLM wheel shipping `src` (version 0.29.0: the version range calls it clean).
fn wheel_of(src: &Sources, path: &Path) {
    let cute = "vllm/vllm_flash_attn/cute";
    let files = vec![
        ("vllm/__init__.py".into(), b"".to_vec()),
        (
            "vllm/_version.py".into(),
            b"__version__ = version = '0.29.0'\n__commit_id__ = commit_id = 'g0a1b2c3d4'\n"
                .to_vec(),
        ),
        ("vllm/vllm_flash_attn/__init__.py".into(), b"".to_vec()),
        (format!("{cute}/__init__.py"), b"".to_vec()),
        (
            format!("{cute}/{}", src.block_info_file),
            rewrite_imports(&src.block_info),
        ),
        (
            format!("{cute}/{}", src.sm90_file),
            rewrite_imports(&src.sm90),
        ),
    ];
    write_wheel(path, &with_dist_info("vllm", "0.29.0", files));
}

#[test]
fn rewritten_fa4_sources_in_a_wheel_keep_their_truth() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let mut rng = rng(11);
    let mut tally = BTreeMap::<(bool, String), usize>::new();
    let mut failures = Vec::new();
    for i in 0..cases() * 2 {
        let src = random_sources(&mut rng);
        let whl = tmp.path().join(format!(
            "{i}/vllm-0.29.0-cp38-abi3-manylinux_2_28_x86_64.whl"
        ));
        std::fs::create_dir_all(whl.parent().expect("parent")).expect("mkdir");
        wheel_of(&src, &whl);
        let v = scan(&whl, &cache);
        *tally.entry((src.buggy, v.fa4().join(","))).or_default() += 1;
        if let Some(why) = violation(&src, &v) {
            failures.push(format!(
                "case {i} [{}]: {why}; FA4 {:?}, exit {}",
                src.what.join("; "),
                v.fa4(),
                v.code
            ));
        }
    }
    common::require::announce(&format!(
        "corruption: wheel mutants (buggy, FA4 status) -> count: {tally:?}"
    ));
    assert!(
        failures.is_empty(),
        "seed {} (PINPROBE_CORRUPTION_SEED={0} replays):\n{}",
        seed(),
        failures.join("\n")
    );
}

#[test]
fn rewritten_fa4_sources_in_an_image_keep_their_truth() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let mut rng = rng(12);
    let mut failures = Vec::new();
    for i in 0..cases() / 2 {
        let src = random_sources(&mut rng);
        let mut files = build::vllm_install(
            SITE,
            "0.29.0",
            &String::from_utf8_lossy(&rewrite_imports(&src.block_info)),
            &String::from_utf8_lossy(&rewrite_imports(&src.sm90)),
        );
        if src.sm90_file != "flash_fwd_sm90.py" {
            // A move: rename the file in the layer and in RECORD.
            for (name, bytes) in &mut files {
                if name.ends_with("cute/flash_fwd_sm90.py") {
                    *name = name.replace("flash_fwd_sm90.py", src.sm90_file);
                } else if name.ends_with("RECORD") {
                    *bytes = String::from_utf8_lossy(bytes)
                        .replace("flash_fwd_sm90.py", src.sm90_file)
                        .into_bytes();
                }
            }
        }
        let image = Image::new(vec![
            Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
            Layer::new("RUN pip install vllm", Compression::Gzip).files(files),
        ]);
        let oci = tmp.path().join(format!("{i}.tar"));
        build::write_docker_save_oci(&oci, &image);
        let v = scan(&oci, &cache);
        if let Some(why) = violation(&src, &v) {
            failures.push(format!(
                "case {i} [{}]: {why}; FA4 {:?}, exit {}",
                src.what.join("; "),
                v.fa4(),
                v.code
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "seed {} (PINPROBE_CORRUPTION_SEED={0} replays):\n{}",
        seed(),
        failures.join("\n")
    );
}

// ---- semantic mutants of the pin file -------------------------------------------------------

/// A rewrite of the demo tree's pin and whether the pinned commit is still the affected one.
fn rewrite_pin(rng: &mut StdRng, cmake: &str) -> (Vec<String>, BTreeMap<String, String>, Truth) {
    let mut files = BTreeMap::new();
    let mut what = Vec::new();
    let mut text = cmake.to_string();
    let tag_line = format!("GIT_TAG {AFFECTED_PIN}");
    let mut truth = Truth::Affected;
    match rng.random_range(0..4) {
        0 => {}
        1 => {
            what.push("GIT_TAG through set()".into());
            text = text.replace(&tag_line, "GIT_TAG ${FA_PIN}");
            text = format!("set(FA_PIN {AFFECTED_PIN})\n{text}");
        }
        2 => {
            what.push("GIT_TAG quoted".into());
            text = text.replace(&tag_line, &format!("GIT_TAG \"{AFFECTED_PIN}\""));
        }
        _ => {
            what.push("GIT_TAG on its own line after a tab".into());
            text = text.replace(&tag_line, &format!("GIT_TAG\n\t{AFFECTED_PIN}"));
        }
    }
    if rng.random_bool(0.3) {
        what.push("the fix SHA in a comment".into());
        text = text.replace(
            "FetchContent_MakeAvailable",
            &format!("# bump to GIT_TAG {FIX} once tested\nFetchContent_MakeAvailable"),
        );
    }
    if rng.random_bool(0.2) {
        what.push("a dead if(FALSE) set() of the fix SHA".into());
        text = format!("if(FALSE)\n  set(FA_UNUSED {FIX})\nendif()\n{text}");
    }
    match rng.random_range(0..6) {
        0 => {
            what.push("pin moved to the fix".into());
            text = text.replace(AFFECTED_PIN, FIX);
            truth = Truth::NotAffected;
        }
        1 => {
            what.push("pin moved to an unknown commit".into());
            text = text.replace(AFFECTED_PIN, "0123456789abcdef0123456789abcdef01234567");
            truth = Truth::Undecidable;
        }
        2 => {
            what.push("pin shortened to 12 hex digits".into());
            text = text.replace(AFFECTED_PIN, &AFFECTED_PIN[..12]);
            truth = Truth::KeptButHidden;
        }
        _ => {}
    }
    if rng.random_bool(0.2) {
        what.push("CRLF".into());
        text = text.replace('\n', "\r\n");
    }
    if rng.random_bool(0.3) {
        what.push("declare moved to cmake/external_projects/fa.cmake".into());
        files.insert(
            "cmake/external_projects/vllm_flash_attn.cmake".into(),
            String::new(),
        );
        files.insert("cmake/external_projects/fa.cmake".into(), text);
        files.insert(
            "CMakeLists.txt".into(),
            "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(cmake/external_projects/fa.cmake)\ninclude(cmake/external_projects/flashmla.cmake)\n".into(),
        );
    } else {
        files.insert("cmake/external_projects/vllm_flash_attn.cmake".into(), text);
    }
    (what, files, truth)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Truth {
    /// The pin is the known affected commit, written so the pin finder sees it.
    Affected,
    /// The pin is the affected commit, but only a clone could tell (a short SHA).
    KeptButHidden,
    /// The pin is the fix commit.
    NotAffected,
    /// A commit nothing here knows.
    Undecidable,
}

#[test]
fn rewritten_pin_files_keep_their_truth() {
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm");
    let cmake = std::fs::read_to_string(demo.join("cmake/external_projects/vllm_flash_attn.cmake"))
        .expect("demo pin file");
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let mut rng = rng(13);
    let mut failures = Vec::new();
    for i in 0..cases() {
        let tree = tmp.path().join(format!("{i}"));
        std::fs::create_dir_all(&tree).expect("mkdir");
        copy_dir(&demo, &tree);
        let (what, files, truth) = rewrite_pin(&mut rng, &cmake);
        for (rel, text) in &files {
            if text.is_empty() {
                std::fs::remove_file(tree.join(rel)).expect("remove");
            } else {
                std::fs::write(tree.join(rel), text).expect("write");
            }
        }
        let v = scan(&tree, &cache);
        let fa4 = v.fa4();
        let ok = match truth {
            Truth::Affected => {
                !fa4.is_empty() && fa4.iter().all(|s| *s == "affected") && v.code == 1
            }
            Truth::KeptButHidden => {
                !fa4.is_empty() && !fa4.contains(&"not_affected") && v.code != 0
            }
            Truth::NotAffected => !fa4.is_empty() && fa4.iter().all(|s| *s == "not_affected"),
            Truth::Undecidable => {
                !fa4.is_empty() && fa4.iter().all(|s| *s == "unknown") && v.code == 3
            }
        };
        if !ok {
            failures.push(format!(
                "case {i} [{}]: expected {truth:?}, FA4 {fa4:?}, exit {}",
                what.join("; "),
                v.code
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "seed {} (PINPROBE_CORRUPTION_SEED={0} replays):\n{}",
        seed(),
        failures.join("\n")
    );
}

// ---- byte mutants ---------------------------------------------------------------------------

/// One corruption of a byte string, described for replay.
fn corrupt(bytes: &mut Vec<u8>, rng: &mut StdRng) -> String {
    if bytes.is_empty() {
        bytes.push(rng.random());
        return "insert into empty".into();
    }
    let at = rng.random_range(0..bytes.len());
    match rng.random_range(0..6) {
        0 => {
            let bit = rng.random_range(0..8);
            bytes[at] ^= 1 << bit;
            format!("flip bit {bit} at {at}")
        }
        1 => {
            bytes.truncate(at);
            format!("truncate at {at}")
        }
        2 => {
            let n = rng.random_range(1..16);
            let junk: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            bytes.splice(at..at, junk);
            format!("insert {n} random bytes at {at}")
        }
        3 => {
            let end = (at + rng.random_range(1..64)).min(bytes.len());
            for b in &mut bytes[at..end] {
                *b = rng.random();
            }
            format!("overwrite {at}..{end} with random bytes")
        }
        4 => {
            let end = (at + rng.random_range(1..64)).min(bytes.len());
            bytes.drain(at..end);
            format!("delete {at}..{end}")
        }
        _ => {
            let v = rng.random();
            bytes[at] = v;
            format!("set byte {at} to {v:#04x}")
        }
    }
}

/// Run `cases()` corruptions of `file` (restored from `original` each time): the FA4 rule is
/// never `not_affected`, no rule turns `not_affected` that was not before, and a scan without
/// an FA4 finding never exits 0. Returns the tally of exit codes.
fn check(name: &str, target: &Path, file: &Path, original: &[u8], stream: u64) -> [usize; 4] {
    let tmp = tempfile::tempdir().expect("tempdir");
    let before = scan(target, tmp.path());
    assert_eq!(
        before.code, 1,
        "{name}: the uncorrupted target must be affected"
    );
    assert!(before.fa4().contains(&"affected"), "{name}: {before:?}");
    let mut rng = rng(stream);
    let mut tally = [0usize; 4];
    for i in 0..cases() {
        let mut bytes = original.to_vec();
        let mut what = vec![corrupt(&mut bytes, &mut rng)];
        if rng.random_bool(0.25) {
            what.push(corrupt(&mut bytes, &mut rng));
        }
        std::fs::write(file, &bytes).expect("write");
        let v = scan(target, tmp.path());
        let replay = || {
            format!(
                "{name} case {i} (PINPROBE_CORRUPTION_SEED={}): `{}`",
                seed(),
                what.join(", ")
            )
        };
        assert!(
            !v.fa4().contains(&"not_affected"),
            "{}: {RULE} became not_affected: {v:?}",
            replay()
        );
        if v.fa4().is_empty() {
            assert_ne!(v.code, 0, "{}: no {RULE} finding and exit 0", replay());
        }
        for (key, status) in &v.status {
            if status == "not_affected" {
                assert_eq!(
                    before.status.get(key).map(String::as_str),
                    Some("not_affected"),
                    "{}: {key:?} became not_affected",
                    replay()
                );
            }
        }
        tally[v.code.clamp(0, 3) as usize] += 1;
    }
    std::fs::write(file, original).expect("restore");
    common::require::announce(&format!(
        "corruption: {name}: {} byte mutants, exit codes 0/1/2/3 = {tally:?}",
        cases()
    ));
    tally
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).expect("copy");
        }
    }
}

#[test]
fn a_corrupted_pin_file_is_never_clean() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tree = tmp.path().join("vllm");
    std::fs::create_dir_all(&tree).expect("mkdir");
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-vllm"),
        &tree,
    );
    let file = tree.join("cmake/external_projects/vllm_flash_attn.cmake");
    let original = std::fs::read(&file).expect("read");
    check("source tree", &tree, &file, &original, 1);
}

#[test]
fn a_corrupted_wheel_is_never_clean() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let whl = tmp
        .path()
        .join("vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    write_wheel(
        &whl,
        &with_dist_info(
            "vllm",
            "0.30.0",
            common::artifact::vllm_files("0.30.0", Sm90Call::Buggy),
        ),
    );
    let original = std::fs::read(&whl).expect("read");
    check("wheel", &whl, &whl.clone(), &original, 2);
}

#[test]
fn a_corrupted_image_is_never_clean() {
    let image = Image::new(vec![
        Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
        Layer::new("RUN pip install vllm==0.30.0", Compression::None).files(build::vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        )),
    ]);
    let tmp = tempfile::tempdir().expect("tempdir");
    // docker save, OCI form: blobs named by digest, the vLLM layer stored uncompressed.
    let oci = tmp.path().join("oci.tar");
    build::write_docker_save_oci(&oci, &image);
    let original = std::fs::read(&oci).expect("read");
    check(
        "image (docker save, OCI form)",
        &oci,
        &oci.clone(),
        &original,
        3,
    );
    // docker save, legacy form: layers checked against the config's diff ids only.
    let legacy = tmp.path().join("legacy.tar");
    build::write_docker_save_legacy(&legacy, &image.build(), false);
    let original = std::fs::read(&legacy).expect("read");
    check(
        "image (docker save, legacy)",
        &legacy,
        &legacy.clone(),
        &original,
        4,
    );
}
