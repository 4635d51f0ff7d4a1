//! FlashAttention 4 sources shipped in an environment: vLLM's bundled fork copy
//! (`vllm/vllm_flash_attn/cute/`), other bundled copies (`vllm/third_party/<name>/`), and
//! standalone flash-attn-4 (`flash_attn/cute/`). Each is read as the project's own layout
//! (`flash_attn/cute/*.py`) with vLLM's import rewrite undone, so rule signatures and
//! fingerprints see the upstream text.

/// The bounded ELF dynamic-symbol reader lives with the views that stream files to it (an image
/// reads a library once, from its layer); signatures use it from here.
pub use crate::view::elf;
pub mod env;
pub mod import_path;
pub mod library_cache;
pub mod pth;
pub mod record;

use crate::view::SourceFiles;
use crate::view::{TargetError, View};
use env::{Dist, Env};
use record::{Check, Record};
use std::cell::RefCell;

/// Where signatures name FA4 files: `flash_attn/cute/<file>`.
pub const CUTE_PREFIX: &str = "flash_attn/cute/";

/// Where signatures name files of the vLLM fork's own Python package: `vllm_flash_attn/<file>`.
pub const FORK_PACKAGE_PREFIX: &str = "vllm_flash_attn/";

/// One shipped copy of the FA4 sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedCopy {
    /// Component name: `flash-attention` (vLLM's fork, bundled), `flash-attention-upstream`
    /// (standalone flash-attn-4), or the third-party directory's name.
    pub component: String,
    /// The directory holding the `cute` files, relative to the view root.
    pub dir: String,
    /// The Python module of that directory (`vllm.vllm_flash_attn.cute`).
    pub module: String,
    /// The distribution that ships it, if known.
    pub owner: Option<Dist>,
}

impl ShippedCopy {
    /// The directory relative to its environment root (RECORD's paths).
    pub fn dir_in_env<'a>(&'a self, env: &Env) -> &'a str {
        if env.root.is_empty() {
            &self.dir
        } else {
            self.dir
                .strip_prefix(&env.root)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(&self.dir)
        }
    }

    /// The view path of a signature path: a cute file (`flash_attn/cute/x.py`) in any copy;
    /// for vLLM's bundled fork copy also the fork's own package (`vllm_flash_attn/x.py`, which
    /// vLLM ships beside `cute/` in `vllm/vllm_flash_attn/`).
    pub fn view_path(&self, signature_path: &str) -> Option<String> {
        if let Some(rest) = signature_path.strip_prefix(CUTE_PREFIX) {
            return Some(format!("{}/{rest}", self.dir));
        }
        let rest = signature_path.strip_prefix(FORK_PACKAGE_PREFIX)?;
        let package = self.dir.strip_suffix("/cute")?;
        (self.module == "vllm.vllm_flash_attn.cute").then(|| format!("{package}/{rest}"))
    }
}

fn has_cute_files(view: &dyn View, dir: &str) -> Result<bool, TargetError> {
    Ok(view
        .children(dir)?
        .iter()
        .any(|c| c == "block_info.py" || c == "interface.py" || c.starts_with("flash_fwd")))
}

/// Every FA4 copy in `env`.
pub fn find(view: &dyn View, env: &Env) -> Result<Vec<ShippedCopy>, TargetError> {
    let vllm = env.dist("vllm").cloned();
    let mut out = Vec::new();
    let bundled = env.join("vllm/vllm_flash_attn/cute");
    if has_cute_files(view, &bundled)? {
        out.push(ShippedCopy {
            component: "flash-attention".into(),
            dir: bundled,
            module: "vllm.vllm_flash_attn.cute".into(),
            owner: vllm.clone(),
        });
    }
    let third_party = env.join("vllm/third_party");
    for child in view.children(&third_party)? {
        let Some(name) = child.strip_suffix('/') else {
            continue;
        };
        for (dir, module) in [
            (
                format!("{third_party}/{name}/cute"),
                format!("vllm.third_party.{name}.cute"),
            ),
            (
                format!("{third_party}/{name}"),
                format!("vllm.third_party.{name}"),
            ),
        ] {
            if has_cute_files(view, &dir)? {
                out.push(ShippedCopy {
                    component: name.to_string(),
                    dir,
                    module,
                    owner: vllm.clone(),
                });
                break;
            }
        }
    }
    let standalone = env.join("flash_attn/cute");
    if has_cute_files(view, &standalone)? {
        out.push(ShippedCopy {
            component: "flash-attention-upstream".into(),
            dir: standalone,
            module: "flash_attn.cute".into(),
            owner: env
                .dists
                .iter()
                .find(|d| d.normalized().starts_with("flash-attn"))
                .cloned(),
        });
    }
    Ok(out)
}

/// Undo a copy's import rewrite: `vllm.vllm_flash_attn.cute` back to `flash_attn.cute`.
pub fn normalise(text: &str, module: &str) -> String {
    if module == "flash_attn.cute" {
        return text.to_string();
    }
    let parent = module.strip_suffix(".cute").unwrap_or(module);
    text.replace(module, "flash_attn.cute")
        .replace(parent, "flash_attn")
}

/// A file the verdict read, and what RECORD says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    pub path: String,
    pub check: Option<Check>,
}

/// A copy's files as [`SourceFiles`] in the project's own layout, remembering what was read.
pub struct ShippedFiles<'a> {
    pub view: &'a dyn View,
    pub copy: &'a ShippedCopy,
    pub env: &'a Env,
    pub record: Option<&'a Record>,
    pub reads: RefCell<Vec<FileRead>>,
}

impl SourceFiles for ShippedFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        let Some(view_path) = self.copy.view_path(path) else {
            return Ok(None);
        };
        let Some(bytes) = self.view.read(&view_path).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        // A wheel member installed from `NAME.data/purelib/` (or a name pip normalises) is
        // listed in RECORD under its archive name.
        let in_env = match self.view.origin(&view_path) {
            Some(origin) if self.env.root.is_empty() => origin,
            _ => self.env.in_env(&view_path),
        };
        self.reads.borrow_mut().push(FileRead {
            path: view_path.clone(),
            check: self.record.map(|r| r.check(&in_env, &bytes)),
        });
        let text = String::from_utf8(bytes).map_err(|_| format!("{view_path}: not valid UTF-8"))?;
        Ok(Some(normalise(&text, &self.copy.module)))
    }

    fn shipped(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn undoes_vllms_import_rewrite() {
        let text = "from vllm.vllm_flash_attn.cute.block_info import BlockInfo\nimport vllm.vllm_flash_attn.cute.utils as utils\n";
        assert_eq!(
            normalise(text, "vllm.vllm_flash_attn.cute"),
            "from flash_attn.cute.block_info import BlockInfo\nimport flash_attn.cute.utils as utils\n"
        );
        assert_eq!(normalise(text, "flash_attn.cute"), text);
    }
}
