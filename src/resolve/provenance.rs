//! Where a scanned source tree came from, for SARIF's `versionControlProvenance`: the
//! repository's `origin` URL (credentials removed), the commit scanned and its branch.

use crate::model::VersionControl;
use std::path::Path;

/// The provenance of the git work tree (or bare repository) at `path`, at `rev` (`None`:
/// `HEAD`). `None` when `path` is not itself a repository's root (a folder inside a repository
/// is not: SARIF maps the repository's root to the scanned tree, `%SRCROOT%`) or the revision
/// does not resolve.
pub fn of_tree(path: &Path, rev: Option<&str>) -> Option<VersionControl> {
    let repo = gix::open(path).ok()?;
    let commit = repo.rev_parse_single(rev.unwrap_or("HEAD")).ok()?;
    let commit = commit.object().ok()?.peel_to_commit().ok()?.id;
    let branch = match rev {
        None => repo
            .head_name()
            .ok()
            .flatten()
            .map(|n| n.shorten().to_string()),
        Some(_) => None,
    };
    let origin = repo
        .find_remote("origin")
        .ok()
        .and_then(|r| {
            r.url(gix::remote::Direction::Fetch)
                .map(|u| u.to_bstring().to_string())
        })
        .and_then(|u| repository_uri(&u));
    let repository_uri = origin.or_else(|| {
        let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
        let dir = std::fs::canonicalize(dir).ok()?;
        Some(format!("file://{}", dir.to_str()?))
    })?;
    Some(VersionControl {
        repository_uri,
        revision_id: commit.to_string(),
        branch,
    })
}

/// An absolute `http(s)` URI for a remote URL, without credentials, query or fragment:
/// `https://user:token@host/o/r.git` and `git@host:o/r.git` both give `https://host/o/r`.
/// `None` for what has no such form (a local path, another scheme).
pub fn repository_uri(url: &str) -> Option<String> {
    let url = url.trim();
    let (host_path, scheme) = if let Some(rest) = url.strip_prefix("https://") {
        (rest, "https")
    } else if let Some(rest) = url.strip_prefix("http://") {
        (rest, "http")
    } else if let Some(rest) = url.strip_prefix("ssh://") {
        (rest, "https")
    } else if !url.contains("://") && url.contains('@') && url.contains(':') {
        // scp-like `user@host:owner/name`
        let (_, rest) = url.split_once('@')?;
        let (host, path) = rest.split_once(':')?;
        return clean(&format!("{host}/{path}"), "https");
    } else {
        return None;
    };
    clean(host_path, scheme)
}

fn clean(host_path: &str, scheme: &str) -> Option<String> {
    let host_path = host_path.split(['?', '#']).next()?;
    let (authority, path) = host_path.split_once('/').unwrap_or((host_path, ""));
    // No user or token in a URI written to a report.
    let host = authority.rsplit('@').next()?;
    // An ssh port is no web port.
    let host = if scheme == "https" && host.contains(':') && !host_path.is_empty() {
        host.split(':').next()?
    } else {
        host
    };
    if host.is_empty()
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
    {
        return None;
    }
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    if path
        .bytes()
        .any(|b| b.is_ascii_control() || b == b' ' || b == b'"' || b == b'\\')
    {
        return None;
    }
    Some(if path.is_empty() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/{path}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_become_credential_free_https_uris() {
        for (url, want) in [
            (
                "https://github.com/vllm-project/vllm.git",
                Some("https://github.com/vllm-project/vllm"),
            ),
            (
                "https://x-access-token:ghs_secret@github.com/o/r.git",
                Some("https://github.com/o/r"),
            ),
            ("git@github.com:o/r.git", Some("https://github.com/o/r")),
            (
                "ssh://git@host.example:2222/o/r.git",
                Some("https://host.example/o/r"),
            ),
            (
                "http://host.example:8080/o/r/",
                Some("http://host.example:8080/o/r"),
            ),
            (
                "https://host.example/o/r?x=1#y",
                Some("https://host.example/o/r"),
            ),
            ("/srv/git/r.git", None),
            ("file:///srv/git/r.git", None),
            ("https://ho st/o/r", None),
        ] {
            assert_eq!(repository_uri(url).as_deref(), want, "{url}");
        }
    }
}
