//! Image references: what an image target string names.
//!
//! - `docker://[HOST[:PORT]/]REPO[:TAG][@sha256:HEX]`: a registry. A first component without a
//!   `.` or `:` (and not `localhost`) is a Docker Hub repository, as `docker pull` reads it.
//! - `oci:DIR[:TAG]`: an OCI image-layout directory.
//! - any other string (a `.tar`, `.tar.gz` or `.tgz` path): a `docker save` archive.

use super::Fault;
use std::path::{Path, PathBuf};

/// What an image target names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    Registry(RegistryRef),
    OciDir { dir: PathBuf, tag: Option<String> },
    Archive(PathBuf),
}

/// A repository in a registry and the manifest wanted from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRef {
    /// `host[:port]` as written (`docker.io` for Docker Hub).
    pub registry: String,
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl RegistryRef {
    /// The manifest reference to ask for: the digest, else the tag, else `latest`.
    pub fn reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The host that serves the API (`registry-1.docker.io` for Docker Hub).
    pub fn api_host(&self) -> &str {
        if self.registry == "docker.io" {
            "registry-1.docker.io"
        } else {
            &self.registry
        }
    }
}

/// Parse an image target string.
pub fn parse(target: &str) -> Result<ImageRef, Fault> {
    if let Some(rest) = target.strip_prefix("docker://") {
        return parse_registry(rest).map(ImageRef::Registry);
    }
    if let Some(rest) = target.strip_prefix("oci:") {
        if rest.is_empty() {
            return Err(Fault::Reference("oci: needs a directory".into()));
        }
        // `oci:DIR:TAG`: the tag is after the last `:` unless the whole string is a directory.
        if !Path::new(rest).is_dir()
            && let Some((dir, tag)) = rest.rsplit_once(':')
            && !tag.contains('/')
            && !dir.is_empty()
        {
            if !valid_tag(tag) {
                return Err(Fault::Reference(format!("`{tag}` is not a valid tag")));
            }
            return Ok(ImageRef::OciDir {
                dir: PathBuf::from(dir),
                tag: Some(tag.to_string()),
            });
        }
        return Ok(ImageRef::OciDir {
            dir: PathBuf::from(rest),
            tag: None,
        });
    }
    Ok(ImageRef::Archive(PathBuf::from(target)))
}

/// `target` with any user information (`user:pass@`) in a `docker://` reference's host part
/// replaced by `<redacted>@`, for every message that names the target.
pub fn redact_userinfo(target: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = target.strip_prefix("docker://") else {
        return target.into();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("docker://<redacted>@{}", &rest[at + 1..]).into(),
        None => target.into(),
    }
}

fn parse_registry(rest: &str) -> Result<RegistryRef, Fault> {
    let shown = redact_userinfo(&format!("docker://{rest}")).into_owned();
    let bad = |why: &str| Fault::Reference(format!("{shown}: {why}"));
    // `user:pass@host/...`: a password on the command line ends up in shell history, process
    // lists and logs; it is refused, and never echoed.
    if rest[..rest.find('/').unwrap_or(rest.len())].contains('@') {
        return Err(bad(&format!(
            "credentials in an image reference are refused: set {} and {} with {} naming the registry, or use docker login",
            super::auth::ENV_USERNAME,
            super::auth::ENV_PASSWORD,
            super::auth::ENV_HOST
        )));
    }
    let (name_tag, digest) = match rest.split_once('@') {
        Some((n, d)) => {
            if !valid_digest(d) {
                return Err(bad(
                    "the digest must be sha256: and 64 lowercase hex digits",
                ));
            }
            (n, Some(d.to_string()))
        }
        None => (rest, None),
    };
    let (name, tag) = match name_tag.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, Some(t.to_string())),
        _ => (name_tag, None),
    };
    if let Some(t) = &tag
        && !valid_tag(t)
    {
        return Err(bad("invalid tag"));
    }
    let (registry, repository) = match name.split_once('/') {
        Some((first, repo))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_string(), repo.to_string())
        }
        _ if name.contains('/') => ("docker.io".to_string(), name.to_string()),
        _ => ("docker.io".to_string(), format!("library/{name}")),
    };
    let repo_ok = !repository.is_empty()
        && repository.split('/').all(|c| {
            !c.is_empty()
                && c.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
        });
    if !repo_ok {
        return Err(bad(
            "the repository must be lowercase letters, digits, `.`, `_`, `-` and `/`",
        ));
    }
    if registry.is_empty() || registry.contains(['@', ' ']) {
        return Err(bad("invalid registry host"));
    }
    Ok(RegistryRef {
        registry,
        repository,
        tag,
        digest,
    })
}

/// `sha256:` and 64 lowercase hex digits (the only digest algorithm pinprobe checks).
pub fn valid_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn valid_tag(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 128
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !t.starts_with(['.', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(s: &str) -> RegistryRef {
        match parse(s).unwrap() {
            ImageRef::Registry(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn registry_references() {
        let r = reg("docker://127.0.0.1:5000/team/vllm:0.30");
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "team/vllm");
        assert_eq!(r.reference(), "0.30");
        let r = reg("docker://ubuntu");
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.reference()),
            ("docker.io", "library/ubuntu", "latest")
        );
        assert_eq!(r.api_host(), "registry-1.docker.io");
        let d = format!("sha256:{}", "a".repeat(64));
        let r = reg(&format!("docker://localhost/x/y:t@{d}"));
        assert_eq!(r.registry, "localhost");
        assert_eq!(r.reference(), d);
        for bad in [
            "docker://Foo/Bar",
            "docker://x@sha256:12",
            "docker://h.io/r:bad tag",
            "docker://",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn userinfo_is_refused_and_never_echoed() {
        for target in [
            "docker://alice:s3cret@registry.example/a/b:v1",
            "docker://alice:s3cret@registry.example",
            "docker://s3cret@127.0.0.1:5000/a@sha256:00",
        ] {
            let e = parse(target).unwrap_err().to_string();
            assert!(!e.contains("s3cret"), "{e}");
            assert!(e.contains("<redacted>@"), "{e}");
            assert!(
                e.contains("credentials in an image reference are refused"),
                "{e}"
            );
        }
        assert_eq!(
            redact_userinfo("docker://u:p@h:1/r:t"),
            "docker://<redacted>@h:1/r:t"
        );
        // An `@` after the host is a digest, not user information.
        assert_eq!(
            redact_userinfo("docker://h/r@sha256:ab"),
            "docker://h/r@sha256:ab"
        );
        assert_eq!(redact_userinfo("oci:a@b"), "oci:a@b");
    }

    #[test]
    fn oci_and_archives() {
        assert_eq!(
            parse("oci:/nonexistent/img:v1").unwrap(),
            ImageRef::OciDir {
                dir: "/nonexistent/img".into(),
                tag: Some("v1".into())
            }
        );
        assert_eq!(
            parse("oci:img").unwrap(),
            ImageRef::OciDir {
                dir: "img".into(),
                tag: None
            }
        );
        assert_eq!(
            parse("x.tar").unwrap(),
            ImageRef::Archive(PathBuf::from("x.tar"))
        );
    }
}
