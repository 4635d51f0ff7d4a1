//! Pin finders: turn a view into the kernel projects it pins ([`Pin`]).
//!
//! The CMake finder reports every declaration call; here declarations of the same name (vLLM
//! declares each project twice: once with `SOURCE_DIR ${..._SRC_DIR}` for the override, once
//! with `GIT_TAG`) merge into one pin, attributed to a component of the registry.

pub mod cmake;
pub mod url;

use crate::rules::Registry;
use serde::Serialize;

/// How a pin was found, for reports.
pub const FOUND_BY_CMAKE: &str = "cmake GIT_TAG";

/// One pinned kernel project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// The full commit, once resolved (a full SHA as written, or through a clone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// How the pin was found.
    pub found_by: &'static str,
    /// The file of the pinning declaration.
    pub file: String,
    /// The line of `GIT_TAG`'s value (else of the declaration).
    pub line: u32,
    /// Patch files applied to the fetched source.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
    /// Variables that bypass the pin.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// For shipped files: which indexed commits they match (see `pinprobe index build`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<crate::index::Match>,
}

impl Pin {
    /// A component found in an artifact's files rather than in CMake.
    pub fn shipped(
        component: &str,
        file: &str,
        reference: Option<String>,
        commit: Option<String>,
        found_by: &'static str,
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
            commit,
            found_by,
            file: file.to_string(),
            line: 0,
            patches: Vec::new(),
            overrides: Vec::new(),
            fingerprint: None,
        }
    }

    /// Whether the declared repository is neither the component's canonical repository nor an
    /// alias (a personal fork, say).
    pub fn is_foreign_repo(&self, registry: &Registry) -> bool {
        match (&self.repo_canonical, registry.get(&self.component)) {
            (Some(repo), Some(def)) => !def.owns_repo(repo),
            _ => false,
        }
    }
}

/// Merge declarations into pins, one per declared name, in order of first appearance.
pub fn pins(declarations: &[cmake::Declaration], registry: &Registry) -> Vec<Pin> {
    let mut names: Vec<&str> = Vec::new();
    for d in declarations {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&d.name)) {
            names.push(&d.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let same: Vec<&cmake::Declaration> = declarations
                .iter()
                .filter(|d| d.name.eq_ignore_ascii_case(name))
                .collect();
            merge(name, &same, registry)
        })
        .collect()
}

fn merge(name: &str, same: &[&cmake::Declaration], registry: &Registry) -> Pin {
    // The declaration that pins: one with GIT_TAG, else GIT_REPOSITORY, else URL, else the first.
    let main = same
        .iter()
        .find(|d| d.git_tag.is_some())
        .or_else(|| same.iter().find(|d| d.git_repository.is_some()))
        .or_else(|| same.iter().find(|d| d.url.is_some()))
        .or_else(|| same.first())
        .copied();
    let value = |a: &Option<cmake::Arg>| a.as_ref().and_then(|a| a.value.clone());
    let repo = main.and_then(|d| value(&d.git_repository));
    let repo_canonical = repo.as_deref().and_then(url::canonical);
    let def = registry.identify(name, repo_canonical.as_deref());
    let component = def
        .map(|c| c.name.clone())
        .or_else(|| {
            repo_canonical
                .as_deref()
                .map(|r| url::short_name(r).to_string())
        })
        .unwrap_or_else(|| name.to_string());
    let tag = main.and_then(|d| d.git_tag.as_ref());
    let reference = tag.and_then(|a| a.value.clone());
    let reference_raw = tag
        .filter(|a| Some(&a.raw) != a.value.as_ref())
        .map(|a| a.raw.clone());
    let mut patches: Vec<String> = same
        .iter()
        .flat_map(|d| d.patches.iter().cloned())
        .collect();
    patches.sort();
    patches.dedup();
    let mut overrides: Vec<String> = same
        .iter()
        .flat_map(|d| d.overrides.iter().cloned())
        .collect();
    overrides.sort();
    overrides.dedup();
    Pin {
        component,
        declared_name: name.to_string(),
        repo,
        repo_canonical,
        component_repo: def.and_then(|c| url::canonical(&c.repo)),
        commit: reference
            .as_deref()
            .filter(|r| crate::rules::lint::is_full_sha(r))
            .map(|r| r.to_ascii_lowercase()),
        reference,
        reference_raw,
        url: main.and_then(|d| value(&d.url)),
        found_by: FOUND_BY_CMAKE,
        file: main.map(|d| d.file.clone()).unwrap_or_default(),
        line: tag.map(|a| a.line).or(main.map(|d| d.line)).unwrap_or(1),
        patches,
        overrides,
        fingerprint: None,
    }
}
