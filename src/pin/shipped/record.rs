//! `*.dist-info/RECORD`: the hash and size pip recorded for every installed file, used to tell
//! whether a file the verdict rests on was modified after install.

use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// One RECORD line's hash and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `sha256=<urlsafe base64, no padding>`, as written.
    pub hash: Option<String>,
    pub size: Option<u64>,
}

/// A parsed RECORD: paths relative to the environment root.
#[derive(Debug, Clone, Default)]
pub struct Record {
    pub dist_info: String,
    pub entries: HashMap<String, Entry>,
}

/// What RECORD says about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Hash and size match.
    Matches,
    /// The file differs from what was installed.
    Modified { expected: String, actual: String },
    /// RECORD lists it without a hash (RECORD itself, or `.pyc` files).
    NoHash,
    /// RECORD does not list it.
    NotListed,
}

/// Split one CSV line of RECORD (paths with commas are quoted).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

impl Record {
    pub fn parse(dist_info: &str, text: &str) -> Record {
        let mut entries = HashMap::new();
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            // Almost every line is `path,hash,size` with no quoting: split it without copying.
            let (path, hash, size) = if line.contains('"') {
                let f = fields(line);
                let get = |i: usize| f.get(i).cloned().unwrap_or_default();
                (get(0), get(1), get(2))
            } else {
                let mut parts = line.rsplitn(3, ',');
                let size = parts.next().unwrap_or_default();
                let hash = parts.next().unwrap_or_default();
                let path = parts.next().unwrap_or_default();
                (path.to_string(), hash.to_string(), size.to_string())
            };
            if path.is_empty() {
                continue;
            }
            let hash = (!hash.is_empty()).then_some(hash);
            let size = size.trim().parse().ok();
            entries.insert(path, Entry { hash, size });
        }
        Record {
            dist_info: dist_info.to_string(),
            entries,
        }
    }

    /// Check `bytes` (the file at `path`, relative to the environment root).
    pub fn check(&self, path: &str, bytes: &[u8]) -> Check {
        let Some(entry) = self.entries.get(path) else {
            return Check::NotListed;
        };
        let Some(expected) = &entry.hash else {
            return Check::NoHash;
        };
        let actual = format!(
            "sha256={}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(bytes))
        );
        let size_ok = entry.size.is_none_or(|s| s == bytes.len() as u64);
        if expected == &actual && size_ok {
            Check::Matches
        } else {
            Check::Modified {
                expected: expected.clone(),
                actual,
            }
        }
    }

    /// Check a file streamed elsewhere (a shared library too large to hold), by the digest
    /// (`sha256=...`, RECORD's form) and size computed while it streamed.
    pub fn check_digest(&self, path: &str, sha256: &str, size: u64) -> Check {
        let Some(entry) = self.entries.get(path) else {
            return Check::NotListed;
        };
        let Some(expected) = &entry.hash else {
            return Check::NoHash;
        };
        if expected == sha256 && entry.size.is_none_or(|s| s == size) {
            Check::Matches
        } else {
            Check::Modified {
                expected: expected.clone(),
                actual: sha256.to_string(),
            }
        }
    }

    /// Every listed path under `dir/` (relative to the environment root).
    pub fn listed_under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.entries
            .keys()
            .filter(move |p| p.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_hashes_and_sizes() {
        let body = b"print('hi')\n";
        let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(body));
        let text = format!(
            "vllm/x.py,sha256={hash},{}\n\"vllm/a,b.py\",sha256={hash},{}\nvllm-1.dist-info/RECORD,,\n",
            body.len(),
            body.len()
        );
        let r = Record::parse("vllm-1.dist-info", &text);
        assert_eq!(r.check("vllm/x.py", body), Check::Matches);
        assert_eq!(r.check("vllm/a,b.py", body), Check::Matches);
        assert!(matches!(
            r.check("vllm/x.py", b"print('bye')\n"),
            Check::Modified { .. }
        ));
        assert_eq!(r.check("vllm-1.dist-info/RECORD", b""), Check::NoHash);
        assert_eq!(r.check("other.py", body), Check::NotListed);
    }
}
