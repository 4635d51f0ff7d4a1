//! The files of a pinned commit with the declared patches applied, as the signature matcher's
//! [`SourceFiles`]: what the build actually compiles, not only what the pin names.

use super::Repo;
use crate::view::SourceFiles;
use gix::ObjectId;

/// One file's part of a patch.
struct FilePatch {
    /// The patch file it came from (for error messages).
    origin: String,
    /// Path in the patched project (without the `a/`, `b/` prefixes).
    path: String,
    text: String,
}

/// A commit's tree, with unified-diff patches applied to the files they touch.
pub struct PatchedTree<'a> {
    clone: &'a Repo,
    commit: ObjectId,
    patches: Vec<FilePatch>,
}

fn strip_prefix(path: &str) -> &str {
    let path = path.split('\t').next().unwrap_or(path).trim();
    path.strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path)
}

/// Split a (git or plain) unified diff into one section per file. Only hunk lines (`@@`, ` `,
/// `+`, `-`, `\`) after a `---`/`+++` header belong to a section: git's `index` lines, mail
/// headers and the `-- ` signature trailer of `format-patch` output end it.
fn split(origin: &str, text: &str) -> Vec<FilePatch> {
    let mut out: Vec<FilePatch> = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut in_section = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let is_header =
            line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "));
        if is_header {
            let new = lines[i + 1].trim_start_matches("+++ ").trim_end();
            let old = line.trim_start_matches("--- ").trim_end();
            let path = if new == "/dev/null" {
                strip_prefix(old)
            } else {
                strip_prefix(new)
            };
            out.push(FilePatch {
                origin: origin.to_string(),
                path: path.to_string(),
                text: format!("{line}{}", lines[i + 1]),
            });
            in_section = true;
            i += 2;
            continue;
        }
        let hunk_line = line.starts_with("@@")
            || (line != "-- \n" && line.starts_with(['+', '-', ' ', '\\']))
            || line == "\n";
        match out.last_mut() {
            Some(current) if in_section && hunk_line => current.text.push_str(line),
            _ => in_section = false,
        }
        i += 1;
    }
    out
}

impl<'a> PatchedTree<'a> {
    /// `patches` are (patch file name, text) in the order the build applies them.
    pub fn new(clone: &'a Repo, commit: ObjectId, patches: &[(String, String)]) -> Self {
        let patches = patches
            .iter()
            .flat_map(|(origin, text)| split(origin, text))
            .collect();
        PatchedTree {
            clone,
            commit,
            patches,
        }
    }
}

impl SourceFiles for PatchedTree<'_> {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        let bytes = self
            .clone
            .file_at(&self.commit, path)
            .map_err(|e| e.to_string())?;
        let mut text = match bytes {
            Some(b) => Some(String::from_utf8(b).map_err(|_| format!("{path}: not valid UTF-8"))?),
            None => None,
        };
        for patch in self.patches.iter().filter(|p| p.path == path) {
            let parsed = diffy::Patch::from_str(&patch.text)
                .map_err(|e| format!("{}: cannot parse the part for {path}: {e}", patch.origin))?;
            let base = text.clone().unwrap_or_default();
            let applied = diffy::apply(&base, &parsed)
                .map_err(|e| format!("{} does not apply to {path}: {e}", patch.origin))?;
            text = Some(applied);
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_git_patches_per_file() {
        let text = "From abc\nSubject: x\n\ndiff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y.py b/y.py\nindex 3..4 100644\n--- a/y.py\n+++ b/y.py\n@@ -1 +1,2 @@\n c\n+d\n-- \n2.47.3\n\n";
        let parts = split("p.patch", text);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].path, "x.py");
        assert_eq!(parts[1].path, "y.py");
        assert!(parts[0].text.ends_with("+b\n"));
        assert!(diffy::Patch::from_str(&parts[1].text).is_ok());
        let applied =
            diffy::apply("a\n", &diffy::Patch::from_str(&parts[0].text).unwrap()).unwrap();
        assert_eq!(applied, "b\n");
    }
}
