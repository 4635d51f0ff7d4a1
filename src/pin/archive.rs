//! Archive URL pins: a `FetchContent_Declare(... URL https://github.com/o/r/archive/<sha>.tar.gz)`
//! names a repository and a revision as surely as `GIT_REPOSITORY` + `GIT_TAG` do. GitHub's
//! `archive/`, `tarball/` and `zipball/` forms, its `codeload` host and API, and GitLab's
//! `-/archive/` form resolve to the repository and the reference; any other URL resolves to
//! nothing (the caller keeps it, and the component's rules stay unknown, naming it).

/// What an archive URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The repository, as an https URL (`https://github.com/owner/name`).
    pub repo: String,
    /// The revision the archive is made from: a commit SHA, a tag or a branch.
    pub reference: String,
}

/// The repository and revision of a forge archive URL; `None` for any other URL.
pub fn parse(url: &str) -> Option<Archive> {
    let url = url.trim().trim_matches('"');
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "https" | "http") {
        return None;
    }
    // Drop a query or fragment, and user-info.
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let rest = match rest.split_once('@') {
        Some((user, after)) if !user.contains('/') => after,
        _ => rest,
    };
    let (host, path) = rest.split_once('/')?;
    let host = host.to_ascii_lowercase();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let made = |owner: &str, name: &str, reference: &str| {
        let reference = reference.trim();
        (!owner.is_empty() && !name.is_empty() && !reference.is_empty()).then(|| Archive {
            repo: format!("https://github.com/{owner}/{name}"),
            reference: reference.to_string(),
        })
    };
    match (host.as_str(), parts.as_slice()) {
        // github.com/o/r/archive/refs/tags/v1.tar.gz, .../archive/<ref>.zip
        ("github.com" | "www.github.com", [owner, name, "archive", tail @ ..]) => {
            let joined = tail.join("/");
            let reference = strip_archive_suffix(&joined)?;
            let reference = reference
                .strip_prefix("refs/tags/")
                .or_else(|| reference.strip_prefix("refs/heads/"))
                .unwrap_or(reference);
            made(owner, name, reference)
        }
        // github.com/o/r/tarball/<ref>, zipball
        ("github.com" | "www.github.com", [owner, name, "tarball" | "zipball", tail @ ..])
            if !tail.is_empty() =>
        {
            made(owner, name, &tail.join("/"))
        }
        // codeload.github.com/o/r/tar.gz/<ref>, zip, legacy.tar.gz, legacy.zip
        (
            "codeload.github.com",
            [
                owner,
                name,
                "tar.gz" | "zip" | "legacy.tar.gz" | "legacy.zip",
                tail @ ..,
            ],
        ) if !tail.is_empty() => {
            let joined = tail.join("/");
            let reference = joined
                .strip_prefix("refs/tags/")
                .or_else(|| joined.strip_prefix("refs/heads/"))
                .unwrap_or(&joined);
            made(owner, name, reference)
        }
        // api.github.com/repos/o/r/tarball/<ref>
        ("api.github.com", ["repos", owner, name, "tarball" | "zipball", tail @ ..])
            if !tail.is_empty() =>
        {
            made(owner, name, &tail.join("/"))
        }
        // gitlab.com/group/sub/name/-/archive/<ref>/<name>-<ref>.tar.gz
        (gitlab, _) if gitlab == "gitlab.com" || gitlab.starts_with("gitlab.") => {
            let dash = parts.iter().position(|p| *p == "-")?;
            if parts.get(dash + 1) != Some(&"archive") || dash < 2 {
                return None;
            }
            let project = parts.get(..dash)?.join("/");
            let reference = parts.get(dash + 2)?;
            (!reference.is_empty()).then(|| Archive {
                repo: format!("https://{host}/{project}"),
                reference: (*reference).to_string(),
            })
        }
        _ => None,
    }
}

/// `<ref>` of `<ref>.tar.gz`, `<ref>.zip`, `<ref>.tar.bz2`, `<ref>.tgz`.
fn strip_archive_suffix(s: &str) -> Option<&str> {
    [".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar"]
        .iter()
        .find_map(|suffix| s.strip_suffix(suffix))
        .filter(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";

    fn at(repo: &str, reference: &str) -> Option<Archive> {
        Some(Archive {
            repo: repo.to_string(),
            reference: reference.to_string(),
        })
    }

    #[test]
    fn github_forms_name_the_repository_and_revision() {
        let fa = "https://github.com/vllm-project/flash-attention";
        for url in [
            format!("{fa}/archive/{SHA}.tar.gz"),
            format!("{fa}/archive/{SHA}.zip"),
            format!("\"{fa}/archive/{SHA}.tar.gz\""),
            format!("https://codeload.github.com/vllm-project/flash-attention/tar.gz/{SHA}"),
            format!("https://codeload.github.com/vllm-project/flash-attention/legacy.zip/{SHA}"),
            format!("{fa}/tarball/{SHA}"),
            format!("{fa}/zipball/{SHA}"),
            format!("https://api.github.com/repos/vllm-project/flash-attention/tarball/{SHA}"),
            format!("{fa}/archive/{SHA}.tar.gz?raw=true"),
        ] {
            assert_eq!(parse(&url), at(fa, SHA), "{url}");
        }
        assert_eq!(
            parse("https://github.com/NVIDIA/cutlass/archive/refs/tags/v4.2.1.tar.gz"),
            at("https://github.com/NVIDIA/cutlass", "v4.2.1")
        );
        assert_eq!(
            parse("https://github.com/NVIDIA/cutlass/archive/refs/heads/main.zip"),
            at("https://github.com/NVIDIA/cutlass", "main")
        );
        assert_eq!(
            parse("https://codeload.github.com/NVIDIA/cutlass/tar.gz/refs/tags/v4.2.1"),
            at("https://github.com/NVIDIA/cutlass", "v4.2.1")
        );
    }

    #[test]
    fn gitlab_archives_name_the_project() {
        assert_eq!(
            parse("https://gitlab.com/group/sub/kernels/-/archive/v1.2/kernels-v1.2.tar.gz"),
            at("https://gitlab.com/group/sub/kernels", "v1.2")
        );
    }

    #[test]
    fn other_urls_name_nothing() {
        for url in [
            "",
            "https://example.org/flash-attention.tar.gz",
            "https://github.com/vllm-project/flash-attention",
            "https://github.com/vllm-project/flash-attention/archive/.tar.gz",
            "https://github.com/o/r/releases/download/v1/r.tar.gz",
            "file:///tmp/fa.tar.gz",
            "${FA_URL}",
            "https://gitlab.com/-/archive/x/y.tar.gz",
        ] {
            assert_eq!(parse(url), None, "{url}");
        }
    }
}
