//! Variables and scopes: normal variables, the cache, the environment, policies.

use super::*;

impl Run<'_, '_> {
    pub(super) fn scope_mut(&mut self) -> &mut Shared<Val> {
        if self.st.scopes.is_empty() {
            self.st.scopes.push(Shared::default());
        }
        let n = self.st.scopes.len() - 1;
        &mut self.st.scopes[n]
    }

    /// `include_guard([DIRECTORY|GLOBAL])`: the rest of the file is skipped where the guard was
    /// reached before (the default scope is the variable scope, as CMake's own variable).
    pub(super) fn include_guard(&mut self, args: &[Arg]) -> Flow {
        let Some(dirs) = self.st.dirs.last() else {
            return Flow::Next;
        };
        let file = dirs.list_file.clone();
        let dir = dirs.source_dir.clone();
        match args.first().map(|a| a.text.as_str()) {
            Some("GLOBAL") => {
                if !Rc::make_mut(&mut self.st.guards).insert((None, file)) {
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
                Rc::make_mut(&mut self.st.guards).insert((Some(dir), file));
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
    pub(super) fn land_return(&mut self) {
        for (name, v) in std::mem::take(&mut self.st.returning) {
            self.put_var(&name, v);
        }
    }

    /// Set a variable of the current scope, or unset it (`None`).
    pub(super) fn put_var(&mut self, name: &str, v: Option<Val>) {
        match v {
            Some(v) => self.set_var(name, v),
            None => {
                self.scope_mut().remove(name);
            }
        }
    }

    pub(super) fn set_var(&mut self, name: &str, v: Val) {
        self.scope_mut().insert(name.to_string(), v);
    }

    pub(super) fn defined_val(&self, name: &str) -> (Option<Val>, Taint) {
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

    pub(super) fn defined_val_plain(&self, name: &str) -> (Option<Val>, Taint) {
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

    pub(super) fn builtin(&self, name: &str) -> Option<Val> {
        let dirs = self.st.dirs.last()?;
        Some(match name {
            "CMAKE_SOURCE_DIR" => Val::exact(SOURCE_ROOT),
            // Before any `project()`: CMake's implicit one, at the top.
            "PROJECT_SOURCE_DIR" => Val::exact(SOURCE_ROOT),
            "CMAKE_CURRENT_SOURCE_DIR" => Val::exact(abs(&dirs.source_dir)),
            "CMAKE_CURRENT_LIST_DIR" => Val::exact(abs(parent_dir(&dirs.list_file))),
            "CMAKE_CURRENT_LIST_FILE" => Val::exact(abs(&dirs.list_file)),
            // The line of the command running, in whichever file its text lies (a called
            // function's or macro's statement: its own line, while the list file is the
            // caller's).
            "CMAKE_CURRENT_LIST_LINE" => Val::exact(self.line.to_string()),
            "CMAKE_BINARY_DIR" | "PROJECT_BINARY_DIR" | "CMAKE_CURRENT_BINARY_DIR" => {
                Val::with(BINARY_ROOT, Input::Opaque("the build directory".into()))
            }
            _ => return None,
        })
    }

    /// A command pinprobe does not model may set any variable named in its arguments. Any
    /// text is a name: CMake commands take names of any characters (`get_property("a:b" ...)`)
    /// and a nested reference (`${${n}}`) reads any name back.
    pub(super) fn taint_outputs(&mut self, args: &[Arg], command: &str) {
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

    pub(super) fn cmd_set(&mut self, args: &[Arg], raw_name: &str, line: u32) -> Result<(), Stop> {
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

    pub(super) fn policy(&self, id: &str, introduced: (u64, u64)) -> bool {
        self.st
            .policies
            .get(id)
            .copied()
            .unwrap_or(self.st.policy_version >= introduced)
    }

    pub(super) fn cmd_unset(&mut self, args: &[Arg]) {
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

    pub(super) fn cmd_option(&mut self, args: &[Arg]) {
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

    pub(super) fn cmd_policy(&mut self, args: &[Arg]) {
        let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        match texts.as_slice() {
            ["VERSION", v, ..] => {
                // `min...max`: policies as of `max` (every CMake that runs this knows them).
                let version = v.rsplit("...").next().unwrap_or(v);
                let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
                self.st.policy_version = (parts.next().unwrap_or(3), parts.next().unwrap_or(0));
                self.st.policies = Rc::default();
            }
            ["SET", id, value, ..] => {
                Rc::make_mut(&mut self.st.policies).insert(id.to_string(), *value == "NEW");
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

    pub(super) fn cmd_parse_arguments(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let parse_argv = args.first().is_some_and(|a| a.text == "PARSE_ARGV");
        // CMP0174 (3.31): the PARSE_ARGV form defines a single-value keyword given without a
        // value (or with an empty one) as an empty string; before it, and in the other form,
        // such a keyword leaves the variable undefined.
        let empty_defined = parse_argv && self.policy("CMP0174", (3, 31));
        let (values, prefix, opts, one, multi): (Vec<Val>, _, _, _, _) = if parse_argv {
            let n: usize = args
                .get(1)
                .and_then(|a| a.text.parse().ok())
                // CMake stops the configuration here (CMake 4.4).
                .ok_or_else(|| Stop::Fatal(format!("{}: PARSE_ARGV index", self.here(line))))?;
            // Outside a function `ARGC` is whatever a variable of that name holds: CMake stops
            // when it is no count. One an input sets (`-DARGC=`) cannot be followed.
            let argc = self.read_var("ARGC");
            if !argc.taint.is_empty() {
                return Err(Stop::Undecided(format!(
                    "{}: PARSE_ARGV with ARGC from an input (outside a function)",
                    self.here(line)
                )));
            }
            let argc: usize = argc.text.parse().map_err(|_| {
                Stop::Fatal(format!(
                    "{}: PARSE_ARGV with ARGC `{}`, no count",
                    self.here(line),
                    argc.text
                ))
            })?;
            let vals = (n..argc)
                .map(|i| self.read_var(&format!("ARGV{i}")))
                .collect();
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

    /// A variable's value as commands read it by name (`cmake_parse_arguments(PARSE_ARGV)`'s
    /// `ARGC` and `ARGV<n>`): a macro's arguments replace `${...}` references only, they are
    /// no variables.
    pub(super) fn read_var(&self, name: &str) -> Val {
        match self.defined_val(name) {
            (Some(v), _) => v,
            (None, taint) => Val {
                text: String::new(),
                taint,
                alts: crate::pin::cmake::value::Alts::new(),
            },
        }
    }
}
