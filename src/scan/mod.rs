//! The scan pipeline for one target: open it as a view, find its pins, resolve them against
//! the clones given, evaluate every rule that applies, and add pin-hygiene findings.

pub mod drift;
mod hygiene;

use crate::pin::{self, Pin};
use crate::report::TargetReport;
use crate::resolve::{Clone, PatchedTree, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::{self, Location, OtherPin, Subject};
use crate::target::{self, TargetError, View};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options that apply to every target of one scan.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Read source trees at this git revision instead of the work tree.
    pub rev: Option<String>,
    /// Clones of pinned projects by component name (`--repo NAME=PATH`).
    pub repos: Vec<(String, PathBuf)>,
    /// Fingerprint indexes for artifacts (loaded from the cache directory).
    pub indexes: Vec<crate::index::Index>,
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
}

impl Options {
    /// The image options these scan options carry.
    pub fn image(&self) -> crate::image::Options {
        let defaults = crate::image::Options::default();
        crate::image::Options {
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

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Cmake(#[from] pin::cmake::CmakeError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Image(#[from] crate::image::ImageError),
    #[error("{target}: {message}")]
    Unsupported { target: String, message: String },
    #[error("--repo {name}={path}: {message}")]
    Repo {
        name: String,
        path: PathBuf,
        message: String,
    },
}

/// Open clones, once per scan.
pub struct Clones {
    by_name: BTreeMap<String, Clone>,
}

impl Clones {
    pub fn open(repos: &[(String, PathBuf)]) -> Result<Self, ScanError> {
        let mut by_name = BTreeMap::new();
        for (name, path) in repos {
            let clone = Clone::open(path).map_err(|e| ScanError::Repo {
                name: name.clone(),
                path: path.clone(),
                message: e.to_string(),
            })?;
            by_name.insert(name.clone(), clone);
        }
        Ok(Clones { by_name })
    }

    pub fn get(&self, name: &str) -> Option<&Clone> {
        self.by_name.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

/// What kind of input a target string names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A vLLM source tree (plain directory or git work tree).
    SourceTree(PathBuf),
    /// A wheel file.
    Wheel(PathBuf),
    /// A site-packages directory or a virtual environment.
    Installed(PathBuf),
    /// A container image: `docker://REF`, `oci:DIR[:TAG]`, or a `docker save` tarball.
    Image(String),
}

/// Classify a target string: image references by prefix, files by extension, directories by
/// what they hold (`CMakeLists.txt` or `cmake/`: a source tree; `site-packages`, a `pyvenv.cfg`,
/// `conda-meta/`, `*.dist-info`, or any environment below it: an installed environment).
pub fn classify(target: &str) -> TargetKind {
    if target.starts_with("docker://") || target.starts_with("oci:") {
        return TargetKind::Image(target.to_string());
    }
    let path = PathBuf::from(target);
    let lower = target.to_ascii_lowercase();
    if lower.ends_with(".whl") {
        return TargetKind::Wheel(path);
    }
    if lower.ends_with(".tar") || lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        return TargetKind::Image(target.to_string());
    }
    if path.join("CMakeLists.txt").is_file() || path.join("cmake").is_dir() {
        return TargetKind::SourceTree(path);
    }
    let installed = path.join("pyvenv.cfg").is_file()
        || path
            .file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages")
        || path.join("conda-meta").is_dir()
        || std::fs::read_dir(&path).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        })
        // A prefix or a whole filesystem holding environments at any depth (`/opt/conda`,
        // `/usr/lib/python3/dist-packages`, `uv tool` environments ten levels down).
        || (path.is_dir()
            && crate::artifact::env::find(&crate::target::DirView::installed(&path))
                .is_ok_and(|envs| !envs.is_empty()));
    if installed {
        TargetKind::Installed(path)
    } else {
        TargetKind::SourceTree(path)
    }
}

/// Scan one target of any kind.
pub fn scan_target(
    target: &str,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    match classify(target) {
        // --rev always means a source tree read through git.
        _ if opts.rev.is_some() => scan_path(Path::new(target), opts, db, clones),
        TargetKind::SourceTree(path) => scan_path(&path, opts, db, clones),
        TargetKind::Wheel(path) => {
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
        TargetKind::Installed(path) => {
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
        TargetKind::Image(image) => {
            let merged = crate::image::open(&image, &opts.image())?;
            let report = scan_artifact(&merged.view, opts, db, clones)?;
            Ok(crate::image::annotate(&image, report, merged))
        }
    }
}

/// Scan an artifact's view (wheel, installed environment, image filesystem).
pub fn scan_artifact(
    view: &dyn View,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    let cx = crate::artifact::Context {
        indexes: opts.indexes.iter().collect(),
        clones: clones
            .by_name
            .iter()
            .map(|(n, c)| (n.as_str(), c))
            .collect(),
    };
    Ok(crate::artifact::scan_view_with(view, db, &cx)?)
}

/// Scan one source-tree target.
pub fn scan_path(
    path: &Path,
    opts: &Options,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    let view = target::open(path, opts.rev.as_deref())?;
    // vLLM's own revision (for rules with `requires` on it): the tree's commit, and the target
    // repository itself as the clone that answers ancestry.
    let own = Clone::open(path).ok();
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
    scan_view_with(view.as_ref(), db, clones, &[own_pin])
}

/// Scan an opened view.
pub fn scan_view(
    view: &dyn View,
    db: &Database,
    clones: &Clones,
) -> Result<TargetReport, ScanError> {
    scan_view_with(view, db, clones, &[])
}

/// Scan an opened view, knowing the target's own revision and other pins given in `own`.
pub fn scan_view_with(
    view: &dyn View,
    db: &Database,
    clones: &Clones,
    own: &[OtherPin],
) -> Result<TargetReport, ScanError> {
    let declarations = pin::cmake::find(view)?;
    let mut pins = pin::pins(&declarations, &db.registry);
    let mut report = TargetReport::new(view.describe(), view.kind());
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
            clone: clones.get(&p.component),
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
        let clone = clones.get(&pin.component);
        let (commit, commit_unknown) = resolve_pin(pin, clone)?;
        pin.commit = commit.map(|c| c.to_string());
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
            sources: tree
                .as_ref()
                .map(|t| t as &dyn crate::rules::signature::SourceFiles),
            sources_label,
            packages: Vec::new(),
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
    Ok(report)
}

fn short(commit: Option<gix::ObjectId>) -> String {
    commit
        .map(|c| c.to_string()[..12].to_string())
        .unwrap_or_default()
}

/// The pinned commit, or why it is not known.
fn resolve_pin(
    pin: &Pin,
    clone: Option<&Clone>,
) -> Result<(Option<gix::ObjectId>, Option<String>), ScanError> {
    let Some(reference) = pin.reference.as_deref() else {
        let why = match &pin.reference_raw {
            Some(raw) => format!("GIT_TAG `{raw}` could not be evaluated (unset variable)"),
            None if pin.url.is_some() => "fetched by URL, not from git: no commit to check".into(),
            None => "no GIT_TAG: the source comes from an override or the default branch".into(),
        };
        return Ok((None, Some(why)));
    };
    match clone {
        Some(clone) => match clone.resolve(reference)? {
            Resolved::Commit(c) => Ok((Some(c), None)),
            Resolved::Missing => Ok((
                None,
                Some(format!(
                    "`{reference}` is not in the clone {} (shallow, stale or another repository)",
                    clone.path().display()
                )),
            )),
        },
        None => match pin.commit.as_deref() {
            Some(full) => Ok((gix::ObjectId::from_hex(full.as_bytes()).ok(), None)),
            None => Ok((
                None,
                Some(format!(
                    "`{reference}` is not a full commit SHA: pass --repo {}=PATH to resolve it",
                    pin.component
                )),
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
