//! The component registry (`rules/components.yaml`): which kernel projects vLLM pins, their
//! canonical repositories and aliases, and the CMake names that declare them.

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
