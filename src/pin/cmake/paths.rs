//! View-relative path helpers for patch files: normalising `a/./b/../c`, and matching the
//! `*` / `?` globs of `file(GLOB)` and `PATCH_COMMAND` against the view's file list.

use crate::view::{TargetError, View};

/// `CMAKE_SOURCE_DIR` as the evaluator sees it: paths below it are view paths.
pub(super) const SOURCE_ROOT: &str = "/pinprobe-source";
/// `CMAKE_BINARY_DIR`: outside the view; nothing under it can be read.
pub(super) const BINARY_ROOT: &str = "/pinprobe-build";

/// An absolute path inside the source root as a view path (`..` resolved); `None` outside.
pub(super) fn view_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix(SOURCE_ROOT)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    normalize(rest)
}

/// `a/./b//../c` -> `a/c`. `None` when `..` climbs above the view root.
pub(super) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

pub(super) fn is_glob(path: &str) -> bool {
    path.contains(['*', '?'])
}

pub(super) fn is_patch(path: &str) -> bool {
    path.ends_with(".patch") || path.ends_with(".diff")
}

/// Files of the view matching a view-relative glob. `recurse` is `file(GLOB_RECURSE)`: the
/// last component is matched in every directory below the literal prefix.
pub(super) fn glob(
    view: &dyn View,
    pattern: &str,
    recurse: bool,
) -> Result<Vec<String>, TargetError> {
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let literal = segments.iter().take_while(|s| !is_glob(s)).count();
    let prefix = segments.get(..literal).unwrap_or_default().join("/");
    let rest = segments.get(literal..).unwrap_or_default();
    if rest.is_empty() {
        // No wildcard: the file itself, if it is one.
        let parent = prefix.rsplit_once('/').map_or("", |(d, _)| d);
        return Ok(view
            .files_under(parent)?
            .into_iter()
            .filter(|f| *f == prefix)
            .collect());
    }
    let files = view.files_under(&prefix)?;
    let skip = if prefix.is_empty() {
        0
    } else {
        prefix.len() + 1
    };
    Ok(files
        .into_iter()
        .filter(|f| {
            let tail: Vec<&str> = f.get(skip..).unwrap_or("").split('/').collect();
            if recurse {
                let dirs = rest.get(..rest.len().saturating_sub(1)).unwrap_or_default();
                match (rest.last(), tail.last()) {
                    (Some(pat), Some(name)) => {
                        tail.len() > dirs.len()
                            && dirs.iter().zip(&tail).all(|(p, t)| wildcard(p, t))
                            && wildcard(pat, name)
                    }
                    _ => false,
                }
            } else {
                tail.len() == rest.len() && rest.iter().zip(&tail).all(|(p, t)| wildcard(p, t))
            }
        })
        .collect())
}

/// `*` and `?` matching of one path component, in linear time (greedy with one backtrack point).
fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        assert_eq!(normalize("a/./b//../c"), Some("a/c".into()));
        assert_eq!(normalize("../x"), None);
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*.patch", "fa4-sm90.patch"));
        assert!(wildcard("0?-*.diff", "01-x.diff"));
        assert!(!wildcard("*.patch", "x.patch.orig"));
        assert!(wildcard("*a*b*", "xxaxxbxx"));
        assert!(!wildcard("a", ""));
    }
}
