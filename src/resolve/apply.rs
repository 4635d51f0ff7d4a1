//! Unified diffs applied as `git apply` and GNU `patch -p1` apply them, without fuzz: a patch
//! step (`PATCH_COMMAND git apply x.patch`, `patch -p1 < x.patch`) changes the pinned source
//! before it is built, so the signature must read what the tools make of it.
//!
//! Both tools strip one leading directory from each name (`-p1`, git's default), take a hunk
//! where its old lines match exactly, searching outwards from the line the header gives (one
//! line later first, then one earlier, ...), and fail when a hunk matches nowhere. They differ
//! in the details ([`Tool`]); the callers apply with both and trust only a result the two
//! agree on. What neither models here (fuzz, renames, copies, binary patches, quoted names,
//! GNU patch's guesses at reversed patches) is an error, never a guess: the finding that
//! depends on it is undecided.

use std::fmt;

/// Which tool's rules place a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `git apply`: each hunk is placed in the file as the previous hunks left it, from the
    /// header's new-side line, never over a line a previous hunk wrote; a hunk whose old side
    /// starts at line 0 or 1 must match at the start, and one with no trailing context at the
    /// end.
    GitApply,
    /// GNU `patch -p1` with no fuzz: hunks are placed in order in the original file, from the
    /// header's old-side line shifted by the offset the previous hunk needed, never before the
    /// previous hunk's end; a hunk with less leading than trailing context must match at the
    /// start, one with less trailing than leading context at the end.
    GnuPatch,
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tool::GitApply => "git apply",
            Tool::GnuPatch => "patch -p1",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Delete,
    Insert,
}

/// One line of a hunk, with its line end (none for a line marked `\ No newline at end of file`).
#[derive(Debug, Clone)]
struct HunkLine {
    kind: Kind,
    text: String,
}

#[derive(Debug, Clone)]
struct Hunk {
    old_start: usize,
    new_start: usize,
    lines: Vec<HunkLine>,
}

impl Hunk {
    fn old_side(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.kind != Kind::Insert)
            .map(|l| l.text.as_str())
            .collect()
    }
    fn new_side(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.kind != Kind::Delete)
            .map(|l| l.text.as_str())
            .collect()
    }
    fn leading(&self) -> usize {
        self.lines
            .iter()
            .take_while(|l| l.kind == Kind::Context)
            .count()
    }
    fn trailing(&self) -> usize {
        self.lines
            .iter()
            .rev()
            .take_while(|l| l.kind == Kind::Context)
            .count()
    }
}

/// One file's part of a patch file.
#[derive(Debug, Clone)]
pub struct FileDiff {
    /// The patch file it came from (for messages).
    pub origin: String,
    /// The file before, `-p1`-stripped; `None` for `/dev/null` (the patch creates it).
    pub old: Option<String>,
    /// The file after; `None` for `/dev/null` (the patch deletes it).
    pub new: Option<String>,
    hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The path this part changes.
    pub fn path(&self) -> &str {
        self.new.as_deref().or(self.old.as_deref()).unwrap_or("")
    }
}

/// `-p1`: the name with its first directory removed; `None` for `/dev/null`.
fn strip_name(origin: &str, raw: &str) -> Result<Option<String>, String> {
    let name = raw
        .split('\t')
        .next()
        .unwrap_or(raw)
        .trim_end_matches(['\n', '\r']);
    if name == "/dev/null" {
        return Ok(None);
    }
    if name.starts_with('"') {
        return Err(format!(
            "{origin}: quoted file name {name}: not modelled, so what it changes is not known"
        ));
    }
    match name.split_once('/') {
        Some((_, rest)) if !rest.is_empty() && !rest.split('/').any(|p| p == "..") => {
            Ok(Some(rest.trim_start_matches('/').to_string()))
        }
        _ => Err(format!(
            "{origin}: file name `{name}` has no directory for -p1 to strip"
        )),
    }
}

fn count(s: Option<&str>) -> Option<usize> {
    match s {
        None => Some(1),
        Some(n) => n.parse().ok(),
    }
}

/// `@@ -a[,b] +c[,d] @@`: (a, b, c, d).
fn hunk_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let (a, b) = match old.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (old, None),
    };
    let (c, d) = match new.split_once(',') {
        Some((c, d)) => (c, Some(d)),
        None => (new, None),
    };
    Some((a.parse().ok()?, count(b)?, c.parse().ok()?, count(d)?))
}

/// Git's extended header lines that change a file beyond its text.
const UNSUPPORTED_GIT: [&str; 7] = [
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "GIT binary patch",
    "Binary files ",
    "similarity index ",
];

/// The per-file parts of a patch file, in order. Lines outside a file's part (mail headers,
/// `diff --git` and `index` lines, a `format-patch` signature) are skipped, as both tools
/// skip them; a part neither tool would apply, or one not modelled, is an error.
pub fn parse(origin: &str, text: &str) -> Result<Vec<FileDiff>, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out: Vec<FileDiff> = Vec::new();
    let mut i = 0;
    // Inside a `diff --git` header, before its `---`/`+++` lines.
    let mut git_header = false;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") {
            git_header = true;
            i += 1;
            continue;
        }
        if git_header && let Some(what) = UNSUPPORTED_GIT.iter().find(|p| line.starts_with(*p)) {
            return Err(format!(
                "{origin}: a git patch with `{}`: not modelled, so what it changes is not known",
                what.trim()
            ));
        }
        if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ ")) {
            git_header = false;
            let old = strip_name(origin, &line[4..])?;
            let new = strip_name(origin, &lines[i + 1][4..])?;
            if let (Some(o), Some(n)) = (&old, &new)
                && o != n
            {
                return Err(format!(
                    "{origin}: changes `{o}` into `{n}`: which file the tools pick is not modelled"
                ));
            }
            if old.is_none() && new.is_none() {
                return Err(format!("{origin}: a part from /dev/null to /dev/null"));
            }
            out.push(FileDiff {
                origin: origin.to_string(),
                old,
                new,
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("@@ ") {
            let Some(file) = out.last_mut() else {
                return Err(format!("{origin}:{}: a hunk before any file header", i + 1));
            };
            let Some((old_start, old_len, new_start, new_len)) = hunk_header(line) else {
                return Err(format!("{origin}:{}: malformed hunk header", i + 1));
            };
            let (mut old_left, mut new_left) = (old_len, new_len);
            let mut hunk = Hunk {
                old_start,
                new_start,
                lines: Vec::new(),
            };
            i += 1;
            while old_left > 0 || new_left > 0 {
                let Some(body) = lines.get(i) else {
                    return Err(format!("{origin}: the patch ends inside a hunk"));
                };
                let (kind, text) = match body.as_bytes().first() {
                    Some(b' ') => (Kind::Context, &body[1..]),
                    // An empty context line whose space an editor or mailer removed.
                    Some(b'\n') => (Kind::Context, *body),
                    Some(b'-') => (Kind::Delete, &body[1..]),
                    Some(b'+') => (Kind::Insert, &body[1..]),
                    Some(b'\\') => {
                        no_newline(&mut hunk, origin, i)?;
                        i += 1;
                        continue;
                    }
                    _ => {
                        return Err(format!(
                            "{origin}:{}: malformed hunk (line counts do not match its header)",
                            i + 1
                        ));
                    }
                };
                let left = match kind {
                    Kind::Context => old_left.min(new_left),
                    Kind::Delete => old_left,
                    Kind::Insert => new_left,
                };
                if left == 0 {
                    return Err(format!(
                        "{origin}:{}: malformed hunk (line counts do not match its header)",
                        i + 1
                    ));
                }
                if kind != Kind::Insert {
                    old_left -= 1;
                }
                if kind != Kind::Delete {
                    new_left -= 1;
                }
                hunk.lines.push(HunkLine {
                    kind,
                    text: text.to_string(),
                });
                i += 1;
            }
            // The outer loop then skips the marker line, as any line outside a hunk.
            if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
                no_newline(&mut hunk, origin, i)?;
            }
            file.hunks.push(hunk);
            continue;
        }
        i += 1;
    }
    if out.is_empty() {
        return Err(format!("{origin}: no file changes found in it"));
    }
    Ok(out)
}

/// `\ No newline at end of file`: the line before has no line end.
fn no_newline(hunk: &mut Hunk, origin: &str, at: usize) -> Result<(), String> {
    match hunk.lines.last_mut() {
        Some(l) if l.text.ends_with('\n') => {
            l.text.pop();
            Ok(())
        }
        _ => Err(format!(
            "{origin}:{}: `\\ No newline` after no line",
            at + 1
        )),
    }
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// What `tool` makes of `base` (`None`: the file does not exist) with `diff` applied:
/// `Ok(None)` when it deletes the file. An error says which hunk does not apply and why.
pub fn apply(diff: &FileDiff, base: Option<&str>, tool: Tool) -> Result<Option<String>, String> {
    let path = diff.path();
    let origin = &diff.origin;
    let base = match (&diff.old, base) {
        (None, Some(b)) if tool == Tool::GitApply || !b.is_empty() => {
            return Err(format!(
                "{origin} creates {path}, which already exists ({tool} fails)"
            ));
        }
        (None, _) => "",
        (Some(_), None) => {
            return Err(format!(
                "{origin} changes {path}, which does not exist ({tool} fails)"
            ));
        }
        (Some(_), Some(b)) => b,
    };
    let result = match tool {
        Tool::GitApply => apply_git(diff, base),
        Tool::GnuPatch => apply_gnu(diff, base),
    };
    let text = result.map_err(|(n, why)| {
        format!("{origin}: hunk {n} does not apply to {path} with {tool}: {why}")
    })?;
    if diff.new.is_none() {
        return if text.is_empty() {
            Ok(None)
        } else {
            Err(format!(
                "{origin} deletes {path}, but the file keeps text the patch does not remove ({tool} fails)"
            ))
        };
    }
    Ok(Some(text))
}

fn matches_at(image: &[&str], old: &[&str], at: usize) -> bool {
    at + old.len() <= image.len() && image[at..at + old.len()] == *old
}

type HunkError = (usize, String);

fn apply_git(diff: &FileDiff, base: &str) -> Result<String, HunkError> {
    // Each line with whether a previous hunk wrote it: git apply never lets a hunk match
    // over a line another hunk wrote (no `--allow-overlap`).
    let mut image: Vec<(String, bool)> = lines_of(base)
        .into_iter()
        .map(|l| (l.to_string(), false))
        .collect();
    for (n, hunk) in diff.hunks.iter().enumerate() {
        let old = hunk.old_side();
        let view: Vec<&str> = image.iter().map(|(l, _)| l.as_str()).collect();
        let match_beginning = hunk.old_start <= 1;
        let match_end = hunk.trailing() == 0;
        if old.len() > view.len() {
            return Err((n + 1, "its old lines are more than the file has".into()));
        }
        // (Where a hunk must match at the start or the end, one place fits: searching from
        // the header's line finds it as well as starting there.)
        let line = hunk.new_start.saturating_sub(1).min(view.len());
        let fits = |at: usize| {
            (!match_beginning || at == 0)
                && (!match_end || at + old.len() == view.len())
                && matches_at(&view, &old, at)
                && !image[at..at + old.len()]
                    .iter()
                    .any(|(_, written)| *written)
        };
        let Some(at) = outwards(line, 0, view.len()).find(|&at| fits(at)) else {
            return Err((n + 1, anchored_why(match_beginning, match_end)));
        };
        let new: Vec<(String, bool)> = hunk
            .new_side()
            .into_iter()
            .map(|l| (l.to_string(), true))
            .collect();
        image.splice(at..at + old.len(), new);
    }
    Ok(image.into_iter().map(|(l, _)| l).collect())
}

/// `line`, then one later, one earlier, two later, ... within `low..=high`.
fn outwards(line: usize, low: usize, high: usize) -> impl Iterator<Item = usize> {
    // `line` lies within `low..=high`: no place is farther from it than `high - low`.
    let span = high.saturating_sub(low);
    std::iter::once(line).chain((1..=span).flat_map(move |d| {
        let later = line.checked_add(d).filter(|&l| l <= high);
        let earlier = line.checked_sub(d).filter(|&l| l >= low);
        later.into_iter().chain(earlier)
    }))
}

fn anchored_why(start: bool, end: bool) -> String {
    match (start, end) {
        (true, true) => "its old lines must be the whole file, and are not".into(),
        (true, false) => "its old lines must start the file, and do not".into(),
        (false, true) => "its old lines must end the file, and do not".into(),
        (false, false) => "its old lines match nowhere in the file".into(),
    }
}

fn apply_gnu(diff: &FileDiff, base: &str) -> Result<String, HunkError> {
    let input = lines_of(base);
    let mut out: Vec<&str> = Vec::new();
    // Lines of `input` already copied or replaced (GNU patch's last frozen line).
    let mut frozen = 0usize;
    // The offset the previous hunk needed.
    let mut offset: isize = 0;
    // The previous hunk's trailing context, which GNU patch lets the next hunk match over.
    let mut open = 0usize;
    for (n, hunk) in diff.hunks.iter().enumerate() {
        let old = hunk.old_side();
        let (prefix, suffix) = (hunk.leading(), hunk.trailing());
        if old.is_empty() {
            // No old lines (a zero-context insertion, or a file the patch creates): GNU patch
            // inserts after the header's old line, shifted like the previous hunk, unchecked.
            let at = hunk.old_start as isize + offset;
            if at < frozen as isize || at > input.len() as isize {
                return Err((
                    n + 1,
                    "a hunk with no old lines outside the file: not modelled".into(),
                ));
            }
            let at = at as usize;
            out.extend(&input[frozen..at]);
            out.extend(hunk.new_side());
            frozen = at;
            open = 0;
            continue;
        }
        // 0-based line the header names, shifted like the previous hunk.
        let guess = hunk.old_start.saturating_sub(1) as isize + offset;
        let guess = guess.clamp(0, input.len() as isize) as usize;
        let low = frozen - open;
        let at = if prefix < suffix {
            if hunk.old_start > 1 {
                return Err((
                    n + 1,
                    "less leading than trailing context away from the start: not modelled".into(),
                ));
            }
            (low == 0 && matches_at(&input, &old, 0)).then_some(0)
        } else if suffix < prefix {
            input
                .len()
                .checked_sub(old.len())
                .filter(|&at| at >= low && matches_at(&input, &old, at))
        } else {
            outwards(guess.max(low), low, input.len()).find(|&at| matches_at(&input, &old, at))
        };
        let Some(at) = at else {
            return Err((
                n + 1,
                anchored_why(prefix < suffix, suffix < prefix)
                    .replace("the file", "the file (after the previous hunk)"),
            ));
        };
        if at < frozen {
            return Err((
                n + 1,
                "it matches over the previous hunk's trailing context: not modelled".into(),
            ));
        }
        offset = at as isize - hunk.old_start.saturating_sub(1) as isize;
        out.extend(&input[frozen..at]);
        out.extend(hunk.new_side());
        frozen = at + old.len();
        open = suffix;
    }
    out.extend(&input[frozen..]);
    // A line without a line end (the file's last, or one a hunk marks `\ No newline`) that
    // ends up before other lines: GNU patch writes a line end after it; not modelled.
    if out.iter().rev().skip(1).any(|l| !l.ends_with('\n')) {
        return Err((
            diff.hunks.len(),
            "a line without a line end placed before other lines: not modelled".into(),
        ));
    }
    Ok(out.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> FileDiff {
        let mut parts = parse("p.patch", text).expect("parses");
        assert_eq!(parts.len(), 1);
        parts.remove(0)
    }

    fn both(diff: &FileDiff, base: Option<&str>) -> [Result<Option<String>, String>; 2] {
        [
            apply(diff, base, Tool::GitApply),
            apply(diff, base, Tool::GnuPatch),
        ]
    }

    #[test]
    fn parts_per_file_with_p1_names() {
        let text = "From abc\nSubject: x\n\ndiff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/d/y.py b/d/y.py\nindex 3..4 100644\n--- a/d/y.py\n+++ b/d/y.py\n@@ -1 +1,2 @@\n c\n+d\n-- \n2.47.3\n\n";
        let parts = parse("p.patch", text).expect("parses");
        assert_eq!(
            parts.iter().map(FileDiff::path).collect::<Vec<_>>(),
            ["x.py", "d/y.py"]
        );
        let [git, gnu] = both(&parts[0], Some("a\n"));
        assert_eq!(git.expect("applies").as_deref(), Some("b\n"));
        assert_eq!(gnu.expect("applies").as_deref(), Some("b\n"));
    }

    #[test]
    fn what_is_not_modelled_is_an_error() {
        for (text, why) in [
            (
                "diff --git a/x b/y\nrename from x\nrename to y\n",
                "rename from",
            ),
            (
                "diff --git a/x b/x\nGIT binary patch\nliteral 1\n",
                "GIT binary patch",
            ),
            (
                "--- \"a/x y\"\n+++ \"b/x y\"\n@@ -1 +1 @@\n-a\n+b\n",
                "quoted",
            ),
            ("--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", "no directory"),
            ("--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", "into"),
            (
                "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n",
                "ends inside a hunk",
            ),
            ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", ""),
            ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n*a\n+b\n", "malformed hunk"),
            ("just words\n", "no file changes"),
            ("@@ -1 +1 @@\n-a\n+b\n", "before any file header"),
        ] {
            match parse("p.patch", text) {
                Err(e) => assert!(e.contains(why), "{text:?}: {e}"),
                // An extra `+` line after a complete hunk is garbage both tools skip.
                Ok(parts) => assert!(why.is_empty(), "{text:?}: {parts:?}"),
            }
        }
    }

    #[test]
    fn creation_deletion_and_missing_files() {
        let create = one("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        for r in both(&create, None) {
            assert_eq!(r.expect("applies").as_deref(), Some("a\nb\n"));
        }
        for r in both(&create, Some("x\n")) {
            assert!(r.expect_err("exists").contains("already exists"));
        }
        // An empty file there: GNU patch takes it for none, git apply does not.
        let [git, gnu] = both(&create, Some(""));
        assert!(git.expect_err("exists").contains("already exists"));
        assert_eq!(gnu.expect("applies").as_deref(), Some("a\nb\n"));
        let delete = one("--- a/old.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n");
        for r in both(&delete, Some("a\nb\n")) {
            assert_eq!(r.expect("applies"), None);
        }
        for r in both(&delete, Some("a\nb\nc\n")) {
            assert!(r.is_err());
        }
        let change = one("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
        for r in both(&change, None) {
            assert!(r.expect_err("missing").contains("does not exist"));
        }
    }

    #[test]
    fn no_newline_markers_and_offsets() {
        let diff = one(
            "--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n c\n d\n-e\n\\ No newline at end of file\n+E\n\\ No newline at end of file\n",
        );
        for r in both(&diff, Some("pre\nb\nc\nd\ne")) {
            assert_eq!(r.expect("applies").as_deref(), Some("pre\nb\nc\nd\nE"));
        }
        // With a line end where the patch says there is none, neither tool applies it.
        for r in both(&diff, Some("b\nc\nd\ne\n")) {
            assert!(r.is_err());
        }
        // Offsets: the hunk found two lines later.
        let diff = one("--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n c\n-d\n+D\n e\n");
        for r in both(&diff, Some("0\n1\nb\nc\nd\ne\nf\n")) {
            assert_eq!(
                r.expect("applies").as_deref(),
                Some("0\n1\nb\nc\nD\ne\nf\n")
            );
        }
    }

    #[test]
    fn tools_are_named_as_their_users_type_them() {
        assert_eq!(Tool::GitApply.to_string(), "git apply");
        assert_eq!(Tool::GnuPatch.to_string(), "patch -p1");
        let change = one("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
        let [git, gnu] = both(&change, None);
        assert!(git.expect_err("missing").contains("(git apply fails)"));
        assert!(gnu.expect_err("missing").contains("(patch -p1 fails)"));
    }

    /// Names both tools refuse to write (`..` climbing out of the tree, no name left once `-p1`
    /// strips the first directory) are errors; a name `-p1` strips is the rest of it.
    #[test]
    fn names_after_p1() {
        assert_eq!(
            strip_name("p", "a/d/x.py\t2024-01-01"),
            Ok(Some("d/x.py".into()))
        );
        assert_eq!(strip_name("p", "/dev/null"), Ok(None));
        for bad in ["a/../etc/x", "a/d/../../x", "a/", "x", "a/..", "\"a/x\""] {
            assert!(strip_name("p", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn git_extended_headers_count_only_after_diff_git() {
        // A commit message line that reads like one, before any `diff --git`: both tools skip it.
        let text = "rename from x\ncopy to y\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        let part = one(text);
        for r in both(&part, Some("a\n")) {
            assert_eq!(r.expect("applies").as_deref(), Some("b\n"));
        }
    }

    #[test]
    fn a_plus_line_without_a_minus_line_before_it_is_no_header() {
        let part = one("Subject: x\n+++ b/y\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
        assert_eq!(part.path(), "x");
        for r in both(&part, Some("a\n")) {
            assert_eq!(r.expect("applies").as_deref(), Some("b\n"));
        }
    }

    /// Two lines of context either side, one line later than the header says (checked here):
    /// GNU patch finds it there; git apply, whose old side starts at line 1, must match at the
    /// start and fails.
    #[test]
    fn balanced_context_is_found_at_an_offset() {
        let diff = one("--- a/w\n+++ b/w\n@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e\n");
        let [git, gnu] = both(&diff, Some("z\na\nb\nc\nd\ne\n"));
        assert_eq!(gnu.expect("applies").as_deref(), Some("z\na\nb\nC\nd\ne\n"));
        assert!(git.expect_err("anchored").contains("must start the file"));
    }

    #[test]
    fn an_empty_context_line_without_its_space_is_context() {
        let diff = one("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n");
        for r in both(&diff, Some("a\n\nb\n")) {
            assert_eq!(r.expect("applies").as_deref(), Some("a\n\nB\n"));
        }
    }

    #[test]
    fn a_second_no_newline_marker_is_refused() {
        let text = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n\\ No newline at end of file\n+b\n";
        let e = parse("p.patch", text).expect_err("refused");
        assert!(e.contains("No newline` after no line"), "{e}");
    }

    #[test]
    fn anchored_hunks_say_which_end_they_must_match() {
        // Old side at line 1: it must start the file.
        let start = one("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n");
        let [git, _] = both(&start, Some("z\na\nb\n"));
        assert!(git.expect_err("anchored").contains("must start the file"));
        // No trailing context: it must end the file.
        let end = one("--- a/x\n+++ b/x\n@@ -5,2 +5,2 @@\n c\n-d\n+D\n");
        let [git, gnu] = both(&end, Some("a\nb\nc\nd\nc\nd\ne\n"));
        assert!(git.expect_err("anchored").contains("must end the file"));
        assert!(gnu.expect_err("anchored").contains("must end the file"));
        let whole = one("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
        let [git, _] = both(&whole, Some("a\nz\n"));
        assert!(
            git.expect_err("anchored")
                .contains("must be the whole file")
        );
        let nowhere = one("--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n p\n-q\n+Q\n r\n");
        let [git, gnu] = both(&nowhere, Some("a\nb\nc\nd\n"));
        assert!(git.expect_err("nowhere").contains("match nowhere"));
        assert!(gnu.expect_err("nowhere").contains("match nowhere"));
    }

    /// A hunk with no old lines goes after the header's old line, shifted as the previous hunk
    /// was: GNU patch 2.7.6 here puts `X` after `c` (old line 6, offset -3).
    #[test]
    fn a_zero_context_hunk_follows_the_previous_offset() {
        let diff = one("--- a/y\n+++ b/y\n@@ -4,3 +4,3 @@\n a\n-b\n+B\n c\n@@ -6,0 +7,1 @@\n+X\n");
        let gnu = apply(&diff, Some("a\nb\nc\nd\ne\nf\ng\n"), Tool::GnuPatch);
        assert_eq!(
            gnu.expect("applies").as_deref(),
            Some("a\nB\nc\nX\nd\ne\nf\ng\n")
        );
    }

    #[test]
    fn errors_name_the_hunk_that_does_not_apply() {
        let diff =
            one("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -4,2 +4,2 @@\n c\n-q\n+Q\n");
        for r in both(&diff, Some("a\nb\nc\nd\n")) {
            let e = r.expect_err("the second hunk");
            assert!(e.contains(": hunk 2 does not apply to x with "), "{e}");
        }
    }

    /// GNU patch's placement, each case checked with GNU patch 2.7.6 here: a zero-context hunk
    /// as the first one goes after its header's line; a search from the header's line shifted by
    /// the previous hunk's offset takes the nearest of several places; adjacent hunks each
    /// apply; a hunk with less leading than trailing context matches at the start only.
    #[test]
    fn gnu_patch_places_hunks_as_it_does() {
        let gnu = |text: &str, base: &str| apply(&one(text), Some(base), Tool::GnuPatch);
        let insert = "--- a/u\n+++ b/u\n@@ -2,0 +3,1 @@\n+X\n";
        assert_eq!(
            gnu(insert, "a\nb\nc\n").expect("applies").as_deref(),
            Some("a\nb\nX\nc\n")
        );
        let nearest =
            "--- a/s\n+++ b/s\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -6,1 +6,1 @@\n-m\n+M\n";
        assert_eq!(
            gnu(nearest, "x\nx\na\nb\nc\nm\nk\nm\nk\nm\nk\n")
                .expect("applies")
                .as_deref(),
            Some("x\nx\na\nB\nc\nm\nk\nM\nk\nm\nk\n")
        );
        let adjacent =
            "--- a/t\n+++ b/t\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n f\n";
        for r in both(&one(adjacent), Some("a\nb\nc\nd\ne\nf\n")) {
            assert_eq!(r.expect("applies").as_deref(), Some("a\nB\nc\nd\nE\nf\n"));
        }
        let start = "--- a/v\n+++ b/v\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n";
        assert!(
            gnu(start, "z\na\nb\n")
                .expect_err("at the start only")
                .contains("must start the file")
        );
        assert_eq!(
            gnu(start, "a\nb\nz\n").expect("applies").as_deref(),
            Some("A\nb\nz\n")
        );
    }

    /// What the model leaves to neither tool names the hunk and why.
    #[test]
    fn what_gnu_placement_does_not_model_is_an_error() {
        let gnu = |text: &str, base: &str| {
            apply(&one(text), Some(base), Tool::GnuPatch).expect_err("not modelled")
        };
        let e = gnu("--- a/u\n+++ b/u\n@@ -5,0 +6,1 @@\n+X\n", "a\nb\nc\n");
        assert!(
            e.contains("hunk 1 does not apply") && e.contains("outside the file"),
            "{e}"
        );
        let e = gnu(
            "--- a/u\n+++ b/u\n@@ -2,2 +2,2 @@\n-b\n+B\n c\n",
            "a\nb\nc\n",
        );
        assert!(
            e.contains("hunk 1 does not apply") && e.contains("less leading than trailing"),
            "{e}"
        );
        // The second hunk matching inside the first one's trailing context (GNU patch applies
        // it: `a B c D e`; not modelled).
        let e = gnu(
            "--- a/q\n+++ b/q\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n",
            "a\nb\nc\nd\ne\n",
        );
        assert!(
            e.contains("hunk 2 does not apply") && e.contains("trailing context"),
            "{e}"
        );
        let e = apply(
            &one("--- a/u\n+++ b/u\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"),
            Some("a\nb\n"),
            Tool::GitApply,
        )
        .expect_err("too long");
        assert!(
            e.contains("hunk 1 does not apply") && e.contains("more than the file has"),
            "{e}"
        );
    }

    #[test]
    fn outwards_alternates_later_first() {
        assert_eq!(outwards(2, 0, 5).collect::<Vec<_>>(), [2, 3, 1, 4, 0, 5]);
        assert_eq!(outwards(0, 0, 2).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(outwards(3, 2, 3).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(outwards(0, 0, 3).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(outwards(3, 0, 3).collect::<Vec<_>>(), [3, 2, 1, 0]);
    }
}
