//! Registry credentials and authentication challenges.
//!
//! Credentials come from `PINPROBE_REGISTRY_USERNAME` / `PINPROBE_REGISTRY_PASSWORD` for the
//! registry `PINPROBE_REGISTRY_HOST` names (and only that one), else from
//! the Docker `config.json` (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`), as
//! Docker reads it: the registry's `credHelpers` entry, else its `auths` entry (`auth` = base64
//! of `user:pass`, or `username` / `password`), else the `credsStore`. A helper is run as Docker
//! runs it: `docker-credential-NAME get` from `PATH`, the registry's server URL on stdin, JSON
//! `{"Username", "Secret"}` on stdout (Docker Desktop's keychain, ECR, GCR, pass). Credentials
//! are never printed: [`Credentials`]' `Debug` is redacted and no error message carries them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const ENV_USERNAME: &str = "PINPROBE_REGISTRY_USERNAME";
pub const ENV_PASSWORD: &str = "PINPROBE_REGISTRY_PASSWORD";
/// The one registry (`host[:port]`, `docker.io` for Docker Hub) the environment credentials
/// belong to: they are sent nowhere else, and not at all without it.
pub const ENV_HOST: &str = "PINPROBE_REGISTRY_HOST";

/// A token service (`host[:port]`) the user says belongs to the registry, on another host than
/// the registry itself: its Bearer realm may get the registry's credentials.
pub const ENV_REALM_HOST: &str = "PINPROBE_REGISTRY_REALM_HOST";

/// The `host[:port]` of a URL, lower-cased, without user info.
pub fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_ascii_lowercase()
}

/// Whether a Bearer `realm` may be sent the credentials of `registry` (reached at `base`): the
/// realm is on the registry's own host; or on Docker Hub's token service for Docker Hub; or on
/// the host `PINPROBE_REGISTRY_REALM_HOST` names.
pub fn realm_belongs(realm: &str, registry: &str, base: &str) -> bool {
    let realm_host = host_of(realm);
    if realm_host.is_empty() {
        return false;
    }
    if realm_host == host_of(base) || realm_host == registry.to_ascii_lowercase() {
        return true;
    }
    if registry == "docker.io" && realm_host == "auth.docker.io" {
        return true;
    }
    std::env::var(ENV_REALM_HOST).is_ok_and(|h| h.trim().to_ascii_lowercase() == realm_host)
}

/// A user name and password for one registry.
#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}

impl Credentials {
    /// The `Authorization` header value for HTTP basic authentication.
    pub fn basic_header(&self) -> String {
        format!(
            "Basic {}",
            STANDARD.encode(format!("{}:{}", self.username, self.password))
        )
    }
}

#[derive(Debug, Default, Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    /// A helper per registry (`"gcr.io": "gcloud"` runs `docker-credential-gcloud`).
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
    /// The helper for every registry without its own.
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// Where credentials come from, as a word for messages (never the secret itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Env,
    DockerConfig,
    /// `docker-credential-NAME`, named by the Docker config.
    Helper,
}

/// Credentials for `registry` (`host[:port]`, `docker.io` for Docker Hub), if any are set.
/// A Docker config that cannot be read or parsed is skipped with the returned warning.
pub fn lookup(registry: &str) -> (Option<(Credentials, Origin)>, Option<String>) {
    let mut warning = None;
    if let (Ok(username), Ok(password)) = (std::env::var(ENV_USERNAME), std::env::var(ENV_PASSWORD))
    {
        match std::env::var(ENV_HOST) {
            Ok(host) if same_registry(&host, registry) => {
                return (
                    Some((Credentials { username, password }, Origin::Env)),
                    None,
                );
            }
            Ok(_) => {
                warning = Some(format!(
                    "{ENV_USERNAME}/{ENV_PASSWORD} belong to the registry {ENV_HOST} names, not {registry}: not sent"
                ));
            }
            Err(_) => {
                warning = Some(format!(
                    "{ENV_USERNAME}/{ENV_PASSWORD} are set without {ENV_HOST} (the registry they belong to): not sent"
                ));
            }
        }
    }
    let Some(path) = docker_config_path() else {
        return (None, warning);
    };
    let Ok(text) = crate::input::read_file(&path, crate::input::MAX_TEXT) else {
        return (None, warning);
    };
    match serde_json::from_slice::<DockerConfig>(&text) {
        Ok(config) => {
            let helper = config
                .cred_helpers
                .iter()
                .find_map(|(key, helper)| same_registry(key, registry).then_some(helper));
            if let Some(helper) = helper {
                return match run_helper(helper, registry) {
                    Ok(found) => (found.map(|c| (c, Origin::Helper)), warning),
                    Err(why) => (None, Some(why)),
                };
            }
            if let Some(found) = from_config(&config, registry) {
                return (Some((found, Origin::DockerConfig)), warning);
            }
            match config.creds_store.as_deref().filter(|s| !s.is_empty()) {
                Some(store) => match run_helper(store, registry) {
                    Ok(found) => (found.map(|c| (c, Origin::Helper)), warning),
                    Err(why) => (None, Some(why)),
                },
                None => (None, warning),
            }
        }
        Err(_) => (
            None,
            Some(format!(
                "{}: not valid JSON; its credentials were not used",
                path.display()
            )),
        ),
    }
}

/// Whether a configured registry name (`host[:port]`, maybe with a scheme or path, as Docker
/// config keys are written) names `registry`.
fn same_registry(configured: &str, registry: &str) -> bool {
    let host = configured
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    host == registry.to_ascii_lowercase()
        || (registry == "docker.io"
            && matches!(
                host.as_str(),
                "index.docker.io" | "registry-1.docker.io" | "docker.io"
            ))
}

/// How long a credential helper may take (it may wait on a keychain or a cloud API).
const HELPER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Ask `docker-credential-NAME get` for `registry`'s credentials: `Ok(None)` when the helper
/// has none for it (Docker's "credentials not found"), `Err` with a warning (never the
/// helper's output, which may hold a secret) when it cannot be run or answers nonsense.
fn run_helper(name: &str, registry: &str) -> Result<Option<Credentials>, String> {
    use std::io::{Read as _, Write as _};
    use std::process::{Command, Stdio};
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(format!(
            "Docker config names the credential helper `{}`, which is not a helper name: not run",
            name.escape_default()
        ));
    }
    let program = format!("docker-credential-{name}");
    // The server URL Docker gives a helper: Docker Hub's legacy index URL, else the host.
    let server = if registry == "docker.io" {
        "https://index.docker.io/v1/".to_string()
    } else {
        registry.to_string()
    };
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{program} (the Docker config's credential helper for {registry}): {e}; no credentials sent"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(server.as_bytes());
    }
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > HELPER_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} get did not answer within {} s: no credentials sent to {registry}",
                    HELPER_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(format!("{program} get: {e}")),
        }
    };
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(1 << 20).read_to_end(&mut out);
    }
    if !status.success() {
        // Docker's helpers print "credentials not found in native keychain" and exit 1.
        if String::from_utf8_lossy(&out).contains("credentials not found") {
            return Ok(None);
        }
        return Err(format!(
            "{program} get failed ({status}) for {registry}: no credentials sent"
        ));
    }
    #[derive(Deserialize)]
    struct Answer {
        #[serde(rename = "Username", default)]
        username: String,
        #[serde(rename = "Secret", default)]
        secret: String,
    }
    let answer: Answer = serde_json::from_slice(&out)
        .map_err(|_| format!("{program} get answered something other than its JSON for {registry}: no credentials sent"))?;
    if answer.secret.is_empty() {
        return Ok(None);
    }
    Ok(Some(Credentials {
        username: answer.username,
        password: answer.secret,
    }))
}

fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker").join("config.json"))
}

fn from_config(config: &DockerConfig, registry: &str) -> Option<Credentials> {
    let entry = config
        .auths
        .iter()
        .find_map(|(key, entry)| same_registry(key, registry).then_some(entry))?;
    if let Some(auth) = &entry.auth {
        let decoded = STANDARD.decode(auth.trim()).ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (username, password) = text.split_once(':')?;
        return Some(Credentials {
            username: username.to_string(),
            password: password.to_string(),
        });
    }
    Some(Credentials {
        username: entry.username.clone()?,
        password: entry.password.clone()?,
    })
}

/// A `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
    Basic,
}

/// Parse a `WWW-Authenticate` header (`Bearer realm="...",service="...",scope="..."` or `Basic ...`).
pub fn parse_challenge(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let params = parse_params(rest);
    Some(Challenge::Bearer {
        realm: params.get("realm")?.clone(),
        service: params.get("service").cloned(),
        scope: params.get("scope").cloned(),
    })
}

/// `key="value", key=value` pairs; quoted values may hold commas and `\"`.
fn parse_params(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && *c != ','))
            .collect::<String>()
            .trim()
            .to_ascii_lowercase();
        if key.is_empty() || chars.next() != Some('=') {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            value = std::iter::from_fn(|| chars.next_if(|c| *c != ','))
                .collect::<String>()
                .trim()
                .to_string();
        }
        out.insert(key, value);
    }
    out
}

/// Percent-encode a query value.
pub fn encode_query(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[derive(Debug, Deserialize)]
pub struct TokenResponse {
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub access_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges() {
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("registry.example".into()),
                scope: Some("repository:a/b:pull,push".into()),
            })
        );
        assert_eq!(
            parse_challenge(r#"Basic realm="Registry Realm""#),
            Some(Challenge::Basic)
        );
        assert_eq!(parse_challenge("Negotiate"), None);
        assert_eq!(parse_challenge("Bearer service=x"), None);
    }

    #[test]
    fn docker_config_entries() {
        let config: DockerConfig = serde_json::from_str(
            r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dTpw"},"127.0.0.1:5000":{"username":"a","password":"b"}}}"#,
        )
        .unwrap();
        let hub = from_config(&config, "docker.io").unwrap();
        assert_eq!((hub.username.as_str(), hub.password.as_str()), ("u", "p"));
        let local = from_config(&config, "127.0.0.1:5000").unwrap();
        assert_eq!(local.username, "a");
        assert!(from_config(&config, "other:1").is_none());
        assert_eq!(format!("{hub:?}"), "Credentials(<redacted>)");
    }

    #[test]
    fn realms_belong_to_the_registrys_own_host() {
        let base = "https://registry.example:5000";
        assert!(realm_belongs(
            "https://registry.example:5000/token",
            "registry.example:5000",
            base
        ));
        assert!(!realm_belongs(
            "https://registry.example/token",
            "registry.example:5000",
            base
        ));
        assert!(!realm_belongs(
            "https://collector.invalid/token",
            "registry.example:5000",
            base
        ));
        assert!(!realm_belongs(
            "https://registry.example:5000@collector.invalid/token",
            "registry.example:5000",
            base
        ));
        assert!(realm_belongs(
            "https://auth.docker.io/token",
            "docker.io",
            "https://registry-1.docker.io"
        ));
        assert!(!realm_belongs("/token", "registry.example:5000", base));
        assert_eq!(host_of("https://u:p@Host.Example:1/x?y"), "host.example:1");
    }

    #[test]
    fn query_encoding() {
        assert_eq!(
            encode_query("repository:a/b:pull"),
            "repository%3Aa%2Fb%3Apull"
        );
    }
}
