//! The signed, monotonic rule feed: what makes a pulled database trustworthy.
//!
//! A published database carries a [`Statement`] (its serial, its database digest, every rule id
//! it holds and the ones it withdraws, OSV `withdrawn`) signed with an Ed25519 key, in an
//! [`Envelope`] (the manifest annotation [`ANNOTATION`]). `pinprobe rules pull` accepts it only
//! when:
//!
//! - the signature verifies with a trusted key: the project's key built into the binary
//!   ([`builtin_keys`]) or one the user names with `--trust FILE`;
//! - the statement names the database that was downloaded (its digest and its rule ids);
//! - its serial is not lower than the newest one already trusted (the built-in database's
//!   [`super::embedded::SERIAL`], or the serial recorded in the cache, [`TrustState`]), and an
//!   equal serial names the same database (no two databases under one serial);
//! - it keeps every rule the newest trusted database holds: a rule goes away only as a
//!   withdrawal record (the rule file with `withdrawn:` set), never by being left out.
//!
//! `--allow-rules-downgrade` lets a pull through the last two checks, loudly, and scans keep
//! saying so ([`TrustState::downgraded`]). Keys are `pinprobe-ed25519:<base64 of 32 bytes>`,
//! one line; a key's id is the first 16 hex digits of the SHA-256 of its bytes. Secret keys are
//! PKCS#8 documents in base64 after a header line, as `pinprobe rules keygen` writes them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest annotation holding the feed's [`Envelope`] (JSON).
pub const ANNOTATION: &str = "dev.pinprobe.rules.feed";
/// A public key's text starts with this.
pub const PUBLIC_PREFIX: &str = "pinprobe-ed25519:";
/// A secret key file's first line.
pub const SECRET_HEADER: &str =
    "pinprobe rules signing key (ed25519, PKCS#8, base64) - keep it secret";
/// The statement's `type`.
pub const STATEMENT_TYPE: &str = "pinprobe-rules-feed/v1";
/// The project's own feed key (its secret half is kept outside the repository).
pub const PROJECT_KEY: &str = include_str!("project-feed.pub");
/// The largest envelope read.
const MAX_ENVELOPE: usize = 1 << 20;

/// Why a feed, a key or a signature was refused.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    #[error("{what}: {message}")]
    Key { what: String, message: String },
    #[error("the database is not signed (no `{ANNOTATION}` annotation): refused")]
    Unsigned,
    #[error("the signature envelope is malformed: {0}")]
    Envelope(String),
    #[error("signed by key {keyid}, which is not trusted (trust it with --trust FILE)")]
    UntrustedKey { keyid: String },
    #[error("the signature does not verify with key {keyid}: refused")]
    BadSignature { keyid: String },
    #[error("the signed statement does not match the database: {0}")]
    Mismatch(String),
    #[error(
        "serial {serial} is older than serial {trusted}, the newest database already trusted ({by}): refused (a rollback; --allow-rules-downgrade overrides)"
    )]
    Downgrade {
        serial: u64,
        trusted: u64,
        by: String,
    },
    #[error(
        "serial {serial} is already trusted for another database ({trusted}): refused (a replay or a fork; --allow-rules-downgrade overrides)"
    )]
    Fork { serial: u64, trusted: String },
    #[error(
        "it drops {ids} without a withdrawal record (OSV `withdrawn`): refused (--allow-rules-downgrade overrides)"
    )]
    Dropped { ids: String },
}

/// An Ed25519 public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    bytes: [u8; 32],
    /// The first 16 hex digits of the SHA-256 of the key's bytes.
    pub id: String,
}

impl PublicKey {
    fn from_bytes(bytes: [u8; 32]) -> PublicKey {
        let id = hex::encode(Sha256::digest(bytes))[..16].to_string();
        PublicKey { bytes, id }
    }

    /// Parse `pinprobe-ed25519:<base64>`; `what` names the source in errors.
    pub fn parse(what: &str, text: &str) -> Result<PublicKey, FeedError> {
        let bad = |message: &str| FeedError::Key {
            what: what.to_string(),
            message: message.to_string(),
        };
        let b64 = text
            .trim()
            .strip_prefix(PUBLIC_PREFIX)
            .ok_or_else(|| bad("not a pinprobe public key (`pinprobe-ed25519:<base64>`)"))?;
        let bytes = B64
            .decode(b64.trim())
            .map_err(|_| bad("the key is not base64"))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| bad("an Ed25519 public key is 32 bytes"))?;
        Ok(PublicKey::from_bytes(bytes))
    }

    /// The key as one line of text.
    pub fn to_text(&self) -> String {
        format!("{PUBLIC_PREFIX}{}", B64.encode(self.bytes))
    }

    fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ED25519, self.bytes)
            .verify(message, signature)
            .is_ok()
    }
}

/// The keys of a trust file: one public key a line; blank lines and `#` comments skipped.
pub fn parse_trust_file(what: &str, text: &str) -> Result<Vec<PublicKey>, FeedError> {
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        keys.push(PublicKey::parse(&format!("{what}:{}", i + 1), line)?);
    }
    if keys.is_empty() {
        return Err(FeedError::Key {
            what: what.to_string(),
            message: "no public key in it".into(),
        });
    }
    Ok(keys)
}

/// The keys built into the binary.
pub fn builtin_keys() -> Vec<PublicKey> {
    // The file is part of the source; a test keeps it parsing.
    parse_trust_file("src/rules/project-feed.pub", PROJECT_KEY).unwrap_or_default()
}

/// An Ed25519 signing key.
pub struct SecretKey {
    pair: Ed25519KeyPair,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public().id)
    }
}

impl SecretKey {
    /// Parse a key file as [`generate`] writes it; `what` names it in errors.
    pub fn parse(what: &str, text: &str) -> Result<SecretKey, FeedError> {
        let bad = |message: &str| FeedError::Key {
            what: what.to_string(),
            message: message.to_string(),
        };
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        if lines.next() != Some(SECRET_HEADER) {
            return Err(bad(
                "not a pinprobe signing key (make one with `pinprobe rules keygen`)",
            ));
        }
        let b64: String = lines.collect();
        let der = B64.decode(b64).map_err(|_| bad("the key is not base64"))?;
        let pair =
            Ed25519KeyPair::from_pkcs8(&der).map_err(|_| bad("not an Ed25519 PKCS#8 key"))?;
        Ok(SecretKey { pair })
    }

    pub fn public(&self) -> PublicKey {
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(self.pair.public_key().as_ref());
        PublicKey::from_bytes(bytes)
    }
}

/// A fresh key pair: the secret key file's text and the public key's line.
pub fn generate() -> Result<(String, String), FeedError> {
    let rng = ring::rand::SystemRandom::new();
    let der = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|_| FeedError::Key {
        what: "keygen".into(),
        message: "the system's random source failed".into(),
    })?;
    let secret = format!("{SECRET_HEADER}\n{}\n", B64.encode(der.as_ref()));
    let key = SecretKey::parse("keygen", &secret)?;
    Ok((secret, format!("{}\n", key.public().to_text())))
}

/// What a feed signs about one database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    #[serde(rename = "type")]
    pub kind: String,
    /// Higher is newer; never reused for another database.
    pub serial: u64,
    /// The database's digest as a scan reports it.
    pub db_digest: String,
    /// The database's date (its newest `modified`).
    pub date: Option<String>,
    /// Every rule id in the database, withdrawn ones included, sorted.
    pub rules: Vec<String>,
    /// The ids withdrawn (OSV `withdrawn`), sorted.
    pub withdrawn: Vec<String>,
}

impl Statement {
    /// The statement for `db` under `serial`.
    pub fn of(db: &super::Database, serial: u64) -> Statement {
        let mut rules: Vec<String> = db
            .rules
            .iter()
            .map(|r| r.rule.id.to_string())
            .chain(db.withdrawn.iter().map(ToString::to_string))
            .collect();
        rules.sort();
        let mut withdrawn: Vec<String> = db.withdrawn.iter().map(ToString::to_string).collect();
        withdrawn.sort();
        Statement {
            kind: STATEMENT_TYPE.into(),
            serial,
            db_digest: db.digest.clone(),
            date: db.date.clone(),
            rules,
            withdrawn,
        }
    }

    /// Whether it describes `db` (digest and rule ids); the difference otherwise.
    pub fn check(&self, db: &super::Database) -> Result<(), FeedError> {
        let actual = Statement::of(db, self.serial);
        if self.db_digest != actual.db_digest {
            return Err(FeedError::Mismatch(format!(
                "it signs {}, the database downloaded is {}",
                self.db_digest, actual.db_digest
            )));
        }
        if self.rules != actual.rules || self.withdrawn != actual.withdrawn {
            return Err(FeedError::Mismatch(
                "its rule ids differ from the database's".into(),
            ));
        }
        Ok(())
    }
}

/// A signed statement as it travels: the statement's exact bytes and a signature over them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The statement's JSON, base64.
    pub statement: String,
    pub keyid: String,
    /// The Ed25519 signature over the statement's bytes, base64.
    pub signature: String,
}

/// Sign `statement` with `key`; the envelope's JSON.
pub fn sign(statement: &Statement, key: &SecretKey) -> String {
    // Serialising a struct of strings and integers cannot fail.
    let bytes = serde_json::to_vec(statement).unwrap_or_default();
    let signature = key.pair.sign(&bytes);
    let envelope = Envelope {
        statement: B64.encode(&bytes),
        keyid: key.public().id,
        signature: B64.encode(signature.as_ref()),
    };
    serde_json::to_string(&envelope).unwrap_or_default()
}

/// Verify an envelope's JSON with `keys`; its statement.
pub fn open(envelope: &str, keys: &[PublicKey]) -> Result<Statement, FeedError> {
    if envelope.len() > MAX_ENVELOPE {
        return Err(FeedError::Envelope(format!(
            "{} bytes, more than {MAX_ENVELOPE}",
            envelope.len()
        )));
    }
    let env: Envelope =
        serde_json::from_str(envelope).map_err(|e| FeedError::Envelope(e.to_string()))?;
    let key = keys
        .iter()
        .find(|k| k.id == env.keyid)
        .ok_or_else(|| FeedError::UntrustedKey {
            keyid: crate::model::text::printable(&env.keyid),
        })?;
    let bytes = B64
        .decode(&env.statement)
        .map_err(|_| FeedError::Envelope("the statement is not base64".into()))?;
    let signature = B64
        .decode(&env.signature)
        .map_err(|_| FeedError::Envelope("the signature is not base64".into()))?;
    if !key.verifies(&bytes, &signature) {
        return Err(FeedError::BadSignature {
            keyid: key.id.clone(),
        });
    }
    let statement: Statement = serde_json::from_slice(&bytes)
        .map_err(|e| FeedError::Envelope(format!("the signed statement: {e}")))?;
    if statement.kind != STATEMENT_TYPE {
        return Err(FeedError::Envelope(format!(
            "the signed statement is of type `{}`, want `{STATEMENT_TYPE}`",
            crate::model::text::printable(&statement.kind)
        )));
    }
    Ok(statement)
}

/// What the cache trusts (`CACHE/rules/trust.json`): the database scans use and the newest
/// one ever accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustState {
    /// The directory (under `CACHE/rules/`) of the database scans use.
    pub current: String,
    /// Its statement.
    pub statement: Statement,
    /// The highest serial ever accepted, and the rule ids of that database.
    pub highest: u64,
    pub highest_rules: Vec<String>,
    /// Whether `current` was accepted with --allow-rules-downgrade below `highest` or the
    /// built-in database.
    pub downgraded: bool,
    /// The id of the key that signed `current` (reports name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
    /// The artifact `current` was pulled from, credentials redacted (reports name it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<String>,
}

/// The newest database already trusted: the built-in one's serial and rule ids, or the
/// cache's record when higher.
pub struct Trusted<'a> {
    pub serial: u64,
    pub rules: &'a [String],
    pub by: String,
    /// The database digest trusted at `serial`, where known.
    pub digest: Option<&'a str>,
}

/// Check `new` against the newest database already trusted. `Ok(warnings)` when it may be
/// used (with `allow_downgrade`, a refusal becomes a warning).
pub fn check_monotonic(
    new: &Statement,
    trusted: &Trusted,
    allow_downgrade: bool,
) -> Result<Vec<String>, FeedError> {
    let mut refusals = Vec::new();
    if new.serial < trusted.serial {
        refusals.push(FeedError::Downgrade {
            serial: new.serial,
            trusted: trusted.serial,
            by: trusted.by.clone(),
        });
    } else if new.serial == trusted.serial
        && let Some(digest) = trusted.digest
        && digest != new.db_digest
    {
        refusals.push(FeedError::Fork {
            serial: new.serial,
            trusted: digest.to_string(),
        });
    }
    let dropped: Vec<&str> = trusted
        .rules
        .iter()
        .filter(|id| !new.rules.iter().any(|n| n.eq_ignore_ascii_case(id)))
        .map(String::as_str)
        .collect();
    if !dropped.is_empty() {
        refusals.push(FeedError::Dropped {
            ids: dropped.join(", "),
        });
    }
    match (refusals.is_empty(), allow_downgrade) {
        (true, _) => Ok(Vec::new()),
        (false, true) => Ok(refusals
            .into_iter()
            .map(|r| format!("--allow-rules-downgrade: accepted although {r}"))
            .collect()),
        (false, false) => Err(refusals.remove(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(serial: u64, rules: &[&str]) -> Statement {
        Statement {
            kind: STATEMENT_TYPE.into(),
            serial,
            db_digest: format!("sha256:{serial}"),
            date: None,
            rules: rules.iter().map(|s| s.to_string()).collect(),
            withdrawn: Vec::new(),
        }
    }

    #[test]
    fn a_signature_verifies_only_with_its_key_and_only_over_its_bytes() {
        let (secret, public) = generate().expect("keygen");
        let key = SecretKey::parse("s", &secret).expect("secret");
        let public = PublicKey::parse("p", &public).expect("public");
        assert_eq!(key.public(), public);
        let s = statement(7, &["A"]);
        let env = sign(&s, &key);
        assert_eq!(open(&env, std::slice::from_ref(&public)).expect("opens"), s);

        // Another key with the same id cannot exist; an unknown id is untrusted.
        let (_, other) = generate().expect("keygen");
        let other = PublicKey::parse("o", &other).expect("public");
        assert!(matches!(
            open(&env, std::slice::from_ref(&other)),
            Err(FeedError::UntrustedKey { .. })
        ));
        // A forged key entry with the trusted id but other bytes: the signature fails.
        let forged = PublicKey {
            bytes: other.bytes,
            id: public.id.clone(),
        };
        assert!(matches!(
            open(&env, &[forged]),
            Err(FeedError::BadSignature { .. })
        ));

        // A statement changed after signing, and a truncated signature.
        let mut e: Envelope = serde_json::from_str(&env).expect("json");
        let changed = serde_json::to_vec(&statement(8, &["A"])).expect("json");
        e.statement = B64.encode(changed);
        let tampered = serde_json::to_string(&e).expect("json");
        assert!(matches!(
            open(&tampered, std::slice::from_ref(&public)),
            Err(FeedError::BadSignature { .. })
        ));
        let mut e: Envelope = serde_json::from_str(&env).expect("json");
        let sig = B64.decode(&e.signature).expect("b64");
        e.signature = B64.encode(&sig[..40]);
        let truncated = serde_json::to_string(&e).expect("json");
        assert!(matches!(
            open(&truncated, std::slice::from_ref(&public)),
            Err(FeedError::BadSignature { .. })
        ));
        for junk in ["", "{}", "null", "[1]", "{\"statement\":1}"] {
            assert!(matches!(
                open(junk, std::slice::from_ref(&public)),
                Err(FeedError::Envelope(_))
            ));
        }
    }

    #[test]
    fn lower_serials_forks_and_dropped_rules_are_refused_unless_allowed() {
        let rules = vec!["A".to_string(), "B".to_string()];
        let trusted = Trusted {
            serial: 10,
            rules: &rules,
            by: "the built-in database".into(),
            digest: Some("sha256:10"),
        };
        assert!(check_monotonic(&statement(11, &["A", "B", "C"]), &trusted, false).is_ok());
        assert!(check_monotonic(&statement(10, &["A", "B"]), &trusted, false).is_ok());
        let mut fork = statement(10, &["A", "B"]);
        fork.db_digest = "sha256:other".into();
        assert!(matches!(
            check_monotonic(&fork, &trusted, false),
            Err(FeedError::Fork { .. })
        ));
        assert!(matches!(
            check_monotonic(&statement(9, &["A", "B"]), &trusted, false),
            Err(FeedError::Downgrade { .. })
        ));
        let err = check_monotonic(&statement(12, &["A"]), &trusted, false).expect_err("drops B");
        assert!(err.to_string().contains("drops B"), "{err}");
        // A withdrawal keeps the id: not a drop.
        let mut withdrawn = statement(12, &["A", "B"]);
        withdrawn.withdrawn = vec!["B".into()];
        assert!(check_monotonic(&withdrawn, &trusted, false).is_ok());
        let warnings = check_monotonic(&statement(9, &["A"]), &trusted, true).expect("allowed");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn keys_parse_or_name_the_problem() {
        assert_eq!(builtin_keys().len(), 1, "the project key parses");
        for bad in [
            "",
            "ssh-ed25519 AAAA",
            "pinprobe-ed25519:!!",
            "pinprobe-ed25519:AAAA",
        ] {
            assert!(PublicKey::parse("k", bad).is_err(), "{bad:?}");
        }
        assert!(SecretKey::parse("s", "pinprobe-ed25519:AAAA").is_err());
        assert!(SecretKey::parse("s", &format!("{SECRET_HEADER}\nAAAA\n")).is_err());
        assert!(parse_trust_file("t", "# nothing\n\n").is_err());
    }
}
