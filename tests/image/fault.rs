//! A tiny fault-injecting registry on 127.0.0.1: serves one built image through the
//! Distribution API paths and misbehaves as told (status codes, truncated or substituted blobs,
//! stalls, malformed manifests, bearer-token challenges, blobs redirected to another server).
//! One request per connection.

use super::common::image::Built;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Ok,
    /// Every `/v2/` request answers 401 with a Basic challenge.
    BasicAlways401,
    /// 401 with a bearer challenge until a token from `/token` is presented.
    Bearer,
    /// Manifests answer 404.
    ManifestNotFound,
    /// The first manifest request answers 429 (`Retry-After: 0`), later ones succeed.
    TooManyThenOk,
    /// Blob requests answer 503 twice, then succeed.
    UnavailableThenOk,
    /// Layer blobs claim their full length but send half and close.
    TruncatedBlob,
    /// Layer blobs are replaced by other bytes of the same length.
    SubstitutedBlob,
    /// Layer blobs send a few bytes, then stall for 10 s.
    StallBlob,
    /// The manifest is not JSON.
    MalformedManifest,
    /// The manifest is JSON without `layers`.
    ManifestWithoutLayers,
}

pub struct FaultServer {
    pub addr: String,
    /// Requests served so far.
    pub requests: Arc<AtomicUsize>,
    pub seen_auth: Arc<Mutex<Vec<String>>>,
}

struct Reply {
    status: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Send only this many body bytes, then close (or stall).
    cut: Option<usize>,
    stall: bool,
}

fn reply(status: &'static str, body: Vec<u8>) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body,
        cut: None,
        stall: false,
    }
}

/// Serve `image` as repository `test/img` with tag `v1`.
pub fn serve(image: Built, mode: Mode) -> FaultServer {
    serve_redirecting(image, mode, None)
}

/// [`serve`], answering every blob request with a 307 to the same path on `redirect_to`
/// (`host:port`), as registries hand blobs to a storage host.
pub fn serve_redirecting(image: Built, mode: Mode, redirect_to: Option<String>) -> FaultServer {
    serve_full(image, mode, redirect_to, None)
}

/// [`Mode::Bearer`], whose challenge names a token realm on `realm_host` (`host:port`), another
/// server, instead of this one (tests/artifacts/security.rs; the image tests share this module).
#[allow(dead_code)]
pub fn serve_with_realm(image: Built, realm_host: String) -> FaultServer {
    serve_full(image, Mode::Bearer, None, Some(realm_host))
}

fn serve_full(
    image: Built,
    mode: Mode,
    redirect_to: Option<String>,
    realm_host: Option<String>,
) -> FaultServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let requests = Arc::new(AtomicUsize::new(0));
    let seen_auth = Arc::new(Mutex::new(Vec::new()));
    let image = Arc::new(image);
    let (count, auth, host) = (
        requests.clone(),
        seen_auth.clone(),
        realm_host.unwrap_or_else(|| addr.clone()),
    );
    std::thread::spawn(move || {
        // Bounded: the test process ends long before this many connections.
        for stream in listener.incoming().take(200).flatten() {
            let (image, count, auth, host, redirect) = (
                image.clone(),
                count.clone(),
                auth.clone(),
                host.clone(),
                redirect_to.clone(),
            );
            std::thread::spawn(move || {
                handle(
                    stream,
                    &image,
                    mode,
                    &count,
                    &auth,
                    &host,
                    redirect.as_deref(),
                )
            });
        }
    });
    FaultServer {
        addr,
        requests,
        seen_auth,
    }
}

fn handle(
    mut stream: TcpStream,
    image: &Built,
    mode: Mode,
    count: &AtomicUsize,
    auth: &Mutex<Vec<String>>,
    host: &str,
    redirect: Option<&str>,
) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // A TLS handshake to this plain-HTTP server: answer as Go's net/http does, 400.
    if stream.peek(&mut byte).is_ok_and(|n| n == 1) && byte[0] == 0x16 {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        return;
    }
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split(' ').nth(1).unwrap_or("").to_string();
    let authorization = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    auth.lock().unwrap().push(authorization.clone());
    let n = count.fetch_add(1, Ordering::SeqCst);
    let r = match redirect {
        Some(to) if path.starts_with("/v2/test/img/blobs/") => {
            let mut r = reply("307 Temporary Redirect", Vec::new());
            r.headers
                .push(("Location".into(), format!("http://{to}{path}")));
            r
        }
        _ => route(image, mode, n, &path, &authorization, host),
    };
    let mut out = format!(
        "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        r.body.len()
    );
    for (k, v) in &r.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let body = &r.body[..r.cut.unwrap_or(r.body.len()).min(r.body.len())];
    let _ = stream.write_all(body);
    let _ = stream.flush();
    if r.stall {
        std::thread::sleep(Duration::from_secs(10));
    }
}

fn route(
    image: &Built,
    mode: Mode,
    n: usize,
    path: &str,
    authorization: &str,
    host: &str,
) -> Reply {
    if path.starts_with("/token") {
        return reply("200 OK", br#"{"token":"t0k3n"}"#.to_vec());
    }
    match mode {
        Mode::BasicAlways401 => {
            let mut r = reply("401 Unauthorized", b"{}".to_vec());
            r.headers
                .push(("WWW-Authenticate".into(), r#"Basic realm="test""#.into()));
            return r;
        }
        Mode::Bearer if authorization != "Bearer t0k3n" => {
            let mut r = reply("401 Unauthorized", b"{}".to_vec());
            r.headers.push((
                "WWW-Authenticate".into(),
                format!(r#"Bearer realm="http://{host}/token",service="fault""#),
            ));
            return r;
        }
        Mode::TooManyThenOk if n == 0 => {
            let mut r = reply("429 Too Many Requests", Vec::new());
            r.headers.push(("Retry-After".into(), "0".into()));
            return r;
        }
        _ => {}
    }
    if path == "/v2/" {
        return reply("200 OK", b"{}".to_vec());
    }
    if let Some(reference) = path.strip_prefix("/v2/test/img/manifests/") {
        if mode == Mode::ManifestNotFound {
            return reply(
                "404 Not Found",
                br#"{"errors":[{"code":"MANIFEST_UNKNOWN"}]}"#.to_vec(),
            );
        }
        let body = match mode {
            Mode::MalformedManifest => b"{\"schemaVersion\": 2, \"layers\": [".to_vec(),
            Mode::ManifestWithoutLayers => format!(
                r#"{{"schemaVersion":2,"config":{{"digest":"{}","size":1}}}}"#,
                image.config_digest
            )
            .into_bytes(),
            _ => image.manifest.clone(),
        };
        if reference != "v1" && reference != image.manifest_digest {
            return reply("404 Not Found", Vec::new());
        }
        let mut r = reply("200 OK", body);
        r.headers.push((
            "Content-Type".into(),
            "application/vnd.oci.image.manifest.v1+json".into(),
        ));
        return r;
    }
    if let Some(digest) = path.strip_prefix("/v2/test/img/blobs/") {
        if digest == image.config_digest {
            return reply("200 OK", image.config.clone());
        }
        let Some(layer) = image.layers.iter().find(|l| l.digest == digest) else {
            return reply("404 Not Found", Vec::new());
        };
        let mut r = reply("200 OK", layer.blob.clone());
        match mode {
            Mode::UnavailableThenOk if n < 3 => {
                return reply("503 Service Unavailable", Vec::new());
            }
            Mode::TruncatedBlob => r.cut = Some(layer.blob.len() / 2),
            Mode::SubstitutedBlob => {
                let last = r.body.len() - 1;
                r.body[last] ^= 0xff;
            }
            Mode::StallBlob => {
                r.cut = Some(16);
                r.stall = true;
            }
            _ => {}
        }
        return r;
    }
    reply("404 Not Found", Vec::new())
}
