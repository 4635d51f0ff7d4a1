//! What a scan found: the [`Report`] of one run, a [`TargetReport`] per target, and for container
//! images the layers each file came from ([`ImageInfo`]).

use super::{Finding, Pin, Status};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The JSON schema version; bump on incompatible changes.
pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tool {
    pub name: Cow<'static, str>,
    pub version: Cow<'static, str>,
}

/// Everything one run found.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub schema: u32,
    pub tool: Tool,
    /// Digest of the rule database used.
    pub rules_digest: String,
    /// The rule database's date (its latest rule change, `YYYY-MM-DD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_date: Option<String>,
    /// Which rule database that is: built in, or pulled from a signed feed into the cache (its
    /// serial, the key that signed it), and a user directory layered over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_source: Option<RulesSource>,
    /// `scan --shard I/N`: which shard of the target list this report covers (absent for an
    /// unsharded run), so `pinprobe merge` can put the targets back in the list's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub targets: Vec<TargetReport>,
    /// The gate the run's exit code comes from (set by the command line): the headline of every
    /// rendering counts what it counts.
    #[serde(skip)]
    pub gate: super::GateView,
    /// SARIF: undecided findings as `note` results too (`--sarif-unknown`; by default they
    /// stay out of the alert stream).
    #[serde(skip)]
    pub sarif_unknown: bool,
}

/// Where the rule database a report used came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RulesSource {
    /// `built-in` (compiled into pinprobe) or `pulled` (a signed feed `rules pull` accepted
    /// into the cache).
    pub origin: String,
    /// The feed serial (higher is newer).
    pub serial: u64,
    /// The id of the key that signed a pulled database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Where a pulled database was pulled from (the artifact reference), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<String>,
    /// The cache directory a pulled database is read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A directory of rules (`--rules DIR`) layered over the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_rules: Option<String>,
    /// Accepted with `--allow-rules-downgrade` (older than, or dropping rules of, a database
    /// trusted before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub downgraded: bool,
    /// A pulled database that was refused for this run (why), so the built-in one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl RulesSource {
    /// The database built into this binary, at `serial`.
    pub fn builtin(serial: u64) -> RulesSource {
        RulesSource {
            origin: "built-in".into(),
            serial,
            key: None,
            feed: None,
            path: None,
            user_rules: None,
            downgraded: false,
            refused: None,
        }
    }

    /// One line for text reports: `built-in, serial N` or `pulled from REF, serial N, signed
    /// by key ID`, then the user directory and a downgrade.
    pub fn describe(&self) -> String {
        let mut out = self.origin.clone();
        if let Some(feed) = &self.feed {
            out.push_str(&format!(" from {feed}"));
        }
        out.push_str(&format!(", serial {}", self.serial));
        if let Some(key) = &self.key {
            out.push_str(&format!(", signed by key {key}"));
        }
        if let Some(path) = &self.path {
            out.push_str(&format!(", cached in {path}"));
        }
        if let Some(dir) = &self.user_rules {
            out.push_str(&format!(", with --rules {dir}"));
        }
        if self.downgraded {
            out.push_str(", ACCEPTED WITH --allow-rules-downgrade");
        }
        if let Some(why) = &self.refused {
            out.push_str(&format!(" (REFUSED: {why})"));
        }
        out
    }
}

/// The shard of a target list one sharded run scanned: the targets at positions `index`,
/// `index + count`, `index + 2 * count`, ... of a list of `of_targets` targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    /// How many targets the full list holds (every shard's together).
    pub of_targets: usize,
}

impl Shard {
    /// The position in the full list of this shard's `k`-th target.
    pub fn position(&self, k: usize) -> usize {
        self.index + k * self.count
    }
}

/// What kind of input a target is, as every report names it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// A directory of sources (a checkout's work tree, an unpacked sdist).
    #[default]
    SourceTree,
    /// A revision read from a git repository's objects (`--rev`, `diff`).
    GitTree,
    /// An installed environment: a site-packages directory or a virtual environment.
    Installed,
    /// A wheel file.
    Wheel,
    /// A container image's merged file system.
    Image,
}

impl TargetKind {
    /// The name reports use (`source-tree`, `git-tree`, `installed`, `wheel`, `image`).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::SourceTree => "source-tree",
            TargetKind::GitTree => "git-tree",
            TargetKind::Installed => "installed",
            TargetKind::Wheel => "wheel",
            TargetKind::Image => "image",
        }
    }

    /// Whether the target is source the build would compile (a tree), not a built artifact.
    pub fn is_source(self) -> bool {
        matches!(self, TargetKind::SourceTree | TargetKind::GitTree)
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one target holds and what the rules say about it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetReport {
    pub target: String,
    pub kind: TargetKind,
    pub components: Vec<Pin>,
    pub findings: Vec<Finding>,
    /// Why the target as a whole could not be decided (nothing found to check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Source trees only: the CMake projects evaluated, each as CMake would be given it
    /// (`cmake -S DIR`; `.` for the top-level `CMakeLists.txt`), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cmake_roots: Vec<CmakeRoot>,
    /// Container images only: the layers and which layer brought each file that was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
    /// Notices for stderr only (not in any report format): e.g. offline, which findings a
    /// fetch of a pinned repository would decide.
    #[serde(skip)]
    pub notices: Vec<String>,
    /// The report rests on something that can change while the target does not (a fetch of
    /// pinned history that failed): the report cache does not keep it.
    #[serde(skip)]
    pub provisional: bool,
    /// Where a source tree in git came from (set by the command line), for SARIF's
    /// `versionControlProvenance`.
    #[serde(skip)]
    pub provenance: Option<VersionControl>,
}

/// A CMake project evaluated in a source tree ([`TargetReport::cmake_roots`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CmakeRoot {
    /// The directory holding its `CMakeLists.txt`, from the tree's root (`.` for the root).
    pub dir: String,
    /// Why it was evaluated: the top-level project, what configures it (`setup.py:LINE ...`,
    /// `pyproject.toml ...`), or that no other `CMakeLists.txt` reaches it.
    pub why: String,
}

/// A git work tree's repository, commit and branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionControl {
    /// An absolute URI without credentials (`origin`'s, else `file://` of the work tree).
    pub repository_uri: String,
    pub revision_id: String,
    pub branch: Option<String>,
}

/// Where an image target's files came from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageInfo {
    /// The image manifest's digest (`sha256:...`), when the image has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// The image's platform from its config (`linux/amd64`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Every layer, base layer first (index 0).
    pub layers: Vec<LayerInfo>,
    /// How many layers were read (newest first).
    pub layers_scanned: usize,
    /// Why the scan stopped before the base layer, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Layer bytes read as stored (compressed), i.e. downloaded for a registry.
    pub bytes_read: u64,
    /// Each file kept from the image and the index of the layer that brought it.
    pub files: std::collections::BTreeMap<String, usize>,
}

/// One image layer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LayerInfo {
    pub index: usize,
    /// `sha256:...` of the stored blob (the uncompressed diff id for a legacy `docker save` layer).
    pub digest: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The image history's `created_by` for this layer (empty-layer entries skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Whether the scan read this layer.
    pub scanned: bool,
    /// Whether what the scan needs of this layer came from the content-addressed cache (the
    /// layer itself was not read: it counts for nothing in `bytes_read`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

impl Tool {
    /// This binary: its name and version.
    pub fn this() -> Tool {
        Tool {
            name: Cow::Borrowed(env!("CARGO_PKG_NAME")),
            version: Cow::Borrowed(env!("CARGO_PKG_VERSION")),
        }
    }
}

impl ImageInfo {
    /// The layer that brought `path` (for a directory, the newest layer that brought a file
    /// under it), when it came from this image.
    pub fn layer_of(&self, path: &str) -> Option<&LayerInfo> {
        let index = self.files.get(path).copied().or_else(|| {
            let dir = format!("{}/", path.trim_end_matches('/'));
            self.files
                .range(dir.clone()..)
                .take_while(|(p, _)| p.starts_with(&dir))
                .map(|(_, &i)| i)
                .max()
        })?;
        self.layers.get(index)
    }
}

impl TargetReport {
    pub fn new(target: String, kind: TargetKind) -> Self {
        TargetReport {
            target,
            kind,
            components: Vec::new(),
            findings: Vec::new(),
            undecided: None,
            warnings: Vec::new(),
            cmake_roots: Vec::new(),
            image: None,
            notices: Vec::new(),
            provisional: false,
            provenance: None,
        }
    }
}

impl Report {
    pub fn new(rules_digest: String, targets: Vec<TargetReport>) -> Self {
        Report {
            schema: SCHEMA,
            tool: Tool::this(),
            rules_digest,
            rules_date: None,
            rules_source: None,
            shard: None,
            targets,
            gate: super::GateView::default(),
            sarif_unknown: false,
        }
    }

    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.targets.iter().flat_map(|t| t.findings.iter())
    }

    /// Counts by status: (affected, unknown, not_affected).
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |s| self.findings().filter(|f| f.status == s).count();
        (
            count(Status::Affected),
            count(Status::Unknown),
            count(Status::NotAffected),
        )
    }
}
