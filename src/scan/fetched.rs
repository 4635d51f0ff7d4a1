//! Fetching what a target's findings need and no `--repo` clone has: the repository of each
//! pin (a source tree's declared pins, an artifact's ledger or fingerprint commit), holding the
//! pinned commit and the commits of the rules that apply to it (see
//! [`crate::resolve::fetch`]). What a fetch could not do becomes evidence on the findings it
//! would have decided; offline, a notice says what a fetch would decide.

use crate::model::{Pin, Status, TargetReport};
use crate::resolve::fetch;
use crate::resolve::{Clones, Repo};
use crate::rules::Database;
use crate::rules::evaluate;
use gix::ObjectId;
use std::collections::BTreeMap;

/// What fetching did for one target's pins.
#[derive(Default)]
pub(crate) struct Fetches {
    /// Cache repositories by component, used like clones given with `--repo`.
    pub repos: BTreeMap<String, Repo>,
    /// Components whose history a fetch would add (offline), with the URL.
    would_fetch: Vec<(String, String)>,
    /// Components whose fetch failed, with the cause.
    failed: Vec<(String, String)>,
}

impl Fetches {
    /// Fetch (or, offline, look up in the cache) `url`'s repository for `component`: the
    /// `pinned` commits and the commits of the rules that apply to the component. The cache
    /// repository, when usable, is returned; what went wrong is kept for [`Fetches::annotate`].
    pub fn one(
        &mut self,
        settings: &fetch::Settings,
        db: &Database,
        component: &str,
        url: &str,
        pinned: &[ObjectId],
    ) -> Option<Repo> {
        let Some(canonical) = crate::pin::url::canonical(url) else {
            self.failed.push((
                component.to_string(),
                format!("{url}: not a repository URL pinprobe can fetch"),
            ));
            return None;
        };
        let also = rule_commits(db, component, pinned);
        crate::model::verbose::say(format_args!(
            "{component}: the pinned history ({} commit{}) from {url}, cache first{}",
            pinned.len() + also.len(),
            if pinned.len() + also.len() == 1 {
                ""
            } else {
                "s"
            },
            if settings.offline {
                " (offline: the cache only)"
            } else {
                ""
            }
        ));
        match fetch::ensure(settings, url, &canonical, pinned, &also) {
            Ok(fetch::Fetched::Ready(repo)) => Some(repo),
            Ok(fetch::Fetched::WouldFetch { url, cached }) => {
                self.would_fetch.push((component.to_string(), url));
                cached
            }
            Err(e) => {
                self.failed.push((component.to_string(), e.to_string()));
                None
            }
        }
    }

    /// Name the cause in every undecided finding of a component whose fetch failed, and list
    /// (stderr) the undecided findings a fetch would decide when offline.
    pub fn annotate(&self, report: &mut TargetReport) {
        let mut failed: Vec<&(String, String)> = Vec::new();
        for entry in &self.failed {
            if !failed.contains(&entry) {
                failed.push(entry);
            }
        }
        report.provisional |= !failed.is_empty();
        for (component, cause) in failed {
            report.warnings.push(format!("{component}: {cause}"));
            for finding in report.findings.iter_mut() {
                if finding.component == *component && finding.status == Status::Unknown {
                    finding
                        .evidence
                        .push(crate::judge::history_not_fetched(cause));
                }
            }
        }
        let mut seen: Vec<&(String, String)> = Vec::new();
        for entry in &self.would_fetch {
            if seen.contains(&entry) {
                continue;
            }
            seen.push(entry);
            let (component, url) = entry;
            let mut undecided: Vec<&str> = report
                .findings
                .iter()
                .filter(|f| f.component == *component && f.status == Status::Unknown)
                .map(|f| f.rule.as_str())
                .collect();
            undecided.dedup();
            if !undecided.is_empty() {
                report.notices.push(format!(
                    "offline: fetching {url} would decide {} for {component}",
                    undecided.join(", ")
                ));
            }
        }
    }
}

/// The commits of the rules that apply to `component` (introduced, fixed, limit, ...), other
/// than `pinned`.
fn rule_commits(db: &Database, component: &str, pinned: &[ObjectId]) -> Vec<ObjectId> {
    let mut out: Vec<ObjectId> = Vec::new();
    for loaded in &db.rules {
        for (_, range) in loaded.rule.git_ranges() {
            if !evaluate::range_applies(range, component, &db.registry) {
                continue;
            }
            for event in &range.events {
                if let Ok(id) = ObjectId::from_hex(event.value().as_bytes())
                    && !pinned.contains(&id)
                    && !out.contains(&id)
                {
                    out.push(id);
                }
            }
        }
    }
    out
}

/// Fetch the repository of every source-tree pin no `--repo` clone covers.
pub(crate) fn for_pins(
    pins: &[Pin],
    db: &Database,
    clones: &Clones,
    settings: &fetch::Settings,
) -> Fetches {
    let mut out = Fetches::default();
    for pin in pins {
        if clones.get(&pin.component).is_some() || out.repos.contains_key(&pin.component) {
            continue;
        }
        let Some(url) = pin.repo.as_deref() else {
            continue;
        };
        if pin.reference.is_none() || pin.repo_canonical.is_none() {
            continue;
        }
        let pinned: Vec<ObjectId> = pin
            .commit
            .as_deref()
            .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
            .into_iter()
            .collect();
        if let Some(repo) = out.one(settings, db, &pin.component, url, &pinned) {
            out.repos.insert(pin.component.clone(), repo);
        }
    }
    out
}
