//! Commands: the dispatch, and the commands that read or write files and paths.

use super::fetch::{is_fetch_command, list_elements};
use super::*;

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

impl Run<'_, '_> {
    /// An `execute_process` whose every `COMMAND` is git reading the repository
    /// ([`super::super::git_readonly`]), with what it still writes; `None` for any other call,
    /// or where the CMake code set a `GIT_*` environment variable (which git would obey).
    fn git_reads(
        &self,
        name: &str,
        inv: &Invocation,
    ) -> Option<super::super::git_readonly::GitReads> {
        use super::super::git_readonly::{SEARCH_PATHS, names_tree, steers_git};
        if name != "execute_process" || self.st.env.keys().any(|k| steers_git(k)) {
            return None;
        }
        // A search path naming the tree may find a `git` it ships.
        for var in SEARCH_PATHS {
            let v = self.var(var);
            if names_tree(&v.text) || v.alts.iter().any(|a| names_tree(&a.text)) {
                return None;
            }
        }
        let items: Vec<Vec<Arg>> = inv
            .args
            .iter()
            .map(|t| expand(t, self).ok())
            .collect::<Option<_>>()?;
        let words: Vec<super::super::git_readonly::Word<'_>> = inv
            .args
            .iter()
            .zip(&items)
            .map(|(t, items)| super::super::git_readonly::Word {
                raw: &t.text,
                items,
            })
            .collect();
        super::super::git_readonly::read_only(&words)
    }

    pub(super) fn command(&mut self, inv: &Invocation) -> Result<Flow, Stop> {
        let name = super::flow::lowercase(&inv.name);
        // Fetch commands are always the real ones (CPM.cmake defines CPMAddPackage as a
        // function that downloads; its effect is what is modelled here).
        if !is_fetch_command(&name)
            && let Some(def) = self.st.commands.get(&name).cloned()
        {
            return self.call(inv, def);
        }
        if NO_EFFECT.contains(&&*name) {
            return Ok(Flow::Next);
        }
        let mut args = self.expand_args(&inv.args)?;
        if is_fetch_command(&name) {
            args = list_elements(args);
        }
        match &*name {
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
                    // An error CMake reports, the command itself succeeding: CMake goes on
                    // with the next command, even in a function's or macro's body (which a
                    // failing command leaves).
                    let e = format!("{}: message(SEND_ERROR)", self.here(inv.line));
                    Rc::make_mut(&mut self.st.errors).push(e);
                    return Ok(Flow::Next);
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
                // Only git reading the repository: the tree's files stay the tree's.
                let git_files = self.git_reads(&name, inv).map(|r| r.files);
                let texts: Vec<&str> = match &git_files {
                    Some(files) => files.iter().map(String::as_str).collect(),
                    None => args.iter().map(|a| a.text.as_str()).collect(),
                };
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
                let at = (self.file(), inv.line);
                Rc::make_mut(&mut self.st.reached).insert(at);
                match args.as_slice() {
                    [] => {}
                    [name] => self.fc_populate_declared(name, inv.line)?,
                    [name, rest @ ..] => {
                        let f = self.fetch(Command::FetchContentPopulate, name, rest, inv.line);
                        Rc::make_mut(&mut self.st.fetches).push(f);
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
                let at = (self.file(), inv.line);
                Rc::make_mut(&mut self.st.reached).insert(at);
                if let Some((name, rest)) = args.split_first() {
                    let f = self.fetch(Command::ExternalProjectAdd, name, rest, inv.line);
                    Rc::make_mut(&mut self.st.fetches).push(f);
                }
            }
            "cpmaddpackage" => {
                let at = (self.file(), inv.line);
                Rc::make_mut(&mut self.st.reached).insert(at);
                self.cpm(&args, inv.line);
            }
            "cmake_language" | "variable_watch" | "load_cache" => {
                return Err(Stop::Undecided(format!(
                    "{}: {}() is not evaluated",
                    self.here(inv.line),
                    inv.name
                )));
            }
            "find_program" => {
                // `find_program(VAR NAMES git)` searching (VAR unset): the git found, which a
                // read-only git `execute_process` may run (`super::super::git_readonly`).
                let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                let git = super::super::git_readonly::finds_git(&texts).filter(|var| {
                    let before = self.var(var);
                    before.text.is_empty()
                        && before.alts.is_empty()
                        && before
                            .taint
                            .iter()
                            .all(|t| matches!(t, Input::Cache(n) if n == var))
                });
                self.taint_outputs(&args, &inv.name);
                if let Some(var) = git {
                    self.set_var(
                        &var,
                        Val::with(
                            "",
                            Input::Opaque(super::super::git_readonly::FOUND_GIT.into()),
                        ),
                    );
                }
            }
            _ => self.taint_outputs(&args, &inv.name),
        }
        Ok(Flow::Next)
    }

    /// Record the tree paths a command writes. A path with a finite set of values (a joined
    /// condition's sides) writes each; one any input can make anything may be anywhere (the
    /// whole tree), unless only a directory is made there; one in the build directory is
    /// outside the tree.
    pub(super) fn mark_written(&mut self, command: &str, args: &[Arg]) {
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

    /// `project()` with the files CMake reads at it (`hooks.rs`).
    fn project_with_hooks(&mut self, args: &[Arg], line: u32) -> Result<Flow, Stop> {
        let Some(name) = args.first().map(|a| a.text.clone()) else {
            return Ok(Flow::Next);
        };
        let first = !self.st.cache.contains_key("CMAKE_PROJECT_NAME");
        for (step, var) in super::super::hooks::steps(&name, first) {
            if step == super::super::hooks::Step::Project {
                self.cmd_project(args);
                continue;
            }
            let (Some(value), _) = self.defined_val(&var) else {
                continue;
            };
            let files = super::super::hooks::files(&var, &value)
                .map_err(|e| Stop::Undecided(format!("{}: {e}", self.here(line))))?;
            for file in files {
                self.cmd_include(&[file], line)?;
            }
        }
        Ok(Flow::Next)
    }

    pub(super) fn cmd_project(&mut self, args: &[Arg]) {
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
            self.st.cache.insert("CMAKE_PROJECT_NAME", Some(name.val()));
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
                    alts: crate::pin::cmake::value::Alts::new(),
                };
                self.set_var(&format!("PROJECT_VERSION_{suffix}"), val.clone());
                self.set_var(&format!("{}_VERSION_{suffix}", name.text), val);
            }
        }
    }

    /// Resolve a path argument against the current source directory.
    pub(super) fn path_arg(&self, a: &Arg) -> String {
        self.path_of(&a.text)
    }

    /// A path resolved against the current source directory.
    pub(super) fn path_of(&self, text: &str) -> String {
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

    pub(super) fn cmd_include(&mut self, args: &[Arg], line: u32) -> Result<Flow, Stop> {
        let Some(target) = args.first() else {
            return Err(Stop::Error(format!(
                "{}: include() without a file",
                self.here(line)
            )));
        };
        let optional = args.iter().skip(1).any(|a| a.text == "OPTIONAL");
        let result_var = args
            .iter()
            .position(|a| a.text == "RESULT_VARIABLE")
            .and_then(|i| args.get(i + 1))
            .map(|a| a.text.clone());
        if !target.taint.is_empty() {
            if let Some(why) = super::super::outside::build_dir_include(&target.text) {
                return Err(Stop::Undecided(format!("{}: {why}", self.here(line))));
            }
            let what = format!("{}: include({})", self.here(line), target.text);
            Rc::make_mut(&mut self.st.unread).insert(what);
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
                // A directory above the root: the tree's file when the view holds it (a
                // project below the repository's root), else one pinprobe cannot read, which
                // CMake would include before any module of its own.
                if let Some(up) = super::super::outside::above_root(&candidate) {
                    if !self.m.view.reaches_above(&up) {
                        return Err(Stop::Undecided(format!(
                            "{}: {}",
                            self.here(line),
                            super::super::outside::outside_include(&target.text, &candidate)
                        )));
                    }
                    if self.m.view.read(&up)?.is_some() {
                        path = Some(up);
                        break;
                    }
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
            // A file above the root that the view still holds (a project below the
            // repository's root including `../cmake/x.cmake`): read as CMake reads it.
            let above = || {
                super::super::outside::above_root(&full).filter(|up| self.m.view.reaches_above(up))
            };
            match view_path(&full).or_else(above) {
                Some(rel) => path = Some(rel),
                None => {
                    return Err(Stop::Undecided(format!(
                        "{}: {}",
                        self.here(line),
                        super::super::outside::outside_include(&target.text, &full)
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
        self.st.dirs.push(Rc::new(Dirs {
            source_dir,
            code_file: rel.as_str().into(),
            list_file: rel,
        }));
        self.st.depth += 1;
        let r = super::share::included(self, &nodes);
        self.st.depth -= 1;
        self.st.dirs.pop();
        // An included file shares its includer's scope: what it propagates is already there.
        self.st.returning.clear();
        r.map(|_| Flow::Next)
    }

    pub(super) fn cmd_add_subdirectory(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let Some(dir) = args.first() else {
            return Err(Stop::Error(format!(
                "{}: add_subdirectory() without a directory",
                self.here(line)
            )));
        };
        if !dir.taint.is_empty() {
            let what = format!("{}: add_subdirectory({})", self.here(line), dir.text);
            Rc::make_mut(&mut self.st.unread).insert(what);
            return Ok(());
        }
        let Some(rel) = view_path(&self.path_arg(dir)) else {
            let what = format!("{}: add_subdirectory({})", self.here(line), dir.text);
            Rc::make_mut(&mut self.st.unread).insert(what);
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
        self.st.dirs.push(Rc::new(Dirs {
            source_dir: rel,
            code_file: file.as_str().into(),
            list_file: file,
        }));
        self.st.depth += 1;
        let r = self.block(&nodes, false);
        self.st.depth -= 1;
        self.st.dirs.pop();
        self.st.scopes.pop();
        self.land_return();
        r.map(|_| ())
    }

    pub(super) fn cmd_filename_component(&mut self, args: &[Arg]) {
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
                    .and_then(super::super::paths::normalize)
                    .map(|p| format!("/{p}"))
            }
            _ => None,
        };
        let v = match text {
            Some(t) => Val {
                text: t,
                taint: file.taint.clone(),
                alts: crate::pin::cmake::value::Alts::new(),
            },
            None => Val::with(
                "",
                Input::Opaque(format!("get_filename_component({})", mode.text)),
            ),
        };
        self.set_var(&var.text, v);
    }

    pub(super) fn apply(
        &mut self,
        sets: Option<super::super::builtins::Sets>,
        args: &[Arg],
        command: &str,
    ) {
        match sets {
            Some(sets) => {
                for (name, v) in sets {
                    self.put_var(&name, v);
                }
            }
            None => self.taint_outputs(args, command),
        }
    }

    pub(super) fn cmd_list(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let sets = super::super::builtins::list(args, &|n| self.read_var(n))
            .map_err(|e| Stop::Error(format!("{}: {e}", self.here(line))))?;
        self.apply(sets, args, "list");
        Ok(())
    }

    pub(super) fn cmd_string(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let caret_once = self.policy("CMP0186", (4, 1));
        let sets = match super::super::builtins::string(args, &|n| self.read_var(n), caret_once) {
            Ok(sets) => sets,
            Err(e) => {
                let left =
                    super::super::builtins::string_failed(args, &|n| self.read_var(n), caret_once);
                self.apply(Some(left), args, "string");
                return Err(Stop::Error(format!("{}: {e}", self.here(line))));
            }
        };
        self.apply(sets, args, "string");
        Ok(())
    }

    pub(super) fn cmd_math(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let sets = super::super::builtins::math(args)
            .map_err(|e| Stop::Error(format!("{}: {e}", self.here(line))))?;
        self.apply(sets, args, "math");
        Ok(())
    }

    /// `file(STRINGS|READ|GLOB|GLOB_RECURSE|WRITE|APPEND ...)`; other forms make their
    /// outputs unknown.
    pub(super) fn cmd_file(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
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
                    let mut regex: Option<std::rc::Rc<super::super::regex::Regex>> = None;
                    let mut limit: Option<usize> = None;
                    let mut i = 0;
                    while let Some(o) = opts.get(i) {
                        match o.text.as_str() {
                            "REGEX" => {
                                let re = opts.get(i + 1).map(|a| a.text.as_str()).unwrap_or("");
                                match super::super::regexes::compiled(re) {
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
                        alts: crate::pin::cmake::value::Alts::new(),
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
                                .take_while(|s| !super::super::paths::is_glob(s))
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
                                    let f = super::super::paths::glob(self.m.view, &rel, recurse)?;
                                    self.m.globs.insert(key, f.clone());
                                    f
                                }
                            };
                            self.m.share_glob(&rel, recurse, &found);
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
                        alts: crate::pin::cmake::value::Alts::new(),
                    },
                );
            }
            "TOUCH_NOCREATE" | "CHMOD" | "CHMOD_RECURSE" => {}
            _ if writes::writes_files("file", Some(&op.text)) => self.mark_written("file", args),
            _ => self.taint_outputs(args, "file"),
        }
        Ok(())
    }
}
