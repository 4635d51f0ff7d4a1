//! The scan pipeline: [`run`] scans every target of one `pinprobe scan` and returns the
//! [`Report`]; for each target, [`scan_target`] opens it (any kind, through [`crate::view`]),
//! finds its pins, resolves them against the clones given, evaluates every rule that applies and
//! adds pin-hygiene findings; drift (`--expect`) and the ignore policy come last.
//!
//! - [`artifact`]: wheels, environments and image filesystems (components from shipped files).
//! - `hygiene`: fork pins, short SHAs, movable references.
//! - [`drift`]: a build's components against the tree it was declared from.
//! - [`policy`]: the ignore file (`.pinprobe.yaml`), applied after evaluation.

mod artifact;
pub mod drift;
mod fetched;
mod forms;
mod hygiene;
pub mod ledger;
pub mod policy;
pub mod pool;
pub mod python;
pub mod reuse;
pub mod state;
pub mod vex;

use crate::pin;

use crate::model::{Date, Location, Pin, Report, TargetReport};
use crate::resolve::fetch;
use crate::resolve::{Clones, PatchedTree, Repo, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::{self, OtherPin, Subject};
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
                let _permit = target.starts_with("docker://").then(|| registry.take());
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
    let is_tree = matches!(view::classify(target), view::TargetKind::SourceTree(_));
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
    match view::classify(target) {
        // --rev always means a source tree read through git.
        _ if opts.rev.is_some() => scan_source(Path::new(target), opts, db, clones),
        view::TargetKind::SourceTree(path) => scan_source(&path, opts, db, clones),
        view::TargetKind::Wheel(path) => reuse::wheel(target, &path, opts, db, || {
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
        view::TargetKind::Installed(path) => {
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
        view::TargetKind::Image(image) => {
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
    report.kind = "image".to_string();
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
    scan_source_view(view.as_ref(), db, clones, &[own_pin], opts.fetch.as_ref())
}

/// Scan an opened source view, knowing the target's own revision and other pins given in `own`.
fn scan_source_view(
    view: &dyn View,
    db: &Database,
    clones: &Clones,
    own: &[OtherPin],
    fetch_settings: Option<&fetch::Settings>,
) -> Result<TargetReport, ScanError> {
    let mut found = pin::from_cmake(view, &db.registry)?;
    let mut report = TargetReport::new(view.describe(), view.kind());
    forms::add(view, db, own, &mut found, &mut report)?;
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
    for pin in &mut pins {
        for var in &pin.overrides {
            if std::env::var_os(var).is_some() {
                report.warnings.push(format!(
                    "{var} is set in this environment: a build here would use that directory, not the pin of {}",
                    pin.component
                ));
            }
        }
        let given = clone_of(&pin.component);
        let judged = judge.pin(pin, given)?;
        pin.commit = judged.commit.map(|c| c.to_string());
        report.warnings.extend(judged.warnings);
        report.findings.extend(judged.hygiene);
        if pin.possible.len() <= 1 {
            report.findings.extend(judged.findings);
            continue;
        }
        // A pin that can take several values: judge each, then decide over the set.
        let mut alternatives: Vec<(crate::model::Possible, Vec<crate::model::Finding>)> =
            Vec::new();
        for possible in pin.possible.iter().skip(1) {
            let variant = pin::with_value(pin, possible);
            let given = clone_of(&pin.component);
            alternatives.push((possible.clone(), judge.pin(&variant, given)?.findings));
        }
        let main = pin.possible.first().cloned();
        report
            .findings
            .extend(over_set(main.as_ref(), judged.findings, &alternatives));
    }
    for unreached in &found.unreached {
        report.findings.extend(judge.unreached(unreached));
    }
    report.components = pins;
    fetched.annotate(&mut report);
    Ok(report)
}

/// What judging one value of a pin gives.
struct Judged {
    commit: Option<gix::ObjectId>,
    findings: Vec<crate::model::Finding>,
    hygiene: Vec<crate::model::Finding>,
    warnings: Vec<String>,
}

/// Everything a source pin is judged against.
struct Judge<'a> {
    view: &'a dyn View,
    db: &'a Database,
    release: Option<&'a ledger::ReleaseId>,
    others: &'a [OtherPin<'a>],
}

impl Judge<'_> {
    /// Every rule that applies to the pin's component (or lists its commit as a known affected
    /// pin), on one value of the pin, with the clone given for the component.
    fn pin(&self, pin: &Pin, given: Option<&Repo>) -> Result<Judged, ScanError> {
        let db = self.db;
        let mut warnings = Vec::new();
        let (commit, commit_unknown, lacks) = resolve_pin(pin, given)?;
        // A clone that lacks the pinned commit answers nothing about it; the full SHA still
        // names the commit, so known pins and the ledger still decide.
        let clone = given.filter(|_| lacks.is_none());
        let commit_text = commit.map(|c| c.to_string());
        let mut resolution =
            ledger::resolve(db, self.release, &pin.component, commit_text.as_deref());
        // The recorded verdicts describe the release's build: its pin and its patches.
        let mut tree_patches = Vec::new();
        for path in &pin.patches {
            let bytes = match self.view.read(path) {
                Err(TargetError::Unreadable { .. }) => None,
                other => other?,
            };
            tree_patches.push((path.clone(), bytes));
        }
        if let Some(why) = ledger::recorded_for_tree(&mut resolution, &pin.component, &tree_patches)
        {
            warnings.push(format!(
                "release ledger verdicts not used for {}: {why}",
                pin.component
            ));
        }
        if let (Some(_), Some(why)) = (&self.release, &resolution.why_not)
            && pin.component == "flash-attention"
        {
            warnings.push(format!(
                "release ledger not used for {}: {why}",
                pin.component
            ));
        }
        let hygiene = hygiene::check(pin, &db.registry, clone.zip(commit));
        let patches = read_patches(self.view, pin)?;
        let tree = match (clone, commit) {
            (Some(clone), Some(commit)) => Some(PatchedTree::new(clone, commit, &patches)),
            _ => None,
        };
        let sources_label = match (&tree, pin.patches.is_empty()) {
            (None, _) => String::new(),
            (Some(_), true) => format!("{} at {}", pin.component, short(commit)),
            (Some(_), false) => format!(
                "{} at {} with {} applied",
                pin.component,
                short(commit),
                pin.patches.join(", ")
            ),
        };
        let subject = Subject {
            component: &pin.component,
            commit,
            commit_unknown,
            clone,
            sources: tree.as_ref().map(|t| t as &dyn crate::view::SourceFiles),
            sources_label,
            binaries: None,
            packages: resolution.packages,
            no_clone: lacks.or_else(|| {
                commit.map(|c| {
                    format!(
                        "no clone given: ancestry and the pinned source need a clone of {} holding {} (--repo {}=PATH)",
                        pin.component,
                        short(Some(c)),
                        pin.component
                    )
                })
            }),
            recorded: resolution.recorded,
            location: Some(Location {
                file: pin.file.clone(),
                line: pin.line,
            }),
        };
        let mut findings = Vec::new();
        for loaded in &db.rules {
            if evaluate::applies(&loaded.rule, &pin.component, &db.registry) {
                findings.push(evaluate::evaluate_with(
                    &loaded.rule,
                    &subject,
                    &db.registry,
                    self.others,
                ));
            } else if let Some(c) = commit
                && let Some(finding) = known_elsewhere(&loaded.rule, pin, &c.to_string())
            {
                findings.push(finding);
            } else if let Some(any) = pin.possible.first().filter(|p| !p.set_by.is_empty())
                // A Python requirement's unknown version is unknown for its own component
                // only: the ledger says which component each pin is.
                && pin.found_by != crate::model::FOUND_BY_PYTHON
                && loaded
                    .rule
                    .affected
                    .iter()
                    .any(|a| !a.specific().known_affected_pins.is_empty())
            {
                // A commit id is global: a GIT_TAG an input can set may be a known affected pin
                // of this rule, whatever the component is called.
                findings.push(any_value(&loaded.rule, pin, any));
            }
        }
        Ok(Judged {
            commit,
            findings,
            hygiene,
            warnings,
        })
    }

    /// A declaration no configuration reaches: `unknown` for every rule of its component (and
    /// for every rule that lists its commit as a known affected pin), naming file and line.
    fn unreached(&self, u: &pin::Unreached) -> Vec<crate::model::Finding> {
        let db = self.db;
        let what = match (&u.declared_name, &u.reference) {
            (n, _) if n.is_empty() => "a declaration".to_string(),
            (n, Some(r)) => format!("`{n}` at `{r}`"),
            (n, None) => format!("`{n}`"),
        };
        let detail = format!(
            "{}:{}: {what} is declared where no CMake configuration pinprobe evaluated reaches it (a branch never taken, a file never included, a function never called); if the evaluation missed a way in, the build fetches it",
            u.file, u.line
        );
        let commit = u
            .reference
            .as_deref()
            .filter(|r| crate::model::is_full_sha(r))
            .map(str::to_ascii_lowercase);
        let lists_commit = |rule: &crate::rules::model::Rule| {
            commit.as_deref().is_some_and(|c| {
                rule.affected.iter().any(|a| {
                    a.specific()
                        .known_affected_pins
                        .iter()
                        .any(|k| k.commit.eq_ignore_ascii_case(c))
                })
            })
        };
        db.rules
            .iter()
            .filter(|l| {
                u.component
                    .as_deref()
                    .is_some_and(|c| evaluate::applies(&l.rule, c, &db.registry))
                    || lists_commit(&l.rule)
                    // A declaration whose name was not read could be anything.
                    || u.declared_name.is_empty()
            })
            .map(|l| crate::model::Finding {
                rule: l.rule.id.clone(),
                status: crate::model::Status::Unknown,
                severity: l.rule.database_specific.severity,
                summary: l.rule.summary.clone(),
                component: u
                    .component
                    .clone()
                    .unwrap_or_else(|| u.declared_name.clone()),
                decided_by: None,
                evidence: vec![crate::model::Evidence {
                    kind: crate::model::EvidenceKind::Configuration,
                    status: crate::model::Status::Unknown,
                    detail: detail.clone(),
                    file: Some(u.file.clone()),
                    line: Some(u.line),
                }],
                location: Some(Location {
                    file: u.file.clone(),
                    line: u.line,
                }),
                suppressed: None,
            })
            .collect()
    }
}

/// A rule that does not apply to the pin's component but lists its commit as a known affected
/// pin: a commit id is global, so the pin is affected whatever it is called.
fn known_elsewhere(
    rule: &crate::rules::model::Rule,
    pin: &Pin,
    commit: &str,
) -> Option<crate::model::Finding> {
    let (affected, known) = rule.affected.iter().find_map(|a| {
        a.specific()
            .known_affected_pins
            .iter()
            .find(|k| k.commit.eq_ignore_ascii_case(commit))
            .cloned()
            .map(|k| (a, k))
    })?;
    let listed_for = affected
        .specific()
        .component
        .clone()
        .or_else(|| rule.git_ranges().find_map(|(_, r)| r.repo.clone()))
        .unwrap_or_else(|| affected.package.name.clone());
    let note = if known.note.is_empty() {
        String::new()
    } else {
        format!(" ({})", known.note)
    };
    Some(crate::model::Finding {
        rule: rule.id.clone(),
        status: crate::model::Status::Affected,
        severity: rule.database_specific.severity,
        summary: rule.summary.clone(),
        component: pin.component.clone(),
        decided_by: Some(crate::model::EvidenceKind::KnownPin),
        evidence: vec![crate::model::Evidence {
            kind: crate::model::EvidenceKind::KnownPin,
            status: crate::model::Status::Affected,
            detail: format!(
                "pin {commit} is a known affected pin{note}, listed for {listed_for}; pinned here as `{}`{}: the names differ",
                pin.declared_name,
                pin.repo
                    .as_deref()
                    .map(|r| format!(" from {r}"))
                    .unwrap_or_default()
            ),
            file: Some(pin.file.clone()),
            line: Some(pin.line),
        }],
        location: Some(Location {
            file: pin.file.clone(),
            line: pin.line,
        }),
        suppressed: None,
    })
}

/// A rule that does not apply to the pin's component, on a GIT_TAG an input can set to any
/// value: the rule's known affected pins are among the values, so `unknown`.
fn any_value(
    rule: &crate::rules::model::Rule,
    pin: &Pin,
    value: &crate::model::Possible,
) -> crate::model::Finding {
    use crate::model::{Evidence, EvidenceKind, Finding, Status};
    Finding {
        rule: rule.id.clone(),
        status: Status::Unknown,
        severity: rule.database_specific.severity,
        summary: rule.summary.clone(),
        component: pin.component.clone(),
        decided_by: None,
        evidence: vec![Evidence {
            kind: EvidenceKind::Configuration,
            status: Status::Unknown,
            detail: format!(
                "GIT_TAG of `{}` can be {}: a commit this rule lists as a known affected pin is one of them, whatever the component is called",
                pin.declared_name,
                value.shown()
            ),
            file: Some(value.file.clone()),
            line: Some(value.line),
        }],
        location: Some(Location {
            file: value.file.clone(),
            line: value.line,
        }),
        suppressed: None,
    }
}

/// The status of each rule over every value a pin can take: `affected` when the default
/// configuration's value is (or every value is), `not_affected` only when every value is,
/// `unknown` otherwise, naming the values and what selects them. `main` is the default (else
/// first) value, whose findings are `findings`; `alternatives` the others'.
fn over_set(
    main: Option<&crate::model::Possible>,
    findings: Vec<crate::model::Finding>,
    alternatives: &[(crate::model::Possible, Vec<crate::model::Finding>)],
) -> Vec<crate::model::Finding> {
    use crate::model::{Evidence, EvidenceKind, Status};
    let mut rules: Vec<String> = findings.iter().map(|f| f.rule.clone()).collect();
    for (_, fs) in alternatives {
        for f in fs {
            if !rules.contains(&f.rule) {
                rules.push(f.rule.clone());
            }
        }
    }
    let main_is_default = main.is_some_and(|m| m.default);
    let mut out = Vec::new();
    for rule in rules {
        let main_finding = findings.iter().find(|f| f.rule == rule);
        let others: Vec<(&crate::model::Possible, Option<&crate::model::Finding>)> = alternatives
            .iter()
            .map(|(p, fs)| (p, fs.iter().find(|f| f.rule == rule)))
            .collect();
        // A value the rule does not apply to (another component) is not affected by it.
        let status_of =
            |f: Option<&crate::model::Finding>| f.map_or(Status::NotAffected, |f| f.status);
        let main_status = status_of(main_finding);
        let all = std::iter::once(main_status).chain(others.iter().map(|(_, f)| status_of(*f)));
        let statuses: Vec<Status> = all.collect();
        let status = if (main_is_default && main_status == Status::Affected)
            || statuses.iter().all(|s| *s == Status::Affected)
        {
            Status::Affected
        } else if statuses.iter().all(|s| *s == Status::NotAffected) {
            Status::NotAffected
        } else {
            Status::Unknown
        };
        let Some(mut finding) = main_finding
            .cloned()
            .or_else(|| others.iter().find_map(|(_, f)| f.cloned()))
        else {
            continue;
        };
        if finding.status != status {
            finding.decided_by = None;
        }
        finding.status = status;
        let describe = |p: Option<&crate::model::Possible>, s: Status| match p {
            Some(p) => format!(
                "{} when {} ({}:{}): {s}",
                p.shown(),
                p.selected_by(),
                p.file,
                p.line
            ),
            None => format!("the first value: {s}"),
        };
        let summary = match status {
            Status::Affected if main_is_default && main_status == Status::Affected => format!(
                "the default configuration's pin is affected: {}",
                describe(main, main_status)
            ),
            Status::Affected => "every value the pin can take is affected".to_string(),
            Status::NotAffected => format!(
                "every one of the {} values the pin can take is not affected",
                statuses.len()
            ),
            Status::Unknown => {
                "the pin can take several values and not all are known not affected".to_string()
            }
        };
        finding.evidence.push(Evidence {
            kind: EvidenceKind::Configuration,
            status,
            detail: summary,
            file: main.map(|p| p.file.clone()),
            line: main.map(|p| p.line),
        });
        if status != Status::Affected || !main_is_default {
            finding.evidence.push(Evidence {
                kind: EvidenceKind::Configuration,
                status: main_status,
                detail: describe(main, main_status),
                file: main.map(|p| p.file.clone()),
                line: main.map(|p| p.line),
            });
        }
        for (p, f) in &others {
            let s = status_of(*f);
            let why = f
                .and_then(|f| f.evidence.first())
                .map(|e| format!(" ({})", e.detail))
                .unwrap_or_default();
            finding.evidence.push(Evidence {
                kind: EvidenceKind::Configuration,
                status: s,
                detail: format!("{}{why}", describe(Some(p), s)),
                file: Some(p.file.clone()),
                line: Some(p.line),
            });
        }
        out.push(finding);
    }
    out
}

fn short(commit: Option<gix::ObjectId>) -> String {
    commit
        .map(|c| c.to_string()[..12].to_string())
        .unwrap_or_default()
}

/// The pinned commit, or why it is not known; and, third, why the clone given cannot answer for
/// it (it lacks the commit that a full-SHA GIT_TAG names).
type PinCommit = (Option<gix::ObjectId>, Option<String>, Option<String>);

fn resolve_pin(pin: &Pin, clone: Option<&Repo>) -> Result<PinCommit, ScanError> {
    let Some(reference) = pin.reference.as_deref() else {
        let why = match (&pin.reference_raw, &pin.url) {
            (Some(raw), _) => format!("GIT_TAG `{raw}` could not be evaluated (unset variable)"),
            (None, Some(url)) => format!(
                "fetched by URL `{url}`, which names no repository revision pinprobe can read (not a forge archive of a commit or tag): no commit to check"
            ),
            (None, None) => match pin.possible.first().filter(|p| !p.set_by.is_empty()) {
                Some(p) => format!("the pin can be any commit: {}", p.set_by.join("; ")),
                None => {
                    "no GIT_TAG: the source comes from an override or the default branch".into()
                }
            },
        };
        return Ok((None, Some(why), None));
    };
    let full = pin
        .commit
        .as_deref()
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    match clone {
        Some(clone) => match clone.resolve(reference)? {
            Resolved::Commit(c) => Ok((Some(c), None, None)),
            // A full SHA is a commit id whether or not this clone has it.
            Resolved::Missing if full.is_some() => Ok((
                full,
                None,
                Some(format!(
                    "`{reference}` is not in the clone {} (shallow, stale or another repository): tried it for ancestry and the pinned source; a clone holding the commit would decide",
                    clone.path().display()
                )),
            )),
            Resolved::Missing => Ok((
                None,
                Some(format!(
                    "`{reference}` is not in the clone {} (shallow, stale or another repository); a clone where it resolves would decide",
                    clone.path().display()
                )),
                None,
            )),
        },
        None => match full {
            Some(c) => Ok((Some(c), None, None)),
            None => Ok((
                None,
                Some(format!(
                    "`{reference}` is not a full commit SHA: pass --repo {}=PATH to resolve it",
                    pin.component
                )),
                None,
            )),
        },
    }
}

/// The text of each patch file the pin declares, read from the target.
fn read_patches(view: &dyn View, pin: &Pin) -> Result<Vec<(String, String)>, ScanError> {
    let mut out = Vec::new();
    for path in &pin.patches {
        if let Some(bytes) = view.read(path)? {
            out.push((path.clone(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    Ok(out)
}
