//! A pinned kernel project ([`Pin`]): where it was found, what it resolves to, and, for shipped
//! copies, which indexed commits their files match ([`Fingerprint`]).

use serde::{Deserialize, Serialize};

/// Whether `s` is a full 40-hex-digit commit SHA (lowercase or uppercase).
pub fn is_full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A commit id as found (JSON: its text): a full SHA as written or resolved through a clone, or
/// an abbreviation a file records (vLLM's `__commit_id__`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CommitId(String);

impl CommitId {
    pub fn new(text: impl Into<String>) -> CommitId {
        CommitId(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether it is a full 40-hex-digit SHA.
    pub fn is_full(&self) -> bool {
        is_full_sha(&self.0)
    }

    /// The full SHA, lower-cased; `None` for an abbreviation.
    pub fn full(&self) -> Option<String> {
        self.is_full().then(|| self.0.to_ascii_lowercase())
    }
}

impl std::fmt::Display for CommitId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for CommitId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for CommitId {
    fn from(text: String) -> CommitId {
        CommitId(text)
    }
}

impl From<&str> for CommitId {
    fn from(text: &str) -> CommitId {
        CommitId(text.to_string())
    }
}

impl PartialEq<str> for CommitId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for CommitId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for CommitId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<CommitId> for String {
    fn eq(&self, other: &CommitId) -> bool {
        *self == other.0
    }
}

/// How a pin was found (JSON `found_by`, the phrase each variant is renamed to).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum FoundBy {
    /// A CMake declaration's `GIT_TAG` (a source tree).
    #[serde(rename = "cmake GIT_TAG")]
    Cmake,
    /// A copy's files in an artifact (a wheel, an environment, an image).
    #[serde(rename = "shipped files")]
    ShippedFiles,
    /// An installed vLLM's own distribution.
    #[serde(rename = "dist-info METADATA, vllm/_version.py")]
    DistInfo,
    /// The copy an installed vLLM bundles, looked for and not found.
    #[serde(rename = "expected bundled copy")]
    ExpectedCopy,
    /// A CMake `URL` naming a forge archive of a repository at a revision.
    #[serde(rename = "cmake URL archive")]
    Archive,
    /// A git submodule's gitlink.
    #[serde(rename = "git submodule")]
    Submodule,
    /// A Python requirement or lock entry.
    #[serde(rename = "python requirement")]
    Python,
}

impl FoundBy {
    /// The phrase reports show (JSON `found_by`).
    pub fn as_str(self) -> &'static str {
        match self {
            FoundBy::Cmake => "cmake GIT_TAG",
            FoundBy::ShippedFiles => "shipped files",
            FoundBy::DistInfo => "dist-info METADATA, vllm/_version.py",
            FoundBy::ExpectedCopy => "expected bundled copy",
            FoundBy::Archive => "cmake URL archive",
            FoundBy::Submodule => "git submodule",
            FoundBy::Python => "python requirement",
        }
    }
}

impl std::fmt::Display for FoundBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One pinned kernel project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pin {
    /// The component name (registry name, else the repository's short name, else the declared name).
    pub component: String,
    /// The name in the CMake declaration (`vllm-flash-attn`).
    pub declared_name: String,
    /// `GIT_REPOSITORY` as written after expansion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Its canonical form (`github.com/owner/name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo_canonical: Option<String>,
    /// The component's canonical repository, when the component is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_repo: Option<String>,
    /// `GIT_TAG` after expansion (a SHA, a short SHA, a tag or a branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// `GIT_TAG` as written, when it differs (a `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_raw: Option<String>,
    /// `URL` when the project is fetched as an archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `URL_HASH` (or `URL_MD5`) of an archive `URL`, as written (`SHA256=...`): integrity
    /// evidence that the archive is the one the pin names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_hash: Option<String>,
    /// The full commit, once resolved (a full SHA as written, or through a clone).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub commit: Option<CommitId>,
    /// How the pin was found.
    #[schemars(with = "String")]
    pub found_by: FoundBy,
    /// The file of the pinning declaration.
    pub file: String,
    /// The line of `GIT_TAG`'s value (else of the declaration).
    pub line: u32,
    /// Patch files applied to the fetched source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
    /// Variables that bypass the pin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// For shipped files: which indexed commits they match (see `pinprobe index build`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    /// From CMake, when the pin can take more than one value: every value some configuration
    /// (a condition on an input, a preset, a `-D` a build script passes, a value an input sets)
    /// fetches, each with what selects it. The fields above are the default configuration's
    /// (else the first configuration's). Empty: the pin is exactly that one value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub possible: Vec<Possible>,
    /// The vLLM release whose pin this is in the release ledger (a Python requirement on
    /// `vllm`), so the ledger's recorded verdicts for that release's pin apply. Internal: the
    /// JSON shows the release in the value's conditions.
    #[serde(skip)]
    pub release: Option<String>,
    /// The Python distribution a requirement or lock entry pins, with the versions it allows,
    /// for rules whose PyPI ranges judge the component's own package. Internal, like `release`.
    #[serde(skip)]
    pub package: Option<PackagePin>,
}

/// A Python distribution a requirement or lock entry pins, and the PEP 440 versions it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackagePin {
    /// The distribution, PEP 503 normalised (`flashinfer-python`).
    pub name: String,
    pub allowed: version_ranges::Ranges<pep508_rs::pep440_rs::Version>,
    /// The requirement as written, for evidence.
    pub written: String,
}

/// One value a CMake pin can take, and what selects it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Possible {
    /// `GIT_TAG` in this configuration; absent when an input can make it any value (`set_by`)
    /// or when there is none (the default branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The inputs that can set `GIT_TAG` to any value (a `-D`, the environment, the compiler).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_by: Vec<String>,
    /// The full commit when `reference` is a full SHA.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub commit: Option<CommitId>,
    /// `GIT_REPOSITORY` in this configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// `URL` in this configuration, when the project is fetched as an archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `URL_HASH` (or `URL_MD5`) of that `URL`, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_hash: Option<String>,
    /// Whether the default configuration (no `-D`, empty environment, no preset) fetches it.
    pub default: bool,
    /// What selects it: the decisions on inputs, the preset, or the inputs that set the value.
    pub conditions: Vec<String>,
    /// Where it is declared (the `GIT_TAG` line, else the call).
    pub file: String,
    pub line: u32,
    /// The vLLM release in the release ledger this value is the pin of (see [`Pin::release`]).
    #[serde(skip)]
    pub release: Option<String>,
}

impl Possible {
    /// `GIT_TAG` as shown: the reference, or `any value` when inputs decide it.
    pub fn shown(&self) -> String {
        match &self.reference {
            Some(r) => format!("`{r}`"),
            None if !self.set_by.is_empty() => {
                format!("any value (set by {})", self.set_by.join(", "))
            }
            None => "no GIT_TAG (the default branch)".to_string(),
        }
    }

    /// What selects it, in one phrase.
    pub fn selected_by(&self) -> String {
        if self.conditions.is_empty() {
            "the default configuration".to_string()
        } else {
            self.conditions.join("; ")
        }
    }
}

impl Pin {
    /// A component found in an artifact's files rather than in CMake.
    pub fn shipped(
        component: &str,
        file: &str,
        reference: Option<String>,
        commit: Option<CommitId>,
        found_by: FoundBy,
    ) -> Pin {
        Pin {
            component: component.to_string(),
            declared_name: component.to_string(),
            repo: None,
            repo_canonical: None,
            component_repo: None,
            reference,
            reference_raw: None,
            url: None,
            url_hash: None,
            commit,
            found_by,
            file: file.to_string(),
            line: 0,
            patches: Vec::new(),
            overrides: Vec::new(),
            fingerprint: None,
            possible: Vec::new(),
            release: None,
            package: None,
        }
    }
}

impl Pin {
    /// The package URL of this pin, built by the `packageurl` crate (the purl specification's
    /// encoding and per-type rules):
    ///
    /// - a repository on a forge with a purl type (`github`, `gitlab`, `bitbucket`) at its
    ///   resolved full commit, else at the tag or branch the pin names:
    ///   `pkg:github/vllm-project/flash-attention@506341a1...`, `pkg:github/triton-lang/triton@v3.5.1`;
    /// - an installed or shipped vLLM, by its distribution version: `pkg:pypi/vllm@0.30.0`;
    /// - a copy shipped inside a Python distribution whose commit is not known, as a path in
    ///   that distribution: `pkg:pypi/vllm@0.30.0#vllm/third_party/tml_fa4`;
    /// - anything else `pkg:generic/NAME[@REF]`, with the repository as `vcs_url`.
    pub fn purl(&self) -> String {
        self.package_url()
            .map(|p| p.to_string())
            .unwrap_or_else(|| format!("pkg:generic/{}", purl_encode(&self.component)))
    }

    /// The version a package URL gives this pin: the full commit, else the reference as the
    /// pin names it (a tag, a branch, a short SHA), never a description of a shipped copy.
    pub fn purl_version(&self) -> Option<String> {
        if let Some(commit) = self.full_commit() {
            return Some(commit);
        }
        match self.found_by {
            FoundBy::ShippedFiles | FoundBy::ExpectedCopy | FoundBy::DistInfo => None,
            _ => self.reference.clone().filter(|r| !r.trim().is_empty()),
        }
    }

    /// The Python distribution (name, version) that ships this pin's files: vLLM's own
    /// dist-info, or the distribution a shipped copy belongs to (`shipped in NAME VERSION`, as
    /// `scan::artifact` writes it).
    pub fn shipped_by(&self) -> Option<(&str, &str)> {
        let reference = self.reference.as_deref()?;
        let named = match self.found_by {
            FoundBy::DistInfo => reference,
            FoundBy::ShippedFiles | FoundBy::ExpectedCopy => reference
                .strip_prefix("shipped in ")?
                .trim_end_matches(" (not found)"),
            _ => return None,
        };
        named
            .rsplit_once(' ')
            .filter(|(name, version)| !name.is_empty() && !version.is_empty())
    }

    fn package_url(&self) -> Option<packageurl::PackageUrl<'static>> {
        use packageurl::PackageUrl;
        // A package requirement (`flash-attn==2.8.3`): the distribution, at the one version it
        // allows; a range gives no version (any of them).
        if let Some(package) = &self.package {
            let mut p = PackageUrl::new("pypi", package.name.to_ascii_lowercase()).ok()?;
            if let Some(version) = package.allowed.as_singleton() {
                p.with_version(version.to_string()).ok()?;
            }
            return Some(p);
        }
        let shipped_copy = matches!(self.found_by, FoundBy::ShippedFiles | FoundBy::ExpectedCopy);
        // A shipped copy is named by its repository only at a known commit: a versionless
        // repository purl would stand for every version of it.
        let forge = self
            .forge()
            .filter(|_| !shipped_copy || self.full_commit().is_some());
        if let Some((ty, namespace, name)) = forge {
            let mut p = PackageUrl::new(ty.to_string(), name.to_string()).ok()?;
            p.with_namespace(namespace.to_string()).ok()?;
            if let Some(v) = self.purl_version() {
                p.with_version(v).ok()?;
            }
            return Some(p);
        }
        if let Some((dist, version)) = self.shipped_by() {
            let mut p = PackageUrl::new("pypi", dist.to_string()).ok()?;
            p.with_version(version.to_string()).ok()?;
            if shipped_copy {
                // The path inside the distribution: below the environment's site directory.
                let inside = ["site-packages/", "dist-packages/"]
                    .iter()
                    .filter_map(|site| self.file.rfind(site).map(|at| at + site.len()))
                    .max()
                    .map_or(self.file.as_str(), |at| &self.file[at..]);
                p.with_subpath(inside.to_string()).ok()?;
            }
            return Some(p);
        }
        let mut p = PackageUrl::new("generic", self.component.clone()).ok()?;
        if let Some(v) = self.purl_version() {
            p.with_version(v).ok()?;
        }
        if let Some(repo) = self.repo.as_deref().or(self.canonical_repo()) {
            let url = if repo.contains("://") {
                repo.to_string()
            } else {
                format!("https://{repo}")
            };
            p.add_qualifier("vcs_url", format!("git+{url}")).ok()?;
        }
        Some(p)
    }

    /// The resolved commit when it is a full SHA, lower-cased.
    pub fn full_commit(&self) -> Option<String> {
        self.commit
            .as_deref()
            .filter(|c| is_full_sha(c))
            .map(str::to_ascii_lowercase)
    }

    /// The canonical repository (`github.com/owner/name`), as found or as the component's.
    pub fn canonical_repo(&self) -> Option<&str> {
        self.repo_canonical
            .as_deref()
            .or(self.component_repo.as_deref())
    }

    /// The purl type, owner and name of the pin's repository on a forge that has a purl type.
    fn forge(&self) -> Option<(&'static str, &str, &str)> {
        let canonical = self.canonical_repo()?;
        let (host, path) = canonical.split_once('/')?;
        let ty = match host {
            "github.com" => "github",
            "gitlab.com" => "gitlab",
            "bitbucket.org" => "bitbucket",
            _ => return None,
        };
        let (owner, name) = path.split_once('/')?;
        (!owner.is_empty() && !name.is_empty() && !name.contains('/')).then_some((ty, owner, name))
    }
}

/// Percent-encode what a purl component may not hold (RFC 3986 unreserved characters stay).
pub fn purl_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// How a shipped copy's files match a fingerprint index (`pinprobe index build`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fingerprint {
    pub component: String,
    /// Commits whose files match best, oldest first.
    pub commits: Vec<String>,
    /// Files of the copy that matched, and how many it has.
    pub matched: usize,
    pub total: usize,
    /// Files that differ from (or are missing in) the best commits.
    pub mismatched: Vec<String>,
    /// One line saying all of the above.
    pub summary: String,
}

#[cfg(test)]
mod commit_id_tests {
    use super::*;

    #[test]
    fn a_commit_id_is_its_text_and_knows_whether_it_is_full() {
        let upper = CommitId::new("A".repeat(40));
        assert!(upper.is_full());
        assert_eq!(upper.full(), Some("a".repeat(40)));
        assert_eq!(upper.as_str(), "A".repeat(40), "kept as written");
        let short = CommitId::from("ced6857af");
        assert!(!short.is_full());
        assert_eq!(short.full(), None);
        assert_eq!(
            serde_json::to_string(&short).expect("serializes"),
            "\"ced6857af\""
        );
        let back: CommitId = serde_json::from_str("\"ced6857af\"").expect("reads");
        assert_eq!(back, short);
        assert_eq!(back, "ced6857af");
        assert_eq!(String::from("ced6857af"), back);
    }
}

#[cfg(test)]
mod purl_tests {
    use super::*;
    use pep508_rs::pep440_rs::Version;
    use std::str::FromStr;

    fn package_pin(allowed: version_ranges::Ranges<Version>) -> Pin {
        let mut pin = Pin::shipped(
            "flash-attention-upstream",
            "requirements.txt",
            None,
            None,
            FoundBy::Python,
        );
        pin.package = Some(PackagePin {
            name: "flash-attn".into(),
            allowed,
            written: "flash-attn".into(),
        });
        pin
    }

    #[test]
    fn a_package_requirement_is_its_distribution_at_the_version_it_pins() {
        let Ok(v) = Version::from_str("2.8.3") else {
            unreachable!("a literal version parses")
        };
        let exact = package_pin(version_ranges::Ranges::singleton(v.clone()));
        assert_eq!(exact.purl(), "pkg:pypi/flash-attn@2.8.3");
        let range = package_pin(version_ranges::Ranges::higher_than(v));
        assert_eq!(
            range.purl(),
            "pkg:pypi/flash-attn",
            "a range names no one version"
        );
    }
}
