//! Opt-in: a corpus nobody here wrote. Source distributions whose builds fetch with
//! FetchContent / ExternalProject (listed, with why each was chosen, in
//! `tests/data/sdist_corpus.yaml`) are downloaded at run time, configured by real CMake with the
//! recording stand-ins of `tests/cmake_oracle/` (so CMake reports every fetch it makes:
//! repository, tag or URL, hash, and downloads nothing), and compared with the pins
//! `pinprobe scan --format json` reports for the same tree.
//!
//! `PINPROBE_SDIST_CORPUS=1` runs it (network to the package index through pip, and `cmake` on
//! the path); `PINPROBE_SDIST_CORPUS_DIR=DIR` keeps the downloads there between runs (else a
//! temporary directory); `PINPROBE_SDIST_CORPUS_TABLE=FILE` writes the table (markdown) there;
//! `PINPROBE_SDIST_CORPUS_ONLY=a,b` limits the run to those packages. Unset: a visible skip.
//!
//! How CMake is run, and what it costs in faithfulness:
//! - The stand-ins record a fetch and populate nothing; with `PINPROBE_ORACLE_POPULATE=ON` the
//!   fetched project's directories exist, empty.
//! - A configuration that goes on to use what it fetched would stop at the first use and never
//!   reach the fetches after it. `_pinprobe_lenient.cmake` (loaded at `project()`) turns
//!   `message(FATAL_ERROR)` into an error CMake goes on after, and lets a `find_package(...
//!   REQUIRED)` that finds nothing go on as not found; each such stop is listed in the report.
//!   A fetch made after a stop is one a real configuration would reach only on a machine where
//!   that stop does not happen (the content is there, the package is installed): it is still a
//!   fetch the build makes, and pinprobe must report it.
//! - Each package has one or more runs (`-D` values, environment), the ones its Python build
//!   passes and the options that select other fetches; CMake's pins are the union over them.
//!
//! Compared, per package: CMake's pins (each distinct `(name, repository, tag, URL, hash)` of a
//! remote fetch, local source directories aside) against every value pinprobe reports for a CMake
//! pin (the default value and each `possible` one, with its own URL and hash). *found*: a pin of
//! that name with that value, or with a value an input sets (pinprobe: any value, listed apart);
//! *wrong*: pins of that name, none with that value; *missed*: no pin of that name; *extra*: a
//! value pinprobe reports that no run of CMake fetched. Required: nothing wrong, nothing extra,
//! and a miss only where pinprobe says the tree is undecided (exit 3, with its reason).

use crate::common::{self, require};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, serde::Deserialize)]
struct Corpus {
    packages: Vec<Package>,
}

#[derive(Debug, serde::Deserialize)]
struct Package {
    name: String,
    version: String,
    /// Why it is in the corpus.
    #[allow(dead_code)]
    why: String,
    /// The directory the Python build configures, relative to the unpacked sdist.
    #[serde(default = "dot")]
    source_dir: String,
    #[serde(default)]
    runs: Vec<CmakeRun>,
    /// Commands the fetched content would define, defined to do nothing (`NAME=target`: to
    /// make a library target named by the first argument); see `_pinprobe_lenient.cmake`.
    #[serde(default)]
    stub_commands: Vec<String>,
    /// A stand-in for PyTorch (see [`TorchStub`]), for a build that imports torch to configure.
    #[serde(default)]
    torch_stub: Option<TorchStub>,
    /// Values pinprobe reports that no run here can reach, each with why (another
    /// architecture, a compiler this machine lacks): shown apart from the extras, never counted as
    /// found. Each must be among what pinprobe reports and what no run fetched.
    #[serde(default)]
    unexercised: Vec<Unexercised>,
    /// Set when CMake cannot configure the package at all here: why.
    #[serde(default)]
    unconfigurable: Option<String>,
}

fn dot() -> String {
    ".".to_string()
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Unexercised {
    name: String,
    /// The tag (a git fetch) or the URL (an archive).
    value: String,
    why: String,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
struct CmakeRun {
    name: String,
    /// Another CMake project in the tree (pinprobe evaluates every project no other one
    /// includes): configured here instead of the package's `source_dir`.
    #[serde(default)]
    source_dir: Option<String>,
    #[serde(default)]
    defines: BTreeMap<String, String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// A stand-in for an installed PyTorch, written by the test: a `torch` Python package whose
/// `torch.utils.cmake_prefix_path` leads to a `TorchConfig.cmake` that says Torch (of `version`)
/// is found and was built with CUDA `cuda` for the GPU architectures in `cuda_flags` (what the
/// real one sets from its CUDA toolkit), and sets nothing else: no targets, no libraries, no CUDA
/// language. What costs faithfulness: a `python -c 'import torch.utils.cpp_extension'` fails
/// (listed among the stops), and what CMake decides from a real toolkit (nvcc's presence, the
/// compiler's own architectures) it decides from these values.
#[derive(Debug, Clone, serde::Deserialize)]
struct TorchStub {
    version: String,
    cuda: String,
    cuda_flags: String,
}

impl TorchStub {
    /// Write the stand-in under `dir`; the directory to put on `PYTHONPATH`.
    fn write(&self, dir: &Path) -> PathBuf {
        let config = dir.join("torch/share/cmake/Torch");
        std::fs::create_dir_all(&config).expect("mkdir");
        std::fs::write(
            dir.join("torch/__init__.py"),
            format!("from . import utils\n__version__ = {:?}\n", self.version),
        )
        .expect("write");
        std::fs::write(
            dir.join("torch/utils.py"),
            "import os\ncmake_prefix_path = os.path.join(os.path.dirname(__file__), 'share', 'cmake')\n",
        )
        .expect("write");
        std::fs::write(
            config.join("TorchConfig.cmake"),
            format!(
                "set(Torch_FOUND TRUE)\nset(Torch_VERSION {v})\nset(TORCH_LIBRARIES \"\")\nset(TORCH_INCLUDE_DIRS \"\")\nset(CUDA_FOUND TRUE)\nset(CMAKE_CUDA_COMPILER_VERSION {c})\nset(CMAKE_CUDA_FLAGS \"{f}\")\n",
                v = self.version,
                c = self.cuda,
                f = self.cuda_flags
            ),
        )
        .expect("write");
        std::fs::write(
            config.join("TorchConfigVersion.cmake"),
            format!(
                "set(PACKAGE_VERSION {})\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n",
                self.version
            ),
        )
        .expect("write");
        dir.to_path_buf()
    }
}

/// One remote fetch: the values compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FetchValue {
    name: String,
    repo: String,
    tag: String,
    url: String,
    hash: String,
}

impl std::fmt::Display for FetchValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.repo.is_empty() {
            write!(f, " {}@{}", self.repo, self.tag)?;
        }
        if !self.url.is_empty() {
            write!(f, " {}", self.url)?;
        }
        if !self.hash.is_empty() {
            write!(f, " ({})", self.hash)?;
        }
        Ok(())
    }
}

fn corpus() -> Corpus {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sdist_corpus.yaml");
    let text = std::fs::read_to_string(&path).expect("tests/data/sdist_corpus.yaml");
    serde_saphyr::from_str(&text).expect("sdist_corpus.yaml parses")
}

/// Download `name==version`'s sdist into `dir/name-version/` (kept when already there) and
/// unpack it into `into`; the unpacked tree's root.
fn fetch_sdist(pkg: &Package, dir: &Path, into: &Path) -> PathBuf {
    let dl = dir.join(format!("{}-{}", pkg.name, pkg.version));
    // A tree already unpacked there (an sdist whose metadata pip cannot prepare without
    // installing its build requirements, such as vLLM's torch) is used as it is.
    if dl.join("PKG-INFO").is_file() {
        return dl;
    }
    let archive = |dl: &Path| -> Option<PathBuf> {
        std::fs::read_dir(dl)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.to_string_lossy().ends_with(".tar.gz") || p.to_string_lossy().ends_with(".zip")
            })
    };
    if archive(&dl).is_none() {
        // `--no-binary NAME` (not `:all:`): the build backend that prepares the metadata may come
        // as a wheel, which keeps pip from building CMake itself from source.
        let status = Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-binary",
            ])
            .arg(&pkg.name)
            .arg(format!("{}=={}", pkg.name, pkg.version))
            .arg("-d")
            .arg(&dl)
            .status()
            .expect("pip runs");
        assert!(
            status.success(),
            "pip download {}=={} failed",
            pkg.name,
            pkg.version
        );
    }
    let archive = archive(&dl).expect("sdist downloaded");
    let out = into.join(format!("{}-{}", pkg.name, pkg.version));
    std::fs::create_dir_all(&out).expect("mkdir");
    if archive.to_string_lossy().ends_with(".zip") {
        let file = std::fs::File::open(&archive).expect("open sdist");
        zip::ZipArchive::new(file)
            .expect("zip sdist")
            .extract(&out)
            .expect("sdist unpacks");
    } else {
        let file = std::fs::File::open(&archive).expect("open sdist");
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(&out)
            .expect("sdist unpacks");
    }
    // An sdist holds one top-level directory.
    let entries: Vec<PathBuf> = std::fs::read_dir(&out)
        .expect("unpacked")
        .flatten()
        .map(|e| e.path())
        .collect();
    match entries.as_slice() {
        [one] if one.is_dir() => one.clone(),
        _ => out,
    }
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmake_oracle")
}

/// What one CMake run gave: the remote fetches, the local ones, where it would have stopped,
/// and whether it ended with errors.
struct Configured {
    fetches: Vec<FetchValue>,
    local: Vec<String>,
    stops: Vec<String>,
    errors: usize,
    log: String,
}

fn configure(
    root: &Path,
    src: &Path,
    run: &CmakeRun,
    stubs: &[String],
    torch: Option<&TorchStub>,
) -> Configured {
    let work = tempfile::tempdir().expect("tempdir");
    let out = work.path().join("fetches.txt");
    let mut cmd = Command::new("cmake");
    cmd.arg("-S")
        .arg(src)
        .arg("-B")
        .arg(work.path().join("build"))
        .arg(format!("-DCMAKE_MODULE_PATH={}", oracle_dir().display()))
        .arg(format!(
            "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES={}",
            oracle_dir().join("_pinprobe_lenient.cmake").display()
        ))
        .arg(format!("-DPINPROBE_ORACLE_OUT={}", out.display()))
        .arg("-DPINPROBE_ORACLE_POPULATE=ON");
    if !stubs.is_empty() {
        cmd.arg(format!("-DPINPROBE_STUB_COMMANDS={}", stubs.join(";")));
    }
    for (k, v) in &run.defines {
        cmd.arg(format!("-D{k}={v}"));
    }
    if let Some(torch) = torch {
        let path = torch.write(&work.path().join("torch-stub"));
        cmd.env("PYTHONPATH", path);
    }
    for (k, v) in &run.env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("cmake runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let mut fetches = Vec::new();
    let mut local = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let g = |i: usize| f.get(i).copied().unwrap_or("").to_string();
        if !g(5).is_empty() {
            local.push(format!("{} ({})", g(1), g(5)));
            continue;
        }
        fetches.push(FetchValue {
            name: g(1),
            repo: g(2),
            tag: g(3),
            url: g(4),
            hash: g(6),
        });
    }
    let stops = std::fs::read_to_string(format!("{}.stops", out.display()))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let l = l.replace(&*root.to_string_lossy(), ".");
            match l.char_indices().nth(200) {
                Some((at, _)) => format!("{}...", &l[..at]),
                None => l,
            }
        })
        .collect();
    Configured {
        fetches,
        local,
        stops,
        errors: log.matches("CMake Error").count(),
        log,
    }
}

/// Every value pinprobe reports for a CMake pin: the default and each possible one, with its
/// own `URL`/`URL_HASH` where it has them; and the names of pins with a value an input can set
/// to anything (left out of the values: such a pin is unknown, matching whatever CMake fetched).
fn pinprobe_values(target: &serde_json::Value) -> (Vec<FetchValue>, BTreeSet<String>) {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let mut values = BTreeSet::new();
    let mut any = BTreeSet::new();
    for c in target["components"].as_array().into_iter().flatten() {
        let found_by = s(&c["found_by"]);
        if !found_by.starts_with("cmake") {
            continue;
        }
        let top = FetchValue {
            name: s(&c["declared_name"]),
            repo: s(&c["repo"]),
            tag: s(&c["reference"]),
            url: s(&c["url"]),
            hash: s(&c["url_hash"]),
        };
        let possible = c["possible"].as_array().cloned().unwrap_or_default();
        if possible.is_empty() {
            values.insert(top);
            continue;
        }
        for p in &possible {
            if p["set_by"].as_array().is_some_and(|a| !a.is_empty()) {
                any.insert(top.name.to_ascii_lowercase());
                continue;
            }
            let value = FetchValue {
                repo: p.get("repo").map_or_else(|| top.repo.clone(), s),
                tag: s(&p["reference"]),
                url: p.get("url").map_or_else(|| top.url.clone(), s),
                hash: p.get("url_hash").map_or_else(|| top.hash.clone(), s),
                ..top.clone()
            };
            // A configuration whose URL is empty (an empty input) names no download: CMake
            // fetches nothing there either.
            if value.repo.is_empty() && value.tag.is_empty() && value.url.is_empty() {
                continue;
            }
            values.insert(value);
        }
    }
    (values.into_iter().collect(), any)
}

#[derive(Default)]
struct Row {
    package: String,
    version: String,
    cmake: usize,
    found: usize,
    wrong: Vec<String>,
    missed: Vec<String>,
    extra: Vec<String>,
    /// CMake fetches matched only by a pin value an input sets (pinprobe: unknown value).
    any_value: Vec<String>,
    unexercised: Vec<String>,
    /// The corpus data disagreeing with what was seen.
    problems: Vec<String>,
    exit: i32,
    undecided: String,
    stops: BTreeSet<String>,
    local: BTreeSet<String>,
    unconfigurable: Option<String>,
}

fn same_name(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The same fetch: a git fetch by repository and tag; an archive by its URL (the list CMake
/// tries, in order) and its hash. pinprobe also names the repository and tag of a GitHub archive
/// URL; those are its reading of the URL, not compared.
fn same_value(cmake: &FetchValue, pin: &FetchValue) -> bool {
    same_name(&cmake.name, &pin.name)
        && if cmake.repo.is_empty() {
            cmake.url == pin.url && cmake.hash.eq_ignore_ascii_case(&pin.hash)
        } else {
            cmake.repo == pin.repo && cmake.tag == pin.tag && pin.url.is_empty()
        }
}

fn compare(
    row: &mut Row,
    cmake: &BTreeSet<FetchValue>,
    pins: &[FetchValue],
    any: &BTreeSet<String>,
) {
    row.cmake = cmake.len();
    for want in cmake {
        let named: Vec<&FetchValue> = pins
            .iter()
            .filter(|p| same_name(&p.name, &want.name))
            .collect();
        let unknown = any.contains(&want.name.to_ascii_lowercase());
        if named.is_empty() && !unknown {
            row.missed.push(want.to_string());
        } else if named.iter().any(|p| same_value(want, p)) {
            row.found += 1;
        } else if unknown {
            // Found as a value an input sets: the pin is reported, its value unknown.
            row.found += 1;
            row.any_value.push(want.to_string());
        } else {
            let said: Vec<String> = named.iter().map(|p| p.to_string()).collect();
            row.wrong
                .push(format!("{want} (pinprobe: {})", said.join("; ")));
        }
    }
    for pin in pins {
        if !cmake.iter().any(|c| same_value(c, pin)) {
            row.extra.push(pin.to_string());
        }
    }
}

fn table(rows: &[Row], command: &str) -> String {
    let mut t = String::new();
    t.push_str(&format!("Command: `{command}`\n\n"));
    t.push_str(
        "| package | version | pins by CMake | found by pinprobe | wrong | missed | extra | not reachable here | pinprobe exit |\n",
    );
    t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        if let Some(why) = &r.unconfigurable {
            t.push_str(&format!(
                "| {} | {} | not configurable: {why} | | | | | | {} |\n",
                r.package, r.version, r.exit
            ));
            continue;
        }
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.package,
            r.version,
            r.cmake,
            r.found,
            r.wrong.len(),
            r.missed.len(),
            r.extra.len(),
            r.unexercised.len(),
            r.exit
        ));
    }
    t.push('\n');
    for r in rows {
        let mut lines = Vec::new();
        for w in &r.wrong {
            lines.push(format!("- wrong: {w}"));
        }
        for m in &r.missed {
            lines.push(format!("- missed: {m}"));
        }
        for e in &r.extra {
            lines.push(format!("- extra: {e}"));
        }
        for a in &r.any_value {
            lines.push(format!(
                "- found as a value an input sets (pinprobe: unknown value): {a}"
            ));
        }
        for u in &r.unexercised {
            lines.push(format!("- reported by pinprobe, not reachable here: {u}"));
        }
        if !r.undecided.is_empty() {
            lines.push(format!("- pinprobe undecided: {}", r.undecided));
        }
        for s in &r.stops {
            lines.push(format!("- CMake went on past: {s}"));
        }
        for l in &r.local {
            lines.push(format!("- local source (not a fetch): {l}"));
        }
        if !lines.is_empty() {
            t.push_str(&format!(
                "{} {}:\n\n{}\n\n",
                r.package,
                r.version,
                lines.join("\n")
            ));
        }
    }
    t
}

#[test]
fn sdist_corpus_pins_agree_with_cmake() {
    if !require::opt_in_var(
        "PINPROBE_SDIST_CORPUS",
        "download the sdist corpus (tests/data/sdist_corpus.yaml) and compare pinprobe's pins with real CMake's fetches",
    ) {
        return;
    }
    assert!(
        require::tool("cmake"),
        "PINPROBE_SDIST_CORPUS=1 needs cmake (pip install cmake)"
    );
    let keep = tempfile::tempdir().expect("tempdir");
    let downloads = std::env::var_os("PINPROBE_SDIST_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| keep.path().join("downloads"));
    let only: Option<Vec<String>> = std::env::var("PINPROBE_SDIST_CORPUS_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let mut rows = Vec::new();
    for pkg in corpus().packages {
        if only.as_ref().is_some_and(|o| !o.contains(&pkg.name)) {
            continue;
        }
        let unpacked = tempfile::tempdir().expect("tempdir");
        let root = fetch_sdist(&pkg, &downloads, unpacked.path());
        let mut row = Row {
            package: pkg.name.clone(),
            version: pkg.version.clone(),
            unconfigurable: pkg.unconfigurable.clone(),
            ..Row::default()
        };
        let scan = common::Pinprobe::new(&[
            "scan".as_ref(),
            "--offline".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            root.as_os_str(),
        ])
        .run();
        assert!(
            matches!(scan.code, 0 | 1 | 3),
            "{}: pinprobe scan failed ({}): {}",
            pkg.name,
            scan.code,
            scan.stderr
        );
        row.exit = scan.code;
        let json = scan.json();
        let target = &json["targets"][0];
        row.undecided = target["undecided"].as_str().unwrap_or("").to_string();
        let (pins, any) = pinprobe_values(target);
        if pkg.unconfigurable.is_none() {
            let src = root.join(&pkg.source_dir);
            let runs = if pkg.runs.is_empty() {
                vec![CmakeRun {
                    name: "default".to_string(),
                    ..CmakeRun::default()
                }]
            } else {
                pkg.runs.clone()
            };
            let mut cmake = BTreeSet::new();
            for run in &runs {
                let src = run
                    .source_dir
                    .as_ref()
                    .map_or_else(|| src.clone(), |d| root.join(d));
                let c = configure(
                    &root,
                    &src,
                    run,
                    &pkg.stub_commands,
                    pkg.torch_stub.as_ref(),
                );
                if std::env::var_os("PINPROBE_SDIST_CORPUS_LOG").is_some() {
                    eprintln!("--- {} {} ---\n{}", pkg.name, run.name, c.log);
                }
                eprintln!(
                    "{} {}: run {}: {} fetches, {} CMake errors, {} stops",
                    pkg.name,
                    pkg.version,
                    run.name,
                    c.fetches.len(),
                    c.errors,
                    c.stops.len()
                );
                cmake.extend(c.fetches);
                row.stops.extend(
                    c.stops
                        .into_iter()
                        .map(|s| format!("{s} (run {})", run.name)),
                );
                row.local.extend(c.local);
            }
            compare(&mut row, &cmake, &pins, &any);
            for u in &pkg.unexercised {
                let reported = pins
                    .iter()
                    .any(|p| same_name(&p.name, &u.name) && (p.tag == u.value || p.url == u.value));
                let fetched = cmake
                    .iter()
                    .any(|c| same_name(&c.name, &u.name) && (c.tag == u.value || c.url == u.value));
                if !reported || fetched {
                    row.problems.push(format!(
                        "{} {} is listed as not reachable here, but pinprobe reports it: {reported}, a run fetched it: {fetched}",
                        u.name, u.value
                    ));
                }
                row.extra
                    .retain(|e| !(e.starts_with(&format!("{} ", u.name)) && e.contains(&u.value)));
                row.unexercised
                    .push(format!("{} {}: {}", u.name, u.value, u.why));
            }
        }
        rows.push(row);
    }
    let command = "PINPROBE_SDIST_CORPUS=1 cargo test --test cmake cmake_corpus:: -- --nocapture";
    let text = table(&rows, command);
    if let Some(path) = std::env::var_os("PINPROBE_SDIST_CORPUS_TABLE") {
        std::fs::write(&path, &text).expect("write the table");
    }
    eprintln!("{text}");
    let mut failures = Vec::new();
    for r in &rows {
        for p in &r.problems {
            failures.push(format!("{}: {p}", r.package));
        }
        // Each entry is in the corpus for its fetches: none recorded means the stand-ins or the
        // entry's runs are broken, and every comparison of it would pass for nothing.
        if r.unconfigurable.is_none() && r.cmake == 0 {
            failures.push(format!("{}: CMake recorded no fetch in any run", r.package));
        }
        if !r.wrong.is_empty() || !r.extra.is_empty() {
            failures.push(format!("{}: wrong or extra pins", r.package));
        }
        if !r.missed.is_empty() && r.exit != 3 {
            failures.push(format!(
                "{}: {} pins missed while pinprobe exits {} (not undecided)",
                r.package,
                r.missed.len(),
                r.exit
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
