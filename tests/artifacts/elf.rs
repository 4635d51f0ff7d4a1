//! ELF dynamic-symbol signatures end to end: the bounded reader judged against `nm -D` on
//! libraries built by the system C compiler and by a tiny writer, and wheels and environments
//! whose FA3 library (`vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so`) references a kernel it does
//! not define (PINPROBE-2026-0003, -0007). Bad libraries never give a clean verdict.

use crate::common;

use common::artifact::*;
use common::elf::{self, Sym};
use common::*;
use pinprobe::pin::shipped::elf::{SymbolKind, dynamic_symbols};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const R3: &str = "PINPROBE-2026-0003";
const R7: &str = "PINPROBE-2026-0007";
const FA3: &str = "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so";
/// vLLM 0.27.0's commit (rules/ledger.yaml): the ledger's recorded verdicts say `not_affected`
/// for every FlashAttention rule, so only the library can make them anything else.
const COMMIT_0_27_0: &str = "4bdc8a788";

/// What `nm -D` (the judge) lists: (name without a version suffix, kind).
fn nm(path: &Path) -> BTreeSet<(String, SymbolKind)> {
    let out = Command::new("nm").arg("-D").arg(path).output().expect("nm");
    assert!(out.status.success(), "nm -D {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (letter, name) = match fields.as_slice() {
                [letter, name] | [_, letter, name] => (*letter, *name),
                _ => return None,
            };
            let kind = match letter {
                "U" => SymbolKind::Undefined,
                "w" | "v" => SymbolKind::UndefinedWeak,
                _ => SymbolKind::Defined,
            };
            Some((name.split('@').next().unwrap_or(name).to_string(), kind))
        })
        .collect()
}

fn ours(bytes: &[u8]) -> BTreeSet<(String, SymbolKind)> {
    dynamic_symbols(&mut |f| f(&mut &bytes[..]))
        .expect("dynamic symbols")
        .symbols
        .into_iter()
        .map(|s| (s.name, s.kind))
        .collect()
}

#[test]
fn reader_agrees_with_nm_on_compiled_libraries() {
    if !common::require::require(
        common::require::tool("cc") && common::require::tool("nm"),
        "cc and nm (binutils) to build and judge shared libraries",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sources = [
        // The dispatch calls an SM80 kernel nobody defines: an undefined reference.
        format!(
            "void k(void) __asm__(\"{sm80}\");\nvoid d(void) __asm__(\"{d}\");\nvoid d(void) {{ k(); }}\n",
            sm80 = elf::SM80,
            d = elf::DISPATCH
        ),
        // The kernel is built: defined.
        format!(
            "void k(void) __asm__(\"{sm80}\");\nvoid k(void) {{}}\nvoid d(void) __asm__(\"{d}\");\nvoid d(void) {{ k(); }}\n",
            sm80 = elf::SM80,
            d = elf::DISPATCH
        ),
        // A weak reference, and libc.
        format!(
            "#include <stdio.h>\nvoid k(void) __asm__(\"{sm80}\") __attribute__((weak));\nvoid d(void) __asm__(\"{d}\");\nvoid d(void) {{ if (k) k(); puts(\"x\"); }}\n",
            sm80 = elf::SM80,
            d = elf::DISPATCH
        ),
    ];
    for (i, source) in sources.iter().enumerate() {
        let c = tmp.path().join(format!("lib{i}.c"));
        let so = tmp.path().join(format!("lib{i}.so"));
        std::fs::write(&c, source).unwrap();
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&c)
            .status()
            .expect("cc");
        assert!(status.success(), "cc -shared {}", c.display());
        let bytes = std::fs::read(&so).unwrap();
        assert_eq!(ours(&bytes), nm(&so), "library {i}:\n{source}");
    }
}

#[test]
fn reader_agrees_with_nm_on_written_libraries() {
    if !common::require::require(common::require::tool("nm"), "nm (binutils) to judge") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, how) in [Sym::Defined, Sym::Undefined, Sym::Weak]
        .into_iter()
        .enumerate()
    {
        let bytes = elf::fa3_library(elf::SM80, how);
        let so = tmp.path().join(format!("w{i}.so"));
        std::fs::write(&so, &bytes).unwrap();
        assert_eq!(ours(&bytes), nm(&so), "{how:?}");
    }
}

/// A vLLM wheel (fixed FA4 source) shipping `library` as its FA3 library (none: `None`).
fn wheel_with(
    dir: &Path,
    version: &str,
    commit: &str,
    library: Option<Vec<u8>>,
) -> std::path::PathBuf {
    let mut files = vllm_files(version, Sm90Call::Fixed);
    for (path, bytes) in files.iter_mut() {
        if path == "vllm/_version.py" {
            *bytes = format!(
                "__version__ = version = '{version}'\n__commit_id__ = commit_id = 'g{commit}'\n"
            )
            .into_bytes();
        }
    }
    // The other shipped files the FlashAttention rules' signatures read, in their fixed shapes.
    files.push((
        "vllm/vllm_flash_attn/flash_attn_interface.py".into(),
        b"try:\n    from . import _vllm_fa3_C\n    FA3_AVAILABLE = True\nexcept ImportError as e:\n    FA3_AVAILABLE = False\n".to_vec(),
    ));
    files.push((
        "vllm/vllm_flash_attn/cute/flash_fwd_sm100.py".into(),
        b"class FlashAttentionForwardSm100:\n    def softmax_loop(self):\n        max_offset = 8 if cutlass.const_expr(self.q_dtype.width == 8) else 0\n        rescale_threshold = 8.0 if const_expr(self.q_dtype.width == 16) else 0.0\n".to_vec(),
    ));
    if let Some(lib) = library {
        files.push((FA3.into(), lib));
    }
    let path = dir.join(format!(
        "vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl"
    ));
    write_wheel(&path, &with_dist_info("vllm", version, files));
    path
}

fn statuses(target: &Path, cache: &Path) -> (i32, Value) {
    let run = Pinprobe::new(&["scan", target.to_str().unwrap(), "--format", "json"])
        .cache(cache)
        .run();
    (run.code, run.json())
}

/// The status of `rule` on the bundled flash-attention copy.
fn status(report: &Value, rule: &str) -> String {
    report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule && f["component"] == "flash-attention")
        .and_then(|f| f["status"].as_str())
        .unwrap_or_else(|| panic!("no {rule} finding: {report:#}"))
        .to_string()
}

#[test]
fn the_fa3_library_decides_on_a_wheel_and_an_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cases = [
        (elf::SM80, Sym::Undefined, "affected", "not_affected"),
        (elf::SM80, Sym::Defined, "not_affected", "not_affected"),
        (elf::SM80, Sym::Weak, "not_affected", "not_affected"),
        (
            elf::SM90_UNPACKED,
            Sym::Undefined,
            "not_affected",
            "affected",
        ),
        (
            elf::SM90_UNPACKED,
            Sym::Defined,
            "not_affected",
            "not_affected",
        ),
    ];
    for (i, (kernel, how, r7, r3)) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("w{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = elf::fa3_library(kernel, how);
        let wheel = wheel_with(&dir, "0.30.0", "0a1b2c3d4", Some(lib.clone()));
        let (_, report) = statuses(&wheel, &cache);
        assert_eq!(
            status(&report, R7),
            r7,
            "wheel {kernel} {how:?}: {report:#}"
        );
        assert_eq!(status(&report, R3), r3, "wheel {kernel} {how:?}");
        // The same install unpacked: the library streams from the file.
        let site = tmp.path().join(format!("site{i}"));
        let mut files = vllm_files("0.30.0", Sm90Call::Fixed);
        files.push((FA3.into(), lib));
        write_tree(&site, &with_dist_info("vllm", "0.30.0", files));
        let (_, report) = statuses(&site, &cache);
        assert_eq!(status(&report, R7), r7, "environment {kernel} {how:?}");
        assert_eq!(status(&report, R3), r3, "environment {kernel} {how:?}");
    }
}

#[test]
fn bad_libraries_never_give_a_clean_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let good = elf::fa3_library(elf::SM80, Sym::Defined);
    // Control: with a good library the ledger and the library agree: not affected, exit 0.
    let dir = tmp.path().join("good");
    std::fs::create_dir_all(&dir).unwrap();
    let (code, report) = statuses(
        &wheel_with(&dir, "0.27.0", COMMIT_0_27_0, Some(good.clone())),
        &cache,
    );
    assert_eq!(status(&report, R7), "not_affected", "{report:#}");
    assert_eq!(status(&report, R3), "not_affected");
    assert_eq!(code, 0, "{report:#}");
    let mut wrong_class = good.clone();
    wrong_class[elf::CLASS] = 1;
    let mut huge_count = good.clone();
    huge_count[elf::SHNUM..elf::SHNUM + 2].copy_from_slice(&u16::MAX.to_le_bytes());
    let bad: [(&str, Option<Vec<u8>>); 6] = [
        ("truncated", Some(good[..good.len() - 10].to_vec())),
        ("header only", Some(good[..64].to_vec())),
        ("wrong class", Some(wrong_class)),
        ("huge section count", Some(huge_count)),
        ("not ELF", Some(b"#!/bin/sh\necho not a library\n".to_vec())),
        (
            "not the FA3 library",
            Some(elf::shared_object(&[("other", Sym::Defined)])),
        ),
    ];
    for (name, lib) in bad.into_iter().chain([("missing", None)]) {
        let dir = tmp.path().join(name.replace(' ', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        let (code, report) = statuses(&wheel_with(&dir, "0.27.0", COMMIT_0_27_0, lib), &cache);
        for rule in [R3, R7] {
            assert_eq!(
                status(&report, rule),
                "unknown",
                "{name}: {rule}: {report:#}"
            );
        }
        assert_eq!(code, 3, "{name}");
        assert!(
            report.to_string().contains("symbol signature undecidable"),
            "{name}: {report:#}"
        );
    }
}

#[test]
fn a_library_that_disagrees_with_record_is_not_trusted_in_a_wheel() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // RECORD written for one clean library, another clean library shipped in its place.
    let mut files = vllm_files("0.27.0", Sm90Call::Fixed);
    for (path, bytes) in files.iter_mut() {
        if path == "vllm/_version.py" {
            *bytes = format!(
                "__version__ = version = '0.27.0'\n__commit_id__ = commit_id = 'g{COMMIT_0_27_0}'\n"
            )
            .into_bytes();
        }
    }
    files.push((FA3.into(), elf::fa3_library(elf::SM80, Sym::Defined)));
    let mut files = with_dist_info("vllm", "0.27.0", files);
    for (path, bytes) in files.iter_mut() {
        if path == FA3 {
            *bytes = elf::fa3_library(elf::SM80, Sym::Weak);
        }
    }
    let wheel = tmp
        .path()
        .join("vllm-0.27.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    write_wheel(&wheel, &files);
    let (_, report) = statuses(&wheel, &cache);
    assert_eq!(status(&report, R7), "unknown", "{report:#}");
    assert!(
        report
            .to_string()
            .contains("_vllm_fa3_C.abi3.so was modified after install")
    );
}

/// `pinprobe scan TARGETS --jobs 2` with the cache in `cache` (else a fresh one): the JSON
/// and the library symbol tables read and reused (`PINPROBE_STATS`).
fn scan_counting(targets: &[&Path], cache: Option<&Path>) -> (Value, (u64, u64)) {
    let mut args = vec!["scan".to_string()];
    args.extend(targets.iter().map(|t| t.to_str().unwrap().to_string()));
    args.extend(["--format", "json", "--jobs", "2"].map(String::from));
    let mut run = Pinprobe::new(&args).env("PINPROBE_STATS", "1");
    if let Some(cache) = cache {
        run = run.cache(cache);
    }
    let run = run.run();
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.split("library symbol tables: ").nth(1))
        .unwrap_or_else(|| panic!("no library stats: {}", run.stderr))
        .to_string();
    let counts: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().unwrap())
        .collect();
    (run.json(), (counts[0], counts[1]))
}

/// An environment holding the FA3 library `lib`, written more than two seconds ago (a
/// library's table is kept only once its file has settled).
fn environment(root: &Path, lib: Vec<u8>) {
    let mut files = vllm_files("0.30.0", Sm90Call::Fixed);
    files.push((FA3.into(), lib));
    write_tree(root, &with_dist_info("vllm", "0.30.0", files));
}

#[test]
fn an_installed_library_rewritten_in_place_with_its_times_set_back_is_read_again() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let site = tmp.path().join("site");
    environment(&site, elf::fa3_library(elf::SM80, Sym::Undefined));
    let lib = site.join(FA3);
    let before = std::fs::metadata(&lib).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (report, counts) = scan_counting(&[&site], Some(&cache));
    assert_eq!(status(&report, R7), "affected", "{report:#}");
    assert_eq!(counts, (1, 0), "read once");
    let (report, counts) = scan_counting(&[&site], Some(&cache));
    assert_eq!(status(&report, R7), "affected");
    assert_eq!(counts, (0, 1), "served by its stamp");
    // The same size, one binding byte different (an undefined reference made weak), written
    // over the same inode, then its access and modification times set back (utimensat).
    let rewritten = elf::fa3_library(elf::SM80, Sym::Weak);
    assert_eq!(rewritten.len() as u64, before.len());
    let mut file = std::fs::OpenOptions::new().write(true).open(&lib).unwrap();
    file.write_all(&rewritten).unwrap();
    file.set_times(
        std::fs::FileTimes::new()
            .set_accessed(before.accessed().unwrap())
            .set_modified(before.modified().unwrap()),
    )
    .unwrap();
    drop(file);
    let after = std::fs::metadata(&lib).unwrap();
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (after.ino(), after.len(), after.mtime(), after.mtime_nsec()),
            (
                before.ino(),
                before.len(),
                before.mtime(),
                before.mtime_nsec()
            ),
            "the same inode, size and modification time"
        );
    }
    let (report, counts) = scan_counting(&[&site], Some(&cache));
    assert_eq!(counts, (1, 0), "read again: {report:#}");
    // The verdict follows the bytes now installed (what runs: the reference is weak), with
    // RECORD's disagreement beside it; a stale table would still say `affected`.
    assert_eq!(status(&report, R7), "not_affected", "{report:#}");
    assert!(
        report
            .to_string()
            .contains("_vllm_fa3_C.abi3.so was modified after install"),
        "{report:#}"
    );
}

#[test]
fn one_reader_per_identical_library_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    // Two environments whose libraries are one file (hard links, as uv installs from its
    // cache), and a third holding a copy: the copy is another file, read on its own.
    let (one, two, copy) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("copy"),
    );
    let lib = elf::fa3_library(elf::SM80, Sym::Undefined);
    for root in [&one, &two, &copy] {
        environment(root, lib.clone());
    }
    std::fs::remove_file(two.join(FA3)).unwrap();
    std::fs::hard_link(one.join(FA3), two.join(FA3)).unwrap();
    // Two copies of one wheel.
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let wheel = wheel_with(&wheels, "0.30.0", "0a1b2c3d4", Some(lib.clone()));
    let twin = tmp
        .path()
        .join("vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl");
    std::fs::copy(&wheel, &twin).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for cache in [None, Some(tmp.path().join("cache"))] {
        let (report, counts) = scan_counting(&[&one, &two], cache.as_deref());
        assert_eq!(counts, (1, 1), "{cache:?}");
        for target in 0..2 {
            let findings = report["targets"][target]["findings"].as_array().unwrap();
            assert!(
                findings
                    .iter()
                    .any(|f| f["rule"] == R7 && f["status"] == "affected"),
                "{report:#}"
            );
        }
        let (_, counts) = scan_counting(&[&wheel, &twin], cache.as_deref());
        assert_eq!(counts, (1, 1), "two identical wheels: {cache:?}");
    }
    let (_, counts) = scan_counting(&[&one, &copy], None);
    assert_eq!(counts, (2, 0), "a copy is another file");
}
