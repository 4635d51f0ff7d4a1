//! Image manifests, indexes and configs (OCI and Docker v2 schema 2), checked digests, and the
//! choice of one platform from a multi-arch index.

use super::reference::valid_digest;
use super::{Fault, LayerRef, Resolved};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

/// Media types asked for from registries, most specific first.
pub const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.v2+json";

/// Largest manifest, index or config read into memory.
pub const MAX_JSON: u64 = 16 << 20;
/// How deep nested indexes may go.
const MAX_DEPTH: usize = 4;

/// A content descriptor.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    #[serde(default)]
    pub media_type: Option<String>,
    pub digest: String,
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub platform: Option<Platform>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `os/architecture[/variant]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    #[serde(default)]
    pub variant: Option<String>,
}

impl Platform {
    /// Parse `os/arch[/variant]` (e.g. `linux/amd64`, `linux/arm64/v8`).
    pub fn parse(s: &str) -> Result<Platform, Fault> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [os, arch] | [os, arch, _] if !os.is_empty() && !arch.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: parts
                    .get(2)
                    .filter(|v| !v.is_empty())
                    .map(|v| v.to_string()),
            }),
            _ => Err(Fault::Reference(format!(
                "--platform `{s}` is not os/arch[/variant] (e.g. linux/amd64)"
            ))),
        }
    }

    /// Whether an index entry's platform is exactly this one: os, architecture and variant all
    /// equal (arm64 without a variant is `v8`, its default; no other variant is assumed).
    pub fn matches(&self, other: &Platform) -> bool {
        let norm = |p: &Platform| match (p.architecture.as_str(), p.variant.as_deref()) {
            ("arm64", None) => Some("v8".to_string()),
            (_, v) => v.map(str::to_string),
        };
        self.os == other.os && self.architecture == other.architecture && norm(self) == norm(other)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    #[serde(default)]
    schema_version: Option<u32>,
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Option<Vec<Descriptor>>,
    #[serde(default)]
    manifests: Option<Vec<Descriptor>>,
}

/// A manifest document: an index of manifests, or one image manifest.
#[derive(Debug, Clone)]
pub enum Document {
    Index(Vec<Descriptor>),
    Manifest {
        config: Descriptor,
        layers: Vec<Descriptor>,
    },
}

/// Image manifest media types (OCI and Docker schema 2).
const MANIFEST_TYPES: &[&str] = &[
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];
/// Filesystem layer media types: OCI layers (plain, gzip, zstd, non-distributable) and Docker
/// rootfs diffs (including foreign layers).
const LAYER_TYPE_PREFIXES: &[&str] = &[
    "application/vnd.oci.image.layer.",
    "application/vnd.docker.image.rootfs.",
];

/// Parse a manifest or index; `what` names it in errors.
pub fn parse(bytes: &[u8], what: &str) -> Result<Document, Fault> {
    let raw: RawManifest = serde_json::from_slice(bytes).map_err(|e| Fault::malformed(what, e))?;
    if raw.schema_version == Some(1) {
        return Err(Fault::Unsupported(format!(
            "{what}: Docker schema 1 manifests are not supported"
        )));
    }
    let is_index = raw.manifests.is_some()
        || raw
            .media_type
            .as_deref()
            .is_some_and(|m| m.contains("index") || m.contains("manifest.list"));
    let check = |d: &Descriptor| {
        if valid_digest(&d.digest) {
            Ok(())
        } else {
            Err(Fault::malformed(
                what,
                format!("unsupported or invalid digest `{}`", d.digest),
            ))
        }
    };
    if is_index {
        let manifests = raw
            .manifests
            .ok_or_else(|| Fault::malformed(what, "an index without `manifests`"))?;
        manifests.iter().try_for_each(check)?;
        return Ok(Document::Index(manifests));
    }
    // A document that says what it is must say it is an image manifest, and every layer must
    // be a filesystem layer: anything else (a plugin, an artifact, an attestation) cannot be
    // merged into a filesystem, and reading it as one would answer for files that are not there.
    if let Some(m) = raw.media_type.as_deref()
        && !MANIFEST_TYPES.contains(&m)
    {
        return Err(Fault::malformed(
            what,
            format!("media type `{m}` is not an image manifest"),
        ));
    }
    if let Some(m) = raw
        .layers
        .iter()
        .flatten()
        .filter_map(|l| l.media_type.as_deref())
        .find(|m| !LAYER_TYPE_PREFIXES.iter().any(|p| m.starts_with(p)))
    {
        return Err(Fault::malformed(
            what,
            format!("layer media type `{m}` is not a filesystem layer"),
        ));
    }
    let config = raw
        .config
        .ok_or_else(|| Fault::malformed(what, "missing field `config`"))?;
    let layers = raw
        .layers
        .ok_or_else(|| Fault::malformed(what, "missing field `layers`"))?;
    check(&config)?;
    layers.iter().try_for_each(check)?;
    Ok(Document::Manifest { config, layers })
}

/// Pick `platform` from an index's entries: os, architecture and variant must match exactly.
/// When several entries match, the first is taken and a warning says so (pushed on `warnings`).
pub fn select<'a>(
    entries: &'a [Descriptor],
    platform: &Platform,
    warnings: &mut Vec<String>,
) -> Result<&'a Descriptor, Fault> {
    let matching: Vec<&Descriptor> = entries
        .iter()
        .filter(|d| d.platform.as_ref().is_some_and(|p| platform.matches(p)))
        .collect();
    if matching.len() > 1 {
        warnings.push(format!(
            "{} index entries match platform {platform} ({}); the first, {}, was scanned",
            matching.len(),
            matching
                .iter()
                .map(|d| d.digest.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            matching[0].digest
        ));
    }
    matching.first().copied().ok_or_else(|| Fault::Platform {
        platform: platform.to_string(),
        available: entries
            .iter()
            .filter_map(|d| d.platform.as_ref().map(Platform::to_string))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// An image config: platform, history and layer diff ids.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ImageConfig {
    #[serde(default)]
    pub os: Option<String>,
    #[serde(default)]
    pub architecture: Option<String>,
    #[serde(default)]
    pub variant: Option<String>,
    #[serde(default)]
    pub history: Vec<History>,
    #[serde(default)]
    pub rootfs: Option<RootFs>,
    /// The process settings (`Env`, `Volumes`, `WorkingDir`), read leniently by
    /// [`ImageConfig::runtime`]: a malformed one makes what depends on it undecidable, not the
    /// image unreadable.
    #[serde(default)]
    pub config: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct History {
    #[serde(default)]
    pub created_by: Option<String>,
    #[serde(default)]
    pub empty_layer: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RootFs {
    #[serde(default)]
    pub diff_ids: Vec<String>,
}

impl ImageConfig {
    pub fn parse(bytes: &[u8], what: &str) -> Result<ImageConfig, Fault> {
        serde_json::from_slice(bytes).map_err(|e| Fault::malformed(what, e))
    }

    pub fn diff_ids(&self) -> &[String] {
        self.rootfs.as_ref().map_or(&[], |r| &r.diff_ids)
    }

    /// What the image's processes start with.
    pub fn runtime(&self) -> crate::view::Runtime {
        let mut out = crate::view::Runtime::default();
        let Some(config) = self.config.as_ref().filter(|c| !c.is_null()) else {
            return out;
        };
        match &config["Env"] {
            serde_json::Value::Null => {}
            serde_json::Value::Array(items) => {
                for item in items {
                    match item.as_str() {
                        // `KEY=VALUE`; a bare `KEY` sets nothing in a process.
                        Some(kv) => {
                            if let Some((k, v)) = kv.split_once('=') {
                                out.env.push((k.to_string(), v.to_string()));
                            }
                        }
                        None => {
                            out.malformed = Some(format!("config.Env holds {item}, not a string"))
                        }
                    }
                }
            }
            other => out.malformed = Some(format!("config.Env is {other}, not a list")),
        }
        if let Some(volumes) = config["Volumes"].as_object() {
            out.volumes = volumes.keys().cloned().collect();
        }
        out.working_dir = config["WorkingDir"]
            .as_str()
            .filter(|d| !d.is_empty())
            .map(String::from);
        out
    }

    /// `os/arch[/variant]`, when the config says.
    pub fn platform(&self) -> Option<Platform> {
        Some(Platform {
            os: self.os.clone()?,
            architecture: self.architecture.clone()?,
            variant: self.variant.clone(),
        })
    }
}

/// `sha256:HEX` of some bytes.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Check fetched bytes against the digest that named them.
pub fn verify(bytes: &[u8], digest: &str, what: &'static str) -> Result<(), Fault> {
    let actual = sha256(bytes);
    if actual == digest {
        Ok(())
    } else {
        Err(Fault::Digest {
            what,
            digest: digest.to_string(),
            actual,
        })
    }
}

/// Fetches a blob by digest (`what` names its kind: `manifest` or `config`), checked
/// against that digest.
pub type Fetch<'a> = dyn FnMut(&str, &'static str) -> Result<Vec<u8>, Fault> + 'a;

/// Walk from a descriptor down to one image manifest, fetching verified blobs with `fetch`
/// (`fetch(digest, what)` returns bytes already checked against `digest`).
pub fn resolve(
    mut desc: Descriptor,
    platform: &Platform,
    fetch: &mut Fetch<'_>,
) -> Result<Resolved, Fault> {
    let mut warnings = Vec::new();
    for _ in 0..MAX_DEPTH {
        let bytes = fetch(&desc.digest, "manifest")?;
        match parse(&bytes, &format!("manifest {}", desc.digest))? {
            Document::Index(entries) => desc = select(&entries, platform, &mut warnings)?.clone(),
            Document::Manifest { config, layers } => {
                let mut resolved = from_manifest(Some(desc.digest), &config, &layers, fetch)?;
                resolved.warnings.splice(0..0, warnings);
                return Ok(resolved);
            }
        }
    }
    Err(Fault::malformed("index", "indexes nested too deeply"))
}

/// Build a [`Resolved`] from an image manifest.
pub fn from_manifest(
    manifest_digest: Option<String>,
    config: &Descriptor,
    layers: &[Descriptor],
    fetch: &mut Fetch<'_>,
) -> Result<Resolved, Fault> {
    let bytes = fetch(&config.digest, "config")?;
    let config = ImageConfig::parse(&bytes, &format!("config {}", config.digest))?;
    let layers = layers
        .iter()
        .map(|l| LayerRef {
            digest: Some(l.digest.clone()),
            diff_id: None,
            size: l.size,
            location: l.digest.clone(),
        })
        .collect();
    Ok(Resolved {
        manifest_digest,
        config,
        layers,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms() {
        let p = Platform::parse("linux/arm64").unwrap();
        let v8 = Platform::parse("linux/arm64/v8").unwrap();
        assert!(p.matches(&v8) && v8.matches(&p));
        assert!(!Platform::parse("linux/amd64").unwrap().matches(&v8));
        // Variants match exactly: linux/amd64 is not linux/amd64/v3, arm/v6 is not arm/v7.
        let amd64 = Platform::parse("linux/amd64").unwrap();
        let v3 = Platform::parse("linux/amd64/v3").unwrap();
        assert!(!amd64.matches(&v3) && !v3.matches(&amd64));
        let v6 = Platform::parse("linux/arm/v6").unwrap();
        assert!(!v6.matches(&Platform::parse("linux/arm/v7").unwrap()));
        assert!(!p.matches(&Platform::parse("linux/arm64/v9").unwrap()));
        assert!(Platform::parse("linux").is_err());
    }

    #[test]
    fn malformed_documents() {
        assert!(parse(b"{nope", "m").is_err());
        assert!(
            parse(
                br#"{"schemaVersion":2,"config":{"digest":"sha256:1"}}"#,
                "m"
            )
            .is_err()
        );
        assert!(parse(br#"{"schemaVersion":1}"#, "m").is_err());
        let d = format!("sha256:{}", "0".repeat(64));
        let ok = format!(r#"{{"schemaVersion":2,"config":{{"digest":"{d}"}},"layers":[]}}"#);
        assert!(matches!(
            parse(ok.as_bytes(), "m"),
            Ok(Document::Manifest { .. })
        ));
        let plugin = format!(
            r#"{{"mediaType":"application/vnd.docker.plugin.v1+json","config":{{"digest":"{d}"}},"layers":[]}}"#
        );
        assert!(parse(plugin.as_bytes(), "m").is_err());
        let artifact = format!(
            r#"{{"config":{{"digest":"{d}"}},"layers":[{{"mediaType":"application/vnd.in-toto+json","digest":"{d}"}}]}}"#
        );
        assert!(parse(artifact.as_bytes(), "m").is_err());
        let traversal = r#"{"manifests":[{"digest":"sha256:../../etc/passwd"}]}"#;
        assert!(parse(traversal.as_bytes(), "m").is_err());
    }
}
