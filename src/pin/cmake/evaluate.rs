//! The evaluation of a tree: every configuration CMake could take (one per combination of the
//! input-dependent decisions it reaches, for the default cache and for each preset), what each
//! fetches, and the declarations no configuration reaches.

use super::fetches::Fetch;
use super::interp::{Decision, Machine, Run, Seed, State, Stop};
use super::value::Input;
use super::{CmakeError, Command, Declaration};
use crate::view::View;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// A decision a configuration took.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Assumption {
    /// `file:line: if(...)` as written.
    pub condition: String,
    pub outcome: bool,
    pub inputs: Vec<Input>,
}

/// One configuration CMake could take.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Configuration {
    /// The default configuration: no `-D`, empty environment, no preset.
    pub default: bool,
    /// The preset whose `cacheVariables` seeded the cache.
    pub preset: Option<String>,
    /// Decisions that depended on an input, in order, with the branch taken.
    pub assumptions: Vec<Assumption>,
    pub fetches: Vec<Fetch>,
    /// CMake stops with this error in this configuration (what was fetched before stays).
    pub failed: Option<String>,
    /// Files CMake reads here that pinprobe cannot (outside the tree, a path from an input).
    pub unread: Vec<String>,
}

/// Everything the evaluation found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Evaluation {
    pub configurations: Vec<Configuration>,
    /// Declarations in the tree's CMake files that no configuration reaches.
    pub unreached: Vec<Declaration>,
    /// Why the evaluation is incomplete (over budget, a construct not evaluated); when set,
    /// the configurations are not all CMake could take.
    pub undecided: Option<String>,
}

/// Budgets.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// CMake commands run, over all configurations.
    pub steps: usize,
    /// Configurations.
    pub configurations: usize,
    /// Fork on every decision a run can fork on, relevant to what is fetched or not (the
    /// reference the joins are tested against; slow on real trees).
    pub fork_all: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            steps: 2_000_000,
            configurations: 256,
            fork_all: false,
        }
    }
}

/// Passes over the setups, each started over when a run finds a joined decision relevant; the
/// last one keeps the joins it still has (a join is sound, only less precise).
const MAX_PASSES: usize = 32;

/// Evaluate the view's CMake code with the default limits.
pub fn evaluate(view: &dyn View) -> Result<Evaluation, CmakeError> {
    evaluate_with(view, Limits::default())
}

/// Evaluate the view's CMake code.
///
/// A syntax error in a file CMake reads is an error (CMake stops there too); a file that is not
/// valid UTF-8 or over the size cap as well.
pub fn evaluate_with(view: &dyn View, limits: Limits) -> Result<Evaluation, CmakeError> {
    // Sharing runs with another revision's evaluation (`pinprobe diff`): the machine reads
    // through a journal while this thread records one.
    let journal = super::interp::share::journal(view);
    let mut m = Machine::new(
        journal.as_ref().map_or(view, |j| j as &dyn View),
        limits.steps,
    );
    m.fork_all = limits.fork_all;
    // The tree listed once (a walk of a real tree is a tenth of the evaluation): the names,
    // the build scripts, globs and `EXISTS`, and the declarations no run reached.
    let files = Rc::new(view.files_under("")?);
    m.set_files(files.clone());
    m.var_names = variable_names(view, &files)?;
    super::interp::share::attach(&mut m, journal.as_ref());
    let mut setups: Vec<(Option<String>, CacheSeed)> = vec![(None, Vec::new())];
    let (preset_list, presets_unread) = presets(view)?;
    setups.extend(preset_list.into_iter().map(|(n, c)| (Some(n), c)));
    let scripted = build_script_definitions(view, &files)?;
    if !scripted.is_empty() {
        setups.push((Some("build scripts".to_string()), scripted));
    }
    let mut out;
    let mut reached: BTreeSet<(String, u32)> = BTreeSet::new();
    let has_root = view.read("CMakeLists.txt")?.is_some();
    // Decisions are joined unless found relevant: a run whose fetches (or forks) depend on a
    // joined decision makes it relevant, and the evaluation starts over forking on it.
    let mut pass = 0;
    let mut memo: HashMap<(usize, Vec<bool>), Done> = HashMap::new();
    'passes: loop {
        pass += 1;
        out = Evaluation::default();
        reached.clear();
        let known = m.relevant.len();
        'setups: for (setup, (preset, cache)) in setups.iter().enumerate() {
            if !has_root {
                break;
            }
            let mut queue: Vec<Vec<bool>> = vec![Vec::new()];
            while let Some(choices) = queue.pop() {
                if out.configurations.len() >= limits.configurations {
                    out.undecided = Some(format!(
                        "more than {} configurations (combinations of conditions on inputs)",
                        limits.configurations
                    ));
                    break 'setups;
                }
                // A run is a function of its setup, its choices and the answers it got on
                // which decisions are relevant: one whose answers still hold is not run again
                // (a pass restarts when a later run finds a decision relevant).
                let key = (setup, choices.clone());
                let kept = memo.get(&key).filter(|d| {
                    d.asked
                        .iter()
                        .all(|(what, was)| m.relevant.contains(what) == *was)
                });
                let mut run = match kept {
                    Some(done) => done.clone(),
                    None => {
                        let mut run = Run::new(&mut m, choices.clone(), cache);
                        let result = run.top();
                        let done = Done::of(run, result)?;
                        if done.stopped.is_none() {
                            memo.insert(key, done.clone());
                        }
                        done
                    }
                };
                let failed = run.failed.clone();
                let stopped = run.stopped.clone();
                reached.extend(run.st.reached.iter().cloned());
                m.relevant.extend(run.st.fetches.iter().flat_map(joins_of));
                if m.relevant.len() > known && pass < MAX_PASSES {
                    continue 'passes;
                }
                // Each decision past the ones chosen opens one more configuration to run: more
                // than the budget is undecided now (queueing them all would take time and memory
                // quadratic in the number of decisions).
                let opened = run.trace.len().saturating_sub(choices.len());
                // After this configuration: on with this setup, on with the next one (this run
                // stopped where pinprobe cannot follow), or stop (over a budget).
                let mut then = After::Continue;
                if let Some(reason) = stopped {
                    out.undecided.get_or_insert(reason);
                    then = After::NextSetup;
                } else if out.configurations.len() + queue.len() + opened >= limits.configurations {
                    out.undecided = Some(format!(
                        "more than {} configurations (combinations of conditions on inputs)",
                        limits.configurations
                    ));
                    then = After::Stop;
                } else {
                    for k in choices.len()..run.trace.len() {
                        let mut next: Vec<bool> =
                            run.trace.iter().take(k).map(|d| d.outcome).collect();
                        next.push(!run.trace.get(k).is_some_and(|d| d.outcome));
                        queue.push(next);
                    }
                }
                // A patch the configuration wrote is not the tree's file the scan reads (listing
                // patches reads the view: only where the run wrote anything).
                for f in run.st.fetches.iter().filter(|_| run.st.wrote_anything()) {
                    if let Some(p) = f.patches(view)?.into_iter().find(|p| run.st.wrote(p)) {
                        out.undecided = Some(format!(
                            "{}:{}: {} applies the patch {p}, which the configuration wrote",
                            f.file, f.line, f.name
                        ));
                        then = After::Stop;
                        break;
                    }
                }
                let default = preset.is_none()
                    && !run.no_default
                    && run
                        .trace
                        .iter()
                        .all(|d| d.outcome == d.computed && d.has_default);
                out.configurations.push(Configuration {
                    default,
                    preset: preset.clone(),
                    assumptions: run
                        .trace
                        .iter()
                        .map(|d| Assumption {
                            condition: d.what.clone(),
                            outcome: d.outcome,
                            inputs: d.inputs.iter().cloned().collect(),
                        })
                        .collect(),
                    fetches: std::mem::take(Rc::make_mut(&mut run.st.fetches)),
                    failed,
                    unread: run.st.unread.iter().cloned().collect(),
                });
                match then {
                    After::Continue => {}
                    After::NextSetup => continue 'setups,
                    After::Stop => break 'setups,
                }
            }
        }
        break 'passes;
    }
    out.unreached = unreached(view, &files, &reached)?;
    if let Some(why) = presets_unread {
        out.undecided.get_or_insert(why);
    }
    Ok(out)
}

/// What one run found: its state at the end, the decisions it took, how it ended, and the
/// relevance answers it was given ([`Run::asked`]).
#[derive(Clone)]
struct Done {
    st: State,
    trace: Vec<Decision>,
    no_default: bool,
    asked: Vec<(String, bool)>,
    /// CMake stops with this error.
    failed: Option<String>,
    /// pinprobe cannot follow past here.
    stopped: Option<String>,
}

impl Done {
    /// The end of a run. A syntax error, an unreadable or refused file is the evaluation's.
    fn of(run: Run<'_, '_>, result: Result<(), Stop>) -> Result<Done, CmakeError> {
        // Where the run stopped because pinprobe cannot follow it, what it fetched up to
        // there is still fetched (CMake configures in order): kept as a configuration of
        // its own, the evaluation undecided.
        let mut stopped: Option<String> = None;
        let failed = match result {
            Ok(()) => run.st.errors.first().cloned(),
            Err(Stop::Fatal(msg) | Stop::Error(msg)) => Some(msg),
            Err(Stop::Undecided(reason)) => {
                stopped = Some(reason);
                None
            }
            Err(Stop::NeedsFork | Stop::Empties(_) | Stop::CallFork(..)) => {
                stopped = Some("a condition pinprobe cannot follow".into());
                None
            }
            Err(Stop::Syntax {
                file,
                line,
                message,
            }) => {
                return Err(CmakeError::Syntax {
                    file,
                    line,
                    message,
                });
            }
            Err(Stop::Io(e)) => return Err(e.into()),
            Err(Stop::Input(e)) => return Err(e),
        };
        Ok(Done {
            st: run.st,
            trace: run.trace,
            no_default: run.no_default,
            asked: run.asked,
            failed,
            stopped,
        })
    }
}

/// The joined decisions a fetch depends on (its values, or whether it happens at all).
fn joins_of(f: &Fetch) -> Vec<String> {
    let values = [&f.repository, &f.tag, &f.url, &f.local_source];
    f.name_inputs
        .iter()
        .chain(&f.bypass)
        .chain(values.into_iter().flatten().flat_map(|v| &v.inputs))
        .chain(&f.only_if)
        .filter_map(|i| match i {
            Input::Join(w) => Some(w.clone()),
            _ => None,
        })
        .collect()
}

/// What the driver does after a configuration.
enum After {
    Continue,
    NextSetup,
    Stop,
}

/// Whether a path is a CMake file: `CMakeLists.txt` or `*.cmake`, at any depth.
pub(super) fn is_cmake_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base == "CMakeLists.txt" || base.to_ascii_lowercase().ends_with(".cmake")
}

/// CPM's own script defines functions that declare with variable names; it is the command,
/// not a pin.
fn is_cpm_script(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    base == "cpm.cmake" || base == "get_cpm.cmake"
}

const DECLARING: &[&str] = &[
    "fetchcontent_declare",
    "fetchcontent_populate",
    "externalproject_add",
    "cpmaddpackage",
];

/// Every declaring call in the tree's CMake files that no configuration reached, with what its
/// own file's `set()`s give for its arguments. A file that cannot be parsed still reports each
/// declaring command name found in its text, with nothing resolved.
fn unreached(
    view: &dyn View,
    files: &[String],
    reached: &BTreeSet<(String, u32)>,
) -> Result<Vec<Declaration>, CmakeError> {
    let mut out = Vec::new();
    for file in files {
        if !is_cmake_file(file) || is_cpm_script(file) {
            continue;
        }
        let Some(bytes) = view.read(file)? else {
            continue;
        };
        let lower = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        if !DECLARING.iter().any(|d| lower.contains(d)) {
            continue;
        }
        match super::tokenize_file(file, &bytes) {
            Ok(invocations) => {
                out.extend(
                    super::unreached::declarations(file, &invocations)
                        .into_iter()
                        .filter(|d| !reached.contains(&(d.file.clone(), d.line))),
                );
            }
            // Over the size cap or not UTF-8: bad input, as in a file CMake reads.
            Err(e @ (CmakeError::TooLarge { .. } | CmakeError::NotUtf8 { .. })) => return Err(e),
            Err(_) => {
                for (no, text) in lower.lines().enumerate() {
                    for d in DECLARING {
                        if text.contains(d) {
                            out.push(Declaration {
                                command: match *d {
                                    "fetchcontent_populate" => Command::FetchContentPopulate,
                                    "externalproject_add" => Command::ExternalProjectAdd,
                                    "cpmaddpackage" => Command::CpmAddPackage,
                                    _ => Command::FetchContentDeclare,
                                },
                                name: String::new(),
                                file: file.clone(),
                                line: u32::try_from(no + 1).unwrap_or(u32::MAX),
                                git_repository: None,
                                git_tag: None,
                                url: None,
                                source_dir: None,
                                patches: Vec::new(),
                                overrides: Vec::new(),
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Names used as variables in the tree's CMake files: `${X}` references and the first argument
/// of `set`, `option`, `unset`, `list`.
fn variable_names(
    view: &dyn View,
    files: &[String],
) -> Result<std::collections::HashSet<String>, CmakeError> {
    let mut names = std::collections::HashSet::new();
    for file in files {
        if !is_cmake_file(file) {
            continue;
        }
        let Some(bytes) = view.read(file)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut rest: &str = &text;
        while let Some(at) = rest.find("${") {
            let after = rest.get(at + 2..).unwrap_or("");
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if let Some(n) = after.get(..end).filter(|n| !n.is_empty()) {
                names.insert(n.to_string());
            }
            rest = after;
        }
        for line in text.lines() {
            let l = line.trim_start();
            let lower = l.to_ascii_lowercase();
            // Bare names tested by a condition (`if(USE_X)`, `if(DEFINED X)`,
            // `X STREQUAL y`): every identifier that is not a keyword, a constant, or the right
            // operand of a binary operator (a literal there, as in `X STREQUAL Release`).
            if ["if(", "if (", "elseif(", "elseif (", "while("]
                .iter()
                .any(|p| lower.starts_with(p))
            {
                let body = l.split_once('(').map_or("", |(_, b)| b);
                let mut after_binary = false;
                for word in body
                    .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
                    .filter(|w| !w.is_empty())
                {
                    let is_name = word
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if is_name
                        && !after_binary
                        && !super::cond::is_keyword(word)
                        && super::cond::constant(word).is_none()
                    {
                        names.insert(word.to_string());
                    }
                    after_binary = super::cond::BINARY.contains(&word);
                }
            }
            for cmd in ["set(", "option(", "unset("] {
                if let Some(r) = lower.strip_prefix(cmd) {
                    let start = l.len() - r.len();
                    let arg = l
                        .get(start..)
                        .unwrap_or("")
                        .trim_start()
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("");
                    if !arg.is_empty() {
                        names.insert(arg.to_string());
                    }
                }
            }
        }
    }
    Ok(names)
}

/// `-D<NAME>=<value>` written in the tree's build scripts (`setup.py`, `*.sh`, `Dockerfile*`),
/// as one more setup: literal values as written, computed ones (`{}`, `$X`, conflicting) as
/// [`Seed::Scripted`].
fn build_script_definitions(view: &dyn View, files: &[String]) -> Result<CacheSeed, CmakeError> {
    let re = regex::Regex::new(r#"-D([A-Za-z_][A-Za-z0-9_]*)(?::[A-Z]+)?=([^\s"',\])]*)"#)
        .map_err(|e| CmakeError::Syntax {
            file: String::new(),
            line: 0,
            message: e.to_string(),
        })?;
    let mut defs: CacheSeed = Vec::new();
    for file in files {
        let base = file.rsplit('/').next().unwrap_or(file);
        let is_script =
            base == "setup.py" || base.ends_with(".sh") || base.starts_with("Dockerfile");
        if !is_script || file.split('/').count() > 3 {
            continue;
        }
        let Some(bytes) = view.read(file)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for c in re.captures_iter(&text) {
            let (Some(name), Some(value)) = (c.get(1), c.get(2)) else {
                continue;
            };
            let name = name.as_str().to_string();
            let v = value.as_str();
            let computed = v.is_empty() || v.contains(['{', '$', '%']);
            let v = if computed {
                Seed::Scripted
            } else {
                Seed::Literal(v.to_string())
            };
            match defs.iter_mut().find(|(n, _)| *n == name) {
                Some((_, old)) if *old != v => *old = Seed::Scripted,
                Some(_) => {}
                None => defs.push((name, v)),
            }
        }
    }
    Ok(defs)
}

/// Cache entries a setup starts with: (variable, value).
type CacheSeed = Vec<(String, Seed)>;

/// `configurePresets[].cacheVariables` of `CMakePresets.json` and `CMakeUserPresets.json`
/// (with `inherits`), as (preset, [(variable, value)]).
/// Preset files read at most (a chain of `include`s, each file once).
const MAX_PRESET_FILES: usize = 64;

/// The configure presets of `CMakePresets.json` and `CMakeUserPresets.json` and of every file
/// their `include` lists name (relative to the including file), with an undecided reason when an
/// included file cannot be read (outside the tree, missing, over the cap).
/// Each preset's name and cache seed, and why an included preset file could not be read.
type Presets = (Vec<(String, CacheSeed)>, Option<String>);

fn presets(view: &dyn View) -> Result<Presets, CmakeError> {
    let mut all: Vec<(String, Vec<String>, CacheSeed)> = Vec::new();
    let mut unread: Option<String> = None;
    let mut queue: Vec<(String, bool)> = vec![
        ("CMakeUserPresets.json".to_string(), false),
        ("CMakePresets.json".to_string(), false),
    ];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    while let Some((file, included)) = queue.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        if seen.len() > MAX_PRESET_FILES {
            unread.get_or_insert(format!(
                "more than {MAX_PRESET_FILES} preset files through `include`"
            ));
            break;
        }
        let Some(bytes) = view.read(&file)? else {
            if included {
                unread.get_or_insert(format!(
                    "a preset file includes {file}, which is not in the tree"
                ));
            }
            continue;
        };
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let dir = file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        for inc in json
            .get("include")
            .and_then(|i| i.as_array())
            .into_iter()
            .flatten()
            .filter_map(|i| i.as_str())
        {
            let joined = if inc.starts_with('/') {
                None
            } else if dir.is_empty() {
                super::paths::normalize(inc)
            } else {
                super::paths::normalize(&format!("{dir}/{inc}"))
            };
            match joined {
                Some(p) => queue.push((p, true)),
                None => {
                    unread.get_or_insert(format!(
                        "{file} includes the preset file {inc}, outside the tree"
                    ));
                }
            }
        }
        let Some(list) = json.get("configurePresets").and_then(|p| p.as_array()) else {
            continue;
        };
        for p in list {
            let Some(name) = p.get("name").and_then(|n| n.as_str()) else {
                continue;
            };
            let inherits = match p.get("inherits") {
                Some(serde_json::Value::String(s)) => vec![s.clone()],
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            let mut vars = Vec::new();
            if let Some(obj) = p.get("cacheVariables").and_then(|c| c.as_object()) {
                for (k, v) in obj {
                    let value = match v {
                        serde_json::Value::String(s) => Some(s.clone()),
                        serde_json::Value::Bool(b) => {
                            Some(if *b { "TRUE" } else { "FALSE" }.into())
                        }
                        serde_json::Value::Object(o) => o.get("value").and_then(|v| match v {
                            serde_json::Value::String(s) => Some(s.clone()),
                            serde_json::Value::Bool(b) => {
                                Some(if *b { "TRUE" } else { "FALSE" }.into())
                            }
                            _ => None,
                        }),
                        _ => None,
                    };
                    if let Some(value) = value {
                        // `${sourceDir}` is the source tree (other macros stay as written).
                        let value = value.replace("${sourceDir}", super::paths::SOURCE_ROOT);
                        vars.push((k.clone(), Seed::Literal(value)));
                    }
                }
            }
            all.push((name.to_string(), inherits, vars));
        }
    }
    let find = |n: &str| all.iter().find(|(name, _, _)| name == n);
    let mut out = Vec::new();
    for (name, _, _) in &all {
        // Own variables first, then inherited ones not already set (depth-bounded).
        let mut vars: CacheSeed = Vec::new();
        let mut stack = vec![(name.clone(), 0usize)];
        let mut seen = BTreeSet::new();
        while let Some((n, depth)) = stack.pop() {
            if depth > 16 || !seen.insert(n.clone()) {
                continue;
            }
            if let Some((_, inherits, own)) = find(&n) {
                for (k, v) in own {
                    if !vars.iter().any(|(k2, _)| k2 == k) {
                        vars.push((k.clone(), v.clone()));
                    }
                }
                for i in inherits.iter().rev() {
                    stack.push((i.clone(), depth + 1));
                }
            }
        }
        out.push((name.clone(), vars));
    }
    Ok((out, unread))
}
