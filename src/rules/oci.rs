//! The rule database as an OCI artifact, the way Trivy's database is distributed: one image
//! manifest (`artifactType` [`ARTIFACT_TYPE`]) whose config is the empty descriptor and whose
//! single layer ([`LAYER_MEDIA_TYPE`]) is the database directory as an uncompressed tar (rule
//! files, `components.yaml`, `ledger.yaml`, nothing else, no subdirectories).
//!
//! - [`push`] loads the directory as a whole database first (a database that does not load is
//!   never published), signs its [`feed::Statement`] (serial, digest, rule ids) with the
//!   publisher's key, then uploads the layer, the config and the manifest, whose annotation
//!   [`feed::ANNOTATION`] carries the signed statement.
//! - [`pull`] checks the manifest against its digest, its artifact and media types, the
//!   signature against the trusted keys, the layer against its descriptor's digest and size,
//!   unpacks only plain `*.yaml` files, loads the result as a whole database (schema and every
//!   rule validated), checks that the statement names exactly that database and that it is no
//!   rollback ([`feed::check_monotonic`]), and only then moves it into
//!   `CACHE/rules/sha256-<hex>/` and records it in `CACHE/rules/trust.json`
//!   ([`feed::TrustState`]), where scans find it ([`super::load::load_in`]).

use super::feed::{self, FeedError, PublicKey, SecretKey, TrustState};
use super::load::{self, PULLED_DIR, RulesError, TRUST_FILE};
use crate::view::image::registry::Registry;
use crate::view::image::{Fault, Options, reference};
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The manifest's `artifactType`.
pub const ARTIFACT_TYPE: &str = "application/vnd.pinprobe.rules.v1";
/// The media type of the one layer: the database directory as a tar.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.pinprobe.rules.layer.v1.tar";
const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
const EMPTY_CONFIG: &[u8] = b"{}";
/// The largest layer accepted.
const MAX_LAYER: u64 = 64 << 20;
/// The most files a layer may hold.
const MAX_FILES: usize = 10_000;

/// Why a database could not be published or pulled.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("{reference}: {fault}")]
    Registry { reference: String, fault: Fault },
    #[error("{reference}: {message}")]
    Invalid { reference: String, message: String },
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error("{reference}: {source}")]
    Feed {
        reference: String,
        #[source]
        source: FeedError,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a pull stored.
#[derive(Debug)]
pub struct Pulled {
    /// The manifest's digest.
    pub digest: String,
    /// The database's digest and date, as a scan reports them.
    pub db_digest: String,
    pub date: Option<String>,
    /// Where it is stored.
    pub path: PathBuf,
    /// Its feed serial and the key that signed it.
    pub serial: u64,
    pub keyid: String,
    /// What --allow-rules-downgrade let through, one line each.
    pub warnings: Vec<String>,
}

/// How a pull decides trust.
#[derive(Debug, Default)]
pub struct Trust {
    /// The keys a signature may verify with (the built-in ones and any --trust FILE's).
    pub keys: Vec<PublicKey>,
    /// Accept a lower serial, a fork or a dropped rule, with a warning.
    pub allow_downgrade: bool,
}

fn registry(target: &str, opts: &Options) -> Result<Registry, OciError> {
    let bad = |fault| OciError::Registry {
        reference: reference::redact_userinfo(target).into_owned(),
        fault,
    };
    match reference::parse(target).map_err(bad)? {
        reference::ImageRef::Registry(r) => Registry::new(r, opts).map_err(bad),
        _ => Err(OciError::Invalid {
            reference: target.to_string(),
            message:
                "a rule database is pushed to and pulled from a registry: docker://HOST/REPO:TAG"
                    .into(),
        }),
    }
}

/// The directory's rule database files as a tar, in name order, with fixed metadata (the same
/// directory always gives the same digest).
pub fn pack(dir: &Path) -> Result<Vec<u8>, OciError> {
    let read = load::read_dir(dir)?;
    let mut files: Vec<(String, &str)> = Vec::new();
    for (path, text) in &read.files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        files.push((name, text));
    }
    if let Some(text) = &read.components {
        files.push(("components.yaml".into(), text));
    }
    if let Some(text) = &read.ledger {
        files.push((load::LEDGER_FILE.into(), text));
    }
    files.sort();
    let mut builder = tar::Builder::new(Vec::new());
    for (name, text) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, &name, text.as_bytes())
            .map_err(|source| OciError::Io {
                path: dir.join(&name),
                source,
            })?;
    }
    builder.into_inner().map_err(|source| OciError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Publish `dir` (a whole database) to `target` (`docker://HOST/REPO:TAG`), signed with `key`
/// under `serial`; returns the manifest's digest.
pub fn push(
    dir: &Path,
    target: &str,
    opts: &Options,
    key: &SecretKey,
    serial: u64,
) -> Result<String, OciError> {
    let read = load::read_dir(dir)?;
    let (db, _) = load::load_layers(Some((dir, &read)), None)?;
    let envelope = feed::sign(&feed::Statement::of(&db, serial), key);
    let layer = pack(dir)?;
    let mut client = registry(target, opts)?;
    let tag = client.reference().reference().to_string();
    let fail = |fault| OciError::Registry {
        reference: reference::redact_userinfo(target).into_owned(),
        fault,
    };
    let layer_digest = client.push_blob(&layer).map_err(fail)?;
    let config_digest = client.push_blob(EMPTY_CONFIG).map_err(fail)?;
    let mut annotations = serde_json::Map::new();
    annotations.insert("dev.pinprobe.rules.digest".into(), json!(db.digest));
    annotations.insert(feed::ANNOTATION.into(), json!(envelope));
    if let Some(date) = &db.date {
        annotations.insert("org.opencontainers.image.created".into(), json!(date));
    }
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": {"mediaType": EMPTY_MEDIA_TYPE, "digest": config_digest, "size": EMPTY_CONFIG.len()},
        "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": layer_digest, "size": layer.len()}],
        "annotations": annotations,
    });
    let bytes = serde_json::to_vec(&manifest).map_err(|e| OciError::Invalid {
        reference: target.to_string(),
        message: e.to_string(),
    })?;
    client
        .push_manifest(&tag, &bytes, MANIFEST_MEDIA_TYPE)
        .map_err(fail)
}

/// Pull the database `target` names into `cache`, checked whole (signature, content, no
/// rollback) before it is stored and trusted.
pub fn pull(target: &str, cache: &Path, opts: &Options, trust: &Trust) -> Result<Pulled, OciError> {
    let shown = reference::redact_userinfo(target).into_owned();
    let invalid = |message: String| OciError::Invalid {
        reference: shown.clone(),
        message,
    };
    let fail = |fault| OciError::Registry {
        reference: shown.clone(),
        fault,
    };
    let refuse = |source| OciError::Feed {
        reference: shown.clone(),
        source,
    };
    let mut client = registry(target, opts)?;
    let (bytes, digest) = client.pull_manifest(None).map_err(fail)?;
    let manifest: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| invalid(format!("manifest {digest}: not JSON: {e}")))?;
    let artifact = manifest["artifactType"].as_str().unwrap_or_default();
    if artifact != ARTIFACT_TYPE {
        return Err(invalid(format!(
            "manifest {digest} is not a pinprobe rule database (artifactType `{artifact}`, want `{ARTIFACT_TYPE}`)"
        )));
    }
    // The signature first: an unsigned or wrongly signed database is not even downloaded.
    let envelope = manifest["annotations"][feed::ANNOTATION]
        .as_str()
        .ok_or(FeedError::Unsigned)
        .map_err(refuse)?;
    let statement = feed::open(envelope, &trust.keys).map_err(refuse)?;
    let keyid = serde_json::from_str::<feed::Envelope>(envelope)
        .map(|e| e.keyid)
        .unwrap_or_default();
    let layers = manifest["layers"].as_array().cloned().unwrap_or_default();
    let [layer] = layers.as_slice() else {
        return Err(invalid(format!(
            "manifest {digest} has {} layers, a rule database has exactly one",
            layers.len()
        )));
    };
    let media = layer["mediaType"].as_str().unwrap_or_default();
    if media != LAYER_MEDIA_TYPE {
        return Err(invalid(format!(
            "layer media type `{media}`, want `{LAYER_MEDIA_TYPE}`"
        )));
    }
    let layer_digest = layer["digest"].as_str().unwrap_or_default().to_string();
    let size = layer["size"].as_u64().unwrap_or(u64::MAX);
    if size > MAX_LAYER {
        return Err(invalid(format!(
            "layer {layer_digest} is {size} bytes, more than {MAX_LAYER}"
        )));
    }
    let tar = client.pull_blob(&layer_digest, size).map_err(fail)?;
    if tar.len() as u64 != size {
        return Err(invalid(format!(
            "layer {layer_digest} is {} bytes, its descriptor says {size}",
            tar.len()
        )));
    }
    let root = cache.join(PULLED_DIR);
    std::fs::create_dir_all(&root).map_err(|source| OciError::Io {
        path: root.clone(),
        source,
    })?;
    let staging = tempfile::Builder::new()
        .prefix(".pull-")
        .tempdir_in(&root)
        .map_err(|source| OciError::Io {
            path: root.clone(),
            source,
        })?;
    unpack(&tar, staging.path()).map_err(invalid)?;
    let read = load::read_dir(staging.path())?;
    let (db, _) = load::load_layers(Some((staging.path(), &read)), None)
        .map_err(|e| invalid(format!("the database does not load: {e}")))?;
    statement.check(&db).map_err(refuse)?;
    let state = load::trust_state(cache);
    let trusted = newest_trusted(state.as_ref());
    let warnings =
        feed::check_monotonic(&statement, &trusted, trust.allow_downgrade).map_err(refuse)?;
    let hex = digest.trim_start_matches("sha256:");
    let path = root.join(format!("sha256-{hex}"));
    if !path.is_dir() {
        let staged = staging.keep();
        std::fs::rename(&staged, &path).map_err(|source| OciError::Io {
            path: path.clone(),
            source,
        })?;
    }
    let (highest, highest_rules) = if statement.serial >= trusted.serial {
        (statement.serial, statement.rules.clone())
    } else {
        (trusted.serial, trusted.rules.to_vec())
    };
    let record = TrustState {
        current: format!("sha256-{hex}"),
        statement: statement.clone(),
        highest,
        highest_rules,
        downgraded: !warnings.is_empty(),
        keyid: Some(keyid.clone()).filter(|k| !k.is_empty()),
        feed: Some(shown.clone()),
    };
    write_trust(cache, &record)?;
    Ok(Pulled {
        digest,
        db_digest: db.digest,
        date: db.date,
        path,
        serial: statement.serial,
        keyid,
        warnings,
    })
}

/// The newest database already trusted: the cache's record when it is higher than the
/// built-in database, else the built-in one.
fn newest_trusted(state: Option<&TrustState>) -> feed::Trusted<'_> {
    static BUILTIN_RULES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let builtin = BUILTIN_RULES.get_or_init(|| {
        load::load(None)
            .map(|(db, _)| feed::Statement::of(&db, super::embedded::SERIAL).rules)
            .unwrap_or_default()
    });
    match state {
        Some(s) if s.highest >= super::embedded::SERIAL => feed::Trusted {
            serial: s.highest,
            rules: &s.highest_rules,
            by: "recorded in the cache".into(),
            digest: (s.statement.serial == s.highest).then_some(s.statement.db_digest.as_str()),
        },
        _ => feed::Trusted {
            serial: super::embedded::SERIAL,
            rules: builtin,
            by: "the built-in database".into(),
            digest: None,
        },
    }
}

/// Record `state` as `CACHE/rules/trust.json`, whole (written aside, then moved).
fn write_trust(cache: &Path, state: &TrustState) -> Result<(), OciError> {
    let path = cache.join(PULLED_DIR).join(TRUST_FILE);
    let io = |source| OciError::Io {
        path: path.clone(),
        source,
    };
    let text = serde_json::to_vec_pretty(state).map_err(|e| io(std::io::Error::other(e)))?;
    let dir = cache.join(PULLED_DIR);
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, &text).map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Unpack a database layer into `dir`: plain files named `*.yaml` / `*.yml` at the top level
/// only; anything else (a path with a directory, a link, a device) refuses the whole layer.
fn unpack(tar: &[u8], dir: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(tar);
    let entries = archive.entries().map_err(|e| format!("layer: {e}"))?;
    let mut count = 0usize;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("layer: {e}"))?;
        count += 1;
        if count > MAX_FILES {
            return Err(format!("layer: more than {MAX_FILES} files"));
        }
        let name = entry
            .path()
            .map_err(|e| format!("layer: {e}"))?
            .to_string_lossy()
            .into_owned();
        let plain = entry.header().entry_type() == tar::EntryType::Regular;
        let safe = !name.is_empty()
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && (name.ends_with(".yaml") || name.ends_with(".yml"));
        if !plain || !safe {
            return Err(format!(
                "layer: `{}` is not a plain rule file at the top level",
                name.escape_default()
            ));
        }
        let mut bytes = Vec::new();
        entry
            .by_ref()
            .take(crate::input::MAX_TEXT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("layer: {name}: {e}"))?;
        if bytes.len() as u64 > crate::input::MAX_TEXT {
            return Err(format!("layer: {name} is too large"));
        }
        std::fs::write(dir.join(&name), &bytes).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}
