//! What a review (`pinprobe diff`) shares between its two revisions: the CMake evaluation, the
//! Python requirements and the CMake projects below the root, each a function of the files it
//! reads and the listings it asks for, so a second revision that gives every one of them byte
//! for byte the same answer has the same result, and it is not computed again.
//!
//! [`Evaluations`] computes each of them through a [`Recording`] view that logs every access
//! (a file read, with the SHA-256 of its bytes or its absence; a listing, with the SHA-256 of
//! the names) and keeps the result with the log. Asked again for another view, it replays each
//! logged access against that view first; only when every answer is identical (and the other
//! inputs, where there are any, are equal) is the kept result returned. Sound whatever the
//! computation does with what it reads, as long as it reads only through the view: an access
//! the log cannot replay (a view method other than `read`, `files_under` and `children`, an
//! error) leaves the result unshared, and a computation that failed is never kept.
//!
//! A review computes BASE first, keeping (while this thread's [`crate::pin::cmake::Sharing`]
//! records BASE's CMake runs too), then HEAD ([`Evaluations::last`]): a HEAD whose CMake inputs
//! all answer the same (a change to Python code or docs) takes BASE's evaluation whole; one
//! that changed a CMake file (a pin bump) starts its runs from BASE's.

use crate::pin::python::Found;
use crate::pin::subproject::Roots;
use crate::pin::{self, CmakePins, Unreached, cmake::CmakeError, components::Registry};
use crate::view::recording::{Access, Notes, Recording};
use crate::view::{Answer, TargetError, View};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Every access of one computation and its answer; `replayable` is false once the computation
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

/// Results of one computation for the trees seen so far: each with the log of what it read
/// and its other input (`K`).
struct Kept<K, T>(Mutex<Vec<(Log, K, T)>>);

impl<K, T> Default for Kept<K, T> {
    fn default() -> Self {
        Kept(Mutex::new(Vec::new()))
    }
}

impl<K: PartialEq + Clone, T: Clone> Kept<K, T> {
    /// The kept result for `key` whose log `view` replays, else `compute(view)` (through a
    /// recording view, kept, when `keep`). The flag: whether it was taken.
    fn take_or<E>(
        &self,
        view: &dyn View,
        key: &K,
        keep: bool,
        compute: impl FnOnce(&dyn View) -> Result<T, E>,
    ) -> Result<(T, bool), E> {
        let taken = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(log, k, _)| k == key && log.replays_on(view))
            .map(|(_, _, value)| value.clone());
        if let Some(value) = taken {
            return Ok((value, true));
        }
        if !keep {
            return compute(view).map(|v| (v, false));
        }
        let recording = Recording::new(
            view,
            Mutex::new(Log {
                answers: BTreeMap::new(),
                replayable: true,
            }),
        );
        let value = compute(&recording)?;
        let log = recording
            .notes
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if log.replayable {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push((
                log,
                key.clone(),
                value.clone(),
            ));
        }
        Ok((value, false))
    }
}

/// What the trees of a review computed so far, each result with the log of what it read.
pub struct Evaluations {
    cmake: Kept<(), CmakePins>,
    python: Kept<(), Found>,
    /// The projects below the root, by the declarations the root's evaluation did not reach.
    roots: Kept<Vec<Unreached>, Roots>,
    /// Whether results computed from now on are kept (false for the last tree).
    keeping: AtomicBool,
    shared: AtomicUsize,
    taken: AtomicUsize,
}

impl Default for Evaluations {
    fn default() -> Self {
        Evaluations {
            cmake: Kept::default(),
            python: Kept::default(),
            roots: Kept::default(),
            keeping: AtomicBool::new(true),
            shared: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
        }
    }
}

impl Evaluations {
    /// The next tree is the last: what it computes is not kept (no recording view).
    pub fn last(&self) {
        self.keeping.store(false, Ordering::Relaxed);
    }

    fn keep(&self) -> bool {
        self.keeping.load(Ordering::Relaxed)
    }

    /// [`pin::from_cmake`] of `view`, from an earlier evaluation when `view` answers everything
    /// that one read the same.
    pub fn from_cmake(
        &self,
        view: &dyn View,
        registry: &Registry,
    ) -> Result<CmakePins, CmakeError> {
        let (pins, taken) = self
            .cmake
            .take_or(view, &(), self.keep(), |v| pin::from_cmake(v, registry))?;
        if taken {
            self.shared.fetch_add(1, Ordering::Relaxed);
        }
        Ok(pins)
    }

    /// [`pin::python::find`] of `view`, from an earlier tree's where `view` answers everything
    /// it read the same.
    pub fn python(&self, view: &dyn View) -> Result<Found, TargetError> {
        let (found, taken) = self
            .python
            .take_or(view, &(), self.keep(), pin::python::find)?;
        self.taken.fetch_add(usize::from(taken), Ordering::Relaxed);
        Ok(found)
    }

    /// [`pin::subproject::roots`] of `view` and `found`, from an earlier tree's where the root's
    /// unreached declarations are the same and `view` answers everything it read the same.
    pub fn roots(&self, view: &dyn View, found: &CmakePins) -> Result<Roots, TargetError> {
        let (roots, taken) = self
            .roots
            .take_or(view, &found.unreached, self.keep(), |v| {
                pin::subproject::roots(v, found)
            })?;
        self.taken.fetch_add(usize::from(taken), Ordering::Relaxed);
        Ok(roots)
    }

    /// How many CMake evaluations were taken from an earlier one.
    pub fn shared(&self) -> usize {
        self.shared.load(Ordering::Relaxed)
    }

    /// How many Python requirement reads and subproject searches were taken from an earlier
    /// tree's.
    pub fn taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }
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
        let p = evals.from_cmake(&base, &reg).expect("evaluates");
        let q = evals.from_cmake(&head, &reg).expect("evaluates");
        assert_eq!(evals.shared(), 0, "tag.txt differs: not shared");
        assert_eq!(p.pins[0].commit.as_deref(), Some(a));
        assert_eq!(q.pins[0].commit.as_deref(), Some(b));
    }
}
