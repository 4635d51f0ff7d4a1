//! The evaluator: runs a tree's CMake code the way `cmake -S` configures it, from the top-level
//! `CMakeLists.txt`, following `include()` and `add_subdirectory()` in order, with directory,
//! function and macro scopes, the cache, conditions, loops and the commands that can reach a
//! pin, and records every fetch (`FetchContent_*`, `ExternalProject_Add`, `CPMAddPackage`).
//!
//! Unknown inputs are never guessed. Every value carries the inputs it depends on
//! ([`Input`]); a condition that depends on one is a *decision*, and the driver
//! ([`super::evaluate`]) runs the program once per combination of decisions it reaches (each run
//! replays a prefix of decisions and takes the default outcome after it), so every
//! configuration CMake could take is one run, and the run whose decisions all took the default
//! configuration's outcome is the default configuration.

use super::cond::{self, Truth};
use super::lexer::{Invocation, Quoting, Token};
use super::shared::Shared;
use super::value::{
    Arg, ExpandError, Input, Lookup, Outcome, Taint, Val, expand, list_items, split_list,
};
use super::writes::{self, Writes};
use super::{Command, Fetch, Value};
use crate::view::{TargetError, View};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// `CMAKE_SOURCE_DIR` as the evaluator sees it: paths below it are view paths.
pub(super) const SOURCE_ROOT: &str = "/pinprobe-source";
/// A cache entry a setup starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seed {
    /// A value as written (a preset's `cacheVariables`, a literal `-D` in a build script).
    Literal(String),
    /// A `-D` value a build script computes (`{}`, `$X`, or written twice differently):
    /// unknown, and truthy as a path would be.
    Scripted,
}

/// The text of a [`Seed::Scripted`] value (truthy, like a path).
const SCRIPTED_TEXT: &str = "<set by a build script>";
/// `CMAKE_BINARY_DIR`: outside the view; nothing under it can be read.
pub(super) const BINARY_ROOT: &str = "/pinprobe-build";
/// Nesting of `include()`, `add_subdirectory()` and calls (CMake's default limit is 1000).
const MAX_DEPTH: usize = 200;
/// Decisions a run forks on before it joins conditions instead (at most 2^3 configurations
/// per setup from forks alone).
const FORK_LIMIT: usize = 3;
/// Unquoted references to unknown values in one command joined (each doubles the runs of the
/// command); past it each is a decision.
const MAX_EMPTY_JOINS: usize = 3;
/// Decisions guarding `return()` in one function call run both ways; past it the call is
/// summarised.
const MAX_CALL_FORKS: usize = 3;
/// Nesting of blocks (`if`, `foreach`, ...) in one file.
const MAX_NESTING: usize = 1000;

/// A parsed file: blocks matched.
#[derive(Debug)]
pub(super) enum Node {
    Cmd(Invocation),
    If(Vec<(Option<Invocation>, Vec<Node>)>),
    Foreach(Invocation, Vec<Node>),
    While(Invocation, Vec<Node>),
    Function(Invocation, Rc<Vec<Node>>, bool),
    Block(Invocation, Vec<Node>),
}

/// Match `if`/`endif` and the other block commands. Errors: (line, message).
pub(super) fn parse(invocations: Vec<Invocation>) -> Result<Vec<Node>, (u32, String)> {
    struct Open {
        kind: String,
        head: Invocation,
        branches: Vec<(Option<Invocation>, Vec<Node>)>,
    }
    let mut root: Vec<Node> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    fn current<'a>(root: &'a mut Vec<Node>, stack: &'a mut [Open]) -> &'a mut Vec<Node> {
        match stack.last_mut().and_then(|o| o.branches.last_mut()) {
            Some((_, body)) => body,
            None => root,
        }
    }
    for inv in invocations {
        let name = inv.name.to_ascii_lowercase();
        let line = inv.line;
        match name.as_str() {
            "if" | "foreach" | "while" | "function" | "macro" | "block" => {
                if stack.len() >= MAX_NESTING {
                    return Err((line, format!("blocks nested deeper than {MAX_NESTING}")));
                }
                let cond = (name == "if").then(|| inv.clone());
                stack.push(Open {
                    kind: name,
                    head: inv,
                    branches: vec![(cond, Vec::new())],
                });
            }
            "elseif" | "else" => match stack.last_mut() {
                Some(o) if o.kind == "if" => {
                    o.branches
                        .push(((name == "elseif").then_some(inv), Vec::new()));
                }
                _ => return Err((line, format!("{name}() outside if()"))),
            },
            "endif" | "endforeach" | "endwhile" | "endfunction" | "endmacro" | "endblock" => {
                let want = name.trim_start_matches("end");
                let Some(mut open) = stack.pop().filter(|o| o.kind == want) else {
                    return Err((line, format!("{name}() without a matching {want}()")));
                };
                let node = if want == "if" {
                    Node::If(open.branches)
                } else {
                    let body = open.branches.pop().map(|b| b.1).unwrap_or_default();
                    match want {
                        "foreach" => Node::Foreach(open.head, body),
                        "while" => Node::While(open.head, body),
                        "function" | "macro" => {
                            Node::Function(open.head, Rc::new(body), want == "macro")
                        }
                        _ => Node::Block(open.head, body),
                    }
                };
                current(&mut root, &mut stack).push(node);
            }
            _ => current(&mut root, &mut stack).push(Node::Cmd(inv)),
        }
    }
    if let Some(open) = stack.last() {
        return Err((
            open.head.line,
            format!("{}() without end{}()", open.head.name, open.kind),
        ));
    }
    Ok(root)
}

/// Why a run stopped early.
#[derive(Debug)]
pub(super) enum Stop {
    /// CMake stops here (`message(FATAL_ERROR)`, a malformed condition).
    Fatal(String),
    /// A command fails: CMake reports it and goes on with the next command (the
    /// configuration fails in the end).
    Error(String),
    /// pinprobe cannot follow (over budget, an unsupported construct): the evaluation is unknown.
    Undecided(String),
    /// Inside a function call: a condition on an input that would have to fork (it guards
    /// `return()`/`break()`/`continue()`); the call is summarised instead.
    NeedsFork,
    /// A syntax error in a file CMake reads.
    Syntax {
        file: String,
        line: u32,
        message: String,
    },
    Io(TargetError),
    /// A file CMake reads that pinprobe refuses (over the size cap, not UTF-8).
    Input(super::CmakeError),
    /// Probing a command's arguments ([`EmptyArgs::Probe`]): the unquoted references to
    /// unknown values that are empty by default, each `(what, inputs)`. Never leaves
    /// [`Run::joining_empties`].
    Empties(Vec<(String, Taint)>),
    /// Inside a function call: a decision that guards `return()`/`break()`/`continue()`,
    /// `(what, condition)`, past the outcomes the call was given ([`Run::call_paths`]).
    CallFork(String, Truth),
}

/// How the next expansion of a command's arguments treats an unquoted reference to an unknown
/// value that is empty by default (CMake drops the argument when it is empty).
#[derive(Debug, Clone, Default)]
pub(super) enum EmptyArgs {
    /// Each one is a decision ([`Run::decide`]).
    #[default]
    Decide,
    /// Find them without deciding anything: [`Stop::Empties`] lists them.
    Probe,
    /// Each one, in order, dropped (`true`) or kept (`false`).
    Forced(Vec<bool>),
}

impl From<TargetError> for Stop {
    fn from(e: TargetError) -> Self {
        Stop::Io(e)
    }
}

enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

/// A condition whose value depends on an input, and the branch this run took.
#[derive(Debug, Clone)]
pub(super) struct Decision {
    pub outcome: bool,
    /// The value with every input at its default.
    pub computed: bool,
    /// Whether every input it depends on has a default (no compiler, no `find_package`).
    pub has_default: bool,
    pub inputs: Taint,
    /// `file:line: if(...)` as written.
    pub what: String,
}

/// What is shared by every run: parsed files, budgets.
pub(super) struct Machine<'v> {
    pub view: &'v dyn View,
    files: HashMap<String, Rc<Vec<Node>>>,
    /// Names used as variables anywhere in the tree (`${X}`, `set(X`, `DEFINED X`...).
    pub var_names: HashSet<String>,
    pub steps: usize,
    pub max_steps: usize,
    globs: HashMap<(String, bool), Vec<String>>,
    /// Every file listed once, for globs and `EXISTS`.
    all_files: Option<Rc<Vec<String>>>,
    /// Decisions (`file:line: ...` as [`Decision::what`]) found to change what is fetched:
    /// a run forks on them (within [`FORK_LIMIT`]) instead of joining them.
    pub relevant: HashSet<String>,
    /// Fork on every decision a run can fork on (the reference the joins are tested against).
    pub fork_all: bool,
}

impl<'v> Machine<'v> {
    pub fn new(view: &'v dyn View, max_steps: usize) -> Self {
        Machine {
            view,
            files: HashMap::new(),
            var_names: HashSet::new(),
            steps: 0,
            max_steps,
            globs: HashMap::new(),
            all_files: None,
            relevant: HashSet::new(),
            fork_all: false,
        }
    }

    fn all_files(&mut self) -> Result<Rc<Vec<String>>, TargetError> {
        if let Some(f) = &self.all_files {
            return Ok(f.clone());
        }
        let f = Rc::new(self.view.files_under("")?);
        self.all_files = Some(f.clone());
        Ok(f)
    }

    /// A file parsed, `None` when it does not exist.
    fn load(&mut self, path: &str) -> Result<Option<Rc<Vec<Node>>>, Stop> {
        if let Some(n) = self.files.get(path) {
            return Ok(Some(n.clone()));
        }
        let Some(bytes) = self.view.read(path)? else {
            return Ok(None);
        };
        let invocations = super::tokenize_file(path, &bytes).map_err(|e| match e {
            super::CmakeError::Syntax {
                file,
                line,
                message,
            } => Stop::Syntax {
                file,
                line,
                message,
            },
            // A file over the size cap or not UTF-8 is bad input, as a syntax error is.
            other => Stop::Input(other),
        })?;
        let nodes = parse(invocations).map_err(|(line, message)| Stop::Syntax {
            file: path.to_string(),
            line,
            message,
        })?;
        let nodes = Rc::new(nodes);
        self.files.insert(path.to_string(), nodes.clone());
        Ok(Some(nodes))
    }
}

#[derive(Clone)]
struct Def {
    /// As the definition spells it (`CMAKE_CURRENT_FUNCTION`).
    name: String,
    params: Vec<String>,
    body: Rc<Vec<Node>>,
    is_macro: bool,
}

impl PartialEq for Def {
    fn eq(&self, other: &Def) -> bool {
        self.name == other.name
            && self.params == other.params
            && self.is_macro == other.is_macro
            && Rc::ptr_eq(&self.body, &other.body)
    }
}

#[derive(Clone, PartialEq)]
struct Dirs {
    /// View-relative directory of the `CMakeLists.txt` being processed.
    source_dir: String,
    /// View-relative file being read.
    list_file: String,
}

/// What `FetchContent_Declare` stored for a name.
#[derive(Clone, PartialEq)]
struct Details {
    args: Vec<Arg>,
    file: String,
    line: u32,
}

/// Everything a run changes: what CMake's state would be.
#[derive(Clone, PartialEq)]
pub(super) struct State {
    scopes: Vec<Shared<Val>>,
    /// Cache entries the program (or a preset) created; `None`: removed by `unset(CACHE)`.
    cache: Shared<Option<Val>>,
    env: Shared<Option<Val>>,
    commands: Shared<Def>,
    macro_frames: Vec<Option<HashMap<String, Val>>>,
    dirs: Vec<Dirs>,
    declared: Shared<Details>,
    /// Declarations a joined condition's other side made instead, with the condition.
    declared_alt: HashMap<String, Vec<(Details, String)>>,
    populated: HashSet<String>,
    cpm_added: HashSet<String>,
    pub fetches: Vec<Fetch>,
    /// Declaring calls reached: (file, line).
    pub reached: BTreeSet<(String, u32)>,
    /// Files CMake would read that pinprobe cannot (outside the tree, a path from an input).
    pub unread: BTreeSet<String>,
    /// Errors CMake reports and goes on after.
    pub errors: Vec<String>,
    /// What the configuration wrote (or removed) in the tree so far.
    written: Writes,
    policy_version: (u64, u64),
    policies: HashMap<String, bool>,
    depth: usize,
    /// Names unset on the default path that a joined branch may have set, with why.
    maybe: HashMap<String, Taint>,
    /// Variable names set where part of the name was unknown: the written prefix and suffix
    /// (`CMAKE_${LANG}_FLAGS`: `CMAKE_`, `_FLAGS`), with why.
    wild: Vec<(String, String, Input)>,
    /// What a `return(PROPAGATE ...)` being unwound sets in the scope it returns to (`None`:
    /// unsets), as the returning scope held it.
    returning: Vec<(String, Option<Val>)>,
    /// Files an `include_guard(GLOBAL)` (`None`) or `include_guard(DIRECTORY)` (the directory)
    /// has guarded.
    guards: HashSet<(Option<String>, String)>,
    /// `cmake_policy(PUSH)`ed policy settings.
    policy_stack: Vec<((u64, u64), HashMap<String, bool>)>,
}

impl State {
    /// Whether the configuration wrote (or removed) the view path `rel`, or a directory it is
    /// in, so the tree's copy is not what CMake read.
    pub(super) fn wrote(&self, rel: &str) -> bool {
        self.written.covers(rel)
    }

    /// Whether the configuration wrote (or removed) anything in the tree.
    pub(super) fn wrote_anything(&self) -> bool {
        !self.written.is_empty()
    }
}

/// One run of the program under one sequence of decisions.
pub(super) struct Run<'m, 'v> {
    m: &'m mut Machine<'v>,
    choices: Vec<bool>,
    pub trace: Vec<Decision>,
    pub st: State,
    /// A condition without a default was joined (or a joined default branch failed): this
    /// run's values are not the default configuration's.
    pub no_default: bool,
    /// Function calls being run (decisions there join or summarise the call, never fork).
    summarizing: usize,
    /// Joins so far in this run (numbers them, see [`Outcome`]).
    joins: u32,
    /// How the next expansion of arguments treats empty unknown references.
    next_args: EmptyArgs,
    /// In the function call being run: the outcomes its decisions take, and how many it took
    /// ([`Run::call_paths`]).
    call_forced: (Vec<bool>, usize),
}

/// The input an undefined variable stands for.
fn input_for(name: &str) -> Input {
    if name.starts_with("CMAKE_") && name != "CMAKE_BUILD_TYPE" {
        Input::Opaque(name.to_string())
    } else {
        Input::Cache(name.to_string())
    }
}

fn abs(rel: &str) -> String {
    if rel.is_empty() {
        SOURCE_ROOT.to_string()
    } else {
        format!("{SOURCE_ROOT}/{rel}")
    }
}

/// An absolute path inside the source root as a view path (`..` resolved); `None` outside.
pub(super) fn view_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix(SOURCE_ROOT)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    super::paths::normalize(rest)
}

fn parent_dir(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

impl Lookup for Run<'_, '_> {
    fn var(&self, name: &str) -> Val {
        if let Some(Some(frame)) = self.st.macro_frames.last()
            && let Some(v) = frame.get(name)
        {
            return v.clone();
        }
        match self.defined_val(name) {
            (Some(v), _) => v,
            (None, taint) => Val {
                text: String::new(),
                taint,
                alts: Vec::new(),
            },
        }
    }

    fn env(&self, name: &str) -> Val {
        match self.st.env.get(name) {
            Some(Some(v)) => v.clone(),
            Some(None) => Val::default(),
            None => Val::with("", Input::Env(name.to_string())),
        }
    }

    fn cache(&self, name: &str) -> Val {
        match self.st.cache.get(name) {
            Some(Some(v)) => v.clone(),
            Some(None) => Val::default(),
            None => Val::with("", input_for(name)),
        }
    }
}

impl cond::Env for Run<'_, '_> {
    fn defined(&self, name: &str) -> (Option<Val>, Taint) {
        self.defined_val(name)
    }

    fn env_defined(&self, name: &str) -> (bool, Taint) {
        match self.st.env.get(name) {
            Some(v) => (v.is_some(), Taint::new()),
            None => (false, [Input::Env(name.to_string())].into_iter().collect()),
        }
    }

    fn cache_defined(&self, name: &str) -> (bool, Taint) {
        match self.st.cache.get(name) {
            Some(v) => (
                v.is_some(),
                v.iter().flat_map(|v| v.taint.iter().cloned()).collect(),
            ),
            None => (false, [input_for(name)].into_iter().collect()),
        }
    }

    fn is_variable_name(&self, name: &str) -> bool {
        self.m.var_names.contains(name)
    }

    fn is_command(&self, name: &str) -> bool {
        let l = name.to_ascii_lowercase();
        self.st.commands.contains_key(&l) || BUILTIN_COMMANDS.contains(&l.as_str())
    }

    fn exists(&self, path: &str, directory: bool) -> Option<bool> {
        let rel = view_path(path)?;
        // What the configuration wrote or removed may or may not be there; a directory with
        // a write below it is there if it was before.
        if self.st.written.covers(&rel) {
            return None;
        }
        let files = self.m.all_files.as_ref()?;
        let prefix = format!("{rel}/");
        let there = rel.is_empty()
            || files
                .iter()
                .any(|f| f.starts_with(&prefix) || (!directory && *f == rel));
        if !there && self.st.written.touches(&rel) {
            return None;
        }
        Some(there)
    }

    fn set_matches(&mut self, matched: Option<(&super::regex::Captures, &str)>, taint: &Taint) {
        for (name, v) in super::regex::match_vars(&|n| self.read_var(n), matched, taint) {
            self.put_var(&name, v);
        }
    }
}

/// Commands `if(COMMAND)` knows besides the program's functions (enough for feature tests).
const BUILTIN_COMMANDS: &[&str] = &[
    "set",
    "unset",
    "if",
    "list",
    "string",
    "file",
    "message",
    "include",
    "add_subdirectory",
    "function",
    "macro",
    "foreach",
    "while",
    "option",
    "project",
    "math",
    "return",
    "fetchcontent_declare",
    "fetchcontent_makeavailable",
    "fetchcontent_populate",
    "fetchcontent_getproperties",
    "externalproject_add",
    "cmake_parse_arguments",
    "cmake_minimum_required",
    "find_package",
    "execute_process",
    "get_filename_component",
];

/// Commands with no effect on variables or fetches.
const NO_EFFECT: &[&str] = &[
    "add_library",
    "add_executable",
    "add_custom_target",
    "add_custom_command",
    "add_dependencies",
    "add_compile_definitions",
    "add_compile_options",
    "add_definitions",
    "add_link_options",
    "add_test",
    "enable_testing",
    "enable_language",
    "include_directories",
    "link_directories",
    "link_libraries",
    "install",
    "set_target_properties",
    "set_source_files_properties",
    "set_directory_properties",
    "set_tests_properties",
    "target_compile_definitions",
    "target_compile_features",
    "target_compile_options",
    "target_include_directories",
    "target_link_directories",
    "target_link_libraries",
    "target_link_options",
    "target_precompile_headers",
    "target_sources",
    "mark_as_advanced",
    "source_group",
    "export",
    "set_property",
    "define_property",
    "remove_definitions",
    "fetchcontent_setpopulated",
    "cpmusepackagelock",
    "cpm_package",
];

impl<'m, 'v> Run<'m, 'v> {
    pub fn new(
        m: &'m mut Machine<'v>,
        choices: Vec<bool>,
        initial_cache: &[(String, Seed)],
    ) -> Self {
        let cache = initial_cache
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Seed::Literal(text) => Val::with(text.clone(), Input::Cache(k.clone())),
                    Seed::Scripted => Val::with(
                        SCRIPTED_TEXT,
                        Input::Opaque(format!("-D{k} from a build script")),
                    ),
                };
                (k.clone(), Some(v))
            })
            .collect();
        Run {
            m,
            choices,
            trace: Vec::new(),
            st: State {
                scopes: vec![Shared::default()],
                cache,
                env: Shared::default(),
                commands: Shared::default(),
                macro_frames: vec![None],
                dirs: vec![Dirs {
                    source_dir: String::new(),
                    list_file: "CMakeLists.txt".into(),
                }],
                declared: Shared::default(),
                declared_alt: HashMap::new(),
                populated: HashSet::new(),
                cpm_added: HashSet::new(),
                fetches: Vec::new(),
                reached: BTreeSet::new(),
                unread: BTreeSet::new(),
                errors: Vec::new(),
                written: Writes::default(),
                policy_version: (3, 0),
                policies: HashMap::new(),
                depth: 0,
                maybe: HashMap::new(),
                wild: Vec::new(),
                returning: Vec::new(),
                guards: HashSet::new(),
                policy_stack: Vec::new(),
            },
            no_default: false,
            summarizing: 0,
            joins: 0,
            next_args: EmptyArgs::Decide,
            call_forced: (Vec::new(), 0),
        }
    }

    /// The decisions found relevant so far (see [`Machine::relevant`]).
    pub fn relevant(&mut self) -> &mut HashSet<String> {
        &mut self.m.relevant
    }

    /// Run the top-level `CMakeLists.txt`.
    pub fn top(&mut self) -> Result<(), Stop> {
        self.m.all_files()?;
        let Some(nodes) = self.m.load("CMakeLists.txt")? else {
            return Err(Stop::Fatal("no top-level CMakeLists.txt".into()));
        };
        self.block(&nodes, false)?;
        Ok(())
    }

    fn scope_mut(&mut self) -> &mut Shared<Val> {
        if self.st.scopes.is_empty() {
            self.st.scopes.push(Shared::default());
        }
        let n = self.st.scopes.len() - 1;
        &mut self.st.scopes[n]
    }

    /// `include_guard([DIRECTORY|GLOBAL])`: the rest of the file is skipped where the guard was
    /// reached before (the default scope is the variable scope, as CMake's own variable).
    fn include_guard(&mut self, args: &[Arg]) -> Flow {
        let Some(dirs) = self.st.dirs.last() else {
            return Flow::Next;
        };
        let file = dirs.list_file.clone();
        let dir = dirs.source_dir.clone();
        match args.first().map(|a| a.text.as_str()) {
            Some("GLOBAL") => {
                if !self.st.guards.insert((None, file)) {
                    return Flow::Return;
                }
            }
            Some("DIRECTORY") => {
                let below = |d: &str| d.is_empty() || dir == d || dir.starts_with(&format!("{d}/"));
                if self
                    .st
                    .guards
                    .iter()
                    .any(|(d, f)| *f == file && d.as_deref().is_some_and(below))
                {
                    return Flow::Return;
                }
                self.st.guards.insert((Some(dir), file));
            }
            _ => {
                let name = format!("__pinprobe_include_guard_{file}");
                if self.st.scopes.last().is_some_and(|s| s.contains_key(&name)) {
                    return Flow::Return;
                }
                self.set_var(&name, Val::exact("1"));
            }
        }
        Flow::Next
    }

    /// Set what a `return(PROPAGATE ...)` carried in the scope it returned to.
    fn land_return(&mut self) {
        for (name, v) in std::mem::take(&mut self.st.returning) {
            self.put_var(&name, v);
        }
    }

    /// Set a variable of the current scope, or unset it (`None`).
    fn put_var(&mut self, name: &str, v: Option<Val>) {
        match v {
            Some(v) => self.set_var(name, v),
            None => {
                self.scope_mut().remove(name);
            }
        }
    }

    fn set_var(&mut self, name: &str, v: Val) {
        self.scope_mut().insert(name.to_string(), v);
    }

    fn defined_val(&self, name: &str) -> (Option<Val>, Taint) {
        let (v, mut t) = self.defined_val_plain(name);
        let wild: Taint = self
            .st
            .wild
            .iter()
            .filter(|(p, s, _)| {
                name.len() >= p.len() + s.len()
                    && name.starts_with(p.as_str())
                    && name.ends_with(s.as_str())
            })
            .map(|(_, _, i)| i.clone())
            .collect();
        if wild.is_empty() {
            return (v, t);
        }
        match v {
            Some(mut v) => {
                v.taint.extend(wild);
                (Some(v), t)
            }
            None => {
                t.extend(wild);
                (None, t)
            }
        }
    }

    fn defined_val_plain(&self, name: &str) -> (Option<Val>, Taint) {
        if let Some(v) = self.st.scopes.last().and_then(|s| s.get(name)) {
            return (Some(v.clone()), Taint::new());
        }
        // A joined condition's other side may have set it in the scope: whatever the cache (or
        // CMake) holds, the value is then that side's on some configurations.
        let maybe = self.st.maybe.get(name).cloned().unwrap_or_default();
        let shadowed = |mut v: Val| {
            v.taint.extend(maybe.iter().cloned());
            v
        };
        match self.st.cache.get(name) {
            Some(Some(v)) => return (Some(shadowed(v.clone())), Taint::new()),
            Some(None) => return (None, maybe),
            None => {}
        }
        if let Some(v) = self.builtin(name) {
            return (Some(shadowed(v)), Taint::new());
        }
        let mut taint = maybe;
        taint.insert(input_for(name));
        (None, taint)
    }

    fn builtin(&self, name: &str) -> Option<Val> {
        let dirs = self.st.dirs.last()?;
        Some(match name {
            "CMAKE_SOURCE_DIR" => Val::exact(SOURCE_ROOT),
            // Before any `project()`: CMake's implicit one, at the top.
            "PROJECT_SOURCE_DIR" => Val::exact(SOURCE_ROOT),
            "CMAKE_CURRENT_SOURCE_DIR" => Val::exact(abs(&dirs.source_dir)),
            "CMAKE_CURRENT_LIST_DIR" => Val::exact(abs(parent_dir(&dirs.list_file))),
            "CMAKE_CURRENT_LIST_FILE" => Val::exact(abs(&dirs.list_file)),
            "CMAKE_BINARY_DIR" | "PROJECT_BINARY_DIR" | "CMAKE_CURRENT_BINARY_DIR" => {
                Val::with(BINARY_ROOT, Input::Opaque("the build directory".into()))
            }
            _ => return None,
        })
    }

    fn step(&mut self) -> Result<(), Stop> {
        self.m.steps += 1;
        if self.m.steps > self.m.max_steps {
            return Err(Stop::Undecided(format!(
                "over the evaluation budget of {} CMake commands",
                self.m.max_steps
            )));
        }
        Ok(())
    }

    fn here(&self, line: u32) -> String {
        let file = self
            .st
            .dirs
            .last()
            .map(|d| d.list_file.as_str())
            .unwrap_or("");
        format!("{file}:{line}")
    }

    fn expand_args(&mut self, tokens: &[Token]) -> Result<Vec<Arg>, Stop> {
        // The mode is the first expansion's only (a called function's body has its own).
        let mode = std::mem::take(&mut self.next_args);
        let mut probed: Vec<(String, Taint)> = Vec::new();
        let mut forced = match &mode {
            EmptyArgs::Forced(outcomes) => outcomes.iter(),
            _ => [].iter(),
        };
        let mut out = Vec::new();
        let mut total = 0usize;
        for t in tokens {
            let mut args = expand(t, self).map_err(|ExpandError::TooLong| {
                Stop::Undecided(format!(
                    "{}: a value over {} bytes",
                    self.here(t.line),
                    super::value::MAX_VALUE
                ))
            })?;
            // An unquoted reference to an unknown value that is empty by default: CMake drops
            // the argument when it is empty, so whether it is is a decision.
            if let [only] = args.as_slice()
                && !only.quoted
                && only.text.is_empty()
                && !only.taint.is_empty()
            {
                let t_ = Truth {
                    value: true,
                    taint: only.taint.clone(),
                };
                let what = format!("{}: `{}` is empty", self.here(t.line), t.text);
                let has_default = t_.taint.iter().all(Input::has_default);
                if !has_default {
                    // Kept, standing for any value: argument lists may differ from CMake's
                    // when it is empty (a known approximation), so no default is claimed.
                    self.no_default = true;
                } else {
                    match &mode {
                        EmptyArgs::Probe => probed.push((what, t_.taint)),
                        EmptyArgs::Forced(_) => {
                            if forced.next().copied().unwrap_or(true) {
                                args.clear();
                            }
                        }
                        // Inside a call the argument count decides what runs: summarise the
                        // call.
                        EmptyArgs::Decide if self.summarizing > 0 => return Err(Stop::NeedsFork),
                        EmptyArgs::Decide => {
                            if self.decide(t_, what) {
                                args.clear();
                            }
                        }
                    }
                }
            }
            total += args.iter().map(|a| a.text.len()).sum::<usize>();
            if total > 16 * super::value::MAX_VALUE {
                return Err(Stop::Undecided(format!(
                    "{}: arguments over {} bytes",
                    self.here(t.line),
                    16 * super::value::MAX_VALUE
                )));
            }
            out.extend(args);
        }
        if !probed.is_empty() {
            return Err(Stop::Empties(probed));
        }
        Ok(out)
    }

    fn decide(&mut self, t: Truth, what: String) -> bool {
        if t.taint.is_empty() {
            return t.value;
        }
        // A fork on a value a join made: that join changes what this run decides, so it is
        // relevant (forked from the next pass on, see `super::evaluate`).
        for i in &t.taint {
            if let Input::Join(w) = i {
                self.m.relevant.insert(w.clone());
            }
        }
        let k = self.trace.len();
        let outcome = self.choices.get(k).copied().unwrap_or(t.value);
        self.trace.push(Decision {
            outcome,
            computed: t.value,
            has_default: t.taint.iter().all(Input::has_default),
            inputs: t.taint,
            what,
        });
        outcome
    }

    fn condition(&mut self, inv: &Invocation) -> Result<bool, Stop> {
        let args = self.expand_args(&inv.args)?;
        let t = cond::evaluate(&args, self).map_err(|e| {
            Stop::Fatal(format!("{}: {}(): {}", self.here(inv.line), inv.name, e.0))
        })?;
        if !t.taint.is_empty() && self.summarizing > 0 {
            return Err(Stop::NeedsFork);
        }
        let what = self.condition_text(inv);
        Ok(self.decide(t, what))
    }

    /// Run a block. `function_body`: the body of a function or macro, which CMake leaves at
    /// its first failing command (an error in a nested `if`/`foreach` body does not leave it).
    fn block(&mut self, nodes: &[Node], function_body: bool) -> Result<Flow, Stop> {
        for node in nodes {
            self.step()?;
            let flow = match node {
                Node::Cmd(inv) => {
                    let run = |r: &mut Self| match r.command(inv) {
                        Err(Stop::Error(e)) if !function_body => {
                            r.st.errors.push(e);
                            Ok(Flow::Next)
                        }
                        other => other,
                    };
                    // Which arguments a fetch has is what it fetches: relevant from the start.
                    let fetch = is_fetch_command(&inv.name.to_ascii_lowercase());
                    self.joining_empties(&run, fetch)?
                }
                Node::If(branches) => {
                    self.joining_empties(&|r: &mut Self| r.if_chain(branches), false)?
                }
                Node::Foreach(head, body) => {
                    let run = |r: &mut Self| match r.foreach(head, body) {
                        Err(Stop::Error(e)) => {
                            r.st.errors.push(e);
                            Ok(Flow::Next)
                        }
                        other => other,
                    };
                    self.joining_empties(&run, false)?
                }
                Node::While(head, body) => {
                    let mut flow = Flow::Next;
                    while self.condition(head)? {
                        self.step()?;
                        match self.block(body, false)? {
                            Flow::Break => break,
                            Flow::Return => {
                                flow = Flow::Return;
                                break;
                            }
                            _ => {}
                        }
                    }
                    flow
                }
                Node::Function(head, body, is_macro) => {
                    let args = self.expand_args(&head.args)?;
                    if let Some((name, params)) = args.split_first() {
                        if !name.taint.is_empty() {
                            return Err(Stop::Undecided(format!(
                                "{}: a function name from an input",
                                self.here(head.line)
                            )));
                        }
                        self.st.commands.insert(
                            name.text.to_ascii_lowercase(),
                            Def {
                                name: name.text.clone(),
                                params: params.iter().map(|p| p.text.clone()).collect(),
                                body: body.clone(),
                                is_macro: *is_macro,
                            },
                        );
                    }
                    Flow::Next
                }
                Node::Block(head, body) => self.run_block(head, body)?,
            };
            if !matches!(flow, Flow::Next) {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    /// `block([SCOPE_FOR [POLICIES] [VARIABLES]] [PROPAGATE <var>...])`: a variable scope of its
    /// own unless `SCOPE_FOR` leaves `VARIABLES` out; what `PROPAGATE` names is set (or unset)
    /// in the enclosing scope as the block leaves it.
    fn run_block(&mut self, head: &Invocation, body: &[Node]) -> Result<Flow, Stop> {
        let args = self.expand_args(&head.args)?;
        let mut variables = true;
        let mut propagate: Vec<String> = Vec::new();
        let mut mode = "";
        for a in &args {
            match a.text.as_str() {
                "SCOPE_FOR" => {
                    mode = "SCOPE_FOR";
                    variables = false;
                }
                "PROPAGATE" => mode = "PROPAGATE",
                "VARIABLES" if mode == "SCOPE_FOR" => variables = true,
                "POLICIES" if mode == "SCOPE_FOR" => {}
                name if mode == "PROPAGATE" => {
                    if !a.taint.is_empty() {
                        return Err(Stop::Undecided(format!(
                            "{}: block(PROPAGATE) of a name from an input",
                            self.here(head.line)
                        )));
                    }
                    propagate.push(name.to_string());
                }
                other => {
                    return Err(Stop::Error(format!(
                        "{}: block() given `{other}`",
                        self.here(head.line)
                    )));
                }
            }
        }
        if !variables {
            return self.block(body, false);
        }
        let copy = self.st.scopes.last().cloned().unwrap_or_default();
        self.st.scopes.push(copy);
        let flow = self.block(body, false);
        let inner = self.st.scopes.pop().unwrap_or_default();
        for name in propagate {
            self.put_var(&name, inner.get(&name).cloned());
        }
        flow
    }

    /// `if()`/`elseif()`/`else()`. A condition that depends on an input is either a decision
    /// (the driver runs both outcomes as separate configurations) or, past
    /// [`FORK_LIMIT`] decisions in this run or when it has no default (the compiler,
    /// `find_package`), *joined*: both sides run here, from the same state, and the states are
    /// merged, every value that differs marked as depending on the condition (the default
    /// side's text kept), and fetches only the other side makes kept with the condition.
    fn if_chain(&mut self, branches: &[(Option<Invocation>, Vec<Node>)]) -> Result<Flow, Stop> {
        let Some(((cond, body), rest)) = branches.split_first() else {
            return Ok(Flow::Next);
        };
        let Some(inv) = cond else {
            return self.block(body, false);
        };
        let args = self.expand_args(&inv.args)?;
        let t = cond::evaluate(&args, self).map_err(|e| {
            Stop::Fatal(format!("{}: {}(): {}", self.here(inv.line), inv.name, e.0))
        })?;
        let what = self.condition_text(inv);
        if t.taint.is_empty() {
            return if t.value {
                self.block(body, false)
            } else {
                self.if_chain(rest)
            };
        }
        let opaque = t.taint.iter().any(|i| !i.has_default());
        let flow_inside = branches.iter().any(|(_, b)| has_control_flow(b));
        let relevant = self.m.fork_all || self.m.relevant.contains(&what);
        let join = !flow_inside
            && (opaque || !relevant || self.trace.len() >= FORK_LIMIT || self.summarizing > 0);
        let side = |r: &mut Self, outcome: bool| {
            if outcome {
                r.block(body, false)
            } else {
                r.if_chain(rest)
            }
        };
        if !join && self.summarizing > 0 {
            // Inside a call: the call runs once per outcome ([`Run::call_paths`]).
            let (forced, seen) = &mut self.call_forced;
            let Some(outcome) = forced.get(*seen).copied() else {
                return Err(Stop::CallFork(what, t));
            };
            *seen += 1;
            return side(self, outcome);
        }
        if !join {
            let outcome = self.decide(t, what);
            return side(self, outcome);
        }
        if opaque {
            self.no_default = true;
        }
        self.join_two(&what, t, &side)
    }

    /// A decision joined: both outcomes run here from the same state, and the states are
    /// merged, every value that differs marked as depending on the condition (the default
    /// side's text kept), and fetches only the other side makes kept with the condition
    /// ([`Run::join`]). `t.value` is the default side's outcome. Where the sides cannot be
    /// merged (they end differently, define functions differently, one fails) and neither
    /// forked, the decision is forked instead; inside a call that is [`Stop::NeedsFork`].
    fn join_two(
        &mut self,
        what: &str,
        t: Truth,
        side: &dyn Fn(&mut Self, bool) -> Result<Flow, Stop>,
    ) -> Result<Flow, Stop> {
        let mark = Input::Join(what.to_string());
        let start = self.st.clone();
        let decided = self.trace.len();
        let first = side(self, t.value);
        let taken = std::mem::replace(&mut self.st, start.clone());
        let second = side(self, !t.value);
        let other = std::mem::replace(&mut self.st, taken);
        self.joins += 1;
        let outcome = |outcome: bool| Outcome {
            join: self.joins,
            outcome,
            default_side: outcome == t.value,
            what: what.to_string(),
        };
        let sides = (outcome(t.value), outcome(!t.value));
        let unfollowed = match (first, second) {
            (Ok(Flow::Next), Ok(Flow::Next)) => match self.join(other, &mark, &sides) {
                Ok(()) => return Ok(Flow::Next),
                Err(e) => e,
            },
            (Err(Stop::Fatal(_)), Ok(Flow::Next)) => {
                // The default side stops CMake: the configurations that go on are the other
                // side's.
                self.st = other;
                self.no_default = true;
                return Ok(Flow::Next);
            }
            (Ok(Flow::Next), Err(Stop::Fatal(_))) => return Ok(Flow::Next),
            (Err(Stop::Error(e)), _) | (_, Err(Stop::Error(e))) => Stop::Error(e),
            (Err(e), _) | (_, Err(e)) => return Err(e),
            _ => Stop::Undecided(format!(
                "{what}: return()/break()/continue() under a condition on an input"
            )),
        };
        if self.summarizing > 0 {
            return Err(Stop::NeedsFork);
        }
        if self.trace.len() != decided {
            // A side forked: a replay would not retrace this run; the join stands as it failed.
            return Err(unfollowed);
        }
        self.st = start;
        let outcome = self.decide(t, what.to_string());
        side(self, outcome)
    }

    /// Run a command, an `if()` chain or a loop whose first expansion of arguments may meet
    /// unquoted references to unknown values that are empty by default (CMake then drops the
    /// argument). Whether each is empty is a decision: forked where it was found relevant
    /// ([`Machine::relevant`], within [`FORK_LIMIT`], outside calls), joined otherwise (the
    /// node runs with the argument dropped and with it kept, [`Run::join_two`]). The first run
    /// only probes (nothing runs before the arguments are expanded).
    fn joining_empties(
        &mut self,
        node: &dyn Fn(&mut Self) -> Result<Flow, Stop>,
        relevant: bool,
    ) -> Result<Flow, Stop> {
        if self.m.fork_all {
            return node(self);
        }
        self.next_args = EmptyArgs::Probe;
        let probed = match node(self) {
            Err(Stop::Empties(probed)) => probed,
            other => {
                self.next_args = EmptyArgs::Decide;
                return other;
            }
        };
        self.next_args = EmptyArgs::Decide;
        // Forked: relevant ones, outside calls, while the run has forks left.
        let mut room = FORK_LIMIT.saturating_sub(self.trace.len());
        let forks: Vec<bool> = probed
            .iter()
            .map(|(what, _)| {
                let fork = self.summarizing == 0
                    && room > 0
                    && (relevant || self.m.relevant.contains(what));
                room -= usize::from(fork);
                fork
            })
            .collect();
        if forks.iter().filter(|f| !**f).count() > MAX_EMPTY_JOINS {
            // Too many combinations to run here: each is a decision, as a condition is.
            return node(self);
        }
        let mut planned: Vec<Option<bool>> = Vec::with_capacity(probed.len());
        for ((what, taint), fork) in probed.iter().zip(forks) {
            let t = Truth {
                value: true,
                taint: taint.clone(),
            };
            planned.push(fork.then(|| self.decide(t, what.clone())));
        }
        self.join_empties(&probed, &planned, Vec::new(), node)
    }

    /// Run `node` for every outcome of the joined empty references from `fixed.len()` on
    /// (see [`Run::joining_empties`]).
    fn join_empties(
        &mut self,
        probed: &[(String, Taint)],
        planned: &[Option<bool>],
        mut fixed: Vec<bool>,
        node: &dyn Fn(&mut Self) -> Result<Flow, Stop>,
    ) -> Result<Flow, Stop> {
        let at = fixed.len();
        match (planned.get(at), probed.get(at)) {
            (Some(Some(outcome)), _) => {
                fixed.push(*outcome);
                self.join_empties(probed, planned, fixed, node)
            }
            (Some(None), Some((what, taint))) => {
                let t = Truth {
                    value: true,
                    taint: taint.clone(),
                };
                let side = |r: &mut Self, dropped: bool| {
                    let mut next = fixed.clone();
                    next.push(dropped);
                    r.join_empties(probed, planned, next, node)
                };
                self.join_two(what, t, &side)
            }
            _ => {
                self.next_args = EmptyArgs::Forced(fixed);
                let r = node(self);
                self.next_args = EmptyArgs::Decide;
                r
            }
        }
    }

    fn condition_text(&self, inv: &Invocation) -> String {
        let text: Vec<String> = inv
            .args
            .iter()
            .map(|t| match t.quoting {
                Quoting::Quoted => format!("\"{}\"", t.text),
                _ => t.text.clone(),
            })
            .collect();
        format!("{}: {}({})", self.here(inv.line), inv.name, text.join(" "))
    }

    /// Merge the state of the other side of a joined condition into this (the default side's).
    /// `sides`: this side's outcome and the other's. A value that differs keeps both sides'
    /// values when each is known ([`Val::merge`]).
    fn join(&mut self, other: State, mark: &Input, sides: &(Outcome, Outcome)) -> Result<(), Stop> {
        let (mine, theirs) = sides;
        let merge_map = |a: &mut HashMap<String, Val>,
                         b: &HashMap<String, Val>,
                         maybe: &mut dyn FnMut(&String)| {
            for (k, va) in a.iter_mut() {
                let vb = b.get(k);
                if vb != Some(va) {
                    va.merge(vb, mark, mine, theirs);
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    maybe(k);
                }
            }
        };
        let State {
            scopes,
            cache,
            env,
            commands,
            declared,
            declared_alt,
            populated,
            fetches,
            reached,
            unread,
            written,
            guards,
            ..
        } = other;
        if guards != self.st.guards {
            return Err(Stop::Undecided(
                "include_guard() reached on one side of a condition on an input".into(),
            ));
        }
        if commands != self.st.commands {
            return Err(Stop::Undecided(
                "a function or macro defined differently under a condition on an input".into(),
            ));
        }
        if scopes.len() != self.st.scopes.len() {
            return Err(Stop::Undecided("scopes differ after a condition".into()));
        }
        let mut maybe_names: Vec<String> = Vec::new();
        // Maps both sides still share are the same on both: only the others are merged.
        for (a, b) in self.st.scopes.iter_mut().zip(scopes) {
            match a.changed_since(&b) {
                Some(names) => {
                    for k in names {
                        let vb = b.get(&k);
                        match a.get(&k).cloned() {
                            Some(mut va) => {
                                if vb != Some(&va) {
                                    va.merge(vb, mark, mine, theirs);
                                    a.insert(k, va);
                                }
                            }
                            None => {
                                if vb.is_some() {
                                    maybe_names.push(k);
                                }
                            }
                        }
                    }
                }
                None => {
                    let b = b.into_map();
                    merge_map(a.make_mut(), &b, &mut |k: &String| {
                        maybe_names.push(k.clone())
                    });
                }
            }
        }
        let flatten = |m: Shared<Option<Val>>| -> HashMap<String, Val> {
            m.into_map()
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect()
        };
        if cache.changed_since(&self.st.cache) != Some(Vec::new()) {
            let mut cache_a = flatten(std::mem::take(&mut self.st.cache));
            merge_map(&mut cache_a, &flatten(cache), &mut |k: &String| {
                maybe_names.push(k.clone())
            });
            self.st.cache = cache_a.into_iter().map(|(k, v)| (k, Some(v))).collect();
        }
        if env.changed_since(&self.st.env) != Some(Vec::new()) {
            let mut env_a = flatten(std::mem::take(&mut self.st.env));
            merge_map(&mut env_a, &flatten(env), &mut |k: &String| {
                maybe_names.push(k.clone())
            });
            self.st.env = env_a.into_iter().map(|(k, v)| (k, Some(v))).collect();
        }
        for n in maybe_names {
            self.st.maybe.entry(n).or_default().insert(mark.clone());
        }
        for (k, alts) in declared_alt {
            let mine = self.st.declared_alt.entry(k).or_default();
            for alt in alts {
                if !mine.contains(&alt) {
                    mine.push(alt);
                }
            }
        }
        // Declared on this side only: on the other, a later declaration is the one that wins
        // (the first declaration of a name wins), so this one becomes an alternative.
        let mine_only: Vec<String> = self
            .st
            .declared
            .keys()
            .filter(|k| !declared.contains_key(k))
            .cloned()
            .collect();
        for k in mine_only {
            if let Some(d) = self.st.declared.remove(&k) {
                let alt = (d, mark.to_string());
                let list = self.st.declared_alt.entry(k).or_default();
                if !list.contains(&alt) {
                    list.push(alt);
                }
            }
        }
        // Populated on one side only: a later `FetchContent_MakeAvailable` fetches on the
        // other (again here: more than CMake, never less).
        self.st.populated.retain(|k| populated.contains(k));
        for (k, d) in declared.into_map() {
            match self.st.declared.get(&k) {
                Some(mine) if *mine == d => {}
                Some(_) => {
                    let alt = (d, mark.to_string());
                    let list = self.st.declared_alt.entry(k).or_default();
                    if !list.contains(&alt) {
                        list.push(alt);
                    }
                }
                None => {
                    // Declared on the other side only: a later declaration on this side is
                    // the one this side fetches (the first declaration of a name wins).
                    let alt = (d, mark.to_string());
                    let list = self.st.declared_alt.entry(k).or_default();
                    if !list.contains(&alt) {
                        list.push(alt);
                    }
                }
            }
        }
        let common = self
            .st
            .fetches
            .iter()
            .zip(&fetches)
            .take_while(|(a, b)| a == b)
            .count();
        for mut f in fetches.into_iter().skip(common) {
            if !self.st.fetches.contains(&f) {
                f.only_if.push(mark.to_string());
                self.st.fetches.push(f);
            }
        }
        self.st.reached.extend(reached);
        self.st.unread.extend(unread);
        self.st.written.extend(written);
        Ok(())
    }

    fn foreach(&mut self, head: &Invocation, body: &[Node]) -> Result<Flow, Stop> {
        let args = self.expand_args(&head.args)?;
        let Some((var, rest)) = args.split_first() else {
            return Err(Stop::Error(format!(
                "{}: foreach() without arguments",
                self.here(head.line)
            )));
        };
        let kw = |a: &Arg, k: &str| !a.quoted && a.text == k;
        let mut items: Vec<Val> = Vec::new();
        let mut vars = vec![var.text.clone()];
        if rest.first().is_some_and(|a| kw(a, "RANGE")) {
            let nums: Vec<&Arg> = rest.iter().skip(1).collect();
            let mut taint = Taint::new();
            let mut n = Vec::new();
            for a in &nums {
                taint.extend(a.taint.iter().cloned());
                // CMake stops at a bound that is no integer, and at a range that counts away
                // from its stop.
                n.push(a.text.trim().parse::<i64>().map_err(|_| {
                    Stop::Fatal(format!(
                        "{}: foreach(RANGE) needs integers",
                        self.here(head.line)
                    ))
                })?);
            }
            if !taint.is_empty() {
                return Err(Stop::Undecided(format!(
                    "{}: foreach(RANGE) bounds from an input",
                    self.here(head.line)
                )));
            }
            // CMake: a step of 0 (or none) counts towards the stop, up or down; a step that
            // counts away from it is an error.
            let (start, stop, step) = match n.as_slice() {
                [stop] => (0, *stop, 0),
                [start, stop] => (*start, *stop, 0),
                [start, stop, step] => (*start, *stop, *step),
                _ => {
                    return Err(Stop::Undecided(format!(
                        "{}: foreach(RANGE) with more than three bounds is not evaluated",
                        self.here(head.line)
                    )));
                }
            };
            // Written with signs, not comparisons with 0: a step is never 0 past this point.
            let towards = match start.cmp(&stop) {
                std::cmp::Ordering::Greater => -1,
                _ => 1,
            };
            let step = if step == 0 { towards } else { step };
            if step.signum() != towards && start != stop {
                return Err(Stop::Fatal(format!(
                    "{}: foreach(RANGE) from {start} to {stop} by {step}",
                    self.here(head.line)
                )));
            }
            let mut i = start;
            while (step.is_positive() && i <= stop) || (step.is_negative() && i >= stop) {
                self.step()?;
                items.push(Val::exact(i.to_string()));
                let Some(next) = i.checked_add(step) else {
                    break;
                };
                i = next;
            }
        } else if rest.first().is_some_and(|a| kw(a, "IN")) {
            let mut mode = "";
            let mut zip: Vec<Vec<Val>> = Vec::new();
            for a in rest.iter().skip(1) {
                if !a.quoted && matches!(a.text.as_str(), "LISTS" | "ITEMS" | "ZIP_LISTS") {
                    mode = if a.text == "LISTS" {
                        "LISTS"
                    } else if a.text == "ITEMS" {
                        "ITEMS"
                    } else {
                        "ZIP_LISTS"
                    };
                    continue;
                }
                match mode {
                    "ITEMS" => items.push(a.val()),
                    "LISTS" | "ZIP_LISTS" => {
                        // A variable, never a macro's argument (`ARGN` in a macro is the
                        // caller's variable).
                        let v = self.read_var(&a.text);
                        let mut taint = v.taint.clone();
                        taint.extend(a.taint.iter().cloned());
                        let list: Vec<Val> = list_items(&v.text)
                            .into_iter()
                            .map(|t| Val {
                                text: t,
                                taint: taint.clone(),
                                alts: Vec::new(),
                            })
                            .collect();
                        if mode == "LISTS" {
                            items.extend(list);
                        } else {
                            zip.push(list);
                        }
                    }
                    _ => {
                        return Err(Stop::Error(format!(
                            "{}: foreach(IN) without LISTS or ITEMS",
                            self.here(head.line)
                        )));
                    }
                }
            }
            if mode == "ZIP_LISTS" {
                return Err(Stop::Undecided(format!(
                    "{}: foreach(IN ZIP_LISTS) is not evaluated",
                    self.here(head.line)
                )));
            }
            vars.truncate(1);
        } else {
            items = rest.iter().map(Arg::val).collect();
        }
        let name = vars.first().cloned().unwrap_or_default();
        let saved = self.st.scopes.last().and_then(|s| s.get(&name)).cloned();
        let mut flow = Flow::Next;
        for item in items {
            self.step()?;
            self.set_var(&name, item);
            match self.block(body, false)? {
                Flow::Break => break,
                Flow::Return => {
                    flow = Flow::Return;
                    break;
                }
                _ => {}
            }
        }
        // The loop variable is restored after the loop (CMake 3.21+ behaviour and earlier alike
        // for normal variables).
        self.put_var(&name, saved);
        Ok(flow)
    }

    fn command(&mut self, inv: &Invocation) -> Result<Flow, Stop> {
        let name = inv.name.to_ascii_lowercase();
        // Fetch commands are always the real ones (CPM.cmake defines CPMAddPackage as a
        // function that downloads; its effect is what is modelled here).
        if !is_fetch_command(&name)
            && let Some(def) = self.st.commands.get(&name).cloned()
        {
            return self.call(inv, def);
        }
        if NO_EFFECT.contains(&name.as_str()) {
            return Ok(Flow::Next);
        }
        let mut args = self.expand_args(&inv.args)?;
        if is_fetch_command(&name) {
            args = list_elements(args);
        }
        match name.as_str() {
            "set" => {
                let raw = inv.args.first().map(|t| t.text.as_str()).unwrap_or("");
                self.cmd_set(&args, raw, inv.line)?
            }
            "unset" => self.cmd_unset(&args),
            "option" => self.cmd_option(&args),
            "list" => self.cmd_list(&args, inv.line)?,
            "string" => self.cmd_string(&args, inv.line)?,
            "math" => self.cmd_math(&args, inv.line)?,
            "file" => self.cmd_file(&args, inv.line)?,
            "include" => return self.cmd_include(&args, inv.line),
            "add_subdirectory" => self.cmd_add_subdirectory(&args, inv.line)?,
            "project" => return self.project_with_hooks(&args, inv.line),
            "cmake_minimum_required" | "cmake_policy" => self.cmd_policy(&args),
            "message" => {
                if args.first().is_some_and(|a| a.text == "SEND_ERROR") {
                    return Err(Stop::Error(format!(
                        "{}: message(SEND_ERROR)",
                        self.here(inv.line)
                    )));
                }
                if args.first().is_some_and(|a| a.text == "FATAL_ERROR") {
                    let msg: Vec<&str> = args.iter().skip(1).map(|a| a.text.as_str()).collect();
                    return Err(Stop::Fatal(format!(
                        "{}: {}",
                        self.here(inv.line),
                        msg.concat()
                    )));
                }
            }
            "include_guard" => return Ok(self.include_guard(&args)),
            "return" => {
                if self.policy("CMP0140", (3, 25))
                    && args.first().is_some_and(|a| a.text == "PROPAGATE")
                {
                    let scope = self.st.scopes.last();
                    self.st.returning = args
                        .iter()
                        .skip(1)
                        .map(|a| (a.text.clone(), scope.and_then(|s| s.get(&a.text)).cloned()))
                        .collect();
                }
                return Ok(Flow::Return);
            }
            "break" => return Ok(Flow::Break),
            "continue" => return Ok(Flow::Continue),
            "configure_file" | "write_file" | "make_directory" => self.mark_written(&name, &args),
            "execute_process" | "exec_program" => {
                let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                for p in writes::process_writes(&texts, SOURCE_ROOT) {
                    if let Some(rel) = view_path(p) {
                        self.st.written.insert(rel);
                    }
                }
                self.taint_outputs(&args, &inv.name);
            }
            "cmake_parse_arguments" => self.cmd_parse_arguments(&args, inv.line)?,
            "get_filename_component" => self.cmd_filename_component(&args),
            "find_package" => {
                if let Some(p) = args.first() {
                    let what = Input::Opaque(format!("find_package({})", p.text));
                    for v in [
                        format!("{}_FOUND", p.text),
                        format!("{}_FOUND", p.text.to_ascii_uppercase()),
                        format!("{}_VERSION", p.text),
                        format!("{}_DIR", p.text),
                    ] {
                        self.set_var(&v, Val::with("", what.clone()));
                    }
                }
            }
            "fetchcontent_declare" => self.fc_declare(&args, inv.line)?,
            "fetchcontent_makeavailable" => {
                for a in &args {
                    self.fc_populate_declared(a, inv.line)?;
                }
            }
            "fetchcontent_populate" => {
                self.st.reached.insert((self.file(), inv.line));
                match args.as_slice() {
                    [] => {}
                    [name] => self.fc_populate_declared(name, inv.line)?,
                    [name, rest @ ..] => {
                        let f = self.fetch(Command::FetchContentPopulate, name, rest, inv.line);
                        self.st.fetches.push(f);
                    }
                }
            }
            "fetchcontent_getproperties" => {
                if let Some(n) = args.first() {
                    let lc = n.text.to_ascii_lowercase();
                    if self.st.populated.contains(&lc) {
                        self.set_var(&format!("{lc}_POPULATED"), Val::exact("TRUE"));
                    }
                }
            }
            "externalproject_add" => {
                self.st.reached.insert((self.file(), inv.line));
                if let Some((name, rest)) = args.split_first() {
                    let f = self.fetch(Command::ExternalProjectAdd, name, rest, inv.line);
                    self.st.fetches.push(f);
                }
            }
            "cpmaddpackage" => {
                self.st.reached.insert((self.file(), inv.line));
                self.cpm(&args, inv.line);
            }
            "cmake_language" | "variable_watch" | "load_cache" => {
                return Err(Stop::Undecided(format!(
                    "{}: {}() is not evaluated",
                    self.here(inv.line),
                    inv.name
                )));
            }
            _ => self.taint_outputs(&args, &inv.name),
        }
        Ok(Flow::Next)
    }

    fn file(&self) -> String {
        self.st
            .dirs
            .last()
            .map(|d| d.list_file.clone())
            .unwrap_or_default()
    }

    /// A command pinprobe does not model may set any variable named in its arguments. Any
    /// text is a name: CMake commands take names of any characters (`get_property("a:b" ...)`)
    /// and a nested reference (`${${n}}`) reads any name back.
    fn taint_outputs(&mut self, args: &[Arg], command: &str) {
        let what = Input::Opaque(format!("{command}()"));
        for a in args {
            let mut v = self.var(&a.text);
            if !self
                .st
                .scopes
                .last()
                .is_some_and(|s| s.contains_key(&a.text))
            {
                v = Val::default();
            }
            v.taint.insert(what.clone());
            self.set_var(&a.text, v);
        }
    }

    /// Record the tree paths a command writes. A path with a finite set of values (a joined
    /// condition's sides) writes each; one any input can make anything may be anywhere (the
    /// whole tree), unless only a directory is made there; one in the build directory is
    /// outside the tree.
    fn mark_written(&mut self, command: &str, args: &[Arg]) {
        let directories = writes::only_makes_directories(command, args);
        for a in writes::written_by(command, args) {
            let Some(paths) = a.val().finite() else {
                if !directories && !a.text.starts_with(BINARY_ROOT) {
                    self.st.written.insert(String::new());
                }
                continue;
            };
            for p in paths {
                if p.text.starts_with(BINARY_ROOT) {
                    continue;
                }
                if let Some(rel) = view_path(&self.path_of(&p.text)) {
                    self.st.written.insert(rel);
                }
            }
        }
    }

    fn call(&mut self, inv: &Invocation, def: Def) -> Result<Flow, Stop> {
        if self.st.depth >= MAX_DEPTH {
            return Err(Stop::Undecided(format!(
                "{}: calls and includes nested deeper than {MAX_DEPTH}",
                self.here(inv.line)
            )));
        }
        let args = self.expand_args(&inv.args)?;
        if args.len() < def.params.len() {
            return Err(Stop::Error(format!(
                "{}: {}() called with {} arguments, needs {}",
                self.here(inv.line),
                inv.name,
                args.len(),
                def.params.len()
            )));
        }
        let join =
            |xs: &[Arg]| Val::joined(xs.iter().map(Arg::val).collect::<Vec<_>>().iter(), ";");
        let mut frame: HashMap<String, Val> = HashMap::new();
        frame.insert("ARGC".into(), Val::exact(args.len().to_string()));
        frame.insert("ARGV".into(), join(&args));
        frame.insert(
            "ARGN".into(),
            join(args.get(def.params.len()..).unwrap_or_default()),
        );
        for (i, a) in args.iter().enumerate() {
            frame.insert(format!("ARGV{i}"), a.val());
        }
        for (p, a) in def.params.iter().zip(&args) {
            frame.insert(p.clone(), a.val());
        }
        self.st.depth += 1;
        let result = if def.is_macro {
            self.st.macro_frames.push(Some(frame));
            let r = self.block(&def.body, true);
            self.st.macro_frames.pop();
            r
        } else {
            let before = self.st.clone();
            let r = match self.run_function(&def, &frame, Vec::new()) {
                Err(Stop::CallFork(..)) => {
                    self.st = before.clone();
                    self.call_paths(&def, &frame, Vec::new())
                }
                r => r,
            };
            match r {
                Err(Stop::NeedsFork | Stop::CallFork(..)) => {
                    self.st = before;
                    self.summarize(inv, &def, frame)
                }
                r => r.map(|_| Flow::Next),
            }
        };
        self.st.depth -= 1;
        result
    }

    /// Run a function's body in its own scope; `forced`: the outcomes of its first decisions
    /// that guard `return()`/`break()`/`continue()` ([`Stop::CallFork`] past them).
    fn run_function(
        &mut self,
        def: &Def,
        frame: &HashMap<String, Val>,
        forced: Vec<bool>,
    ) -> Result<Flow, Stop> {
        let mut scope = self.st.scopes.last().cloned().unwrap_or_default();
        scope.extend(frame.clone());
        scope.insert(
            "CMAKE_CURRENT_FUNCTION".into(),
            Val::exact(def.name.clone()),
        );
        self.st.scopes.push(scope);
        self.st.macro_frames.push(None);
        self.summarizing += 1;
        let outer = std::mem::replace(&mut self.call_forced, (forced, 0));
        let r = self.block(&def.body, true);
        self.call_forced = outer;
        self.summarizing -= 1;
        self.st.macro_frames.pop();
        self.st.scopes.pop();
        self.land_return();
        r.map(|_| Flow::Next)
    }

    /// A call whose body decides on an input where `return()`/`break()`/`continue()` hangs
    /// on it: the whole call runs under each outcome (the `forced` ones first) and the states
    /// it ends in are joined, as a joined `if()`'s sides are. Past [`MAX_CALL_FORKS`] such
    /// decisions in one call, [`Stop::CallFork`] (the caller summarises the call).
    fn call_paths(
        &mut self,
        def: &Def,
        frame: &HashMap<String, Val>,
        forced: Vec<bool>,
    ) -> Result<Flow, Stop> {
        let start = self.st.clone();
        match self.run_function(def, frame, forced.clone()) {
            Err(Stop::CallFork(what, t)) if forced.len() < MAX_CALL_FORKS => {
                self.st = start;
                let side = |r: &mut Self, outcome: bool| {
                    let mut next = forced.clone();
                    next.push(outcome);
                    r.call_paths(def, frame, next)
                };
                self.join_two(&what, t, &side)
            }
            r => r,
        }
    }

    /// A function call whose body pinprobe cannot follow (a condition on an input guards a
    /// `return()`): what it sets in the caller (`set(... PARENT_SCOPE)`, `return(PROPAGATE)`)
    /// becomes unknown. A function with any other effect (cache, environment, fetches,
    /// includes, definitions, calls) makes the evaluation unknown.
    fn summarize(
        &mut self,
        inv: &Invocation,
        def: &Def,
        frame: HashMap<String, Val>,
    ) -> Result<Flow, Stop> {
        let mark = Input::Opaque(format!(
            "{}: the result of {}()",
            self.here(inv.line),
            inv.name
        ));
        self.no_default = true;
        let mut names: Vec<Token> = Vec::new();
        let mut problem: Option<String> = None;
        collect_parent_writes(&def.body, &mut names, &mut problem, &self.st.commands, 0);
        if let Some(p) = problem {
            return Err(Stop::Undecided(format!(
                "{}: {}() depends on an input and {p}",
                self.here(inv.line),
                inv.name
            )));
        }
        // Expand the written names in the call's own scope.
        let mut scope = self.st.scopes.last().cloned().unwrap_or_default();
        scope.extend(frame);
        self.st.scopes.push(scope);
        self.st.macro_frames.push(None);
        let expanded = self.expand_args(&names);
        self.st.macro_frames.pop();
        self.st.scopes.pop();
        for name in expanded? {
            if !name.taint.is_empty() {
                return Err(Stop::Undecided(format!(
                    "{}: {}() sets a variable whose name depends on an input",
                    self.here(inv.line),
                    inv.name
                )));
            }
            let current = self
                .st
                .scopes
                .last()
                .and_then(|s| s.get(&name.text))
                .cloned();
            match current {
                Some(mut v) => {
                    v.taint.insert(mark.clone());
                    self.set_var(&name.text, v);
                }
                None => {
                    self.st
                        .maybe
                        .entry(name.text.clone())
                        .or_default()
                        .insert(mark.clone());
                }
            }
        }
        Ok(Flow::Next)
    }

    fn cmd_set(&mut self, args: &[Arg], raw_name: &str, line: u32) -> Result<(), Stop> {
        let Some((var, values)) = args.split_first() else {
            return Ok(());
        };
        let mut values = values.to_vec();
        if !var.taint.is_empty() {
            // `set(CMAKE_${LANG}_FLAGS ...)`: the name is unknown between its written prefix
            // and suffix. Every variable with both may have been set from here on.
            let prefix = raw_name.split('$').next().unwrap_or("");
            let suffix = raw_name
                .rsplit('}')
                .next()
                .filter(|s| !s.contains(['$', '{']))
                .unwrap_or("");
            if prefix.is_empty() || prefix.starts_with("ENV{") {
                return Err(Stop::Undecided(format!(
                    "{}: set() of a variable whose name comes from an input",
                    self.here(line)
                )));
            }
            let mark = Input::Opaque(format!("{}: set({raw_name} ...)", self.here(line)));
            self.st
                .wild
                .push((prefix.to_string(), suffix.to_string(), mark.clone()));
            for v in &mut values {
                v.taint.insert(mark.clone());
            }
        }
        let values = values.as_slice();
        let name = var.text.clone();
        if let Some(env) = name.strip_prefix("ENV{").and_then(|s| s.strip_suffix('}')) {
            match values.first().map(Arg::val) {
                Some(v) if !v.text.is_empty() || !v.taint.is_empty() => {
                    self.st.env.insert(env.to_string(), Some(v));
                }
                // No value or an empty one: CMake empties a variable that is set (it stays
                // defined) and leaves an unset one unset. One the program never set is the
                // real environment's: still an input.
                _ => {
                    if let Some(Some(_)) = self.st.env.get(env) {
                        self.st.env.insert(env.to_string(), Some(Val::exact("")));
                    }
                }
            }
            return Ok(());
        }
        let join =
            |xs: &[Arg]| Val::joined(xs.iter().map(Arg::val).collect::<Vec<_>>().iter(), ";");
        if let Some(at) = values.iter().position(|a| !a.quoted && a.text == "CACHE") {
            let value = join(values.get(..at).unwrap_or_default());
            // The `INTERNAL` type implies `FORCE`.
            let force = values.get(at + 1).is_some_and(|a| a.text == "INTERNAL")
                || values
                    .iter()
                    .skip(at)
                    .any(|a| !a.quoted && a.text == "FORCE");
            let cmp0126_new = self.policy("CMP0126", (3, 21));
            let exists = matches!(self.st.cache.get(&name), Some(Some(_)));
            if force {
                self.st.cache.insert(name.clone(), Some(value));
                if !cmp0126_new {
                    self.scope_mut().remove(&name);
                }
            } else {
                if !exists {
                    // The user may have passed -D<name>: then this keeps theirs.
                    let mut v = value;
                    v.taint.insert(Input::Cache(name.clone()));
                    self.st.cache.insert(name.clone(), Some(v));
                }
                if !cmp0126_new {
                    self.scope_mut().remove(&name);
                }
            }
            return Ok(());
        }
        if values
            .last()
            .is_some_and(|a| !a.quoted && a.text == "PARENT_SCOPE")
        {
            let value = values.get(..values.len() - 1).unwrap_or_default();
            let n = self.st.scopes.len();
            if n >= 2 {
                let parent = &mut self.st.scopes[n - 2];
                if value.is_empty() {
                    parent.remove(&name);
                } else {
                    parent.insert(name, join(value));
                }
            }
            return Ok(());
        }
        if values.is_empty() {
            self.scope_mut().remove(&name);
        } else {
            self.set_var(&name, join(values));
        }
        Ok(())
    }

    fn policy(&self, id: &str, introduced: (u64, u64)) -> bool {
        self.st
            .policies
            .get(id)
            .copied()
            .unwrap_or(self.st.policy_version >= introduced)
    }

    fn cmd_unset(&mut self, args: &[Arg]) {
        let Some(var) = args.first() else { return };
        let name = var.text.clone();
        if let Some(env) = name.strip_prefix("ENV{").and_then(|s| s.strip_suffix('}')) {
            self.st.env.insert(env.to_string(), None);
            return;
        }
        match args.get(1).map(|a| a.text.as_str()) {
            Some("CACHE") => {
                self.st.cache.insert(name, None);
            }
            Some("PARENT_SCOPE") => {
                let n = self.st.scopes.len();
                if n >= 2 {
                    self.st.scopes[n - 2].remove(&name);
                }
            }
            _ => {
                self.scope_mut().remove(&name);
            }
        }
    }

    fn cmd_option(&mut self, args: &[Arg]) {
        let Some(var) = args.first() else { return };
        let name = var.text.clone();
        let cmp0077_new = self.policy("CMP0077", (3, 13));
        if cmp0077_new && self.st.scopes.last().is_some_and(|s| s.contains_key(&name)) {
            return;
        }
        if !matches!(self.st.cache.get(&name), Some(Some(_))) {
            let mut v = args
                .get(2)
                .map(Arg::val)
                .unwrap_or_else(|| Val::exact("OFF"));
            v.taint.insert(Input::Cache(name.clone()));
            self.st.cache.insert(name.clone(), Some(v));
        }
        if !cmp0077_new {
            self.scope_mut().remove(&name);
        }
    }

    fn cmd_policy(&mut self, args: &[Arg]) {
        let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        match texts.as_slice() {
            ["VERSION", v, ..] => {
                // `min...max`: policies as of `max` (every CMake that runs this knows them).
                let version = v.rsplit("...").next().unwrap_or(v);
                let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
                self.st.policy_version = (parts.next().unwrap_or(3), parts.next().unwrap_or(0));
                self.st.policies.clear();
            }
            ["SET", id, value, ..] => {
                self.st.policies.insert(id.to_string(), *value == "NEW");
            }
            ["PUSH"] => {
                let top = (self.st.policy_version, self.st.policies.clone());
                self.st.policy_stack.push(top);
            }
            ["POP"] => {
                if let Some((version, policies)) = self.st.policy_stack.pop() {
                    self.st.policy_version = version;
                    self.st.policies = policies;
                }
            }
            _ => {}
        }
    }

    /// `project()` with the files CMake reads at it (`hooks.rs`).
    fn project_with_hooks(&mut self, args: &[Arg], line: u32) -> Result<Flow, Stop> {
        let Some(name) = args.first().map(|a| a.text.clone()) else {
            return Ok(Flow::Next);
        };
        let first = !self.st.cache.contains_key("CMAKE_PROJECT_NAME");
        for (step, var) in super::hooks::steps(&name, first) {
            if step == super::hooks::Step::Project {
                self.cmd_project(args);
                continue;
            }
            let (Some(value), _) = self.defined_val(&var) else {
                continue;
            };
            let files = super::hooks::files(&var, &value)
                .map_err(|e| Stop::Undecided(format!("{}: {e}", self.here(line))))?;
            for file in files {
                self.cmd_include(&[file], line)?;
            }
        }
        Ok(Flow::Next)
    }

    fn cmd_project(&mut self, args: &[Arg]) {
        let Some(name) = args.first() else { return };
        let dir = self
            .st
            .dirs
            .last()
            .map(|d| d.source_dir.clone())
            .unwrap_or_default();
        // `PROJECT_*` are variables of the current scope; `<name>_SOURCE_DIR` is a cache entry
        // too (seen after the subdirectory that set it), and so is `CMAKE_PROJECT_NAME`, set
        // by any `project()` of the top directory (an included file's, a function's).
        let source = Val::exact(abs(&dir));
        self.set_var("PROJECT_NAME", name.val());
        self.set_var("PROJECT_SOURCE_DIR", source.clone());
        if dir.is_empty() {
            self.st
                .cache
                .insert("CMAKE_PROJECT_NAME".into(), Some(name.val()));
        }
        let source_var = format!("{}_SOURCE_DIR", name.text);
        self.set_var(&source_var, source.clone());
        self.st.cache.insert(source_var, Some(source));
        if let Some(i) = args.iter().position(|a| a.text == "VERSION")
            && let Some(v) = args.get(i + 1)
        {
            self.set_var("PROJECT_VERSION", v.val());
            self.set_var(&format!("{}_VERSION", name.text), v.val());
            let parts: Vec<&str> = v.text.split('.').collect();
            for (i, suffix) in ["MAJOR", "MINOR", "PATCH", "TWEAK"].iter().enumerate() {
                let p = parts.get(i).copied().unwrap_or("");
                let val = Val {
                    text: p.to_string(),
                    taint: v.taint.clone(),
                    alts: Vec::new(),
                };
                self.set_var(&format!("PROJECT_VERSION_{suffix}"), val.clone());
                self.set_var(&format!("{}_VERSION_{suffix}", name.text), val);
            }
        }
    }

    /// Resolve a path argument against the current source directory.
    fn path_arg(&self, a: &Arg) -> String {
        self.path_of(&a.text)
    }

    /// A path resolved against the current source directory.
    fn path_of(&self, text: &str) -> String {
        if text.starts_with('/') {
            text.to_string()
        } else {
            let dir = self
                .st
                .dirs
                .last()
                .map(|d| d.source_dir.clone())
                .unwrap_or_default();
            format!("{}/{}", abs(&dir), text)
        }
    }

    fn cmd_include(&mut self, args: &[Arg], line: u32) -> Result<Flow, Stop> {
        let Some(target) = args.first() else {
            return Ok(Flow::Next);
        };
        let optional = args.iter().skip(1).any(|a| a.text == "OPTIONAL");
        let result_var = args
            .iter()
            .position(|a| a.text == "RESULT_VARIABLE")
            .and_then(|i| args.get(i + 1))
            .map(|a| a.text.clone());
        if !target.taint.is_empty() {
            if let Some(why) = super::outside::build_dir_include(&target.text) {
                return Err(Stop::Undecided(format!("{}: {why}", self.here(line))));
            }
            self.st
                .unread
                .insert(format!("{}: include({})", self.here(line), target.text));
            return Ok(Flow::Next);
        }
        let is_module = !target.text.contains('/') && !target.text.ends_with(".cmake");
        let mut path: Option<String> = None;
        if is_module {
            let module_path = self.var("CMAKE_MODULE_PATH");
            for dir in split_list(&module_path.text) {
                let candidate = format!("{dir}/{}.cmake", target.text);
                if let Some(rel) = view_path(&candidate)
                    && (self.st.written.covers(&rel) || self.m.all_files()?.contains(&rel))
                {
                    path = Some(rel);
                    break;
                }
            }
            if path.is_none() {
                // A module shipped with CMake (FetchContent, ExternalProject, CPM is handled as
                // a command): nothing to read.
                if let Some(v) = result_var {
                    self.set_var(
                        &v,
                        Val::with("", Input::Opaque(format!("include({})", target.text))),
                    );
                }
                return Ok(Flow::Next);
            }
        } else {
            let full = self.path_arg(target);
            match view_path(&full) {
                Some(rel) => path = Some(rel),
                None => {
                    return Err(Stop::Undecided(format!(
                        "{}: {}",
                        self.here(line),
                        super::outside::outside_include(&target.text, &full)
                    )));
                }
            }
        }
        let Some(rel) = path else {
            return Ok(Flow::Next);
        };
        let base = rel.rsplit('/').next().unwrap_or(&rel).to_ascii_lowercase();
        if base == "cpm.cmake" || base == "get_cpm.cmake" {
            return Ok(Flow::Next);
        }
        if self.st.written.covers(&rel) {
            return Err(Stop::Undecided(format!(
                "{}: include({}) reads a file the configuration wrote",
                self.here(line),
                target.text
            )));
        }
        let nodes = match self.m.load(&rel)? {
            Some(n) => n,
            None if optional => {
                if let Some(v) = result_var {
                    self.set_var(&v, Val::exact("NOTFOUND"));
                }
                return Ok(Flow::Next);
            }
            None => {
                return Err(Stop::Error(format!(
                    "{}: include could not find `{}`",
                    self.here(line),
                    target.text
                )));
            }
        };
        if let Some(v) = result_var {
            self.set_var(&v, Val::exact(abs(&rel)));
        }
        if self.st.depth >= MAX_DEPTH {
            return Err(Stop::Undecided(format!(
                "{}: includes nested deeper than {MAX_DEPTH} (recursive include?)",
                self.here(line)
            )));
        }
        let source_dir = self
            .st
            .dirs
            .last()
            .map(|d| d.source_dir.clone())
            .unwrap_or_default();
        self.st.dirs.push(Dirs {
            source_dir,
            list_file: rel,
        });
        self.st.depth += 1;
        let r = self.block(&nodes, false);
        self.st.depth -= 1;
        self.st.dirs.pop();
        // An included file shares its includer's scope: what it propagates is already there.
        self.st.returning.clear();
        r.map(|_| Flow::Next)
    }

    fn cmd_add_subdirectory(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let Some(dir) = args.first() else {
            return Ok(());
        };
        if !dir.taint.is_empty() {
            self.st.unread.insert(format!(
                "{}: add_subdirectory({})",
                self.here(line),
                dir.text
            ));
            return Ok(());
        }
        let Some(rel) = view_path(&self.path_arg(dir)) else {
            self.st.unread.insert(format!(
                "{}: add_subdirectory({})",
                self.here(line),
                dir.text
            ));
            return Ok(());
        };
        let file = if rel.is_empty() {
            "CMakeLists.txt".to_string()
        } else {
            format!("{rel}/CMakeLists.txt")
        };
        if self.st.written.covers(&file) {
            return Err(Stop::Undecided(format!(
                "{}: add_subdirectory({}) reads files the configuration wrote",
                self.here(line),
                dir.text
            )));
        }
        let Some(nodes) = self.m.load(&file)? else {
            return Err(Stop::Error(format!(
                "{}: add_subdirectory: no {file}",
                self.here(line)
            )));
        };
        if self.st.depth >= MAX_DEPTH {
            return Err(Stop::Undecided(format!(
                "{}: directories nested deeper than {MAX_DEPTH}",
                self.here(line)
            )));
        }
        let copy = self.st.scopes.last().cloned().unwrap_or_default();
        self.st.scopes.push(copy);
        self.st.dirs.push(Dirs {
            source_dir: rel,
            list_file: file,
        });
        self.st.depth += 1;
        let r = self.block(&nodes, false);
        self.st.depth -= 1;
        self.st.dirs.pop();
        self.st.scopes.pop();
        self.land_return();
        r.map(|_| ())
    }

    fn cmd_parse_arguments(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let parse_argv = args.first().is_some_and(|a| a.text == "PARSE_ARGV");
        // CMP0174 (3.31): the PARSE_ARGV form defines a single-value keyword given without a
        // value (or with an empty one) as an empty string; before it, and in the other form,
        // such a keyword leaves the variable undefined.
        let empty_defined = parse_argv && self.policy("CMP0174", (3, 31));
        let (values, prefix, opts, one, multi): (Vec<Val>, _, _, _, _) = if parse_argv {
            let n: usize = args
                .get(1)
                .and_then(|a| a.text.parse().ok())
                .ok_or_else(|| Stop::Error(format!("{}: PARSE_ARGV index", self.here(line))))?;
            let argc: usize = self.var("ARGC").text.parse().unwrap_or(0);
            let vals = (n..argc).map(|i| self.var(&format!("ARGV{i}"))).collect();
            (vals, args.get(2), args.get(3), args.get(4), args.get(5))
        } else {
            let vals = args.iter().skip(4).map(Arg::val).collect();
            (vals, args.first(), args.get(1), args.get(2), args.get(3))
        };
        let Some(prefix) = prefix.map(|p| p.text.clone()) else {
            return Ok(());
        };
        let words = |a: Option<&Arg>| a.map(|a| split_list(&a.text)).unwrap_or_default();
        let (opts, one, multi) = (words(opts), words(one), words(multi));
        let mut found: HashMap<String, Vec<Val>> = HashMap::new();
        let mut unparsed: Vec<Val> = Vec::new();
        let mut current: Option<(String, bool)> = None;
        let mut missing: Vec<String> = Vec::new();
        for v in values {
            let t = v.text.as_str();
            if opts.iter().any(|o| o == t) {
                found.insert(t.to_string(), vec![Val::exact("TRUE")]);
                current = None;
            } else if one.iter().any(|o| o == t) || multi.iter().any(|o| o == t) {
                let is_multi = multi.iter().any(|o| o == t);
                if let Some((k, _)) = &current
                    && found.get(k).is_some_and(Vec::is_empty)
                {
                    missing.push(k.clone());
                }
                found.insert(t.to_string(), Vec::new());
                current = Some((t.to_string(), is_multi));
            } else {
                match &mut current {
                    Some((k, is_multi)) => {
                        if let Some(list) = found.get_mut(k.as_str()) {
                            list.push(v);
                        }
                        if !*is_multi {
                            current = None;
                        }
                    }
                    None => unparsed.push(v),
                }
            }
        }
        if let Some((k, _)) = current
            && found.get(&k).is_some_and(Vec::is_empty)
        {
            missing.push(k);
        }
        let join = |xs: &[Val]| Val::joined(xs, ";");
        for o in &opts {
            let v = if found.contains_key(o) {
                "TRUE"
            } else {
                "FALSE"
            };
            self.set_var(&format!("{prefix}_{o}"), Val::exact(v));
        }
        for k in one.iter().chain(&multi) {
            let name = format!("{prefix}_{k}");
            let is_one = one.contains(k);
            // PARSE_ARGV keeps an empty argument: a single value that is empty is no value.
            let has_value = |list: &[Val]| {
                list.iter()
                    .any(|v| !(parse_argv && is_one && v.text.is_empty()))
            };
            match found.get(k) {
                Some(list) if has_value(list) => self.set_var(&name, join(list)),
                Some(_) if empty_defined && is_one => self.set_var(&name, Val::exact("")),
                _ => {
                    self.scope_mut().remove(&name);
                }
            }
        }
        let name = format!("{prefix}_UNPARSED_ARGUMENTS");
        if unparsed.is_empty() {
            self.scope_mut().remove(&name);
        } else {
            self.set_var(&name, join(&unparsed));
        }
        let name = format!("{prefix}_KEYWORDS_MISSING_VALUES");
        if missing.is_empty() {
            self.scope_mut().remove(&name);
        } else {
            self.set_var(&name, Val::exact(missing.join(";")));
        }
        Ok(())
    }

    fn cmd_filename_component(&mut self, args: &[Arg]) {
        let (Some(var), Some(file), Some(mode)) = (args.first(), args.get(1), args.get(2)) else {
            return;
        };
        let path = file.text.as_str();
        let name = path.rsplit('/').next().unwrap_or(path);
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let text = match mode.text.as_str() {
            "DIRECTORY" | "PATH" => Some(dir.to_string()),
            "NAME" => Some(name.to_string()),
            "EXT" => Some(name.find('.').map_or("", |i| &name[i..]).to_string()),
            "NAME_WE" => Some(name.find('.').map_or(name, |i| &name[..i]).to_string()),
            "LAST_EXT" => Some(name.rfind('.').map_or("", |i| &name[i..]).to_string()),
            "NAME_WLE" => Some(name.rfind('.').map_or(name, |i| &name[..i]).to_string()),
            // Against the current source directory, `.` and `..` folded (no links followed).
            "ABSOLUTE" => {
                let full = self.path_arg(file);
                full.strip_prefix('/')
                    .and_then(super::paths::normalize)
                    .map(|p| format!("/{p}"))
            }
            _ => None,
        };
        let v = match text {
            Some(t) => Val {
                text: t,
                taint: file.taint.clone(),
                alts: Vec::new(),
            },
            None => Val::with(
                "",
                Input::Opaque(format!("get_filename_component({})", mode.text)),
            ),
        };
        self.set_var(&var.text, v);
    }

    /// A variable's value as commands read it (no macro arguments).
    fn read_var(&self, name: &str) -> Val {
        match self.defined_val(name) {
            (Some(v), _) => v,
            (None, taint) => Val {
                text: String::new(),
                taint,
                alts: Vec::new(),
            },
        }
    }

    fn apply(&mut self, sets: Option<super::builtins::Sets>, args: &[Arg], command: &str) {
        match sets {
            Some(sets) => {
                for (name, v) in sets {
                    self.put_var(&name, v);
                }
            }
            None => self.taint_outputs(args, command),
        }
    }

    fn cmd_list(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let sets = super::builtins::list(args, &|n| self.read_var(n))
            .map_err(|e| Stop::Error(format!("{}: {e}", self.here(line))))?;
        self.apply(sets, args, "list");
        Ok(())
    }

    fn cmd_string(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let caret_once = self.policy("CMP0186", (4, 1));
        let sets = match super::builtins::string(args, &|n| self.read_var(n), caret_once) {
            Ok(sets) => sets,
            Err(e) => {
                let left = super::builtins::string_failed(args, &|n| self.read_var(n), caret_once);
                self.apply(Some(left), args, "string");
                return Err(Stop::Error(format!("{}: {e}", self.here(line))));
            }
        };
        self.apply(sets, args, "string");
        Ok(())
    }

    fn cmd_math(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let sets = super::builtins::math(args)
            .map_err(|e| Stop::Error(format!("{}: {e}", self.here(line))))?;
        self.apply(sets, args, "math");
        Ok(())
    }

    /// `file(STRINGS|READ|GLOB|GLOB_RECURSE|WRITE|APPEND ...)`; other forms make their
    /// outputs unknown.
    fn cmd_file(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let (Some(op), Some(first)) = (args.first(), args.get(1)) else {
            return Ok(());
        };
        match op.text.as_str() {
            "READ" | "STRINGS" => {
                let Some(var) = args.get(2) else {
                    return Err(Stop::Error(format!(
                        "{}: file({}) needs a variable",
                        self.here(line),
                        op.text
                    )));
                };
                let full = self.path_arg(first);
                let rel = view_path(&full).filter(|_| first.taint.is_empty());
                let content = match &rel {
                    Some(r) if !self.st.written.covers(r) => self.m.view.read(r)?,
                    _ => None,
                };
                let Some(bytes) = content else {
                    if rel.as_deref().is_some_and(|r| !self.st.written.covers(r)) {
                        return Err(Stop::Error(format!(
                            "{}: file({}) cannot read `{}`",
                            self.here(line),
                            op.text,
                            first.text
                        )));
                    }
                    self.set_var(
                        &var.text,
                        Val::with(
                            "",
                            Input::Opaque(format!("file({} {})", op.text, first.text)),
                        ),
                    );
                    return Ok(());
                };
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let opts: Vec<&Arg> = args.iter().skip(3).collect();
                let v = if op.text == "READ" {
                    if !opts.is_empty() {
                        self.taint_outputs(std::slice::from_ref(var), "file(READ)");
                        return Ok(());
                    }
                    text
                } else {
                    let mut regex: Option<std::rc::Rc<super::regex::Regex>> = None;
                    let mut limit: Option<usize> = None;
                    let mut i = 0;
                    while let Some(o) = opts.get(i) {
                        match o.text.as_str() {
                            "REGEX" => {
                                let re = opts.get(i + 1).map(|a| a.text.as_str()).unwrap_or("");
                                match super::regexes::compiled(re) {
                                    Ok(r) => regex = Some(r),
                                    Err(_) => {
                                        self.taint_outputs(
                                            std::slice::from_ref(var),
                                            "file(STRINGS)",
                                        );
                                        return Ok(());
                                    }
                                }
                                i += 2;
                            }
                            "LIMIT_COUNT" => {
                                limit = opts.get(i + 1).and_then(|a| a.text.parse().ok());
                                i += 2;
                            }
                            _ => {
                                self.taint_outputs(std::slice::from_ref(var), "file(STRINGS)");
                                return Ok(());
                            }
                        }
                    }
                    // Every line, empty ones too; nothing after a final newline. A search over
                    // its budget makes the lines unknown.
                    let body = text.strip_suffix('\n').unwrap_or(&text);
                    if let Some(r) = &regex
                        && body.split('\n').any(|l| r.is_match(l).is_err())
                    {
                        self.taint_outputs(std::slice::from_ref(var), "file(STRINGS)");
                        return Ok(());
                    }
                    let lines = (!text.is_empty())
                        .then(|| body.split('\n'))
                        .into_iter()
                        .flatten()
                        .map(|l| l.strip_suffix('\r').unwrap_or(l))
                        .filter(|l| regex.as_ref().is_none_or(|r| r.is_match(l) == Ok(true)))
                        .map(|l| l.replace(';', "\\;"));
                    let lines: Vec<String> = match limit {
                        Some(n) => lines.take(n).collect(),
                        None => lines.collect(),
                    };
                    lines.join(";")
                };
                let mut taint = first.taint.clone();
                taint.extend(opts.iter().flat_map(|a| a.taint.iter().cloned()));
                self.set_var(
                    &var.text,
                    Val {
                        text: v,
                        taint,
                        alts: Vec::new(),
                    },
                );
            }
            "GLOB" | "GLOB_RECURSE" => {
                let recurse = op.text == "GLOB_RECURSE";
                let var = first.text.clone();
                let mut files: Vec<String> = Vec::new();
                let mut taint = Taint::new();
                let mut rest = args.iter().skip(2).peekable();
                let mut relative: Option<String> = None;
                while let Some(a) = rest.next() {
                    match a.text.as_str() {
                        "LIST_DIRECTORIES" => {
                            rest.next();
                        }
                        "RELATIVE" => relative = rest.next().map(|r| r.text.clone()),
                        "CONFIGURE_DEPENDS" | "FOLLOW_SYMLINKS" => {}
                        pattern => {
                            taint.extend(a.taint.iter().cloned());
                            let full = self.path_arg(a);
                            let Some(rel) = view_path(&full).filter(|_| !pattern.is_empty()) else {
                                taint.insert(Input::Opaque(format!("file({} {pattern})", op.text)));
                                continue;
                            };
                            let literal: Vec<&str> = rel
                                .split('/')
                                .take_while(|s| !super::paths::is_glob(s))
                                .collect();
                            if self.st.written.touches(&literal.join("/")) {
                                taint.insert(Input::Opaque(format!(
                                    "file({} {pattern}) after the configuration wrote there",
                                    op.text
                                )));
                            }
                            let key = (rel.clone(), recurse);
                            let found = match self.m.globs.get(&key) {
                                Some(f) => f.clone(),
                                None => {
                                    let f = super::paths::glob(self.m.view, &rel, recurse)?;
                                    self.m.globs.insert(key, f.clone());
                                    f
                                }
                            };
                            files.extend(found.into_iter().map(|f| abs(&f)));
                        }
                    }
                }
                files.sort();
                files.dedup();
                if let Some(base) = relative {
                    let prefix = format!("{}/", base.trim_end_matches('/'));
                    files = files
                        .into_iter()
                        .map(|f| f.strip_prefix(&prefix).map(str::to_string).unwrap_or(f))
                        .collect();
                }
                self.set_var(
                    &var,
                    Val {
                        text: files.join(";"),
                        taint,
                        alts: Vec::new(),
                    },
                );
            }
            "TOUCH_NOCREATE" | "CHMOD" | "CHMOD_RECURSE" => {}
            _ if writes::writes_files("file", Some(&op.text)) => self.mark_written("file", args),
            _ => self.taint_outputs(args, "file"),
        }
        Ok(())
    }

    // ----- FetchContent, ExternalProject, CPM -----

    fn fc_declare(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        self.st.reached.insert((self.file(), line));
        let Some((name, rest)) = args.split_first() else {
            return Ok(());
        };
        let lc = name.text.to_ascii_lowercase();
        // The first declaration of a name wins; later ones are ignored.
        self.st
            .declared
            .make_mut()
            .entry(lc)
            .or_insert_with(|| Details {
                args: std::iter::once(name.clone())
                    .chain(rest.iter().cloned())
                    .collect(),
                file: self
                    .st
                    .dirs
                    .last()
                    .map(|d| d.list_file.clone())
                    .unwrap_or_default(),
                line,
            });
        Ok(())
    }

    fn fc_populate_declared(&mut self, name: &Arg, line: u32) -> Result<(), Stop> {
        let lc = name.text.to_ascii_lowercase();
        if self.st.populated.contains(&lc) {
            return Ok(());
        }
        let Some(details) = self.st.declared.get(&lc).cloned() else {
            if self.st.declared_alt.contains_key(&lc) {
                // Declared only on the other side of a joined condition: there it is fetched;
                // on this side CMake stops here, which this run does not follow (it goes on,
                // so it may fetch more than CMake, never less), so no default is claimed.
                self.no_default = true;
                self.st.populated.insert(lc.clone());
                self.fetch_declared_alternatives(&lc, line);
                return Ok(());
            }
            return Err(Stop::Fatal(format!(
                "{}: no FetchContent_Declare() details for `{}`",
                self.here(line),
                name.text
            )));
        };
        self.st.populated.insert(lc.clone());
        let var = format!("FETCHCONTENT_SOURCE_DIR_{}", name.text.to_ascii_uppercase());
        let (v, taint) = self.defined_val(&var);
        let local = match v {
            Some(v) => {
                let t = Truth {
                    value: !cond::is_off(&v.text),
                    taint: v.taint.clone(),
                };
                self.decide(t, format!("{}: {var} set", self.here(line)))
                    .then_some(v)
            }
            None => None,
        };
        let (dname, rest) = details
            .args
            .split_first()
            .map(|(n, r)| (n.clone(), r.to_vec()))
            .unwrap_or_else(|| (name.clone(), Vec::new()));
        let mut f = self.fetch_at(
            Command::FetchContentDeclare,
            &dname,
            &rest,
            &details.file,
            details.line,
        );
        f.populated_at = Some((self.file(), line));
        match local {
            Some(dir) => {
                f.local_source = Some(Value::of(&dir));
            }
            None => {
                if !taint.is_empty() {
                    f.bypass.extend(taint);
                }
            }
        }
        self.set_var(&format!("{lc}_POPULATED"), Val::exact("TRUE"));
        self.st.fetches.push(f);
        self.fetch_declared_alternatives(&lc, line);
        Ok(())
    }

    /// What the other side of a joined condition declared instead (or only there).
    fn fetch_declared_alternatives(&mut self, lc: &str, line: u32) {
        for (alt, mark) in self.st.declared_alt.get(lc).cloned().unwrap_or_default() {
            let Some((n, r)) = alt.args.split_first() else {
                continue;
            };
            let mut g = self.fetch_at(Command::FetchContentDeclare, n, r, &alt.file, alt.line);
            g.populated_at = Some((self.file(), line));
            g.only_if.push(mark);
            if !self.st.fetches.contains(&g) {
                self.st.fetches.push(g);
            }
        }
    }

    fn fetch(&self, command: Command, name: &Arg, rest: &[Arg], line: u32) -> Fetch {
        let file = self.file();
        self.fetch_at(command, name, rest, &file, line)
    }

    fn fetch_at(&self, command: Command, name: &Arg, rest: &[Arg], file: &str, line: u32) -> Fetch {
        let groups = super::declare::group_args(rest);
        let first = |k: &str| -> Option<&Arg> {
            groups
                .iter()
                .rev()
                .find(|(kw, _)| *kw == k)
                .and_then(|(_, v)| v.first().copied())
        };
        let has_download = super::declare::DOWNLOADS
            .iter()
            .any(|k| groups.iter().any(|(kw, _)| kw == k));
        let mut name_v = Value::of(&name.val());
        name_v.inputs.extend(name.taint.iter().cloned());
        Fetch {
            command,
            name: name.text.clone(),
            name_inputs: name.taint.iter().cloned().collect(),
            file: file.to_string(),
            line,
            repository: first("GIT_REPOSITORY").map(|a| Value::of(&a.val())),
            tag: first("GIT_TAG").map(|a| Value::of(&a.val())),
            tag_line: first("GIT_TAG").map(|a| a.line),
            url: first("URL").map(|a| Value::of(&a.val())),
            local_source: (!has_download)
                .then(|| first("SOURCE_DIR").map(|a| Value::of(&a.val())))
                .flatten(),
            bypass: Vec::new(),
            args: std::iter::once(name)
                .chain(rest)
                .map(|a| (a.text.clone(), a.line))
                .collect(),
            populated_at: None,
            only_if: Vec::new(),
        }
    }

    fn cpm(&mut self, args: &[Arg], line: u32) {
        let taint: Taint = args.iter().flat_map(|a| a.taint.iter().cloned()).collect();
        let decl = super::declare::cpm_of(args);
        let with = |text: Option<String>| {
            text.map(|t| Value {
                text: t,
                inputs: taint.iter().cloned().collect(),
                alternatives: Vec::new(),
            })
        };
        let lc = decl.name.to_ascii_lowercase();
        if !self.st.cpm_added.insert(lc) {
            return;
        }
        let f = Fetch {
            command: Command::CpmAddPackage,
            name: decl.name.clone(),
            name_inputs: taint.iter().cloned().collect(),
            file: self.file(),
            line,
            repository: with(decl.git_repository.and_then(|a| a.value)),
            tag_line: decl.git_tag.as_ref().map(|a| a.line),
            tag: with(decl.git_tag.and_then(|a| a.value)),
            url: with(decl.url.and_then(|a| a.value)),
            local_source: None,
            bypass: vec![
                Input::Cache(format!("CPM_{}_SOURCE", decl.name)),
                Input::Env(format!("CPM_{}_SOURCE", decl.name)),
            ],
            args: args.iter().map(|a| (a.text.clone(), a.line)).collect(),
            populated_at: None,
            only_if: Vec::new(),
        };
        self.st.fetches.push(f);
    }
}

/// The arguments as a function implemented in CMake sees them through `${ARGN}` (as
/// FetchContent, ExternalProject and CPM are): a quoted list is its elements, so
/// `GIT_TAG "a;b"` is the tag `a` and an element `GIT_TAG` inside a quoted value is a keyword.
fn list_elements(args: Vec<Arg>) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let items = super::value::elements(&a.text);
        if items.len() == 1 && items.first().is_some_and(|i| *i == a.text) {
            out.push(a);
            continue;
        }
        // An unknown value that is empty by default still stands for its inputs.
        if items.is_empty() && !a.taint.is_empty() {
            out.push(a);
            continue;
        }
        for text in items {
            out.push(Arg {
                text,
                taint: a.taint.clone(),
                quoted: false,
                line: a.line,
                alts: Vec::new(),
            });
        }
    }
    out
}

fn is_fetch_command(name: &str) -> bool {
    matches!(
        name,
        "fetchcontent_declare"
            | "fetchcontent_makeavailable"
            | "fetchcontent_populate"
            | "fetchcontent_getproperties"
            | "externalproject_add"
            | "cpmaddpackage"
    )
}

/// Whether `return()`, `break()` or `continue()` appears in a block (outside function and
/// macro definitions, whose bodies run elsewhere).
fn has_control_flow(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Cmd(inv) => matches!(
            inv.name.to_ascii_lowercase().as_str(),
            "return" | "break" | "continue"
        ),
        Node::If(branches) => branches.iter().any(|(_, b)| has_control_flow(b)),
        Node::Foreach(_, b) | Node::While(_, b) => b.iter().any(|n| match n {
            Node::Cmd(inv) => inv.name.eq_ignore_ascii_case("return"),
            other => has_control_flow(std::slice::from_ref(other)),
        }),
        Node::Block(_, b) => has_control_flow(b),
        Node::Function(..) => false,
    })
}

/// The names a function body sets in its caller (`set(X ... PARENT_SCOPE)`,
/// `unset(X PARENT_SCOPE)`, `return(PROPAGATE X...)`), as written; `problem` says why the body
/// has effects beyond them.
fn collect_parent_writes(
    nodes: &[Node],
    names: &mut Vec<Token>,
    problem: &mut Option<String>,
    functions: &Shared<Def>,
    depth: usize,
) {
    for n in nodes {
        match n {
            Node::Cmd(inv) => {
                let name = inv.name.to_ascii_lowercase();
                let last_is = |k: &str| inv.args.last().is_some_and(|t| t.text == k);
                match name.as_str() {
                    "set" | "unset" => {
                        if inv.args.iter().any(|t| t.text == "CACHE")
                            || inv.args.first().is_some_and(|t| t.text.starts_with("ENV{"))
                        {
                            *problem = Some("sets a cache or environment variable".into());
                        } else if last_is("PARENT_SCOPE")
                            && let Some(t) = inv.args.first()
                        {
                            names.push(t.clone());
                        }
                    }
                    "return" => {
                        let mut propagate = false;
                        for t in &inv.args {
                            if t.text == "PROPAGATE" {
                                propagate = true;
                            } else if propagate {
                                names.push(t.clone());
                            }
                        }
                    }
                    "option"
                    | "include"
                    | "add_subdirectory"
                    | "cmake_language"
                    | "project"
                    | "cmake_policy"
                    | "cmake_minimum_required" => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    // Writing a file a later read could see; other forms only set variables
                    // of the function's scope.
                    n if writes::writes_files(n, inv.args.first().map(|t| t.text.as_str())) => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    n if is_fetch_command(n) => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    n if functions.contains_key(n) => {
                        // What a called function sets in its caller stays in this function's
                        // scope; only its other effects matter.
                        match functions.get(n) {
                            Some(def) if depth < 8 && !def.is_macro => {
                                let mut ignored = Vec::new();
                                collect_parent_writes(
                                    &def.body,
                                    &mut ignored,
                                    problem,
                                    functions,
                                    depth + 1,
                                );
                            }
                            _ => *problem = Some(format!("calls {}()", inv.name)),
                        }
                    }
                    _ => {}
                }
            }
            Node::If(branches) => {
                for (_, b) in branches {
                    collect_parent_writes(b, names, problem, functions, depth);
                }
            }
            Node::Foreach(_, b) | Node::While(_, b) | Node::Block(_, b) => {
                collect_parent_writes(b, names, problem, functions, depth)
            }
            Node::Function(..) => *problem = Some("defines a function".into()),
        }
    }
}
