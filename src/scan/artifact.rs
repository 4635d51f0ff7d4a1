//! Artifact scanning: what a built vLLM ships (a wheel, a site-packages directory, a virtual
//! environment, an image's filesystem), its components recognised from the files themselves.
//!
//! No file in a wheel records the FlashAttention commit, so the verdict comes from the shipped
//! sources: rule signatures run on them (after undoing vLLM's import rewrite), the vllm version
//! range applies to the copy vLLM bundles, RECORD tells whether a file read was modified after
//! install, and a fingerprint index (see [`crate::pin::fingerprint`]) names the commits the files match.

use super::fetched::Fetches;
use crate::model::TargetKind;
use crate::model::TargetReport;
use crate::model::{CommitId, FoundBy, Pin};
use crate::model::{EvidenceKind, Location};
use crate::pin::fingerprint::Index;
use crate::pin::shipped::elf::{self, DynamicSymbol, ElfError};
use crate::pin::shipped::env::{self, Env};
use crate::pin::shipped::import_path;
use crate::pin::shipped::library_cache;
use crate::pin::shipped::record::{Check, Record};
use crate::pin::shipped::{self, FileRead, ShippedCopy, ShippedFiles};
use crate::rules::Database;
use crate::rules::evaluate::{self, Subject};
use crate::view::{TargetError, View};

/// What an artifact scan can use besides the view.
#[derive(Default)]
pub(crate) struct Context<'a> {
    /// Fingerprint indexes (one per component).
    pub indexes: Vec<&'a Index>,
    /// Clones by component name, for ancestry once a fingerprint names the commit.
    pub clones: Vec<(&'a str, &'a crate::resolve::Repo)>,
    /// Fetch the history of a commit the ledger or a fingerprint names when no clone has it
    /// (`None`: never).
    pub fetch: Option<&'a crate::resolve::fetch::Settings>,
    /// What fetching did, for the findings' evidence.
    pub fetches: std::cell::RefCell<Fetches>,
}

impl Context<'_> {
    fn clone_of(&self, component: &str) -> Option<&crate::resolve::Repo> {
        self.clones
            .iter()
            .find(|(n, _)| *n == component)
            .map(|(_, c)| *c)
    }
}

/// Scan a view holding an artifact's files (wheel root, site-packages, venv or image root).
pub(crate) fn scan(
    view: &dyn View,
    db: &Database,
    cx: &Context,
) -> Result<TargetReport, TargetError> {
    let mut report = TargetReport::new(view.describe(), view.kind());
    let envs = env::find(view)?;
    // vllm distributions whose FlashAttention copy some environment holds (its own, or the
    // source directory of an editable install).
    let mut covered = std::collections::BTreeSet::new();
    for env in &envs {
        if let Some(vllm) = env.dist("vllm")
            && shipped::find(view, env)?
                .iter()
                .any(|c| c.component == "flash-attention")
        {
            covered.insert(vllm.dist_info.clone());
        }
    }
    for env in &envs {
        scan_env(view, env, &envs, db, cx, &covered, &mut report)?;
    }
    cx.fetches.borrow().annotate(&mut report);
    if report.components.is_empty() {
        report.undecided = Some(format!(
            "no vllm or FlashAttention install found in {} ({} Python environment(s) looked at)",
            view.describe(),
            envs.len()
        ));
    }
    Ok(report)
}

fn record_of(view: &dyn View, dist: &env::Dist) -> Result<Option<Record>, TargetError> {
    Ok(view
        .read(&format!("{}/RECORD", dist.dist_info))?
        .map(|b| Record::parse(&dist.dist_info, &String::from_utf8_lossy(&b))))
}

fn scan_env(
    view: &dyn View,
    env: &Env,
    envs: &[Env],
    db: &Database,
    cx: &Context,
    covered: &std::collections::BTreeSet<String>,
    report: &mut TargetReport,
) -> Result<(), TargetError> {
    let vllm = env.dist("vllm");
    if let Some(dist) = vllm {
        let version_file = env.join("vllm/_version.py");
        // vLLM's own commit is informational: a link that cannot be resolved leaves it unknown.
        let bytes = match view.read(&version_file) {
            Err(TargetError::Unreadable { .. }) => None,
            other => other?,
        };
        let commit = bytes.and_then(|b| env::vllm_commit(&String::from_utf8_lossy(&b)));
        report.components.push(Pin::shipped(
            "vllm",
            &dist.dist_info,
            Some(format!("{} {}", dist.name, dist.version)),
            commit.map(CommitId::from),
            FoundBy::DistInfo,
        ));
    }
    // Each distribution's RECORD is read once, however many copies it ships.
    let mut records: Vec<(String, Option<Record>)> = Vec::new();
    let copies = shipped::find(view, env)?;
    if let Some(dist) = vllm
        && !covered.contains(&dist.dist_info)
        && env.editable_of.is_none()
    {
        missing_copy(view, env, dist, db, report);
    }
    for copy in copies {
        let record = match &copy.owner {
            Some(owner) => match records.iter().position(|(d, _)| *d == owner.dist_info) {
                Some(i) => records[i].1.as_ref(),
                None => {
                    records.push((owner.dist_info.clone(), record_of(view, owner)?));
                    records.last().and_then(|(_, r)| r.as_ref())
                }
            },
            None => None,
        };
        scan_copy(view, env, envs, &copy, record, db, cx, report)?;
    }
    Ok(())
}

/// A `vllm` distribution whose bundled FlashAttention copy is not where vLLM puts it
/// (`vllm/vllm_flash_attn/cute/*.py`): moved, bytecode only, an editable install whose source
/// lies elsewhere, a link not resolved. The FlashAttention rules are evaluated with no source
/// files, so their signature is undecidable and the lattice gives `unknown` (or `affected`
/// where weaker evidence says so), never a silent pass.
fn missing_copy(
    view: &dyn View,
    env: &Env,
    dist: &env::Dist,
    db: &Database,
    report: &mut TargetReport,
) {
    struct NoFiles;
    impl crate::view::SourceFiles for NoFiles {
        fn read(&self, _path: &str) -> Result<Option<String>, String> {
            Ok(None)
        }
    }
    let dir = env.join("vllm/vllm_flash_attn/cute");
    let editable = view
        .read(&format!("{}/direct_url.json", dist.dist_info))
        .ok()
        .flatten()
        .is_some_and(|b| {
            let text = String::from_utf8_lossy(&b);
            text.contains("\"editable\"") && text.contains("true")
        });
    let why = if editable {
        format!(
            "{} {} is an editable install (direct_url.json): its sources lie outside {}, where this scan cannot follow them",
            dist.name,
            dist.version,
            view.describe()
        )
    } else {
        format!(
            "{} {} is installed but no FlashAttention sources were found at {dir} (missing, moved, bytecode only, or behind a link that was not resolved)",
            dist.name, dist.version
        )
    };
    let mut pin = Pin::shipped(
        "flash-attention",
        &dir,
        Some(format!(
            "shipped in {} {} (not found)",
            dist.name, dist.version
        )),
        None,
        FoundBy::ExpectedCopy,
    );
    pin.component_repo = db
        .registry
        .get("flash-attention")
        .and_then(|c| crate::pin::url::canonical(&c.repo));
    report.components.push(pin);
    let files = NoFiles;
    for loaded in &db.rules {
        let rule = &loaded.rule;
        if !evaluate::applies(rule, "flash-attention", &db.registry) {
            continue;
        }
        let subject = Subject {
            component: "flash-attention",
            commit: None,
            commit_unknown: Some(why.clone()),
            no_clone: Some(why.clone()),
            recorded: Vec::new(),
            patches: None,
            clone: None,
            sources: Some(&files),
            sources_label: why.clone(),
            binaries: None,
            packages: vec![("PyPI".to_string(), "vllm".to_string(), dist.version.clone())],
            package_pins: Vec::new(),
            location: Some(Location {
                file: dist.dist_info.clone(),
                line: 1,
            }),
        };
        report
            .findings
            .push(evaluate::evaluate(rule, &subject, &db.registry));
    }
}

#[allow(clippy::too_many_arguments)]
fn scan_copy(
    view: &dyn View,
    env: &Env,
    envs: &[Env],
    copy: &ShippedCopy,
    record: Option<&Record>,
    db: &Database,
    cx: &Context,
    report: &mut TargetReport,
) -> Result<(), TargetError> {
    let matched = crate::pin::fingerprint::match_copy(view, copy, &cx.indexes)?;
    let fingerprinted = matched.as_ref().and_then(|m| m.exact_commit());
    // A copy vLLM ships: its release's pin comes from the ledger (by version and commit).
    let shipped_by_vllm = copy
        .owner
        .as_ref()
        .is_some_and(|o| o.normalized() == "vllm");
    // vllm/_version.py (version and commit), else the dist-info METADATA version alone.
    let release = match (&copy.owner, shipped_by_vllm) {
        (Some(owner), true) => {
            crate::judge::ledger::release_of(view, &env.join("vllm/_version.py"))?.or_else(|| {
                Some(crate::judge::ledger::ReleaseId {
                    version: owner.version.clone(),
                    commit: None,
                    file: format!("{}/METADATA", owner.dist_info),
                })
            })
        }
        _ => None,
    };
    let resolution = if shipped_by_vllm {
        crate::judge::ledger::resolve(db, release.as_ref(), &copy.component, None)
    } else {
        crate::judge::ledger::Resolution::default()
    };
    // The ledger's pin counts only if the shipped files do not say they come from elsewhere.
    let ledger_agrees = match (&matched, &resolution.commit) {
        (Some(m), Some(l)) => m.commits.iter().any(|c| c == l) && m.mismatched.is_empty(),
        _ => true,
    };
    let ledger_commit = resolution
        .commit
        .as_deref()
        .filter(|_| ledger_agrees)
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    let recorded = if ledger_agrees {
        resolution.recorded.clone()
    } else {
        Vec::new()
    };
    if let (Some(m), Some(l), Some(id)) = (&matched, &resolution.commit, &release)
        && let Some(finding) =
            crate::judge::drift::against_ledger(&copy.component, &copy.dir, m, l, &id.version)
    {
        report.findings.push(finding);
    }
    let commit = fingerprinted.or(ledger_commit);
    let mut pin = Pin::shipped(
        &copy.component,
        &copy.dir,
        copy.owner
            .as_ref()
            .map(|o| format!("shipped in {} {}", o.name, o.version)),
        commit.map(|c| CommitId::new(c.to_string())),
        FoundBy::ShippedFiles,
    );
    pin.component_repo = db
        .registry
        .get(&copy.component)
        .and_then(|c| crate::pin::url::canonical(&c.repo));
    pin.fingerprint = matched.clone();
    // The commit's history, where no clone has it: from the repository the ledger's pin
    // declares, else the component's canonical one.
    let fetched = match (cx.clone_of(&copy.component), cx.fetch, commit) {
        (None, Some(settings), Some(commit)) => {
            let url = resolution
                .repo
                .clone()
                .filter(|_| fingerprinted.is_none())
                .or_else(|| db.registry.get(&copy.component).map(|c| c.repo.clone()));
            url.and_then(|url| {
                cx.fetches
                    .borrow_mut()
                    .one(settings, db, &copy.component, &url, &[commit])
            })
        }
        _ => None,
    };
    let clone = cx.clone_of(&copy.component).or(fetched.as_ref());
    report.components.push(pin);
    let packages = match &copy.owner {
        Some(owner) if owner.normalized() == "vllm" => {
            vec![(
                "PyPI".to_string(),
                "vllm".to_string(),
                owner.version.clone(),
            )]
        }
        _ => Vec::new(),
    };
    let files = ShippedFiles {
        view,
        copy,
        env,
        record,
        reads: Default::default(),
    };
    // The built libraries beside vLLM's bundled copy (`vllm/vllm_flash_attn/_vllm_fa3_C*.so`),
    // for symbol signatures; other copies ship none of their own.
    let libraries = match copy.dir.strip_suffix("/cute") {
        Some(package) if shipped_by_vllm && copy.component == "flash-attention" => {
            Some(ShippedLibraries {
                view,
                env,
                package: package.to_string(),
                record,
                reads: &files.reads,
                read: Default::default(),
            })
        }
        _ => None,
    };
    // Code Python runs at startup could import another copy than this one: no clean answer.
    let mut recorded = recorded;
    let package = copy.module.split('.').next().unwrap_or("vllm");
    if let Some(e) = import_path::evidence(&import_path::concerns(view, env, package, envs)?) {
        recorded.extend(db.rules.iter().map(|r| (r.rule.id.clone(), e.clone())));
    }
    for loaded in &db.rules {
        let rule = &loaded.rule;
        // Code-shape rules apply to every copy of the code they describe (one that holds the
        // signature's files); the others, and the vllm version range, only to the component
        // their ranges name.
        let by_component = evaluate::applies(rule, &copy.component, &db.registry);
        let by_signature = match &rule.database_specific.signature {
            Some(sig) => {
                let mut all = true;
                for f in sig.files() {
                    // A file that exists but cannot be read (an image link not resolved)
                    // counts: the signature then says undecidable. Other read errors are
                    // errors (exit 2).
                    all &= match copy.view_path(&f) {
                        Some(p) => match view.read(&p) {
                            Ok(found) => found.is_some(),
                            Err(TargetError::Unreadable { .. }) => true,
                            Err(e) => return Err(e),
                        },
                        None => false,
                    };
                }
                all
            }
            None => false,
        };
        if !by_signature && !by_component {
            continue;
        }
        files.reads.borrow_mut().clear();
        let subject = Subject {
            component: &copy.component,
            commit,
            commit_unknown: Some(match (&matched, &resolution.why_not) {
                (Some(m), _) => m.summary.clone(),
                (None, Some(why)) => format!("no file in an artifact records the commit and {why}; a fingerprint index (`pinprobe index build --repo {}=CLONE`) would recover it", copy.component),
                (None, None) => "no file in an artifact records the commit; build a fingerprint index with `pinprobe index build` to recover it".into(),
            }),
            no_clone: Some(match commit {
                Some(c) => format!(
                    "an artifact has no git history: ancestry needs a clone of {} holding {} ({}; --repo {}=CLONE)",
                    copy.component,
                    &c.to_string()[..12],
                    if fingerprinted.is_some() { "named by the fingerprint index" } else { "the release ledger's pin for this vLLM version" },
                    copy.component
                ),
                None => format!(
                    "an artifact has no git history and its {} commit is not known ({}): a fingerprint index or a release in the ledger would name it, then a clone holding it would decide ancestry",
                    copy.component,
                    resolution.why_not.as_deref().unwrap_or("no vLLM release to look up")
                ),
            }),
            recorded: recorded.clone(),
            patches: None,
            clone,
            sources: Some(&files),
            sources_label: format!("the shipped files in {}", copy.dir),
            binaries: libraries
                .as_ref()
                .map(|l| l as &dyn crate::rules::signature::symbols::Libraries),
            packages: if by_component { packages.clone() } else { Vec::new() },
            package_pins: Vec::new(),
            location: Some(Location {
                file: copy.view_path("flash_attn/cute/flash_fwd_sm90.py").unwrap_or_else(|| copy.dir.clone()),
                line: 1,
            }),
        };
        let mut finding = evaluate::evaluate(rule, &subject, &db.registry);
        // Point at the shipped file the signature matched.
        let hit = finding
            .evidence
            .iter()
            .find(|e| e.kind == EvidenceKind::Signature)
            .and_then(|e| Some((copy.view_path(e.file.as_deref()?)?, e.line?)));
        if let Some((file, line)) = hit {
            finding.location = Some(Location { file, line });
        }
        let finding = crate::judge::integrity::with_integrity(
            finding,
            &files.reads.borrow(),
            view.kind() == TargetKind::Wheel,
        );
        report.findings.push(finding);
    }
    Ok(())
}

/// The shared libraries in a shipped copy's package directory, each read once (streamed, see
/// [`crate::pin::shipped::elf`]) and checked against RECORD like the sources.
struct ShippedLibraries<'a> {
    view: &'a dyn View,
    env: &'a Env,
    /// The package directory in the view (`.../vllm/vllm_flash_attn`).
    package: String,
    record: Option<&'a Record>,
    /// Where the verdict's file reads are listed (shared with the sources).
    reads: &'a std::cell::RefCell<Vec<FileRead>>,
    read: std::cell::RefCell<LibraryReads>,
}

/// Each library read so far: its symbols (or why not) and what RECORD says of it.
type LibraryReads =
    std::collections::BTreeMap<String, (Result<Vec<DynamicSymbol>, String>, Option<Check>)>;

impl ShippedLibraries<'_> {
    fn load(&self, path: &str) -> (Result<Vec<DynamicSymbol>, String>, Option<Check>) {
        let in_env = match self.view.origin(path) {
            Some(origin) if self.env.root.is_empty() => origin,
            _ => self.env.in_env(path),
        };
        // A library RECORD names and the archive describes is served from the library cache
        // when one with the same RECORD line and zip entry was read and verified before (the
        // trust model: `pin::shipped::library_cache`).
        let archived = self
            .record
            .and_then(|r| r.entries.get(&in_env))
            .zip(self.view.archive_entry(path))
            .and_then(|(declared, entry)| library_cache::key(declared, &entry));
        // An installed file is served by its stamp and ELF layout: the entry names the very
        // bytes it was read from, so RECORD is checked against its digest whatever it says.
        let installed = match archived {
            Some(_) => None,
            None => self
                .view
                .local_file(path)
                .and_then(|file| library_cache::installed(&file)),
        };
        let cache_key = archived.or(installed.as_ref().map(|i| i.key));
        // One reader per library per run: a second worker wanting it waits, then reuses it.
        let _flight = cache_key.as_ref().map(library_cache::flight);
        if let Some(library) = cache_key.as_ref().and_then(library_cache::get) {
            let check = self
                .record
                .map(|r| r.check_digest(&in_env, &library.sha256, library.size));
            if installed.is_some() || check == Some(Check::Matches) {
                return (Ok(library.symbols), check);
            }
        }
        let mut opened = true;
        let mut stream =
            |consume: &mut dyn FnMut(&mut dyn std::io::Read) -> Result<(), ElfError>| {
                let mut outcome = Err(ElfError::Io("not streamed".into()));
                match self.view.read_stream(path, &mut |r| outcome = consume(r)) {
                    Ok(true) => outcome,
                    Ok(false) => {
                        opened = false;
                        Err(ElfError::Io("does not exist".into()))
                    }
                    Err(e) => Err(ElfError::Io(e.to_string())),
                }
            };
        // An image read the library once, from its layer, while it was merged.
        let library = match self.view.library_symbols(path) {
            Some(read) => read,
            None => elf::dynamic_symbols(&mut stream),
        };
        if !opened {
            return (Err(format!("{path} does not exist")), None);
        }
        library_cache::count_read();
        let check = match &library {
            Ok(lib) => self
                .record
                .map(|r| r.check_digest(&in_env, &lib.sha256, lib.size)),
            Err(_) => None,
        };
        // Only a library streamed whole is remembered: from an archive, one whose digest
        // matches RECORD; installed, one whose file did not change around the read.
        let keep = match &installed {
            Some(installed) => installed.keepable(),
            None => check == Some(Check::Matches),
        };
        if let (Some(key), Ok(lib), true) = (cache_key, &library, keep) {
            library_cache::put(key, lib);
        }
        let symbols = library
            .map(|l| l.symbols)
            .map_err(|e| format!("dynamic symbols not read: {e}"));
        (symbols, check)
    }
}

impl crate::rules::signature::symbols::Libraries for ShippedLibraries<'_> {
    fn libraries(&self, pattern: &str) -> Vec<(String, Result<Vec<DynamicSymbol>, String>)> {
        let names = match self.view.children(&self.package) {
            Ok(names) => names,
            Err(e) => {
                return vec![(
                    self.package.clone(),
                    Err(format!("the package directory could not be listed: {e}")),
                )];
            }
        };
        let mut out = Vec::new();
        for name in names
            .iter()
            .filter(|n| crate::rules::signature::symbols::name_matches(pattern, n))
        {
            let path = format!("{}/{name}", self.package);
            let (symbols, check) = {
                let mut read = self.read.borrow_mut();
                read.entry(path.clone())
                    .or_insert_with(|| self.load(&path))
                    .clone()
            };
            if symbols.is_ok() {
                self.reads.borrow_mut().push(FileRead {
                    path: path.clone(),
                    check,
                });
            }
            out.push((path, symbols));
        }
        out
    }
}
