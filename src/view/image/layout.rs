//! Images on disk: OCI image-layout directories (`index.json`, `blobs/sha256/*`) and
//! `docker save` archives, in the legacy form (`manifest.json`, `<id>/layer.tar`, config
//! `<id>.json`) and the OCI form recent Docker writes (`manifest.json` naming `blobs/sha256/*`,
//! plus `index.json`); a plain OCI archive (only `index.json`) works too.
//!
//! A plain `.tar` archive is indexed once (headers only, data skipped by seeking) and each
//! layer is then read in place. A gzip-compressed archive cannot seek: the small JSON members
//! are kept from a first pass and each layer is reached by decompressing the archive again.

use super::manifest::{self, Descriptor, Document, ImageConfig, MAX_JSON, Platform};
use super::{Fault, LayerRef, Resolved, Source};
use flate2::read::MultiGzDecoder;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

const REF_NAME: &str = "org.opencontainers.image.ref.name";
const CONTAINERD_NAME: &str = "io.containerd.image.name";

/// An OCI image-layout directory.
pub struct OciDir {
    dir: PathBuf,
    tag: Option<String>,
}

impl OciDir {
    pub fn new(dir: PathBuf, tag: Option<String>) -> Self {
        OciDir { dir, tag }
    }

    fn blob_path(&self, digest: &str) -> PathBuf {
        // Digests are validated (sha256: + 64 hex) before they reach here.
        let hex = digest.trim_start_matches("sha256:");
        self.dir.join("blobs").join("sha256").join(hex)
    }
}

impl Source for OciDir {
    fn resolve(&mut self, platform: &Platform) -> Result<Resolved, Fault> {
        if !self.dir.is_dir() {
            return Err(Fault::io(
                &self.dir,
                io::Error::new(io::ErrorKind::NotFound, "no such directory"),
            ));
        }
        let index_path = self.dir.join("index.json");
        let index = read_capped(&index_path)?;
        let mut warnings = Vec::new();
        let desc = choose(&index, self.tag.as_deref(), platform, &mut warnings)?;
        let mut resolved = manifest::resolve(desc, platform, &mut |digest, what| {
            let path = self.blob_path(digest);
            let bytes = read_capped(&path)?;
            manifest::verify(&bytes, digest, what)?;
            Ok(bytes)
        })?;
        resolved.warnings.splice(0..0, warnings);
        Ok(resolved)
    }

    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        let path = self.blob_path(&layer.location);
        let file = crate::input::open_file(&path).map_err(|e| Fault::io(&path, e))?;
        Ok(Box::new(file))
    }
}

/// Whether a `RepoTags` entry names `wanted`: the same, or the same once Docker Hub's implied
/// `docker.io/` and `library/` are dropped from both (`ubuntu:24.04` is
/// `docker.io/library/ubuntu:24.04`).
fn same_name(tag: &str, wanted: &str) -> bool {
    let short = |s: &str| -> String {
        let s = s.strip_prefix("docker.io/").unwrap_or(s);
        s.strip_prefix("library/").unwrap_or(s).to_string()
    };
    tag == wanted || short(tag) == short(wanted)
}

/// Pick the manifest an `index.json` names for `tag` (or its only one, or `platform`).
fn choose(
    index: &[u8],
    tag: Option<&str>,
    platform: &Platform,
    warnings: &mut Vec<String>,
) -> Result<Descriptor, Fault> {
    let Document::Index(entries) = manifest::parse(index, "index.json")? else {
        return Err(Fault::malformed("index.json", "not an image index"));
    };
    let tags = || {
        entries
            .iter()
            .filter_map(entry_tag)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(tag) = tag {
        return entries
            .iter()
            .find(|d| entry_tag(d).as_deref() == Some(tag))
            .cloned()
            .ok_or_else(|| {
                Fault::NotFound(format!(
                    "no manifest tagged `{tag}` in index.json (tags: {})",
                    tags()
                ))
            });
    }
    match entries.as_slice() {
        [] => Err(Fault::malformed("index.json", "lists no manifests")),
        [one] => Ok(one.clone()),
        many if many.iter().all(|d| d.platform.is_some()) => {
            Ok(manifest::select(many, platform, warnings)?.clone())
        }
        many => Err(Fault::Unsupported(format!(
            "index.json lists {} images: name one as oci:DIR:TAG (tags: {})",
            many.len(),
            tags()
        ))),
    }
}

fn entry_tag(d: &Descriptor) -> Option<String> {
    d.annotations.get(REF_NAME).cloned().or_else(|| {
        d.annotations
            .get(CONTAINERD_NAME)
            .and_then(|n| n.rsplit_once(':'))
            .filter(|(_, t)| !t.contains('/'))
            .map(|(_, t)| t.to_string())
    })
}

fn read_capped(path: &Path) -> Result<Vec<u8>, Fault> {
    crate::input::read_file(path, MAX_JSON).map_err(|e| Fault::io(path, e))
}

/// A `docker save` archive (`.tar`, or gzip-compressed).
pub struct Archive {
    path: PathBuf,
    gzip: bool,
    members: HashMap<String, Member>,
    /// Small members (JSON) of a gzip-compressed archive, kept from the first pass.
    small: HashMap<String, Vec<u8>>,
    /// The image wanted, in an archive of several: a `RepoTags` name (`manifest.json`) or an
    /// index tag (`index.json`).
    select: Option<String>,
}

#[derive(Debug, Clone)]
struct Member {
    offset: u64,
    size: u64,
    link: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SaveManifest {
    config: String,
    #[serde(default)]
    repo_tags: Option<Vec<String>>,
    layers: Vec<String>,
}

/// Members of a gzip-compressed archive up to this size are kept from the first pass.
const SMALL: u64 = 1 << 20;
/// And at most this much in all.
const SMALL_TOTAL: u64 = 64 << 20;

impl Archive {
    /// Read the image named `select` (a `RepoTags` name, or an index tag) rather than the
    /// archive's only or first one.
    pub fn select(mut self, select: Option<String>) -> Archive {
        self.select = select;
        self
    }

    pub fn open(path: PathBuf) -> Result<Archive, Fault> {
        let io_err = |e| Fault::io(&path, e);
        let mut file = crate::input::open_file(&path).map_err(io_err)?;
        let mut magic = [0u8; 2];
        let n = file.read(&mut magic).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        let gzip = n == 2 && magic == [0x1f, 0x8b];
        let mut members = HashMap::new();
        let mut small = HashMap::new();
        let mut small_total = 0;
        if gzip {
            let mut r = BufReader::new(MultiGzDecoder::new(BufReader::new(file)));
            while let Some(h) = next_header(&mut r).map_err(io_err)? {
                let keep = h.size <= SMALL
                    && small_total + h.size <= SMALL_TOTAL
                    && (h.name.ends_with(".json") || h.name.starts_with("blobs/"));
                let mut data = (&mut r).take(h.size);
                if keep {
                    let mut buf = Vec::new();
                    data.read_to_end(&mut buf).map_err(io_err)?;
                    small_total += h.size;
                    small.insert(h.name.clone(), buf);
                } else {
                    io::copy(&mut data, &mut io::sink()).map_err(io_err)?;
                }
                skip(&mut r, padding(h.size)).map_err(io_err)?;
                members.insert(h.name.clone(), member(0, &h));
            }
        } else {
            let mut r = Positioned {
                inner: BufReader::new(file),
                pos: 0,
            };
            while let Some(h) = next_header(&mut r).map_err(io_err)? {
                members.insert(h.name.clone(), member(r.pos, &h));
                let jump = h.size + padding(h.size);
                let jump = i64::try_from(jump).map_err(|_| {
                    io_err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "member too large",
                    ))
                })?;
                r.inner.seek_relative(jump).map_err(io_err)?;
                r.pos += jump as u64;
            }
        }
        if members.is_empty() {
            return Err(Fault::malformed(
                path.display().to_string(),
                "not a tar archive (or an empty one)",
            ));
        }
        Ok(Archive {
            path,
            gzip,
            members,
            small,
            select: None,
        })
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    /// A member's name after following symbolic links (legacy archives link duplicate layers).
    fn canonical(&self, name: &str) -> Result<String, Fault> {
        let mut name = name.trim_start_matches("./").to_string();
        for _ in 0..8 {
            let m = self
                .members
                .get(&name)
                .ok_or_else(|| Fault::malformed(self.describe(), format!("no member `{name}`")))?;
            match &m.link {
                None => return Ok(name),
                Some(target) => {
                    let base = name.rsplit_once('/').map_or("", |(d, _)| d);
                    name = normalize(&format!("{base}/{target}"));
                }
            }
        }
        Err(Fault::malformed(self.describe(), "symbolic link loop"))
    }

    fn read_member(&mut self, name: &str) -> Result<Vec<u8>, Fault> {
        let name = self.canonical(name)?;
        let size = self.members[&name].size;
        if size > MAX_JSON {
            return Err(Fault::malformed(
                format!("{}: {name}", self.describe()),
                format!("larger than {MAX_JSON} bytes"),
            ));
        }
        if self.gzip {
            return self.small.get(&name).cloned().ok_or_else(|| {
                Fault::malformed(self.describe(), format!("member `{name}` is too large"))
            });
        }
        let mut bytes = Vec::new();
        self.open_member(&name)?
            .read_to_end(&mut bytes)
            .map_err(|e| Fault::io(&self.path, e))?;
        Ok(bytes)
    }

    fn open_member(&self, name: &str) -> Result<Box<dyn Read + 'static>, Fault> {
        let io_err = |e| Fault::io(&self.path, e);
        let m = &self.members[name];
        let mut file = crate::input::open_file(&self.path).map_err(io_err)?;
        if !self.gzip {
            file.seek(SeekFrom::Start(m.offset)).map_err(io_err)?;
            return Ok(Box::new(file.take(m.size)));
        }
        let mut r = BufReader::new(MultiGzDecoder::new(BufReader::new(file)));
        while let Some(h) = next_header(&mut r).map_err(io_err)? {
            if h.name == name {
                return Ok(Box::new(r.take(h.size)));
            }
            skip(&mut r, h.size + padding(h.size)).map_err(io_err)?;
        }
        Err(Fault::malformed(
            self.describe(),
            format!("member `{name}` vanished"),
        ))
    }

    fn blob_name(digest: &str) -> String {
        format!("blobs/sha256/{}", digest.trim_start_matches("sha256:"))
    }
}

fn member(offset: u64, h: &Header) -> Member {
    Member {
        offset,
        size: h.size,
        link: (h.kind == b'2').then(|| h.link.clone()),
    }
}

/// `blobs/sha256/HEX` → `sha256:HEX` when it is one.
fn digest_of_blob_path(name: &str) -> Option<String> {
    let d = format!("sha256:{}", name.strip_prefix("blobs/sha256/")?);
    super::reference::valid_digest(&d).then_some(d)
}

impl Source for Archive {
    fn resolve(&mut self, platform: &Platform) -> Result<Resolved, Fault> {
        let what = self.describe();
        if self.members.contains_key("manifest.json") {
            let bytes = self.read_member("manifest.json")?;
            let images: Vec<SaveManifest> = serde_json::from_slice(&bytes)
                .map_err(|e| Fault::malformed(format!("{what}: manifest.json"), e))?;
            let wanted = match self.select.as_deref() {
                Some(select) => Some(
                    images
                        .iter()
                        .find(|i| i.repo_tags.iter().flatten().any(|t| same_name(t, select)))
                        .ok_or_else(|| {
                            Fault::NotFound(format!(
                                "{what}: no image named `{select}` (RepoTags: {})",
                                images
                                    .iter()
                                    .flat_map(|i| i.repo_tags.iter().flatten())
                                    .cloned()
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        })?,
                ),
                None => None,
            };
            let Some(image) = wanted.or(images.first()) else {
                return Err(Fault::malformed(
                    format!("{what}: manifest.json"),
                    "lists no images",
                ));
            };
            let mut warnings = Vec::new();
            if images.len() > 1 && self.select.is_none() {
                warnings.push(format!(
                    "{what} holds {} images; scanned the first ({})",
                    images.len(),
                    image
                        .repo_tags
                        .as_ref()
                        .and_then(|t| t.first().cloned())
                        .unwrap_or_else(|| image.config.clone())
                ));
            }
            let config_bytes = self.read_member(&image.config)?;
            // The config's name is its digest, in both forms (`HEX.json` or `blobs/sha256/HEX`).
            let stem = image.config.trim_end_matches(".json");
            let config_digest = digest_of_blob_path(stem)
                .or_else(|| digest_of_blob_path(&format!("blobs/sha256/{stem}")));
            if let Some(d) = &config_digest {
                manifest::verify(&config_bytes, d, "config")?;
            }
            let config = ImageConfig::parse(&config_bytes, &format!("{what}: {}", image.config))?;
            let diff_ids = config.diff_ids().to_vec();
            let mut layers = Vec::new();
            for (i, name) in image.layers.iter().enumerate() {
                let name = self.canonical(name)?;
                let digest = digest_of_blob_path(&name);
                layers.push(LayerRef {
                    diff_id: if digest.is_none() {
                        diff_ids.get(i).cloned()
                    } else {
                        None
                    },
                    digest,
                    size: Some(self.members[&name].size),
                    location: name,
                });
            }
            return Ok(Resolved {
                manifest_digest: None,
                config,
                layers,
                warnings,
            });
        }
        if self.members.contains_key("index.json") {
            let index = self.read_member("index.json")?;
            let mut warnings = Vec::new();
            let select = self.select.clone();
            let desc = choose(&index, select.as_deref(), platform, &mut warnings)?;
            let mut resolved = manifest::resolve(desc, platform, &mut |digest, kind| {
                let bytes = self.read_member(&Archive::blob_name(digest))?;
                manifest::verify(&bytes, digest, kind)?;
                Ok(bytes)
            })?;
            resolved.warnings.splice(0..0, warnings);
            for l in &mut resolved.layers {
                l.location = Archive::blob_name(&l.location);
            }
            return Ok(resolved);
        }
        Err(Fault::Unsupported(format!(
            "{what}: neither manifest.json nor index.json: not a docker save or OCI archive"
        )))
    }

    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        let name = self.canonical(&layer.location)?;
        self.open_member(&name)
    }
}

/// A reader that counts the bytes read through it.
struct Positioned<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Positioned<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// One member header of an outer (archive) tar.
#[derive(Debug)]
struct Header {
    name: String,
    size: u64,
    kind: u8,
    link: String,
}

fn padding(size: u64) -> u64 {
    (512 - size % 512) % 512
}

fn skip(r: &mut impl Read, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), &mut io::sink())?;
    if copied < n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "archive ends inside a member",
        ));
    }
    Ok(())
}

/// The next member header, after GNU long-name and PAX extended headers; `None` at the end.
/// Leaves the reader at the member's data.
fn next_header(r: &mut impl Read) -> io::Result<Option<Header>> {
    let mut long_name: Option<String> = None;
    let mut long_link: Option<String> = None;
    loop {
        let mut block = [0u8; 512];
        let mut filled = 0;
        while filled < 512 {
            let n = r.read(&mut block[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 || block.iter().all(|&b| b == 0) {
            return Ok(None);
        }
        if filled < 512 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "archive ends inside a header",
            ));
        }
        let size = parse_size(&block[124..136])?;
        let kind = block[156];
        match kind {
            b'L' | b'K' | b'x' | b'g' => {
                if size > 1 << 20 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "extended header too large",
                    ));
                }
                let mut data = vec![0; size as usize];
                r.read_exact(&mut data)?;
                skip(r, padding(size))?;
                let text = String::from_utf8_lossy(&data);
                match kind {
                    b'L' => long_name = Some(text.trim_end_matches('\0').to_string()),
                    b'K' => long_link = Some(text.trim_end_matches('\0').to_string()),
                    b'x' => {
                        for (k, v) in pax_records(&text) {
                            match k {
                                "path" => long_name = Some(v.to_string()),
                                "linkpath" => long_link = Some(v.to_string()),
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        let field = |b: &[u8]| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        };
        let mut name = field(&block[0..100]);
        if &block[257..262] == b"ustar" {
            let prefix = field(&block[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        let name = normalize(&long_name.take().unwrap_or(name));
        let link = long_link.take().unwrap_or_else(|| field(&block[157..257]));
        return Ok(Some(Header {
            name,
            size,
            kind,
            link,
        }));
    }
}

fn pax_records(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|line| {
        let (_, kv) = line.split_once(' ')?;
        kv.split_once('=')
    })
}

fn parse_size(field: &[u8]) -> io::Result<u64> {
    if field[0] & 0x80 != 0 {
        // Base-256 (GNU) for sizes over 8 GiB.
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            v = v
                .checked_mul(256)
                .and_then(|v| v.checked_add(u64::from(b)))
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "size overflow"))?;
        }
        return Ok(v);
    }
    let text = String::from_utf8_lossy(field);
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(text, 8)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not a tar header"))
}

/// A `/`-separated relative path without `.` segments, leading `./` or `/`, `..` resolved.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_paths() {
        assert_eq!(normalize("./a//b/./c"), "a/b/c");
        assert_eq!(normalize("/a/b/../c"), "a/c");
        assert_eq!(normalize("../../x"), "x");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size(b"00000001750\0").unwrap(), 1000);
        assert!(parse_size(b"zzzzzzzzzzz\0").is_err());
    }
}
