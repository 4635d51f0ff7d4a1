//! A source tree's pins judged: every rule that applies to a pin's component on the commit it
//! resolves to ([`Judge::pin`]), known affected pins listed under another name and GIT_TAGs an
//! input can set ([`super::elsewhere`]), every value a pin can take ([`Judge::pin_values`], over
//! [`super::values`]), and declarations no configuration reaches ([`Judge::unreached`]).

use super::{elsewhere, hygiene, ledger, values};
use crate::model::{CommitId, Evidence, EvidenceKind, Finding, Location, Pin, Status};
use crate::pin;
use crate::resolve::{PatchSet, PatchedTree, Repo, ResolveError, Resolved};
use crate::rules::Database;
use crate::rules::evaluate::{self, OtherPin, PatchScope, Subject};
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
        // A pin that is a vLLM release's own (a requirement on `vllm`, through the ledger) is
        // judged as that release; any other as the tree's release.
        let own_release = pin.release.as_ref().map(|version| ledger::ReleaseId {
            version: version.clone(),
            commit: None,
            file: format!("{}:{}", pin.file, pin.line),
        });
        let release = own_release.as_ref().or(self.release);
        let mut resolution = ledger::resolve(db, release, &pin.component, commit_text.as_deref());
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
        if let (Some(_), Some(why)) = (release, &resolution.why_not)
            && pin.component == "flash-attention"
        {
            warnings.push(format!(
                "release ledger not used for {}: {why}",
                pin.component
            ));
        }
        let hygiene = hygiene::check(pin, &db.registry, clone.zip(commit));
        let patches = PatchSet::new(&read_patches(self.view, pin)?);
        let tree = match (clone, commit) {
            (Some(clone), Some(commit)) => Some(PatchedTree::new(clone, commit, &patches)),
            _ => None,
        };
        // What the patches change: applied to the pinned commit where a clone holds it, else
        // as the patch files say.
        let scope = (!patches.is_empty()).then(|| PatchScope {
            names: patches.names.clone(),
            touched: match &tree {
                Some(t) => match t.failure() {
                    Some(why) => Err(why.to_string()),
                    None => Ok(t.touched().to_vec()),
                },
                None => patches.touched(),
            },
        });
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
            package_pins: pin.package.iter().cloned().collect(),
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
            patches: scope,
            location: Some(Location {
                file: pin.file.clone(),
                line: pin.line,
            }),
        };
        let mut findings = Vec::new();
        for loaded in &db.rules {
            if evaluate::applies(&loaded.rule, &pin.component, &db.registry)
                || (pin.package.is_some()
                    && evaluate::applies_to_package(&loaded.rule, &pin.component))
            {
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
                // A Python requirement's unknown version is unknown for its own component
                // only: the ledger says which component each pin is.
                && pin.found_by != crate::model::FoundBy::Python
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
        pin.commit = judged.commit.map(|c| CommitId::new(c.to_string()));
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
        let why = match (&pin.reference_raw, &pin.url) {
            (Some(raw), _) => format!("GIT_TAG `{raw}` could not be evaluated (unset variable)"),
            (None, Some(url)) => format!(
                "fetched by URL `{url}`, which names no repository revision pinprobe can read (not a forge archive of a commit or tag): no commit to check"
            ),
            (None, None) => match pin.possible.first().filter(|p| !p.set_by.is_empty()) {
                Some(p) => format!("the pin can be any commit: {}", p.set_by.join("; ")),
                None => {
                    "no GIT_TAG: the source comes from an override or the default branch".into()
                }
            },
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

/// The text of each patch file the pin declares, read from the target (`None` where the
/// target does not hold it).
type PatchTexts = Vec<(String, Option<String>)>;

fn read_patches(view: &dyn View, pin: &Pin) -> Result<PatchTexts, JudgeError> {
    let mut out = Vec::new();
    for path in &pin.patches {
        let text = view
            .read(path)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        out.push((path.clone(), text));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Possible;

    const KNOWN: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
    const FA4: &str = "PINPROBE-2026-0001";

    fn db() -> Database {
        crate::rules::load(None).expect("built-in rules").0
    }

    use crate::resolve::test_git::git;

    fn pin(component: &str, reference: Option<&str>) -> Pin {
        let mut pin = Pin::shipped(
            component,
            "cmake/fa.cmake",
            reference.map(String::from),
            reference
                .filter(|r| crate::model::is_full_sha(r))
                .map(CommitId::from),
            crate::model::FoundBy::Cmake,
        );
        pin.declared_name = format!("{component}-declared");
        pin.line = 4;
        pin
    }

    fn value(reference: Option<&str>, set_by: &[&str], default: bool, line: u32) -> Possible {
        Possible {
            reference: reference.map(String::from),
            set_by: set_by.iter().map(|s| s.to_string()).collect(),
            commit: reference
                .filter(|r| crate::model::is_full_sha(r))
                .map(CommitId::from),
            repo: None,
            url: None,
            url_hash: None,
            default,
            conditions: Vec::new(),
            file: "cmake/fa.cmake".into(),
            line,
            release: None,
        }
    }

    fn finding<'f>(found: &'f [Finding], rule: &str) -> &'f Finding {
        found
            .iter()
            .find(|f| f.rule == rule)
            .unwrap_or_else(|| panic!("no {rule}: {found:#?}"))
    }

    #[test]
    fn why_a_pin_has_no_commit() {
        let mut p = pin("flash-attention", None);
        p.reference_raw = Some("${FA_TAG}".into());
        assert_eq!(
            resolve_pin(&p, None).expect("resolves"),
            (
                None,
                Some("GIT_TAG `${FA_TAG}` could not be evaluated (unset variable)".into()),
                None
            )
        );
        let mut p = pin("flash-attention", None);
        p.url = Some("https://example.invalid/fa.tar.gz".into());
        assert_eq!(
            resolve_pin(&p, None).expect("resolves").1.as_deref(),
            Some(
                "fetched by URL `https://example.invalid/fa.tar.gz`, which names no repository revision pinprobe can read (not a forge archive of a commit or tag): no commit to check"
            )
        );
        let p = pin("flash-attention", None);
        assert_eq!(
            resolve_pin(&p, None).expect("resolves").1.as_deref(),
            Some("no GIT_TAG: the source comes from an override or the default branch")
        );
        // A pin an input sets names the inputs; a value nothing sets says nothing of them.
        let mut p = pin("flash-attention", None);
        p.possible = vec![value(None, &["-DFA_TAG", "$ENV{FA_TAG}"], true, 4)];
        assert_eq!(
            resolve_pin(&p, None).expect("resolves").1.as_deref(),
            Some("the pin can be any commit: -DFA_TAG; $ENV{FA_TAG}")
        );
        p.possible = vec![value(None, &[], true, 4)];
        assert_eq!(
            resolve_pin(&p, None).expect("resolves").1.as_deref(),
            Some("no GIT_TAG: the source comes from an override or the default branch")
        );
        let p = pin("flash-attention", Some("v2.7.2"));
        assert_eq!(
            resolve_pin(&p, None).expect("resolves"),
            (
                None,
                Some(
                    "`v2.7.2` is not a full commit SHA: pass --repo flash-attention=PATH to resolve it"
                        .into()
                ),
                None
            )
        );
        let p = pin("flash-attention", Some(KNOWN));
        let (commit, why, lacks) = resolve_pin(&p, None).expect("resolves");
        assert_eq!(commit.map(|c| c.to_string()).as_deref(), Some(KNOWN));
        assert_eq!((why, lacks), (None, None));
    }

    #[test]
    fn a_clone_resolves_names_and_says_what_it_lacks() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("a"), "a").expect("write");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        git(dir, &["tag", "v1"]);
        let head = git(dir, &["rev-parse", "HEAD"]);
        let clone = Repo::open(dir).expect("opens");
        let p = pin("flash-attention", Some("v1"));
        let (commit, why, lacks) = resolve_pin(&p, Some(&clone)).expect("resolves");
        assert_eq!(commit.map(|c| c.to_string()), Some(head));
        assert_eq!((why, lacks), (None, None));
        // A full SHA the clone lacks still names the commit; the clone answers nothing.
        let p = pin("flash-attention", Some(KNOWN));
        let (commit, why, lacks) = resolve_pin(&p, Some(&clone)).expect("resolves");
        assert_eq!(commit.map(|c| c.to_string()).as_deref(), Some(KNOWN));
        assert_eq!(why, None);
        assert!(
            lacks.is_some_and(|l| l.starts_with(&format!("`{KNOWN}` is not in the clone"))),
            "lacks"
        );
        let p = pin("flash-attention", Some("v9"));
        let (commit, why, lacks) = resolve_pin(&p, Some(&clone)).expect("resolves");
        assert_eq!((commit, lacks), (None, None));
        assert!(why.is_some_and(|w| w.starts_with("`v9` is not in the clone")));
    }

    #[test]
    fn short_commits_for_labels() {
        assert_eq!(short(None), "");
        let c = gix::ObjectId::from_hex(KNOWN.as_bytes()).expect("hex");
        assert_eq!(short(Some(c)), "506341a143fc");
    }

    #[test]
    fn declared_patches_are_read_when_the_tree_holds_them() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("patches")).expect("mkdir");
        std::fs::write(tmp.path().join("patches/a.patch"), "diff a\n").expect("write");
        let view = crate::view::open(tmp.path(), None).expect("view");
        let mut p = pin("flash-attention", Some(KNOWN));
        p.patches = vec!["patches/a.patch".into(), "patches/missing.patch".into()];
        assert_eq!(
            read_patches(view.as_ref(), &p).expect("reads"),
            [
                ("patches/a.patch".to_string(), Some("diff a\n".to_string())),
                ("patches/missing.patch".to_string(), None)
            ]
        );
    }

    /// Judge `p` on every value in an empty tree with the built-in rules and no clone.
    fn judge(p: &mut Pin) -> Judged {
        let tmp = tempfile::tempdir().expect("tempdir");
        let view = crate::view::open(tmp.path(), None).expect("view");
        let db = db();
        let judge = Judge {
            view: view.as_ref(),
            db: &db,
            release: None,
            others: &[],
        };
        judge.pin_values(p, &|_| None).expect("judged")
    }

    #[test]
    fn a_known_affected_pin_is_affected_under_its_own_name_and_any_other() {
        let mut own = pin("flash-attention", Some(KNOWN));
        let judged = judge(&mut own);
        assert_eq!(own.commit.as_deref(), Some(KNOWN));
        assert_eq!(judged.commit.map(|c| c.to_string()).as_deref(), Some(KNOWN));
        let f = finding(&judged.findings, FA4);
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::KnownPin));
        let mut renamed = pin("my-attention", Some(KNOWN));
        renamed.repo = Some("https://example.invalid/fork.git".into());
        let judged = judge(&mut renamed);
        let f = finding(&judged.findings, FA4);
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::KnownPin));
        assert_eq!(f.component, "my-attention");
        assert!(
            f.evidence[0].detail.ends_with(
                "pinned here as `my-attention-declared` from https://example.invalid/fork.git: the names differ"
            ),
            "{}",
            f.evidence[0].detail
        );
        // Another commit under another name meets no rule of flash-attention's.
        let mut other = pin("my-attention", Some(&"c".repeat(40)));
        assert!(judge(&mut other).findings.iter().all(|f| f.rule != FA4));
    }

    #[test]
    fn a_tag_an_input_sets_may_be_any_known_pin() {
        let mut p = pin("my-attention", None);
        p.possible = vec![value(None, &["-DFA_TAG"], true, 6)];
        let judged = judge(&mut p);
        let f = finding(&judged.findings, FA4);
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert_eq!(f.evidence[0].kind, EvidenceKind::Configuration);
        assert!(f.evidence[0].detail.contains("any value (set by -DFA_TAG)"));
        assert_eq!(f.location.as_ref().map(|l| l.line), Some(6));
        // Without an input that sets it, the rule stays out.
        let mut p = pin("my-attention", None);
        p.possible = vec![value(None, &[], true, 6)];
        assert!(judge(&mut p).findings.iter().all(|f| f.rule != FA4));
        // Exactly the rules that list known affected pins (none applies to this component).
        let db = db();
        let listing: Vec<&str> = db
            .rules
            .iter()
            .filter(|l| {
                l.rule
                    .affected
                    .iter()
                    .any(|a| !a.specific().known_affected_pins.is_empty())
            })
            .map(|l| l.rule.id.as_str())
            .collect();
        assert!(listing.len() < db.rules.len(), "some rule lists no pin");
        let mut p = pin("my-attention", None);
        p.possible = vec![value(None, &["-DFA_TAG"], true, 6)];
        let judged = judge(&mut p);
        let found: Vec<&str> = judged.findings.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(found, listing);
        // A Python requirement's open version is its own component's business only.
        let mut p = pin("my-attention", None);
        p.found_by = crate::model::FoundBy::Python;
        p.possible = vec![value(None, &["requirements.txt"], true, 6)];
        assert!(judge(&mut p).findings.is_empty());
    }

    #[test]
    fn one_value_is_judged_alone() {
        let mut p = pin("flash-attention", Some(KNOWN));
        p.possible = vec![value(Some(KNOWN), &[], true, 4)];
        let judged = judge(&mut p);
        let f = finding(&judged.findings, FA4);
        assert_eq!(f.status, Status::Affected);
        assert!(
            f.evidence
                .iter()
                .all(|e| e.kind != EvidenceKind::Configuration),
            "no set to decide over: {f:#?}"
        );
    }

    #[test]
    fn several_values_are_decided_over_the_set() {
        // The default pins a known affected commit: affected, whatever the other value is.
        let mut p = pin("flash-attention", Some(KNOWN));
        p.possible = vec![
            value(Some(KNOWN), &[], true, 4),
            value(Some(&"d".repeat(40)), &[], false, 8),
        ];
        let judged = judge(&mut p);
        assert_eq!(p.commit.as_deref(), Some(KNOWN));
        let f = finding(&judged.findings, FA4);
        assert_eq!(f.status, Status::Affected);
        assert!(
            f.evidence.iter().any(|e| e
                .detail
                .starts_with("the default configuration's pin is affected")),
            "{f:#?}"
        );
        // The other way round: the known pin is an option's, so not clean.
        let other = "d".repeat(40);
        let mut p = pin("flash-attention", Some(&other));
        p.possible = vec![
            value(Some(&other), &[], true, 4),
            value(Some(KNOWN), &[], false, 8),
        ];
        let judged = judge(&mut p);
        assert_eq!(p.commit.as_deref(), Some(other.as_str()));
        assert_eq!(finding(&judged.findings, FA4).status, Status::Unknown);
    }

    #[test]
    fn an_unreached_declaration_is_unknown_for_every_rule_it_could_meet() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let view = crate::view::open(tmp.path(), None).expect("view");
        let db = db();
        let judge = Judge {
            view: view.as_ref(),
            db: &db,
            release: None,
            others: &[],
        };
        let unreached =
            |component: Option<&str>, name: &str, reference: Option<&str>| pin::Unreached {
                component: component.map(String::from),
                declared_name: name.into(),
                repo: None,
                reference: reference.map(String::from),
                file: "cmake/old.cmake".into(),
                line: 3,
            };
        let fa_rules = db
            .rules
            .iter()
            .filter(|l| evaluate::applies(&l.rule, "flash-attention", &db.registry))
            .count();
        let found = judge.unreached(&unreached(Some("flash-attention"), "vllm-flash-attn", None));
        assert_eq!(found.len(), fa_rules);
        let f = finding(&found, FA4);
        assert_eq!((f.status, f.decided_by), (Status::Unknown, None));
        assert_eq!(f.component, "flash-attention");
        assert!(f.evidence[0].detail.starts_with(
            "cmake/old.cmake:3: `vllm-flash-attn` is declared where no CMake configuration"
        ));
        // A name not read could be anything: every rule.
        let found = judge.unreached(&unreached(None, "", None));
        assert_eq!(found.len(), db.rules.len());
        assert!(
            found[0].evidence[0]
                .detail
                .contains(": a declaration is declared")
        );
        // An unknown component at a commit a rule lists (in any case): that rule only.
        let upper = KNOWN.to_ascii_uppercase();
        let found = judge.unreached(&unreached(None, "mystery", Some(&upper)));
        assert_eq!(
            found.iter().map(|f| f.rule.as_str()).collect::<Vec<_>>(),
            [FA4]
        );
        assert_eq!(found[0].component, "mystery");
        assert!(
            found[0].evidence[0]
                .detail
                .contains(&format!("`mystery` at `{upper}`"))
        );
        assert!(
            judge
                .unreached(&unreached(None, "mystery", Some("v1")))
                .is_empty()
        );
    }

    /// What the release ledger could not be used for is said, once per pin: for
    /// flash-attention whenever a release was named and its ledger entry not used, and for any
    /// component whose declared patches are not the release's.
    #[test]
    fn an_unused_ledger_is_a_warning() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let view = crate::view::open(tmp.path(), None).expect("view");
        let db = db();
        let release = |version: &str| ledger::ReleaseId {
            version: version.into(),
            commit: None,
            file: "vllm/_version.py".into(),
        };
        let warnings = |release: Option<&ledger::ReleaseId>, p: &Pin| {
            let judge = Judge {
                view: view.as_ref(),
                db: &db,
                release,
                others: &[],
            };
            judge.pin(p, None).expect("judged").warnings
        };
        let fa = pin("flash-attention", Some(KNOWN));
        let unknown_release = release("9.9.9");
        assert_eq!(
            warnings(Some(&unknown_release), &fa),
            [
                "release ledger not used for flash-attention: vLLM 9.9.9 (vllm/_version.py) is not in the release ledger"
            ]
        );
        // No release named, or another component: nothing to say.
        assert!(warnings(None, &fa).is_empty());
        assert!(warnings(Some(&unknown_release), &pin("flashmla", Some(KNOWN))).is_empty());
        // The release's own pin, without its patches (one declared, not in the tree).
        let own = release("0.30.0");
        assert!(
            warnings(Some(&own), &fa).is_empty(),
            "the release's own pin"
        );
        let mut patched = fa.clone();
        patched.patches = vec!["patches/x.patch".into()];
        let found = warnings(Some(&own), &patched);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(
                "release ledger verdicts not used for flash-attention: the tree's flash-attention patches (patches/x.patch (not in the tree)) are not the release's"
            ),
            "{found:?}"
        );
    }

    /// With a clone holding the pinned commit, the rules read the pinned source (with its
    /// declared patches), and the evidence names it; without one, it says what is missing.
    #[test]
    fn a_clone_gives_the_rules_the_pinned_source() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("fa");
        std::fs::create_dir_all(&dir).expect("mkdir");
        git(&dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("README"), "fa").expect("write");
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "one"]);
        let head = git(&dir, &["rev-parse", "HEAD"]);
        let clone = Repo::open(&dir).expect("opens");
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("patches")).expect("mkdir");
        std::fs::write(tree.join("patches/a.patch"), "not a patch\n").expect("write");
        let view = crate::view::open(&tree, None).expect("view");
        let db = db();
        let judge = Judge {
            view: view.as_ref(),
            db: &db,
            release: None,
            others: &[],
        };
        let signature = |judged: &Judged| -> String {
            let f = finding(&judged.findings, FA4);
            f.evidence
                .iter()
                .find(|e| e.kind == EvidenceKind::Signature)
                .map(|e| e.detail.clone())
                .unwrap_or_else(|| panic!("no signature evidence: {f:#?}"))
        };
        let p = pin("flash-attention", Some(&head));
        let judged = judge.pin(&p, Some(&clone)).expect("judged");
        assert_eq!(judged.commit.map(|c| c.to_string()), Some(head.clone()));
        let detail = signature(&judged);
        let at = format!("flash-attention at {}", &head[..12]);
        assert!(detail.contains(&format!("{at}:")), "{detail}");
        let mut patched = p.clone();
        patched.patches = vec!["patches/a.patch".into()];
        let detail = signature(&judge.pin(&patched, Some(&clone)).expect("judged"));
        assert!(
            detail.contains(&format!("{at} with patches/a.patch applied")),
            "{detail}"
        );
        let detail = signature(&judge.pin(&p, None).expect("judged"));
        assert!(
            detail.starts_with("pinned source not available: no clone given"),
            "{detail}"
        );
    }
}
