//! Container images: `docker save` tarballs (legacy `manifest.json` and OCI forms,
//! `docker-archive:PATH[:REF]`), OCI image layouts (`oci:DIR[:TAG]`, `oci-archive:PATH[:TAG]`),
//! registries (`docker://HOST/REPO:TAG`, `registry:`) and the local engine
//! (`docker-daemon:NAME`, `podman:NAME`, through its API socket).
//!
//! An image becomes an in-memory [`MemView`] of the files an artifact scan needs
//! ([`crate::view::is_interesting`]), merged from its layers with whiteout semantics, plus the
//! layer that brought each file. Layers are streamed (gzip, zstd or plain tar, told apart by
//! their first bytes), never extracted to disk, and read newest first. Every layer is read
//! unless an early stop is provably safe, or `--fast-layers` asks for the assumption-based
//! early stop (see [`merge`]); a registry scan downloads only the layers it reads. Every manifest, config and layer that is read is checked against its digest.
//!
//! - [`reference`]: what a target string names.
//! - [`manifest`]: manifests, indexes, configs and platform choice.
//! - [`layout`]: OCI layout directories and `docker save` archives.
//! - [`registry`], [`auth`], [`tls`]: the Distribution API client.
//! - [`layer`]: one layer's bytes to tar entries, digests checked.
//! - [`extract`]: the entries of one layer the merge reads, cached by the layer's digest.
//! - [`merge`]: whiteouts, the files kept, early stop.
//! - [`provenance`]: layers aligned with the image history.

pub mod auth;
pub mod daemon;
pub mod extract;
pub mod layer;
pub mod layout;
pub mod manifest;
pub mod overlay;
mod progress;
pub mod provenance;
pub mod reference;
pub mod registry;
pub mod tls;

use crate::cache::Store;
use crate::model::ImageInfo;
use crate::view::MemView;
use manifest::{ImageConfig, Platform};
use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The platform picked from a multi-arch index unless `--platform` says otherwise.
pub const DEFAULT_PLATFORM: &str = "linux/amd64";
/// How long a registry transfer may stall before it fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

static CACHE: OnceLock<Store> = OnceLock::new();

/// Keep layer extracts ([`extract`]) and registry manifests and configs fetched by digest in
/// `store`, shared with other targets, runs and processes (the first store named in a process
/// is kept). Without one, every layer is read and every blob fetched.
pub fn use_cache(store: Store) {
    let _ = CACHE.set(store);
}

/// The store named by [`use_cache`], if any.
pub(crate) fn cache() -> Option<&'static Store> {
    CACHE.get()
}

/// How to read images.
#[derive(Debug, Clone)]
pub struct Options {
    /// `os/arch[/variant]` to pick from a multi-arch index.
    pub platform: String,
    /// Extra PEM root certificates for registries (added to the system roots).
    pub ca_file: Option<PathBuf>,
    /// Registries (`host[:port]`) reached over plain HTTP.
    pub insecure_registries: Vec<String>,
    /// `--fast-layers`: stop once the newest deciding RECORD's files are resolved (an
    /// assumption the report states) instead of reading every layer (see [`merge`]).
    pub fast_layers: bool,
    /// Connect and per-read timeout for registry transfers.
    pub timeout: Duration,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// File-name patterns (one `*`, such as `_vllm_fa3_C*.so`) of the shared libraries that
    /// symbol signatures read: each is streamed from its layer for its dynamic symbols only
    /// (see [`merge`]).
    pub libraries: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            platform: DEFAULT_PLATFORM.to_string(),
            ca_file: None,
            insecure_registries: Vec::new(),
            fast_layers: false,
            timeout: DEFAULT_TIMEOUT,
            progress: false,
            libraries: Vec::new(),
        }
    }
}

/// Why an image could not be read: the input as given, and the cause.
#[derive(Debug, thiserror::Error)]
#[error("{input}: {fault}")]
pub struct ImageError {
    pub input: String,
    pub fault: Fault,
}

/// The cause of an [`ImageError`]. Messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    #[error("not an image reference: {0}")]
    Reference(String),
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("malformed {what}: {message}")]
    Malformed { what: String, message: String },
    #[error("{what} {digest} digest mismatch (got {actual})")]
    Digest {
        what: &'static str,
        digest: String,
        actual: String,
    },
    #[error("{what} {digest} truncated: {got} of {expected} bytes")]
    Truncated {
        what: &'static str,
        digest: String,
        got: u64,
        expected: u64,
    },
    #[error("{0}")]
    Http(String),
    #[error("{0}")]
    Auth(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Timeout(String),
    #[error("no image for platform {platform} in the index (available: {available})")]
    Platform { platform: String, available: String },
    #[error("layer {digest}: {message}")]
    Layer { digest: String, message: String },
    #[error("{0}")]
    Unsupported(String),
}

impl Fault {
    pub(crate) fn malformed(what: impl Into<String>, message: impl ToString) -> Self {
        Fault::Malformed {
            what: what.into(),
            message: message.to_string(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Fault::Io {
            path: path.into(),
            error,
        }
    }
}

/// A layer as a source lists it, base layer first.
#[derive(Debug, Clone)]
pub struct LayerRef {
    /// Digest of the stored bytes, checked while reading (absent for legacy `docker save`).
    pub digest: Option<String>,
    /// Digest of the uncompressed tar, checked when there is no blob digest.
    pub diff_id: Option<String>,
    /// Size of the stored bytes, when the manifest gives it.
    pub size: Option<u64>,
    /// Where the source finds it (a path inside an archive, or the blob digest).
    pub location: String,
}

impl LayerRef {
    /// The digest to report: the blob digest, else the diff id, else the location.
    pub fn display_digest(&self) -> String {
        self.digest
            .clone()
            .or_else(|| self.diff_id.clone())
            .unwrap_or_else(|| self.location.clone())
    }
}

/// An image resolved to one manifest: its config and its layers.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub manifest_digest: Option<String>,
    pub config: ImageConfig,
    pub layers: Vec<LayerRef>,
    pub warnings: Vec<String>,
}

/// Where an image's manifest, config and layers come from.
pub trait Source {
    /// Resolve the target to one image manifest (choosing `platform` from an index).
    fn resolve(&mut self, platform: &Platform) -> Result<Resolved, Fault>;
    /// The stored bytes of one layer, as a stream. Digests are checked by the reader's caller.
    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault>;
}

/// The files kept from an image, merged, and where each came from.
#[derive(Debug)]
pub struct Merged {
    pub view: MemView,
    pub info: ImageInfo,
    pub warnings: Vec<String>,
}

/// Open an image target and merge the files an artifact scan needs.
pub fn open(target: &str, opts: &Options) -> Result<Merged, ImageError> {
    let err = |fault| ImageError {
        input: reference::redact_userinfo(target).into_owned(),
        fault,
    };
    let platform = Platform::parse(&opts.platform).map_err(err)?;
    let mut source = open_source(target, opts).map_err(err)?;
    let resolved = source.resolve(&platform).map_err(err)?;
    overlay::run(target, source.as_mut(), resolved, &platform, opts).map_err(err)
}

fn open_source(target: &str, opts: &Options) -> Result<Box<dyn Source>, Fault> {
    Ok(match reference::parse(target)? {
        reference::ImageRef::Registry(r) => Box::new(registry::Registry::new(r, opts)?),
        reference::ImageRef::OciDir { dir, tag } => Box::new(layout::OciDir::new(dir, tag)),
        reference::ImageRef::Archive(path) => Box::new(layout::Archive::open(path)?),
        reference::ImageRef::ArchiveImage { path, select } => {
            Box::new(layout::Archive::open(path)?.select(Some(select)))
        }
        reference::ImageRef::Daemon { engine, name } => {
            Box::new(daemon::export(engine, &name, opts.timeout)?)
        }
    })
}

impl Source for daemon::Exported {
    fn resolve(&mut self, platform: &Platform) -> Result<Resolved, Fault> {
        self.archive.resolve(platform)
    }

    fn open_layer(&mut self, layer: &LayerRef) -> Result<Box<dyn Read + '_>, Fault> {
        self.archive.open_layer(layer)
    }
}
