//! CMake: what a tree's build fetches, by evaluating its CMake code as `cmake -S` configures it
//! ([`evaluate`]): every configuration CMake could take, what each fetches, and the declaring
//! calls no configuration reaches.
//!
//! Stages, one file each: `lexer.rs` (CMake grammar to invocations), `value.rs` (values, the
//! inputs they depend on, `${}` expansion), `interp/` (one run of the program, one concern a
//! file: `parse.rs` blocks, `flow.rs` control flow and calls, `join.rs` joined decisions,
//! `scope.rs` variables, cache and policies, `commands.rs` the other commands, `fetch.rs`
//! FetchContent/ExternalProject/CPM, `share.rs` one revision's runs shared with another's for
//! `pinprobe diff`), `cond.rs` (`if()` conditions), `builtins.rs`
//! (`string()`, `list()`, `math()`), `fetches.rs` (what a configuration fetches, as values),
//! `evaluate.rs` (runs over configurations, presets, build scripts; uses `interp`, never the
//! reverse), `declare.rs` (keywords, CPM shorthand), `unreached.rs` (declarations no run
//! reaches, read from their own file), `paths.rs` (the source root, normalising and globbing
//! view paths), `writes.rs` (what the configuration writes into the tree, which it then reads
//! as unknown).

mod builtins;
mod cond;
mod declare;
mod evaluate;
mod fetches;
mod git_readonly;
mod hooks;
mod interp;
mod json;
mod lexer;
#[cfg(test)]
mod live;
mod outside;
mod paths;
mod regex;
mod regexes;
mod shared;
#[cfg(test)]
mod tests;
mod unreached;
mod value;
mod writes;

pub use evaluate::{Assumption, Configuration, Evaluation, Limits, evaluate, evaluate_with};
pub use fetches::{Alternative, Fetch, JoinOutcome, Value};
pub use interp::share::{Changed, Sharing};
pub use value::Input;

/// A path relative to a tree's root, `.` and `..` resolved; `None` when it leaves the tree.
pub fn normalize_path(path: &str) -> Option<String> {
    paths::normalize(path)
}

/// Whether a lists file calls `project()` (any case, any spacing before the parenthesis, as
/// CMake reads it). A file CMake could not read either way counts as calling it, so that a
/// directory is evaluated rather than passed over.
pub fn calls_project(text: &str) -> bool {
    match lexer::tokenize(text) {
        Ok(invocations) => invocations
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case("project")),
        Err(_) => true,
    }
}

use crate::view::TargetError;

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
