//! Merging layers, newest first, into the files an artifact scan needs, and stopping early.
//!
//! Merge semantics (the OCI image spec's, read top-down): a path in a newer layer hides older
//! versions of it; a non-directory in a newer layer hides everything under its path in older
//! layers; `DIR/.wh.NAME` deletes `DIR/NAME` and everything under it in older layers;
//! `DIR/.wh..wh..opq` hides everything older under `DIR`. Whiteouts apply to older layers only,
//! never to their own. Only [`artifact::is_interesting`] paths are kept (each up to
//! [`MAX_FILE`]); other entries are streamed past. To stay bounded, a non-directory that is not
//! interesting is remembered (as hiding what lies under it) only when its name could be an
//! ancestor of an environment (`site-packages`, `lib`, `python3.12`, `vllm`, `*.dist-info`...).
//! Links are resolved inside the image's filesystem, never the host's: every symbolic link
//! is remembered with its target (relative to its directory, or absolute from the image root)
//! and, once the layers are merged, the files kept under (or at) the target are shown at the
//! link's path too, through chains of links (`cute -> /opt/fa/cute`, `/opt/fa -> /srv/fa`). A
//! hard link is resolved to the file its layer holds. A link on an interesting path whose
//! target is not held (a target outside the kept files, a dangling or looping link) is kept as
//! an unreadable path: the signature that needs it is undecidable, never absent. FlashAttention
//! sources are also kept wherever they lie (any `*.py` under a `cute/` directory), so a link to
//! a copy outside `site-packages` finds its files.
//!
//! Shared libraries that a symbol signature reads (file names matching one of
//! [`Options::libraries`](super::Options), such as `_vllm_fa3_C*.so`, 150 MB and more) are never
//! kept: each is streamed from its tar entry, once, through the bounded ELF reader
//! ([`crate::view::elf`]), and only its dynamic symbols, sha256 and size are kept (for the
//! signature and the RECORD check). They merge like kept files (whiteouts, newer layers, hard
//! and symbolic links); one that cannot be read (garbage, truncated, its tables past the
//! reader's first-pass prefix, more than [`MAX_LIBRARIES`]) is held as that error, so its
//! signature is undecidable. A layer whose bytes fail while a library streams is an error.
//!
//! Which layers are read:
//! - By default, **every layer**. The only early stop is one that is provably safe: an opaque
//!   whiteout at the image root (`/.wh..wh..opq`) in a layer read, which hides everything older.
//! - `--fast-layers` (the former default) stops after the first layer at which
//!   1. at least one deciding package was met: a `RECORD` of `vllm`, `flash_attn` or
//!      `flash_attn_4` was kept, or a whiteout deleted such a `*.dist-info` (or a `vllm`
//!      package directory in `site-packages`/`dist-packages`), and
//!   2. for every deciding `RECORD` kept, every interesting file it lists (its `METADATA`,
//!      `vllm/_version.py`, the FlashAttention sources) is resolved: kept from a layer read
//!      so far, or hidden from older layers by one.
//!
//!   This *assumes* that the newest deciding `RECORD` describes the install that matters and
//!   that no other environment lives in older layers: a decoy `RECORD` that lists nothing, or a
//!   whiteout of a dist-info that never existed, stops the scan above the real install. The
//!   report's `stopped_early` and a warning say so.

use super::layer::{Entry, EntryKind, Expect, Sink};
use super::manifest::Platform;
use super::{Fault, Merged, Options, Resolved, Source, extract, progress, provenance};
use crate::model::ImageInfo;
use crate::model::TargetKind;
use crate::view::MemView;
use crate::view::elf::{self, ElfError, Library};
use crate::view::is_interesting;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};

/// The largest file kept from an image.
pub const MAX_FILE: u64 = 8 << 20;
/// How many rounds of link resolution (the longest chain of links followed).
const MAX_LINK_ROUNDS: usize = 40;
/// How many symbolic links are remembered; more makes the merge warn that links past it were
/// not followed (files behind them are then missing, which the verdict reports as undecidable).
const MAX_LINKS: usize = 1_000_000;
/// The most bytes kept from one image in all (many interesting files of up to [`MAX_FILE`]
/// each grew a scan past 1.6 GB): past it the layer is an error.
pub const MAX_KEPT: u64 = 128 << 20;
/// The most shared libraries streamed for their symbols from one image; past it a library is
/// held as unreadable.
pub const MAX_LIBRARIES: usize = 64;
/// Packages whose `RECORD` decides an environment's answer (normalized project names).
const DECIDING: &[&str] = &["vllm", "flash_attn", "flash_attn_4"];

/// Read `resolved`'s layers from `source`, newest first, into a merged view.
pub fn run(
    target: &str,
    source: &mut dyn Source,
    resolved: Resolved,
    platform: &Platform,
    opts: &Options,
) -> Result<Merged, Fault> {
    let mut warnings = resolved.warnings.clone();
    let image_platform = resolved.config.platform();
    if let Some(p) = &image_platform
        && !platform.matches(p)
    {
        warnings.push(format!(
            "the image is {p}, not {platform} (--platform applies to multi-arch indexes)"
        ));
    }
    let mut info = ImageInfo {
        manifest: resolved.manifest_digest.clone(),
        platform: image_platform.map(|p| p.to_string()),
        layers: provenance::layers(&resolved.config, &resolved.layers, &mut warnings),
        ..ImageInfo::default()
    };
    let total: u64 = resolved.layers.iter().filter_map(|l| l.size).sum();
    let bar = progress::bar(opts.progress, total);
    let mut merger = Merger::new(opts.fast_layers).reading_libraries(&opts.libraries);
    if opts.fast_layers {
        warnings.push("--fast-layers: layers older than the newest deciding RECORD's files may not be read; this assumes that RECORD describes the install that matters and that older layers hold no other environment".to_string());
    }
    let count = resolved.layers.len();
    for (idx, layer) in resolved.layers.iter().enumerate().rev() {
        merger.begin_layer(idx);
        let name = layer.display_digest();
        bar.set_message(format!(
            "layer {}/{count} {}",
            count - idx,
            crate::model::text::printable(name.get(..19).unwrap_or(&name))
        ));
        let expect = Expect {
            name,
            digest: layer.digest.clone(),
            diff_id: layer.diff_id.clone(),
            size: layer.size,
        };
        let read = extract::read(source, layer, &expect, &bar, &opts.libraries)?;
        read.extract.replay(&mut merger).map_err(|e| Fault::Layer {
            digest: expect.name.clone(),
            message: e.to_string(),
        })?;
        info.bytes_read += read.bytes_read;
        info.layers[idx].cached = read.cached;
        info.layers[idx].scanned = true;
        info.layers_scanned += 1;
        if let Some(reason) = merger.end_layer() {
            if idx > 0 {
                info.stopped_early = Some(reason);
            }
            break;
        }
    }
    bar.finish_and_clear();
    let (mut view, files, more) = merger.finish(target);
    view.set_runtime(resolved.config.runtime());
    info.files = files;
    warnings.extend(more);
    Ok(Merged {
        view,
        info,
        warnings,
    })
}

/// The merge state while layers are read newest first.
#[derive(Debug, Default)]
pub struct Merger {
    /// `--fast-layers`: stop on the RECORD rule (see the module doc) instead of reading all.
    fast: bool,
    layer: usize,
    /// Kept files and the layer each came from.
    files: BTreeMap<String, (Kept, usize)>,
    /// File-name patterns (one `*`) of the shared libraries read for their dynamic symbols.
    library_patterns: Vec<String>,
    /// How many libraries were held, under [`MAX_LIBRARIES`].
    libraries_read: usize,
    /// The read of the library entry being replayed from an extract ([`Sink::library`]).
    replayed: Option<Result<Library, ElfError>>,
    /// Interesting paths settled by a layer read (kept, links, too large).
    seen: BTreeSet<String>,
    /// Non-directories read that hide whatever older layers hold under them.
    covers: BTreeSet<String>,
    deleted: BTreeSet<String>,
    opaque: BTreeSet<String>,
    pending: Pending,
    /// Deciding `*.dist-info` directories and the interesting files their `RECORD` lists.
    packages: BTreeMap<String, Vec<String>>,
    /// Deciding installs deleted by whiteouts.
    removed: BTreeSet<String>,
    /// Symbolic links read (not hidden), by path: the target as an image path.
    links: BTreeMap<String, String>,
    /// Interesting paths that are hard links to files not kept, and why.
    unresolved: BTreeMap<String, String>,
    warnings: Vec<String>,
    /// Bytes of the kept files so far, under [`MAX_KEPT`].
    kept: u64,
}

/// What is kept of one file.
#[derive(Debug, Clone)]
enum Kept {
    Bytes(Vec<u8>),
    /// A shared library, streamed past: its dynamic symbols, digest and size, or why not.
    Symbols(Result<Library, ElfError>),
}

/// What the layer being read settles for older layers (applied when it ends).
#[derive(Debug, Default)]
struct Pending {
    seen: Vec<String>,
    covers: Vec<String>,
    deleted: Vec<String>,
    opaque: Vec<String>,
}

impl Merger {
    /// A merger that reads every layer (`fast: false`, the default) or stops on the RECORD
    /// rule (`fast: true`, `--fast-layers`).
    pub fn new(fast: bool) -> Self {
        Merger {
            fast,
            ..Merger::default()
        }
    }

    /// Also read the shared libraries whose file names match `patterns` (one `*` each), for
    /// their dynamic symbols only.
    pub fn reading_libraries(mut self, patterns: &[String]) -> Self {
        self.library_patterns = patterns.to_vec();
        self
    }

    /// Whether `name` is a library a symbol signature reads.
    fn is_library(&self, name: &str) -> bool {
        is_library(&self.library_patterns, name)
    }

    /// Hold one library's read (streamed now, or replayed from an extract), under
    /// [`MAX_LIBRARIES`] per image and the image's total of kept bytes.
    fn hold_library(
        &mut self,
        read: Result<Library, ElfError>,
    ) -> io::Result<Result<Library, ElfError>> {
        if self.libraries_read >= MAX_LIBRARIES {
            return Ok(Err(too_many_libraries()));
        }
        self.libraries_read += 1;
        if let Ok(library) = &read {
            self.keep(library_bytes(library))?;
        }
        Ok(read)
    }

    /// Start reading layer `index` (0 is the base layer).
    pub fn begin_layer(&mut self, index: usize) {
        self.layer = index;
        self.pending = Pending::default();
    }

    /// Whether layers read so far hide `path` in the layer being read.
    fn hidden(&self, path: &str) -> bool {
        if self.seen.contains(path)
            || self.deleted.contains(path)
            || self.covers.contains(path)
            || self.opaque.contains("")
        {
            return true;
        }
        path.match_indices('/').any(|(i, _)| {
            let dir = &path[..i];
            self.deleted.contains(dir) || self.opaque.contains(dir) || self.covers.contains(dir)
        })
    }

    /// Finish the layer being read; `Some(reason)` when older layers can no longer change the
    /// answer (see the module doc).
    pub fn end_layer(&mut self) -> Option<String> {
        let p = std::mem::take(&mut self.pending);
        self.seen.extend(p.seen);
        self.covers.extend(p.covers);
        self.deleted.extend(p.deleted);
        self.opaque.extend(p.opaque);
        if self.opaque.contains("") {
            return Some(format!(
                "stopped at layer {}: an opaque whiteout at the image root hides every older layer",
                self.layer
            ));
        }
        if !self.fast || (self.packages.is_empty() && self.removed.is_empty()) {
            return None;
        }
        let mut files = 0;
        for listed in self.packages.values() {
            for f in listed {
                if !(self.files.contains_key(f) || self.hidden(f)) {
                    return None;
                }
                files += 1;
            }
        }
        let mut what: Vec<String> = self
            .packages
            .keys()
            .map(|d| d.rsplit('/').next().unwrap_or(d).to_string())
            .collect();
        what.extend(
            self.removed
                .iter()
                .map(|d| format!("{} (deleted)", d.rsplit('/').next().unwrap_or(d))),
        );
        Some(format!(
            "--fast-layers stopped at layer {}: {} and the {files} files its RECORD lists are resolved; ASSUMED that this RECORD describes the install that matters and that older layers hold no other environment (the default reads every layer)",
            self.layer,
            what.join(", ")
        ))
    }

    /// The merged view, each kept file's layer, and warnings. Links are resolved here (see
    /// the module doc).
    pub fn finish(mut self, target: &str) -> (MemView, BTreeMap<String, usize>, Vec<String>) {
        let mut unreadable = std::mem::take(&mut self.unresolved);
        self.resolve_links(&mut unreadable);
        let mut view = MemView::new(target, TargetKind::Image);
        let mut layers = BTreeMap::new();
        for (path, (kept, layer)) in self.files {
            layers.insert(path.clone(), layer);
            match kept {
                Kept::Bytes(bytes) => view.insert(path, bytes),
                Kept::Symbols(symbols) => view.insert_library(path, symbols),
            }
        }
        for (path, reason) in unreadable {
            self.warnings.push(format!("{path}: {reason}"));
            view.insert_unreadable(path, reason);
        }
        (view, layers, self.warnings)
    }

    /// Show the files kept under each link's target at the link's path too, through chains
    /// of links (a fixed point, at most [`MAX_LINK_ROUNDS`] rounds). An interesting link whose
    /// target holds nothing kept is unreadable.
    fn resolve_links(&mut self, unreadable: &mut BTreeMap<String, String>) {
        for _ in 0..MAX_LINK_ROUNDS {
            let mut added = Vec::new();
            for (link, target) in &self.links {
                if let Some((bytes, layer)) = self.files.get(target) {
                    if !self.files.contains_key(link) {
                        added.push((link.clone(), bytes.clone(), *layer));
                    }
                    continue;
                }
                let prefix = format!("{target}/");
                for (path, (bytes, layer)) in self
                    .files
                    .range(prefix.clone()..)
                    .take_while(|(p, _)| p.starts_with(&prefix))
                {
                    let alias = format!("{link}/{}", &path[prefix.len()..]);
                    if !self.files.contains_key(&alias) {
                        added.push((alias, bytes.clone(), *layer));
                    }
                }
            }
            if added.is_empty() {
                break;
            }
            for (path, bytes, layer) in added {
                self.files.entry(path).or_insert((bytes, layer));
            }
        }
        for (link, target) in &self.links {
            let prefix = format!("{link}/");
            let resolved = self.files.contains_key(link)
                || self
                    .files
                    .range(prefix.clone()..)
                    .next()
                    .is_some_and(|(p, _)| p.starts_with(&prefix));
            let name = link.rsplit('/').next().unwrap_or(link);
            if !resolved && (is_interesting(link) || self.is_library(name)) {
                unreadable.insert(
                    link.clone(),
                    format!(
                        "a symbolic link to /{target}, which the image does not hold as a kept file (dangling, looping, or outside the files a scan keeps)"
                    ),
                );
            }
        }
    }

    /// Count `n` more kept bytes against [`MAX_KEPT`].
    fn keep(&mut self, n: usize) -> io::Result<()> {
        self.kept += n as u64;
        if self.kept > MAX_KEPT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the image's files of interest pass the {MAX_KEPT}-byte total cap"),
            ));
        }
        Ok(())
    }

    fn register_record(&mut self, path: &str, kept: &Kept) {
        let Kept::Bytes(bytes) = kept else {
            return;
        };
        let Some(dist_info) = path.strip_suffix("/RECORD") else {
            return;
        };
        let (site, dir) = dist_info.rsplit_once('/').unwrap_or(("", dist_info));
        if !is_deciding_dist_info(dir) {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let mut listed: Vec<String> = text
            .lines()
            .filter_map(record_path)
            .map(|rel| super::layout::normalize(&format!("{site}/{rel}")))
            .filter(|p| is_interesting(p))
            .collect();
        listed.sort();
        listed.dedup();
        self.packages.insert(dist_info.to_string(), listed);
    }
}

impl Sink for Merger {
    fn library(&mut self, entry: &Entry<'_>, read: Result<Library, ElfError>) -> io::Result<()> {
        // The same path as a streamed entry (whiteouts, hidden paths, links), with the read
        // already made.
        self.replayed = Some(read);
        let merged = self.entry(entry, &mut io::empty());
        self.replayed = None;
        merged
    }

    fn entry(&mut self, entry: &Entry<'_>, body: &mut dyn Read) -> io::Result<()> {
        let path = entry.path;
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        if name == ".wh..wh..opq" {
            self.pending.opaque.push(parent.to_string());
            return Ok(());
        }
        if let Some(gone) = name.strip_prefix(".wh.") {
            let gone = if parent.is_empty() {
                gone.to_string()
            } else {
                format!("{parent}/{gone}")
            };
            if is_deciding_install(&gone) && !self.hidden(&gone) {
                self.removed.insert(gone.clone());
            }
            self.pending.deleted.push(gone);
            return Ok(());
        }
        if entry.kind == EntryKind::Dir || self.hidden(path) {
            return Ok(());
        }
        if let EntryKind::Symlink(to) = &entry.kind {
            // A link hides whatever older layers hold at and under its path.
            self.pending.covers.push(path.to_string());
            self.pending.seen.push(path.to_string());
            if self.links.len() < MAX_LINKS {
                let target = if to.starts_with('/') {
                    super::layout::normalize(to)
                } else {
                    super::layout::normalize(&format!("{parent}/{to}"))
                };
                self.links.insert(path.to_string(), target);
            } else if self.links.len() == MAX_LINKS {
                self.warnings.push(format!(
                    "more than {MAX_LINKS} symbolic links: later ones are not followed"
                ));
            }
            return Ok(());
        }
        let library = self.is_library(name);
        if !is_interesting(path) && !library {
            if may_hold_environment(name) {
                self.pending.covers.push(path.to_string());
            }
            return Ok(());
        }
        self.pending.seen.push(path.to_string());
        match &entry.kind {
            EntryKind::File if library => {
                let read = match self.replayed.take() {
                    Some(read) => read,
                    None => stream_library(body)?,
                };
                let symbols = self.hold_library(read)?;
                self.files
                    .insert(path.to_string(), (Kept::Symbols(symbols), self.layer));
            }
            EntryKind::File if entry.size > MAX_FILE => {
                self.warnings.push(format!(
                    "{path} (layer {}): {} bytes, over the {MAX_FILE}-byte limit; not read",
                    self.layer, entry.size
                ));
            }
            EntryKind::File => {
                let mut bytes = Vec::with_capacity(entry.size as usize);
                body.take(MAX_FILE).read_to_end(&mut bytes)?;
                self.keep(bytes.len())?;
                let kept = Kept::Bytes(bytes);
                self.register_record(path, &kept);
                self.files.insert(path.to_string(), (kept, self.layer));
            }
            EntryKind::Hardlink(target) => match self.files.get(target) {
                Some((kept, layer)) if *layer == self.layer => {
                    let kept = kept.clone();
                    if let Kept::Bytes(bytes) = &kept {
                        self.keep(bytes.len())?;
                    }
                    self.register_record(path, &kept);
                    self.files.insert(path.to_string(), (kept, self.layer));
                }
                _ => {
                    self.unresolved.insert(
                        path.to_string(),
                        format!(
                            "a hard link to {target} (layer {}), which that layer does not hold as a kept file",
                            self.layer
                        ),
                    );
                }
            },
            EntryKind::Symlink(_) | EntryKind::Other | EntryKind::Dir => {}
        }
        Ok(())
    }
}

/// Stream one library's tar entry through the ELF reader, once. An I/O error of the layer
/// itself is returned as such (the layer is then an error); anything else about the library
/// is its read's error (its signature undecidable).
pub fn stream_library(body: &mut dyn Read) -> io::Result<Result<Library, ElfError>> {
    let mut watched = Watched {
        inner: body,
        failed: None,
    };
    let mut passes = 0;
    let read = elf::dynamic_symbols(&mut |consume| {
        passes += 1;
        if passes > 1 {
            return Err(ElfError::TooLarge(format!(
                "its dynamic symbol tables lie past the first {} bytes, and a layer is streamed once",
                elf::PREFIX_BYTES
            )));
        }
        consume(&mut watched)
    });
    if let Some((kind, message)) = watched.failed {
        return Err(io::Error::new(kind, message));
    }
    Ok(read)
}

/// The error held for a library past [`MAX_LIBRARIES`].
pub fn too_many_libraries() -> ElfError {
    ElfError::TooLarge(format!(
        "more than {MAX_LIBRARIES} libraries in the image; this one was not read"
    ))
}

/// The bytes a library's symbols count for against [`MAX_KEPT`].
pub fn library_bytes(library: &Library) -> usize {
    library.symbols.iter().map(|s| s.name.len() + 32).sum()
}

/// A layer entry's body that remembers its first I/O error (the layer's, not the library's).
struct Watched<'a> {
    inner: &'a mut dyn Read,
    failed: Option<(io::ErrorKind, String)>,
}

impl Read for Watched<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            if e.kind() != io::ErrorKind::Interrupted {
                self.failed.get_or_insert((e.kind(), e.to_string()));
            }
        })
    }
}

/// Whether file name `name` is a library one of `patterns` names (the one test both the
/// merge and [`relevance`] make).
fn is_library(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| matches_one_star(p, name))
}

/// Whether file name `name` matches `pattern`, which holds one `*` (any run of characters).
fn matches_one_star(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => pattern == name,
    }
}

/// What the merge needs of one layer entry, whatever the other layers hold: what an
/// [`super::extract::Extract`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// Nothing: the merge never looks at it.
    Skip,
    /// Its path and kind (a whiteout, a link, a path that may hide an environment, a file over
    /// [`MAX_FILE`]).
    Meta,
    /// Its path, kind and data (an interesting file of at most [`MAX_FILE`] bytes).
    Body,
    /// Its path, kind and dynamic symbols (a shared library a symbol signature reads, whose
    /// file name matches one of the patterns; any size, streamed once).
    Library,
}

/// What [`Merger`] reads of `entry` (the same tests, in the same order, as its [`Sink`]);
/// `libraries` are the file-name patterns of [`Merger::reading_libraries`].
pub fn relevance(entry: &Entry<'_>, libraries: &[String]) -> Relevance {
    let path = entry.path;
    let name = path.rsplit_once('/').map_or(path, |(_, n)| n);
    if name.starts_with(".wh.") {
        return Relevance::Meta;
    }
    let library = is_library(libraries, name);
    match &entry.kind {
        EntryKind::Dir => Relevance::Skip,
        EntryKind::Symlink(_) => Relevance::Meta,
        _ if !is_interesting(path) && !library => {
            if may_hold_environment(name) {
                Relevance::Meta
            } else {
                Relevance::Skip
            }
        }
        EntryKind::File if library => Relevance::Library,
        EntryKind::File if entry.size <= MAX_FILE => Relevance::Body,
        _ => Relevance::Meta,
    }
}

/// `NAME-VERSION.dist-info` of a deciding package.
fn is_deciding_dist_info(dir: &str) -> bool {
    dir.strip_suffix(".dist-info")
        .and_then(|s| s.split('-').next())
        .is_some_and(|project| {
            let norm = project.to_ascii_lowercase().replace(['-', '.'], "_");
            DECIDING.contains(&norm.as_str())
        })
}

/// A deciding `*.dist-info`, or a `vllm` package directory in `site-packages`/`dist-packages`.
fn is_deciding_install(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let parent = parts.next().unwrap_or("");
    is_deciding_dist_info(name)
        || (name == "vllm" && matches!(parent, "site-packages" | "dist-packages"))
}

/// Names a directory on the way to a Python environment may have.
fn may_hold_environment(name: &str) -> bool {
    name.ends_with(".dist-info")
        || name.starts_with("python")
        || name.contains("venv")
        || matches!(
            name,
            "site-packages"
                | "dist-packages"
                | "vllm"
                | "vllm_flash_attn"
                | "flash_attn"
                | "cute"
                | "third_party"
                | "lib"
                | "lib64"
                | "usr"
                | "local"
                | "opt"
                | "root"
                | "home"
                | "app"
                | "workspace"
        )
}

/// The path field of one `RECORD` line (CSV: `path,hash,size`; the path may be quoted).
fn record_path(line: &str) -> Option<String> {
    let line = line.trim_end_matches('\r');
    if line.is_empty() {
        return None;
    }
    if let Some(rest) = line.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    out.push('"');
                } else {
                    break;
                }
            } else {
                out.push(c);
            }
        }
        return Some(out);
    }
    Some(line.split(',').next().unwrap_or(line).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(m: &mut Merger, path: &str, kind: EntryKind, body: &str) {
        let entry = Entry {
            path,
            kind,
            size: body.len() as u64,
        };
        m.entry(&entry, &mut body.as_bytes()).unwrap();
    }

    const SP: &str = "usr/lib/python3.12/site-packages";

    #[test]
    fn whiteouts_hide_older_layers_only() {
        let mut m = Merger::new(false);
        m.begin_layer(1);
        feed(&mut m, &format!("{SP}/.wh.vllm"), EntryKind::File, "");
        feed(
            &mut m,
            &format!("{SP}/vllm/_version.py"),
            EntryKind::File,
            "new",
        );
        assert!(m.end_layer().is_none());
        m.begin_layer(0);
        feed(
            &mut m,
            &format!("{SP}/vllm/_version.py"),
            EntryKind::File,
            "old",
        );
        feed(
            &mut m,
            &format!("{SP}/vllm/vllm_flash_attn/cute/a.py"),
            EntryKind::File,
            "x",
        );
        m.end_layer();
        let (view, layers, _) = m.finish("t");
        assert_eq!(view.len(), 1);
        assert_eq!(layers[&format!("{SP}/vllm/_version.py")], 1);
    }

    #[test]
    fn opaque_directories_and_covering_files() {
        let mut m = Merger::new(false);
        m.begin_layer(2);
        feed(
            &mut m,
            "opt/venv",
            EntryKind::Symlink("/srv/venv".into()),
            "",
        );
        feed(
            &mut m,
            &format!("{SP}/vllm/.wh..wh..opq"),
            EntryKind::File,
            "",
        );
        feed(
            &mut m,
            &format!("{SP}/vllm/third_party/x.py"),
            EntryKind::File,
            "2",
        );
        m.end_layer();
        m.begin_layer(1);
        feed(
            &mut m,
            &format!("{SP}/vllm/_version.py"),
            EntryKind::File,
            "1",
        );
        feed(
            &mut m,
            "opt/venv/lib/python3.12/site-packages/vllm/_version.py",
            EntryKind::File,
            "1",
        );
        m.end_layer();
        let (view, _, _) = m.finish("t");
        assert_eq!(view.len(), 1);
    }

    #[test]
    fn stops_when_record_files_are_resolved() {
        let mut m = Merger::new(true);
        let record = "vllm/_version.py,sha256=x,1\nvllm/engine.py,,\n\"vllm/vllm_flash_attn/cute/block_info.py\",,\nvllm-0.30.0.dist-info/RECORD,,\n../../../bin/vllm,,\n";
        m.begin_layer(3);
        feed(
            &mut m,
            &format!("{SP}/vllm-0.30.0.dist-info/RECORD"),
            EntryKind::File,
            record,
        );
        feed(
            &mut m,
            &format!("{SP}/vllm/_version.py"),
            EntryKind::File,
            "v",
        );
        assert!(m.end_layer().is_none(), "block_info.py not seen yet");
        m.begin_layer(2);
        feed(
            &mut m,
            &format!("{SP}/vllm/vllm_flash_attn/.wh.cute"),
            EntryKind::File,
            "",
        );
        let reason = m.end_layer().expect("resolved by the whiteout");
        assert!(reason.contains("vllm-0.30.0.dist-info"), "{reason}");
    }

    #[test]
    fn deleted_install_stops() {
        let mut m = Merger::new(true);
        m.begin_layer(1);
        feed(
            &mut m,
            &format!("{SP}/.wh.vllm-0.30.0.dist-info"),
            EntryKind::File,
            "",
        );
        assert!(m.end_layer().unwrap().contains("(deleted)"));
        assert!(Merger::new(false).end_layer().is_none());
    }

    #[test]
    fn record_lines() {
        assert_eq!(record_path("a/b.py,sha256=1,2").as_deref(), Some("a/b.py"));
        assert_eq!(
            record_path("\"a,\"\"b\"\".py\",,").as_deref(),
            Some("a,\"b\".py")
        );
        assert!(is_deciding_dist_info("flash_attn_4-4.0.0b1.dist-info"));
        assert!(is_deciding_dist_info("vllm-0.30.0+cu129.dist-info"));
        assert!(!is_deciding_dist_info("vllm_extra-1.dist-info"));
    }
}
