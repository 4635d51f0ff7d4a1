//! Python requirements as kernel pins. A requirement on `vllm` resolves through the release
//! ledger (`rules/ledger.yaml`) to the kernel pins each version it allows ships: one pin per
//! component, with one value per allowed version, and a value that can be anything where it
//! allows versions the ledger does not know. A requirement on a package that ships a kernel
//! (`rules/components.yaml` `packages:`) is a pin of that component: at a commit when it is a
//! git reference, else a version whose commit is not known (its rules stay unknown, never
//! nothing). The scan judges these pins like any other (a pin's set of values decides as a
//! CMake pin's does).

use crate::model::{FoundBy, Pin, Possible, is_full_sha};
use crate::pin::python::{Allowed, Requirement};
use crate::pin::url;
use crate::rules::Database;
use crate::rules::ledger::{DEFAULT_CONFIGURATION, Release};
use pep508_rs::pep440_rs::Version;
use std::str::FromStr;
use version_ranges::Ranges;

/// The kernel pins of the requirements.
pub fn pins(requirements: &[Requirement], db: &Database) -> Vec<Pin> {
    let mut out = Vec::new();
    for r in requirements {
        let Some(def) = db.registry.by_package(&r.name) else {
            continue;
        };
        if def.name == "vllm" {
            out.extend(vllm_pins(r, db));
        } else {
            out.push(package_pin(r, &def.name, db));
        }
    }
    out
}

/// What selects a value: the requirement, and its marker.
fn conditions(r: &Requirement, what: String) -> Vec<String> {
    let mut out = vec![what];
    if let Some(m) = &r.marker {
        out.push(format!("when {m}"));
    }
    out
}

/// A kernel package's requirement as a pin of its component.
fn package_pin(r: &Requirement, component: &str, db: &Database) -> Pin {
    let mut pin = base_pin(r, component, db);
    match &r.allowed {
        Allowed::Git { repo, reference } => {
            let canonical = url::canonical(repo);
            if let Some(def) = db.registry.identify("", canonical.as_deref()) {
                pin.component = def.name.clone();
                pin.component_repo = url::canonical(&def.repo);
            }
            pin.repo = Some(repo.clone());
            pin.repo_canonical = canonical;
            pin.reference = reference.clone();
            pin.commit = reference
                .as_deref()
                .filter(|r| is_full_sha(r))
                .map(|r| r.to_ascii_lowercase().into());
            if reference.is_none() {
                pin.possible = vec![any_value(
                    r,
                    format!(
                        "`{}` names no revision: the default branch, any commit",
                        r.written
                    ),
                )];
            }
        }
        Allowed::Url(u) => pin.url = Some(u.clone()),
        Allowed::Versions(allowed) => {
            // The versions it allows judge the rules on the distribution itself (PyPI ranges).
            pin.package = Some(crate::model::PackagePin {
                name: r.name.clone(),
                allowed: allowed.clone(),
                written: r.written.clone(),
            });
            pin.possible = vec![any_value(
                r,
                format!(
                    "`{}` ({}:{}): a {} release, whose source commit pinprobe does not know",
                    r.written, r.file, r.line, r.name
                ),
            )];
        }
    }
    pin
}

/// A value an input (here: which release the resolver picks) can make anything.
fn any_value(r: &Requirement, why: String) -> Possible {
    Possible {
        reference: None,
        set_by: vec![why],
        commit: None,
        repo: None,
        url: None,
        url_hash: None,
        default: true,
        conditions: conditions(r, format!("`{}`", r.written)),
        file: r.file.clone(),
        line: r.line,
        release: None,
    }
}

fn base_pin(r: &Requirement, component: &str, db: &Database) -> Pin {
    let mut pin = Pin::shipped(component, &r.file, None, None, FoundBy::Python);
    // The distribution, not the requirement text: `diff` pairs a bump of `vllm==A` to
    // `vllm==B` as one pin moving (the text is in the values and at file:line).
    pin.declared_name = r.name.clone();
    pin.line = r.line;
    pin.component_repo = db
        .registry
        .get(component)
        .and_then(|d| url::canonical(&d.repo));
    pin
}

/// The releases a `vllm` requirement allows that the ledger knows, and whether it allows
/// others (a version the ledger has no record of, a git revision that is no release's).
fn releases<'a>(r: &Requirement, db: &'a Database) -> (Vec<&'a Release>, Option<String>) {
    let ledger = db.ledger();
    let version = |rel: &Release| Version::from_str(&rel.version).ok();
    match &r.allowed {
        Allowed::Versions(set) => {
            let known: Vec<&Release> = ledger
                .releases
                .iter()
                .filter(|rel| version(rel).is_some_and(|v| set.contains(&v)))
                .collect();
            let covered = ledger
                .releases
                .iter()
                .filter_map(version)
                .fold(Ranges::empty(), |acc, v| acc.union(&Ranges::singleton(v)));
            let beyond = (!set.subset_of(&covered)).then(|| {
                format!(
                    "`{}` allows vLLM versions the release ledger does not know ({}:{})",
                    r.written, r.file, r.line
                )
            });
            (known, beyond)
        }
        Allowed::Git { repo, reference } => {
            let is_vllm = url::canonical(repo)
                .is_some_and(|c| db.registry.get("vllm").is_some_and(|d| d.owns_repo(&c)));
            let found = reference
                .as_deref()
                .filter(|_| is_vllm)
                .and_then(|reference| {
                    ledger.releases.iter().find(|rel| {
                        // vLLM tags its releases `v<version>`; a commit must be the release's own.
                        reference
                            .strip_prefix('v')
                            .is_some_and(|v| Version::from_str(v).ok() == version(rel))
                            || (reference.len() >= 12
                                && rel.vllm_commit_full
                                && rel.is_vllm_commit(reference) == Some(true))
                    })
                });
            match found {
                Some(rel) => (vec![rel], None),
                None => (
                    Vec::new(),
                    Some(format!(
                        "`{}` ({}:{}) is a vLLM revision no release in the ledger was built from",
                        r.written, r.file, r.line
                    )),
                ),
            }
        }
        Allowed::Url(u) => (
            Vec::new(),
            Some(format!(
                "`{}` ({}:{}) installs vLLM from `{u}`, whose version is not known",
                r.written, r.file, r.line
            )),
        ),
    }
}

/// The kernel pins a `vllm` requirement brings in, through the release ledger.
fn vllm_pins(r: &Requirement, db: &Database) -> Vec<Pin> {
    let (known, beyond) = releases(r, db);
    // Components: those the allowed releases pin; with none known, every component any
    // release pins (one of them may be what the unknown version ships).
    let pool: Vec<&Release> = if known.is_empty() {
        db.ledger().releases.iter().collect()
    } else {
        known.clone()
    };
    let mut components: Vec<String> = Vec::new();
    for rel in &pool {
        for p in &rel.pins {
            if let Some(c) = &p.component
                && p.configurations.iter().any(|c| c == DEFAULT_CONFIGURATION)
                && !components.contains(c)
            {
                components.push(c.clone());
            }
        }
    }
    let mut out = Vec::new();
    for component in components {
        let mut values: Vec<Possible> = Vec::new();
        for rel in &known {
            let Some(p) = rel.pins_of(&component, DEFAULT_CONFIGURATION).next() else {
                continue;
            };
            values.push(Possible {
                reference: Some(p.reference.clone()),
                set_by: Vec::new(),
                commit: p.commit.as_ref().map(|c| c.to_ascii_lowercase().into()),
                repo: Some(p.repo.clone()).filter(|r| !r.is_empty()),
                url: None,
                url_hash: None,
                default: false,
                conditions: conditions(
                    r,
                    format!(
                        "vLLM {} (`{}`; its {}:{} in rules/ledger.yaml)",
                        rel.version, r.written, p.file, p.line
                    ),
                ),
                file: r.file.clone(),
                line: r.line,
                release: Some(rel.version.clone()),
            });
        }
        if let Some(why) = &beyond {
            values.push(Possible {
                default: values.is_empty(),
                ..any_value(r, why.clone())
            });
        }
        let mut pin = base_pin(r, &component, db);
        if let Some(first) = values.first() {
            pin.reference = first.reference.clone();
            pin.commit = first.commit.clone();
            pin.repo = first.repo.clone();
            pin.repo_canonical = first.repo.as_deref().and_then(url::canonical);
            pin.release = first.release.clone();
        }
        let exact = values.len() == 1 && values.iter().all(|v| v.set_by.is_empty());
        pin.possible = if exact { Vec::new() } else { values };
        out.push(pin);
    }
    out
}
