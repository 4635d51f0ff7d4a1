//! A source tree's pins judged: every rule that applies to a pin's component on the commit it
//! resolves to ([`Judge::pin`]), known affected pins listed under another name and GIT_TAGs an
//! input can set ([`super::elsewhere`]), every value a pin can take ([`Judge::pin_values`], over
//! [`super::values`]), and declarations no configuration reaches ([`Judge::unreached`]).

use super::{elsewhere, hygiene, ledger, values};
use crate::model::{Evidence, EvidenceKind, Finding, Location, Pin, Status};
use crate::pin;
use crate::resolve::{PatchedTree, Repo, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::{self, OtherPin, Subject};
use crate::view::{TargetError, View};

/// Why a pin could not be judged: its tree or its clone could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

/// What judging a pin gives.
#[derive(Debug)]
pub struct Judged {
    /// The pinned commit, once resolved.
    pub commit: Option<gix::ObjectId>,
    /// One finding per rule that applies (or lists the commit elsewhere).
    pub findings: Vec<Finding>,
    /// Pin-hygiene findings.
    pub hygiene: Vec<Finding>,
    pub warnings: Vec<String>,
}

/// Everything a source tree's pins are judged against.
pub struct Judge<'a> {
    /// The tree (for the patch files pins declare).
    pub view: &'a dyn View,
    pub db: &'a Database,
    /// The tree's vLLM release, for the ledger.
    pub release: Option<&'a ledger::ReleaseId>,
    /// Other components' pins, for `requires`.
    pub others: &'a [OtherPin<'a>],
}

impl Judge<'_> {
    /// Every rule that applies to the pin's component (or lists its commit as a known affected
    /// pin), on one value of the pin, with the clone given for the component.
    pub fn pin(&self, pin: &Pin, given: Option<&Repo>) -> Result<Judged, JudgeError> {
        let db = self.db;
        let mut warnings = Vec::new();
        let (commit, commit_unknown, lacks) = resolve_pin(pin, given)?;
        // A clone that lacks the pinned commit answers nothing about it; the full SHA still
        // names the commit, so known pins and the ledger still decide.
        let clone = given.filter(|_| lacks.is_none());
        let commit_text = commit.map(|c| c.to_string());
        let mut resolution =
            ledger::resolve(db, self.release, &pin.component, commit_text.as_deref());
        // The recorded verdicts describe the release's build: its pin and its patches.
        let mut tree_patches = Vec::new();
        for path in &pin.patches {
            let bytes = match self.view.read(path) {
                Err(TargetError::Unreadable { .. }) => None,
                other => other?,
            };
            tree_patches.push((path.clone(), bytes));
        }
        if let Some(why) = ledger::recorded_for_tree(&mut resolution, &pin.component, &tree_patches)
        {
            warnings.push(format!(
                "release ledger verdicts not used for {}: {why}",
                pin.component
            ));
        }
        if let (Some(_), Some(why)) = (&self.release, &resolution.why_not)
            && pin.component == "flash-attention"
        {
            warnings.push(format!(
                "release ledger not used for {}: {why}",
                pin.component
            ));
        }
        let hygiene = hygiene::check(pin, &db.registry, clone.zip(commit));
        let patches = read_patches(self.view, pin)?;
        let tree = match (clone, commit) {
            (Some(clone), Some(commit)) => Some(PatchedTree::new(clone, commit, &patches)),
            _ => None,
        };
        let sources_label = match (&tree, pin.patches.is_empty()) {
            (None, _) => String::new(),
            (Some(_), true) => format!("{} at {}", pin.component, short(commit)),
            (Some(_), false) => format!(
                "{} at {} with {} applied",
                pin.component,
                short(commit),
                pin.patches.join(", ")
            ),
        };
        let subject = Subject {
            component: &pin.component,
            commit,
            commit_unknown,
            clone,
            sources: tree.as_ref().map(|t| t as &dyn crate::view::SourceFiles),
            sources_label,
            binaries: None,
            packages: resolution.packages,
            no_clone: lacks.or_else(|| {
                commit.map(|c| {
                    format!(
                        "no clone given: ancestry and the pinned source need a clone of {} holding {} (--repo {}=PATH)",
                        pin.component,
                        short(Some(c)),
                        pin.component
                    )
                })
            }),
            recorded: resolution.recorded,
            location: Some(Location {
                file: pin.file.clone(),
                line: pin.line,
            }),
        };
        let mut findings = Vec::new();
        for loaded in &db.rules {
            if evaluate::applies(&loaded.rule, &pin.component, &db.registry) {
                findings.push(evaluate::evaluate_with(
                    &loaded.rule,
                    &subject,
                    &db.registry,
                    self.others,
                ));
            } else if let Some(c) = commit
                && let Some(finding) = elsewhere::known_pin(&loaded.rule, pin, &c.to_string())
            {
                findings.push(finding);
            } else if let Some(any) = pin.possible.first().filter(|p| !p.set_by.is_empty())
                && loaded
                    .rule
                    .affected
                    .iter()
                    .any(|a| !a.specific().known_affected_pins.is_empty())
            {
                // A commit id is global: a GIT_TAG an input can set may be a known affected pin
                // of this rule, whatever the component is called.
                findings.push(elsewhere::any_value(&loaded.rule, pin, any));
            }
        }
        Ok(Judged {
            commit,
            findings,
            hygiene,
            warnings,
        })
    }

    /// [`Judge::pin`] on every value `pin` can take: the pin's commit is set to its default
    /// value's, and for a pin that can take several values each value is judged with the clone
    /// `clone_of` gives for the component, and each rule decided over the set
    /// ([`values::over_values`]).
    pub fn pin_values<'r>(
        &self,
        pin: &mut Pin,
        clone_of: &dyn Fn(&str) -> Option<&'r Repo>,
    ) -> Result<Judged, JudgeError> {
        let mut judged = self.pin(pin, clone_of(&pin.component))?;
        pin.commit = judged.commit.map(|c| c.to_string());
        if pin.possible.len() <= 1 {
            return Ok(judged);
        }
        let mut alternatives = Vec::new();
        for possible in pin.possible.iter().skip(1) {
            let variant = pin::with_value(pin, possible);
            let given = clone_of(&pin.component);
            alternatives.push((possible.clone(), self.pin(&variant, given)?.findings));
        }
        let main = pin.possible.first();
        let findings = std::mem::take(&mut judged.findings);
        judged.findings = values::over_values(main, findings, &alternatives);
        Ok(judged)
    }

    /// A declaration no configuration reaches: `unknown` for every rule of its component (and
    /// for every rule that lists its commit as a known affected pin), naming file and line.
    pub fn unreached(&self, u: &pin::Unreached) -> Vec<Finding> {
        let db = self.db;
        let what = match (&u.declared_name, &u.reference) {
            (n, _) if n.is_empty() => "a declaration".to_string(),
            (n, Some(r)) => format!("`{n}` at `{r}`"),
            (n, None) => format!("`{n}`"),
        };
        let detail = format!(
            "{}:{}: {what} is declared where no CMake configuration pinprobe evaluated reaches it (a branch never taken, a file never included, a function never called); if the evaluation missed a way in, the build fetches it",
            u.file, u.line
        );
        let commit = u
            .reference
            .as_deref()
            .filter(|r| crate::model::is_full_sha(r))
            .map(str::to_ascii_lowercase);
        let lists_commit = |rule: &crate::rules::model::Rule| {
            commit.as_deref().is_some_and(|c| {
                rule.affected.iter().any(|a| {
                    a.specific()
                        .known_affected_pins
                        .iter()
                        .any(|k| k.commit.eq_ignore_ascii_case(c))
                })
            })
        };
        db.rules
            .iter()
            .filter(|l| {
                u.component
                    .as_deref()
                    .is_some_and(|c| evaluate::applies(&l.rule, c, &db.registry))
                    || lists_commit(&l.rule)
                    // A declaration whose name was not read could be anything.
                    || u.declared_name.is_empty()
            })
            .map(|l| {
                let component = u
                    .component
                    .clone()
                    .unwrap_or_else(|| u.declared_name.clone());
                let evidence = Evidence {
                    kind: EvidenceKind::Configuration,
                    status: Status::Unknown,
                    detail: detail.clone(),
                    file: Some(u.file.clone()),
                    line: Some(u.line),
                };
                let location = Location {
                    file: u.file.clone(),
                    line: u.line,
                };
                super::decided(&l.rule, component, vec![evidence], Some(location))
            })
            .collect()
    }
}

fn short(commit: Option<gix::ObjectId>) -> String {
    commit
        .map(|c| c.to_string()[..12].to_string())
        .unwrap_or_default()
}

/// The pinned commit, or why it is not known; and, third, why the clone given cannot answer for
/// it (it lacks the commit that a full-SHA GIT_TAG names).
type PinCommit = (Option<gix::ObjectId>, Option<String>, Option<String>);

fn resolve_pin(pin: &Pin, clone: Option<&Repo>) -> Result<PinCommit, JudgeError> {
    let Some(reference) = pin.reference.as_deref() else {
        let why = match &pin.reference_raw {
            Some(raw) => format!("GIT_TAG `{raw}` could not be evaluated (unset variable)"),
            None if pin.url.is_some() => "fetched by URL, not from git: no commit to check".into(),
            None => "no GIT_TAG: the source comes from an override or the default branch".into(),
        };
        return Ok((None, Some(why), None));
    };
    let full = pin
        .commit
        .as_deref()
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    match clone {
        Some(clone) => match clone.resolve(reference)? {
            Resolved::Commit(c) => Ok((Some(c), None, None)),
            // A full SHA is a commit id whether or not this clone has it.
            Resolved::Missing if full.is_some() => Ok((
                full,
                None,
                Some(format!(
                    "`{reference}` is not in the clone {} (shallow, stale or another repository): tried it for ancestry and the pinned source; a clone holding the commit would decide",
                    clone.path().display()
                )),
            )),
            Resolved::Missing => Ok((
                None,
                Some(format!(
                    "`{reference}` is not in the clone {} (shallow, stale or another repository); a clone where it resolves would decide",
                    clone.path().display()
                )),
                None,
            )),
        },
        None => match full {
            Some(c) => Ok((Some(c), None, None)),
            None => Ok((
                None,
                Some(format!(
                    "`{reference}` is not a full commit SHA: pass --repo {}=PATH to resolve it",
                    pin.component
                )),
                None,
            )),
        },
    }
}

/// The text of each patch file the pin declares, read from the target.
fn read_patches(view: &dyn View, pin: &Pin) -> Result<Vec<(String, String)>, JudgeError> {
    let mut out = Vec::new();
    for path in &pin.patches {
        if let Some(bytes) = view.read(path)? {
            out.push((path.clone(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    Ok(out)
}
