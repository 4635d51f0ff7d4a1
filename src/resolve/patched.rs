//! The files of a pinned commit with the declared patches applied, as the signature matcher's
//! [`SourceFiles`]: what the build actually compiles, not only what the pin names.
//!
//! A pin's patch step names its patch files, not always the tool that applies them, so each
//! file's part is applied as `git apply` and as GNU `patch -p1` apply it ([`super::apply`]),
//! in the order the build names them; only a result both tools agree on is used. A patch file
//! the tree lacks, one that does not parse, does not apply, or that the tools would apply
//! differently makes the whole patched source unknown ([`PatchedTree::failure`]), never the
//! unpatched commit's files.

use super::Repo;
use super::apply::{self, FileDiff, Tool};
use crate::view::SourceFiles;
use gix::ObjectId;
use std::collections::BTreeMap;

/// A pin's declared patches, read from the tree and split into per-file parts.
#[derive(Debug, Clone, Default)]
pub struct PatchSet {
    /// The patch files, as declared.
    pub names: Vec<String>,
    parts: Vec<FileDiff>,
    /// Why the parts are not all known: a file missing or not a patch pinprobe can read.
    failure: Option<String>,
}

impl PatchSet {
    /// `patches`: (patch file, its text, `None` when the tree does not hold it), in the order
    /// the build applies them.
    pub fn new(patches: &[(String, Option<String>)]) -> PatchSet {
        let mut set = PatchSet {
            names: patches.iter().map(|(n, _)| n.clone()).collect(),
            ..PatchSet::default()
        };
        for (name, text) in patches {
            let Some(text) = text else {
                set.failure.get_or_insert_with(|| {
                    format!("{name} is declared by the patch step but is not in the tree")
                });
                continue;
            };
            match apply::parse(name, text) {
                Ok(parts) => set.parts.extend(parts),
                Err(why) => {
                    set.failure.get_or_insert(why);
                }
            }
        }
        set
    }

    /// Whether the pin declares no patches.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The files the patches change, each with the first patch file that changes it; `Err`
    /// when that is not known.
    pub fn touched(&self) -> Result<Vec<(String, String)>, String> {
        if let Some(why) = &self.failure {
            return Err(why.clone());
        }
        let mut out: Vec<(String, String)> = Vec::new();
        for part in &self.parts {
            for path in [&part.old, &part.new].into_iter().flatten() {
                if !out.iter().any(|(p, _)| p == path) {
                    out.push((path.clone(), part.origin.clone()));
                }
            }
        }
        Ok(out)
    }
}

/// A commit's tree, with unified-diff patches applied to the files they touch.
pub struct PatchedTree<'a> {
    clone: &'a Repo,
    commit: ObjectId,
    /// The files the patches change, as both tools leave them (`None`: deleted).
    changed: BTreeMap<String, Option<String>>,
    /// Why the patched source is not known.
    failure: Option<String>,
    touched: Vec<(String, String)>,
}

impl<'a> PatchedTree<'a> {
    /// The commit's tree with `patches` applied, every part at once (a part that fails makes
    /// the build's patch step fail, whichever file a signature reads).
    pub fn new(clone: &'a Repo, commit: ObjectId, patches: &PatchSet) -> Self {
        let mut tree = PatchedTree {
            clone,
            commit,
            changed: BTreeMap::new(),
            failure: None,
            touched: Vec::new(),
        };
        match patches.touched() {
            Ok(t) => tree.touched = t,
            Err(why) => {
                tree.failure = Some(why);
                return tree;
            }
        }
        let short = &commit.to_string()[..12];
        for part in &patches.parts {
            let path = part.path().to_string();
            let base = match tree.changed.get(&path) {
                Some(text) => text.clone(),
                None => match tree.original(&path) {
                    Ok(text) => text,
                    Err(why) => {
                        tree.failure = Some(why);
                        return tree;
                    }
                },
            };
            let git = apply::apply(part, base.as_deref(), Tool::GitApply);
            let gnu = apply::apply(part, base.as_deref(), Tool::GnuPatch);
            let after = match (git, gnu) {
                (Ok(a), Ok(b)) if a == b => Ok(a),
                (Ok(_), Ok(_)) => Err(format!(
                    "{}: git apply and patch -p1 would leave {path} different at {short}",
                    part.origin
                )),
                (Err(why), _) | (_, Err(why)) => Err(format!("{why} (at {short})")),
            };
            match after {
                Ok(text) => {
                    tree.changed.insert(path, text);
                }
                Err(why) => {
                    tree.failure = Some(format!("the patch step fails or is not modelled: {why}"));
                    return tree;
                }
            }
        }
        tree
    }

    fn original(&self, path: &str) -> Result<Option<String>, String> {
        let bytes = self
            .clone
            .file_at(&self.commit, path)
            .map_err(|e| e.to_string())?;
        match bytes {
            Some(b) => String::from_utf8(b)
                .map(Some)
                .map_err(|_| format!("{path}: not valid UTF-8")),
            None => Ok(None),
        }
    }

    /// Why the patched source is not known (a patch missing, unreadable, not applying, or
    /// applied differently by the two tools); `None` when every patch applied.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The files the patches change, each with the patch file that first changes it.
    pub fn touched(&self) -> &[(String, String)] {
        &self.touched
    }
}

impl SourceFiles for PatchedTree<'_> {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        if let Some(why) = &self.failure {
            return Err(why.clone());
        }
        match self.changed.get(path) {
            Some(text) => Ok(text.clone()),
            None => self.original(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::test_git::git;

    fn repo() -> (tempfile::TempDir, Repo, ObjectId) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("x.py"), "a\nb\nc\n").expect("write");
        std::fs::write(dir.join("y.py"), "keep\n").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        let head = git(dir, &["rev-parse", "HEAD"]);
        let repo = Repo::open(dir).expect("opens");
        let id = ObjectId::from_hex(head.as_bytes()).expect("hex");
        (tmp, repo, id)
    }

    fn set(patches: &[(&str, Option<&str>)]) -> PatchSet {
        PatchSet::new(
            &patches
                .iter()
                .map(|(n, t)| (n.to_string(), t.map(str::to_string)))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn patches_apply_in_order_and_name_what_they_touch() {
        let (_tmp, repo, id) = repo();
        let one = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
        let two = "From x\n\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-B\n+BB\n c\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+n\n";
        let patches = set(&[("p/1.patch", Some(one)), ("p/2.patch", Some(two))]);
        let tree = PatchedTree::new(&repo, id, &patches);
        assert_eq!(tree.failure(), None);
        assert_eq!(
            tree.read("x.py").expect("reads").as_deref(),
            Some("a\nBB\nc\n")
        );
        assert_eq!(tree.read("new.py").expect("reads").as_deref(), Some("n\n"));
        assert_eq!(tree.read("y.py").expect("reads").as_deref(), Some("keep\n"));
        assert_eq!(tree.read("none.py").expect("reads"), None);
        assert_eq!(
            tree.touched(),
            [
                ("x.py".to_string(), "p/1.patch".to_string()),
                ("new.py".to_string(), "p/2.patch".to_string())
            ]
        );
    }

    #[test]
    fn a_patch_set_without_a_clone_names_what_its_files_change() {
        // What `judge::source` reports when no clone holds the pinned commit: the patch
        // files' own word, one entry per path (old and new side), the first file
        // that changes it; nothing declared is empty, a declared file missing is not.
        assert!(set(&[]).is_empty());
        assert_eq!(set(&[]).touched(), Ok(vec![]));
        let one = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
        let gone_and_new = "--- a/y.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep\n--- /dev/null\n+++ b/z.py\n@@ -0,0 +1 @@\n+z\n";
        let both = set(&[
            ("p/1.patch", Some(one)),
            ("p/2.patch", Some(one)),
            ("p/3.patch", Some(gone_and_new)),
        ]);
        assert!(!both.is_empty());
        assert_eq!(both.names, ["p/1.patch", "p/2.patch", "p/3.patch"]);
        assert_eq!(
            both.touched(),
            Ok(vec![
                ("x.py".to_string(), "p/1.patch".to_string()),
                ("y.py".to_string(), "p/3.patch".to_string()),
                ("z.py".to_string(), "p/3.patch".to_string()),
            ])
        );
        let gone = set(&[("p/gone.patch", None), ("p/1.patch", Some(one))]);
        assert!(!gone.is_empty());
        assert_eq!(
            gone.touched(),
            Err("p/gone.patch is declared by the patch step but is not in the tree".to_string())
        );
    }

    #[test]
    fn a_patch_missing_unreadable_or_not_applying_makes_every_file_unknown() {
        let (_tmp, repo, id) = repo();
        let stale = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-q\n+Q\n c\n";
        for (patches, why) in [
            (
                set(&[("p/gone.patch", None)]),
                "p/gone.patch is declared by the patch step but is not in the tree",
            ),
            (
                set(&[("p/words.patch", Some("no diff here\n"))]),
                "p/words.patch: no file changes found in it",
            ),
            (
                set(&[("p/stale.patch", Some(stale))]),
                "p/stale.patch: hunk 1 does not apply to x.py",
            ),
        ] {
            let tree = PatchedTree::new(&repo, id, &patches);
            let failure = tree.failure().expect("fails").to_string();
            assert!(failure.contains(why), "{failure}");
            // Even a file no patch names is not read from the unpatched commit.
            assert_eq!(tree.read("y.py"), Err(failure));
        }
    }

    #[test]
    fn what_one_tool_refuses_leaves_the_source_unknown() {
        // Trailing context shorter than leading, away from the end: GNU patch must match at
        // the end of the file (and fails), git apply matches in place.
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("x.py"), "a\nb\nc\nd\ne\n").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        let head = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).as_bytes()).expect("hex");
        let other = Repo::open(dir).expect("opens");
        let uneven = "--- a/x.py\n+++ b/x.py\n@@ -1,4 +1,4 @@\n a\n b\n-c\n+C\n d\n";
        let tree = PatchedTree::new(&other, head, &set(&[("p/u.patch", Some(uneven))]));
        let failure = tree.failure().expect("fails");
        assert!(failure.contains("with patch -p1"), "{failure}");
    }
}
