//! Repository URL canonicalisation: https, ssh, scp-like, `.git`, case and trailing slashes
//! all become `host/owner/name` in lower case.

/// The canonical form of a git repository URL, e.g. `github.com/vllm-project/flash-attention`.
///
/// Returns `None` for strings that are not repository URLs (empty, a bare variable, a path).
pub fn canonical(url: &str) -> Option<String> {
    let url = url.trim().trim_matches('"').to_ascii_lowercase();
    let url = url.as_str();
    let rest = if let Some((scheme, rest)) = url.split_once("://") {
        if !matches!(
            scheme,
            "https" | "http" | "ssh" | "git" | "git+ssh" | "git+https"
        ) {
            return None;
        }
        // drop user-info
        match rest.split_once('@') {
            Some((user, host)) if !user.contains('/') => host.to_string(),
            _ => rest.to_string(),
        }
    } else if let Some(rest) = url.strip_prefix("gh:") {
        // CPM shorthand
        format!("github.com/{}", rest.split('@').next().unwrap_or(rest))
    } else if let Some((user_host, path)) = url.split_once(':') {
        // scp-like: git@github.com:owner/repo.git
        let host = user_host.rsplit('@').next().unwrap_or(user_host);
        if host.is_empty() || host.contains('/') || path.starts_with('/') {
            return None;
        }
        format!("{host}/{path}")
    } else {
        return None;
    };
    // drop a port on the host, a trailing slash and `.git`
    let mut parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() < 3 {
        return None;
    }
    if let Some((host, _port)) = parts[0].split_once(':') {
        parts[0] = host;
    }
    let last = parts.len() - 1;
    parts[last] = parts[last].strip_suffix(".git").unwrap_or(parts[last]);
    if parts[last].is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// The repository's short name (last path segment), e.g. `flash-attention`.
pub fn short_name(canonical: &str) -> &str {
    canonical.rsplit('/').next().unwrap_or(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_one_repository_agree() {
        let want = Some("github.com/vllm-project/flash-attention".to_string());
        for url in [
            "https://github.com/vllm-project/flash-attention",
            "https://github.com/vllm-project/flash-attention.git",
            "https://github.com/vllm-project/flash-attention/",
            "HTTPS://GitHub.com/VLLM-Project/Flash-Attention.git",
            "git@github.com:vllm-project/flash-attention.git",
            "ssh://git@github.com/vllm-project/flash-attention.git",
            "ssh://git@github.com:22/vllm-project/flash-attention",
            "https://user:token@github.com/vllm-project/flash-attention.git",
            "gh:vllm-project/flash-attention",
        ] {
            assert_eq!(canonical(url), want, "{url}");
        }
    }

    #[test]
    fn non_urls_are_rejected() {
        for url in [
            "",
            "${FA_REPO}",
            "/src/flash-attention",
            "file:///x/y/z",
            "https://github.com",
        ] {
            assert_eq!(canonical(url), None, "{url}");
        }
        assert_ne!(
            canonical("https://github.com/someone/flash-attention"),
            canonical("https://github.com/vllm-project/flash-attention")
        );
    }
}
