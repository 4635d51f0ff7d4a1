//! `docker-daemon:NAME[:TAG]` and `podman:NAME[:TAG]`: an image the local engine holds,
//! exported through its API socket as `docker save` would write it (`GET /images/NAME/get`,
//! the Docker Engine API, which Podman's compatible service answers too), into a temporary
//! file that is then read as a `docker save` archive and deleted when the scan is done.
//!
//! The socket: `DOCKER_HOST=unix://PATH` (Docker) or `CONTAINER_HOST=unix://PATH` (Podman),
//! else `/var/run/docker.sock`, or Podman's `$XDG_RUNTIME_DIR/podman/podman.sock` and then
//! `/run/podman/podman.sock`. Only a local unix socket is spoken to: a `tcp://` host is refused
//! (save the image with `docker save` and scan the archive instead).

use super::Fault;
use super::layout::Archive;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

/// Which engine's socket to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    fn word(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    fn host_variable(self) -> &'static str {
        match self {
            Engine::Docker => "DOCKER_HOST",
            Engine::Podman => "CONTAINER_HOST",
        }
    }
}

/// The engine's API socket.
pub fn socket(engine: Engine) -> Result<PathBuf, Fault> {
    let var = engine.host_variable();
    if let Ok(host) = std::env::var(var)
        && !host.trim().is_empty()
    {
        return match host.trim().strip_prefix("unix://") {
            Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
            _ => Err(Fault::Unsupported(format!(
                "{var}={host}: only a local unix:// socket is read; `{} save NAME -o image.tar` and scan docker-archive:image.tar",
                engine.word()
            ))),
        };
    }
    let candidates: Vec<PathBuf> = match engine {
        Engine::Docker => vec![PathBuf::from("/var/run/docker.sock")],
        Engine::Podman => std::env::var_os("XDG_RUNTIME_DIR")
            .map(|d| PathBuf::from(d).join("podman/podman.sock"))
            .into_iter()
            .chain([PathBuf::from("/run/podman/podman.sock")])
            .collect(),
    };
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .ok_or_else(|| {
            Fault::NotFound(format!(
                "no {} API socket ({}; set {var}=unix://PATH), or `{} save NAME -o image.tar` and scan docker-archive:image.tar",
                engine.word(),
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                engine.word()
            ))
        })
}

/// An exported image: the archive, and the temporary file it lives in (deleted on drop).
pub struct Exported {
    pub archive: Archive,
    _file: tempfile::NamedTempFile,
}

/// Export `name` from the engine's socket into a temporary file and open it as an archive.
pub fn export(engine: Engine, name: &str, timeout: Duration) -> Result<Exported, Fault> {
    let path = socket(engine)?;
    let io = |e: std::io::Error| Fault::io(&path, e);
    let mut stream = UnixStream::connect(&path).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    write!(
        stream,
        "GET /images/{}/get HTTP/1.1\r\nHost: localhost\r\nUser-Agent: pinprobe\r\nAccept: application/x-tar\r\nConnection: close\r\n\r\n",
        encode_name(name)
    )
    .map_err(io)?;
    stream.flush().map_err(io)?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader).map_err(io)?;
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let mut body: Box<dyn Read + '_> = match (chunked, length) {
        (true, _) => Box::new(Chunked::new(&mut reader)),
        (false, Some(n)) => Box::new((&mut reader).take(n)),
        (false, None) => Box::new(&mut reader),
    };
    if status != 200 {
        let mut text = Vec::new();
        body.take(64 << 10).read_to_end(&mut text).map_err(io)?;
        let message = serde_json::from_slice::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&text).trim().to_string());
        let what = format!(
            "{} API ({}): {name}: HTTP {status}: {message}",
            engine.word(),
            path.display()
        );
        return Err(if status == 404 {
            Fault::NotFound(what)
        } else {
            Fault::Http(what)
        });
    }
    let mut file = tempfile::Builder::new()
        .prefix("pinprobe-daemon-")
        .suffix(".tar")
        .tempfile()
        .map_err(|e| Fault::io(std::env::temp_dir(), e))?;
    let copied = std::io::copy(&mut body, file.as_file_mut()).map_err(io)?;
    if let Some(n) = length
        && copied < n
    {
        return Err(Fault::Truncated {
            what: "exported image",
            digest: name.to_string(),
            got: copied,
            expected: n,
        });
    }
    file.as_file_mut()
        .flush()
        .map_err(|e| Fault::io(file.path(), e))?;
    let archive = Archive::open(file.path().to_path_buf())?;
    Ok(Exported {
        archive,
        _file: file,
    })
}

/// The image name in the request path: `/`, `:` and `@` kept (the engine's router takes the
/// rest of the path as the name), anything else outside the unreserved set percent-encoded.
fn encode_name(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b':' | b'@' | b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The status code and headers of an HTTP/1.x response.
fn read_head(r: &mut impl BufRead) -> std::io::Result<(u16, Vec<(String, String)>)> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut line = String::new();
    r.take(8 << 10).read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|_| line.starts_with("HTTP/1."))
        .ok_or_else(|| bad("not an HTTP response"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.take(8 << 10).read_line(&mut line)?;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        if headers.len() > 100 {
            return Err(bad("too many headers"));
        }
        if let Some((k, v)) = trimmed.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok((status, headers))
}

/// A `Transfer-Encoding: chunked` body.
struct Chunked<R> {
    inner: R,
    left: u64,
    done: bool,
}

impl<R: BufRead> Chunked<R> {
    fn new(inner: R) -> Self {
        Chunked {
            inner,
            left: 0,
            done: false,
        }
    }
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut line = String::new();
            (&mut self.inner).take(1024).read_line(&mut line)?;
            let size = line.trim().split(';').next().unwrap_or("");
            let size = u64::from_str_radix(size, 16).map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                self.done = true;
                return Ok(0);
            }
            self.left = size;
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the image export ended inside a chunk",
            ));
        }
        self.left -= n as u64;
        if self.left == 0 {
            let mut crlf = String::new();
            (&mut self.inner).take(2).read_line(&mut crlf)?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_decoded() {
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n";
        let mut out = String::new();
        Chunked::new(&body[..]).read_to_string(&mut out).unwrap();
        assert_eq!(out, "hello, world");
        let cut = b"5\r\nhel";
        assert!(
            Chunked::new(&cut[..])
                .read_to_string(&mut String::new())
                .is_err()
        );
    }

    #[test]
    fn names_keep_their_path() {
        assert_eq!(
            encode_name("vllm/vllm-openai:v0.30.0"),
            "vllm/vllm-openai:v0.30.0"
        );
        assert_eq!(encode_name("a b?"), "a%20b%3F");
    }
}
