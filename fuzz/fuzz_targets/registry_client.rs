//! The registry client's response handling: a loopback registry answers each request with the
//! next fuzzed raw HTTP response (status line, headers such as `WWW-Authenticate`, `Location`,
//! `Docker-Content-Digest`, `Content-Length`, and bodies: manifests, indexes, configs, token
//! answers); the client resolves `test/img:v1` and opens the first layer. Responses are
//! separated by `\n==\n`; `@O` in one becomes the address of a second server standing in for
//! another host, which answers every request with 401 and its own Bearer challenge.
//!
//! Checked beyond "no crash, hang or blow-up": the registry's credentials (environment,
//! bound to the registry by `PINPROBE_REGISTRY_HOST`) reach the other host only when a
//! `WWW-Authenticate` header of the registry's own names it (its token realm).
//! 429 and 5xx statuses become 400 and `Retry-After` is dropped, so retry sleeps do not eat
//! the per-input time limit (retries are not what this target is about).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::view::image::manifest::Platform;
use pinprobe::view::image::reference::RegistryRef;
use pinprobe::view::image::registry::Registry;
use pinprobe::view::image::{Options, Source};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

const USER: &str = "fuzz-user";
const SECRET: &str = "fuzz-secret-9f3";

struct Servers {
    registry: String,
    other: String,
    /// What the registry answers next.
    queue: &'static Mutex<VecDeque<Vec<u8>>>,
    /// `Authorization` values the other host was sent.
    other_saw: &'static Mutex<Vec<String>>,
}

/// Read one request head; returns its `Authorization` value.
fn read_head(stream: &mut TcpStream) -> Option<String> {
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    Some(
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_default(),
    )
}

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let queue: &'static Mutex<VecDeque<Vec<u8>>> = Box::leak(Box::default());
        let other_saw: &'static Mutex<Vec<String>> = Box::leak(Box::default());
        let registry = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let registry_addr = registry.local_addr().unwrap().to_string();
        let other_addr = other.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for mut stream in registry.incoming().flatten() {
                if read_head(&mut stream).is_none() {
                    continue;
                }
                let next = queue.lock().unwrap().pop_front();
                let reply = next.unwrap_or_else(|| {
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec()
                });
                let _ = stream.write_all(&reply);
            }
        });
        let challenge = format!(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"http://{other_addr}/token\",service=\"other\"\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        std::thread::spawn(move || {
            for mut stream in other.incoming().flatten() {
                let Some(auth) = read_head(&mut stream) else {
                    continue;
                };
                other_saw.lock().unwrap().push(auth);
                let _ = stream.write_all(challenge.as_bytes());
            }
        });
        // Set once, before the client runs: the credentials belong to the registry alone.
        // SAFETY: the server threads never read the environment.
        unsafe {
            std::env::set_var("PINPROBE_REGISTRY_USERNAME", USER);
            std::env::set_var("PINPROBE_REGISTRY_PASSWORD", SECRET);
            std::env::set_var("PINPROBE_REGISTRY_HOST", &registry_addr);
        }
        Servers {
            registry: registry_addr,
            other: other_addr,
            queue,
            other_saw,
        }
    })
}

/// One fuzzed response, made safe for the time limit (no retry statuses or waits) and with
/// `@O` pointing at the other host.
fn response(raw: &[u8], other: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(raw).replace("@O", other);
    let mut out = String::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i == 0 {
            let code = line.split(' ').nth(1).unwrap_or("");
            if code.starts_with('5') || code == "429" {
                out.push_str(&line.replacen(code, "400", 1));
                continue;
            }
        }
        if line.to_ascii_lowercase().starts_with("retry-after") {
            continue;
        }
        out.push_str(line);
    }
    out.into_bytes()
}

fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(at) = rest.windows(4).position(|w| w == b"\n==\n") {
        out.push(&rest[..at]);
        rest = &rest[at + 4..];
    }
    out.push(rest);
    out
}

fuzz_target!(|data: &[u8]| {
    let s = servers();
    let chunks = split(data);
    if chunks.len() > 8 {
        return;
    }
    // The registry named the other host in a challenge of its own: credentials may go there.
    let named_by_registry = chunks.iter().any(|c| {
        String::from_utf8_lossy(c).lines().any(|l| {
            l.to_ascii_lowercase().starts_with("www-authenticate") && l.contains("@O")
        })
    });
    {
        let mut queue = s.queue.lock().unwrap();
        queue.clear();
        queue.extend(chunks.iter().map(|c| response(c, &s.other)));
    }
    s.other_saw.lock().unwrap().clear();
    let opts = Options {
        insecure_registries: vec![s.registry.clone(), s.other.clone()],
        timeout: Duration::from_secs(2),
        ..Options::default()
    };
    let reference = RegistryRef {
        registry: s.registry.clone(),
        repository: "test/img".into(),
        tag: Some("v1".into()),
        digest: None,
    };
    if let (Ok(mut registry), Ok(platform)) =
        (Registry::new(reference, &opts), Platform::parse("linux/amd64"))
        && let Ok(resolved) = registry.resolve(&platform)
        && let Some(layer) = resolved.layers.first()
        && let Ok(reader) = registry.open_layer(layer)
    {
        let _ = std::io::copy(&mut reader.take(1 << 20), &mut std::io::sink());
    }
    let saw = s.other_saw.lock().unwrap().clone();
    let secret_sent = saw.iter().any(|a| a.starts_with("Basic "));
    assert!(
        named_by_registry || !secret_sent,
        "the registry's credentials reached another host: {saw:?}"
    );
});
