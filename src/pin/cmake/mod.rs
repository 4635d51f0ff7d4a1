//! CMake finder: every `FetchContent_Declare`, `ExternalProject_Add` and `CPMAddPackage` call
//! in `CMakeLists.txt` and under `cmake/`, with `set()` indirection resolved.
//!
//! Files scanned: the root `CMakeLists.txt` first, then every `*.cmake` and `CMakeLists.txt`
//! under `cmake/` in sorted path order. They share one variable scope, as if the root file
//! included each of them in that order (good enough for vLLM, whose root `CMakeLists.txt`
//! includes its `cmake/` modules; a variable set in a later file is not seen by an earlier one).
//!
//! Stages, one file each: `lexer.rs` (CMake grammar to invocations), `expand.rs` (variables and
//! `${}`), `eval.rs` (commands in order: `set`, `if` nesting, declares), `declare.rs` (keywords,
//! CPM shorthand, patches, overrides), `paths.rs` (normalising and globbing view paths).

mod builtins;
mod cond;
mod declare;
mod eval;
mod evaluate;
mod expand;
mod interp;
mod lexer;
mod paths;
#[cfg(test)]
mod tests;
mod value;

pub use evaluate::{
    Assumption, Configuration, Evaluation, Fetch, Limits, Value, evaluate, evaluate_with,
};
pub use value::Input;

use crate::target::{TargetError, View};

/// Which CMake command declared the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    FetchContentDeclare,
    /// `FetchContent_Populate(name GIT_REPOSITORY ... GIT_TAG ...)`, the direct form.
    FetchContentPopulate,
    ExternalProjectAdd,
    CpmAddPackage,
}

/// One argument value as written and as evaluated.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Arg {
    /// The text as written, quotes removed (`${FA_TAG}`).
    pub raw: String,
    /// After `set()` expansion; `None` when a variable could not be resolved.
    pub value: Option<String>,
    /// 1-based line where the value is written.
    pub line: u32,
}

/// One declaration call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Declaration {
    pub command: Command,
    /// The dependency name (first argument; `NAME` for CPM).
    pub name: String,
    /// File relative to the view root.
    pub file: String,
    /// 1-based line of the command name.
    pub line: u32,
    /// `GIT_REPOSITORY`; for CPM also `GITHUB_REPOSITORY owner/repo` (value
    /// `https://github.com/owner/repo`), `GITLAB_`/`BITBUCKET_REPOSITORY` and the shorthand.
    pub git_repository: Option<Arg>,
    /// `GIT_TAG`. For `CPMAddPackage` without one: the shorthand's `#tag`, else `VERSION` (or
    /// the shorthand's `@version`) as written, with the value `v<VERSION>` that CPM derives.
    pub git_tag: Option<Arg>,
    /// `URL` (a tarball) when the dependency is not fetched from git.
    pub url: Option<Arg>,
    pub source_dir: Option<Arg>,
    /// Patch files applied by `PATCH_COMMAND`, relative to the view root where resolvable.
    pub patches: Vec<String>,
    /// Variables (cmake or environment) that can bypass the pin, e.g. `VLLM_FLASH_ATTN_SRC_DIR`.
    pub overrides: Vec<String>,
}

/// Why a CMake file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CmakeError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: u32,
        message: String,
    },
    #[error("{file}: not valid UTF-8 (byte {offset})")]
    NotUtf8 { file: String, offset: usize },
    #[error("{file}: {size} bytes, over the {MAX_CMAKE_BYTES}-byte cap for a CMake file")]
    TooLarge { file: String, size: usize },
}

/// The largest CMake file read (vLLM's largest is about 50 KB). With the tokenizer's budget of
/// a million tokens (which bounds their count), this bounds the finder's memory.
pub const MAX_CMAKE_BYTES: usize = 4 * 1024 * 1024;

/// Find every declaration in the view's `CMakeLists.txt` and `cmake/**`, in file order, then
/// source order.
///
/// `Arg.value` is `None` when any variable the argument references is unknown (unset, from
/// `$ENV{}`, a built-in such as `CMAKE_BINARY_DIR`). The built-in source directories map to
/// view-relative paths: `CMAKE_SOURCE_DIR`, `PROJECT_SOURCE_DIR` = `""` (the root, with the `/`
/// after it dropped), `CMAKE_CURRENT_LIST_DIR` = the file's directory, and
/// `CMAKE_CURRENT_SOURCE_DIR` = the directory of the `CMakeLists.txt` being processed (the root
/// for `.cmake` modules, which the root file includes).
///
/// `overrides` lists, sorted and deduplicated: the variables and `$ENV{}` names in `SOURCE_DIR`
/// when no download source (`GIT_REPOSITORY`, `URL`, ...) is given; the `*_DIR` variables and
/// `ENV{*_DIR}` names tested by enclosing `if()`/`elseif()`; for each such variable, what its
/// `set()`s were derived from (other variables, `$ENV{X}`, and `ENV{X}` tested around the
/// `set()`); and `FETCHCONTENT_SOURCE_DIR_<NAME>` for a `FetchContent_Declare` when that
/// variable is mentioned anywhere in the scanned files.
pub fn find(view: &dyn View) -> Result<Vec<Declaration>, CmakeError> {
    let mut files = vec!["CMakeLists.txt".to_string()];
    files.extend(view.files_under("cmake")?.into_iter().filter(|f| {
        f.ends_with(".cmake") || f == "cmake/CMakeLists.txt" || f.ends_with("/CMakeLists.txt")
    }));
    let mut eval = eval::Evaluator::new(view);
    let mut mentioned = std::collections::BTreeSet::new();
    for file in &files {
        let Some(bytes) = view.read(file)? else {
            continue;
        };
        if bytes.len() > MAX_CMAKE_BYTES {
            return Err(CmakeError::TooLarge {
                file: file.clone(),
                size: bytes.len(),
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| CmakeError::NotUtf8 {
            file: file.clone(),
            offset: e.valid_up_to(),
        })?;
        let invocations = tokenize_file(file, &bytes)?;
        mentioned.extend(fetchcontent_overrides_in(text));
        eval.file(file, &invocations)?;
    }
    let mut declarations = eval.declarations;
    for decl in &mut declarations {
        if decl.command != Command::FetchContentDeclare {
            continue;
        }
        let var = format!(
            "FETCHCONTENT_SOURCE_DIR_{}",
            decl.name.to_ascii_uppercase().replace('-', "_")
        );
        if mentioned.contains(&var) && !decl.overrides.contains(&var) {
            decl.overrides.push(var);
            decl.overrides.sort();
        }
    }
    Ok(declarations)
}

/// Every `FETCHCONTENT_SOURCE_DIR_<X>` name written in a file (comments included: a comment
/// telling users to set it is as good a sign as code that does).
fn fetchcontent_overrides_in(text: &str) -> Vec<String> {
    const PREFIX: &str = "FETCHCONTENT_SOURCE_DIR_";
    text.match_indices(PREFIX)
        .filter_map(|(at, _)| {
            let rest = text.get(at..)?;
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest.get(..end).map(str::to_string)
        })
        .collect()
}

/// Check a CMake file's size and encoding and split it into invocations.
fn tokenize_file(file: &str, bytes: &[u8]) -> Result<Vec<lexer::Invocation>, CmakeError> {
    if bytes.len() > MAX_CMAKE_BYTES {
        return Err(CmakeError::TooLarge {
            file: file.to_string(),
            size: bytes.len(),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| CmakeError::NotUtf8 {
        file: file.to_string(),
        offset: e.valid_up_to(),
    })?;
    lexer::tokenize(text).map_err(|e| CmakeError::Syntax {
        file: file.to_string(),
        line: e.line,
        message: e.message,
    })
}
