//! Every form a kernel pin takes, on real git repositories built here: vLLM 0.30.0's known
//! affected FlashAttention commit (or `vllm==0.30.0`) as an archive `URL` + `URL_HASH` in vLLM's
//! layout and under another name, in a CMake project below the root, as a git submodule (work
//! tree, `--rev`, bare repository), and in `requirements.txt`, `pyproject.toml`, `uv.lock` and a
//! Dockerfile's `pip install`
//! comes out affected with exit 1 in `scan` (tree and `--rev`) and in `diff`. A `vllm`
//! requirement resolves through the release ledger (checked against the ledger's own data for
//! every release), a range is judged over the versions it allows, and the versions a specifier
//! allows agree with pip's choice among local wheels (when `python3 -m pip` is present).

use crate::common;

use common::*;
use std::path::Path;

const R1: &str = "PINPROBE-2026-0001";
/// vLLM 0.30.0's FlashAttention pin, a known affected pin of R1 (rules/PINPROBE-2026-0001.yaml).
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
const HASH: &str = "SHA256=98cbb200b5057db2b4a40fdd80fb6eae65e784c751ce6d05a9b220f70b797879";

fn archive_declare(name: &str, url: &str) -> String {
    format!(
        "include(FetchContent)\nFetchContent_Declare(\n  {name}\n  URL {url}\n  URL_HASH {HASH}\n)\nFetchContent_MakeAvailable({name})\n"
    )
}

fn root_cmake(include: &str) -> String {
    format!(
        "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\ninclude({include})\n"
    )
}

/// Files by path, with their text.
type Files = Vec<(&'static str, String)>;

/// One form: the files that pin, written into a fresh repository.
struct Form {
    name: &'static str,
    files: Vec<(&'static str, String)>,
    /// Extra setup in the repository before the commit (a gitlink).
    gitlink: Option<(&'static str, &'static str)>,
}

fn forms() -> Vec<Form> {
    let fa_archive =
        format!("https://github.com/vllm-project/flash-attention/archive/{AFFECTED}.tar.gz");
    vec![
        Form {
            name: "archive URL in vLLM's layout",
            files: vec![
                ("CMakeLists.txt", root_cmake("cmake/external_projects/vllm_flash_attn.cmake")),
                (
                    "cmake/external_projects/vllm_flash_attn.cmake",
                    archive_declare("vllm-flash-attn", &fa_archive),
                ),
            ],
            gitlink: None,
        },
        Form {
            name: "archive URL under another name",
            files: vec![(
                "CMakeLists.txt",
                format!(
                    "cmake_minimum_required(VERSION 3.26)\nproject(k)\n{}",
                    archive_declare(
                        "repo-flash-attention",
                        &format!("https://codeload.github.com/vllm-project/flash-attention/tar.gz/{AFFECTED}")
                    )
                ),
            )],
            gitlink: None,
        },
        Form {
            name: "a fork's archive in a CMake project below the root",
            files: vec![
                ("README.md", "an engine whose kernels build in sgl-kernel/\n".to_string()),
                (
                    "sgl-kernel/CMakeLists.txt",
                    format!(
                        "cmake_minimum_required(VERSION 3.26)\nproject(sgl-kernel LANGUAGES CXX)\n{}",
                        archive_declare(
                            "repo-flash-attention",
                            &format!("https://github.com/sgl-project/sgl-attn/archive/{AFFECTED}.zip")
                        )
                    ),
                ),
            ],
            gitlink: None,
        },
        Form {
            name: "archive URL whose host a cache variable can change",
            files: vec![(
                "CMakeLists.txt",
                format!(
                    "cmake_minimum_required(VERSION 3.26)\nproject(k)\nset(GITHUB_ARTIFACTORY \"github.com\" CACHE STRING \"mirror\")\n{}",
                    archive_declare(
                        "repo-flash-attention",
                        &format!("https://${{GITHUB_ARTIFACTORY}}/vllm-project/flash-attention/archive/{AFFECTED}.tar.gz")
                    )
                ),
            )],
            gitlink: None,
        },
        Form {
            name: "git submodule",
            files: vec![(
                ".gitmodules",
                "[submodule \"third_party/flash-attention\"]\n\tpath = third_party/flash-attention\n\turl = https://github.com/vllm-project/flash-attention.git\n".to_string(),
            )],
            gitlink: Some(("third_party/flash-attention", AFFECTED)),
        },
        Form {
            name: "requirements.txt",
            files: vec![
                ("requirements.txt", "-r requirements/common.txt\nvllm==0.30.0 \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n".to_string()),
                ("requirements/common.txt", "numpy>=1.26\n".to_string()),
            ],
            gitlink: None,
        },
        Form {
            name: "pyproject.toml",
            files: vec![(
                "pyproject.toml",
                "[project]\nname = \"deploy\"\nversion = \"1.0\"\ndependencies = [\n  \"vllm[audio]==0.30.0\",\n]\n".to_string(),
            )],
            gitlink: None,
        },
        Form {
            name: "Dockerfile pip install",
            files: vec![(
                "docker/Dockerfile",
                "FROM python:3.12-slim\nARG VLLM_VERSION=0.30.0\nRUN python3 -m pip install --no-cache-dir \\\n    \"vllm==${VLLM_VERSION}\"\n".to_string(),
            )],
            gitlink: None,
        },
        Form {
            name: "uv.lock",
            files: vec![(
                "uv.lock",
                "version = 1\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"vllm\"\nversion = \"0.30.0\"\nsource = { registry = \"https://example.invalid/simple\" }\n".to_string(),
            )],
            gitlink: None,
        },
    ]
}

/// A repository with an empty base commit and the form at HEAD; returns the base.
fn repository(dir: &Path, form: &Form) -> String {
    init(dir);
    write(dir, "NOTES", "base\n");
    let base = commit(dir, "base");
    for (path, text) in &form.files {
        write(dir, path, text);
    }
    git(dir, &["add", "-A"]);
    if let Some((path, sha)) = form.gitlink {
        // A gitlink with nothing checked out at its path (`git add -A` would drop it).
        let entry = format!("160000,{sha},{path}");
        git(dir, &["update-index", "--add", "--cacheinfo", &entry]);
    }
    git(dir, &["commit", "-q", "-m", form.name]);
    base
}

fn scan(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["scan", ".", "--format", "json"];
    args.extend_from_slice(extra);
    Pinprobe::new(&args).dir(dir).run()
}

/// How a form is read: the cells of the matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// `scan .` of the work tree.
    Tree,
    /// `scan . --rev HEAD`.
    Rev,
    /// `diff BASE HEAD` (the form is introduced by the head).
    Diff,
    /// `scan BARE.git --rev HEAD` of a bare clone (submodules only: the other forms are files).
    Bare,
}

/// Which cells a form has: every form in the tree, at `--rev` and in `diff`; a submodule also
/// in a bare repository.
fn modes(form: &Form) -> Vec<Mode> {
    let mut out = vec![Mode::Tree, Mode::Rev, Mode::Diff];
    if form.gitlink.is_some() {
        out.push(Mode::Bare);
    }
    out
}

/// One cell: run it, and say what is wrong (`None`: affected with exit 1, R1 named).
fn cell(tmp: &Path, dir: &Path, base: &str, mode: Mode) -> Option<String> {
    let run = match mode {
        Mode::Tree => scan(dir, &[]),
        Mode::Rev => scan(dir, &["--rev", "HEAD"]),
        Mode::Diff => Pinprobe::new(&["diff", base, "HEAD", "--format", "json"])
            .dir(dir)
            .run(),
        Mode::Bare => {
            let bare = tmp.join("bare.git");
            if !bare.exists() {
                git(tmp, &["clone", "-q", "--bare", "repo", "bare.git"]);
            }
            let path = bare.display().to_string();
            Pinprobe::new(&["scan", &path, "--rev", "HEAD", "--format", "json"]).run()
        }
    };
    if run.code != 1 {
        return Some(format!("exit {} (want 1)\n{}", run.code, run.all()));
    }
    let json: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
    let statuses: Vec<String> = if mode == Mode::Diff {
        // Before the form the base pinned nothing: the bump introduces the finding.
        json["changes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["rule"] == R1)
            .map(|c| format!("{} {}", c["status"], c["change"]))
            .collect()
    } else {
        json["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["findings"].as_array().into_iter().flatten())
            .filter(|f| f["rule"] == R1)
            .map(|f| f["status"].to_string())
            .collect()
    };
    let want = if mode == Mode::Diff {
        "\"affected\" \"introduced\""
    } else {
        "\"affected\""
    };
    let good = !statuses.is_empty() && statuses.iter().all(|s| s == want);
    (!good).then(|| format!("{R1}: {statuses:?}\n{}", run.stdout))
}

/// The matrix of the "done when": every form of vLLM 0.30.0's affected FlashAttention
/// pin (or `vllm==0.30.0`) in every way of reading it comes out affected with exit 1, offline
/// (the runner sets `PINPROBE_OFFLINE=1` and no clone is given: the known pin and the release
/// ledger decide). Every failing cell is listed, not only the first.
#[test]
fn every_form_of_the_affected_pin_is_affected_in_scan_rev_and_diff() {
    let mut failures = Vec::new();
    let mut cells = 0;
    for form in forms() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("repo");
        let base = repository(&dir, &form);
        for mode in modes(&form) {
            cells += 1;
            if let Some(why) = cell(tmp.path(), &dir, &base, mode) {
                failures.push(format!("{} / {mode:?}: {why}", form.name));
            }
        }
        if form.gitlink.is_some() {
            // Named relative to a directory beside it (gix's upward search once panicked here).
            let relative =
                Pinprobe::new(&["scan", "../bare.git", "--rev", "HEAD", "--format", "json"])
                    .dir(&dir)
                    .run();
            assert_eq!(relative.code, 1, "../bare.git\n{}", relative.all());
            // A staged bump in the work tree is what the work tree pins.
            git(
                &dir,
                &[
                    "update-index",
                    "--cacheinfo",
                    &format!("160000,{},third_party/flash-attention", "1".repeat(40)),
                ],
            );
            let staged = scan(&dir, &[]);
            assert_ne!(
                staged.code,
                1,
                "the staged gitlink is not the affected pin\n{}",
                staged.all()
            );
            assert!(staged.stdout.contains(&"1".repeat(40)), "{}", staged.stdout);
        }
    }
    // 9 forms in tree, --rev and diff, and the submodule in a bare repository.
    assert_eq!(cells, forms().len() * 3 + 1);
    assert!(
        failures.is_empty(),
        "{} of {cells} cells fail:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_archive_pin_keeps_its_url_hash_and_names_the_repository() {
    let form = &forms()[0];
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    repository(&dir, form);
    let json = scan(&dir, &[]).json();
    let pin = &json["targets"][0]["components"][0];
    assert_eq!(pin["component"], "flash-attention");
    assert_eq!(pin["commit"], AFFECTED);
    assert_eq!(pin["url_hash"], HASH);
    assert_eq!(pin["found_by"], "cmake URL archive");
    assert_eq!(
        pin["repo_canonical"],
        "github.com/vllm-project/flash-attention"
    );
}

/// An archive pin with a value per configuration: each `possible` value carries its own `URL`
/// and `URL_HASH`, so a reader can tell which archive each configuration downloads.
#[test]
fn each_configurations_archive_keeps_its_url_and_hash() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    let mirror = format!("https://github.com/vllm-project/flash-attention/archive/{AFFECTED}.zip");
    let mirror_hash = "SHA256=0000000000000000000000000000000000000000000000000000000000000001";
    let form = Form {
        name: "archive per configuration",
        files: vec![(
            "CMakeLists.txt",
            format!(
                "cmake_minimum_required(VERSION 3.26)\nproject(kernels LANGUAGES CXX)\n\
                 include(FetchContent)\noption(USE_ZIP \"zip archive\" OFF)\nif(USE_ZIP)\n\
                 FetchContent_Declare(vllm-flash-attn URL {mirror} URL_HASH {mirror_hash})\n\
                 else()\nFetchContent_Declare(vllm-flash-attn URL https://github.com/vllm-project/\
                 flash-attention/archive/{AFFECTED}.tar.gz URL_HASH {HASH})\nendif()\n\
                 FetchContent_MakeAvailable(vllm-flash-attn)\n"
            ),
        )],
        gitlink: None,
    };
    repository(&dir, &form);
    let run = scan(&dir, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json = run.json();
    let pin = &json["targets"][0]["components"][0];
    let possible = pin["possible"]
        .as_array()
        .expect("a value per configuration");
    let mut seen: Vec<(String, String)> = possible
        .iter()
        .map(|p| {
            (
                p["url"].as_str().expect("url").to_string(),
                p["url_hash"].as_str().expect("url_hash").to_string(),
            )
        })
        .collect();
    seen.sort();
    let tar = format!("https://github.com/vllm-project/flash-attention/archive/{AFFECTED}.tar.gz");
    assert_eq!(
        seen,
        vec![(tar, HASH.to_string()), (mirror, mirror_hash.to_string())],
        "{pin}"
    );
}

/// A reference pinprobe cannot resolve is never a clean exit: an archive URL that is no forge
/// archive, a lookalike repository, a vLLM version the ledger does not know, a range that
/// allows such versions.
#[test]
fn unresolved_kernel_references_are_unknown_never_clean() {
    let cases: Vec<(&str, Files, &str)> = vec![
        (
            "an archive URL that names no revision",
            vec![(
                "CMakeLists.txt",
                format!("project(k)\n{}", archive_declare("vllm-flash-attn", "https://mirror.example.invalid/fa.tar.gz")),
            )],
            "mirror.example.invalid/fa.tar.gz",
        ),
        (
            "an unknown fork that looks like FlashAttention",
            vec![(
                "CMakeLists.txt",
                "project(k)\ninclude(FetchContent)\nFetchContent_Declare(kernels GIT_REPOSITORY https://git.example.invalid/team/my-flash-attn.git GIT_TAG 1111111111111111111111111111111111111111)\nFetchContent_MakeAvailable(kernels)\n".to_string(),
            )],
            "fork",
        ),
        (
            "a vLLM version the ledger does not know",
            vec![("requirements.txt", "vllm==0.20.0\n".to_string())],
            "does not know",
        ),
        (
            "a range that allows versions the ledger does not know",
            vec![("requirements.txt", "vllm>=0.29,<0.31\n".to_string())],
            "does not know",
        ),
    ];
    for (what, files, named) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (p, t) in &files {
            write(tmp.path(), p, t);
        }
        let run = scan(tmp.path(), &[]);
        assert_eq!(run.code, 3, "{what}: undecided\n{}", run.all());
        run.assert_status(R1, "unknown");
        assert!(
            run.stdout.contains(named),
            "{what}: names `{named}`\n{}",
            run.stdout
        );
    }
}

/// `vllm==V` pins, for every release in the ledger, the ledger's FlashAttention commit of V.
#[test]
fn a_vllm_version_resolves_to_the_ledgers_pins_for_every_release() {
    let (db, _) = pinprobe::rules::load(None).expect("rules load");
    let ledger = db.ledger();
    assert!(!ledger.releases.is_empty());
    for release in &ledger.releases {
        let text = format!("vllm=={}", release.version);
        let req = pinprobe::pin::python::parse_pep508(&text, "requirements", "requirements.txt", 1)
            .expect("parses");
        let pins = pinprobe::scan::python::pins(&[req], &db);
        for lp in release
            .pins
            .iter()
            .filter(|p| p.configurations.iter().any(|c| c == "cuda"))
        {
            let Some(component) = &lp.component else {
                continue;
            };
            let pin = pins
                .iter()
                .find(|p| &p.component == component)
                .unwrap_or_else(|| panic!("{text}: a {component} pin"));
            assert_eq!(
                pin.reference.as_deref(),
                Some(lp.reference.as_str()),
                "{text} {component}"
            );
            assert_eq!(
                pin.commit.as_ref().map(|c| c.to_string()),
                lp.commit.as_ref().map(|c| c.to_ascii_lowercase())
            );
            assert!(pin.possible.is_empty(), "{text}: one exact value");
        }
        assert_eq!(
            pins.iter()
                .map(|p| &p.component)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            pins.len(),
            "{text}: one pin per component"
        );
    }
}

/// Offline and with no clone, `vllm==V` gets, for every release V in the ledger, every verdict
/// the ledger records for V's pins (the release's own data decides, not a clone), and the exit
/// code follows: 1 when a finding is affected, else 3 while some rule stays undecided. vLLM 0.33.0's
/// FA4 verdict is recorded (`not_affected`, from its wheel), so it is decided; the rules whose
/// verdicts the ledger does not record for 0.33.0 (the clones lacked its pins) stay unknown.
#[test]
fn a_vllm_version_gets_the_ledgers_recorded_verdicts_offline() {
    let (db, _) = pinprobe::rules::load(None).expect("rules load");
    let mut checked = 0;
    for release in &db.ledger().releases {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(
            tmp.path(),
            "requirements.txt",
            &format!("vllm=={}\n", release.version),
        );
        let run = scan(tmp.path(), &[]);
        let json = run.json();
        let findings: Vec<&serde_json::Value> = json["targets"][0]["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        let mut any_affected = false;
        for lp in release
            .pins
            .iter()
            .filter(|p| p.configurations.iter().any(|c| c == "cuda"))
        {
            let Some(component) = &lp.component else {
                continue;
            };
            for v in &lp.verdicts {
                let f = findings
                    .iter()
                    .find(|f| f["rule"] == v.rule.as_str() && f["component"] == component.as_str())
                    .unwrap_or_else(|| {
                        panic!(
                            "vllm=={}: {} on {component}\n{}",
                            release.version, v.rule, run.stdout
                        )
                    });
                assert_eq!(
                    f["status"],
                    v.status.as_str(),
                    "vllm=={}: {} on {component} as the ledger records it\n{f}",
                    release.version,
                    v.rule
                );
                any_affected |= v.status == "affected";
                checked += 1;
            }
        }
        // Other evidence (a version range, a known pin) may decide more rules affected.
        let affected = findings.iter().any(|f| {
            f["rule"]
                .as_str()
                .is_some_and(|r| r.starts_with("PINPROBE-"))
                && f["status"] == "affected"
        });
        assert!(affected || !any_affected);
        let want = if affected { 1 } else { 3 };
        assert_eq!(run.code, want, "vllm=={}\n{}", release.version, run.all());
    }
    assert!(checked > 20, "the ledger records verdicts ({checked})");
    // 0.33.0 in particular: FA4 decided from the ledger, not unknown.
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "requirements.txt", "vllm==0.33.0\n");
    scan(tmp.path(), &[]).assert_status(R1, "not_affected");
}

/// A range over known releases only: one value per release, judged over the set. `>=0.30.0,
/// <=0.30.0` is 0.30.0 alone; a constraint file narrows a range the same way.
#[test]
fn ranges_and_constraints_are_judged_over_the_versions_they_allow() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        "requirements.txt",
        "-c constraints.txt\nvllm>=0.30\n",
    );
    write(tmp.path(), "constraints.txt", "vllm<=0.30.0\n");
    let run = scan(tmp.path(), &[]);
    assert_eq!(run.code, 1, "{}", run.all());
    run.assert_status(R1, "affected");
    // Without the constraint the range allows versions the ledger does not know.
    write(tmp.path(), "constraints.txt", "numpy<3\n");
    let run = scan(tmp.path(), &[]);
    assert_eq!(run.code, 3, "{}", run.all());
}

/// The versions pinprobe says a specifier allows agree with pip: among local wheels of every
/// version, pip installs the newest one the specifier allows (or fails when it allows none).
#[test]
fn specifiers_select_what_pip_selects() {
    let have_pip = std::process::Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !require::require(have_pip, "python3 -m pip (CI: .ci/run installs it)") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).expect("mkdir");
    let versions = [
        "0.29.0",
        "0.30.0",
        "0.30.1",
        "0.31.0",
        "0.32.0rc1",
        "0.32.0",
        "0.33.0",
    ];
    for v in versions {
        let files =
            artifact::with_dist_info("vllm", v, vec![("vllm/__init__.py".into(), b"".to_vec())]);
        artifact::write_wheel(&wheels.join(format!("vllm-{v}-py3-none-any.whl")), &files);
    }
    for spec in [
        "==0.30.0",
        ">=0.30,<0.32",
        "~=0.30.0",
        "!=0.33.0",
        "<0.30",
        ">0.33",
        "==0.30.*",
        ">=0.31",
        "<=0.31.0,!=0.31.0",
        "===0.29.0",
        ">=0.32.0rc1",
        "",
    ] {
        let requirement = format!("vllm{spec}");
        let out = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--quiet",
                "--no-deps",
                "--no-index",
                "--ignore-installed",
                "--disable-pip-version-check",
                "--report",
                "-",
                "--find-links",
            ])
            .arg(&wheels)
            .arg(&requirement)
            .output()
            .expect("pip runs");
        let chosen = if out.status.success() {
            let report: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("pip's report");
            report["install"][0]["metadata"]["version"]
                .as_str()
                .map(str::to_string)
        } else {
            None
        };
        let req = pinprobe::pin::python::parse_pep508(&requirement, "t", "t", 1).expect("parses");
        let pinprobe::pin::python::Allowed::Versions(set) = &req.allowed else {
            panic!("a version set")
        };
        let parse = |v: &str| -> pep508_rs::pep440_rs::Version { v.parse().expect("version") };
        // pip skips pre-releases unless the specifier names one or nothing else is allowed.
        let allowed: Vec<&str> = versions
            .iter()
            .copied()
            .filter(|v| set.contains(&parse(v)))
            .collect();
        let finals: Vec<&str> = allowed
            .iter()
            .copied()
            .filter(|v| !parse(v).any_prerelease())
            .collect();
        let ours = if spec.contains("rc") || finals.is_empty() {
            allowed.last()
        } else {
            finals.last()
        };
        assert_eq!(
            chosen.as_deref(),
            ours.copied(),
            "`{requirement}`: pip chose {chosen:?}, pinprobe allows {allowed:?}"
        );
    }
}

/// `.gitmodules` read as git reads it (`git config -f .gitmodules`).
#[test]
fn gitmodules_parse_as_git_config_does() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let text = "# kernels\n[submodule \"fa\"]\n\tpath = third_party/flash-attention\n\tURL = \"https://github.com/Dao-AILab/flash-attention.git\" ; upstream\n[core]\n\tbare = false\n[submodule \"cutlass\"]\n  path=third_party/cutlass # vendored\n  url=https://github.com/NVIDIA/cutlass\n[submodule \"with \\\"quote\"]\n\tpath = \"a b/c\"\n\turl = git@github.com:o/r.git\n";
    write(tmp.path(), ".gitmodules", text);
    let listed = git(
        tmp.path(),
        &[
            "config",
            "-f",
            ".gitmodules",
            "--get-regexp",
            "^submodule\\.",
        ],
    );
    let mut theirs: Vec<String> = listed.lines().map(str::to_string).collect();
    theirs.sort();
    let mut ours: Vec<String> = Vec::new();
    for s in pinprobe::pin::submodule::parse_gitmodules(text) {
        if let Some(p) = &s.path {
            ours.push(format!("submodule.{}.path {p}", s.name));
        }
        if let Some(u) = &s.url {
            ours.push(format!("submodule.{}.url {u}", s.name));
        }
    }
    ours.sort();
    assert_eq!(ours, theirs);
}

/// A bump of `vllm==A` to `vllm==B` is each kernel pin moving (paired by component and
/// distribution), and the head's affected pin fails the gate.
#[test]
fn a_vllm_bump_moves_each_kernel_pin_in_diff() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    init(dir);
    write(dir, "requirements.txt", "vllm==0.29.0\n");
    let base = commit(dir, "0.29.0");
    write(dir, "requirements.txt", "vllm==0.30.0\n");
    commit(dir, "0.30.0");
    let run = Pinprobe::new(&["diff", &base, "HEAD", "--format", "json"])
        .dir(dir)
        .run();
    // The base's 0.29.0 pin is decided `not_affected` by the ledger's recorded verdict (no
    // clone): the head's affected pin is introduced, and the gate fails with 1.
    assert_eq!(run.code, 1, "{}", run.all());
    let json = run.json();
    let r1 = json["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["rule"] == R1 && c["component"] == "flash-attention")
        .unwrap_or_else(|| panic!("R1 on flash-attention: {}", run.stdout));
    assert_eq!(r1["status"], "affected", "{r1}");
    let fa = json["pins"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["component"] == "flash-attention")
        .unwrap_or_else(|| panic!("a flash-attention pin: {}", run.stdout));
    assert_eq!(fa["change"], "changed", "{fa}");
    assert_eq!(fa["head"]["commit"], AFFECTED);
}

/// A submodule's own submodules: a library added as a submodule pins FlashAttention as its
/// submodule. The work tree reads the library's checkout (its `.gitmodules`, its index); a
/// revision reads the commit the superproject records, from the library's repository under
/// `.git/modules/`. A bare clone holds no submodule repositories: the nested pin cannot be
/// read, the scan says so, and the target is undecided, never clean.
#[test]
fn nested_submodules_are_read_in_the_work_tree_and_at_a_revision() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let inner = tmp.path().join("library");
    init(&inner);
    write(
        &inner,
        ".gitmodules",
        "[submodule \"attention\"]\n\tpath = third_party/attention\n\turl = https://github.com/vllm-project/flash-attention.git\n",
    );
    git(&inner, &["add", "-A"]);
    let entry = format!("160000,{AFFECTED},third_party/attention");
    git(&inner, &["update-index", "--add", "--cacheinfo", &entry]);
    git(&inner, &["commit", "-q", "-m", "library pins attention"]);
    let outer = tmp.path().join("app");
    init(&outer);
    write(&outer, "README.md", "an application\n");
    let base = commit(&outer, "base");
    git(
        &outer,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &inner.display().to_string(),
            "deps/library",
        ],
    );
    git(&outer, &["commit", "-q", "-m", "add the library"]);
    for (what, args) in [("work tree", vec![]), ("--rev", vec!["--rev", "HEAD"])] {
        let run = scan(&outer, &args);
        assert_eq!(run.code, 1, "{what}\n{}", run.all());
        run.assert_status(R1, "affected");
        let json = run.json();
        let pin = json["targets"][0]["components"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["component"] == "flash-attention")
            .unwrap_or_else(|| panic!("{what}: a flash-attention pin\n{}", run.stdout));
        assert_eq!(pin["commit"], AFFECTED, "{what}");
        assert_eq!(pin["file"], "deps/library/.gitmodules", "{what}");
        assert_eq!(pin["found_by"], "git submodule", "{what}");
    }
    let diff = Pinprobe::new(&["diff", &base, "HEAD", "--format", "json"])
        .dir(&outer)
        .run();
    assert_eq!(diff.code, 1, "diff\n{}", diff.all());
    // A staged bump inside the library's checkout is what the work tree builds.
    let checkout = outer.join("deps/library");
    let moved = format!("160000,{},third_party/attention", "2".repeat(40));
    git(&checkout, &["update-index", "--cacheinfo", &moved]);
    let staged = scan(&outer, &[]);
    assert_ne!(staged.code, 1, "{}", staged.all());
    assert!(staged.stdout.contains(&"2".repeat(40)), "{}", staged.stdout);
    // A bare clone has no submodule repositories.
    git(tmp.path(), &["clone", "-q", "--bare", "app", "app.git"]);
    let bare = tmp.path().join("app.git").display().to_string();
    let run = Pinprobe::new(&["scan", &bare, "--rev", "HEAD", "--format", "json"]).run();
    assert_eq!(run.code, 3, "bare\n{}", run.all());
    assert!(
        run.all().contains("deps/library") && run.all().contains("not read"),
        "the scan names the submodule it could not read\n{}",
        run.all()
    );
}
