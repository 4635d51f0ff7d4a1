//! What a review shares besides the CMake runs (`scan::shared::Evaluations`): the CMake
//! evaluation taken whole, the Python requirements (`pin::python::find`) and the search for
//! CMake projects below the root (`pin::subproject::roots`), each taken from the first
//! revision's where everything it read answers the same. For generated trees (requirement
//! files with `-r` includes, a `setup.py` with requirement lists and a CMake extension,
//! a `pyproject.toml`, a `Dockerfile`, CMake projects below the root) and a random edit of one
//! of them (a version changed, a requirement or a file added or removed, an include, the
//! extension's source directory, a pin bump, a file nothing reads), the edited tree's results
//! that went through the first tree's are its fresh ones, as the same text; and the cases
//! that could share did. No CMake needed.
//!
//! `PINPROBE_SHARE_CASES=N` sets the number of cases (default 150).

use pinprobe::model::TargetKind;
use pinprobe::pin::{self, components::Registry};
use pinprobe::scan::shared::Evaluations;
use pinprobe::view::MemView;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const TAGS: &[&str] = super::TAGS;
const PACKAGES: &[&str] = &["torch", "vllm", "flash-attn", "xformers", "numpy"];
const VERSIONS: &[&str] = &["==0.30.0", "==0.33.0", ">=2.1", "==2.7.4", "<3", ""];

fn view(files: &BTreeMap<String, String>) -> MemView {
    let mut v = MemView::new("generated", TargetKind::SourceTree);
    for (p, t) in files {
        v.insert(p.clone(), t.as_bytes().to_vec());
    }
    v
}

fn registry() -> Registry {
    pinprobe::rules::load(None)
        .expect("the built-in rules load")
        .0
        .registry
}

fn requirement(rng: &mut StdRng) -> String {
    let p = PACKAGES[rng.random_range(0..PACKAGES.len())];
    let v = VERSIONS[rng.random_range(0..VERSIONS.len())];
    format!("{p}{v}")
}

fn requirements(rng: &mut StdRng, n: usize) -> String {
    (0..n).map(|_| requirement(rng) + "\n").collect()
}

fn fa(tag: &str) -> String {
    format!(
        "include(FetchContent)\nFetchContent_Declare(vllm-flash-attn\n  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n  GIT_TAG {tag})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
    )
}

fn setup_py(rng: &mut StdRng, sourcedir: &str) -> String {
    let reqs: Vec<String> = (0..rng.random_range(0..4))
        .map(|_| format!("\"{}\"", requirement(rng)))
        .collect();
    format!(
        "from setuptools import setup\nclass CMakeExtension:\n    pass\nsetup(\n    name=\"x\",\n    ext_modules=[CMakeExtension(\"x._C\", sourcedir=\"{sourcedir}\")],\n    install_requires=[{}],\n)\n",
        reqs.join(", ")
    )
}

/// A generated tree.
fn tree(rng: &mut StdRng) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let tag = TAGS[rng.random_range(0..TAGS.len())];
    files.insert(
        "CMakeLists.txt".to_string(),
        "cmake_minimum_required(VERSION 3.26)\nproject(x)\ninclude(cmake/fa.cmake)\n".to_string(),
    );
    files.insert("cmake/fa.cmake".to_string(), fa(tag));
    let common = requirements(rng, 2);
    files.insert("requirements/common.txt".to_string(), common);
    let cuda = format!("-r common.txt\n{}", requirements(rng, 2));
    files.insert("requirements/cuda.txt".to_string(), cuda);
    if rng.random_bool(0.5) {
        files.insert("requirements.txt".to_string(), requirements(rng, 3));
    }
    if rng.random_bool(0.6) {
        files.insert("setup.py".to_string(), setup_py(rng, "."));
    }
    if rng.random_bool(0.5) {
        files.insert(
            "pyproject.toml".to_string(),
            format!(
                "[project]\nname = \"x\"\nversion = \"1\"\ndependencies = [\"{}\"]\n",
                requirement(rng)
            ),
        );
    }
    if rng.random_bool(0.3) {
        files.insert(
            "docker/Dockerfile".to_string(),
            format!("FROM python:3.12\nRUN pip install {}\n", requirement(rng)),
        );
    }
    if rng.random_bool(0.4) {
        // A project nothing reaches, which may pin something.
        let t = TAGS[rng.random_range(0..TAGS.len())];
        files.insert(
            "csrc/CMakeLists.txt".to_string(),
            format!(
                "cmake_minimum_required(VERSION 3.26)\nproject(y)\n{}",
                fa(t)
            ),
        );
    }
    files.insert("README.md".to_string(), "docs\n".to_string());
    files
}

/// The tree with one random edit, and what it was.
fn edit(rng: &mut StdRng, files: &BTreeMap<String, String>) -> (BTreeMap<String, String>, String) {
    let mut out = files.clone();
    let what = match rng.random_range(0..11) {
        0 => {
            let names: Vec<String> = files
                .keys()
                .filter(|f| f.ends_with(".txt"))
                .cloned()
                .collect();
            let f = names[rng.random_range(0..names.len())].clone();
            let mut text = files[&f].clone();
            text.push_str(&requirement(rng));
            text.push('\n');
            out.insert(f.clone(), text);
            format!("{f}: a requirement added")
        }
        1 => {
            let v = VERSIONS[rng.random_range(0..VERSIONS.len())];
            let text = files["requirements/common.txt"].replacen("==", v, 1);
            out.insert("requirements/common.txt".into(), text);
            format!("requirements/common.txt: a version changed to `{v}`")
        }
        2 => {
            out.insert("requirements/rocm.txt".into(), requirements(rng, 2));
            "requirements/rocm.txt added".into()
        }
        3 => {
            out.remove("requirements/common.txt");
            "requirements/common.txt removed (cuda.txt includes it)".into()
        }
        4 => {
            let dir = ["csrc", ".", "missing"][rng.random_range(0..3)];
            out.insert("setup.py".into(), setup_py(rng, dir));
            format!("setup.py rewritten, sourcedir `{dir}`")
        }
        5 => {
            out.insert(
                "pyproject.toml".into(),
                format!(
                    "[project]\nname = \"x\"\nversion = \"1\"\ndependencies = [\"{}\"]\n[tool.scikit-build]\ncmake.source-dir = \"csrc\"\n",
                    requirement(rng)
                ),
            );
            "pyproject.toml rewritten".into()
        }
        6 => {
            let t = TAGS[rng.random_range(0..TAGS.len())];
            out.insert("cmake/fa.cmake".into(), fa(t));
            format!("cmake/fa.cmake: GIT_TAG {t}")
        }
        7 => {
            let t = TAGS[rng.random_range(0..TAGS.len())];
            out.insert(
                "csrc/CMakeLists.txt".into(),
                format!(
                    "cmake_minimum_required(VERSION 3.26)\nproject(y)\n{}",
                    fa(t)
                ),
            );
            format!("csrc/CMakeLists.txt: GIT_TAG {t}")
        }
        8 => {
            out.insert(
                "docker/Dockerfile".into(),
                format!("FROM python:3.12\nRUN pip install {}\n", requirement(rng)),
            );
            "docker/Dockerfile rewritten".into()
        }
        9 => {
            out.insert("vllm/x.py".into(), "x = 1\n".into());
            "vllm/x.py added".into()
        }
        _ => {
            out.insert("README.md".into(), "more docs\n".into());
            "README.md changed".into()
        }
    };
    (out, what)
}

/// What a scan of the tree takes from these three, as text: the CMake pins, the roots below
/// the top level, the Python requirements and problems.
fn results(v: &MemView, reg: &Registry, shared: Option<&Evaluations>) -> (String, String, String) {
    let cmake = match shared {
        Some(s) => s.from_cmake(v, reg),
        None => pin::from_cmake(v, reg),
    };
    let Ok(found) = cmake else {
        return (format!("{cmake:?}"), String::new(), String::new());
    };
    let roots = match shared {
        Some(s) => s.roots(v, &found),
        None => pin::subproject::roots(v, &found),
    };
    let python = match shared {
        Some(s) => s.python(v),
        None => pin::python::find(v),
    };
    (
        format!("{found:?}"),
        format!("{roots:?}"),
        format!("{python:?}"),
    )
}

#[test]
fn requirements_and_subprojects_taken_from_another_revision_are_the_fresh_ones() {
    let reg = registry();
    let n = super::share_cases();
    let (mut evaluations, mut taken, mut cases_taking) = (0, 0, 0);
    for i in 0..n {
        let seed = 43_000_000 + i as u64;
        let mut rng = StdRng::seed_from_u64(seed);
        let base = tree(&mut rng);
        let (head, what) = edit(&mut rng, &base);
        let fresh = results(&view(&head), &reg, None);
        let shared = Evaluations::default();
        let base_fresh = results(&view(&base), &reg, None);
        let base_kept = results(&view(&base), &reg, Some(&shared));
        assert_eq!(
            base_kept, base_fresh,
            "seed {seed}: keeping changed the first revision's results"
        );
        shared.last();
        let head_shared = results(&view(&head), &reg, Some(&shared));
        if head_shared != fresh {
            let files: String = head.iter().map(|(p, t)| format!("--- {p}\n{t}")).collect();
            panic!(
                "seed {seed} ({what}): the shared results differ from the fresh ones\n{files}\n\
                 fresh:\n{fresh:#?}\nshared:\n{head_shared:#?}"
            );
        }
        evaluations += shared.shared();
        taken += shared.taken();
        cases_taking += usize::from(shared.taken() > 0);
    }
    println!(
        "{n} edited trees: {evaluations} CMake evaluations taken whole, {taken} requirement reads and subproject searches taken, in {cases_taking} cases"
    );
    // The comparison means something only where results were taken (an edit of a requirement
    // file changes the Python requirements; a pin bump changes the CMake pins but not the
    // requirements).
    assert!(
        cases_taking * 3 > n && evaluations * 5 > n,
        "only {cases_taking} of {n} cases took a result, {evaluations} evaluations"
    );
}
