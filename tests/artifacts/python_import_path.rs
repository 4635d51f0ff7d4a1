//! Python's real import path, judged by CPython itself in a real virtual environment
//! (`python3 -m venv`): which `vllm` `import vllm` loads (`python -c 'import vllm;
//! print(vllm.__file__)'`) against what pinprobe reports for the environment.
//!
//! - A `.pth` `import` line or a `sitecustomize.py` that puts a buggy vLLM outside the scanned
//!   environment first on `sys.path`: CPython imports the buggy copy; pinprobe cannot see it and
//!   must say `unknown`, naming the file, never `not_affected`.
//! - A `.pth` path entry (relative, as `site` joins it to the site directory) to the directory
//!   holding the package: CPython imports it from there, and pinprobe judges that copy.
//! - A `.pth` path entry to a buggy copy while site-packages holds a clean one: path entries
//!   come after site-packages, CPython imports the clean copy, and pinprobe says `not_affected`.
//!
//! Needs python3 with venv (`.ci/run` installs python3); skips visibly without (fails under CI).

use crate::common;

use common::artifact::{vllm_files, with_dist_info, write_tree};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const FA4: &str = "PINPROBE-2026-0001";

/// A fresh venv in `dir`: (its python, its site-packages).
fn venv(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(dir)
        .output()
        .ok()?;
    if !made.status.success() {
        return None;
    }
    let python = dir.join("bin/python");
    let out = Command::new(&python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .ok()?;
    let site = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some((python, site))
}

fn setup() -> Option<(tempfile::TempDir, PathBuf, PathBuf, PathBuf)> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let env = root.join("env");
    let made = venv(&env);
    if !common::require::require(
        made.is_some(),
        "python3 with the venv module (python3-venv) to judge import paths with CPython",
    ) {
        return None;
    }
    let (python, site) = made?;
    Some((tmp, env, python, site))
}

/// The file CPython imports `vllm` from, in that environment (no user site, no PYTHONPATH).
fn imported(python: &Path) -> PathBuf {
    let out = Command::new(python)
        .args(["-c", "import vllm; print(vllm.__file__)"])
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .env("PYTHONNOUSERSITE", "1")
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The statuses and locations of the FA4 rule's findings in a JSON report.
fn fa4(run: &Run) -> Vec<(String, String, String)> {
    run.json()["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["findings"].as_array().into_iter().flatten())
        .filter(|f| f["rule"] == FA4)
        .map(|f| {
            (
                f["status"].as_str().unwrap_or_default().to_string(),
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["evidence"].to_string(),
            )
        })
        .collect()
}

fn scan(env: &Path) -> Run {
    Pinprobe::new(&["scan", env.to_str().expect("utf-8"), "--format", "json"]).run()
}

/// A clean vLLM (0.33.0, the fix) installed in site-packages, a buggy one (0.30.0) at `buggy`.
fn clean_and_buggy(site: &Path, buggy: &Path) {
    write_tree(
        site,
        &with_dist_info("vllm", "0.33.0", vllm_files("0.33.0", Sm90Call::Fixed)),
    );
    write_tree(buggy, &vllm_files("0.30.0", Sm90Call::Buggy));
}

#[test]
fn startup_code_that_imports_a_copy_outside_the_target_is_unknown_naming_the_file() {
    let Some((tmp, env, python, site)) = setup() else {
        return;
    };
    let outside = tmp.path().canonicalize().expect("c").join("elsewhere");
    clean_and_buggy(&site, &outside);
    // Before: CPython imports the clean copy, and pinprobe says not_affected.
    assert!(imported(&python).starts_with(&site));
    let before = fa4(&scan(&env));
    assert!(
        !before.is_empty() && before.iter().all(|(s, _, _)| s == "not_affected"),
        "{before:?}"
    );

    for (file, text) in [
        (
            "zz-shadow.pth",
            format!(
                "import sys; sys.path.insert(0, {:?})\n",
                outside.display().to_string()
            ),
        ),
        (
            "sitecustomize.py",
            format!(
                "import sys\nsys.path.insert(0, {:?})\n",
                outside.display().to_string()
            ),
        ),
    ] {
        std::fs::write(site.join(file), &text).expect("write");
        // CPython imports the buggy copy outside the environment.
        let from = imported(&python);
        assert!(
            from.starts_with(&outside),
            "{file}: CPython imports {from:?}"
        );
        let run = scan(&env);
        let found = fa4(&run);
        assert!(!found.is_empty(), "{file}: {}", run.all());
        for (status, _, evidence) in &found {
            assert_eq!(status, "unknown", "{file}: {found:?}");
            assert!(evidence.contains(file), "{file} named: {evidence}");
        }
        assert_eq!(run.code, 3, "{file}: undecided, fail closed: {}", run.all());
        std::fs::remove_file(site.join(file)).expect("rm");
    }
}

#[test]
fn a_pth_path_entry_is_followed_where_python_follows_it() {
    let Some((_tmp, env, python, site)) = setup() else {
        return;
    };
    // The distribution's metadata in site-packages, its package in a directory a relative
    // `.pth` line names (as `site.addpackage` joins it to the site directory).
    let src = env.join("src");
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    let (package, meta): (Vec<_>, Vec<_>) =
        files.into_iter().partition(|(p, _)| p.starts_with("vllm/"));
    write_tree(&site, &meta);
    write_tree(&src, &package);
    let rel = pathdiff(&src, &site);
    std::fs::write(site.join("vllm-src.pth"), format!("{rel}\n")).expect("write");
    let from = imported(&python);
    assert!(from.starts_with(&src), "CPython imports {from:?}");
    let run = scan(&env);
    run.assert_fa4_affected();
    let src_rel = src
        .strip_prefix(&env)
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    assert!(
        fa4(&run)
            .iter()
            .any(|(s, file, _)| s == "affected" && file.starts_with(&src_rel)),
        "the copy CPython imports is the one judged: {:?}",
        fa4(&run)
    );
}

#[test]
fn a_pth_path_entry_after_site_packages_does_not_shadow_its_package() {
    let Some((tmp, env, python, site)) = setup() else {
        return;
    };
    let outside = tmp.path().canonicalize().expect("c").join("elsewhere");
    clean_and_buggy(&site, &outside);
    std::fs::write(
        site.join("elsewhere.pth"),
        format!("{}\n", outside.display()),
    )
    .expect("w");
    let from = imported(&python);
    assert!(
        from.starts_with(&site),
        "path entries come after site-packages: {from:?}"
    );
    let found = fa4(&scan(&env));
    assert!(
        !found.is_empty() && found.iter().all(|(s, _, _)| s == "not_affected"),
        "{found:?}"
    );
}

/// `to` relative to `from` (both absolute, `to` under `from`'s ancestors).
fn pathdiff(to: &Path, from: &Path) -> String {
    let common = to
        .ancestors()
        .find(|a| from.starts_with(a))
        .expect("a common ancestor");
    let ups = from
        .strip_prefix(common)
        .expect("under")
        .components()
        .count();
    let mut out = vec![".."; ups].join("/");
    let rest = to.strip_prefix(common).expect("under");
    if !rest.as_os_str().is_empty() {
        out = format!("{out}/{}", rest.display());
    }
    out
}

// ---- Generated environments, judged by CPython ----------------------------------------------

/// Where a copy of vLLM lies in a generated case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The venv's site-packages.
    Site,
    /// `env/src-a` and `env/lib-b`: inside the scanned venv.
    A,
    B,
    /// `elsewhere-c`: outside it.
    C,
}

/// One line of a generated `.pth` file (or what a generated sitecustomize.py does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Path(Place, bool),
    Missing,
    Comment,
    Blank,
    /// `import sys; sys.path.insert(0, ...)`.
    Insert(Place),
    /// An import line that leaves sys.path alone.
    Harmless,
}

/// A small deterministic generator (SplitMix64), so a failing case can be replayed by seed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// A generated environment: what each place holds (`Some(buggy)`), the `.pth` files (name,
/// line ending, lines) and the sitecustomize.py.
#[derive(Debug)]
struct Case {
    holds: Vec<(Place, Option<bool>)>,
    pth: Vec<(&'static str, &'static str, Vec<Line>)>,
    sitecustomize: Option<Line>,
}

impl Case {
    fn generate(g: &mut Gen) -> Case {
        let lines = [
            Line::Path(Place::A, true),
            Line::Path(Place::A, false),
            Line::Path(Place::B, true),
            Line::Path(Place::B, false),
            Line::Path(Place::C, true),
            Line::Path(Place::Site, false),
            Line::Missing,
            Line::Comment,
            Line::Blank,
            Line::Insert(Place::A),
            Line::Insert(Place::C),
            Line::Harmless,
        ];
        let mut pth = Vec::new();
        for name in ["a.pth", "z.pth", ".dot.pth"] {
            if g.below(2) == 0 {
                continue;
            }
            let n = 1 + g.below(3);
            let body: Vec<Line> = (0..n).map(|_| g.pick(&lines)).collect();
            pth.push((name, g.pick(&["\n", "\r\n", "\r"]), body));
        }
        let sitecustomize = match g.below(6) {
            0 => Some(Line::Insert(Place::B)),
            1 => Some(Line::Insert(Place::C)),
            2 => Some(Line::Harmless),
            _ => None,
        };
        let referenced = |p: Place| {
            pth.iter()
                .flat_map(|(_, _, l)| l.iter())
                .chain(sitecustomize.iter())
                .any(|l| matches!(*l, Line::Path(q, _) | Line::Insert(q) if q == p))
        };
        let content = |g: &mut Gen| match g.below(5) {
            0 => None,
            1 | 2 => Some(true),
            _ => Some(false),
        };
        // Inside copies exist only where something names them: a copy nothing puts on the
        // path is not an import-path question.
        let mut holds = vec![(Place::Site, content(g))];
        for p in [Place::A, Place::B] {
            let c = content(g);
            holds.push((p, c.filter(|_| referenced(p))));
        }
        holds.push((Place::C, content(g)));
        Case {
            holds,
            pth,
            sitecustomize,
        }
    }

    fn holds(&self, place: Place) -> Option<bool> {
        self.holds
            .iter()
            .find(|(p, _)| *p == place)
            .and_then(|(_, h)| *h)
    }
}

/// The directories of a case's places.
struct Places {
    env: PathBuf,
    site: PathBuf,
    outside: PathBuf,
}

impl Places {
    fn dir(&self, p: Place) -> PathBuf {
        match p {
            Place::Site => self.site.clone(),
            Place::A => self.env.join("src-a"),
            Place::B => self.env.join("lib-b"),
            Place::C => self.outside.join("elsewhere-c"),
        }
    }

    fn text(&self, line: Line, relative: bool) -> String {
        let path = |p: Place| {
            if relative {
                pathdiff(&self.dir(p), &self.site)
            } else {
                self.dir(p).display().to_string()
            }
        };
        match line {
            Line::Path(p, abs) => {
                if abs || p == Place::C {
                    self.dir(p).display().to_string()
                } else {
                    path(p)
                }
            }
            Line::Missing => self.env.join("none").display().to_string(),
            Line::Comment => "# a comment".into(),
            Line::Blank => "   ".into(),
            Line::Insert(p) => format!(
                "import sys; sys.path.insert(0, {:?})",
                self.dir(p).display().to_string()
            ),
            Line::Harmless => "import os".into(),
        }
    }

    /// Lay `case` out (after clearing the previous one).
    fn write(&self, case: &Case) {
        for p in [Place::A, Place::B, Place::C] {
            let _ = std::fs::remove_dir_all(self.dir(p));
        }
        let _ = std::fs::remove_dir_all(&self.site);
        std::fs::create_dir_all(&self.site).expect("mkdir");
        for (place, held) in &case.holds {
            let Some(buggy) = held else {
                continue;
            };
            let (version, call) = if *buggy {
                ("0.30.0", Sm90Call::Buggy)
            } else {
                ("0.33.0", Sm90Call::Fixed)
            };
            write_tree(&self.dir(*place), &vllm_files(version, call));
        }
        // The distribution's metadata is in site-packages whatever holds the package.
        let version = match case.holds(Place::Site) {
            Some(true) => "0.30.0",
            _ => "0.33.0",
        };
        let meta: Vec<_> = with_dist_info("vllm", version, Vec::new());
        write_tree(&self.site, &meta);
        for (name, end, lines) in &case.pth {
            let text: String = lines
                .iter()
                .map(|l| format!("{}{end}", self.text(*l, true)))
                .collect();
            std::fs::write(self.site.join(name), text).expect("write");
        }
        if let Some(line) = case.sitecustomize {
            let code = match line {
                Line::Insert(p) => format!(
                    "import sys\nsys.path.insert(0, {:?})\n",
                    self.dir(p).display().to_string()
                ),
                _ => "import os\n".to_string(),
            };
            std::fs::write(self.site.join("sitecustomize.py"), code).expect("write");
        }
    }

    /// The place a file lies in.
    fn place_of(&self, file: &Path) -> Option<Place> {
        [Place::Site, Place::A, Place::B, Place::C]
            .into_iter()
            .find(|p| file.starts_with(self.dir(*p)))
    }
}

/// Where CPython imports `vllm` from (`None`: it cannot import it).
fn imported_or_none(python: &Path) -> Option<PathBuf> {
    let out = Command::new(python)
        .args([
            "-c",
            "import os, vllm; print(os.path.realpath(vllm.__file__))",
        ])
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .env("PYTHONNOUSERSITE", "1")
        .output()
        .expect("python runs");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ModuleNotFoundError"), "{err}");
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

#[test]
fn generated_environments_agree_with_cpython_or_are_unknown() {
    let Some((tmp, env, python, site)) = setup() else {
        return;
    };
    let env = env.canonicalize().expect("canonical");
    let site = site.canonicalize().expect("canonical");
    let places = Places {
        env: env.clone(),
        site: site.clone(),
        outside: tmp.path().canonicalize().expect("canonical"),
    };
    let count: u64 = std::env::var("PINPROBE_IMPORT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let mut from = std::collections::BTreeMap::new();
    for seed in 0..count {
        let case = Case::generate(&mut Gen(seed));
        places.write(&case);
        let imported = imported_or_none(&python).map(|f| {
            places.place_of(&f).unwrap_or_else(|| {
                panic!("seed {seed}: CPython imports {f:?}, outside every place")
            })
        });
        *from.entry(format!("{imported:?}")).or_insert(0) += 1;
        let run = scan(&env);
        assert_ne!(run.code, 2, "seed {seed}: {}", run.all());
        let found = fa4(&run);
        assert!(!found.is_empty(), "seed {seed} {case:?}: {}", run.all());
        let truth = imported.and_then(|p| case.holds(p));
        for (status, file, evidence) in &found {
            // The copy a finding is about: the directory above `vllm/vllm_flash_attn`.
            let copy = file
                .split_once("vllm/vllm_flash_attn/")
                .and_then(|(root, _)| {
                    // `lib64` is a link to `lib` in a venv: compare real paths.
                    let dir = env.join(root.trim_end_matches('/'));
                    places.place_of(&dir.canonicalize().unwrap_or(dir))
                });
            let what = format!(
                "seed {seed}: {case:?}\nCPython imports from {imported:?}; pinprobe says {status} for {file}: {evidence}"
            );
            if copy.is_some() && copy == imported {
                let right = match truth {
                    Some(true) => "affected",
                    _ => "not_affected",
                };
                assert!(status == right || status == "unknown", "{what}");
            } else {
                assert_ne!(
                    status, "not_affected",
                    "not the copy CPython imports: {what}"
                );
            }
        }
        if truth == Some(true) {
            assert_ne!(
                run.code, 0,
                "seed {seed}: CPython imports a buggy copy: {case:?}"
            );
        }
    }
    // The generated cases reach every kind of answer.
    for place in ["Some(Site)", "Some(A)", "Some(C)", "None"] {
        assert!(
            from.contains_key(place),
            "no case imports from {place}: {from:?}"
        );
    }
    eprintln!("generated environments, by where CPython imports vllm from: {from:?}");
}

// ---- Generated interpreter prefixes, judged by CPython ----------------------------------------

/// A prefix laid out as an interpreter's (`P/bin/python3`, `P/lib/python3.X/` linking the real
/// standard library, `P/lib/python3.X/site-packages`), run with `PYTHONHOME=P` and `HOME=P/root`
/// so its user site-packages is `P/root/.local/lib/python3.X/site-packages`: where a
/// `sitecustomize.py` in the interpreter's own library directory, a `usercustomize.py` and a
/// user site-packages holding vLLM make CPython import it from, against what pinprobe says of
/// the prefix.
struct Prefix {
    root: PathBuf,
    python: PathBuf,
    version: String,
    outside: PathBuf,
}

impl Prefix {
    fn make(tmp: &Path) -> Option<Prefix> {
        let out = Command::new("python3")
            .args([
                "-c",
                "import os, sys, sysconfig; print(os.path.realpath(sys.executable)); print(sysconfig.get_paths()['stdlib'])",
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let (exe, stdlib) = (PathBuf::from(lines.next()?), PathBuf::from(lines.next()?));
        let version = stdlib.file_name()?.to_str()?.to_string();
        let root = tmp.join("prefix");
        let lib = root.join("lib").join(&version);
        std::fs::create_dir_all(root.join("bin")).ok()?;
        std::fs::create_dir_all(&lib).ok()?;
        std::os::unix::fs::symlink(&exe, root.join("bin/python3")).ok()?;
        for entry in std::fs::read_dir(&stdlib).ok()?.flatten() {
            let name = entry.file_name();
            if name != "site-packages" && name != "sitecustomize.py" && name != "usercustomize.py" {
                std::os::unix::fs::symlink(entry.path(), lib.join(&name)).ok()?;
            }
        }
        Some(Prefix {
            python: root.join("bin/python3"),
            outside: tmp.join("elsewhere"),
            root,
            version,
        })
    }

    fn lib(&self) -> PathBuf {
        self.root.join("lib").join(&self.version)
    }

    fn site(&self) -> PathBuf {
        self.lib().join("site-packages")
    }

    fn user(&self) -> PathBuf {
        self.root
            .join("root/.local/lib")
            .join(&self.version)
            .join("site-packages")
    }

    fn imported(&self) -> Option<PathBuf> {
        let out = Command::new(&self.python)
            .args([
                "-c",
                "import os, vllm; print(os.path.realpath(vllm.__file__))",
            ])
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONNOUSERSITE")
            .env("PYTHONHOME", &self.root)
            .env("HOME", self.root.join("root"))
            .output()
            .expect("python runs");
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("ModuleNotFoundError"), "{err}");
            return None;
        }
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }
}

#[test]
fn generated_interpreter_prefixes_agree_with_cpython_or_are_unknown() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tmp_path = tmp.path().canonicalize().expect("canonical");
    let made = Prefix::make(&tmp_path);
    if !common::require::require(
        made.is_some(),
        "python3 whose standard library can be linked into a prefix (PYTHONHOME)",
    ) {
        return;
    }
    let Some(p) = made else {
        return;
    };
    let copy = |dir: &Path, held: Option<bool>| {
        let _ = std::fs::remove_dir_all(dir.join("vllm"));
        if let Some(buggy) = held {
            let (version, call) = if buggy {
                ("0.30.0", Sm90Call::Buggy)
            } else {
                ("0.33.0", Sm90Call::Fixed)
            };
            write_tree(dir, &vllm_files(version, call));
        }
    };
    let apport = "try:\n    import apport_python_hook\nexcept ImportError:\n    pass\nelse:\n    apport_python_hook.install()\n";
    let insert = format!(
        "import sys\nsys.path.insert(0, {:?})\n",
        p.outside.display().to_string()
    );
    let count: u64 = std::env::var("PINPROBE_IMPORT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
        / 2;
    let mut from = std::collections::BTreeMap::new();
    for seed in 0..count {
        let mut g = Gen(0x5eed_0000 + seed);
        let held = |g: &mut Gen| match g.below(3) {
            0 => None,
            1 => Some(true),
            _ => Some(false),
        };
        let (site, user, outside) = (held(&mut g), held(&mut g), held(&mut g));
        let sitecustomize = g.pick(&[None, Some(apport), Some(insert.as_str())]);
        let usercustomize = g.pick(&[None, Some(insert.as_str())]);
        let case = format!(
            "seed {seed}: site {site:?}, user {user:?}, outside {outside:?}, lib/sitecustomize.py {sitecustomize:?}, usercustomize.py {usercustomize:?}"
        );
        std::fs::create_dir_all(p.site()).expect("mkdir");
        std::fs::create_dir_all(p.user()).expect("mkdir");
        std::fs::create_dir_all(&p.outside).expect("mkdir");
        copy(&p.site(), site);
        copy(&p.user(), user);
        copy(&p.outside, outside);
        let meta = with_dist_info("vllm", "0.33.0", Vec::new());
        write_tree(&p.site(), &meta);
        for (dir, file, text) in [
            (p.lib(), "sitecustomize.py", sitecustomize),
            (p.user(), "usercustomize.py", usercustomize),
        ] {
            let _ = std::fs::remove_file(dir.join(file));
            if let Some(text) = text {
                std::fs::write(dir.join(file), text).expect("write");
            }
        }
        let place = |f: &Path| {
            [
                ("site", p.site()),
                ("user", p.user()),
                ("outside", p.outside.clone()),
            ]
            .into_iter()
            .find(|(_, d)| f.starts_with(d))
            .map(|(n, _)| n)
        };
        let imported = p
            .imported()
            .map(|f| place(&f).unwrap_or_else(|| panic!("{case}: CPython imports {f:?}")));
        *from.entry(format!("{imported:?}")).or_insert(0) += 1;
        let truth = match imported {
            Some("site") => site,
            Some("user") => user,
            Some(_) => outside,
            None => None,
        };
        let run = scan(&p.root);
        assert_ne!(run.code, 2, "{case}: {}", run.all());
        let found = fa4(&run);
        assert!(!found.is_empty(), "{case}: {}", run.all());
        for (status, file, evidence) in &found {
            let judged = file
                .split_once("vllm/vllm_flash_attn/")
                .and_then(|(root, _)| place(&p.root.join(root.trim_end_matches('/'))));
            let what = format!(
                "{case}\nCPython imports from {imported:?}; pinprobe says {status} for {file}: {evidence}"
            );
            if judged.is_some() && judged == imported {
                let right = if truth == Some(true) {
                    "affected"
                } else {
                    "not_affected"
                };
                assert!(status == right || status == "unknown", "{what}");
            } else {
                assert_ne!(
                    status, "not_affected",
                    "not the copy CPython imports: {what}"
                );
            }
        }
        if truth == Some(true) {
            assert_ne!(run.code, 0, "{case}: CPython imports a buggy copy");
        }
    }
    for place in ["Some(\"site\")", "Some(\"user\")", "Some(\"outside\")"] {
        assert!(
            from.contains_key(place),
            "no case imports from {place}: {from:?}"
        );
    }
    eprintln!("generated prefixes, by where CPython imports vllm from: {from:?}");
}
