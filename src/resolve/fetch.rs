//! Fetching missing history on demand: when a pinned commit (or a rule's commit) is in no clone
//! given with `--repo`, the pin's repository is fetched with gix over HTTP (blocking reqwest,
//! rustls with ring) into a bare cache repository `CACHE/repos/HOST/OWNER/NAME.git`, and the
//! scan decides with it as if it had been given with `--repo`.
//!
//! - Incremental: a cache repository that already has every wanted commit is used without any
//!   request; otherwise its branches and tags are fetched (only what is new comes over), then
//!   each wanted commit still missing is asked for by its SHA (a pull-request head, a
//!   force-pushed branch).
//! - [`Settings::offline`] never opens a socket: the cache is used as it is.
//! - URL rewrites (`--mirror FROM=TO`, then git's `url.<base>.insteadOf` from the user's git
//!   config): the longest matching prefix wins. Plain `http://` is used only when a rewrite
//!   produced it; a pin that declares `http://` itself is refused.
//! - One lock per cache repository (an advisory `flock` on `NAME.git.lock`, released when the
//!   process ends, even killed), so concurrent runs never write one repository at once.
//! - Credentials for private forks: a token bound to one host ([`Token`]: sent to that host
//!   only, never after a redirect to another, never printed), else git's own credential helpers
//!   through `git credential fill` (approved or rejected afterwards, as git does).
//! - A spinner on stderr while a fetch runs, when [`Settings::progress`] says so (a terminal).
//! - Faults are answers: every failure is a [`FetchError`] naming the URL and the cause, which
//!   the scan turns into `unknown` evidence; a failed fetch writes no reference, so the cache
//!   stays what it was.

use super::Repo;
use gix::ObjectId;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How fetching behaves in one run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The cache directory (`repos/` lives under it).
    pub cache: PathBuf,
    /// Never touch the network (`--offline`, `PINPROBE_OFFLINE=1`).
    pub offline: bool,
    /// URL rewrites `(from, to)`: `--mirror FROM=TO` first, then git config `insteadOf`.
    pub mirrors: Vec<(String, String)>,
    /// Connect timeout, and how long a transfer may stall before it fails.
    pub timeout: Duration,
    /// Extra root certificates (`--ca-file`).
    pub ca_file: Option<PathBuf>,
    /// A token for private repositories on one host (`PINPROBE_GIT_TOKEN`,
    /// `PINPROBE_GIT_TOKEN_HOST`).
    pub token: Option<Token>,
    /// Draw a spinner on stderr while fetching (the CLI sets it when stderr is a terminal and
    /// not `-q`).
    pub progress: bool,
}

/// A secret bound to one host: offered only when the server asking for credentials is that
/// host (`host` or `host:port`, as git's credential protocol names it), whatever URL the fetch
/// started from. Its `Debug` form never shows the secret.
#[derive(Clone)]
pub struct Token {
    host: String,
    secret: String,
}

impl Token {
    /// A token for `host` (`HOST` or `HOST:PORT`, no scheme or path). `None` when the host is
    /// not such a name or the secret is empty.
    pub fn new(host: &str, secret: &str) -> Option<Token> {
        let host = host.trim().to_ascii_lowercase();
        let valid = !host.is_empty()
            && host.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':' | b'[' | b']')
            });
        (valid && !secret.is_empty()).then(|| Token {
            host,
            secret: secret.to_string(),
        })
    }

    /// The host the token is bound to.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether a server named `host` (credential-protocol form) may see the token.
    fn serves(&self, host: &str) -> bool {
        host.eq_ignore_ascii_case(&self.host)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token {{ host: {:?}, secret: <redacted> }}", self.host)
    }
}

/// Why a repository could not be fetched (each names the URL).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{url}: not an http(s) repository URL pinprobe can fetch")]
    BadUrl { url: String },
    #[error("{url}: plain http:// is used only through a --mirror or url.<base>.insteadOf rewrite")]
    PlainHttp { url: String },
    #[error("{url}: cache {path}: {message}")]
    Cache {
        url: String,
        path: PathBuf,
        message: String,
    },
    #[error("fetching {url}: {message}")]
    Network { url: String, message: String },
    #[error(
        "fetching {url}: the server does not have commit {commit} (force-pushed away or never pushed)"
    )]
    Gone { url: String, commit: ObjectId },
}

/// The outcome of [`ensure`] for one repository.
pub enum Fetched {
    /// The cache repository, holding every wanted commit.
    Ready(Repo),
    /// Offline, and the cache lacks a wanted commit: a fetch of `url` would add it. The cache
    /// repository, when it exists, is still returned.
    WouldFetch { url: String, cached: Option<Repo> },
}

/// The URL to fetch `url` from: the longest matching rewrite prefix, else `url` itself. The
/// second value says whether a rewrite applied.
pub fn rewrite(url: &str, mirrors: &[(String, String)]) -> (String, bool) {
    let best = mirrors
        .iter()
        .filter(|(from, _)| !from.is_empty() && url.starts_with(from.as_str()))
        .max_by_key(|(from, _)| from.len());
    match best {
        Some((from, to)) => (format!("{to}{}", &url[from.len()..]), true),
        None => (url.to_string(), false),
    }
}

/// git's `url.<base>.insteadOf` rewrites from the user's and the system's git config, as
/// `(from, to)` pairs.
pub fn git_config_rewrites() -> Vec<(String, String)> {
    let Ok(config) = gix::config::File::from_globals() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(sections) = config.sections_by_name("url") {
        for section in sections {
            let Some(base) = section.header().subsection_name() else {
                continue;
            };
            for value in section.values("insteadOf") {
                out.push((value.to_string(), base.to_string()));
            }
        }
    }
    out
}

/// The cache repository for a repository: `CACHE/repos/HOST/OWNER/NAME.git`, keyed by the
/// canonical form of the URL the pin declares (`host/owner/name`, before any rewrite), so a
/// mirror serves the same cache.
pub fn cache_path(cache: &Path, canonical: &str) -> Result<PathBuf, FetchError> {
    let bad = || FetchError::BadUrl {
        url: canonical.to_string(),
    };
    let mut path = cache.join("repos");
    let parts: Vec<&str> = canonical.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let safe = !part.is_empty()
            && *part != "."
            && *part != ".."
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !safe {
            return Err(bad());
        }
        if i + 1 == parts.len() {
            path.push(format!("{part}.git"));
        } else {
            path.push(part);
        }
    }
    Ok(path)
}

/// Make sure the cache repository for `url` holds the `pinned` commits (and, as far as the
/// server has them, the rules' commits in `also`), fetching what is missing unless offline, and
/// open it. `canonical` is the URL's `host/owner/name` form. A pinned commit the server does
/// not have is an error; a rule commit it does not have is not (it may live in another
/// repository), and ancestry answers `unknown` for it.
pub fn ensure(
    settings: &Settings,
    url: &str,
    canonical: &str,
    pinned: &[ObjectId],
    also: &[ObjectId],
) -> Result<Fetched, FetchError> {
    let wants: Vec<ObjectId> = pinned.iter().chain(also).copied().collect();
    let path = cache_path(&settings.cache, canonical)?;
    let cache_err = |message: String| FetchError::Cache {
        url: url.to_string(),
        path: path.clone(),
        message,
    };
    // Rule commits the server was asked for and did not have are recorded, so that a warm
    // cache makes no request for them on every run (a new pin fetches again and resets it).
    let absent = read_absent(&path);
    let have_all = |repo: &Repo| {
        pinned.iter().all(|w| repo.has_commit(w))
            && also
                .iter()
                .all(|w| repo.has_commit(w) || absent.contains(w))
    };
    if settings.offline {
        let cached = if path.join("objects").is_dir() {
            Repo::open(&path).ok()
        } else {
            None
        };
        return Ok(match cached {
            Some(repo) if have_all(&repo) => Fetched::Ready(repo),
            // A cache without the pinned commit would only hide what the pin says.
            cached => Fetched::WouldFetch {
                url: url.to_string(),
                cached: cached.filter(|repo| pinned.iter().all(|w| repo.has_commit(w))),
            },
        });
    }
    let (remote_url, rewritten) = rewrite(url, &settings.mirrors);
    let lower = remote_url.to_ascii_lowercase();
    if lower.starts_with("http://") {
        if !rewritten {
            return Err(FetchError::PlainHttp {
                url: url.to_string(),
            });
        }
    } else if !lower.starts_with("https://") {
        return Err(FetchError::BadUrl { url: remote_url });
    }
    std::fs::create_dir_all(path.parent().unwrap_or(&path))
        .map_err(|e| cache_err(e.to_string()))?;
    let _lock = Lock::take(&path).map_err(|e| cache_err(format!("lock: {e}")))?;
    // Under the lock: another run may have fetched meanwhile.
    if path.join("objects").is_dir()
        && let Ok(repo) = Repo::open(&path)
        && have_all(&repo)
    {
        return Ok(Fetched::Ready(repo));
    }
    // What this fetch brings may change a verdict that reused reports hold.
    bump_generation(&settings.cache);
    let git = if path.join("objects").is_dir() {
        gix::open(&path).map_err(|e| cache_err(e.to_string()))?
    } else {
        gix::init_bare(&path).map_err(|e| cache_err(e.to_string()))?
    };
    let net = |message: String| FetchError::Network {
        url: redact(&remote_url),
        message,
    };
    let progress = spinner(settings.progress, &remote_url);
    let _clear = ClearOnDrop(&progress);
    fetch(
        &git,
        &remote_url,
        &[
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        ],
        settings,
    )
    .map_err(net)?;
    let repo = Repo::open(&path).map_err(|e| cache_err(e.to_string()))?;
    let missing: Vec<ObjectId> = wants
        .iter()
        .filter(|w| !repo.has_commit(w))
        .copied()
        .collect();
    if missing.is_empty() {
        return Ok(Fetched::Ready(repo));
    }
    // On no branch or tag: ask for each SHA itself, kept under refs/pinprobe/pins/. One
    // request per commit: a server refuses a whole request for one SHA it does not have.
    let mut by_sha = Ok(());
    for id in &missing {
        let spec = format!("+{id}:refs/pinprobe/pins/{id}");
        let result = fetch(&git, &remote_url, &[spec.as_str()], settings);
        if pinned.contains(id) && by_sha.is_ok() {
            by_sha = result;
        }
    }
    let repo = Repo::open(&path).map_err(|e| cache_err(e.to_string()))?;
    let still: Vec<ObjectId> = also
        .iter()
        .filter(|w| !repo.has_commit(w))
        .copied()
        .collect();
    write_absent(&path, &still);
    if let Some(gone) = pinned.iter().find(|w| !repo.has_commit(w)) {
        return Err(match by_sha {
            Err(message) if !looks_like_missing_object(&message) => net(message),
            _ => FetchError::Gone {
                url: redact(&remote_url),
                commit: *gone,
            },
        });
    }
    Ok(Fetched::Ready(repo))
}

/// The file under `CACHE/repos/` that changes whenever a fetch may change a cache repository.
const GENERATION: &str = ".generation";

/// What the cache repositories are now, as one token: it changes whenever any fetch goes to
/// the network (so before anything it brings is used), and only then. A report computed from
/// them is valid while it is the same (`scan::reuse`).
pub fn generation(cache: &Path) -> String {
    std::fs::read_to_string(cache.join("repos").join(GENERATION)).unwrap_or_default()
}

fn bump_generation(cache: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = cache.join("repos");
    let token = format!("{now} {}", std::process::id());
    let tmp = dir.join(format!("{GENERATION}.{}", std::process::id()));
    // Best effort: where it cannot be written, neither can the fetch write a repository.
    let _ = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&tmp, token))
        .and_then(|()| std::fs::rename(&tmp, dir.join(GENERATION)));
}

const ABSENT: &str = "pinprobe-absent";

/// The rule commits recorded as absent from the server at the last fetch.
fn read_absent(repo: &Path) -> Vec<ObjectId> {
    std::fs::read_to_string(repo.join(ABSENT))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
        .collect()
}

/// Record the rule commits the server did not have (best effort: a cache that cannot record
/// them only asks again next time).
fn write_absent(repo: &Path, absent: &[ObjectId]) {
    let text: String = absent.iter().map(|id| format!("{id}\n")).collect();
    let _ = std::fs::write(repo.join(ABSENT), text);
}

/// One line from gix's multi-line error report: its headline and its innermost cause.
fn one_line(report: &str) -> String {
    let unwrap = |s: &str| {
        let s = s.trim();
        let s = s
            .strip_prefix("Message { message: \"")
            .and_then(|s| s.strip_suffix("\" }"))
            .unwrap_or(s);
        s.trim_matches('"').to_string()
    };
    let mut lines = report.lines().filter(|l| !l.trim().is_empty());
    let head = unwrap(lines.next().unwrap_or_default());
    let cause = lines.rfind(|l| l.trim() != "Caused by:").map(|l| {
        let l = l.trim();
        let l = match l.split_once(": ") {
            Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => rest,
            _ => l,
        };
        unwrap(l)
    });
    match cause {
        Some(cause) if cause != head => format!("{head}: {cause}"),
        _ => head,
    }
}

/// Whether a fetch error says the server has no such object (rather than a transport fault).
fn looks_like_missing_object(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("not our ref")
        || m.contains("no such")
        || m.contains("not found")
        || m.contains("unadvertised")
        || m.contains("did not match")
        || m.contains("could not find")
}

/// One fetch of `refspecs` from `url` into `git`.
fn fetch(
    git: &gix::Repository,
    url: &str,
    refspecs: &[&str],
    settings: &Settings,
) -> Result<(), String> {
    let remote = git
        .remote_at_without_url_rewrite(url)
        .map_err(|e| one_line(&format!("{e:#}")))?
        .with_refspecs(refspecs.iter().copied(), gix::remote::Direction::Fetch)
        .map_err(|e| one_line(&format!("{e:#}")))?;
    let mut connection = remote
        .connect(gix::remote::Direction::Fetch)
        .map_err(|e| one_line(&format!("{e:#}")))?;
    if let Some(options) = transport_options(git, url, settings)? {
        connection.set_transport_options(options);
    }
    let mut credentials = Credentials {
        token: settings.token.clone(),
        from_token: false,
    };
    connection.set_credentials(move |action| credentials.answer(action));
    connection
        .prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(|e| one_line(&format!("{e:#}")))?
        .receive(
            gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .map_err(|e| one_line(&format!("{e:#}")))?;
    Ok(())
}

/// The HTTP options for `url`: git config's, plus pinprobe's TLS roots (`--ca-file`) and timeouts
/// on the reqwest client.
fn transport_options(
    git: &gix::Repository,
    url: &str,
    settings: &Settings,
) -> Result<Option<Box<dyn std::any::Any>>, String> {
    use gix::protocol::transport::client::blocking_io::http;
    let Some(mut options) = git
        .transport_options(url, None)
        .map_err(|e| one_line(&format!("{e:#}")))?
    else {
        return Ok(None);
    };
    let Some(http_options) = options.downcast_mut::<http::Options>() else {
        return Ok(Some(options));
    };
    let tls = crate::view::image::tls::client_config(settings.ca_file.as_deref())
        .map_err(|e| one_line(&format!("{e:#}")))?;
    let timeout = settings.timeout;
    http_options.connect_timeout = Some(timeout);
    let configure: Box<http::reqwest::ConfigureClientFn> = Box::new(move |builder| {
        Ok(builder
            .connect_timeout(timeout)
            .timeout(timeout)
            .tls_backend_preconfigured(Arc::unwrap_or_clone(tls.clone())))
    });
    http_options.backend = Some(Arc::new(std::sync::Mutex::new(http::reqwest::Options {
        configure_client: Some(configure),
        configure_request: None,
    })));
    Ok(Some(options))
}

/// Clears a spinner however its fetch ends.
struct ClearOnDrop<'a>(&'a indicatif::ProgressBar);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Answers the transport's credential requests: the host-bound token for its host, else git's
/// credential helpers (`git credential fill`, then `approve` or `reject`, as git does). What the
/// token answered is never handed to git to store or erase.
struct Credentials {
    token: Option<Token>,
    /// Whether the last request was answered with the token.
    from_token: bool,
}

impl Credentials {
    fn answer(
        &mut self,
        action: gix::credentials::helper::Action,
    ) -> gix::Result<Option<gix::credentials::protocol::Outcome>> {
        use gix::credentials::helper::Action;
        match &action {
            Action::Get(context) => {
                // The transport names the server that asks: after a redirect, the new one.
                // `host[:port]` (the port only when not the scheme's default), as git names it.
                let mut named = context.clone();
                let host = named
                    .destructure_url_in_place(false)
                    .ok()
                    .and_then(|c| c.host.clone());
                if let (Some(token), Some(host)) = (&self.token, host.as_deref())
                    && token.serves(host)
                {
                    self.from_token = true;
                    let mut next = context.clone();
                    next.clear_secrets();
                    return Ok(Some(gix::credentials::protocol::Outcome {
                        identity: gix::sec::identity::Account {
                            username: "x-access-token".to_string(),
                            password: token.secret.clone(),
                            oauth_refresh_token: None,
                        },
                        next: next.into(),
                    }));
                }
                self.from_token = false;
                gix::credentials::builtin(action)
            }
            Action::Store(_) | Action::Erase(_) if self.from_token => Ok(None),
            Action::Store(_) | Action::Erase(_) => gix::credentials::builtin(action),
        }
    }
}

/// A spinner naming the URL being fetched, on stderr; hidden unless wanted.
fn spinner(wanted: bool, url: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(format!("fetching {}", redact(url)));
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// `url` without user-info (a user name or password written into a mirror URL).
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://{host}{path}"),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// An exclusive advisory lock on `REPO.lock`, held while a cache repository is written.
struct Lock(std::fs::File);

impl Lock {
    fn take(repo: &Path) -> std::io::Result<Lock> {
        let mut name = repo.as_os_str().to_owned();
        name.push(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(PathBuf::from(name))?;
        file.lock()?;
        Ok(Lock(file))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_rewrite_wins() {
        let mirrors = vec![
            (
                "https://github.com/".to_string(),
                "http://m/gh/".to_string(),
            ),
            (
                "https://github.com/vllm-project/".to_string(),
                "http://m/vllm/".to_string(),
            ),
        ];
        assert_eq!(
            rewrite(
                "https://github.com/vllm-project/flash-attention.git",
                &mirrors
            ),
            ("http://m/vllm/flash-attention.git".to_string(), true)
        );
        assert_eq!(
            rewrite("https://github.com/Dao-AILab/flash-attention", &mirrors),
            ("http://m/gh/Dao-AILab/flash-attention".to_string(), true)
        );
        assert_eq!(
            rewrite("https://gitlab.com/x/y", &mirrors),
            ("https://gitlab.com/x/y".to_string(), false)
        );
    }

    #[test]
    fn a_token_serves_its_one_host_and_never_shows_its_secret() {
        let token = Token::new(" Git.Example.com:8443 ", "s3cret").expect("a token");
        assert_eq!(token.host(), "git.example.com:8443");
        assert!(token.serves("git.example.com:8443"));
        assert!(token.serves("GIT.EXAMPLE.COM:8443"));
        assert!(
            !token.serves("git.example.com"),
            "another port is another host"
        );
        assert!(!token.serves("evil.example.com:8443"));
        assert!(!format!("{token:?}").contains("s3cret"));
        assert!(Token::new("", "s3cret").is_none());
        assert!(Token::new("https://git.example.com", "s3cret").is_none());
        assert!(Token::new("git.example.com/path", "s3cret").is_none());
        assert!(Token::new("git.example.com", "").is_none());
    }

    #[test]
    fn urls_are_shown_without_user_info() {
        assert_eq!(
            redact("https://user:pw@mirror.internal/gh/x.git"),
            "https://mirror.internal/gh/x.git"
        );
        assert_eq!(redact("https://h/a@b"), "https://h/a@b");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn cache_path_is_canonical_and_contained() {
        let cache = Path::new("/c");
        assert_eq!(
            cache_path(cache, "github.com/vllm-project/flash-attention").ok(),
            Some(PathBuf::from(
                "/c/repos/github.com/vllm-project/flash-attention.git"
            ))
        );
        assert!(cache_path(cache, "h/../../etc/x").is_err());
        assert!(cache_path(cache, "h/a b/c").is_err());
    }
}
