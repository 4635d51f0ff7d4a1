//! pinprobe's CMake evaluation against real CMake.
//!
//! Each case is a source tree; CMake configures it with the recording stand-ins of
//! `tests/cmake_oracle/` first on `CMAKE_MODULE_PATH`, so `include(FetchContent)` /
//! `include(ExternalProject)` / `include(CPM)` record what would be fetched and nothing is
//! downloaded. pinprobe evaluates the same tree. Required, for CMake's default run (no `-D`,
//! none of the case's environment variables) and for every variant run (with `-D` / environment
//! values): each fetch CMake records is among pinprobe's possible fetches of that name; the
//! default configuration pinprobe identifies fetches exactly what CMake's default run does; and
//! a tree without unknown inputs has exactly one configuration, every value exact. A value
//! pinprobe gives as a finite set of alternatives (a condition joined past the fork depth) must
//! hold CMake's value, and for generated decision trees over literal tags the set is exactly
//! what CMake fetches over every setting of the inputs.
//!
//! Needs `cmake` (`pip install cmake`). Without it the tests print a skip line, unless
//! `PINPROBE_REQUIRE_CMAKE` is set (CI sets it), which makes a missing cmake a failure.
//! `PINPROBE_CMAKE_CASES=N` sets the number of generated programs (default 120);
//! `PINPROBE_CMAKE_JOIN_CASES=N` the number of generated decision trees over literal tags
//! (default 6, 16 CMake runs each).

use pinprobe::pin::cmake::{self, Evaluation, Fetch};
use pinprobe::pin::components::Registry;
use pinprobe::view::DirView;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------------

pub(crate) fn cmake_available() -> bool {
    let ok = Command::new("cmake")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("PINPROBE_REQUIRE_CMAKE").is_some() {
            panic!("PINPROBE_REQUIRE_CMAKE is set but `cmake --version` does not run");
        }
        eprintln!("skipped: cmake not found (pip install cmake); differential tests not run");
    }
    ok
}

/// One fetch as recorded: command, name, repository, tag, URL, local source directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Record {
    pub(crate) command: String,
    pub(crate) name: String,
    pub(crate) repo: String,
    pub(crate) tag: String,
    pub(crate) url: String,
    pub(crate) local: bool,
}

/// One CMake run of a case: its `-D` values and environment, the fetches recorded and whether
/// CMake stopped with an error. The recorded corpus (`tests/data/cmake_oracle/`) keeps these.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Outcome {
    pub(crate) defs: Vec<(String, String)>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) records: Vec<Record>,
    pub(crate) failed: bool,
    #[serde(skip)]
    pub(crate) log: String,
}

impl Outcome {
    /// The same answer from CMake (the log aside).
    fn same_answer(&self, other: &Outcome) -> bool {
        self.defs == other.defs
            && self.env == other.env
            && self.records == other.records
            && self.failed == other.failed
    }
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmake_oracle")
}

/// Configure `src` with CMake, `-D` values and environment variables as given.
pub(crate) fn run_cmake(
    src: &Path,
    defs: &[(String, String)],
    env: &[(String, String)],
) -> Outcome {
    let work = tempfile::tempdir().expect("tempdir");
    let out = work.path().join("fetches.txt");
    let mut cmd = Command::new("cmake");
    cmd.arg("-S")
        .arg(src)
        .arg("-B")
        .arg(work.path().join("build"))
        .arg(format!("-DCMAKE_MODULE_PATH={}", oracle_dir().display()))
        .arg(format!("-DPINPROBE_ORACLE_OUT={}", out.display()));
    for (k, v) in defs {
        cmd.arg(format!("-D{k}={v}"));
    }
    for (k, _) in std::env::vars() {
        if k.starts_with("PP_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("cmake runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let records = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let g = |i: usize| f.get(i).copied().unwrap_or("").to_string();
            Record {
                command: g(0),
                name: g(1),
                repo: g(2),
                tag: g(3),
                url: g(4),
                local: !g(5).is_empty(),
            }
        })
        .collect();
    let failed = !o.status.success() && !log.contains("pinprobe-done");
    Outcome {
        defs: defs.to_vec(),
        env: env.to_vec(),
        records,
        failed,
        log,
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

pub(crate) fn write_tree(files: &BTreeMap<String, String>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
    }
    dir
}

fn evaluate(src: &Path) -> Evaluation {
    let view = DirView::new(src);
    cmake::evaluate(&view).expect("pinprobe evaluates")
}

fn same_fetch(f: &Fetch, r: &Record) -> bool {
    let text = |v: &Option<cmake::Value>| v.as_ref().map(|v| v.text.clone()).unwrap_or_default();
    // A value some input can make anything matches whatever CMake fetched; a finite set of
    // alternatives must hold CMake's value.
    let matches = |v: &Option<cmake::Value>, want: &str| match v {
        Some(v) => v
            .finite()
            .is_none_or(|alts| alts.iter().any(|a| a.text == want)),
        None => want.is_empty(),
    };
    f.name.eq_ignore_ascii_case(&r.name)
        && if r.local {
            f.local_source.is_some() || !f.bypass.is_empty()
        } else {
            f.local_source.is_none()
                && matches(&f.repository, &r.repo)
                && matches(&f.tag, &r.tag)
                && (matches(&f.url, &r.url) || text(&f.url) == r.url)
        }
}

fn describe(e: &Evaluation) -> String {
    serde_json::to_string_pretty(e).unwrap_or_default()
}

/// A variant run: `-D` values and environment variables.
type Variant = (Vec<(String, String)>, Vec<(String, String)>);

/// A case: files, whether it reads unknown inputs, and variant runs.
struct Case {
    name: String,
    files: BTreeMap<String, String>,
    has_inputs: bool,
    variants: Vec<Variant>,
    /// Unknown is the answer the case expects (it reads what pinprobe cannot know, such as a
    /// file the configuration wrote); a decided answer must still agree.
    undecided_ok: bool,
}

/// CMake's runs of a case: the default run (no `-D`, no environment), then each variant.
fn cmake_runs(case: &Case, src: &Path) -> Vec<Outcome> {
    let mut runs = vec![run_cmake(src, &[], &[])];
    for (defs, env) in &case.variants {
        runs.push(run_cmake(src, defs, env));
    }
    runs
}

/// Check one case, written at `src`, against CMake's runs of it (live or recorded: the default
/// run first, then the variants); `Err` explains the disagreement.
fn check_against(case: &Case, src: &Path, runs: &[Outcome]) -> Result<Verdict, String> {
    let eval = evaluate(src);
    let ctx = |msg: String, o: Option<&Outcome>| {
        let files: String = case
            .files
            .iter()
            .map(|(p, t)| format!("--- {p}\n{t}"))
            .collect();
        format!(
            "case {}: {msg}\n{files}\ncmake: {}\npinprobe: {}",
            case.name,
            o.map(|o| format!("{:?}\n{}", o.records, o.log))
                .unwrap_or_default(),
            describe(&eval)
        )
    };
    if let Some(reason) = &eval.undecided {
        // Unknown is a sound answer for a program with inputs (it never passes a gate), but
        // it is counted; without inputs it is a failure.
        if case.has_inputs {
            return Ok(Verdict::Undecided);
        }
        return Err(ctx(format!("pinprobe undecided: {reason}"), None));
    }
    let Some(default) = runs.first() else {
        return Err(ctx("no CMake run".into(), None));
    };
    // The default configuration: exactly one without inputs; with inputs pinprobe may say it
    // cannot identify it (approximations in joined regions), but one it names must be right.
    let defaults: Vec<_> = eval.configurations.iter().filter(|c| c.default).collect();
    let no_default_ok = case.has_inputs && defaults.is_empty();
    if defaults.len() != 1 && !no_default_ok {
        return Err(ctx(
            format!("{} default configurations", defaults.len()),
            Some(default),
        ));
    }
    let verdict = if no_default_ok {
        Verdict::NoDefault
    } else {
        Verdict::Agrees
    };
    if let Some(d) = defaults.first() {
        check_default(d, default).map_err(|m| ctx(m, Some(default)))?;
    }
    if !case.has_inputs {
        let d = defaults[0];
        if eval.configurations.len() != 1 {
            return Err(ctx(
                format!(
                    "{} configurations without inputs",
                    eval.configurations.len()
                ),
                Some(default),
            ));
        }
        let inexact = d.fetches.iter().any(|f| {
            [&f.repository, &f.tag, &f.url]
                .iter()
                .any(|v| v.as_ref().is_some_and(|v| !v.is_exact()))
        });
        if inexact {
            return Err(ctx("an inexact value without inputs".into(), Some(default)));
        }
    }
    // Soundness over the variants (and the default run).
    for run in runs {
        for r in &run.records {
            let found = eval
                .configurations
                .iter()
                .any(|c| c.fetches.iter().any(|f| same_fetch(f, r)));
            if !found {
                return Err(ctx(
                    format!("CMake's fetch {r:?} is not among pinprobe's"),
                    Some(run),
                ));
            }
        }
    }
    Ok(verdict)
}

/// How a case that passed was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Agrees,
    /// No default configuration named (allowed with inputs).
    NoDefault,
    /// The evaluation said unknown (allowed with inputs).
    Undecided,
}

/// The default configuration pinprobe names fetches exactly what CMake's default run does, in
/// order (fetches that only happen on another side of a joined condition aside).
fn check_default(d: &cmake::Configuration, default: &Outcome) -> Result<(), String> {
    if d.failed.is_some() != default.failed {
        return Err(format!(
            "default run failed: pinprobe {:?}, cmake {}",
            d.failed, default.failed
        ));
    }
    // A value with an input that has no default (an opaque one: what a process printed, a
    // file the configuration wrote) has no default text either: any of CMake's matches it.
    let is = |v: &Option<cmake::Value>, want: &str| match v {
        Some(v) if v.inputs.iter().any(|i| !i.has_default()) && v.finite().is_none() => true,
        Some(v) => v.text == want,
        None => want.is_empty(),
    };
    let mine: Vec<&Fetch> = d.fetches.iter().filter(|f| f.only_if.is_empty()).collect();
    let same = mine.len() == default.records.len()
        && mine.iter().zip(&default.records).all(|(f, r)| {
            f.name.eq_ignore_ascii_case(&r.name)
                && (r.local == f.local_source.is_some())
                && (r.local
                    || (is(&f.repository, &r.repo) && is(&f.tag, &r.tag) && is(&f.url, &r.url)))
        });
    if same {
        Ok(())
    } else {
        Err("default configuration differs from CMake's run".into())
    }
}

fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const HEAD: &str =
    "cmake_minimum_required(VERSION 3.26)\nproject(t LANGUAGES NONE)\ninclude(FetchContent)\n";
const FA: &str = "https://github.com/vllm-project/flash-attention.git";
const AFFECTED: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
const FIX: &str = "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46";

fn case(name: &str, list: &[(&str, &str)], has_inputs: bool) -> Case {
    let mut f = files(list);
    if let Some(top) = f.get_mut("CMakeLists.txt") {
        *top = format!("{HEAD}{top}");
    }
    Case {
        name: name.into(),
        files: f,
        has_inputs,
        variants: Vec::new(),
        undecided_ok: false,
    }
}

// ---------------------------------------------------------------------------------------------
// One hand-written case per class of issue 13, and one table per command family: `commands.rs`
// ---------------------------------------------------------------------------------------------

#[path = "cmake_differential/commands.rs"]
mod commands;
#[path = "cmake_differential/regex.rs"]
mod regex;
#[path = "cmake_differential/round2.rs"]
mod round2;
#[path = "cmake_differential/share.rs"]
mod share;
/// How many generated cases each sharing property test runs: `PINPROBE_SHARE_CASES`, else 150.
fn share_cases() -> usize {
    std::env::var("PINPROBE_SHARE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150)
}
#[path = "cmake_differential/share_inputs.rs"]
mod share_inputs;

/// The environment case's preset is a configuration of its own, with the mirror.
#[test]
fn a_preset_is_a_configuration_of_its_own() {
    let dir = write_tree(&commands::preset_tree());
    let eval = evaluate(dir.path());
    assert!(
        eval.configurations
            .iter()
            .any(|c| c.preset.as_deref() == Some("mirror")
                && c.fetches.iter().any(|f| f
                    .repository
                    .as_ref()
                    .is_some_and(|r| r.text == "https://mirror.invalid/fa.git")))
    );
}

// ---------------------------------------------------------------------------------------------
// Generated programs
// ---------------------------------------------------------------------------------------------

const TAGS: &[&str] = &["t0", "t1", "t2", "v1.2", AFFECTED, FIX];
const NVARS: usize = 4;

/// Random CMake programs built from the constructs the evaluator claims to follow.
struct Gen {
    rng: StdRng,
    /// Whether unknown inputs (environment, user cache variables) may be read.
    inputs: bool,
    used_input: bool,
    files: BTreeMap<String, String>,
    counter: usize,
    env_names: Vec<String>,
    cache_names: Vec<String>,
}

impl Gen {
    fn new(seed: u64, inputs: bool) -> Gen {
        Gen {
            rng: StdRng::seed_from_u64(seed),
            inputs,
            used_input: false,
            files: BTreeMap::new(),
            counter: 0,
            env_names: Vec::new(),
            cache_names: Vec::new(),
        }
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn var(&mut self) -> String {
        format!("V{}", self.rng.random_range(0..NVARS))
    }

    fn fresh(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    fn env_input(&mut self) -> String {
        self.used_input = true;
        let n = format!("PP_E{}", self.rng.random_range(0..2));
        if !self.env_names.contains(&n) {
            self.env_names.push(n.clone());
        }
        n
    }

    fn cache_input(&mut self) -> String {
        self.used_input = true;
        let n = format!("PP_C{}", self.rng.random_range(0..2));
        if !self.cache_names.contains(&n) {
            self.cache_names.push(n.clone());
        }
        n
    }

    fn expr(&mut self) -> String {
        let choice = self.rng.random_range(0..if self.inputs { 7 } else { 5 });
        match choice {
            0 | 1 => self.pick(TAGS).to_string(),
            2 => format!("${{{}}}", self.var()),
            3 => format!("\"${{{}}}\"", self.var()),
            4 => format!("{}-${{{}}}", self.pick(&["x", "y"]), self.var()),
            5 => format!("$ENV{{{}}}", self.env_input()),
            _ => format!("${{{}}}", self.cache_input()),
        }
    }

    fn cond(&mut self, depth: usize) -> String {
        let n = if self.inputs { 14 } else { 11 };
        match self.rng.random_range(0..n) {
            0 => self
                .pick(&[
                    "TRUE",
                    "FALSE",
                    "0",
                    "1",
                    "ON",
                    "OFF",
                    "\"\"",
                    "Y",
                    "NOTFOUND",
                    "x-NOTFOUND",
                    "2.5",
                ])
                .to_string(),
            1 => format!("DEFINED {}", self.var()),
            2 => {
                let v = self.var();
                let t = self.pick(TAGS);
                if self.rng.random_bool(0.5) {
                    format!("{v} STREQUAL \"{t}\"")
                } else {
                    format!("{v} STREQUAL {t}")
                }
            }
            3 => format!("\"${{{}}}\" STREQUAL \"${{{}}}\"", self.var(), self.var()),
            4 => format!("{} MATCHES \"^t[0-1]$\"", self.var()),
            5 => self.var(),
            6 => format!(
                "{} {} {}",
                self.pick(&["1", "2", "10"]),
                self.pick(&["LESS", "EQUAL", "GREATER_EQUAL"]),
                self.pick(&["2", "10"])
            ),
            7 => format!(
                "\"{}\" {} \"{}\"",
                self.pick(&["1.2.3", "1.10", "2.0"]),
                self.pick(&["VERSION_LESS", "VERSION_EQUAL", "VERSION_GREATER_EQUAL"]),
                self.pick(&["1.2", "1.10.0", "2"])
            ),
            8 if depth < 2 => format!("NOT {}", self.cond(depth + 1)),
            9 if depth < 2 => format!(
                "{} {} {}",
                self.cond(depth + 1),
                self.pick(&["AND", "OR"]),
                self.cond(depth + 1)
            ),
            10 if depth < 2 => format!("({})", self.cond(depth + 1)),
            11 => format!("DEFINED ENV{{{}}}", self.env_input()),
            12 => format!(
                "\"$ENV{{{}}}\" STREQUAL \"{}\"",
                self.env_input(),
                self.pick(TAGS)
            ),
            13 => self.cache_input(),
            _ => "TRUE".into(),
        }
    }

    fn fetch(&mut self) -> Vec<String> {
        let c = format!("c{}", self.rng.random_range(0..3));
        let repo = format!("https://example.invalid/{c}.git");
        let tag = self.expr();
        match self.rng.random_range(0..5) {
            0 | 1 => vec![
                format!("FetchContent_Declare({c} GIT_REPOSITORY {repo} GIT_TAG {tag})"),
                format!("FetchContent_MakeAvailable({c})"),
            ],
            2 => vec![format!(
                "FetchContent_Declare({c} GIT_REPOSITORY {repo} GIT_TAG {tag})"
            )],
            3 => vec![format!(
                "FetchContent_Populate(p{} SOURCE_DIR ${{CMAKE_BINARY_DIR}}/p GIT_REPOSITORY {repo} GIT_TAG {tag})",
                self.fresh()
            )],
            _ => vec![format!(
                "ExternalProject_Add(e{} GIT_REPOSITORY {repo} GIT_TAG {tag})",
                self.fresh()
            )],
        }
    }

    fn block(&mut self, depth: usize, out: &mut Vec<String>) {
        let n = self.rng.random_range(1..5);
        for _ in 0..n {
            self.stmt(depth, out);
        }
    }

    fn stmt(&mut self, depth: usize, out: &mut Vec<String>) {
        let deep = depth < 3;
        match self.rng.random_range(0..16) {
            0 | 1 => {
                let (v, e) = (self.var(), self.expr());
                out.push(format!("set({v} {e})"));
            }
            2 => {
                let (v, e) = (self.var(), self.expr());
                out.push(format!("set({v} {e} CACHE STRING \"\" FORCE)"));
            }
            3 | 4 if deep => {
                let c = self.cond(0);
                out.push(format!("if({c})"));
                self.block(depth + 1, out);
                if self.rng.random_bool(0.4) {
                    let c = self.cond(0);
                    out.push(format!("elseif({c})"));
                    self.block(depth + 1, out);
                }
                if self.rng.random_bool(0.5) {
                    out.push("else()".into());
                    self.block(depth + 1, out);
                }
                out.push("endif()".into());
            }
            5 => {
                let (v, e) = (self.var(), self.expr());
                let w = self.var();
                out.push(match self.rng.random_range(0..5) {
                    0 => format!("string(APPEND {v} {e})"),
                    1 => format!("string(CONCAT {v} {e} \"-\" ${{{w}}})"),
                    2 => format!("string(REPLACE \"t\" \"T\" {v} \"${{{w}}}\")"),
                    3 => format!("string(TOLOWER \"${{{w}}}\" {v})"),
                    _ => format!("string(PREPEND {v} {e})"),
                });
            }
            6 => {
                let (v, a, b) = (self.var(), self.expr(), self.expr());
                let i = self.rng.random_range(0..3);
                out.push(format!("set(L{i} \"\")"));
                out.push(format!("list(APPEND L{i} {a} {b})"));
                out.push(format!("list(LENGTH L{i} N{i})"));
                out.push(format!("if(N{i} GREATER 0)"));
                out.push(format!("  list(GET L{i} -1 {v})"));
                out.push("endif()".into());
            }
            7 if deep => {
                let f = self.fresh();
                let (v, w) = (self.var(), self.var());
                out.push(format!("function(f{f} p)"));
                out.push(format!("  set({v} ${{p}}-f)"));
                let mut body = Vec::new();
                self.block(depth + 1, &mut body);
                out.extend(body.into_iter().map(|l| format!("  {l}")));
                out.push(format!("  set({w} \"${{{v}}}\" PARENT_SCOPE)"));
                out.push("endfunction()".into());
                let e = self.expr();
                out.push(format!("f{f}({e})"));
            }
            8 if deep => {
                let f = self.fresh();
                let v = self.var();
                out.push(format!("macro(m{f} p)"));
                out.push(format!("  set({v} \"${{p}}${{ARGN}}\")"));
                out.push("endmacro()".into());
                let e = self.expr();
                out.push(format!("m{f}({e} z)"));
            }
            9 if deep => {
                let (v, a, b) = (self.var(), self.expr(), self.expr());
                out.push(format!("foreach(item IN ITEMS {a} {b})"));
                out.push(format!("  set({v} \"${{item}}\")"));
                if self.rng.random_bool(0.3) {
                    out.push("  break()".into());
                }
                out.push("endforeach()".into());
            }
            10 if deep => {
                let f = self.fresh();
                let path = format!("inc/f{f}.cmake");
                let mut body = Vec::new();
                self.block(depth + 1, &mut body);
                self.files.insert(path.clone(), body.join("\n") + "\n");
                out.push(format!("include(${{CMAKE_SOURCE_DIR}}/{path})"));
                let _ = &path;
            }
            11 if deep => {
                let f = self.fresh();
                let dir = format!("sd{f}");
                let mut body = Vec::new();
                self.block(depth + 1, &mut body);
                let v = self.var();
                body.push(format!("set({v} \"${{{v}}}\" PARENT_SCOPE)"));
                self.files
                    .insert(format!("{dir}/CMakeLists.txt"), body.join("\n") + "\n");
                out.push(format!("add_subdirectory({dir})"));
            }
            12 => {
                let f = self.fresh();
                let tag = self.pick(TAGS);
                let v = self.var();
                self.files
                    .insert(format!("pins/p{f}.txt"), format!("# pin\n{tag}\n"));
                out.push(format!(
                    "file(STRINGS ${{CMAKE_SOURCE_DIR}}/pins/p{f}.txt {v} REGEX \"^[^#]\")"
                ));
            }
            13 if deep => {
                let f = self.fresh();
                let v = self.var();
                out.push(format!("set(K{f} 0)"));
                out.push(format!("while(K{f} LESS 2)"));
                out.push(format!("  math(EXPR K{f} \"${{K{f}}} + 1\")"));
                out.push(format!("  string(APPEND {v} \"${{K{f}}}\")"));
                out.push("endwhile()".into());
            }
            14 if self.inputs => {
                let (v, e) = (self.var(), self.expr());
                let c = self.cache_input();
                let _ = c;
                out.push(format!("set({v} {e} CACHE STRING \"\")"));
                self.used_input = true;
            }
            _ => out.extend(self.fetch()),
        }
    }

    fn program(mut self) -> Case {
        let mut out = Vec::new();
        for i in 0..NVARS {
            let t = self.pick(TAGS);
            out.push(format!("set(V{i} {t})"));
        }
        out.push("include(ExternalProject)".into());
        self.block(0, &mut out);
        // Every program fetches something at the end.
        let tag = self.expr();
        out.push(format!(
            "FetchContent_Declare(c0 GIT_REPOSITORY https://example.invalid/c0.git GIT_TAG {tag})"
        ));
        out.push("FetchContent_MakeAvailable(c0)".into());
        let mut files = std::mem::take(&mut self.files);
        files.insert(
            "CMakeLists.txt".into(),
            format!("{HEAD}{}\n", out.join("\n")),
        );
        // Variant runs: each input set to a tag, or the cache ones to ON.
        let mut variants = Vec::new();
        if self.used_input {
            for _ in 0..2 {
                let env: Vec<(String, String)> = self
                    .env_names
                    .clone()
                    .into_iter()
                    .map(|n| (n, self.pick(TAGS).to_string()))
                    .collect();
                let mut names = self.cache_names.clone();
                for i in 0..NVARS {
                    if self.rng.random_bool(0.2) {
                        names.push(format!("V{i}"));
                    }
                }
                let defs: Vec<(String, String)> = names
                    .into_iter()
                    .map(|n| (n, self.pick(&["ON", "t1", AFFECTED]).to_string()))
                    .collect();
                variants.push((defs, env));
            }
        }
        Case {
            name: String::new(),
            files,
            has_inputs: self.used_input,
            variants,
            undecided_ok: false,
        }
    }
}

/// The generated programs' default seed base and count; the recorded corpus holds these.
const GENERATED_BASE: u64 = 13;
const GENERATED_RECORDED: usize = 120;

fn generated_cases() -> usize {
    std::env::var("PINPROBE_CMAKE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GENERATED_RECORDED)
}

/// The `i`th generated program from seed base `base`: even ones without inputs, odd ones with.
fn generated_case(base: u64, i: usize) -> Case {
    let seed = base * 1_000_003 + i as u64;
    let mut case = Gen::new(seed, i % 2 == 1).program();
    case.name = format!("generated seed {seed}");
    case
}

/// Generated programs, half without unknown inputs (one configuration, exact), half with
/// environment and cache inputs (CMake's fetches under several input values must be among
/// pinprobe's). Two threads.
#[test]
fn generated_programs_agree_with_cmake() {
    if !cmake_available() {
        return;
    }
    let n = generated_cases();
    let base: u64 = std::env::var("PINPROBE_CMAKE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GENERATED_BASE);
    // The default programs are the recorded corpus's: their runs must still be what was recorded.
    let corpus =
        (base == GENERATED_BASE && n == GENERATED_RECORDED).then(|| Corpus::live(GENERATED_PART));
    let failures = std::sync::Mutex::new(Vec::new());
    let verdicts = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let failures = &failures;
            let verdicts = &verdicts;
            let corpus = &corpus;
            s.spawn(move || {
                for i in (t as usize..n).step_by(2) {
                    let case = generated_case(base, i);
                    let dir = write_tree(&case.files);
                    let runs = cmake_runs(&case, dir.path());
                    if let Some(c) = corpus {
                        c.observe(&case, &runs);
                    }
                    match check_against(&case, dir.path(), &runs) {
                        Ok(v) => verdicts.lock().expect("lock").push(v),
                        Err(e) => failures.lock().expect("lock").push(e),
                    }
                }
            });
        }
    });
    if let Some(c) = corpus {
        c.finish();
    }
    let failures = failures.into_inner().expect("lock");
    if let Some(dir) = std::env::var_os("PINPROBE_CMAKE_FAILURES") {
        std::fs::create_dir_all(&dir).expect("failure directory");
        for (i, f) in failures.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("{i}.txt")), f).expect("write failure");
        }
    }
    if let Some(first) = failures.first() {
        panic!(
            "{} of {n} generated programs disagree; first:\n{first}",
            failures.len()
        );
    }
    let verdicts = verdicts.into_inner().expect("lock");
    let count = |v: Verdict| verdicts.iter().filter(|x| **x == v).count();
    eprintln!(
        "{n} generated programs agree with cmake: {} with the default configuration named, {} with inputs where pinprobe names no default, {} with inputs undecided",
        count(Verdict::Agrees),
        count(Verdict::NoDefault),
        count(Verdict::Undecided)
    );
    // Unknown is sound but useless when common.
    assert!(
        count(Verdict::Undecided) * 10 <= n,
        "over a tenth of the generated programs undecided"
    );
}

// ---------------------------------------------------------------------------------------------
// The gate: generated trees that fetch the affected commit never pass `pinprobe scan`
// ---------------------------------------------------------------------------------------------

fn scan_cases() -> usize {
    std::env::var("PINPROBE_CMAKE_SCAN_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// Property: every generated tree whose real CMake run (the default one, or one with the
/// case's `-D` / environment values) fetches the affected FlashAttention commit makes
/// `pinprobe scan` (the binary, offline, built-in rules) exit non-zero. The generated trees
/// fetch it under names and repositories no rule knows (`c0` from `example.invalid`): a full SHA
/// listed as a known affected pin matches whatever it is called.
/// `PINPROBE_CMAKE_SCAN_CASES=N` sets how many programs are generated (default 24).
#[test]
fn generated_trees_fetching_the_affected_commit_never_exit_0() {
    if !cmake_available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_pinprobe");
    let n = scan_cases();
    let failures = std::sync::Mutex::new(Vec::new());
    let hits = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (failures, hits) = (&failures, &hits);
            s.spawn(move || {
                for i in (t as usize..n).step_by(2) {
                    let seed = 7_000_003 + i as u64;
                    let case = Gen::new(seed, i % 2 == 1).program();
                    let dir = write_tree(&case.files);
                    let runs = cmake_runs(&case, dir.path());
                    let affected = runs
                        .iter()
                        .any(|o| o.records.iter().any(|r| !r.local && r.tag == AFFECTED));
                    if !affected {
                        continue;
                    }
                    hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let out = Command::new(bin)
                        .args(["scan", "--offline", "--format", "json"])
                        .arg(dir.path())
                        .output()
                        .expect("pinprobe runs");
                    if out.status.code() == Some(0) {
                        let files: String = case
                            .files
                            .iter()
                            .map(|(p, t)| format!("--- {p}\n{t}"))
                            .collect();
                        failures.lock().expect("lock").push(format!(
                            "seed {seed}: cmake fetches {AFFECTED} but pinprobe exits 0\n{files}\ncmake: {:?}\npinprobe: {}",
                            runs.iter().map(|o| &o.records).collect::<Vec<_>>(),
                            String::from_utf8_lossy(&out.stdout)
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    let hits = hits.into_inner();
    if let Some(first) = failures.first() {
        panic!(
            "{} of {hits} generated trees that fetch the affected commit pass the gate; first:\n{first}",
            failures.len()
        );
    }
    eprintln!(
        "{hits} of {n} generated trees fetch the affected commit in some CMake run; pinprobe scan exits non-zero on every one"
    );
    assert!(hits > 0, "no generated tree fetched the affected commit");
}

// ---------------------------------------------------------------------------------------------
// Decision trees over literal tags: a joined condition keeps each side's literal value
// ---------------------------------------------------------------------------------------------

/// The inputs of a decision tree: `-D` cache variables. Those named `CMAKE_PP_*` have no
/// default for pinprobe (it reads `CMAKE_*` as the compiler's), so every condition on them is
/// joined, never forked; the `PP_J*` ones fork for the first three decisions and join after.
const JOIN_INPUTS: usize = 4;

fn join_input(level: usize, opaque: bool) -> String {
    if opaque {
        format!("CMAKE_PP_{level}")
    } else {
        format!("PP_J{level}")
    }
}

/// A random tree of `if()`s, the condition at depth d on input d (so every path is one CMake
/// can take), whose leaves set the tag and repository, a prefix, or declare the fetch
/// themselves.
struct TreeGen {
    rng: StdRng,
    opaque: Vec<bool>,
    counter: usize,
}

impl TreeGen {
    fn leaf(&mut self, out: &mut Vec<String>, indent: &str) {
        self.counter += 1;
        let n = self.counter;
        match self.rng.random_range(0..6) {
            0 => out.push(format!("{indent}set(TAG t{n})")),
            1 => {
                out.push(format!("{indent}set(TAG {})", if n.is_multiple_of(2) { AFFECTED } else { FIX }));
                out.push(format!("{indent}set(REPO https://example.invalid/r{n}.git)"));
            }
            2 => out.push(format!("{indent}set(PREFIX p{n}-)")),
            3 => out.push(format!(
                "{indent}FetchContent_Declare(c0 GIT_REPOSITORY https://example.invalid/d{n}.git GIT_TAG d{n})"
            )),
            4 => out.push(format!("{indent}set(TAG \"${{TAG}}-{n}\")")),
            _ => {}
        }
    }

    fn tree(&mut self, depth: usize, out: &mut Vec<String>) {
        let indent = "  ".repeat(depth);
        if depth >= JOIN_INPUTS || self.rng.random_bool(0.15) {
            self.leaf(out, &indent);
            return;
        }
        let input = join_input(depth, self.opaque[depth]);
        let cond = match self.rng.random_range(0..3) {
            0 => input.clone(),
            1 => format!("{input} STREQUAL \"rocm\""),
            _ => format!("NOT {input}"),
        };
        out.push(format!("{indent}if({cond})"));
        self.tree(depth + 1, out);
        if self.rng.random_bool(0.8) {
            out.push(format!("{indent}else()"));
            self.tree(depth + 1, out);
        }
        out.push(format!("{indent}endif()"));
    }

    fn program(seed: u64) -> BTreeMap<String, String> {
        let mut g = TreeGen {
            rng: StdRng::seed_from_u64(seed),
            opaque: Vec::new(),
            counter: 0,
        };
        g.opaque = (0..JOIN_INPUTS).map(|_| g.rng.random_bool(0.4)).collect();
        let mut out = vec![
            "set(TAG t0)".to_string(),
            "set(REPO https://example.invalid/c0.git)".to_string(),
            "set(PREFIX \"\")".to_string(),
        ];
        g.tree(0, &mut out);
        out.push(format!(
            "FetchContent_Declare(c0 GIT_REPOSITORY ${{REPO}} GIT_TAG {})",
            if g.rng.random_bool(0.5) {
                "${PREFIX}${TAG}"
            } else {
                "\"${TAG}\""
            }
        ));
        out.push("FetchContent_MakeAvailable(c0)".into());
        files(&[("CMakeLists.txt", &format!("{HEAD}{}\n", out.join("\n")))])
    }
}

/// A decision tree as a case: every setting of its inputs but the default one is a variant.
fn join_case(i: usize) -> Case {
    let seed = 15_000_017 + i as u64;
    let variants = (1..(1u32 << JOIN_INPUTS))
        .map(|bits| {
            let defs: Vec<(String, String)> = (0..JOIN_INPUTS)
                .filter(|i| bits & (1 << i) != 0)
                .flat_map(|i| [false, true].map(|o| (join_input(i, o), "rocm".to_string())))
                .collect();
            (defs, Vec::new())
        })
        .collect();
    Case {
        name: format!("decision tree seed {seed}"),
        files: TreeGen::program(seed),
        has_inputs: true,
        variants,
        undecided_ok: false,
    }
}

/// A decision tree against CMake's runs over every setting of its inputs: pinprobe's possible
/// (repository, tag) values of `c0` are exactly the ones CMake fetches.
fn check_join(case: &Case, src: &Path, runs: &[Outcome]) -> Result<(), String> {
    if let Some(run) = runs.iter().find(|r| r.failed) {
        return Err(format!("{}: cmake fails:\n{}", case.name, run.log));
    }
    let want: BTreeSet<(String, String)> = runs
        .iter()
        .flat_map(|r| &r.records)
        .filter(|r| r.name == "c0")
        .map(|r| (r.repo.clone(), r.tag.clone()))
        .collect();
    let got = pinprobe_values(src, "c0");
    if got.as_ref() == Ok(&want) {
        return Ok(());
    }
    Err(format!(
        "{}:\n{}\ncmake: {want:?}\npinprobe: {got:?}",
        case.name,
        case.files.values().cloned().collect::<String>()
    ))
}

/// pinprobe's possible (repository, tag) values of the pin `name`; `Err` when the evaluation
/// is undecided or a value is any value.
fn pinprobe_values(dir: &Path, name: &str) -> Result<BTreeSet<(String, String)>, String> {
    let view = DirView::new(dir);
    let eval = cmake::evaluate(&view).expect("pinprobe evaluates");
    if let Some(u) = &eval.undecided {
        return Err(format!("undecided: {u}"));
    }
    let pins = pinprobe::pin::from_evaluation(&eval, &view, &Registry { components: vec![] })
        .expect("pins");
    let pin = pins
        .pins
        .iter()
        .find(|p| p.declared_name == name)
        .ok_or("no pin")?;
    if pin.possible.is_empty() {
        let one = (
            pin.repo.clone().unwrap_or_default(),
            pin.reference.clone().unwrap_or_default(),
        );
        return Ok([one].into_iter().collect());
    }
    let mut out = BTreeSet::new();
    for p in &pin.possible {
        if !p.set_by.is_empty() {
            return Err(format!("any value: {}", p.shown()));
        }
        out.insert((
            p.repo.clone().unwrap_or_default(),
            p.reference.clone().unwrap_or_default(),
        ));
    }
    Ok(out)
}

/// The decision trees the live test checks by default; the recorded corpus holds these.
const JOIN_RECORDED: usize = 6;

fn join_cases() -> usize {
    std::env::var("PINPROBE_CMAKE_JOIN_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(JOIN_RECORDED)
}

/// Generated decision trees deeper than the fork depth, on `-D` inputs, choosing literal tags
/// and repositories: pinprobe's possible values of the pin are exactly the values real CMake
/// fetches over every setting of the inputs (never `any value`, nothing CMake cannot fetch).
#[test]
fn joined_conditions_keep_the_literal_values_cmake_can_fetch() {
    if !cmake_available() {
        return;
    }
    let n = join_cases();
    let corpus = (n == JOIN_RECORDED).then(|| Corpus::live(JOINED_PART));
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (failures, corpus) = (&failures, &corpus);
            s.spawn(move || {
                for i in (t as usize..n).step_by(2) {
                    let case = join_case(i);
                    let dir = write_tree(&case.files);
                    let runs = cmake_runs(&case, dir.path());
                    if let Some(c) = corpus {
                        c.observe(&case, &runs);
                    }
                    if let Err(e) = check_join(&case, dir.path(), &runs) {
                        failures.lock().expect("lock").push(e);
                    }
                }
            });
        }
    });
    if let Some(c) = corpus {
        c.finish();
    }
    let failures = failures.into_inner().expect("lock");
    if let Some(first) = failures.first() {
        panic!(
            "{} of {n} decision trees disagree; first:\n{first}",
            failures.len()
        );
    }
}

/// The vLLM shape (a device decides repository and tag, five decisions deep, past the fork
/// depth) is the two literal values CMake fetches, and a `-D` of the tag variable itself, or
/// one side reading the environment, is any value, as CMake can fetch anything there.
#[test]
fn a_joined_device_choice_is_two_values_and_an_input_tag_any() {
    if !cmake_available() {
        return;
    }
    let shape = |rocm_tag: &str| {
        format!(
            r#"foreach(i RANGE 1 3)
  if(DEFINED ENV{{PP_D${{i}}}})
    message(STATUS "d${{i}}")
  endif()
endforeach()
if(DEFINED ENV{{PP_SRC}})
  FetchContent_Declare(triton_kernels SOURCE_DIR $ENV{{PP_SRC}})
else()
  if(PP_DEVICE STREQUAL "rocm")
    set(TRITON_GIT "https://example.invalid/rocm/triton.git")
    set(TRITON_KERNELS_TAG {rocm_tag})
  else()
    set(TRITON_GIT "https://example.invalid/triton-lang/triton.git")
    set(TRITON_KERNELS_TAG "v3.5.1")
  endif()
  FetchContent_Declare(triton_kernels GIT_REPOSITORY ${{TRITON_GIT}} GIT_TAG ${{TRITON_KERNELS_TAG}})
endif()
FetchContent_MakeAvailable(triton_kernels)
"#
        )
    };
    let finite = shape(AFFECTED);
    let dir = write_tree(&files(&[("CMakeLists.txt", &format!("{HEAD}{finite}"))]));
    let mut want = BTreeSet::new();
    for device in ["", "rocm"] {
        let run = run_cmake(
            dir.path(),
            &pairs(&[("PP_DEVICE", device)]),
            &pairs(&[("PP_D1", "1"), ("PP_D2", "1"), ("PP_D3", "1")]),
        );
        want.extend(run.records.iter().map(|r| (r.repo.clone(), r.tag.clone())));
    }
    assert_eq!(want.len(), 2, "{want:?}");
    assert_eq!(pinprobe_values(dir.path(), "triton_kernels"), Ok(want));
    // The tag from the user's -D on one side: any value.
    let open = shape("${PP_ROCM_TAG}");
    let dir = write_tree(&files(&[("CMakeLists.txt", &format!("{HEAD}{open}"))]));
    let run = run_cmake(
        dir.path(),
        &pairs(&[("PP_DEVICE", "rocm"), ("PP_ROCM_TAG", "anything")]),
        &[],
    );
    assert!(
        run.records.iter().any(|r| r.tag == "anything"),
        "{:?}",
        run.records
    );
    let got = pinprobe_values(dir.path(), "triton_kernels");
    assert!(
        got.as_ref().is_err_and(|e| e.starts_with("any value")),
        "{got:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The recorded corpus: CMake's answers kept, so pinprobe is judged against them without cmake
// ---------------------------------------------------------------------------------------------
//
// `tests/data/cmake_oracle/<part>.json` holds, for each case of a part (the generated programs
// at the default seeds, the condition cases below, the decision trees of the joined-conditions
// test), a digest of the case and real CMake's runs of it. `recorded_cmake_answers_agree`
// checks pinprobe against those runs with the same checks as the live tests (`check_against`,
// `check_join`), in about a second and with no cmake: that is
// what makes mutation testing of `src/pin/cmake/` affordable (benches/results/mutants.md). The live tests
// (`generated_programs_agree_with_cmake`, `condition_cases_agree_with_cmake`) re-run CMake on
// every recorded case and fail when a recorded answer is no longer CMake's, so the data cannot
// drift from CMake. `PINPROBE_CMAKE_RECORD=1` makes them write the files instead:
//
//     PINPROBE_CMAKE_RECORD=1 cargo test --test cmake cmake_differential:: -- \
//         generated_programs_agree condition_cases_agree command_cases_agree joined_conditions_keep \
//         regex_cases_agree round2_cases_agree

const GENERATED_PART: &str = "generated";
const CONDITIONS_PART: &str = "conditions";
const JOINED_PART: &str = "joined";
const COMMANDS_PART: &str = "commands";
const REGEX_PART: &str = "regex";
const ROUND2_PART: &str = "round2";

/// One recorded case: its name, a digest of what it is (files, inputs, variants) and CMake's
/// runs of it (the default run first, then the variants).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Recorded {
    name: String,
    digest: String,
    runs: Vec<Outcome>,
}

fn corpus_path(part: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/cmake_oracle/{part}.json"))
}

fn digest(case: &Case) -> String {
    use sha2::{Digest, Sha256};
    let text = serde_json::to_string(&(&case.files, case.has_inputs, &case.variants))
        .expect("a case serialises");
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn load_corpus(part: &str) -> Vec<Recorded> {
    let path = corpus_path(part);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it: see RECORD)", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const RECORD: &str = "PINPROBE_CMAKE_RECORD=1 cargo test --test cmake cmake_differential:: -- generated_programs_agree condition_cases_agree command_cases_agree joined_conditions_keep regex_cases_agree round2_cases_agree";

/// A live test's view of one part of the corpus: each case's CMake runs are compared with the
/// recorded ones, or, with `PINPROBE_CMAKE_RECORD` set, collected and written.
struct Corpus {
    part: &'static str,
    recording: bool,
    recorded: BTreeMap<String, Recorded>,
    seen: std::sync::Mutex<Vec<Recorded>>,
    stale: std::sync::Mutex<Vec<String>>,
}

impl Corpus {
    fn live(part: &'static str) -> Corpus {
        let recording = std::env::var_os("PINPROBE_CMAKE_RECORD").is_some();
        let recorded = if recording {
            BTreeMap::new()
        } else {
            load_corpus(part)
                .into_iter()
                .map(|r| (r.name.clone(), r))
                .collect()
        };
        Corpus {
            part,
            recording,
            recorded,
            seen: std::sync::Mutex::new(Vec::new()),
            stale: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn observe(&self, case: &Case, runs: &[Outcome]) {
        let now = Recorded {
            name: case.name.clone(),
            digest: digest(case),
            runs: runs.to_vec(),
        };
        if !self.recording {
            let same = self.recorded.get(&case.name).is_some_and(|r| {
                r.digest == now.digest
                    && r.runs.len() == now.runs.len()
                    && r.runs.iter().zip(&now.runs).all(|(a, b)| a.same_answer(b))
            });
            if !same {
                self.stale.lock().expect("lock").push(format!(
                    "{}: recorded {:?}\ncmake now: {:?}",
                    case.name,
                    self.recorded.get(&case.name).map(|r| &r.runs),
                    now.runs
                ));
            }
        }
        self.seen.lock().expect("lock").push(now);
    }

    fn finish(self) {
        let mut seen = self.seen.into_inner().expect("lock");
        seen.sort_by(|a, b| a.name.cmp(&b.name));
        if self.recording {
            let path = corpus_path(self.part);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            let text = serde_json::to_string_pretty(&seen).expect("serialises");
            std::fs::write(&path, text + "\n").expect("write the corpus");
            eprintln!("recorded {} cases in {}", seen.len(), path.display());
            return;
        }
        let stale = self.stale.into_inner().expect("lock");
        assert!(
            stale.is_empty(),
            "{} recorded CMake answers of {} are stale (re-record: {RECORD}); first:\n{}",
            stale.len(),
            self.part,
            stale[0]
        );
        let names: BTreeSet<&String> = seen.iter().map(|r| &r.name).collect();
        let extra: Vec<&String> = self
            .recorded
            .keys()
            .filter(|n| !names.contains(n))
            .collect();
        assert!(
            extra.is_empty(),
            "recorded cases of {} no test runs: {extra:?} (re-record: {RECORD})",
            self.part
        );
    }
}

/// The cases of a part as the generators and tables write them now.
fn corpus_cases(part: &str) -> Vec<Case> {
    match part {
        GENERATED_PART => (0..GENERATED_RECORDED)
            .map(|i| generated_case(GENERATED_BASE, i))
            .collect(),
        JOINED_PART => (0..JOIN_RECORDED).map(join_case).collect(),
        COMMANDS_PART => commands::command_cases(),
        REGEX_PART => regex::regex_cases(),
        ROUND2_PART => round2::round2_cases(),
        _ => condition_cases(),
    }
}

/// pinprobe against the recorded CMake answers: no cmake needed, a fraction of a second a part.
/// Each case must be the one recorded (same digest); a condition case must not be undecided.
///
/// The replay runs on a thread of its own under a deadline (`PINPROBE_REPLAY_DEADLINE_S`,
/// 300 s unless set; it takes 3-4 s): an evaluation that loops, or a budget that never runs
/// out, fails the test with that cause instead of hanging the suite until CI's limit.
#[test]
fn recorded_cmake_answers_agree() {
    let deadline = std::env::var("PINPROBE_REPLAY_DEADLINE_S")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(300);
    let (done, finished) = std::sync::mpsc::channel();
    let replay = std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(replay_recorded);
        let _ = done.send(());
        outcome
    });
    match finished.recv_timeout(std::time::Duration::from_secs(deadline)) {
        Ok(()) => {
            if let Err(panic) = replay
                .join()
                .expect("the replay thread returns its outcome")
            {
                std::panic::resume_unwind(panic);
            }
        }
        Err(_) => panic!(
            "the replay of the recorded CMake answers did not finish in {deadline} s \
             (PINPROBE_REPLAY_DEADLINE_S): an evaluation loops or a budget never runs out"
        ),
    }
}

fn replay_recorded() {
    let tally = std::sync::Mutex::new(regex::Tally::default());
    for part in [
        GENERATED_PART,
        CONDITIONS_PART,
        JOINED_PART,
        COMMANDS_PART,
        REGEX_PART,
        ROUND2_PART,
    ] {
        let cases = corpus_cases(part);
        let recorded: BTreeMap<String, Recorded> = load_corpus(part)
            .into_iter()
            .map(|r| (r.name.clone(), r))
            .collect();
        assert_eq!(
            cases.len(),
            recorded.len(),
            "{part}: the corpus holds other cases than the tests write (re-record: {RECORD})"
        );
        let failures = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for t in 0..2usize {
                let (failures, cases, recorded, tally) = (&failures, &cases, &recorded, &tally);
                s.spawn(move || {
                    for case in cases.iter().skip(t).step_by(2) {
                        let Some(rec) = recorded.get(&case.name) else {
                            failures
                                .lock()
                                .expect("lock")
                                .push(format!("{}: not recorded (re-record: {RECORD})", case.name));
                            continue;
                        };
                        let runs_match = rec.runs.len() == case.variants.len() + 1
                            && rec
                                .runs
                                .iter()
                                .skip(1)
                                .zip(&case.variants)
                                .all(|(r, (defs, env))| r.defs == *defs && r.env == *env);
                        if rec.digest != digest(case) || !runs_match {
                            failures.lock().expect("lock").push(format!(
                                "{}: changed since it was recorded (re-record: {RECORD})",
                                case.name
                            ));
                            continue;
                        }
                        let dir = write_tree(&case.files);
                        if part == REGEX_PART {
                            match regex::check_regex(case, dir.path(), &rec.runs) {
                                Ok(t) => {
                                    let mut all = tally.lock().expect("lock");
                                    all.decided += t.decided;
                                    all.unknown += t.unknown;
                                }
                                Err(e) => failures.lock().expect("lock").push(e),
                            }
                            continue;
                        }
                        if part == JOINED_PART {
                            if let Err(e) = check_join(case, dir.path(), &rec.runs) {
                                failures.lock().expect("lock").push(e);
                            }
                            continue;
                        }
                        match check_against(case, dir.path(), &rec.runs) {
                            Ok(Verdict::Agrees | Verdict::NoDefault) => {}
                            Ok(Verdict::Undecided)
                                if part == GENERATED_PART || case.undecided_ok => {}
                            Ok(v) => failures
                                .lock()
                                .expect("lock")
                                .push(format!("{}: {v:?}", case.name)),
                            Err(e) => failures.lock().expect("lock").push(e),
                        }
                    }
                });
            }
        });
        let failures = failures.into_inner().expect("lock");
        if let Some(dir) = std::env::var_os("PINPROBE_CMAKE_FAILURES") {
            std::fs::create_dir_all(&dir).expect("failure directory");
            for (i, f) in failures.iter().enumerate() {
                std::fs::write(Path::new(&dir).join(format!("recorded-{part}-{i}.txt")), f)
                    .expect("write failure");
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} recorded {part} cases disagree with CMake's recorded answer; first:\n{}",
            failures.len(),
            cases.len(),
            failures.first().map(String::as_str).unwrap_or("")
        );
    }
    regex::require_decided(tally.into_inner().expect("lock"));
}

/// Generated regular expressions through every command that takes one, against CMake run live,
/// and their recorded answers still CMake's.
#[test]
fn regex_cases_agree_with_cmake() {
    if !cmake_available() {
        return;
    }
    let cases = regex::regex_cases();
    let corpus = Corpus::live(REGEX_PART);
    let failures = std::sync::Mutex::new(Vec::new());
    let tally = std::sync::Mutex::new(regex::Tally::default());
    std::thread::scope(|s| {
        for t in 0..2usize {
            let (failures, corpus, cases, tally) = (&failures, &corpus, &cases, &tally);
            s.spawn(move || {
                for case in cases.iter().skip(t).step_by(2) {
                    let dir = write_tree(&case.files);
                    let runs = cmake_runs(case, dir.path());
                    corpus.observe(case, &runs);
                    match regex::check_regex(case, dir.path(), &runs) {
                        Ok(t) => {
                            let mut all = tally.lock().expect("lock");
                            all.decided += t.decided;
                            all.unknown += t.unknown;
                        }
                        Err(e) => failures.lock().expect("lock").push(e),
                    }
                }
            });
        }
    });
    corpus.finish();
    let failures = failures.into_inner().expect("lock");
    if let Some(dir) = std::env::var_os("PINPROBE_CMAKE_FAILURES") {
        std::fs::create_dir_all(&dir).expect("failure directory");
        for (i, f) in failures.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("regex-{i}.txt")), f)
                .expect("write failure");
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} regex cases disagree with cmake; first:\n{}",
        failures.len(),
        cases.len(),
        failures.first().map(String::as_str).unwrap_or("")
    );
    regex::require_decided(tally.into_inner().expect("lock"));
}

/// Issue 31's classes against CMake run live, and their recorded answers still CMake's.
#[test]
fn round2_cases_agree_with_cmake() {
    agree_live(ROUND2_PART, &round2::round2_cases());
}

/// The condition cases against CMake run live (none undecided), and their recorded answers still
/// CMake's.
#[test]
fn condition_cases_agree_with_cmake() {
    agree_live(CONDITIONS_PART, &condition_cases());
}

/// The command tables and the issue-13 cases against CMake run live, and their recorded answers
/// still CMake's.
#[test]
fn command_cases_agree_with_cmake() {
    agree_live(COMMANDS_PART, &commands::command_cases());
}

/// A recorded part's cases against CMake run live: each must agree (or name no default where it
/// has inputs), and CMake's answers must still be the recorded ones (with
/// `PINPROBE_CMAKE_RECORD` set, they are recorded).
fn agree_live(part: &'static str, cases: &[Case]) {
    if !cmake_available() {
        return;
    }
    let corpus = Corpus::live(part);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..2usize {
            let (failures, corpus) = (&failures, &corpus);
            s.spawn(move || {
                for case in cases.iter().skip(t).step_by(2) {
                    let dir = write_tree(&case.files);
                    let runs = cmake_runs(case, dir.path());
                    corpus.observe(case, &runs);
                    match check_against(case, dir.path(), &runs) {
                        Ok(Verdict::Agrees | Verdict::NoDefault) => {}
                        Ok(Verdict::Undecided) if case.undecided_ok => {}
                        Ok(v) => failures
                            .lock()
                            .expect("lock")
                            .push(format!("{}: {v:?}", case.name)),
                        Err(e) => failures.lock().expect("lock").push(e),
                    }
                }
            });
        }
    });
    corpus.finish();
    let failures = failures.into_inner().expect("lock");
    if let Some(dir) = std::env::var_os("PINPROBE_CMAKE_FAILURES") {
        std::fs::create_dir_all(&dir).expect("failure directory");
        for (i, f) in failures.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("{part}-{i}.txt")), f)
                .expect("write failure");
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {part} cases disagree with cmake; first:\n{}",
        failures.len(),
        cases.len(),
        failures.first().map(String::as_str).unwrap_or("")
    );
}

// ---------------------------------------------------------------------------------------------
// Condition cases: every form of `if()` CMake's condition evaluator has, one table each
// ---------------------------------------------------------------------------------------------

/// Variables the condition tables read (auto-dereference, values that are false, lists, a
/// variable naming a variable, a function and a macro, a cache entry).
const COND_SETUP: &str = r#"set(S abc)
set(abc xyz)
set(P S)
set(N 10)
set(V 1.2.3)
set(E "")
set(OFFV OFF)
set(NF x-NOTFOUND)
set(W1 xNOTFOUND)
set(W2 x-notfound)
set(W3 notfound)
set(W4 Ignore)
set(L "a;b;c")
set(CV cached CACHE STRING "")
function(fn)
endfunction()
macro(mc)
endmacro()
"#;

/// A case evaluating each condition in turn and fetching `k` at `r` and one digit per condition
/// (1 true, 0 false), so a condition pinprobe gets wrong changes the tag CMake is compared on.
fn truth_table(name: &str, conds: &[&str], inputs: &[Variant]) -> Case {
    let mut top = String::from(COND_SETUP);
    top.push_str("set(R r)\n");
    for c in conds {
        top.push_str(&format!(
            "if({c})\n  string(APPEND R 1)\nelse()\n  string(APPEND R 0)\nendif()\n"
        ));
    }
    top.push_str(
        "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG \"${R}\")\nFetchContent_MakeAvailable(k)\n",
    );
    let mut c = case(
        &format!("conditions {name}"),
        &[
            ("CMakeLists.txt", &top),
            ("sub/file.txt", "x\n"),
            ("sub/deeper/other.txt", "y\n"),
        ],
        !inputs.is_empty(),
    );
    c.variants = inputs.to_vec();
    c
}

/// A case whose condition is malformed: CMake fetches what comes before it, then stops. (A
/// parenthesis the file does not balance is a syntax error; `O` and `C` expand to unbalanced
/// ones.)
fn malformed(name: &str, cond: &str) -> Case {
    let top = format!(
        "set(O \"(\")\nset(C \")\")\nFetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG before)\nFetchContent_MakeAvailable(k)\nif({cond})\nendif()\nFetchContent_Declare(k2 GIT_REPOSITORY https://example.invalid/k2.git GIT_TAG after)\nFetchContent_MakeAvailable(k2)\n"
    );
    case(
        &format!("malformed {name}"),
        &[("CMakeLists.txt", &top)],
        false,
    )
}

fn cache_inputs(name: &str, values: &[&str]) -> Vec<Variant> {
    values
        .iter()
        .map(|v| (pairs(&[(name, v)]), vec![]))
        .collect()
}

fn condition_cases() -> Vec<Case> {
    let src = "${CMAKE_CURRENT_SOURCE_DIR}";
    let exists = [
        format!("EXISTS {src}/CMakeLists.txt"),
        format!("EXISTS {src}/nope.txt"),
        format!("EXISTS {src}/sub"),
        format!("EXISTS {src}/sub/deeper/other.txt"),
        format!("EXISTS {src}/su"),
        format!("IS_DIRECTORY {src}/sub"),
        format!("IS_DIRECTORY {src}/sub/deeper"),
        format!("IS_DIRECTORY {src}/sub/file.txt"),
        format!("IS_DIRECTORY {src}/nope"),
        format!("IS_READABLE {src}/sub/file.txt"),
        format!("IS_READABLE {src}/nope.txt"),
        format!("EXISTS \"{src}/sub/file.txt\""),
        format!("NOT EXISTS {src}/nope.txt AND EXISTS {src}/sub"),
    ];
    let exists: Vec<&str> = exists.iter().map(String::as_str).collect();
    let mut cases = vec![
        truth_table(
            "constants",
            &[
                "TRUE",
                "true",
                "On",
                "yes",
                "Y",
                "y",
                "1",
                "FALSE",
                "off",
                "No",
                "N",
                "n",
                "0",
                "IGNORE",
                "NOTFOUND",
                "x-NOTFOUND",
                "-NOTFOUND",
                "\"\"",
                "\"ON\"",
                "\"off\"",
                "\"x\"",
                "\"S\"",
                "\"1\"",
                "\"TRUE\"",
            ],
            &[],
        ),
        truth_table(
            "numbers",
            &[
                "2", "-1", "0.0", "2.5", "1e2", "0e5", ".5", "5.", "+1", "-0", "00", "08", "\"2\"",
                "\"0\"", "\" 1\"", "\"1 \"", "0x10", "0x0", "inf", "nan", "1x",
            ],
            &[],
        ),
        truth_table(
            "variables",
            &[
                "S", "\"S\"", "OFFV", "NF", "W1", "W2", "W3", "W4", "E", "P", "L", "abc", "N", "R",
            ],
            &[],
        ),
        truth_table(
            "strings",
            &[
                "S STREQUAL abc",
                "S STREQUAL \"abc\"",
                "\"S\" STREQUAL S",
                "\"abc\" STREQUAL S",
                "S STREQUAL S",
                "abc STREQUAL \"xyz\"",
                "\"abc\" STREQUAL \"xyz\"",
                "E STREQUAL \"\"",
                "\"\" STREQUAL E",
                "P STREQUAL \"S\"",
                "\"a\" STRLESS \"b\"",
                "\"b\" STRLESS \"a\"",
                "\"a\" STRLESS \"a\"",
                "\"b\" STRGREATER \"a\"",
                "\"a\" STRGREATER \"a\"",
                "\"a\" STRGREATER \"b\"",
                "\"a\" STRLESS_EQUAL \"a\"",
                "\"b\" STRLESS_EQUAL \"a\"",
                "\"a\" STRLESS_EQUAL \"b\"",
                "\"a\" STRGREATER_EQUAL \"a\"",
                "\"a\" STRGREATER_EQUAL \"b\"",
                "\"b\" STRGREATER_EQUAL \"a\"",
                "S STRLESS \"abd\"",
                "\"a\" STREQUAL \"a\" STREQUAL 1",
                "\"a\" STREQUAL \"b\" STREQUAL 0",
                "\"NOT\" STREQUAL \"NOT\"",
                "\"x\" STREQUAL \"AND\"",
                "S STREQUAL Release",
            ],
            &[],
        ),
        truth_table(
            "numbers as C's strtod reads them",
            &[
                "1e",
                "1e+2",
                "1E-1",
                "0e",
                "\"1e\" EQUAL 1",
                "1E2 EQUAL 100",
                "1e-1 LESS 1",
                "0x1p4 EQUAL 16",
                "0x.8 EQUAL 0.5",
                "0x1.8p1 EQUAL 3",
                "0x10p-4 EQUAL 1",
                "0x1P+1 EQUAL 2",
                "0x1p EQUAL 1",
                "0X1F EQUAL 31",
                "0xa EQUAL 10",
                "-0x10 EQUAL -16",
                "+0x10 EQUAL 16",
                "0x.p1 EQUAL 0",
                "\"0x\" EQUAL 0",
                "\"0x\"",
                "0xg",
                "0x.",
                "+inf GREATER 1",
                "-inf LESS 0",
                "\"infinity\" GREATER 1",
                "\"INFINITY\"",
                "\"Inf\"",
                "\"infx\"",
                "\"infinityx\"",
                "-inf",
                "\"NaN\"",
                "\"nan(1)\"",
                "\"nan(a_1)\"",
                "\"nan(\"",
                "\"nan(1\"",
                "\"nan()\"",
                "\"nan(-)\"",
                "\"nanx\"",
                "\"-nan\"",
                "0x0p5",
                "0x0.0",
                "0x.08 EQUAL 0.03125",
                "0x.8",
                "0x1.8",
                "0x1.",
                "0x1. EQUAL 1",
            ],
            &[],
        ),
        truth_table(
            "numeric comparisons",
            &[
                "1 LESS 2",
                "2 LESS 1",
                "2 LESS 2",
                "2 GREATER 1",
                "1 GREATER 1",
                "1 GREATER 2",
                "1 EQUAL 1.0",
                "1 EQUAL 2",
                "2 EQUAL 1",
                "2 LESS_EQUAL 2",
                "3 LESS_EQUAL 2",
                "1 LESS_EQUAL 2",
                "2 GREATER_EQUAL 2",
                "1 GREATER_EQUAL 2",
                "3 GREATER_EQUAL 2",
                "N EQUAL 10",
                "N GREATER 9",
                "\"N\" EQUAL 10",
                "abc LESS 1",
                "1 LESS abc",
                "\"10abc\" LESS 11",
                "-1 LESS 0",
                "1e1 EQUAL 10",
                "\" 5\" EQUAL 5",
                "0x10 EQUAL 16",
                "2.5 GREATER 2",
            ],
            &[],
        ),
        truth_table(
            "versions",
            &[
                "1.2.3 VERSION_LESS 1.10",
                "1.10 VERSION_LESS 1.9",
                "1.2 VERSION_LESS 1.2",
                "V VERSION_EQUAL 1.2.3",
                "1.2 VERSION_EQUAL 1.2.0",
                "1.2 VERSION_EQUAL 1.3",
                "1.3 VERSION_EQUAL 1.2",
                "1.2 VERSION_GREATER 1.1.9",
                "2 VERSION_GREATER 2",
                "1 VERSION_GREATER 2",
                "1.2 VERSION_LESS_EQUAL 1.2",
                "1.3 VERSION_LESS_EQUAL 1.2",
                "1.1 VERSION_LESS_EQUAL 1.2",
                "1.2 VERSION_GREATER_EQUAL 1.2",
                "1.1 VERSION_GREATER_EQUAL 1.2",
                "1.3 VERSION_GREATER_EQUAL 1.2",
                "1.a VERSION_EQUAL 1.0",
                "1.2rc1 VERSION_EQUAL 1.2",
                "1.a.5 VERSION_LESS 1.0.5",
                "\"V\" VERSION_EQUAL 0",
                "01.2 VERSION_EQUAL 1.02",
                "18446744073709551616 VERSION_EQUAL 18446744073709551617",
                "18446744073709551615 VERSION_GREATER 18446744073709551614",
                "1..2 VERSION_EQUAL 1.0.2",
                "1. VERSION_EQUAL 1",
                ".1 VERSION_EQUAL 0.1",
                "1.2 VERSION_LESS 1.2.1",
                "1.2.1 VERSION_GREATER 1.2",
                "\"a\" VERSION_EQUAL 0",
            ],
            &[],
        ),
        truth_table(
            "lists and regular expressions",
            &[
                "\"b\" IN_LIST L",
                "\"d\" IN_LIST L",
                "\"a\" IN_LIST \"L\"",
                "\"a\" IN_LIST L",
                "S IN_LIST L",
                "abc IN_LIST L",
                "\"\" IN_LIST E",
                "S MATCHES \"^a(b)c$\"",
                "S MATCHES \"x\"",
                "abc MATCHES S",
                "\"abc\" MATCHES \"^abc$\"",
                "\"a{2}\" MATCHES \"^a{2}$\"",
                "\"aa\" MATCHES \"^a{2}$\"",
                "S MATCHES \"^[a-c]+$\"",
                "\"a.b\" MATCHES \"a\\\\.b\"",
                "\"axb\" MATCHES \"a\\\\.b\"",
                "\"a{\" MATCHES \"a\\\\{\"",
                "\"a}\" MATCHES \"^a\\\\}$\"",
                "/a//b PATH_EQUAL /a/b",
                "/a/b PATH_EQUAL /a/c",
                "a/b PATH_EQUAL a/b",
            ],
            &[],
        ),
        truth_table(
            "predicates",
            &[
                "DEFINED S",
                "DEFINED E",
                "DEFINED \"S\"",
                "COMMAND fn",
                "COMMAND FN",
                "COMMAND mc",
                "COMMAND message",
                "COMMAND string",
                "COMMAND nosuchcommand",
                "POLICY CMP0054",
                "POLICY NOTAPOLICY",
                "POLICY CMP9999",
                "POLICY CMP0001",
                "POLICY CMP0143",
                "POLICY CMP054",
                "POLICY CMP00541",
                "IS_ABSOLUTE /x/y",
                "IS_ABSOLUTE x/y",
                "IS_ABSOLUTE \"\"",
                "DEFINED",
                "NOT DEFINED S",
                "NOT",
                "NOT STREQUAL",
            ],
            &[],
        ),
        truth_table("paths", &exists, &[]),
        truth_table(
            "logic",
            &[
                "NOT TRUE",
                "NOT FALSE",
                "NOT S",
                "NOT E",
                "TRUE AND FALSE",
                "TRUE AND TRUE",
                "FALSE AND TRUE",
                "FALSE OR FALSE",
                "FALSE OR TRUE",
                "TRUE OR FALSE",
                "TRUE OR FALSE AND FALSE",
                "(TRUE OR FALSE) AND FALSE",
                "NOT TRUE AND FALSE",
                "NOT FALSE AND TRUE",
                "",
                "(TRUE) STREQUAL 1",
                "(FALSE) STREQUAL 0",
                "(FALSE) STREQUAL \"\"",
                "\"1\" MATCHES (TRUE)",
                "\"0\" MATCHES (TRUE)",
                "\"x\" IN_LIST (TRUE)",
                "FALSE OR NOT FALSE",
                "1 AND 2 OR 0",
                "((TRUE))",
                "(FALSE OR (TRUE AND TRUE))",
                "NOT (TRUE AND FALSE)",
                "S AND N",
                "S STREQUAL abc AND N EQUAL 10",
                "FALSE AND TARGET nosuch",
                "TARGET nosuch AND FALSE",
                "TRUE OR TEST nosuch",
                "IS_SYMLINK /nosuch OR TRUE",
                "FALSE AND (1 IS_NEWER_THAN 2)",
                "TRUE AND TRUE AND FALSE",
                "FALSE OR FALSE OR TRUE",
                "FALSE AND FALSE OR TRUE",
                "TRUE OR TRUE AND FALSE",
            ],
            &[],
        ),
        truth_table(
            "matches set CMAKE_MATCH",
            &[
                "S MATCHES \"^a(b)(x)?c$\"",
                "CMAKE_MATCH_1 STREQUAL \"b\"",
                "CMAKE_MATCH_0 STREQUAL \"abc\"",
                "\"${CMAKE_MATCH_2}\" STREQUAL \"\"",
                "S MATCHES \"(c)$\"",
                "CMAKE_MATCH_1 STREQUAL \"c\"",
            ],
            &[],
        ),
        truth_table(
            "environment",
            &["DEFINED ENV{PP_E0}", "\"$ENV{PP_E0}\" STREQUAL \"x\""],
            &[
                (vec![], pairs(&[("PP_E0", "x")])),
                (vec![], pairs(&[("PP_E0", "y")])),
            ],
        ),
        truth_table(
            "a cache input's truth",
            &["PP_C0", "NOT PP_C0", "DEFINED PP_C0"],
            &cache_inputs("PP_C0", &["ON", "OFF"]),
        ),
        truth_table(
            "a cache entry's definition",
            &["DEFINED CACHE{PP_C0}"],
            &cache_inputs("PP_C0", &["x"]),
        ),
        truth_table(
            "a cache input compared",
            &["PP_C0 STREQUAL \"rocm\"", "PP_C0 MATCHES \"^ro\""],
            &cache_inputs("PP_C0", &["rocm", "ro", "x"]),
        ),
        truth_table(
            "a cache input as a version and a number",
            &["PP_C0 VERSION_LESS 2", "PP_C0 LESS 2"],
            &cache_inputs("PP_C0", &["1.5", "3"]),
        ),
        truth_table(
            "a cache input in a list",
            &["PP_C0 IN_LIST L", "a IN_LIST PP_C1"],
            &[
                (pairs(&[("PP_C0", "a")]), vec![]),
                (pairs(&[("PP_C1", "a;b")]), vec![]),
            ],
        ),
        truth_table(
            "a cache input beside a deciding constant",
            &["FALSE AND PP_C0", "TRUE OR PP_C0", "PP_C0 AND TRUE"],
            &cache_inputs("PP_C0", &["ON"]),
        ),
        truth_table(
            "an undefined name",
            &["UNDEF", "DEFINED UNDEF", "NOT DEFINED UNDEF"],
            &cache_inputs("UNDEF", &["ON", "OFF"]),
        ),
        truth_table(
            "an undefined name as an operand",
            &[
                "UNDEF STREQUAL \"UNDEF\"",
                "\"a\" IN_LIST UNDEF",
                "S AND UNDEF",
            ],
            &cache_inputs("UNDEF", &["a", "UNDEF", "OFF"]),
        ),
        truth_table(
            "a cache entry the user may set",
            &["CV", "DEFINED CV", "DEFINED CACHE{CV}"],
            &cache_inputs("CV", &["OFF"]),
        ),
        truth_table(
            "a normal variable over the user's cache entry",
            &["DEFINED CACHE{S}", "S STREQUAL \"abc\""],
            &cache_inputs("S", &["x"]),
        ),
        truth_table(
            "a function's name as a variable",
            &["fn", "a STRLESS b"],
            &[(pairs(&[("fn", "ON"), ("a", "c")]), vec![])],
        ),
        {
            // Known to CMake 4.4, not to 3.26: which CMake runs decides, an input.
            let mut c = truth_table(
                "a policy newer than CMake 3.26",
                &["POLICY CMP0150", "POLICY CMP0219"],
                &[],
            );
            c.has_inputs = true;
            c
        },
        truth_table(
            "names used as variables only after the condition",
            &[
                "LATER_SET",
                "LATER_OPTION",
                "LATER_UNSET",
                "LATER_READ",
                "NOT LATER_IF",
            ],
            &[(
                pairs(&[
                    ("LATER_SET", "ON"),
                    ("LATER_OPTION", "ON"),
                    ("LATER_UNSET", "ON"),
                    ("LATER_READ", "ON"),
                    ("LATER_IF", "ON"),
                ]),
                vec![],
            )],
        ),
        truth_table(
            "a variable set from a cache input",
            &["DEFINED Y", "Y"],
            &cache_inputs("PP_C0", &["a"]),
        ),
        truth_table(
            "a variable set on one side of a condition on an input",
            &["DEFINED Z", "Z STREQUAL \"a\""],
            &cache_inputs("CMAKE_PP_0", &["ON"]),
        ),
        truth_table(
            "a variable set from the environment",
            &["DEFINED X", "X"],
            &[(vec![], pairs(&[("PP_E0", "1")]))],
        ),
        truth_table(
            "a path from the environment",
            &["EXISTS \"$ENV{PP_E0}\""],
            &[(vec![], pairs(&[("PP_E0", "/")]))],
        ),
    ];
    // `X` from the environment: `set(X $ENV{PP_E0})` unsets it when the variable is unset.
    if let Some(c) = cases
        .iter_mut()
        .find(|c| c.name.ends_with("set from the environment"))
        && let Some(top) = c.files.get_mut("CMakeLists.txt")
    {
        *top = top.replace("set(R r)\n", "set(R r)\nset(X $ENV{PP_E0})\n");
    }
    for (name, set) in [
        ("from a cache input", "set(Y ${PP_C0})\n"),
        (
            "one side of a condition on an input",
            "if(CMAKE_PP_0)\n  set(Z a)\nendif()\n",
        ),
    ] {
        if let Some(c) = cases.iter_mut().find(|c| c.name.ends_with(name))
            && let Some(top) = c.files.get_mut("CMakeLists.txt")
        {
            *top = top.replace("set(R r)\n", &format!("set(R r)\n{set}"));
        }
    }
    if let Some(c) = cases
        .iter_mut()
        .find(|c| c.name.ends_with("only after the condition"))
        && let Some(top) = c.files.get_mut("CMakeLists.txt")
    {
        top.push_str(
            "set(LATER_SET 1)\noption(LATER_OPTION \"\" OFF)\nunset(LATER_UNSET)\nmessage(STATUS \"${LATER_READ}\")\nif (LATER_IF)\nendif()\n",
        );
    }
    for (name, cond) in [
        ("a quoted operator", "a \"STREQUAL\" a"),
        ("two values", "TRUE FALSE"),
        ("NOT NOT", "NOT NOT TRUE"),
        ("NOT NOT NOT", "NOT NOT NOT FALSE"),
        ("AND without a right side", "TRUE AND"),
        ("OR without a left side", "OR TRUE"),
        ("an unclosed parenthesis", "${O} TRUE"),
        ("an unopened parenthesis", "TRUE ${C}"),
        ("a binary operator without a right side", "a STREQUAL"),
        ("a quoted predicate", "\"DEFINED\" S"),
    ] {
        cases.push(malformed(name, cond));
    }
    cases
}

// ---------------------------------------------------------------------------------------------
// Joins against forking every decision (issue 29): no CMake needed, runs in CI
// ---------------------------------------------------------------------------------------------

/// What an evaluation says each name fetches: its literal values (repository, reference), and
/// whether some configuration fetches a value an input can make anything; `None` when
/// undecided.
pub(crate) type Fetched = BTreeMap<String, (BTreeSet<(String, String)>, bool, Option<String>)>;

pub(crate) fn fetched_by(dir: &Path, fork_all: bool) -> Option<Fetched> {
    let view = DirView::new(dir);
    let limits = cmake::Limits {
        fork_all,
        ..cmake::Limits::default()
    };
    let eval = cmake::evaluate_with(&view, limits).expect("pinprobe evaluates");
    if eval.undecided.is_some() {
        return None;
    }
    let pins = pinprobe::pin::from_evaluation(&eval, &view, &Registry { components: vec![] })
        .expect("pins");
    let mut out = Fetched::new();
    for pin in &pins.pins {
        let entry = out
            .entry(pin.declared_name.to_ascii_lowercase())
            .or_default();
        if pin.possible.is_empty() {
            entry.0.insert((
                pin.repo.clone().unwrap_or_default(),
                pin.reference.clone().unwrap_or_default(),
            ));
        }
        for p in &pin.possible {
            if p.set_by.is_empty() {
                entry.0.insert((
                    p.repo.clone().unwrap_or_default(),
                    p.reference.clone().unwrap_or_default(),
                ));
            } else {
                entry.1 = true;
            }
        }
        // The default configuration's value (the pin's main one when a configuration is the
        // default).
        entry.2 = pin.reference.clone();
    }
    Some(out)
}

/// Every generated program (the CMake-checked generator's, with and without inputs) and
/// every generated decision tree over literal tags: evaluated with the joins and with every
/// decision forked, each name fetches the same literal values, an input-made value exactly
/// where forking finds one, and the same default. Decided by both, or by neither.
#[test]
fn joins_find_what_forking_every_decision_finds() {
    let mut compared = 0;
    let mut undecided = 0;
    let mut failures = Vec::new();
    let cases: Vec<Case> = (0..generated_cases())
        .map(|i| generated_case(GENERATED_BASE, i))
        .chain((0..join_cases().max(24)).map(join_case))
        .collect();
    for case in &cases {
        let dir = write_tree(&case.files);
        let reference = fetched_by(dir.path(), true);
        let joined = fetched_by(dir.path(), false);
        match (&reference, &joined) {
            (Some(r), Some(j)) => {
                compared += 1;
                if r != j {
                    failures.push(format!(
                        "{}:\nforking every decision: {r:?}\njoining: {j:?}\n{}",
                        case.name,
                        case.files.values().cloned().collect::<Vec<_>>().join("\n")
                    ));
                }
            }
            // Forking every decision can run past the configuration budget where joins do not.
            (None, _) => undecided += 1,
            (Some(r), None) => failures.push(format!(
                "{}: decided by forking every decision ({r:?}), undecided with joins",
                case.name
            )),
        }
    }
    eprintln!(
        "{compared} programs: joins agree with forking every decision; {undecided} over the budget when every decision forks"
    );
    if let Some(first) = failures.first() {
        panic!(
            "{} of {} programs differ; first:\n{first}",
            failures.len(),
            cases.len()
        );
    }
    assert!(compared * 2 >= cases.len(), "too few compared: {compared}");
}
