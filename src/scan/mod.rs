//! The scan pipeline: [`run`] scans every target of one `pinprobe scan` and returns the
//! [`Report`]; for each target, [`scan_target`] opens it (any kind, through [`crate::target`]),
//! finds its pins, resolves them against the clones given, evaluates every rule that applies and
//! adds pin-hygiene findings; drift (`--expect`) and the ignore policy come last.
//!
//! - [`artifact`]: wheels, environments and image filesystems (components from shipped files).
//! - `hygiene`: fork pins, short SHAs, movable references.
//! - [`drift`]: a build's components against the tree it was declared from.
//! - [`policy`]: the ignore file (`.pinprobe.yaml`), applied after evaluation.

mod artifact;
pub mod drift;
mod hygiene;
pub mod ledger;
pub mod policy;
pub mod pool;
pub mod vex;

use crate::pin;

use crate::model::{Date, Location, Pin, Report, TargetReport};
use crate::resolve::fetch;
use crate::resolve::{Clones, PatchedTree, Repo, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::{self, OtherPin, Subject};
use crate::target::{self, TargetError, View};
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
    pub fn image(&self) -> crate::target::image::Options {
        let defaults = crate::target::image::Options::default();
        crate::target::image::Options {
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
    let mut report = scan_target(target, opts, db, clones).map_err(|e| {
        // Name the target once: most errors already start with its path.
        if e.to_string().contains(target) {
            e
        } else {
            ScanError::In {
                target: crate::target::image::reference::redact_userinfo(target).into_owned(),
                source: Box::new(e),
            }
        }
    })?;
    if let Some((tree, declared)) = expected {
        let drift = drift::check(tree, &declared.components, &report.components);
        report.findings.extend(drift);
    }
    let is_tree = matches!(target::classify(target), target::TargetKind::SourceTree(_));
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
    Image(#[from] crate::target::image::ImageError),
    #[error("{target}: {message}")]
    Unsupported { target: String, message: String },
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
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
    match target::classify(target) {
        // --rev always means a source tree read through git.
        _ if opts.rev.is_some() => scan_source(Path::new(target), opts, db, clones),
        target::TargetKind::SourceTree(path) => scan_source(&path, opts, db, clones),
        target::TargetKind::Wheel(path) => {
            let view = crate::target::WheelView::open(&path)?;
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
        }
        target::TargetKind::Installed(path) => {
            if !path.is_dir() {
                return Err(TargetError::Io {
                    path: path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
                }
                .into());
            }
            let view = crate::target::DirView::installed(&path);
            scan_artifact(&view, opts, db, clones)
        }
        target::TargetKind::Image(image) => {
            let merged = crate::target::image::open(&image, &opts.image())?;
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
    merged: crate::target::image::Merged,
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
    let view = target::open(path, opts.rev.as_deref())?;
    // vLLM's own revision (for rules with `requires` on it): the tree's commit, and the target
    // repository itself as the clone that answers ancestry.
    let own = Repo::open(path).ok();
    let commit = match (&own, opts.rev.as_deref()) {
        (Some(repo), Some(rev)) => match repo.resolve(rev)? {
            Resolved::Commit(c) => Some(c),
            Resolved::Missing => None,
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
    let declarations = pin::cmake::find(view)?;
    let mut pins = pin::pins(&declarations, &db.registry);
    let mut report = TargetReport::new(view.describe(), view.kind());
    // vLLM's own release (the sdist's generated version file), for version ranges and the ledger.
    let release = ledger::release_of(view, "vllm/_version.py")?;
    if pins.is_empty() {
        report.undecided = Some(format!(
            "no pinned kernel projects found in {} (looked for FetchContent_Declare, ExternalProject_Add and CPMAddPackage in CMakeLists.txt and cmake/)",
            view.describe()
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
        Some(settings) => fetch_missing(&pins, db, clones, settings),
        None => Fetches::default(),
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
            commit_unknown: p
                .commit
                .is_none()
                .then(|| format!("{}'s GIT_TAG is not a full commit SHA", p.component)),
            clone: clone_of(&p.component),
        });
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
        let given = clone_of(&pin.component);
        let (commit, commit_unknown, lacks) = resolve_pin(pin, given)?;
        // A clone that lacks the pinned commit answers nothing about it; the full SHA still
        // names the commit, so known pins and the ledger still decide.
        let clone = given.filter(|_| lacks.is_none());
        pin.commit = commit.map(|c| c.to_string());
        let resolution =
            ledger::resolve(db, release.as_ref(), &pin.component, pin.commit.as_deref());
        if let (Some(_), Some(why)) = (&release, &resolution.why_not)
            && pin.component == "flash-attention"
        {
            report.warnings.push(format!(
                "release ledger not used for {}: {why}",
                pin.component
            ));
        }
        report
            .findings
            .extend(hygiene::check(pin, &db.registry, clone.zip(commit)));
        let patches = read_patches(view, pin)?;
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
            sources: tree.as_ref().map(|t| t as &dyn crate::target::SourceFiles),
            sources_label,
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
        for loaded in &db.rules {
            if evaluate::applies(&loaded.rule, &pin.component, &db.registry) {
                report.findings.push(evaluate::evaluate_with(
                    &loaded.rule,
                    &subject,
                    &db.registry,
                    &others,
                ));
            }
        }
    }
    report.components = pins;
    fetched.annotate(&mut report);
    Ok(report)
}

/// What fetching did for one target's pins.
#[derive(Default)]
struct Fetches {
    /// Cache repositories by component, used like clones given with `--repo`.
    repos: std::collections::BTreeMap<String, Repo>,
    /// Components whose history a fetch would add (offline), with the URL.
    would_fetch: Vec<(String, String)>,
    /// Components whose fetch failed, with the cause.
    failed: Vec<(String, String)>,
}

impl Fetches {
    /// Name the cause in every undecided finding of a component whose fetch failed, and list
    /// (stderr) the undecided findings a fetch would decide when offline.
    fn annotate(&self, report: &mut TargetReport) {
        for (component, cause) in &self.failed {
            report.warnings.push(format!("{component}: {cause}"));
            for finding in report.findings.iter_mut() {
                if finding.component == *component
                    && finding.status == crate::model::Status::Unknown
                {
                    finding.evidence.push(crate::model::Evidence {
                        kind: crate::model::EvidenceKind::Ancestry,
                        status: crate::model::Status::Unknown,
                        detail: format!("the pinned history could not be fetched: {cause}"),
                        file: None,
                        line: None,
                    });
                }
            }
        }
        for (component, url) in &self.would_fetch {
            let undecided: Vec<&str> = report
                .findings
                .iter()
                .filter(|f| f.component == *component && f.status == crate::model::Status::Unknown)
                .map(|f| f.rule.as_str())
                .collect();
            if !undecided.is_empty() {
                report.notices.push(format!(
                    "offline: fetching {url} would decide {} for {component}",
                    undecided.join(", ")
                ));
            }
        }
    }
}

/// Fetch (or, offline, look up in the cache) the repository of every pin no `--repo` clone
/// covers: its pinned commit, plus the commits of the rules that apply to it.
fn fetch_missing(
    pins: &[Pin],
    db: &Database,
    clones: &Clones,
    settings: &fetch::Settings,
) -> Fetches {
    let mut out = Fetches::default();
    for pin in pins {
        if clones.get(&pin.component).is_some() || out.repos.contains_key(&pin.component) {
            continue;
        }
        let (Some(url), Some(canonical)) = (pin.repo.as_deref(), pin.repo_canonical.as_deref())
        else {
            continue;
        };
        if pin.reference.is_none() {
            continue;
        }
        let pinned: Vec<gix::ObjectId> = pin
            .commit
            .as_deref()
            .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok())
            .into_iter()
            .collect();
        let mut rule_commits: Vec<gix::ObjectId> = Vec::new();
        for loaded in &db.rules {
            for (_, range) in loaded.rule.git_ranges() {
                if !evaluate::range_applies(range, &pin.component, &db.registry) {
                    continue;
                }
                for event in &range.events {
                    if let Ok(id) = gix::ObjectId::from_hex(event.value().as_bytes())
                        && !pinned.contains(&id)
                        && !rule_commits.contains(&id)
                    {
                        rule_commits.push(id);
                    }
                }
            }
        }
        match fetch::ensure(settings, url, canonical, &pinned, &rule_commits) {
            Ok(fetch::Fetched::Ready(repo)) => {
                out.repos.insert(pin.component.clone(), repo);
            }
            Ok(fetch::Fetched::WouldFetch { url, cached }) => {
                if let Some(repo) = cached {
                    out.repos.insert(pin.component.clone(), repo);
                }
                out.would_fetch.push((pin.component.clone(), url));
            }
            Err(e) => out.failed.push((pin.component.clone(), e.to_string())),
        }
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
        let why = match &pin.reference_raw {
            Some(raw) => format!("GIT_TAG `{raw}` could not be evaluated (unset variable)"),
            None if pin.url.is_some() => "fetched by URL, not from git: no commit to check".into(),
            None => "no GIT_TAG: the source comes from an override or the default branch".into(),
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
