//! The scan pipeline: [`run`] scans every target of one `pinprobe scan` and returns the
//! [`Report`]; for each target, [`scan_target`] opens it (any kind, through [`crate::view`]),
//! finds its pins, resolves them against the clones given, evaluates every rule that applies and
//! adds pin-hygiene findings; drift (`--expect`) and the ignore policy come last.
//!
//! - [`artifact`]: wheels, environments and image filesystems (components from shipped files).
//! - [`crate::judge`]: every status (hygiene, drift, the ledger, value sets): scan asks it.
//! - [`policy`]: the ignore file (`.pinprobe.yaml`), applied after evaluation.

mod artifact;
mod fetched;
mod forms;
pub mod policy;
pub mod pool;
pub mod python;
pub mod reuse;
pub mod shared;
pub mod state;
pub mod vex;

use crate::judge::{Judge, JudgeError, drift, ledger};
use crate::model::TargetKind;
use crate::pin;

use crate::model::{Date, Report, TargetReport};
use crate::resolve::fetch;
use crate::resolve::{Clones, Repo, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::OtherPin;
use crate::view::{self, TargetError, View};
use std::path::{Path, PathBuf};

/// Options that apply to every target of one scan.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Read source trees at this git revision instead of the work tree.
    pub rev: Option<String>,
    /// Clones of pinned projects by component name (`--repo NAME=PATH`).
    pub repos: Vec<(String, PathBuf)>,
    /// Fingerprint indexes for artifacts (loaded from the cache directory).
    pub indexes: Vec<crate::pin::fingerprint::Index>,
    /// Images: the platform picked from a multi-arch index (`--platform`; empty: linux/amd64).
    pub platform: String,
    /// Images: extra root certificates for registries (`--ca-file`).
    pub ca_file: Option<PathBuf>,
    /// Images: registries reached over plain HTTP (`--insecure-registry HOST`).
    pub insecure_registries: Vec<String>,
    /// Images: stop on the newest deciding RECORD instead of reading every layer
    /// (`--fast-layers`, an assumption the report states).
    pub fast_layers: bool,
    /// Images: registry connect and stall timeout (`--registry-timeout`; `None`: the default).
    pub registry_timeout: Option<std::time::Duration>,
    /// Images: draw a progress bar on stderr when it is a terminal.
    pub progress: bool,
    /// Fetch pinned history missing from every clone into the cache (`None`: never; the
    /// settings say whether offline).
    pub fetch: Option<fetch::Settings>,
    /// Targets scanned at once (`--jobs`; 0 and 1: one after another on the calling thread).
    pub jobs: usize,
    /// Registry images (`docker://`) scanned at once, within `jobs` (`--registry-jobs`; 0: 1).
    pub registry_jobs: usize,
}

impl Options {
    /// The image options these scan options carry.
    pub fn image(&self) -> crate::view::image::Options {
        let defaults = crate::view::image::Options::default();
        crate::view::image::Options {
            platform: if self.platform.is_empty() {
                defaults.platform
            } else {
                self.platform.clone()
            },
            ca_file: self.ca_file.clone(),
            insecure_registries: self.insecure_registries.clone(),
            fast_layers: self.fast_layers,
            timeout: self.registry_timeout.unwrap_or(defaults.timeout),
            progress: self.progress,
            libraries: defaults.libraries,
        }
    }
}

/// What one `pinprobe scan` covers beyond the per-target [`Options`].
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub targets: &'a [String],
    /// `--expect TREE`: report drift of each target's components from this tree's pins.
    pub expect: Option<&'a str>,
    /// `--ignore FILE`; else each source tree's own `.pinprobe.yaml` (at `--rev`).
    pub ignore: Option<&'a Path>,
    /// The day ignore entries expire against.
    pub today: Date,
    /// `--state FILE`: targets finished before are reused, finished ones recorded.
    pub state: Option<&'a state::State>,
}

/// Scan every target of `req` and apply drift and the ignore policy; the report lists the
/// targets in the order given (whatever order a pool of `opts.jobs` finished them in).
pub fn run(
    req: &Request,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<Report, ScanError> {
    run_streaming(req, opts, db, clones, &mut |_| Ok(()))
}

/// [`run`], handing each target's finished report (drift, ignore files applied) to `each` in
/// the order given, as soon as it and every target before it are done. The first error (in
/// target order) ends the run: no target after it starts, and it is returned.
pub fn run_streaming(
    req: &Request,
    opts: &Options,
    db: &Database,
    clones: &Clones,
    each: &mut dyn FnMut(&TargetReport) -> std::io::Result<()>,
) -> Result<Report, ScanError> {
    let expected = match req.expect {
        Some(tree) => Some((
            tree,
            scan_target(tree, opts, db, clones).map_err(|e| ScanError::Expect {
                tree: tree.to_string(),
                source: Box::new(e),
            })?,
        )),
        None => None,
    };
    let ignore = req.ignore.map(policy::Policy::load).transpose()?;
    let expected = expected.as_ref().map(|(tree, declared)| (*tree, declared));
    let one = |clones: &Clones, target: &String| {
        scan_listed(target, req, opts, db, clones, expected, ignore.as_ref())
    };
    let jobs = opts.jobs.clamp(1, req.targets.len().max(1));
    let mut results: Vec<Result<TargetReport, ScanError>> = Vec::new();
    let mut sink_err = None;
    let mut sink = |_: usize, result: Result<TargetReport, ScanError>| {
        if let (Ok(report), None) = (&result, &sink_err)
            && let Err(e) = each(report)
        {
            sink_err = Some(e);
        }
        results.push(result);
    };
    if jobs == 1 {
        for target in req.targets {
            let result = one(clones, target);
            let failed = result.is_err();
            sink(0, result);
            if failed {
                break;
            }
        }
    } else {
        // Open git repositories cannot be shared between threads: each worker opens its own.
        let paths: Vec<(String, PathBuf)> = clones
            .iter()
            .map(|(name, repo)| (name.to_string(), repo.path().to_path_buf()))
            .collect();
        let registry = pool::Permits::new(opts.registry_jobs.max(1));
        pool::ordered(
            req.targets,
            jobs,
            || Clones::open(&paths),
            |clones, target| {
                let _permit = crate::view::image::reference::canonical(target)
                    .starts_with("docker://")
                    .then(|| registry.take());
                one(clones, target)
            },
            Result::is_err,
            &mut sink,
        )?;
    }
    if let Some(e) = sink_err {
        return Err(ScanError::Output(e));
    }
    let mut targets = Vec::with_capacity(results.len());
    for result in results {
        targets.push(result?);
    }
    if let Some(loaded) = &ignore {
        // Applied again over every target (it is idempotent) for the warnings about entries
        // that matched no target.
        let mut all: Vec<&mut TargetReport> = targets.iter_mut().collect();
        let outcome = policy::apply(loaded, &mut all, req.today, true);
        if let Some(first) = targets.first_mut() {
            first.warnings.extend(outcome.warnings);
        }
    }
    let mut report = Report::new(db.digest.clone(), targets);
    report.rules_date = db.date.clone();
    report.rules_source = Some(db.source.clone());
    Ok(report)
}

/// One target of the list: scanned, its drift from `--expect`, its own ignore file, and the
/// `--ignore` file (warnings about unused entries come once all targets are done).
fn scan_listed(
    target: &str,
    req: &Request,
    opts: &Options,
    db: &Database,
    clones: &Clones,
    expected: Option<(&str, &TargetReport)>,
    ignore: Option<&policy::Policy>,
) -> Result<TargetReport, ScanError> {
    let scanned = match req.state {
        Some(state) => state.scan(target, opts, || scan_target(target, opts, db, clones)),
        None => scan_target(target, opts, db, clones),
    };
    let mut report = scanned.map_err(|e| {
        // Name the target once: most errors already start with its path.
        if e.to_string().contains(target) {
            e
        } else {
            ScanError::In {
                target: crate::view::image::reference::redact_userinfo(target).into_owned(),
                source: Box::new(e),
            }
        }
    })?;
    if let Some((tree, declared)) = expected {
        let drift = drift::check(tree, &declared.components, &report.components);
        report.findings.extend(drift);
    }
    let is_tree = matches!(view::classify(target), view::TargetInput::SourceTree(_));
    if req.ignore.is_none() && (opts.rev.is_some() || is_tree) {
        // The tree's own ignore file, at the revision scanned.
        if let Some(found) = policy::from_tree(Path::new(target), opts.rev.as_deref())? {
            let outcome = policy::apply(&found, &mut [&mut report], req.today, true);
            report.warnings.extend(outcome.warnings);
        }
    }
    if let Some(loaded) = ignore {
        // Its warnings (expired entries) are given once, after the last target.
        policy::apply(loaded, &mut [&mut report], req.today, false);
    }
    Ok(report)
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Cmake(#[from] pin::cmake::CmakeError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Judge(#[from] JudgeError),
    #[error(transparent)]
    Image(#[from] crate::view::image::ImageError),
    #[error("{target}: {message}")]
    Unsupported { target: String, message: String },
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
    #[error(transparent)]
    State(#[from] state::StateError),
    /// Writing a streamed target report failed.
    #[error("writing the report: {0}")]
    Output(std::io::Error),
    /// An error of one target, naming it (displayed as its context: the cause follows).
    #[error("scanning {target}")]
    In {
        target: String,
        #[source]
        source: Box<ScanError>,
    },
    /// An error of the `--expect` tree.
    #[error("--expect {tree}")]
    Expect {
        tree: String,
        #[source]
        source: Box<ScanError>,
    },
}

/// Scan one target of any kind.
pub fn scan_target(
    target: &str,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    let kind = view::classify(target);
    crate::model::verbose::say(format_args!(
        "{target}: reading it as {}",
        match (&kind, opts.rev.as_deref()) {
            (_, Some(rev)) => format!("a source tree at revision {rev}, through git"),
            (view::TargetInput::SourceTree(_), None) => "a source tree".to_string(),
            (view::TargetInput::Wheel(_), None) => "a wheel".to_string(),
            (view::TargetInput::Installed(_), None) => "an installed environment".to_string(),
            (view::TargetInput::Image(_), None) => "a container image".to_string(),
        }
    ));
    match kind {
        // --rev always means a source tree read through git.
        _ if opts.rev.is_some() => scan_source(Path::new(target), opts, db, clones),
        view::TargetInput::SourceTree(path) => scan_source(&path, opts, db, clones),
        view::TargetInput::Wheel(path) => reuse::wheel(target, &path, opts, db, || {
            let view = crate::view::WheelView::open(&path)?;
            let report = scan_artifact(&view, opts, db, clones);
            if std::env::var_os("PINPROBE_STATS").is_some() {
                let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                eprintln!(
                    "pinprobe: stats: {}: read {} of {size} bytes",
                    path.display(),
                    view.bytes_read()
                );
            }
            report
        }),
        view::TargetInput::Installed(path) => {
            if !path.is_dir() {
                return Err(TargetError::Io {
                    path: path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
                }
                .into());
            }
            let view = crate::view::DirView::installed(&path);
            scan_artifact(&view, opts, db, clones)
        }
        view::TargetInput::Image(image) => {
            let mut image_opts = opts.image();
            image_opts.libraries = db
                .rules
                .iter()
                .filter_map(|r| r.rule.database_specific.symbols.as_ref())
                .map(|s| s.library.clone())
                .collect();
            image_opts.libraries.sort();
            image_opts.libraries.dedup();
            let merged = crate::view::image::open(&image, &image_opts)?;
            let report = scan_artifact(&merged.view, opts, db, clones)?;
            Ok(annotate_image(&image, report, merged))
        }
    }
}

/// Turn the artifact scanner's report of an image's merged files into the image's report: the
/// target as given, kind `image`, the image's warnings first, and its layers and provenance.
fn annotate_image(
    target: &str,
    mut report: TargetReport,
    merged: crate::view::image::Merged,
) -> TargetReport {
    report.target = target.to_string();
    report.kind = TargetKind::Image;
    report.warnings.splice(0..0, merged.warnings);
    report.image = Some(merged.info);
    report
}

/// Scan an artifact's view (wheel, installed environment, image filesystem).
pub fn scan_artifact(
    view: &dyn View,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    let cx = artifact::Context {
        indexes: opts.indexes.iter().collect(),
        clones: clones.iter().collect(),
        fetch: opts.fetch.as_ref(),
        fetches: Default::default(),
    };
    Ok(artifact::scan(view, db, &cx)?)
}

/// Scan one source-tree target (its work tree, or `opts.rev` read through git).
pub fn scan_source(
    path: &Path,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    scan_source_sharing(path, opts, db, clones, None)
}

/// [`scan_source`], taking the CMake evaluation from `shared` when an earlier tree's evaluation
/// read the same (a review's two revisions, [`shared`]).
pub fn scan_source_sharing(
    path: &Path,
    opts: &Options,
    db: &Database,
    clones: &Clones,
    shared: Option<&shared::Evaluations>,
) -> Result<TargetReport, ScanError> {
    let view = view::open(path, opts.rev.as_deref())?;
    // vLLM's own revision (for rules with `requires` on it): the tree's commit, and the target
    // repository itself as the clone that answers ancestry.
    let own = Repo::open(path).ok();
    let commit = match (&own, opts.rev.as_deref()) {
        (Some(repo), Some(rev)) => match repo.resolve(rev)? {
            Resolved::Commit(c) => Some(c),
            // `HEAD`, `HEAD~1`, `main@{1}`: what `--rev` read the tree at.
            Resolved::Missing => repo.rev_parse(rev),
        },
        (Some(repo), None) => repo.head(),
        (None, _) => None,
    };
    let own_pin = OtherPin {
        component: "vllm".to_string(),
        commit,
        commit_unknown: commit.is_none().then(|| {
            format!(
                "{} is not a git work tree with a commit: vLLM's own revision is not known",
                path.display()
            )
        }),
        clone: own.as_ref(),
    };
    scan_source_view(
        view.as_ref(),
        db,
        clones,
        &[own_pin],
        opts.fetch.as_ref(),
        shared,
    )
}

/// Scan an opened source view, knowing the target's own revision and other pins given in `own`.
fn scan_source_view(
    view: &dyn View,
    db: &Database,
    clones: &Clones,
    own: &[OtherPin],
    fetch_settings: Option<&fetch::Settings>,
    shared: Option<&shared::Evaluations>,
) -> Result<TargetReport, ScanError> {
    crate::model::verbose::say(format_args!(
        "{}: evaluating its CMake code from the top-level CMakeLists.txt",
        view.describe()
    ));
    let mut found = match shared {
        Some(evaluations) => evaluations.from_cmake(view, &db.registry)?,
        None => pin::from_cmake(view, &db.registry)?,
    };
    let mut report = TargetReport::new(view.describe(), view.kind());
    forms::add(view, db, own, &mut found, &mut report, shared)?;
    let mut pins = found.pins;
    // vLLM's own release (the sdist's generated version file), for version ranges and the ledger.
    let release = ledger::release_of(view, "vllm/_version.py")?;
    if let Some(why) = &found.undecided {
        report.undecided = Some(format!(
            "the CMake evaluation of {} is incomplete ({why}): the pins found are not all CMake could fetch",
            view.describe()
        ));
    } else if pins.is_empty() && found.unreached.is_empty() {
        report.undecided = Some(format!(
            "no pinned kernel projects found in {} (evaluated the CMake code from the top-level CMakeLists.txt, and looked for FetchContent_Declare, FetchContent_Populate, ExternalProject_Add and CPMAddPackage in every CMake file)",
            view.describe()
        ));
    }
    for file in &found.unread {
        report.warnings.push(format!(
            "CMake reads a file pinprobe cannot: {file}; a declaration there is not seen"
        ));
    }
    for name in clones.names() {
        if !pins.iter().any(|p| p.component == name) {
            report.warnings.push(format!(
                "--repo {name}: the target pins no component named `{name}` (components: {})",
                pins.iter()
                    .map(|p| p.component.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    // History no clone has: fetched into the cache (or, offline, what a fetch would add).
    let fetched = match fetch_settings {
        Some(settings) => fetched::for_pins(&pins, db, clones, settings),
        None => fetched::Fetches::default(),
    };
    let clone_of = |name: &str| clones.get(name).or_else(|| fetched.repos.get(name));
    // Other components' pins, for `requires`: the target's own revision, and every pin whose
    // GIT_TAG is a full SHA.
    let mut others: Vec<OtherPin> = own
        .iter()
        .map(|o| OtherPin {
            component: o.component.clone(),
            commit: o.commit,
            commit_unknown: o.commit_unknown.clone(),
            clone: o.clone,
        })
        .collect();
    for p in &pins {
        others.push(OtherPin {
            component: p.component.clone(),
            commit: p
                .commit
                .as_deref()
                .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok()),
            commit_unknown: if p.commit.is_none() {
                Some(format!(
                    "{}'s GIT_TAG is not a full commit SHA",
                    p.component
                ))
            } else if p.possible.len() > 1 {
                Some(format!(
                    "{}'s pin can take {} values",
                    p.component,
                    p.possible.len()
                ))
            } else {
                None
            },
            clone: clone_of(&p.component),
        });
    }
    let judge = Judge {
        view,
        db,
        release: release.as_ref(),
        others: &others,
    };
    for pin in &pins {
        crate::model::verbose::say(format_args!(
            "{}: {} pinned at {} ({}:{}, {}); judging it against the rule database",
            view.describe(),
            pin.component,
            pin.reference.as_deref().unwrap_or("no reference"),
            pin.file,
            pin.line,
            pin.found_by.as_str(),
        ));
    }
    for pin in &mut pins {
        for var in &pin.overrides {
            if std::env::var_os(var).is_some() {
                report.warnings.push(format!(
                    "{var} is set in this environment: a build here would use that directory, not the pin of {}",
                    pin.component
                ));
            }
        }
        let judged = judge.pin_values(pin, &clone_of)?;
        report.warnings.extend(judged.warnings);
        report.findings.extend(judged.hygiene);
        report.findings.extend(judged.findings);
    }
    for unreached in &found.unreached {
        report.findings.extend(judge.unreached(unreached));
    }
    report.components = pins;
    fetched.annotate(&mut report);
    Ok(report)
}
