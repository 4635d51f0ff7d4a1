//! Image references: what an image target string names.
//!
//! The forms Skopeo, Syft and Trivy users type:
//!
//! - `docker://[HOST[:PORT]/]REPO[:TAG][@sha256:HEX]` (also `registry:`): a registry. A first
//!   component without a `.` or `:` (and not `localhost`) is a Docker Hub repository, as
//!   `docker pull` reads it.
//! - `oci:DIR[:TAG]`: an OCI image-layout directory.
//! - `oci-archive:PATH[:TAG]`: an OCI image layout in a tar file.
//! - `docker-archive:PATH[:REF]`: a `docker save` archive (`REF` picks one of several images by
//!   its `RepoTags` name).
//! - `docker-daemon:NAME[:TAG]`, `podman:NAME[:TAG]`: an image in the local engine, exported
//!   through its API socket (see [`super::daemon`]).
//! - any other string (a `.tar`, `.tar.gz` or `.tgz` path): a `docker save` archive.

use super::Fault;
use std::path::{Path, PathBuf};

/// What an image target names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    Registry(RegistryRef),
    OciDir {
        dir: PathBuf,
        tag: Option<String>,
    },
    Archive(PathBuf),
    /// An archive holding several images, and the one wanted (`docker-archive:PATH:REF` by its
    /// `RepoTags` name, `oci-archive:PATH:TAG` by its index tag).
    ArchiveImage {
        path: PathBuf,
        select: String,
    },
    /// An image the local engine holds.
    Daemon {
        engine: super::daemon::Engine,
        name: String,
    },
}

/// The prefixes that name an image, whatever follows them.
pub const PREFIXES: &[&str] = &[
    "docker://",
    "registry:",
    "oci:",
    "oci-archive:",
    "docker-archive:",
    "docker-daemon:",
    "podman:",
];

/// Whether `target` names an image by one of [`PREFIXES`].
pub fn has_prefix(target: &str) -> bool {
    PREFIXES.iter().any(|p| target.starts_with(p))
}

/// A registry reference in its one spelling: `registry:X` is `docker://X`.
pub fn canonical(target: &str) -> std::borrow::Cow<'_, str> {
    match target.strip_prefix("registry:") {
        Some(rest) => format!("docker://{}", rest.trim_start_matches("//")).into(),
        None => target.into(),
    }
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
    let target = &*canonical(target);
    if let Some(rest) = target.strip_prefix("docker-archive:") {
        return archive_path(rest, "docker-archive");
    }
    if let Some(rest) = target.strip_prefix("oci-archive:") {
        return archive_path(rest, "oci-archive");
    }
    for (prefix, engine) in [
        ("docker-daemon:", super::daemon::Engine::Docker),
        ("podman:", super::daemon::Engine::Podman),
    ] {
        if let Some(name) = target.strip_prefix(prefix) {
            let name = name.trim_start_matches("//");
            // The name as the engine knows it: `[HOST/]REPO[:TAG]` or an image id.
            if name.is_empty()
                || !name.bytes().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'/' | b':' | b'.' | b'_' | b'-' | b'@')
                })
            {
                return Err(Fault::Reference(format!(
                    "{prefix}{name}: an image name is [HOST/]REPO[:TAG] (letters, digits, `/`, `:`, `.`, `_`, `-`)"
                )));
            }
            return Ok(ImageRef::Daemon {
                engine,
                name: name.to_string(),
            });
        }
    }
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

/// `PATH` or `PATH:REF` after an archive prefix: the whole string when it is a file; else the
/// longest prefix that is a file, with what follows as the image wanted (`REF` may hold a `:`
/// itself: `img.tar:team/vllm:0.30`); else the part before the last `:`.
fn archive_path(rest: &str, prefix: &str) -> Result<ImageRef, Fault> {
    if rest.is_empty() {
        return Err(Fault::Reference(format!("{prefix}: needs a file")));
    }
    if Path::new(rest).is_file() {
        return Ok(ImageRef::Archive(PathBuf::from(rest)));
    }
    let colons: Vec<usize> = rest.match_indices(':').map(|(at, _)| at).collect();
    let at = colons
        .iter()
        .rev()
        .find(|at| Path::new(&rest[..**at]).is_file())
        .or(colons.last());
    match at {
        Some(&at) if at > 0 && at + 1 < rest.len() => Ok(ImageRef::ArchiveImage {
            path: PathBuf::from(&rest[..at]),
            select: rest[at + 1..].to_string(),
        }),
        _ => Ok(ImageRef::Archive(PathBuf::from(rest))),
    }
}

/// `target` with any user information (`user:pass@`) in a `docker://` reference's host part
/// replaced by `<redacted>@`, for every message that names the target.
pub fn redact_userinfo(target: &str) -> std::borrow::Cow<'_, str> {
    let canonical = canonical(target);
    let Some(rest) = canonical.strip_prefix("docker://") else {
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
    fn every_prefix_users_type() {
        // registry: is docker://.
        assert_eq!(
            parse("registry:127.0.0.1:5000/team/vllm:0.30").unwrap(),
            parse("docker://127.0.0.1:5000/team/vllm:0.30").unwrap()
        );
        assert_eq!(
            redact_userinfo("registry:u:p@h/r:t"),
            "docker://<redacted>@h/r:t"
        );
        // Archives: the path, or the path and the image wanted (a REF may hold `:` and `/`).
        assert_eq!(
            parse("docker-archive:/nonexistent/x.tar").unwrap(),
            ImageRef::Archive("/nonexistent/x.tar".into())
        );
        assert_eq!(
            parse("oci-archive:/nonexistent/x.tar:v1").unwrap(),
            ImageRef::ArchiveImage {
                path: "/nonexistent/x.tar".into(),
                select: "v1".into()
            }
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.tar");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(
            parse(&format!("docker-archive:{}:team/vllm:0.30", file.display())).unwrap(),
            ImageRef::ArchiveImage {
                path: file.clone(),
                select: "team/vllm:0.30".into()
            }
        );
        assert!(parse("docker-archive:").is_err());
        // The engines.
        assert_eq!(
            parse("docker-daemon:vllm/vllm-openai:v0.30.0").unwrap(),
            ImageRef::Daemon {
                engine: crate::view::image::daemon::Engine::Docker,
                name: "vllm/vllm-openai:v0.30.0".into()
            }
        );
        assert!(matches!(
            parse("podman:localhost/vllm").unwrap(),
            ImageRef::Daemon {
                engine: crate::view::image::daemon::Engine::Podman,
                ..
            }
        ));
        assert!(parse("docker-daemon:a b").is_err());
        assert!(parse("podman:").is_err());
        for p in PREFIXES {
            assert!(has_prefix(&format!("{p}x")), "{p}");
        }
        assert!(!has_prefix("image.tar"));
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
