//! The component registry (`rules/components.yaml`): which kernel projects vLLM pins, their
//! canonical repositories and aliases, the CMake names that declare them, the Python packages
//! that ship them, and their lineage: a fork under another name (`fork_of`) gets its parent's
//! rules, and a repository or declaration that only looks like a component (`names`) gets that
//! component's rules too, so that neither comes out clean by being unrecognised.

use crate::pin::url;
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentDef {
    pub name: String,
    pub repo: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub declares: Vec<String>,
    /// Python distribution names (PEP 503 normalised when compared) that ship this component.
    #[serde(default)]
    pub packages: Vec<String>,
    /// The component this one is a fork of, under another name with history of its own: the
    /// parent's rules reach its pins (and decide only where a known pin or a clone holding
    /// the fork's commit does; otherwise `unknown`).
    #[serde(default)]
    pub fork_of: Option<String>,
    /// Words that mark a declared name or a repository name as this component when nothing
    /// else identifies it (`flash-attn` in `repo-flash-attn`): such a pin is an unrecognised
    /// fork, judged by this component's rules (a fork-pin finding says so).
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    pub components: Vec<ComponentDef>,
}

impl ComponentDef {
    /// Whether `canonical_repo` is this component's repository or one of its aliases.
    pub fn owns_repo(&self, canonical_repo: &str) -> bool {
        std::iter::once(&self.repo)
            .chain(self.aliases.iter())
            .any(|r| url::canonical(r).as_deref() == Some(canonical_repo))
    }
}

impl Registry {
    pub fn get(&self, name: &str) -> Option<&ComponentDef> {
        self.components.iter().find(|c| c.name == name)
    }

    /// The component a declaration belongs to: by declared name first, then by repository.
    pub fn identify(
        &self,
        declared_name: &str,
        canonical_repo: Option<&str>,
    ) -> Option<&ComponentDef> {
        self.components
            .iter()
            .find(|c| {
                c.declares
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(declared_name))
            })
            .or_else(|| {
                canonical_repo.and_then(|r| self.components.iter().find(|c| c.owns_repo(r)))
            })
    }

    /// The component a Python distribution ships (`flash-attn`, `flash_attn` and `Flash.Attn`
    /// are one name).
    pub fn by_package(&self, package: &str) -> Option<&ComponentDef> {
        let wanted = normalise_package(package);
        self.components
            .iter()
            .find(|c| c.packages.iter().any(|p| normalise_package(p) == wanted))
    }

    /// Whether `component`'s rules reach a range written for `canonical_repo`: the component
    /// owns the repository, or it is a fork of a component that does.
    pub fn reaches(&self, component: &str, canonical_repo: &str) -> bool {
        let Some(def) = self.get(component) else {
            return false;
        };
        def.owns_repo(canonical_repo)
            || def
                .fork_of
                .as_deref()
                .and_then(|parent| self.get(parent))
                .is_some_and(|p| p.owns_repo(canonical_repo))
    }

    /// The component a declaration that nothing else identifies looks like: a word of its
    /// `names` in the declared name or in the repository's name.
    pub fn resembles(
        &self,
        declared_name: &str,
        canonical_repo: Option<&str>,
    ) -> Option<&ComponentDef> {
        let declared = declared_name.to_ascii_lowercase();
        let repo_name = canonical_repo.map(|r| url::short_name(r).to_ascii_lowercase());
        self.components.iter().find(|c| {
            c.names.iter().any(|n| {
                let n = n.to_ascii_lowercase();
                declared.contains(&n) || repo_name.as_deref().is_some_and(|r| r.contains(&n))
            })
        })
    }

    /// Merge another registry over this one (same name replaces).
    pub fn layer(&mut self, other: Registry) {
        for comp in other.components {
            match self.components.iter_mut().find(|c| c.name == comp.name) {
                Some(slot) => *slot = comp,
                None => self.components.push(comp),
            }
        }
    }
}

/// A Python distribution name as PEP 503 compares it: lower case, runs of `-`, `_` and `.` as
/// one `-`.
pub fn normalise_package(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        serde_saphyr::from_str(include_str!("../../rules/components.yaml"))
            .expect("the shipped registry")
    }

    #[test]
    fn package_names_compare_as_pep_503_does() {
        assert_eq!(normalise_package("Flash_Attn"), "flash-attn");
        assert_eq!(normalise_package("flash--attn..4"), "flash-attn-4");
        let r = registry();
        assert_eq!(
            r.by_package("FLASH_ATTN").map(|c| c.name.as_str()),
            Some("flash-attention-upstream")
        );
        assert_eq!(r.by_package("numpy"), None);
    }

    #[test]
    fn a_fork_under_another_name_gets_its_parents_rules() {
        let r = registry();
        let fa = "github.com/vllm-project/flash-attention";
        assert!(r.reaches("flash-attention", fa));
        assert!(r.reaches("sgl-attn", fa));
        assert!(!r.reaches("flashmla", fa));
        assert!(!r.reaches("no-such-component", fa));
    }

    #[test]
    fn a_lookalike_is_the_component_it_resembles() {
        let r = registry();
        let name = |d: &str, repo: Option<&str>| r.resembles(d, repo).map(|c| c.name.clone());
        assert_eq!(
            name("repo-flash-attention", None).as_deref(),
            Some("flash-attention")
        );
        assert_eq!(
            name("kernels", Some("github.com/someone/my-flash-attn")).as_deref(),
            Some("flash-attention")
        );
        assert_eq!(name("fmt", Some("github.com/fmtlib/fmt")), None);
    }
}
