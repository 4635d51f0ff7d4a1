//! Opt-in: the CMake evaluation on the real vLLM source distributions 0.26.0-0.33.0 finds every
//! `GIT_TAG` pin of `cmake/external_projects/` (DeepGEMM and QuTLASS, declared with the direct
//! `FetchContent_Populate` form, included), as a fetch of some configuration.
//!
//! `PINPROBE_REAL_SDISTS=DIR`: DIR holds the unpacked sdists (`vllm-0.27.0/...`).
//! `PINPROBE_REAL_SDISTS=download`: `pip download --no-binary :all: --no-deps vllm==X` each one
//! into a temporary directory first (network). Unset: the test prints a skip line.

use pinprobe::pin::cmake;
use pinprobe::view::DirView;
use std::path::{Path, PathBuf};
use std::process::Command;

const VERSIONS: &[&str] = &[
    "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0",
];

/// (name, tag) of every declaring call with a literal `GIT_TAG` in the file, read with a
/// regular expression independent of the evaluator.
fn written_pins(text: &str) -> Vec<(String, String)> {
    let call = regex::Regex::new(
        r"(?is)(FetchContent_Declare|FetchContent_Populate|ExternalProject_Add)\s*\(\s*([A-Za-z0-9_.-]+)([^()]*(?:\([^()]*\)[^()]*)*)\)",
    )
    .expect("regex");
    let tag = regex::Regex::new(r"GIT_TAG\s+([0-9a-f]{40}|v[0-9][0-9A-Za-z.]*)").expect("regex");
    call.captures_iter(text)
        .filter_map(|c| {
            let body = c.get(3)?.as_str();
            let t = tag.captures(body)?.get(1)?.as_str().to_string();
            Some((c.get(2)?.as_str().to_string(), t))
        })
        .collect()
}

fn sdist_dirs() -> Option<(Vec<PathBuf>, Option<tempfile::TempDir>)> {
    let Some(setting) = std::env::var_os("PINPROBE_REAL_SDISTS") else {
        eprintln!(
            "skipped: set PINPROBE_REAL_SDISTS=DIR (unpacked vLLM sdists) or =download to check the CMake evaluation on vLLM 0.26.0-0.33.0"
        );
        return None;
    };
    if setting != "download" {
        let dir = PathBuf::from(setting);
        return Some((
            VERSIONS
                .iter()
                .map(|v| dir.join(format!("vllm-{v}")))
                .collect(),
            None,
        ));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut dirs = Vec::new();
    for v in VERSIONS {
        let status = Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
            ])
            .arg(format!("vllm=={v}"))
            .arg("-d")
            .arg(tmp.path())
            .status()
            .expect("pip runs");
        assert!(status.success(), "pip download vllm=={v} failed");
        let archive = tmp.path().join(format!("vllm-{v}.tar.gz"));
        let file = std::fs::File::open(&archive).expect("sdist downloaded");
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(tmp.path())
            .expect("sdist unpacks");
        dirs.push(tmp.path().join(format!("vllm-{v}")));
    }
    Some((dirs, Some(tmp)))
}

#[test]
fn every_external_project_pin_is_evaluated() {
    let Some((dirs, _keep)) = sdist_dirs() else {
        return;
    };
    let mut report = Vec::new();
    for dir in &dirs {
        let ext = dir.join("cmake/external_projects");
        let mut expected: Vec<(String, String)> = Vec::new();
        for entry in std::fs::read_dir(&ext).expect("cmake/external_projects") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "cmake") {
                let text = std::fs::read_to_string(&path).expect("read");
                expected.extend(written_pins(&text));
            }
        }
        assert!(!expected.is_empty(), "{}: no pins written", dir.display());
        let started = std::time::Instant::now();
        let eval = cmake::evaluate(&DirView::new(Path::new(dir))).expect("evaluates");
        let elapsed = started.elapsed();
        for (name, tag) in &expected {
            let found = eval.configurations.iter().any(|c| {
                c.fetches.iter().any(|f| {
                    f.name.eq_ignore_ascii_case(name)
                        && f.tag
                            .as_ref()
                            .is_some_and(|t| t.text.eq_ignore_ascii_case(tag))
                })
            });
            assert!(
                found,
                "{}: {name} at {tag} is not among the evaluated fetches (undecided: {:?})",
                dir.display(),
                eval.undecided
            );
        }
        report.push(format!(
            "{}: {} pins found in {} configurations, {} unreached declarations, undecided: {:?}, {:.1?}",
            dir.display(),
            expected.len(),
            eval.configurations.len(),
            eval.unreached.len(),
            eval.undecided,
            elapsed
        ));
        if dir.ends_with("vllm-0.27.0") {
            let deepgemm = eval
                .configurations
                .iter()
                .flat_map(|c| &c.fetches)
                .find(|f| {
                    f.repository
                        .as_ref()
                        .is_some_and(|r| r.text.contains("vllm-project/DeepGEMM"))
                });
            assert_eq!(
                deepgemm
                    .and_then(|f| f.tag.as_ref())
                    .map(|t| t.text.as_str()),
                Some("e21c821f39a2056d68067a466c64ddc942200106")
            );
        }
    }
    for line in report {
        eprintln!("{line}");
    }
}

/// A tree with one file's text replaced (a pin bump without a copy of the tree).
struct Edited {
    inner: DirView,
    path: &'static str,
    text: String,
}

impl pinprobe::view::View for Edited {
    fn describe(&self) -> String {
        format!("{} ({} edited)", self.inner.describe(), self.path)
    }
    fn kind(&self) -> pinprobe::model::TargetKind {
        self.inner.kind()
    }
    fn files_under(&self, dir: &str) -> Result<Vec<String>, pinprobe::view::TargetError> {
        self.inner.files_under(dir)
    }
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, pinprobe::view::TargetError> {
        if path == self.path {
            return Ok(Some(self.text.clone().into_bytes()));
        }
        self.inner.read(path)
    }
}

/// BASE, HEAD, and what the pair is.
type Pair = (
    Box<dyn pinprobe::view::View>,
    Box<dyn pinprobe::view::View>,
    String,
);

/// The evaluation as JSON, or the error.
fn evaluation_json(view: &dyn pinprobe::view::View) -> String {
    match cmake::evaluate(view) {
        Ok(e) => serde_json::to_string(&e).expect("an evaluation serialises"),
        Err(e) => format!("error: {e}"),
    }
}

/// `pinprobe diff` shares HEAD's runs with BASE's (`pin::cmake::Sharing`): on the real trees,
/// each release after the one before it, and each release with its FlashAttention `GIT_TAG`
/// moved to vLLM 0.30.0's pin (recorded knowing the file that differs, as a review does), the
/// shared evaluation of HEAD is its fresh evaluation.
#[test]
fn a_release_evaluated_from_the_one_before_is_its_fresh_evaluation() {
    let Some((dirs, _keep)) = sdist_dirs() else {
        return;
    };
    let fa = "cmake/external_projects/vllm_flash_attn.cmake";
    let tag = regex::Regex::new(r"GIT_TAG\s+[0-9a-f]{40}").expect("regex");
    let mut pairs: Vec<Pair> = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        if let Some(before) = i.checked_sub(1).and_then(|j| dirs.get(j)) {
            pairs.push((
                Box::new(DirView::new(before)),
                Box::new(DirView::new(dir)),
                format!("{} after {}", dir.display(), before.display()),
            ));
        }
        let text = std::fs::read_to_string(dir.join(fa)).unwrap_or_default();
        if tag.is_match(&text) {
            let bumped = tag
                .replace(&text, "GIT_TAG 506341a143fcabd4bb79052a7605ada727d6b3f5")
                .into_owned();
            pairs.push((
                Box::new(DirView::new(dir)),
                Box::new(Edited {
                    inner: DirView::new(dir),
                    path: fa,
                    text: bumped,
                }),
                format!("{} bumped", dir.display()),
            ));
        }
    }
    for (base, head, what) in &pairs {
        let fresh = evaluation_json(head.as_ref());
        // A bump is recorded as a review records it, knowing what differs (then only the
        // states HEAD can start from are kept).
        let changed = what.ends_with(" bumped").then(|| cmake::Changed {
            paths: [fa.to_string()].into_iter().collect(),
            listing: false,
        });
        let sharing = cmake::Sharing::record_for(changed);
        evaluation_json(base.as_ref());
        sharing.resume();
        let shared = evaluation_json(head.as_ref());
        let (runs, statements, files) = sharing.shared();
        drop(sharing);
        println!(
            "{what}: {runs} runs from BASE's, {statements} statements, {files} included files"
        );
        assert!(
            shared == fresh,
            "{what}: the shared evaluation differs from the fresh one"
        );
    }
}
