//! Pin finders: turn a view into the kernel projects it pins ([`Pin`]).
//!
//! The CMake finder reports every declaration call; here declarations of the same name (vLLM
//! declares each project twice: once with `SOURCE_DIR ${..._SRC_DIR}` for the override, once
//! with `GIT_TAG`) merge into one pin, attributed to a component of the registry.

pub mod cmake;
pub mod components;
pub mod fingerprint;
pub mod shipped;
pub mod url;

use crate::model::{FOUND_BY_CMAKE, Pin};
use components::Registry;

/// Whether the pin's declared repository is neither its component's canonical repository nor an
/// alias (a personal fork, say).
pub fn is_foreign_repo(pin: &Pin, registry: &Registry) -> bool {
    match (&pin.repo_canonical, registry.get(&pin.component)) {
        (Some(repo), Some(def)) => !def.owns_repo(repo),
        _ => false,
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
            .filter(|r| crate::model::is_full_sha(r))
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
