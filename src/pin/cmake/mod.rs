//! CMake finder: every `FetchContent_Declare`, `ExternalProject_Add` and `CPMAddPackage` call
//! in `CMakeLists.txt` and under `cmake/`, with `set()` indirection resolved.
//!
//! (Stub: the full tokenizer and evaluator land with the CMake finder work.)

#[allow(dead_code)] // used by the evaluator, next commit
mod expand;
#[allow(dead_code)] // used by the evaluator, next commit
mod lexer;
#[allow(dead_code)] // used by the evaluator, next commit
mod paths;

use crate::target::{TargetError, View};

/// Which CMake command declared the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    FetchContentDeclare,
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
    pub git_repository: Option<Arg>,
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
}

/// Find every declaration in the view's `CMakeLists.txt` and `cmake/**`.
pub fn find(_view: &dyn View) -> Result<Vec<Declaration>, CmakeError> {
    Ok(Vec::new())
}
