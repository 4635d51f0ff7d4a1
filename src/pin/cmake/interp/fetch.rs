//! Fetch declarations: FetchContent, ExternalProject, CPM.

use super::*;

impl Run<'_, '_> {
    pub(super) fn fc_declare(&mut self, args: &[Arg], line: u32) -> Result<(), Stop> {
        let at = (self.file(), line);
        Rc::make_mut(&mut self.st.reached).insert(at);
        let Some((name, rest)) = args.split_first() else {
            return Ok(());
        };
        let lc = name.text.to_ascii_lowercase();
        // The first declaration of a name wins; later ones are ignored.
        if !self.st.declared.contains_key(&lc) {
            let details = Details {
                args: std::iter::once(name.clone())
                    .chain(rest.iter().cloned())
                    .collect(),
                file: self.file(),
                line,
            };
            self.st.declared.insert(lc, details);
        }
        Ok(())
    }

    pub(super) fn fc_populate_declared(&mut self, name: &Arg, line: u32) -> Result<(), Stop> {
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
                Rc::make_mut(&mut self.st.populated).insert(lc.clone());
                self.fetch_declared_alternatives(&lc, line);
                return Ok(());
            }
            return Err(Stop::Fatal(format!(
                "{}: no FetchContent_Declare() details for `{}`",
                self.here(line),
                name.text
            )));
        };
        Rc::make_mut(&mut self.st.populated).insert(lc.clone());
        let var = format!("FETCHCONTENT_SOURCE_DIR_{}", name.text.to_ascii_uppercase());
        let (v, mut taint) = self.defined_val(&var);
        let local = match v {
            // Empty by default and set by inputs that have a default (`$ENV{...}`, `-D`): the
            // default downloads, and the inputs can replace the download by a local directory,
            // which changes nothing else the run follows (no variable here depends on it). So
            // the download stands with those inputs as its bypass, as for an unset variable,
            // instead of a configuration of its own (the reference run still forks).
            Some(v)
                if !self.m.fork_all
                    && !v.taint.is_empty()
                    && cond::is_off(&v.text)
                    && v.taint.iter().all(Input::has_default) =>
            {
                taint.extend(v.taint);
                None
            }
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
        Rc::make_mut(&mut self.st.fetches).push(f);
        self.fetch_declared_alternatives(&lc, line);
        Ok(())
    }

    /// What the other side of a joined condition declared instead (or only there).
    pub(super) fn fetch_declared_alternatives(&mut self, lc: &str, line: u32) {
        for (alt, mark) in self.st.declared_alt.get(lc).cloned().unwrap_or_default() {
            let Some((n, r)) = alt.args.split_first() else {
                continue;
            };
            let mut g = self.fetch_at(Command::FetchContentDeclare, n, r, &alt.file, alt.line);
            g.populated_at = Some((self.file(), line));
            g.only_if.push(mark);
            if !self.st.fetches.contains(&g) {
                Rc::make_mut(&mut self.st.fetches).push(g);
            }
        }
    }

    pub(super) fn fetch(&self, command: Command, name: &Arg, rest: &[Arg], line: u32) -> Fetch {
        let file = self.file();
        self.fetch_at(command, name, rest, &file, line)
    }

    pub(super) fn fetch_at(
        &self,
        command: Command,
        name: &Arg,
        rest: &[Arg],
        file: &str,
        line: u32,
    ) -> Fetch {
        let groups = super::super::declare::group_args(rest);
        let first = |k: &str| -> Option<&Arg> {
            groups
                .iter()
                .rev()
                .find(|(kw, _)| *kw == k)
                .and_then(|(_, v)| v.first().copied())
        };
        let has_download = super::super::declare::DOWNLOADS
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

    pub(super) fn cpm(&mut self, args: &[Arg], line: u32) {
        let taint: Taint = args.iter().flat_map(|a| a.taint.iter().cloned()).collect();
        let decl = super::super::declare::cpm_of(args);
        let with = |text: Option<String>| {
            text.map(|t| Value {
                text: t,
                inputs: taint.iter().cloned().collect(),
                alternatives: Vec::new(),
            })
        };
        let lc = decl.name.to_ascii_lowercase();
        if !Rc::make_mut(&mut self.st.cpm_added).insert(lc) {
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
        Rc::make_mut(&mut self.st.fetches).push(f);
    }
}

/// The arguments as a function implemented in CMake sees them through `${ARGN}` (as
/// FetchContent, ExternalProject and CPM are): a quoted list is its elements, so
/// `GIT_TAG "a;b"` is the tag `a` and an element `GIT_TAG` inside a quoted value is a keyword.
pub(super) fn list_elements(args: Vec<Arg>) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let items = super::super::value::elements(&a.text);
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
                alts: crate::pin::cmake::value::Alts::new(),
            });
        }
    }
    out
}

pub(super) fn is_fetch_command(name: &str) -> bool {
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
