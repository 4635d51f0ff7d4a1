//! A loopback front for a real registry, one request a connection: it passes requests
//! through, logs their paths, can hold every new request until opened (a slow registry, to
//! stop a fleet run in the middle), and can page the tag list of `pp/*` repositories by `n=`
//! and `last=` in the registry's own order, with `Link: <...>; rel="next"` (Debian's registry,
//! distribution 2.8, ignores `n` and lists every tag in one answer; distribution 3, Harbor and
//! GHCR page).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub struct Front {
    pub host: String,
    /// Requests are answered only while open (held, not refused, while closed).
    pub open: Arc<AtomicBool>,
    /// Page `tags/list` answers.
    pub page_tags: Arc<AtomicBool>,
    /// Tag-list pages served.
    pub pages: Arc<AtomicUsize>,
    /// Connections waiting for the front to open.
    pub held: Arc<AtomicUsize>,
    /// The path of every request passed on or answered, in order.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Front {
    pub fn start(upstream: &str) -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let front = Front {
            host: listener.local_addr().unwrap().to_string(),
            open: Arc::new(AtomicBool::new(true)),
            page_tags: Arc::new(AtomicBool::new(false)),
            pages: Arc::new(AtomicUsize::new(0)),
            held: Arc::new(AtomicUsize::new(0)),
            log: Arc::new(Mutex::new(Vec::new())),
        };
        let (shared, upstream) = (front.clone(), upstream.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (front, upstream) = (shared.clone(), upstream.clone());
                std::thread::spawn(move || front.serve(client, &upstream));
            }
        });
        front
    }

    /// The paths requested so far.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn serve(&self, mut client: TcpStream, upstream: &str) {
        if !self.open.load(Ordering::SeqCst) {
            self.held.fetch_add(1, Ordering::SeqCst);
            while !self.open.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            self.held.fetch_sub(1, Ordering::SeqCst);
        }
        let head = read_head(&mut client);
        if head.is_empty() {
            return;
        }
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        self.log.lock().unwrap().push(path.clone());
        let Ok(mut server) = TcpStream::connect(upstream) else {
            return;
        };
        if self.page_tags.load(Ordering::SeqCst)
            && let Some((repo, query)) = path
                .strip_prefix("/v2/")
                .and_then(|p| p.split_once("/tags/list"))
        {
            self.pages.fetch_add(1, Ordering::SeqCst);
            page(&mut client, &mut server, upstream, repo, query);
            return;
        }
        let head: String = head
            .split("\r\n")
            .filter(|l| !l.is_empty() && !l.to_ascii_lowercase().starts_with("connection:"))
            .map(|l| format!("{l}\r\n"))
            .collect();
        if server
            .write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
            .is_ok()
        {
            let _ = std::io::copy(&mut server, &mut client);
        }
    }
}

fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// One page of `repo`'s tag list: `n` tags after `last`, in the registry's order.
fn page(client: &mut TcpStream, server: &mut TcpStream, upstream: &str, repo: &str, query: &str) {
    write!(
        server,
        "GET /v2/{repo}/tags/list HTTP/1.0\r\nHost: {upstream}\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    server.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let all: Vec<String> = serde_json::from_str::<serde_json::Value>(body).unwrap()["tags"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let param = |name: &str| {
        query
            .trim_start_matches('?')
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_string))
    };
    let n: usize = param("n").map_or(all.len(), |n| n.parse().unwrap());
    let from = param("last").map_or(0, |last| all.iter().position(|t| *t == last).unwrap() + 1);
    let tags: Vec<&String> = all.iter().skip(from).take(n).collect();
    let link = if from + tags.len() < all.len() {
        format!(
            "Link: </v2/{repo}/tags/list?n={n}&last={}>; rel=\"next\"\r\n",
            tags.last().unwrap()
        )
    } else {
        String::new()
    };
    let body = serde_json::json!({"name": repo, "tags": tags}).to_string();
    let _ = write!(
        client,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{link}Connection: close\r\n\r\n{body}",
        body.len()
    );
}
