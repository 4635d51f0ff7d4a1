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

use super::Command;
use super::cond::{self, Truth};
use super::fetches::{Fetch, Value};
use super::lexer::{Invocation, Quoting, Token};
use super::paths::{BINARY_ROOT, SOURCE_ROOT, view_path};
use super::shared::Shared;
use super::value::{
    Arg, ExpandError, Input, Lookup, Outcome, Taint, Val, expand, list_items, split_list,
};
use super::writes::{self, Writes};
use crate::view::{TargetError, View};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

mod commands;
mod fetch;
mod flow;
mod join;
mod parse;
mod scope;
pub(super) mod share;

pub(super) use parse::{Node, parse};

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
    /// Its part in sharing runs between two revisions ([`share`]).
    share: share::Role,
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
            share: share::Role::None,
        }
    }

    /// Every file of the view, listed by the caller.
    pub fn set_files(&mut self, files: Rc<Vec<String>>) {
        self.all_files = Some(files);
    }

    fn all_files(&mut self) -> Result<Rc<Vec<String>>, TargetError> {
        if let Some(f) = &self.all_files {
            self.share_hit(share::Access::FilesUnder(String::new()));
            return Ok(f.clone());
        }
        let f = Rc::new(self.view.files_under("")?);
        self.all_files = Some(f.clone());
        Ok(f)
    }

    /// A file parsed, `None` when it does not exist.
    fn load(&mut self, path: &str) -> Result<Option<Rc<Vec<Node>>>, Stop> {
        if let Some(n) = self.files.get(path) {
            self.share_hit(share::Access::Read(path.to_string()));
            return Ok(Some(n.clone()));
        }
        let Some(bytes) = self.view.read(path)? else {
            return Ok(None);
        };
        if let Some(nodes) = self.share_parsed(path, &bytes) {
            self.files.insert(path.to_string(), nodes.clone());
            return Ok(Some(nodes));
        }
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
        self.share_keep_parse(path, &bytes, &nodes);
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
    /// Where the `function()`/`macro()` command is written (view-relative file, line): the
    /// body's statements lie there, whoever calls it, and a function's
    /// `CMAKE_CURRENT_FUNCTION_LIST_*` say so.
    file: Rc<str>,
    line: u32,
}

impl PartialEq for Def {
    fn eq(&self, other: &Def) -> bool {
        self.name == other.name
            && self.params == other.params
            && self.is_macro == other.is_macro
            && self.file == other.file
            && self.line == other.line
            && Rc::ptr_eq(&self.body, &other.body)
    }
}

#[derive(Clone, PartialEq)]
struct Dirs {
    /// View-relative directory of the `CMakeLists.txt` being processed.
    source_dir: String,
    /// View-relative file being read (`CMAKE_CURRENT_LIST_FILE`: a function or macro body
    /// runs in its caller's list file).
    list_file: String,
    /// View-relative file whose text runs: the list file, or the file a called function or
    /// macro is defined in. Statements (declarations, errors) are located there.
    code_file: Rc<str>,
}

/// What `FetchContent_Declare` stored for a name.
#[derive(Clone, PartialEq)]
struct Details {
    args: Vec<Arg>,
    file: String,
    line: u32,
}

/// Policies set explicitly (`cmake_policy(SET)`), shared until changed.
type Policies = Rc<HashMap<String, bool>>;

/// Everything a run changes: what CMake's state would be.
#[derive(Clone, PartialEq)]
pub(super) struct State {
    scopes: Vec<Shared<Val>>,
    /// Cache entries the program (or a preset) created; `None`: removed by `unset(CACHE)`.
    cache: Shared<Option<Val>>,
    env: Shared<Option<Val>>,
    commands: Shared<Def>,
    macro_frames: Vec<Option<Rc<HashMap<String, Val>>>>,
    dirs: Vec<Rc<Dirs>>,
    declared: Shared<Details>,
    /// Declarations a joined condition's other side made instead, with the condition.
    declared_alt: Rc<HashMap<String, Vec<(Details, Input)>>>,
    populated: Rc<HashSet<String>>,
    cpm_added: Rc<HashSet<String>>,
    /// Shared until changed (a join clones the state twice).
    pub fetches: Rc<Vec<Fetch>>,
    /// Declaring calls reached: (file, line).
    pub reached: Rc<BTreeSet<(String, u32)>>,
    /// Files CMake would read that pinprobe cannot (outside the tree, a path from an input).
    pub unread: Rc<BTreeSet<String>>,
    /// Errors CMake reports and goes on after.
    pub errors: Rc<Vec<String>>,
    /// What the configuration wrote (or removed) in the tree so far.
    written: Writes,
    policy_version: (u64, u64),
    policies: Policies,
    depth: usize,
    /// Names unset on the default path that a joined branch may have set, with why.
    maybe: Rc<HashMap<String, Taint>>,
    /// Variable names set where part of the name was unknown: the written prefix and suffix
    /// (`CMAKE_${LANG}_FLAGS`: `CMAKE_`, `_FLAGS`), with why.
    wild: Vec<(String, String, Input)>,
    /// What a `return(PROPAGATE ...)` being unwound sets in the scope it returns to (`None`:
    /// unsets), as the returning scope held it.
    returning: Vec<(String, Option<Val>)>,
    /// Files an `include_guard(GLOBAL)` (`None`) or `include_guard(DIRECTORY)` (the directory)
    /// has guarded.
    guards: Rc<HashSet<(Option<String>, String)>>,
    /// `cmake_policy(PUSH)`ed policy settings.
    policy_stack: Vec<((u64, u64), Policies)>,
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
    /// Every decision asked about in [`Machine::relevant`], with the answer: the run does the
    /// same again while the answers hold.
    pub asked: Vec<(String, bool)>,
    /// The line of the command (or `if`/loop head) running now: `CMAKE_CURRENT_LIST_LINE`.
    line: u32,
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
        self.read_var(name)
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

impl<'m, 'v> Run<'m, 'v> {
    pub fn new(
        m: &'m mut Machine<'v>,
        choices: Vec<bool>,
        initial_cache: &[(String, Seed)],
    ) -> Self {
        m.share_begin(initial_cache);
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
                dirs: vec![Rc::new(Dirs {
                    source_dir: String::new(),
                    list_file: "CMakeLists.txt".into(),
                    code_file: "CMakeLists.txt".into(),
                })],
                declared: Shared::default(),
                declared_alt: Rc::default(),
                populated: Rc::default(),
                cpm_added: Rc::default(),
                fetches: Rc::default(),
                reached: Rc::default(),
                unread: Rc::default(),
                errors: Rc::default(),
                written: Writes::default(),
                policy_version: (3, 0),
                policies: Rc::default(),
                depth: 0,
                maybe: Rc::default(),
                wild: Vec::new(),
                returning: Vec::new(),
                guards: Rc::default(),
                policy_stack: Vec::new(),
            },
            no_default: false,
            summarizing: 0,
            joins: 0,
            next_args: EmptyArgs::Decide,
            call_forced: (Vec::new(), 0),
            asked: Vec::new(),
            line: 0,
        }
    }

    /// Whether a decision was found relevant ([`Machine::relevant`]), the answer recorded.
    fn is_relevant(&mut self, what: &str) -> bool {
        let answer = self.m.relevant.contains(what);
        self.asked.push((what.to_string(), answer));
        answer
    }

    /// Run the top-level `CMakeLists.txt`.
    pub fn top(&mut self) -> Result<(), Stop> {
        self.m.all_files()?;
        let Some(nodes) = self.m.load("CMakeLists.txt")? else {
            return Err(Stop::Fatal("no top-level CMakeLists.txt".into()));
        };
        share::top_level(self, &nodes)
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

    /// `file:line` of a statement of the code running now (a called function's or macro's
    /// body is in the file that defines it).
    fn here(&self, line: u32) -> String {
        let file = self.st.dirs.last().map(|d| &*d.code_file).unwrap_or("");
        format!("{file}:{line}")
    }

    /// The file whose text runs now ([`Dirs::code_file`]).
    fn file(&self) -> String {
        self.st
            .dirs
            .last()
            .map(|d| d.code_file.to_string())
            .unwrap_or_default()
    }
}
