//! A small blocking client for the OCI Distribution API: manifests and blobs over HTTPS (plain
//! HTTP only for `--insecure-registry` hosts), anonymous pulls, bearer-token challenges and
//! basic authentication, retries of 429 and 5xx answers with backoff, and a per-read timeout so
//! a stalled transfer fails instead of hanging.
//!
//! Hand-written over blocking `reqwest` (the same HTTP stack, TLS configuration and proxy
//! handling as git fetches, see [`crate::resolve`]) rather than `oci-client`: oci-client is
//! async-only, does not retry 429/5xx, and its blob stream would have to be bridged back into
//! the blocking `Read` chain that decompresses and untars layers. reqwest's blocking response
//! is that `Read` directly, with a timeout on every read, and the protocol subset a pull needs
//! is small. Proxies come from `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`. Every manifest is
//! checked against the digest that named it (and `Docker-Content-Digest`); configs here and
//! layers in [`super::layer`] are checked against their descriptors.

use super::auth::{self, Challenge, Credentials, Origin, TokenResponse};
use super::manifest::{self, ACCEPT, Document, MAX_JSON, Platform};
use super::reference::{RegistryRef, valid_digest};
use super::{Fault, LayerRef, Options, Resolved, Source, tls};
use crate::cache::{Key, Kind};
use reqwest::StatusCode;
use reqwest::blocking::{Client, Response};
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

/// How many times a 429 or 5xx answer is retried.
const RETRIES: u32 = 4;
/// The longest wait between retries, whatever `Retry-After` says.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// One repository in one registry.
pub struct Registry {
    client: Client,
    base: String,
    reference: RegistryRef,
    https: bool,
    credentials: Option<(Credentials, Origin)>,
    authorization: Option<String>,
    timeout: Duration,
    warnings: Vec<String>,
}

impl Registry {
    pub fn new(reference: RegistryRef, opts: &Options) -> Result<Registry, Fault> {
        let host = reference.api_host().to_string();
        let https = !opts
            .insecure_registries
            .iter()
            .any(|h| h == &reference.registry || h == &host);
        // A plain-HTTP registry still gets the TLS configuration: a redirect may lead to HTTPS.
        let tls = tls::client_config(opts.ca_file.as_deref())?;
        // reqwest's blocking timeout bounds the wait for the answer and every read of the body
        // (a stall), not the whole transfer.
        let client = Client::builder()
            .connect_timeout(opts.timeout)
            .timeout(opts.timeout)
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!("pinprobe/", env!("CARGO_PKG_VERSION")))
            .tls_backend_preconfigured(Arc::unwrap_or_clone(tls))
            .build()
            .map_err(|e| Fault::Http(format!("HTTP client set-up: {e}")))?;
        let (credentials, warning) = auth::lookup(&reference.registry);
        Ok(Registry {
            client,
            base: format!("{}://{host}", if https { "https" } else { "http" }),
            reference,
            https,
            credentials,
            authorization: None,
            timeout: opts.timeout,
            warnings: warning.into_iter().collect(),
        })
    }

    /// GET `/v2/<repo>/<path>`, authenticating on a 401 challenge and retrying 429/5xx.
    fn get(&mut self, path: &str, accept: Option<&str>, what: &str) -> Result<Response, Fault> {
        let url = format!("{}/v2/{}/{path}", self.base, self.reference.repository);
        self.request(&Request::get(&url, accept), what)
    }

    /// One request to the registry, authenticating on a 401 challenge, retrying 429/5xx, and
    /// failing on any other non-success status.
    fn request(&mut self, req: &Request, what: &str) -> Result<Response, Fault> {
        let url = req.url.as_str();
        let mut challenged = false;
        loop {
            let resp = self
                .send(req, self.authorization.as_deref())
                .map_err(|e| self.fault(e, what))?;
            match resp.status() {
                s if s.is_success() => return Ok(resp),
                // A 401 from a host the registry redirected to is that host's challenge, not
                // the registry's: answering it would hand the registry's credentials over.
                StatusCode::UNAUTHORIZED if origin(resp.url().as_str()) != origin(url) => {
                    return Err(Fault::Auth(format!(
                        "{what}: 401 Unauthorized from {}, where the registry redirected: credentials are sent only to the registry",
                        origin(resp.url().as_str())
                    )));
                }
                StatusCode::UNAUTHORIZED if !challenged => {
                    challenged = true;
                    let challenge = resp
                        .headers()
                        .get("www-authenticate")
                        .and_then(|v| v.to_str().ok())
                        .and_then(auth::parse_challenge);
                    self.authenticate(challenge, what)?;
                }
                StatusCode::UNAUTHORIZED => return Err(self.unauthorized(what)),
                status => return Err(status_fault(status, what)),
            }
        }
    }

    /// One request, retried on 429 and 5xx with exponential backoff (or `Retry-After`). Any
    /// answer is returned, whatever its status; transport failures are errors.
    fn send(&self, req: &Request, authorization: Option<&str>) -> Result<Response, reqwest::Error> {
        let mut attempt = 0;
        loop {
            let mut builder = self.client.request(req.method.clone(), &req.url);
            if let Some(a) = &req.accept {
                builder = builder.header("Accept", a);
            }
            if let Some((content_type, body)) = &req.body {
                builder = builder
                    .header("Content-Type", content_type)
                    .body(body.clone());
            }
            if let Some(a) = authorization {
                builder = builder.header("Authorization", a);
            }
            let resp = builder.send()?;
            let code = resp.status().as_u16();
            if (code == 429 || (500..600).contains(&code)) && attempt < RETRIES {
                let wait = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .map(Duration::from_secs)
                    .unwrap_or(Duration::from_millis(250 << attempt));
                std::thread::sleep(wait.min(MAX_BACKOFF));
                attempt += 1;
                continue;
            }
            return Ok(resp);
        }
    }

    fn authenticate(&mut self, challenge: Option<Challenge>, what: &str) -> Result<(), Fault> {
        match challenge {
            None => Err(Fault::Auth(format!(
                "{what}: 401 Unauthorized without a usable WWW-Authenticate challenge"
            ))),
            Some(Challenge::Basic) => match &self.credentials {
                Some((c, _)) => {
                    self.authorization = Some(c.basic_header());
                    Ok(())
                }
                None => Err(self.unauthorized(what)),
            },
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => {
                let scope = scope
                    .unwrap_or_else(|| format!("repository:{}:pull", self.reference.repository));
                // The token request carries the registry's credentials: never in clear text
                // when the registry itself is reached over HTTPS.
                if self.https
                    && self.credentials.is_some()
                    && !realm.to_ascii_lowercase().starts_with("https://")
                {
                    return Err(Fault::Auth(format!(
                        "{what}: the registry's token realm {} is not HTTPS: credentials not sent",
                        origin(&realm)
                    )));
                }
                // The registry's credentials answer only the registry's own host: a realm
                // elsewhere gets them only where the user says it belongs to the registry
                // (PINPROBE_REGISTRY_REALM_HOST, or Docker Hub's own token service).
                if self.credentials.is_some()
                    && !auth::realm_belongs(&realm, &self.reference.registry, &self.base)
                {
                    return Err(Fault::Auth(format!(
                        "{what}: the registry's token realm is on another host ({}): credentials are sent only to the registry (set {}={} if that token service is the registry's)",
                        origin(&realm),
                        auth::ENV_REALM_HOST,
                        auth::host_of(&realm)
                    )));
                }
                let mut url = realm.clone();
                url.push(if url.contains('?') { '&' } else { '?' });
                if let Some(s) = service {
                    url.push_str(&format!("service={}&", auth::encode_query(&s)));
                }
                url.push_str(&format!("scope={}", auth::encode_query(&scope)));
                let basic = self.credentials.as_ref().map(|(c, _)| c.basic_header());
                let resp = self
                    .send(&Request::get(&url, None), basic.as_deref())
                    .map_err(|e| self.fault(e, "token service"))?;
                match resp.status() {
                    s if s.is_success() => {}
                    StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                        return Err(self.unauthorized("token service"));
                    }
                    status => return Err(status_fault(status, "token service")),
                }
                let bytes = self.read_capped(resp, "token service")?;
                let text = String::from_utf8_lossy(&bytes);
                let token: TokenResponse = serde_json::from_str(&text)
                    .map_err(|e| Fault::malformed("token service answer", e))?;
                let token = token.token.or(token.access_token).ok_or_else(|| {
                    Fault::malformed("token service answer", "no `token` or `access_token`")
                })?;
                self.authorization = Some(format!("Bearer {token}"));
                Ok(())
            }
        }
    }

    fn unauthorized(&self, what: &str) -> Fault {
        Fault::Auth(match &self.credentials {
            None => format!(
                "{what}: 401 Unauthorized: the registry needs credentials (set {} and {} with {}={}, or log in with docker login){}",
                auth::ENV_USERNAME,
                auth::ENV_PASSWORD,
                auth::ENV_HOST,
                self.reference.registry,
                // Why none were found, when a lookup said so (a helper that failed).
                self.warnings
                    .iter()
                    .find(|w| w.contains("docker-credential-") || w.contains(auth::ENV_HOST))
                    .map(|w| format!("; {w}"))
                    .unwrap_or_default()
            ),
            Some((_, origin)) => format!(
                "{what}: 401 Unauthorized: the credentials from {} were rejected",
                match origin {
                    Origin::Env => "the environment",
                    Origin::DockerConfig => "the Docker config",
                    Origin::Helper => "the Docker config's credential helper",
                }
            ),
        })
    }

    /// A transport failure (no answer): a timeout, or anything else with a hint for a
    /// plain-HTTP registry reached over HTTPS.
    fn fault(&self, e: reqwest::Error, what: &str) -> Fault {
        if e.is_timeout() {
            return Fault::Timeout(format!(
                "{what}: no answer within {} s",
                self.timeout.as_secs_f64()
            ));
        }
        let hint = if self.https {
            " (a plain-HTTP registry needs --insecure-registry HOST)"
        } else {
            ""
        };
        Fault::Http(format!("{what}: {}{hint}", one_line(&e)))
    }

    fn io_fault(&self, e: std::io::Error, what: &str) -> Fault {
        if is_timeout(&e) {
            Fault::Timeout(format!(
                "{what}: transfer stalled for {} s",
                self.timeout.as_secs_f64()
            ))
        } else {
            Fault::Http(format!("{what}: {e}"))
        }
    }

    /// A manifest by tag or digest, checked against the digest that named it and against
    /// `Docker-Content-Digest`. Returns its bytes and digest.
    fn manifest(&mut self, reference: &str) -> Result<(Vec<u8>, String), Fault> {
        let what = format!("manifest {reference}");
        let resp = self.get(&format!("manifests/{reference}"), Some(ACCEPT), &what)?;
        let header = resp
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = self.read_capped(resp, &what)?;
        let actual = manifest::sha256(&bytes);
        let expected = if valid_digest(reference) {
            Some(reference.to_string())
        } else {
            header.filter(|h| valid_digest(h))
        };
        if let Some(expected) = expected
            && expected != actual
        {
            return Err(Fault::Digest {
                what: "manifest",
                digest: expected,
                actual,
            });
        }
        Ok((bytes, actual))
    }

    /// A small blob (a config), checked against its digest.
    fn blob_bytes(&mut self, digest: &str) -> Result<Vec<u8>, Fault> {
        let what = format!("blob {digest}");
        let resp = self.get(&format!("blobs/{digest}"), None, &what)?;
        let bytes = self.read_capped(resp, &what)?;
        manifest::verify(&bytes, digest, "blob")?;
        Ok(bytes)
    }

    fn read_capped(&self, resp: Response, what: &str) -> Result<Vec<u8>, Fault> {
        let mut bytes = Vec::new();
        Body(resp)
            .take(MAX_JSON + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io_fault(e, what))?;
        if bytes.len() as u64 > MAX_JSON {
            return Err(Fault::malformed(
                what,
                format!("larger than {MAX_JSON} bytes"),
            ));
        }
        Ok(bytes)
    }

    /// A manifest by tag or digest (the reference's own when `None`), checked against its
    /// digest: its bytes, digest and media type.
    pub fn pull_manifest(&mut self, reference: Option<&str>) -> Result<(Vec<u8>, String), Fault> {
        let reference = reference.unwrap_or(self.reference.reference()).to_string();
        self.manifest(&reference)
    }

    /// A blob of at most `cap` bytes, checked against its digest.
    pub fn pull_blob(&mut self, digest: &str, cap: u64) -> Result<Vec<u8>, Fault> {
        if !valid_digest(digest) {
            return Err(Fault::malformed(
                "blob",
                format!("`{digest}` is not a sha256 digest"),
            ));
        }
        let what = format!("blob {digest}");
        let resp = self.get(&format!("blobs/{digest}"), None, &what)?;
        let mut bytes = Vec::new();
        Body(resp)
            .take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io_fault(e, &what))?;
        if bytes.len() as u64 > cap {
            return Err(Fault::malformed(what, format!("larger than {cap} bytes")));
        }
        manifest::verify(&bytes, digest, "blob")?;
        Ok(bytes)
    }

    /// Upload a blob (a monolithic upload: POST, then PUT with the digest); returns its digest.
    pub fn push_blob(&mut self, bytes: &[u8]) -> Result<String, Fault> {
        let digest = manifest::sha256(bytes);
        let what = format!("upload of blob {digest}");
        let start = format!(
            "{}/v2/{}/blobs/uploads/",
            self.base, self.reference.repository
        );
        let resp = self.request(
            &Request {
                method: reqwest::Method::POST,
                url: start,
                accept: None,
                body: Some(("application/octet-stream".into(), Vec::new())),
            },
            &what,
        )?;
        let location = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| Fault::malformed(&what, "no Location for the upload"))?;
        let mut url = if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            location.to_string()
        };
        // The upload goes where the registry said, with its credentials: only on its origin.
        if origin(&url) != origin(&self.base) {
            return Err(Fault::Auth(format!(
                "{what}: the registry sent the upload to {}: credentials are sent only to the registry",
                origin(&url)
            )));
        }
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&format!("digest={}", auth::encode_query(&digest)));
        self.request(
            &Request {
                method: reqwest::Method::PUT,
                url,
                accept: None,
                body: Some(("application/octet-stream".into(), bytes.to_vec())),
            },
            &what,
        )?;
        Ok(digest)
    }

    /// Upload a manifest of `media_type` under `tag`; returns its digest.
    pub fn push_manifest(
        &mut self,
        tag: &str,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<String, Fault> {
        let url = format!(
            "{}/v2/{}/manifests/{tag}",
            self.base, self.reference.repository
        );
        self.request(
            &Request {
                method: reqwest::Method::PUT,
                url,
                accept: None,
                body: Some((media_type.to_string(), bytes.to_vec())),
            },
            &format!("upload of manifest {tag}"),
        )?;
        Ok(manifest::sha256(bytes))
    }

    /// Every tag of the repository through the tag list API (`/v2/<name>/tags/list?n=PAGE`,
    /// following `Link: <...>; rel="next"` pages, on the registry's own origin only: the
    /// request carries its credentials), sorted and without duplicates. More than `max` tags
    /// is an error, and so is a next page that brings no new tag (a loop).
    pub fn tags(&mut self, page: usize, max: usize) -> Result<Vec<String>, Fault> {
        #[derive(serde::Deserialize)]
        struct TagList {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let what = format!("tag list of {}", self.reference.repository);
        let mut url = format!(
            "{}/v2/{}/tags/list?n={}",
            self.base,
            self.reference.repository,
            page.max(1)
        );
        let mut tags = std::collections::BTreeSet::new();
        loop {
            let resp = self.request(&Request::get(&url, Some("application/json")), &what)?;
            let next = resp
                .headers()
                .get_all("link")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(next_link);
            let bytes = self.read_capped(resp, &what)?;
            let list: TagList =
                serde_json::from_slice(&bytes).map_err(|e| Fault::malformed(&what, e))?;
            let before = tags.len();
            tags.extend(list.tags.unwrap_or_default());
            if tags.len() > max {
                return Err(Fault::Unsupported(format!(
                    "{what}: more than {max} tags (raise --max-tags, or list the tags wanted)"
                )));
            }
            let Some(next) = next else {
                break;
            };
            if tags.len() == before {
                return Err(Fault::malformed(
                    &what,
                    "a next page that brings no new tag",
                ));
            }
            url = if next.starts_with('/') {
                format!("{}{next}", self.base)
            } else {
                next
            };
            if origin(&url) != origin(&self.base) {
                return Err(Fault::Auth(format!(
                    "{what}: the next page is on {}: credentials are sent only to the registry",
                    origin(&url)
                )));
            }
        }
        Ok(tags.into_iter().collect())
    }

    /// The tag or digest the reference names.
    pub fn reference(&self) -> &RegistryRef {
        &self.reference
    }

    /// Warnings collected while setting up (an unreadable Docker config).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// One HTTP request to a registry (kept whole so that a retry or a challenge can resend it).
struct Request {
    method: reqwest::Method,
    url: String,
    accept: Option<String>,
    /// Content type and body.
    body: Option<(String, Vec<u8>)>,
}

impl Request {
    fn get(url: &str, accept: Option<&str>) -> Request {
        Request {
            method: reqwest::Method::GET,
            url: url.to_string(),
            accept: accept.map(str::to_string),
            body: None,
        }
    }
}

/// The URL of a `Link` header's `rel="next"` entry (RFC 8288: `<URL>; rel="next"`).
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|entry| {
        let (url, params) = entry.trim().strip_prefix('<')?.split_once('>')?;
        params
            .split(';')
            .any(|p| {
                let p = p.trim().replace(' ', "");
                p == "rel=\"next\"" || p == "rel=next"
            })
            .then(|| url.to_string())
    })
}

/// `scheme://host[:port]` of a URL (what "the same server" means for credentials), without
/// user information.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    )
}

/// Whether a read failed for want of data within the timeout (reqwest reports it as its own
/// error inside an `io::Error`).
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
        .is_some_and(reqwest::Error::is_timeout)
}

/// A non-success status as a fault.
fn status_fault(status: StatusCode, what: &str) -> Fault {
    match status {
        StatusCode::FORBIDDEN => Fault::Auth(format!("{what}: 403 Forbidden")),
        StatusCode::NOT_FOUND => Fault::NotFound(format!("{what}: not found (404)")),
        status => Fault::Http(format!(
            "{what}: HTTP {} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )),
    }
}

/// An error and its causes on one line (reqwest's own text names only the outermost).
fn one_line(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

/// A response body as a reader whose stalls read as `TimedOut` (what the layer reader
/// reports as a stalled transfer).
struct Body(Response);

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if is_timeout(&e) {
                std::io::Error::new(std::io::ErrorKind::TimedOut, e)
            } else {
                e
            }
        })
    }
}

/// A manifest or config named by `digest`: from the cache when it holds bytes with that digest
/// (checked on every read; other bytes are deleted), else `fetch`ed (already checked against
/// the digest) and stored.
fn by_digest(
    digest: &str,
    fetch: impl FnOnce() -> Result<Vec<u8>, Fault>,
) -> Result<Vec<u8>, Fault> {
    let Some(store) = super::cache() else {
        return fetch();
    };
    let key = Key::of(&[b"registry-blob", digest.as_bytes()]);
    let decode = |payload: &[u8]| (manifest::sha256(payload) == digest).then(|| payload.to_vec());
    let (bytes, _) =
        store.get_or_make(Kind::Blob, &key, decode, || fetch().map(|b| (b.clone(), b)))?;
    Ok(bytes)
}

impl Source for Registry {
    fn resolve(&mut self, platform: &Platform) -> Result<Resolved, Fault> {
        let reference = self.reference.reference().to_string();
        // A tag asks the registry every time (tags move); a digest is served from the cache.
        let (bytes, digest) = if valid_digest(&reference) {
            let bytes = by_digest(&reference, || self.manifest(&reference).map(|(b, _)| b))?;
            (bytes, reference.clone())
        } else {
            self.manifest(&reference)?
        };
        let mut fetch = |d: &str, kind: &'static str| -> Result<Vec<u8>, Fault> {
            by_digest(d, || {
                if kind == "manifest" {
                    self.manifest(d).map(|(b, _)| b)
                } else {
                    self.blob_bytes(d)
                }
            })
        };
        let mut resolved = match manifest::parse(&bytes, &format!("manifest {reference}"))? {
            Document::Index(entries) => {
                let mut warnings = Vec::new();
                let desc = manifest::select(&entries, platform, &mut warnings)?.clone();
                let mut resolved = manifest::resolve(desc, platform, &mut fetch)?;
                resolved.warnings.splice(0..0, warnings);
                resolved
            }
            Document::Manifest { config, layers } => {
                manifest::from_manifest(Some(digest), &config, &layers, &mut fetch)?
            }
        };
        resolved.warnings.extend(self.take_warnings());
        Ok(resolved)
    }

    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        let what = format!("blob {}", layer.location);
        let resp = self.get(&format!("blobs/{}", layer.location), None, &what)?;
        Ok(Box::new(Body(resp)))
    }
}
