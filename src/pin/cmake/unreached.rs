//! Declarations no configuration reaches, read from their own file alone: every declaring call
//! of a CMake file, its arguments expanded with the `set(NAME value)`s written before it in that
//! file (in order, whatever branch they sit in); any other reference is an input, its argument
//! unresolved. Only for reporting where a declaration sits and what it names: the evaluation
//! decides what is fetched.

use super::lexer::Invocation;
use super::value::{self, Input, Lookup, Val};
use super::{Arg, Command, Declaration};
use std::collections::HashMap;

/// The file's own `set()`s, as they stand at a point of the file.
struct FileScope {
    vars: HashMap<String, Val>,
}

impl Lookup for FileScope {
    fn var(&self, name: &str) -> Val {
        self.vars
            .get(name)
            .cloned()
            .unwrap_or_else(|| Val::with("", Input::Cache(name.to_string())))
    }
    fn env(&self, name: &str) -> Val {
        Val::with("", Input::Env(name.to_string()))
    }
    fn cache(&self, name: &str) -> Val {
        Val::with("", Input::Cache(name.to_string()))
    }
}

fn command_of(name: &str) -> Option<Command> {
    match name.to_ascii_lowercase().as_str() {
        "fetchcontent_declare" => Some(Command::FetchContentDeclare),
        "fetchcontent_populate" => Some(Command::FetchContentPopulate),
        "externalproject_add" => Some(Command::ExternalProjectAdd),
        "cpmaddpackage" => Some(Command::CpmAddPackage),
        _ => None,
    }
}

fn arg_of(a: &value::Arg) -> Arg {
    Arg {
        raw: a.text.clone(),
        value: a.taint.is_empty().then(|| a.text.clone()),
        line: a.line,
    }
}

/// Every declaring call of one file, in source order.
pub(super) fn declarations(file: &str, invocations: &[Invocation]) -> Vec<Declaration> {
    let mut scope = FileScope {
        vars: HashMap::new(),
    };
    let mut out = Vec::new();
    for inv in invocations {
        let mut args: Vec<value::Arg> = Vec::new();
        for token in &inv.args {
            match value::expand(token, &scope) {
                Ok(items) => args.extend(items),
                // Over the value cap: the argument stays unresolved.
                Err(_) => args.push(value::Arg {
                    text: token.text.clone(),
                    taint: [Input::Opaque("a value over the cap".into())]
                        .into_iter()
                        .collect(),
                    quoted: false,
                    line: token.line,
                    alts: crate::pin::cmake::value::Alts::new(),
                }),
            }
        }
        let name = inv.name.to_ascii_lowercase();
        if name == "set" {
            if let Some((var, rest)) = args.split_first() {
                let values: Vec<&value::Arg> = rest
                    .iter()
                    .take_while(|a| a.text != "CACHE" && a.text != "PARENT_SCOPE")
                    .collect();
                let val = Val {
                    text: values
                        .iter()
                        .map(|a| a.text.as_str())
                        .collect::<Vec<_>>()
                        .join(";"),
                    taint: values
                        .iter()
                        .flat_map(|a| a.taint.iter().cloned())
                        .collect(),
                    alts: crate::pin::cmake::value::Alts::new(),
                };
                scope.vars.insert(var.text.clone(), val);
            }
            continue;
        }
        let Some(command) = command_of(&name) else {
            continue;
        };
        let mut decl = if command == Command::CpmAddPackage {
            super::declare::cpm_of(&args)
        } else {
            let (first, rest) = match args.split_first() {
                Some((f, r)) => (Some(f), r),
                None => (None, args.as_slice()),
            };
            let groups = super::declare::group_args(rest);
            let value_of = |k: &str| {
                groups
                    .iter()
                    .rev()
                    .find(|(kw, _)| *kw == k)
                    .and_then(|(_, v)| v.first().map(|a| arg_of(a)))
            };
            Declaration {
                command,
                name: first.map(|a| a.text.clone()).unwrap_or_default(),
                file: String::new(),
                line: 0,
                git_repository: value_of("GIT_REPOSITORY"),
                git_tag: value_of("GIT_TAG"),
                url: value_of("URL"),
                source_dir: value_of("SOURCE_DIR"),
                patches: Vec::new(),
                overrides: Vec::new(),
            }
        };
        decl.command = command;
        decl.file = file.to_string();
        decl.line = inv.line;
        out.push(decl);
    }
    out
}
