//! A real smart-HTTP git server on loopback for fetch tests: `git http-backend` behind
//! lighttpd, serving bare repositories under `/git/`, with an access log to count requests.
//! Also two faulty servers: one that accepts and never answers ([`Staller`]), and a proxy that
//! cuts each pack response after a number of bytes ([`Cutter`]).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The git http-backend CGI program, where git keeps it.
fn http_backend() -> Option<PathBuf> {
    let out = Command::new("git").arg("--exec-path").output().ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path = Path::new(&dir).join("git-http-backend");
    path.exists().then_some(path)
}

/// Whether lighttpd and git http-backend are installed (`require`: a visible skip, a failure
/// under `PINPROBE_CI=1`).
pub fn available() -> bool {
    let lighttpd = Command::new("lighttpd")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    super::require::require(
        lighttpd && http_backend().is_some(),
        "lighttpd and git http-backend (.ci/run installs them)",
    )
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// lighttpd serving `root/*.git` at `http://127.0.0.1:PORT/git/NAME.git`.
pub struct GitServer {
    pub root: PathBuf,
    pub port: u16,
    log: PathBuf,
    child: Child,
}

impl GitServer {
    pub fn start(root: &Path, scratch: &Path) -> GitServer {
        GitServer::start_with(root, scratch, None)
    }

    /// A server that answers only requests with HTTP basic credentials `user:password`
    /// (lighttpd's mod_auth, a plain user file): a private repository.
    pub fn start_private(root: &Path, scratch: &Path, user: &str, password: &str) -> GitServer {
        GitServer::start_with(root, scratch, Some((user, password)))
    }

    fn start_with(root: &Path, scratch: &Path, auth: Option<(&str, &str)>) -> GitServer {
        let backend = http_backend().expect("git http-backend");
        let port = free_port();
        let log = scratch.join("access.log");
        let conf = scratch.join("lighttpd.conf");
        let (auth_modules, auth_conf) = match auth {
            Some((user, password)) => {
                let users = scratch.join("users");
                std::fs::write(&users, format!("{user}:{password}\n")).expect("write users");
                (
                    r#""mod_auth", "mod_authn_file", "#,
                    format!(
                        r#"auth.backend = "plain"
auth.backend.plain.userfile = "{}"
auth.require = ("/git/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
"#,
                        users.display()
                    ),
                )
            }
            None => ("", String::new()),
        };
        std::fs::write(
            &conf,
            format!(
                r#"server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.modules = ({auth_modules}"mod_alias", "mod_cgi", "mod_setenv", "mod_accesslog")
{auth_conf}server.errorlog = "{err}"
accesslog.filename = "{log}"
alias.url = ("/git" => "{backend}")
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{root}", "GIT_HTTP_EXPORT_ALL" => "1")
}}
"#,
                root = root.display(),
                err = scratch.join("error.log").display(),
                log = log.display(),
                backend = backend.display(),
            ),
        )
        .expect("write lighttpd.conf");
        let child = Command::new("lighttpd")
            .arg("-D")
            .arg("-f")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("lighttpd starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "lighttpd did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        GitServer {
            root: root.to_path_buf(),
            port,
            log,
            child,
        }
    }

    /// The base URL repositories are served under (`…/git/`).
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/git/", self.port)
    }

    /// The access log (lighttpd buffers it: count requests with a [`Cutter`] instead).
    pub fn log(&self) -> &Path {
        &self.log
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server that answers every request with a redirect to the same path under `target`
/// (`scheme://host:port`, another host as far as credentials go), and records whether any
/// request carried an `Authorization` header.
pub struct Redirector {
    pub port: u16,
    pub saw_authorization: Arc<AtomicUsize>,
}

impl Redirector {
    pub fn start(target: &str) -> Redirector {
        let target = target.trim_end_matches('/').to_string();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let saw = Arc::new(AtomicUsize::new(0));
        let count = saw.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head);
                if text.to_ascii_lowercase().contains("\nauthorization:") {
                    count.fetch_add(1, Ordering::SeqCst);
                }
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 301 Moved Permanently\r\nLocation: {target}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        });
        Redirector {
            port,
            saw_authorization: saw,
        }
    }
}

/// A server that accepts connections and never answers; counts the connections.
pub struct Staller {
    pub port: u16,
    pub accepted: Arc<AtomicUsize>,
}

impl Staller {
    pub fn start() -> Staller {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(stream);
            }
        });
        Staller { port, accepted }
    }
}

/// A proxy to `127.0.0.1:upstream` that forwards requests whole and closes each connection
/// after `limit` response bytes of a `POST` (the pack), as a server killed mid-pack does
/// (`usize::MAX`: never). It counts the requests it forwards, at once (unlike a server log).
pub struct Cutter {
    pub port: u16,
    pub requests: Arc<AtomicUsize>,
}

impl Cutter {
    pub fn start(upstream: u16, limit: usize) -> Cutter {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let count = count.clone();
                std::thread::spawn(move || proxy(client, upstream, limit, count));
            }
        });
        Cutter { port, requests }
    }
}

fn proxy(mut client: TcpStream, upstream: u16, limit: usize, requests: Arc<AtomicUsize>) {
    let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let (Ok(mut client_read), Ok(mut server_write)) = (client.try_clone(), server.try_clone())
    else {
        return;
    };
    let is_post = Arc::new(AtomicUsize::new(0));
    let seen = is_post.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = client_read.read(&mut buf) {
            if n == 0 {
                break;
            }
            if buf[..n].starts_with(b"POST ") {
                seen.store(1, Ordering::SeqCst);
            }
            if buf[..n].starts_with(b"POST ") || buf[..n].starts_with(b"GET ") {
                requests.fetch_add(1, Ordering::SeqCst);
            }
            if server_write.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = server_write.shutdown(Shutdown::Write);
    });
    let mut sent = 0usize;
    let mut buf = [0u8; 4096];
    while let Ok(n) = server.read(&mut buf) {
        if n == 0 {
            break;
        }
        let n = if is_post.load(Ordering::SeqCst) == 1 {
            let room = limit.saturating_sub(sent);
            if room == 0 {
                break;
            }
            n.min(room)
        } else {
            n
        };
        if client.write_all(&buf[..n]).is_err() {
            break;
        }
        if is_post.load(Ordering::SeqCst) == 1 {
            sent += n;
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}

/// An HTTPS front for a server on `127.0.0.1:upstream`: TLS with a self-signed certificate for
/// 127.0.0.1 (rustls), relaying bytes both ways. `pem` is the certificate, for `--ca-file`.
pub struct TlsFront {
    pub port: u16,
    pub pem: String,
}

impl TlsFront {
    pub fn start(upstream: u16) -> TlsFront {
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])
            .expect("self-signed certificate");
        let pem = cert.cert.pem();
        let der = rustls_pki_types::CertificateDer::from(cert.cert.der().to_vec());
        let key = rustls_pki_types::PrivateKeyDer::try_from(cert.key_pair.serialize_der())
            .expect("private key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![der], key)
            .expect("server config");
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let config = config.clone();
                std::thread::spawn(move || {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let Ok(upstream) = TcpStream::connect(("127.0.0.1", upstream)) else {
                        return;
                    };
                    relay(rustls::StreamOwned::new(conn, stream), upstream);
                });
            }
        });
        TlsFront { port, pem }
    }
}

/// Relay between a TLS client and a plain upstream, polling both with short timeouts, until
/// either side closes.
fn relay(
    mut tls: rustls::StreamOwned<rustls::ServerConnection, TcpStream>,
    mut upstream: TcpStream,
) {
    let tick = Some(Duration::from_millis(5));
    if tls.sock.set_read_timeout(tick).is_err() || upstream.set_read_timeout(tick).is_err() {
        return;
    }
    let idle = |e: &std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )
    };
    let mut buf = [0u8; 16384];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if upstream.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => break,
        }
        match upstream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                    break;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => break,
        }
    }
    tls.conn.send_close_notify();
    let _ = tls.flush();
}
