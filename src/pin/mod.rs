//! Pin finders: turn a view into the kernel projects it pins ([`Pin`]).
//!
//! From CMake ([`from_cmake`]): the evaluation ([`cmake::evaluate`]) gives every configuration
//! CMake could take and what each fetches; here the fetches of one name, over all
//! configurations, become one pin with every value it can take ([`Pin::possible`]), attributed
//! to a component of the registry. A configuration that uses a local directory instead of
//! downloading (vLLM's `VLLM_FLASH_ATTN_SRC_DIR`) fetches no commit: its inputs are the pin's
//! `overrides`. Declarations no configuration reaches are kept apart ([`Unreached`]).

pub mod archive;
pub mod cmake;
pub mod components;
pub mod fingerprint;
pub mod python;
pub mod setup_py;
pub mod shipped;
pub mod submodule;
pub mod subproject;
pub mod url;

use crate::model::{CommitId, FoundBy, Pin, Possible, is_full_sha};
use crate::view::View;
use components::Registry;

/// Whether the pin's declared repository is neither its component's canonical repository nor an
/// alias (a personal fork, say).
pub fn is_foreign_repo(pin: &Pin, registry: &Registry) -> bool {
    match (&pin.repo_canonical, registry.get(&pin.component)) {
        (Some(repo), Some(def)) => !def.owns_repo(repo),
        _ => false,
    }
}

/// What the tree's CMake pins.
#[derive(Debug, Clone, Default)]
pub struct CmakePins {
    /// One pin per fetched name, in order of first fetch.
    pub pins: Vec<Pin>,
    /// Declaring calls no configuration reaches.
    pub unreached: Vec<Unreached>,
    /// Why the evaluation is incomplete (over a budget, a construct not followed): the pins
    /// are not all CMake could fetch.
    pub undecided: Option<String>,
    /// Files CMake reads in some configuration that pinprobe cannot (outside the tree, a path
    /// from an input), with the configuration.
    pub unread: Vec<String>,
}

/// A declaring call that no configuration reaches, with what its own file says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached {
    /// The component, when its name or repository identifies one.
    pub component: Option<String>,
    /// The declared name (empty when the file could not be parsed).
    pub declared_name: String,
    pub repo: Option<String>,
    /// `GIT_TAG` as far as the file alone resolves it.
    pub reference: Option<String>,
    pub file: String,
    pub line: u32,
}

/// The pins of the view's CMake code.
pub fn from_cmake(view: &dyn View, registry: &Registry) -> Result<CmakePins, cmake::CmakeError> {
    let evaluation = cmake::evaluate(view)?;
    from_evaluation(&evaluation, view, registry)
}

/// One value of a pin, while grouping.
struct Variant {
    /// The value, with its `URL` and `URL_HASH` when it is an archive.
    possible: Possible,
    /// The `URL` is a forge archive: the reference and repository come from it.
    archive: bool,
    patches: Vec<String>,
}

/// Turn an evaluation into pins.
pub fn from_evaluation(
    evaluation: &cmake::Evaluation,
    view: &dyn View,
    registry: &Registry,
) -> Result<CmakePins, cmake::CmakeError> {
    // (lower-cased name, declared name, variants, overrides), in order of first fetch.
    let mut groups: Vec<(String, String, Vec<Variant>, Vec<String>)> = Vec::new();
    let mut unread = Vec::new();
    for config in &evaluation.configurations {
        let selected = selection(config);
        for file in &config.unread {
            let entry = if selected.is_empty() {
                file.clone()
            } else {
                format!("{file} (when {})", selected.join("; "))
            };
            if !unread.contains(&entry) {
                unread.push(entry);
            }
        }
        for fetch in &config.fetches {
            let lc = fetch.name.to_ascii_lowercase();
            let at = match groups.iter().position(|g| g.0 == lc) {
                Some(at) => at,
                None => {
                    groups.push((lc, fetch.name.clone(), Vec::new(), Vec::new()));
                    groups.len() - 1
                }
            };
            let Some(group) = groups.get_mut(at) else {
                continue;
            };
            let overrides = &mut group.3;
            let mut add_override = |name: String| {
                if !overrides.contains(&name) {
                    overrides.push(name);
                }
            };
            fetch
                .bypass
                .iter()
                .filter_map(override_name)
                .for_each(&mut add_override);
            if let Some(local) = &fetch.local_source {
                // A local directory replaces the download here: no commit is fetched.
                local
                    .inputs
                    .iter()
                    .filter_map(override_name)
                    .for_each(add_override);
                continue;
            }
            if fetch.repository.is_none() && fetch.tag.is_none() && fetch.url.is_none() {
                // No download at all (a `SOURCE_DIR` that evaluated to nothing): CMake fetches
                // nothing here either.
                continue;
            }
            let mut conditions = selected.clone();
            conditions.extend(fetch.only_if.iter().map(|c| format!("when {c}")));
            let default = config.default && fetch.only_if.is_empty();
            let (file, line) = (fetch.file.clone(), fetch.tag_line.unwrap_or(fetch.line));
            let mut repo_text = fetch.repository.as_ref().map(|v| v.text.clone());
            let patches = fetch.patches(view)?;
            // An archive URL of a forge names the repository and the revision (when no
            // GIT_REPOSITORY / GIT_TAG do): the pin is that revision, in any form.
            let url_hash = url_hash(&fetch.args);
            // A URL an input can change (a mirror host from `-D` or the environment) names its
            // default text's revision, and any other value besides.
            let (archive, url_inputs) = match (&fetch.url, &fetch.repository, &fetch.tag) {
                (Some(url), None, None) => (
                    archive::parse(&url.text),
                    url.inputs.iter().map(ToString::to_string).collect(),
                ),
                _ => (None, Vec::<String>::new()),
            };
            if let Some(a) = &archive {
                repo_text = Some(a.repo.clone());
            }
            let variant = |reference: Option<String>,
                           repo: Option<String>,
                           set_by: Vec<String>,
                           conditions: Vec<String>,
                           default| Variant {
                possible: Possible {
                    commit: reference
                        .as_deref()
                        .filter(|r| is_full_sha(r))
                        .map(|r| CommitId::new(r.to_ascii_lowercase())),
                    reference,
                    set_by,
                    repo,
                    url: fetch.url.as_ref().map(|v| v.text.clone()),
                    url_hash: url_hash.clone(),
                    default,
                    conditions,
                    file: file.clone(),
                    line,
                    release: None,
                },
                archive: archive.is_some(),
                patches: patches.clone(),
            };
            let mut found = Vec::new();
            // Joined conditions can leave the tag and the repository each one of a few known
            // values: every combination that can occur together is a value of the pin.
            let finite_tag = fetch.tag.as_ref().and_then(cmake::Value::finite);
            let finite_repo = match &fetch.repository {
                Some(r) => r.finite().map(|alts| alts.into_iter().map(Some).collect()),
                None => Some(vec![None]),
            };
            match (&fetch.tag, finite_tag, finite_repo) {
                (Some(tag), Some(tags), Some(repos))
                    if !tag.is_exact()
                        || fetch.repository.as_ref().is_some_and(|r| !r.is_exact()) =>
                {
                    for t in &tags {
                        for r in repos
                            .iter()
                            .filter(|r| r.as_ref().is_none_or(|r| r.compatible(t)))
                        {
                            let mut when = conditions.clone();
                            let selected = t.when.iter().chain(r.iter().flat_map(|r| &r.when));
                            for w in selected {
                                let c = format!(
                                    "when {} is {}",
                                    w.condition,
                                    if w.outcome { "true" } else { "false" }
                                );
                                if !when.contains(&c) {
                                    when.push(c);
                                }
                            }
                            let is_default = default
                                && t.is_default()
                                && r.as_ref().is_none_or(cmake::Alternative::is_default);
                            found.push(variant(
                                Some(t.text.clone()).filter(|x| !x.is_empty()),
                                r.as_ref().map(|r| r.text.clone()),
                                Vec::new(),
                                when,
                                is_default,
                            ));
                        }
                    }
                }
                (Some(tag), _, _) => {
                    let text = Some(tag.text.clone()).filter(|t| !t.is_empty());
                    // An input (a `-D`, the environment, the compiler, the other side of a
                    // joined condition that gave no known value) can make it any value, the
                    // affected commit included.
                    let set_by: Vec<String> = tag.inputs.iter().map(ToString::to_string).collect();
                    if text.is_some() || set_by.is_empty() {
                        found.push(variant(
                            text,
                            repo_text.clone(),
                            Vec::new(),
                            conditions.clone(),
                            default,
                        ));
                    }
                    if !set_by.is_empty() {
                        found.push(variant(
                            None,
                            repo_text.clone(),
                            set_by,
                            conditions.clone(),
                            default && tag.text.is_empty(),
                        ));
                    }
                }
                (None, _, _) => {
                    found.push(variant(
                        archive.as_ref().map(|a| a.reference.clone()),
                        repo_text.clone(),
                        Vec::new(),
                        conditions.clone(),
                        default,
                    ));
                    // A URL an input can change (a mirror host from `-D`, the other side of a
                    // joined condition whose text is not kept) may be any URL, archive or not.
                    if !url_inputs.is_empty() {
                        found.push(variant(
                            None,
                            None,
                            url_inputs.clone(),
                            conditions.clone(),
                            false,
                        ));
                    }
                }
            }
            for v in found {
                push_variant(&mut group.2, v);
            }
        }
    }
    let pins: Vec<Pin> = groups
        .into_iter()
        .filter_map(|(_, name, variants, mut overrides)| {
            overrides.sort();
            overrides.dedup();
            pin_of(&name, variants, overrides, registry)
        })
        .collect();
    let unreached = evaluation
        .unreached
        .iter()
        .map(|d| {
            let value = |a: &Option<cmake::Arg>| a.as_ref().and_then(|a| a.value.clone());
            let repo = value(&d.git_repository);
            let canonical = repo.as_deref().and_then(url::canonical);
            Unreached {
                component: registry
                    .identify(&d.name, canonical.as_deref())
                    .map(|c| c.name.clone()),
                declared_name: d.name.clone(),
                repo,
                reference: value(&d.git_tag),
                file: d.file.clone(),
                line: d.git_tag.as_ref().map_or(d.line, |a| a.line),
            }
        })
        .collect();
    // An incomplete evaluation keeps what it found: the reason names those pins.
    let undecided = evaluation
        .undecided
        .as_ref()
        .map(|why| format!("{why}; {}", found_so_far(&pins)));
    Ok(CmakePins {
        pins,
        unreached,
        undecided,
        unread,
    })
}

/// The value after `URL_HASH` (or `URL_MD5`, as `MD5=...`) in a declaring call's arguments.
fn url_hash(args: &[(String, u32)]) -> Option<String> {
    let at = args
        .iter()
        .position(|(a, _)| a == "URL_HASH" || a == "URL_MD5")?;
    let (key, _) = args.get(at)?;
    let (value, _) = args.get(at + 1)?;
    if value.is_empty() {
        return None;
    }
    Some(if key == "URL_MD5" {
        format!("MD5={value}")
    } else {
        value.clone()
    })
}

/// The pins an incomplete evaluation found, each with every value it found and where.
fn found_so_far(pins: &[Pin]) -> String {
    if pins.is_empty() {
        return "no pin found before it stopped".to_string();
    }
    let listed: Vec<String> = pins
        .iter()
        .map(|p| {
            let values: Vec<String> = if p.possible.is_empty() {
                vec![value_text(p.reference.as_deref(), &[])]
            } else {
                p.possible
                    .iter()
                    .map(|v| value_text(v.reference.as_deref(), &v.set_by))
                    .collect()
            };
            format!(
                "{} {} ({}:{})",
                p.component,
                values.join(" or "),
                p.file,
                p.line
            )
        })
        .collect();
    format!("pins found: {}", listed.join(", "))
}

/// One value of a pin as the undecided reason lists it.
fn value_text(reference: Option<&str>, set_by: &[String]) -> String {
    match reference {
        Some(r) => r.to_string(),
        None if set_by.is_empty() => "(no GIT_TAG)".to_string(),
        None => format!("(any value of {})", set_by.join(", ")),
    }
}

/// What selects a configuration: its decisions on inputs, and its preset.
fn selection(config: &cmake::Configuration) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(preset) = &config.preset {
        out.push(format!("preset `{preset}`"));
    }
    if !config.default {
        out.extend(config.assumptions.iter().map(|a| {
            format!(
                "{} is {}",
                a.condition,
                if a.outcome { "true" } else { "false" }
            )
        }));
    }
    out
}

/// The variable a user sets to bypass the pin (a cache or environment variable).
fn override_name(input: &cmake::Input) -> Option<String> {
    match input {
        cmake::Input::Cache(n) | cmake::Input::Env(n) => Some(n.clone()),
        _ => None,
    }
}

/// Add a variant, merging it into an equal value seen in another configuration (the default
/// one's conditions win: the default configuration needs none).
fn push_variant(variants: &mut Vec<Variant>, v: Variant) {
    let same = variants.iter_mut().find(|w| {
        w.possible.reference == v.possible.reference
            && w.possible.set_by == v.possible.set_by
            && w.possible.repo == v.possible.repo
            && w.possible.url == v.possible.url
            && w.possible.file == v.possible.file
            && w.possible.line == v.possible.line
    });
    match same {
        Some(w) if v.possible.default && !w.possible.default => *w = v,
        Some(_) => {}
        None => variants.push(v),
    }
}

/// One pin from the variants of a name: the default configuration's value first.
fn pin_of(
    name: &str,
    mut variants: Vec<Variant>,
    overrides: Vec<String>,
    registry: &Registry,
) -> Option<Pin> {
    if let Some(at) = variants.iter().position(|v| v.possible.default) {
        let default = variants.remove(at);
        variants.insert(0, default);
    }
    let main = variants.first()?;
    let repo = main.possible.repo.clone();
    let repo_canonical = repo.as_deref().and_then(url::canonical);
    let def = registry
        .identify(name, repo_canonical.as_deref())
        .or_else(|| registry.resembles(name, repo_canonical.as_deref()));
    let component = def
        .map(|c| c.name.clone())
        .or_else(|| {
            repo_canonical
                .as_deref()
                .map(|r| url::short_name(r).to_string())
        })
        .unwrap_or_else(|| name.to_string());
    let exact = variants.len() == 1
        && main.possible.conditions.is_empty()
        && main.possible.set_by.is_empty();
    Some(Pin {
        component,
        declared_name: name.to_string(),
        repo,
        repo_canonical,
        component_repo: def.and_then(|c| url::canonical(&c.repo)),
        commit: main.possible.commit.clone(),
        reference: main.possible.reference.clone(),
        reference_raw: None,
        url: main.possible.url.clone(),
        url_hash: main.possible.url_hash.clone(),
        found_by: if main.archive {
            FoundBy::Archive
        } else {
            FoundBy::Cmake
        },
        file: main.possible.file.clone(),
        line: main.possible.line,
        patches: main.patches.clone(),
        overrides,
        fingerprint: None,
        possible: if exact {
            Vec::new()
        } else {
            variants.into_iter().map(|v| v.possible).collect()
        },
        release: None,
        package: None,
    })
}

/// The pin with another of its possible values in place of the main one (for judging it).
pub fn with_value(pin: &Pin, value: &Possible) -> Pin {
    let mut out = pin.clone();
    out.reference = value.reference.clone();
    out.commit = value.commit.clone();
    out.repo = value.repo.clone();
    out.repo_canonical = value.repo.as_deref().and_then(url::canonical);
    out.file = value.file.clone();
    out.line = value.line;
    out.possible = vec![value.clone()];
    out.release = value.release.clone();
    out
}
