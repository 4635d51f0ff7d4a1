//! A CMake evaluation shared between the revisions of one review (`pinprobe diff`): the
//! evaluation of a tree is a function of the files it reads and the listings it asks for, so a
//! second revision that gives every one of them byte for byte the same answer has the same
//! evaluation, and it is not run again.
//!
//! [`Evaluations::from_cmake`] runs [`crate::pin::from_cmake`] through a [`Recording`] view that
//! logs every access (a file read, with the SHA-256 of its bytes or its absence; a listing, with
//! the SHA-256 of the names) and keeps the pins with the log. Asked again for another view, it
//! replays each logged access against that view first; only when every answer is identical
//! are the kept pins returned. Sound whatever the evaluator does with what it reads, as long as
//! it reads only through the view: an access the log cannot replay (a view method other than
//! `read`, `files_under` and `children`, an error) leaves the evaluation unshared, and an
//! evaluation that failed is never kept.
//!
//! [`likely_shared`] tells the review beforehand whether sharing is worth waiting for (the
//! revisions agree on every file the evaluation always reads): when it is not, HEAD's runs start
//! from BASE's instead ([`crate::pin::cmake::Sharing`]).

use crate::pin::{self, CmakePins, cmake::CmakeError, components::Registry};
use crate::view::recording::{Access, Notes, Recording};
use crate::view::{Answer, View};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Every access of one evaluation and its answer; `replayable` is false once the evaluation
/// asked something the log cannot replay.
#[derive(Debug, Clone)]
struct Log {
    answers: BTreeMap<Access, Answer>,
    replayable: bool,
}

impl Log {
    /// Whether `view` answers every logged access the same. An error is a different answer.
    fn replays_on(&self, view: &dyn View) -> bool {
        self.answers
            .iter()
            .all(|(access, answer)| access.answer(view) == Some(*answer))
    }
}

impl Notes for Mutex<Log> {
    fn note(&self, noted: Option<(Access, Answer)>) {
        let mut log = self.lock().unwrap_or_else(|e| e.into_inner());
        match noted {
            // The same access twice with two answers (a view that changed under the run)
            // cannot be replayed.
            Some((access, a)) => match log.answers.insert(access, a) {
                Some(old) if old != a => log.replayable = false,
                _ => {}
            },
            None => log.replayable = false,
        }
    }
}

/// The CMake pins of the trees evaluated so far, each with the log of what its evaluation read.
#[derive(Default)]
pub struct Evaluations {
    kept: Mutex<Vec<(Log, CmakePins)>>,
    shared: std::sync::atomic::AtomicUsize,
}

impl Evaluations {
    /// [`pin::from_cmake`] of `view`, from an earlier evaluation when `view` answers everything
    /// that one read the same.
    pub fn from_cmake(
        &self,
        view: &dyn View,
        registry: &Registry,
    ) -> Result<CmakePins, CmakeError> {
        let kept: Vec<(Log, CmakePins)> =
            self.kept.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for (log, pins) in kept {
            if log.replays_on(view) {
                self.shared
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Ok(pins);
            }
        }
        let recording = Recording::new(
            view,
            Mutex::new(Log {
                answers: BTreeMap::new(),
                replayable: true,
            }),
        );
        let pins = pin::from_cmake(&recording, registry)?;
        let log = recording
            .notes
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if log.replayable {
            self.kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((log, pins.clone()));
        }
        Ok(pins)
    }

    /// How many evaluations were taken from an earlier one.
    pub fn shared(&self) -> usize {
        self.shared.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Whether the files every evaluation reads are the same in both views: the listing of the
/// whole tree, every CMake file, the presets and the build scripts the evaluation takes `-D`
/// settings from. When they are, a review evaluates one side and tries the other against it
/// ([`Evaluations`] still checks every access); when not, the sides run at once. Any error is
/// "no".
pub fn likely_shared(a: &dyn View, b: &dyn View) -> bool {
    let (Ok(la), Ok(lb)) = (a.files_under(""), b.files_under("")) else {
        return false;
    };
    if la != lb {
        return false;
    }
    la.iter()
        .filter(|p| always_read(p))
        .all(|p| matches!((a.read(p), b.read(p)), (Ok(x), Ok(y)) if x == y))
}

/// A file every evaluation reads (or may): CMake code, presets, build scripts.
fn always_read(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    base == "CMakeLists.txt"
        || lower.ends_with(".cmake")
        || lower.ends_with(".cmake.in")
        || base == "CMakePresets.json"
        || base == "CMakeUserPresets.json"
        || base == "setup.py"
        || base.ends_with(".sh")
        || base.starts_with("Dockerfile")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TargetKind;
    use crate::view::MemView;

    fn registry() -> Registry {
        crate::rules::load(None)
            .expect("the built-in rules load")
            .0
            .registry
    }

    const TOP: &str = "cmake_minimum_required(VERSION 3.26)\nproject(x)\ninclude(FetchContent)\ninclude(fa.cmake)\nFetchContent_MakeAvailable(vllm-flash-attn)\n";

    fn fa(tag: &str) -> String {
        format!(
            "FetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n  GIT_TAG {tag})\n"
        )
    }

    fn tree(files: &[(&str, &str)]) -> MemView {
        let mut view = MemView::new("mem", TargetKind::SourceTree);
        for (p, t) in files {
            view.insert(*p, t.as_bytes().to_vec());
        }
        view
    }

    #[test]
    fn an_identical_tree_shares_and_a_changed_input_does_not() {
        let reg = registry();
        let a = "506341a143fcabd4bb79052a7605ada727d6b3f5";
        let b = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
        let evals = Evaluations::default();
        let base = tree(&[("CMakeLists.txt", TOP), ("fa.cmake", &fa(a)), ("x.py", "1")]);
        let first = evals.from_cmake(&base, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 0);
        // A file the evaluation never reads changed: shared, and the same pins.
        let doc = tree(&[("CMakeLists.txt", TOP), ("fa.cmake", &fa(a)), ("x.py", "2")]);
        let again = evals.from_cmake(&doc, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 1);
        assert_eq!(
            format!("{:?}", again.pins),
            format!("{:?}", first.pins),
            "the same pins"
        );
        // The pin moved: evaluated again, and the new pin is what it says.
        let bumped = tree(&[("CMakeLists.txt", TOP), ("fa.cmake", &fa(b)), ("x.py", "2")]);
        let moved = evals.from_cmake(&bumped, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 1);
        assert_eq!(moved.pins.len(), 1);
        assert_eq!(moved.pins[0].commit.as_deref(), Some(b));
        assert_eq!(first.pins[0].commit.as_deref(), Some(a));
        // A file added anywhere changes the listing the evaluation asked for: not shared.
        let added = tree(&[
            ("CMakeLists.txt", TOP),
            ("fa.cmake", &fa(a)),
            ("x.py", "2"),
            ("y.py", ""),
        ]);
        evals.from_cmake(&added, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 1);
    }

    #[test]
    fn a_file_read_by_the_cmake_code_is_an_input_too() {
        let reg = registry();
        let top = "cmake_minimum_required(VERSION 3.26)\nproject(x)\ninclude(FetchContent)\nfile(READ tag.txt TAG)\nstring(STRIP \"${TAG}\" TAG)\nFetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n  GIT_TAG ${TAG})\nFetchContent_MakeAvailable(vllm-flash-attn)\n";
        let a = "506341a143fcabd4bb79052a7605ada727d6b3f5";
        let b = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";
        let evals = Evaluations::default();
        let base = tree(&[("CMakeLists.txt", top), ("tag.txt", a)]);
        let head = tree(&[("CMakeLists.txt", top), ("tag.txt", b)]);
        // The prediction looks at CMake files only and says "likely": the replay decides.
        assert!(likely_shared(&base, &head));
        let p = evals.from_cmake(&base, &reg).expect("evaluates");
        let q = evals.from_cmake(&head, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 0, "tag.txt differs: not shared");
        assert_eq!(p.pins[0].commit.as_deref(), Some(a));
        assert_eq!(q.pins[0].commit.as_deref(), Some(b));
    }

    #[test]
    fn the_prediction_sees_cmake_changes_and_added_files() {
        let a = tree(&[("CMakeLists.txt", TOP), ("fa.cmake", &fa("1"))]);
        let b = tree(&[("CMakeLists.txt", TOP), ("fa.cmake", &fa("2"))]);
        let c = tree(&[
            ("CMakeLists.txt", TOP),
            ("fa.cmake", &fa("1")),
            ("README.md", ""),
        ]);
        assert!(likely_shared(&a, &a));
        assert!(!likely_shared(&a, &b));
        assert!(!likely_shared(&a, &c));
    }
}
