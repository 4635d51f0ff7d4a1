//! Evaluation: one rule against one pinned component, producing a [`Finding`] whose evidence is
//! listed strongest first and whose status the evidence lattice ([`combine`]) decides.
//!
//! Strength order (docs/src/design.md): source signature on the actual files; commit ancestry in a real
//! repository; a known-pin list in the rule; a package-version range. `not_affected` needs the
//! strongest applicable evidence to say so and no other to say `affected`; strong evidence that
//! could not decide never falls through to a weaker clean answer; when nothing decides, the
//! status is `unknown`, never `not_affected`.
//!
//! Scoping and conditions:
//! - A GIT range applies to a pin when the range's `repo` is the pin component's repository or
//!   one of its aliases (`rules/components.yaml`), or the component is a declared fork
//!   (`fork_of`) of one that owns it; a fork is never an alias of its upstream.
//! - `known_affected_prefixes` (short SHAs) count only when a clone resolves the prefix to
//!   exactly one commit and that commit is the pin; without a clone they give no evidence.
//! - `requires` gates a finding on other components' pins ([`OtherPin`]): a condition that does
//!   not hold makes the finding `not_affected`; one that cannot be checked caps it at `unknown`.

use super::model::{Event, RangeType, Rule};
use super::signature::Outcome;
use super::signature::symbols::{Libraries, SymbolSignature};
use super::version;
use crate::model::{Evidence, EvidenceKind, Finding, Location, RuleId, Status};
use crate::pin::components::Registry;
use crate::pin::url;
use crate::resolve::{Answer, Repo};
use crate::view::SourceFiles;
use gix::ObjectId;

/// What is known about one pinned component.
pub struct Subject<'a> {
    pub component: &'a str,
    /// The pinned commit as a full SHA, when known.
    pub commit: Option<ObjectId>,
    /// Why the commit is not known (no GIT_TAG, a tag with no clone, ...).
    pub commit_unknown: Option<String>,
    pub clone: Option<&'a Repo>,
    /// The pinned source (a commit's tree with declared patches, or shipped files).
    pub sources: Option<&'a dyn SourceFiles>,
    /// Where the sources came from, for the evidence text.
    pub sources_label: String,
    /// The built libraries shipped with the component (an artifact's package directory), for
    /// symbol signatures; `None` where there are none to look at (a source tree).
    pub binaries: Option<&'a dyn Libraries>,
    /// Installed package versions: (ecosystem, name, version).
    pub packages: Vec<(String, String, String)>,
    /// The component's own Python distribution as a requirement or lock entry pins it (the
    /// versions it allows), for rules whose PyPI entries name the component.
    pub package_pins: Vec<crate::model::PackagePin>,
    /// Why there is no clone to answer ancestry, and what would decide, when `clone` is `None`
    /// (a clone that lacks the pinned commit; a wheel, which no clone can help without a commit).
    /// `None`: the default advice, pass `--repo NAME=PATH`.
    pub no_clone: Option<String>,
    /// Evidence recorded elsewhere for a rule (rule id, evidence): the release ledger's verdicts.
    pub recorded: Vec<(RuleId, Evidence)>,
    pub location: Option<Location>,
    /// The pin's declared patches, `None` when it declares none: commit evidence (ancestry,
    /// the pin being an event commit) describes the unpatched commit, so it may say
    /// `not_affected` only when no patch touches a file of the rule's fix or introduction.
    pub patches: Option<PatchScope>,
}

/// What a pin's declared patches change ([`Subject::patches`]).
#[derive(Debug, Clone)]
pub struct PatchScope {
    /// The patch files, as declared.
    pub names: Vec<String>,
    /// The files they change, each with the patch file that changes it; `Err`: why that is
    /// not known, or why the patches do not apply (the build's patch step fails).
    pub touched: Result<Vec<(String, String)>, String>,
}

impl Subject<'_> {
    fn short(&self) -> String {
        self.commit
            .map(|c| c.to_string()[..12].to_string())
            .unwrap_or_else(|| "?".into())
    }
}

/// Whether `rule` applies to `component`: one of its GIT ranges belongs to it.
pub fn applies(rule: &Rule, component: &str, registry: &Registry) -> bool {
    rule.git_ranges()
        .any(|(_, range)| range_applies(range, component, registry))
}

/// Whether `rule` judges `component`'s own Python distribution: one of its package entries
/// names the component. Such an entry judges requirement and lock pins (the versions they
/// allow); a git pin of the component is judged by the rule's GIT ranges only (a version range
/// says nothing of a commit).
pub fn applies_to_package(rule: &Rule, component: &str) -> bool {
    rule.package_entries().any(|(_, c)| c == component)
}

/// Whether a GIT range applies to `component`: the range's repository is the component's
/// repository or one of its aliases. Keyed by URL, so a rule written for an upstream does not
/// reach a fork that shares its commits but not its history of reverts.
pub fn range_applies(range: &super::model::Range, component: &str, registry: &Registry) -> bool {
    let Some(repo) = range.repo.as_deref().and_then(url::canonical) else {
        return false;
    };
    registry.reaches(component, &repo)
}

/// Another component's pin, for rules with `requires` (e.g. vLLM's own revision: the scanned
/// tree's commit, with the target repository as its clone).
pub struct OtherPin<'a> {
    pub component: String,
    pub commit: Option<ObjectId>,
    /// Why the commit is not known (a plain directory has no revision).
    pub commit_unknown: Option<String>,
    pub clone: Option<&'a Repo>,
}

/// Evaluate `rule` on `subject` with no other components known. The caller checked [`applies`].
pub fn evaluate(rule: &Rule, subject: &Subject, registry: &Registry) -> Finding {
    evaluate_with(rule, subject, registry, &[])
}

/// Evaluate `rule` on `subject`, checking its `requires` against `others`.
pub fn evaluate_with(
    rule: &Rule,
    subject: &Subject,
    registry: &Registry,
    others: &[OtherPin],
) -> Finding {
    // Each piece of evidence with whether it applies: evidence that had nothing to look at
    // (no sources, no clone, no known commit) does not take part in the lattice; evidence that
    // looked and could not tell does, and blocks weaker clean answers.
    let mut weighed: Vec<(Evidence, bool)> = Vec::new();
    if let Some(signature) = &rule.database_specific.signature
        && (signature.scope == super::signature::Scope::Any
            || subject.sources.is_none_or(|s| s.shipped()))
    {
        weighed.push((
            signature_evidence(signature, subject),
            subject.sources.is_some(),
        ));
    }
    if let (Some(symbols), Some(binaries)) = (&rule.database_specific.symbols, subject.binaries) {
        weighed.push((symbol_evidence(symbols, binaries), true));
    }
    for (affected, range) in rule.git_ranges() {
        if !range_applies(range, subject.component, registry) {
            continue;
        }
        let spec = affected.specific();
        let range = &with_fixed_prefixes(range, &spec.fixed_prefixes, subject.clone);
        let mut ancestry = ancestry_evidence(range, spec.introduced_unknown, subject);
        if !spec.note.is_empty() && ancestry.status != Status::Unknown {
            ancestry.detail = format!("{} ({})", ancestry.detail, spec.note);
        }
        patched_away(&mut ancestry, range, subject);
        weighed.push((
            ancestry,
            subject.clone.is_some() && subject.commit.is_some(),
        ));
        if let Some(e) = known_pin_evidence(&spec.known_affected_pins, subject) {
            weighed.push((e, true));
        } else if let Some(mut e) = event_pin_evidence(range, subject) {
            patched_away(&mut e, range, subject);
            // A pin equal to an event commit, read from the events alone: ancestry in a clone
            // holding the pin says the same with the whole range (limits, other events), so
            // this inference only applies without one.
            weighed.push((e, !(subject.clone.is_some() && subject.commit.is_some())));
        }
        if let Some(e) = prefix_evidence(&spec.known_affected_prefixes, subject) {
            weighed.push((e, true));
        }
    }
    for affected in &rule.affected {
        for range in affected.ranges.iter().filter(|r| r.kind != RangeType::Git) {
            let installed = subject.packages.iter().find(|(eco, name, _)| {
                eco.eq_ignore_ascii_case(&affected.package.ecosystem)
                    && name.eq_ignore_ascii_case(&affected.package.name)
            });
            if let Some((_, name, v)) = installed {
                let (status, detail) = match version::in_range(v, &range.events) {
                    Some(true) => (
                        Status::Affected,
                        format!("{name} {v} is in the affected range"),
                    ),
                    Some(false) => (
                        Status::NotAffected,
                        format!("{name} {v} is outside the affected range"),
                    ),
                    None => (
                        Status::Unknown,
                        format!("{name} version `{v}` does not parse"),
                    ),
                };
                weighed.push((
                    Evidence {
                        kind: EvidenceKind::VersionRange,
                        status,
                        detail,
                        file: None,
                        line: None,
                    },
                    true,
                ));
            }
        }
    }
    for (affected, component) in rule.package_entries() {
        if component != subject.component {
            continue;
        }
        let introduced_unknown = affected.specific().introduced_unknown;
        for pinned in subject.package_pins.iter().filter(|p| {
            crate::pin::components::normalise_package(&p.name)
                == crate::pin::components::normalise_package(&affected.package.name)
        }) {
            for range in &affected.ranges {
                weighed.push((
                    package_evidence(pinned, &range.events, introduced_unknown),
                    true,
                ));
            }
        }
    }
    for (id, e) in &subject.recorded {
        if id.eq_ignore_ascii_case(&rule.id) {
            weighed.push((e.clone(), true));
        }
    }
    weighed.sort_by_key(|(e, _)| e.kind);
    let Verdict {
        mut status,
        mut decided_by,
    } = combine(&weighed);
    let mut evidence: Vec<Evidence> = weighed.into_iter().map(|(e, _)| e).collect();
    // `requires`: every condition must hold for the pin's bug to bite.
    for requirement in &rule.database_specific.requires {
        let e = requirement_evidence(requirement, others, registry);
        match e.status {
            // The condition fails: the bug cannot bite, whatever the pin holds.
            Status::NotAffected if status != Status::NotAffected => {
                status = Status::NotAffected;
                decided_by = Some(EvidenceKind::Requirement);
            }
            // Cannot be checked: at best unknown (fail closed), never not_affected on that basis.
            Status::Unknown if status == Status::Affected => {
                status = Status::Unknown;
                decided_by = None;
            }
            _ => {}
        }
        evidence.push(e);
    }
    if decided_by == Some(EvidenceKind::Requirement) {
        // A failed condition decides; put its evidence first.
        evidence.sort_by_key(|e| {
            !(e.kind == EvidenceKind::Requirement && e.status == Status::NotAffected)
        });
    }
    Finding {
        rule: rule.id.clone(),
        status,
        severity: rule.database_specific.severity,
        summary: rule.summary.clone(),
        component: subject.component.to_string(),
        decided_by,
        location: subject.location.clone(),
        evidence,
        suppressed: None,
    }
}

/// The status a finding's evidence supports, and the kind that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    pub decided_by: Option<EvidenceKind>,
}

/// The evidence lattice (README, "How evidence combines"). `weighed` holds each piece of
/// evidence with whether it applies (it had something to look at), sorted strongest first;
/// only the strength kinds (signature, ancestry, known pin, version range) take part.
///
/// 1. Some applicable evidence says `affected`: the finding is `affected`, decided by the
///    strongest such evidence, unless stronger applicable evidence says `not_affected`; then
///    the two disagree and the finding is `unknown` (both stay listed).
/// 2. Otherwise the strongest applicable evidence decides: `not_affected` if it says so,
///    `unknown` if it could not tell. Undecided strong evidence (a signature whose file is
///    missing, bytecode only, over a cap, a link not resolved; ancestry in a clone that lacks
///    the commit) never falls through to a weaker clean answer.
/// 3. No applicable evidence: `unknown`.
pub fn combine(weighed: &[(Evidence, bool)]) -> Verdict {
    let strength = |k: EvidenceKind| {
        matches!(
            k,
            EvidenceKind::ImportPath
                | EvidenceKind::Signature
                | EvidenceKind::Ancestry
                | EvidenceKind::Recorded
                | EvidenceKind::KnownPin
                | EvidenceKind::VersionRange
        )
    };
    let mut applicable: Vec<&Evidence> = weighed
        .iter()
        .filter(|(e, applies)| *applies && strength(e.kind))
        .map(|(e, _)| e)
        .collect();
    applicable.sort_by_key(|e| e.kind);
    let unknown = Verdict {
        status: Status::Unknown,
        decided_by: None,
    };
    if let Some(i) = applicable.iter().position(|e| e.status == Status::Affected) {
        if applicable[..i]
            .iter()
            .any(|e| e.status == Status::NotAffected)
        {
            return unknown;
        }
        return Verdict {
            status: Status::Affected,
            decided_by: Some(applicable[i].kind),
        };
    }
    match applicable.first() {
        Some(e) if e.status == Status::NotAffected => Verdict {
            status: Status::NotAffected,
            decided_by: Some(e.kind),
        },
        _ => unknown,
    }
}

/// The status of a rule that does not apply where a status is asked for (a value of a pin that
/// is another component's, a finding one side of a comparison lacks): not affected by it.
/// `found` is the finding's status where the rule applies.
pub fn absent(found: Option<Status>) -> Status {
    found.unwrap_or(Status::NotAffected)
}

/// One rule's status over every value a pin can take ([`over_values`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetVerdict {
    pub status: Status,
    /// Affected because the default configuration's value is (whatever the others are).
    pub by_default: bool,
}

/// The lattice over a set of values a pin can take: `statuses` holds one rule's status on each
/// value, the default configuration's first when `first_is_default`.
///
/// 1. The default configuration's value is `affected`: `affected` (a default build has the bug).
/// 2. Every value is `affected`: `affected`.
/// 3. Every value is `not_affected`: `not_affected`, the only clean answer.
/// 4. Otherwise (some value unsure, or values that disagree), and for no values at all:
///    `unknown`, never clean.
pub fn over_values(statuses: &[Status], first_is_default: bool) -> SetVerdict {
    let by_default = first_is_default && statuses.first() == Some(&Status::Affected);
    let every = |wanted: Status| !statuses.is_empty() && statuses.iter().all(|s| *s == wanted);
    let status = if by_default || every(Status::Affected) {
        Status::Affected
    } else if every(Status::NotAffected) {
        Status::NotAffected
    } else {
        Status::Unknown
    };
    SetVerdict { status, by_default }
}

/// The verdict of a check whose one piece of evidence is the whole answer (pin hygiene, drift
/// of an artifact from its declared pin): the evidence's status, decided by its kind unless it
/// could not tell.
pub fn on_its_own(evidence: &Evidence) -> Verdict {
    Verdict {
        status: evidence.status,
        decided_by: (evidence.status != Status::Unknown).then_some(evidence.kind),
    }
}

/// A verdict resting on files that fail their integrity check (a wheel member that disagrees
/// with its RECORD): never clean, so `not_affected` becomes `unknown`; other verdicts stand.
pub fn distrusted(verdict: Verdict) -> Verdict {
    if verdict.status == Status::NotAffected {
        Verdict {
            status: Status::Unknown,
            decided_by: None,
        }
    } else {
        verdict
    }
}

/// Whether a `requires` condition holds: evidence whose status is `affected` when the other
/// component's pin is in one of the ranges, `not_affected` when it is in none, `unknown` when
/// that cannot be told (no pin, no revision, no clone, a shallow history).
fn requirement_evidence(
    requirement: &super::model::Requirement,
    others: &[OtherPin],
    registry: &Registry,
) -> Evidence {
    let name = if requirement.note.is_empty() {
        format!("requires {}", requirement.component)
    } else {
        format!("requires {} ({})", requirement.component, requirement.note)
    };
    let mk = |status, detail: String| Evidence {
        kind: EvidenceKind::Requirement,
        status,
        detail: format!("{name}: {detail}"),
        file: None,
        line: None,
    };
    let Some(other) = others.iter().find(|o| o.component == requirement.component) else {
        return mk(
            Status::Unknown,
            format!(
                "the revision of {} is not known here, so the condition cannot be checked",
                requirement.component
            ),
        );
    };
    if other.commit.is_none() {
        return mk(
            Status::Unknown,
            format!(
                "cannot be checked: {}",
                other
                    .commit_unknown
                    .clone()
                    .unwrap_or_else(|| format!("the revision of {} is not known", other.component))
            ),
        );
    }
    let sub = Subject {
        component: &other.component,
        commit: other.commit,
        commit_unknown: other.commit_unknown.clone(),
        clone: other.clone,
        sources: None,
        sources_label: String::new(),
        binaries: None,
        packages: Vec::new(),
        package_pins: Vec::new(),
        no_clone: None,
        recorded: Vec::new(),
        patches: None,
        location: None,
    };
    let mut unknown = Vec::new();
    let mut outside = Vec::new();
    for range in requirement
        .ranges
        .iter()
        .filter(|r| r.kind == RangeType::Git && range_applies(r, &other.component, registry))
    {
        let mut e = ancestry_evidence(range, false, &sub);
        if e.status == Status::Unknown
            && let Some(k) = event_pin_evidence(range, &sub)
        {
            e = k;
        }
        match e.status {
            Status::Affected => {
                return mk(
                    Status::Affected,
                    format!("holds: {} {}", other.component, e.detail),
                );
            }
            Status::NotAffected => outside.push(e.detail),
            Status::Unknown => unknown.push(e.detail),
        }
    }
    if !unknown.is_empty() {
        return mk(
            Status::Unknown,
            format!("cannot be checked: {}", unknown.join("; ")),
        );
    }
    mk(
        Status::NotAffected,
        format!(
            "does not hold: {} {}",
            other.component,
            if outside.is_empty() {
                "matches none of its ranges".to_string()
            } else {
                outside.join("; ")
            }
        ),
    )
}

/// `range` with each fix published only as a short SHA added as a `fixed` event, where the
/// clone resolves the prefix to exactly one commit (an ambiguous or missing prefix adds nothing).
fn with_fixed_prefixes(
    range: &super::model::Range,
    prefixes: &[super::model::KnownPin],
    clone: Option<&Repo>,
) -> super::model::Range {
    let mut out = range.clone();
    let Some(clone) = clone else {
        return out;
    };
    for p in prefixes {
        if let Ok(crate::resolve::Resolved::Commit(c)) = clone.resolve(&p.commit) {
            out.events.push(Event::Fixed(c.to_string()));
        }
    }
    out
}

/// What a pinned distribution's allowed versions say against one version range of the rule:
/// affected when every allowed version is in the range, not affected when none is, unknown
/// when the requirement allows both (naming it). An entry whose introducing version is not
/// known never says affected.
fn package_evidence(
    pinned: &crate::model::PackagePin,
    events: &[Event],
    introduced_unknown: bool,
) -> Evidence {
    let what = match pinned.allowed.as_singleton() {
        Some(v) => format!("{} {v}", pinned.name),
        None => format!("`{}` (the versions it allows)", pinned.written),
    };
    let (status, detail) = match version::set_in_range(&pinned.allowed, events) {
        Some(version::SetAnswer::All) if introduced_unknown => (
            Status::Unknown,
            format!(
                "{what} is below the fix, but the version that introduced the bug is not known"
            ),
        ),
        Some(version::SetAnswer::All) => {
            (Status::Affected, format!("{what} is in the affected range"))
        }
        Some(version::SetAnswer::None) => (
            Status::NotAffected,
            format!("{what} is outside the affected range"),
        ),
        Some(version::SetAnswer::Some) => (
            Status::Unknown,
            format!(
                "{what} allows versions in and out of the affected range: the one installed decides"
            ),
        ),
        None => (
            Status::Unknown,
            "a version of the rule's range does not parse".to_string(),
        ),
    };
    Evidence {
        kind: EvidenceKind::VersionRange,
        status,
        detail,
        file: None,
        line: None,
    }
}

/// Known affected pins published only as short SHAs: evidence only when the clone resolves the
/// prefix to exactly one commit and that commit is the pin.
fn prefix_evidence(prefixes: &[super::model::KnownPin], subject: &Subject) -> Option<Evidence> {
    let (clone, v) = (subject.clone?, subject.commit?);
    for p in prefixes {
        match clone.resolve(&p.commit) {
            Ok(crate::resolve::Resolved::Commit(c)) if c == v => {
                let note = if p.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", p.note)
                };
                return Some(Evidence {
                    kind: EvidenceKind::KnownPin,
                    status: Status::Affected,
                    detail: format!(
                        "pin {v} is the known affected pin published only as `{}`{note}; the clone {} resolves that prefix to exactly this commit",
                        p.commit,
                        clone.path().display()
                    ),
                    file: None,
                    line: None,
                });
            }
            // Another commit, no commit, or an ambiguous prefix: no evidence either way.
            _ => {}
        }
    }
    None
}

/// What a symbol signature says of the shipped libraries (strongest evidence, like a source
/// signature: it reads the build product itself).
fn symbol_evidence(symbols: &SymbolSignature, binaries: &dyn Libraries) -> Evidence {
    let mk = |status, detail, file| Evidence {
        kind: EvidenceKind::Signature,
        status,
        detail,
        file,
        line: None,
    };
    match symbols.evaluate(binaries) {
        Outcome::Present { hits } => mk(
            Status::Affected,
            format!(
                "bug shape present in the shipped library's dynamic symbols: {}",
                hits.iter()
                    .map(|h| format!("{} in {}", h.condition, h.file))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            hits.first().map(|h| h.file.clone()),
        ),
        Outcome::Absent { reason } => mk(
            Status::NotAffected,
            format!("bug shape absent from the shipped library's dynamic symbols: {reason}"),
            None,
        ),
        Outcome::Undecidable { reason } => mk(
            Status::Unknown,
            format!("symbol signature undecidable: {reason}"),
            None,
        ),
    }
}

fn signature_evidence(signature: &super::signature::Signature, subject: &Subject) -> Evidence {
    let unknown = |detail: String| Evidence {
        kind: EvidenceKind::Signature,
        status: Status::Unknown,
        detail,
        file: None,
        line: None,
    };
    let Some(sources) = subject.sources else {
        return unknown(match &subject.no_clone {
            Some(why) => format!("pinned source not available: {why}"),
            None => format!(
                "source not available: pass --repo {}=PATH (a clone) to check the pinned files",
                subject.component
            ),
        });
    };
    match signature.evaluate(sources) {
        Outcome::Present { hits } => {
            let first = hits.first();
            Evidence {
                kind: EvidenceKind::Signature,
                status: Status::Affected,
                detail: format!(
                    "bug shape present in {}: {}",
                    subject.sources_label,
                    hits.iter()
                        .map(|h| format!("{} ({}:{})", h.condition, h.file, h.line))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                file: first.map(|h| h.file.clone()),
                line: first.map(|h| h.line),
            }
        }
        Outcome::Absent { reason } => Evidence {
            kind: EvidenceKind::Signature,
            status: Status::NotAffected,
            detail: format!("bug shape absent in {}: {reason}", subject.sources_label),
            file: None,
            line: None,
        },
        Outcome::Undecidable { reason } => unknown(format!(
            "signature undecidable on {}: {reason}",
            subject.sources_label
        )),
    }
}

/// Commit evidence that says `not_affected` of a pin whose declared patches may change what
/// it says: a patch touches a file that one of the range's `fixed` or `introduced` commits
/// changed (a patch can revert the fix, or bring the bug in), or which files either side
/// touches cannot be told, or the patches do not apply. Such evidence becomes `unknown` with
/// the reason, and the lattice leaves the decision to the patched source (the signature).
fn patched_away(evidence: &mut Evidence, range: &super::model::Range, subject: &Subject) {
    if evidence.status != Status::NotAffected {
        return;
    }
    let Some(why) = patch_reason(range, subject) else {
        return;
    };
    evidence.status = Status::Unknown;
    evidence.detail = format!(
        "{}; but {why}, so the unpatched commit does not say what the build compiles",
        evidence.detail
    );
}

fn patch_reason(range: &super::model::Range, subject: &Subject) -> Option<String> {
    let scope = subject.patches.as_ref()?;
    let touched = match &scope.touched {
        Ok(t) if t.is_empty() => return None,
        Ok(t) => t,
        Err(why) => return Some(format!("the declared patches cannot be applied: {why}")),
    };
    let Some(clone) = subject.clone else {
        return Some(format!(
            "{} patch{} the source and no clone tells which files the rule's fix changed",
            scope.names.join(", "),
            if scope.names.len() == 1 { "es" } else { "" }
        ));
    };
    for event in &range.events {
        let role = match event {
            Event::Fixed(_) => "fix",
            Event::Introduced(_) => "introduction",
            _ => continue,
        };
        let Some(commit) = parse_commit(event.value()) else {
            continue;
        };
        let short = &event.value()[..12.min(event.value().len())];
        match clone.files_changed(&commit) {
            Answer::Known(files) => {
                if let Some((path, origin)) = touched.iter().find(|(p, _)| files.contains(p)) {
                    return Some(format!(
                        "{origin} changes {path}, which the rule's {role} {short} changed"
                    ));
                }
            }
            Answer::Unknown(why) => {
                return Some(format!(
                    "the declared patches change files and which files the rule's {role} {short} changed is not known ({why})"
                ));
            }
        }
    }
    None
}

fn parse_commit(v: &str) -> Option<ObjectId> {
    ObjectId::from_hex(v.as_bytes()).ok()
}

/// Per-`introduced` verdict in OSV GIT semantics.
enum Span {
    Open(String),
    Closed(String),
    Unknown(String),
}

fn ancestry_evidence(
    range: &super::model::Range,
    introduced_unknown: bool,
    subject: &Subject,
) -> Evidence {
    let mk = |status, detail| Evidence {
        kind: EvidenceKind::Ancestry,
        status,
        detail,
        file: None,
        line: None,
    };
    let Some(clone) = subject.clone else {
        return mk(
            Status::Unknown,
            subject.no_clone.clone().unwrap_or_else(|| {
                format!(
                    "no clone given: pass --repo {}=PATH to check commit ancestry",
                    subject.component
                )
            }),
        );
    };
    let Some(v) = subject.commit else {
        return mk(
            Status::Unknown,
            subject
                .commit_unknown
                .clone()
                .unwrap_or_else(|| "the pinned commit is not known".into()),
        );
    };
    let events_of = |f: fn(&Event) -> bool| -> Vec<ObjectId> {
        range
            .events
            .iter()
            .filter(|e| f(e))
            .filter_map(|e| parse_commit(e.value()))
            .collect()
    };
    let fixed = events_of(|e| matches!(e, Event::Fixed(_)));
    let last = events_of(|e| matches!(e, Event::LastAffected(_)));
    let limits = events_of(|e| matches!(e, Event::Limit(_)));
    let short = |c: &ObjectId| c.to_string()[..12].to_string();
    let pin = subject.short();

    // `limit`: v must be strictly before some limit.
    if !limits.is_empty() {
        let mut any_unknown = None;
        let mut within = false;
        for l in &limits {
            match clone.is_ancestor(&v, l) {
                Answer::Known(true) if *l != v => within = true,
                Answer::Known(_) => {}
                Answer::Unknown(why) => any_unknown = Some(why),
            }
        }
        if !within {
            return match any_unknown {
                Some(why) => mk(Status::Unknown, why),
                None => mk(
                    Status::NotAffected,
                    format!("pin {pin} is not before any limit"),
                ),
            };
        }
    }

    let introductions: Vec<&Event> = range
        .events
        .iter()
        .filter(|e| matches!(e, Event::Introduced(_)))
        .collect();
    let reintroduced = introductions.len() > 1;
    let mut verdicts = Vec::new();
    for event in introductions {
        let intro = if event.value() == "0" {
            None
        } else {
            parse_commit(event.value())
        };
        verdicts.push(open_from(
            clone,
            intro,
            reintroduced,
            &v,
            &fixed,
            &last,
            &pin,
            short,
        ));
    }
    if let Some(Span::Open(detail)) = verdicts.iter().find(|o| matches!(o, Span::Open(_))) {
        if introduced_unknown {
            return mk(
                Status::Unknown,
                format!(
                    "{detail}; but the introducing commit is unknown, so ancestry alone cannot say affected"
                ),
            );
        }
        return mk(Status::Affected, detail.clone());
    }
    if let Some(Span::Unknown(why)) = verdicts.iter().find(|o| matches!(o, Span::Unknown(_))) {
        return mk(Status::Unknown, why.clone());
    }
    let why = verdicts
        .iter()
        .filter_map(|o| match o {
            Span::Closed(d) => Some(d.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("; ");
    mk(Status::NotAffected, why)
}

/// Whether the bug introduced at `intro` (`None`: the start of history) is still open at `v`.
/// With several `introduced` events (a fix, then a re-introduction) a fix closes only the
/// introductions it follows; with one, any fix in the pin's history closes it, as in OSV.
#[allow(clippy::too_many_arguments)]
fn open_from(
    clone: &Repo,
    intro: Option<ObjectId>,
    reintroduced: bool,
    v: &ObjectId,
    fixed: &[ObjectId],
    last: &[ObjectId],
    pin: &str,
    short: impl Fn(&ObjectId) -> String,
) -> Span {
    let follows_intro = |f: &ObjectId| match intro {
        Some(i) if reintroduced => clone.is_ancestor(&i, f),
        _ => Answer::Known(true),
    };
    // Fixes first: a fix in the pin's history usually settles it without walking down to the
    // introducing commit.
    let mut unknown = None;
    for f in fixed {
        match clone.is_ancestor(f, v) {
            Answer::Known(true) => match follows_intro(f) {
                Answer::Known(true) => {
                    return Span::Closed(format!("fix {} is an ancestor of pin {pin}", short(f)));
                }
                Answer::Known(false) => {}
                Answer::Unknown(why) => {
                    unknown.get_or_insert(why);
                }
            },
            Answer::Known(false) => {}
            Answer::Unknown(why) => {
                unknown.get_or_insert(why);
            }
        }
    }
    for l in last.iter().filter(|l| *l != v) {
        match (clone.is_ancestor(l, v), follows_intro(l)) {
            (Answer::Known(true), Answer::Known(true)) => {
                return Span::Closed(format!(
                    "pin {pin} comes after last affected commit {}",
                    short(l)
                ));
            }
            (Answer::Unknown(why), _) | (_, Answer::Unknown(why)) => {
                unknown.get_or_insert(why);
            }
            _ => {}
        }
    }
    let mut intro_by_squash = false;
    if let Some(i) = intro {
        match clone.is_ancestor(&i, v) {
            Answer::Known(true) => {}
            // The pin may be the head of the PR that was squash-merged as the introducing
            // commit: then it carries the bug without being its descendant.
            Answer::Known(false) => match clone.squash_equivalent(&i, v) {
                Answer::Known(true) => intro_by_squash = true,
                Answer::Known(false) => {
                    return Span::Closed(format!(
                        "pin {pin} does not contain introducing commit {}",
                        short(&i)
                    ));
                }
                Answer::Unknown(why) => return Span::Unknown(why),
            },
            Answer::Unknown(why) => return Span::Unknown(why),
        }
    }
    if let Some(why) = unknown {
        return Span::Unknown(why);
    }
    // A cherry-picked fix counts as fixed (patch-id equivalence).
    for f in fixed {
        match clone.find_cherry_pick(f, v, intro.as_ref()) {
            Answer::Known(Some(c)) => {
                return Span::Closed(format!(
                    "commit {} in pin {pin}'s history makes the same change as fix {} (patch-id: a cherry-pick)",
                    short(&c),
                    short(f)
                ));
            }
            Answer::Known(None) => {}
            Answer::Unknown(why) => return Span::Unknown(why),
        }
        // A squash-merged PR: the pin is the PR's head, not an ancestor of the fix, and its own
        // change since the merge-base with the fix is the fix.
        match clone.squash_equivalent(f, v) {
            Answer::Known(true) => {
                return Span::Closed(format!(
                    "pin {pin}'s own change since its merge-base with fix {} is the same patch as the fix: squash-merge equivalence (patch-id); the pin is the head of the pull request squashed into the fix",
                    short(f)
                ));
            }
            Answer::Known(false) => {}
            Answer::Unknown(why) => return Span::Unknown(why),
        }
    }
    let from = match intro {
        Some(i) if intro_by_squash => format!(
            "carries introducing commit {}'s change by squash-merge equivalence (patch-id: the pin is the head of the pull request squashed into it)",
            short(&i)
        ),
        Some(i) => format!("contains introducing commit {}", short(&i)),
        None => "is in range from the start of history".to_string(),
    };
    let fixes = fixed.iter().map(short).collect::<Vec<_>>().join(", ");
    Span::Open(format!(
        "pin {pin} {from} and no fix ({fixes}) or cherry-pick of one"
    ))
}

fn known_pin_evidence(known: &[super::model::KnownPin], subject: &Subject) -> Option<Evidence> {
    let v = subject.commit?.to_string();
    let k = known.iter().find(|k| k.commit.eq_ignore_ascii_case(&v))?;
    let note = if k.note.is_empty() {
        String::new()
    } else {
        format!(" ({})", k.note)
    };
    Some(Evidence {
        kind: EvidenceKind::KnownPin,
        status: Status::Affected,
        detail: format!("pin {v} is a known affected pin{note}"),
        file: None,
        line: None,
    })
}

/// What the pin being one of the range's own event commits says without a clone: the fix or a
/// limit is not affected; `introduced` or `last_affected` is affected only when the range has
/// no `limit` (a limit can exclude it, which only ancestry can tell).
fn event_pin_evidence(range: &super::model::Range, subject: &Subject) -> Option<Evidence> {
    let v = subject.commit?.to_string();
    let mk = |status, detail| Evidence {
        kind: EvidenceKind::KnownPin,
        status,
        detail,
        file: None,
        line: None,
    };
    let has_limit = range.events.iter().any(|e| matches!(e, Event::Limit(_)));
    for event in &range.events {
        if !event.value().eq_ignore_ascii_case(&v) {
            continue;
        }
        return match event {
            Event::Fixed(_) => Some(mk(
                Status::NotAffected,
                format!("pin {v} is the fix commit"),
            )),
            Event::Introduced(_) | Event::LastAffected(_) if !has_limit => Some(mk(
                Status::Affected,
                format!("pin {v} is the rule's {} commit", event.name()),
            )),
            Event::Introduced(_) | Event::LastAffected(_) => None,
            Event::Limit(_) => Some(mk(
                Status::NotAffected,
                format!("pin {v} is the rule's limit commit"),
            )),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(kind: EvidenceKind, status: Status) -> Evidence {
        Evidence {
            kind,
            status,
            detail: String::new(),
            file: None,
            line: None,
        }
    }

    fn verdict(items: &[(EvidenceKind, Status, bool)]) -> (Status, Option<EvidenceKind>) {
        let weighed: Vec<(Evidence, bool)> = items
            .iter()
            .map(|(k, s, applies)| (e(*k, *s), *applies))
            .collect();
        let v = combine(&weighed);
        (v.status, v.decided_by)
    }

    use EvidenceKind::{Ancestry, Integrity, KnownPin, Signature, VersionRange};
    use Status::{Affected, NotAffected, Unknown};

    #[test]
    fn the_lattice() {
        // The strongest applicable evidence decides when nothing says affected.
        assert_eq!(
            verdict(&[
                (Signature, NotAffected, true),
                (VersionRange, NotAffected, true)
            ]),
            (NotAffected, Some(Signature))
        );
        // Undecided strong evidence never falls through to a weaker clean answer.
        assert_eq!(
            verdict(&[
                (Signature, Unknown, true),
                (VersionRange, NotAffected, true)
            ]),
            (Unknown, None)
        );
        // ... but a weaker `affected` still counts.
        assert_eq!(
            verdict(&[(Signature, Unknown, true), (VersionRange, Affected, true)]),
            (Affected, Some(VersionRange))
        );
        // Disagreement: stronger not_affected, weaker affected -> unknown.
        assert_eq!(
            verdict(&[
                (Signature, NotAffected, true),
                (VersionRange, Affected, true)
            ]),
            (Unknown, None)
        );
        assert_eq!(
            verdict(&[(Ancestry, NotAffected, true), (KnownPin, Affected, true)]),
            (Unknown, None)
        );
        // Stronger affected wins over weaker not_affected.
        assert_eq!(
            verdict(&[
                (Signature, Affected, true),
                (VersionRange, NotAffected, true)
            ]),
            (Affected, Some(Signature))
        );
        // Evidence that had nothing to look at takes no part.
        assert_eq!(
            verdict(&[(Signature, Unknown, false), (KnownPin, NotAffected, true)]),
            (NotAffected, Some(KnownPin))
        );
        assert_eq!(
            verdict(&[(Ancestry, Unknown, false), (KnownPin, Unknown, false)]),
            (Unknown, None)
        );
        // Informational kinds never decide.
        assert_eq!(verdict(&[(Integrity, NotAffected, true)]), (Unknown, None));
        // Order of the input does not matter.
        assert_eq!(
            verdict(&[
                (VersionRange, NotAffected, true),
                (Signature, Unknown, true)
            ]),
            (Unknown, None)
        );
    }

    /// OSV GIT semantics, the evidence kinds and `requires` on one real git history built here
    /// with `git`. Every expectation comes from how the history is built (which commit adds
    /// which change), never from a rule file:
    ///
    /// ```text
    /// c0 ── c1 (adds bug) ── c2 ── c3 (adds fix) ── c4
    ///  │                      ├── s0 ── s1 (cherry-pick of c3's change)
    ///  │                      └── q1 (c3's change, another message: the head of a PR squashed into c3)
    ///  └── p1 (c1's change, another message: the head of a PR squashed into c1) ── m (merged into c4)
    /// ```
    mod history {
        use super::super::*;
        use crate::rules::load::{load, parse};
        use std::collections::BTreeMap;
        use std::path::Path;

        const REPO: &str = "https://github.com/vllm-project/flash-attention";

        use crate::resolve::test_git::git;

        fn add(dir: &Path, file: &str, text: &str, message: &str) -> String {
            std::fs::write(dir.join(file), text).expect("write");
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", message]);
            git(dir, &["rev-parse", "HEAD"])
        }

        struct Built {
            _tmp: tempfile::TempDir,
            clone: Repo,
            c: BTreeMap<&'static str, String>,
        }

        fn build() -> Built {
            let tmp = tempfile::tempdir().expect("tempdir");
            let d = tmp.path();
            git(d, &["init", "-q", "-b", "main"]);
            let mut c = BTreeMap::new();
            c.insert("c0", add(d, "base.txt", "base\n", "c0"));
            c.insert("c1", add(d, "bug.txt", "bug\n", "c1 introduces the bug"));
            c.insert("c2", add(d, "other.txt", "other\n", "c2"));
            c.insert("c3", add(d, "fix.txt", "fix\n", "c3 fixes the bug"));
            c.insert("c4", add(d, "after.txt", "after\n", "c4"));
            git(d, &["checkout", "-q", "-b", "side", &c["c2"]]);
            c.insert("s0", add(d, "side.txt", "side\n", "s0"));
            git(d, &["cherry-pick", "-x", &c["c3"]]);
            c.insert("s1", git(d, &["rev-parse", "HEAD"]));
            git(d, &["checkout", "-q", "-b", "fixpr", &c["c2"]]);
            c.insert(
                "q1",
                add(d, "fix.txt", "fix\n", "fix, as its pull request had it"),
            );
            git(d, &["checkout", "-q", "-b", "bugpr", &c["c0"]]);
            c.insert(
                "p1",
                add(d, "bug.txt", "bug\n", "bug, as its pull request had it"),
            );
            git(d, &["checkout", "-q", "main"]);
            git(
                d,
                &[
                    "merge",
                    "-q",
                    "--no-ff",
                    "-m",
                    "m merges the bug PR",
                    "bugpr",
                ],
            );
            c.insert("m", git(d, &["rev-parse", "HEAD"]));
            let clone = Repo::open(d).expect("the built history opens");
            Built {
                _tmp: tmp,
                clone,
                c,
            }
        }

        fn registry() -> Registry {
            load(None).expect("embedded rules load").0.registry
        }

        /// A rule whose one GIT range has `events` (kind, commit), and `extra` YAML appended
        /// to its `database_specific` (indented 2).
        fn rule(events: &[(&str, &str)], affected_specific: &str, extra: &str) -> Rule {
            let events: String = events
                .iter()
                .map(|(k, v)| format!("          - {k}: \"{v}\"\n"))
                .collect();
            let text = format!(
                "id: TEST-EVAL-1\nsummary: \"test rule\"\naffected:\n  - package:\n      ecosystem: GIT\n      name: flash-attention\n    ranges:\n      - type: GIT\n        repo: {REPO}\n        events:\n{events}    database_specific:\n      component: flash-attention\n{affected_specific}database_specific:\n  severity: high\n  kind: performance\n{extra}"
            );
            parse("TEST-EVAL-1.yaml", &text, &registry())
                .unwrap_or_else(|e| panic!("test rule parses: {e:?}\n{text}"))
        }

        fn subject<'a>(commit: &str, clone: Option<&'a Repo>) -> Subject<'a> {
            Subject {
                component: "flash-attention",
                commit: ObjectId::from_hex(commit.as_bytes()).ok(),
                commit_unknown: None,
                clone,
                sources: None,
                sources_label: "the pinned tree".to_string(),
                packages: Vec::new(),
                package_pins: Vec::new(),
                no_clone: None,
                recorded: Vec::new(),
                patches: None,
                location: None,
                binaries: None,
            }
        }

        fn status(rule: &Rule, commit: &str, clone: Option<&Repo>) -> Status {
            evaluate(rule, &subject(commit, clone), &registry()).status
        }

        /// Every named commit's status under `events`, against the expected table.
        fn check(b: &Built, events: &[(&str, &str)], want: &[(&str, Status)]) {
            let events: Vec<(&str, &str)> = events
                .iter()
                .map(|(k, v)| (*k, b.c.get(v).map_or(*v, String::as_str)))
                .collect();
            let r = rule(&events, "", "");
            let got: Vec<(&str, Status)> = want
                .iter()
                .map(|(name, _)| (*name, status(&r, &b.c[name], Some(&b.clone))))
                .collect();
            assert_eq!(got, want, "events {events:?}");
        }

        use Status::{Affected as A, NotAffected as N, Unknown as U};

        #[test]
        fn git_ranges_follow_osv_on_a_built_history() {
            let b = build();
            // introduced + fixed; a cherry-picked fix and the head of the squashed fix PR count
            // as fixed; the head of the squashed bug PR carries the bug.
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("fixed", "c3")], &[
                ("c0", N), ("c1", A), ("c2", A), ("c3", N), ("c4", N),
                ("s0", A), ("s1", N), ("q1", N), ("p1", A),
            ]);
            // The whole history from "0".
            #[rustfmt::skip]
            check(&b, &[("introduced", "0"), ("fixed", "c3")], &[
                ("c0", A), ("c2", A), ("c3", N), ("s0", A), ("p1", A),
            ]);
            // last_affected: the commit itself is affected, everything after it is not.
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("last_affected", "c2")], &[
                ("c0", N), ("c1", A), ("c2", A), ("c3", N), ("c4", N), ("s0", N), ("p1", A),
            ]);
            // limit: only strict ancestors of the limit are affected.
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("limit", "c3")], &[
                ("c0", N), ("c1", A), ("c2", A), ("c3", N), ("c4", N), ("s0", N), ("p1", N),
            ]);
            // With one introduction, any fix in the pin's history closes it, even one on a
            // branch that never had the bug (p1, merged at m).
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("fixed", "p1")], &[
                ("c2", A), ("c4", A), ("p1", N), ("m", N),
            ]);
            // A last_affected commit the clone lacks: ancestry cannot tell.
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("last_affected", "1234567890123456789012345678901234567890")], &[
                ("c0", N), ("c2", U),
            ]);
            // Re-introduction: the fix closes only the introduction it follows.
            #[rustfmt::skip]
            check(&b, &[("introduced", "c1"), ("fixed", "c2"), ("introduced", "c3")], &[
                ("c0", N), ("c1", A), ("c2", N), ("c3", A), ("c4", A), ("s0", N),
            ]);
        }

        #[test]
        fn ancestry_evidence_says_why() {
            let b = build();
            let r = rule(&[("introduced", &b.c["c1"]), ("fixed", &b.c["c3"])], "", "");
            let f = evaluate(&r, &subject(&b.c["p1"], Some(&b.clone)), &registry());
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::Ancestry)));
            let detail = &f.evidence[0].detail;
            assert!(detail.contains("squash-merge"), "{detail}");
            assert!(detail.contains(&b.c["p1"][..12]), "names the pin: {detail}");
            let f = evaluate(&r, &subject(&b.c["c2"], Some(&b.clone)), &registry());
            assert_eq!(
                f.evidence[0].detail,
                format!(
                    "pin {} contains introducing commit {} and no fix ({}) or cherry-pick of one",
                    &b.c["c2"][..12],
                    &b.c["c1"][..12],
                    &b.c["c3"][..12]
                )
            );
            let f = evaluate(&r, &subject(&b.c["c4"], Some(&b.clone)), &registry());
            assert_eq!(f.status, N);
            // The whole sentence: an entry without a `note` adds nothing to it.
            assert_eq!(
                f.evidence[0].detail,
                format!(
                    "fix {} is an ancestor of pin {}",
                    &b.c["c3"][..12],
                    &b.c["c4"][..12]
                )
            );
            // A pin the clone lacks: unknown, and no weaker evidence turns it clean.
            let missing = "1234567890123456789012345678901234567890";
            assert_eq!(status(&r, missing, Some(&b.clone)), U);
        }

        #[test]
        fn an_unknown_introduction_never_makes_ancestry_say_affected() {
            let b = build();
            let r = rule(
                &[("introduced", "0"), ("fixed", &b.c["c3"])],
                "      introduced_unknown: true\n      note: \"introducing commit not known\"\n",
                "",
            );
            let f = evaluate(&r, &subject(&b.c["c2"], Some(&b.clone)), &registry());
            assert_eq!(f.status, U);
            assert!(
                !f.evidence[0]
                    .detail
                    .contains("introducing commit not known"),
                "the note explains a decided answer only: {}",
                f.evidence[0].detail
            );
            let f = evaluate(&r, &subject(&b.c["c4"], Some(&b.clone)), &registry());
            assert_eq!((f.status, f.decided_by), (N, Some(EvidenceKind::Ancestry)));
            assert!(
                f.evidence[0]
                    .detail
                    .contains("introducing commit not known")
            );
        }

        #[test]
        fn event_commits_decide_without_a_clone_unless_a_limit_could_exclude_them() {
            let b = build();
            let r = rule(&[("introduced", &b.c["c1"]), ("fixed", &b.c["c3"])], "", "");
            let f = evaluate(&r, &subject(&b.c["c1"], None), &registry());
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::KnownPin)));
            assert_eq!(status(&r, &b.c["c3"], None), N);
            // Any other commit cannot be told without a clone.
            assert_eq!(status(&r, &b.c["c2"], None), U);
            assert_eq!(status(&r, &b.c["c1"].to_uppercase(), None), A);
            let r = rule(
                &[("introduced", &b.c["c1"]), ("last_affected", &b.c["c2"])],
                "",
                "",
            );
            assert_eq!(status(&r, &b.c["c2"], None), A);
            let r = rule(&[("introduced", &b.c["c1"]), ("limit", &b.c["c3"])], "", "");
            assert_eq!(status(&r, &b.c["c1"], None), U);
            assert_eq!(status(&r, &b.c["c3"], None), N);
            // With a clone holding the pin, ancestry decides (the limit excludes c3's children).
            assert_eq!(status(&r, &b.c["c1"], Some(&b.clone)), A);
        }

        #[test]
        fn known_pins_and_prefixes() {
            let b = build();
            let pins = format!(
                "      known_affected_pins:\n        - commit: {}\n          note: \"a release\"\n      known_affected_prefixes:\n        - commit: \"{}\"\n",
                b.c["s0"],
                &b.c["q1"][..10]
            );
            // A range that says nothing about these pins ("introduced" at p1, on its own branch).
            let r = rule(&[("introduced", &b.c["p1"])], &pins, "");
            let f = evaluate(&r, &subject(&b.c["s0"], None), &registry());
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::KnownPin)));
            assert!(f.evidence.iter().any(|e| e.detail.contains("a release")));
            // A prefix counts only through a clone that resolves it to the pin.
            assert_eq!(status(&r, &b.c["q1"], None), U);
            let f = evaluate(&r, &subject(&b.c["q1"], Some(&b.clone)), &registry());
            let known = f.evidence.iter().find(|e| e.kind == EvidenceKind::KnownPin);
            assert_eq!(known.map(|e| e.status), Some(A), "{:?}", f.evidence);
            // Ancestry says not affected (q1 does not contain p1): the two disagree.
            assert_eq!(f.status, U);
            // Another pin: the prefix gives no evidence; ancestry decides.
            let f = evaluate(&r, &subject(&b.c["c4"], Some(&b.clone)), &registry());
            assert!(f.evidence.iter().all(|e| e.kind != EvidenceKind::KnownPin));
            assert_eq!(f.status, N);
        }

        /// A fix published only as a short SHA is a `fixed` event once a clone resolves it: a
        /// pin that contains it is not affected, one that does not stays undecided (the
        /// introduction is unknown), and without a clone the prefix decides nothing.
        #[test]
        fn fixed_prefixes_count_through_a_clone() {
            let b = build();
            let spec = format!(
                "      introduced_unknown: true\n      fixed_prefixes:\n        - commit: \"{}\"\n          note: \"quoted short\"\n",
                &b.c["c3"][..9]
            );
            let r = rule(&[("introduced", "0")], &spec, "");
            assert_eq!(status(&r, &b.c["c4"], Some(&b.clone)), N);
            assert_eq!(status(&r, &b.c["c3"], Some(&b.clone)), N);
            assert_eq!(status(&r, &b.c["c2"], Some(&b.clone)), U);
            assert_eq!(status(&r, &b.c["c4"], None), U);
            // A prefix the clone does not resolve (here: no such commit) fixes nothing.
            let spec = "      introduced_unknown: true\n      fixed_prefixes:\n        - commit: \"0000000\"\n";
            let r = rule(&[("introduced", "0")], spec, "");
            assert_eq!(status(&r, &b.c["c4"], Some(&b.clone)), U);
        }

        #[test]
        fn a_range_for_another_repository_does_not_apply() {
            let b = build();
            let r = rule(&[("introduced", &b.c["c1"])], "", "");
            let reg = registry();
            assert!(applies(&r, "flash-attention", &reg));
            assert!(!applies(&r, "flashmla", &reg));
            assert!(!applies(&r, "no-such-component", &reg));
            // Evaluated on another component, the range gives no evidence: unknown, not clean.
            let mut s = subject(&b.c["c1"], Some(&b.clone));
            s.component = "flashmla";
            let f = evaluate(&r, &s, &reg);
            assert_eq!((f.status, f.evidence.len()), (U, 0));
        }

        #[test]
        fn installed_versions_and_recorded_verdicts_are_evidence() {
            let b = build();
            let pypi = "  - package:\n      ecosystem: PyPI\n      name: vllm\n    ranges:\n      - type: ECOSYSTEM\n        events:\n          - introduced: \"0.30.0\"\n          - fixed: \"0.33.0\"\n";
            let mut r = rule(&[("introduced", &b.c["c1"])], "", "");
            let extra = parse(
                "v.yaml",
                &format!("id: TEST-EVAL-2\nsummary: \"t\"\naffected:\n{pypi}database_specific:\n  severity: high\n  kind: performance\n"),
                &registry(),
            )
            .expect("version rule parses");
            r.affected.extend(extra.affected);
            let with = |version: &str, eco: &str| {
                let mut s = subject(&b.c["c2"], None);
                s.packages = vec![(eco.to_string(), "VLLM".to_string(), version.to_string())];
                evaluate(&r, &s, &registry())
            };
            let f = with("0.31.0", "pypi");
            assert_eq!(
                (f.status, f.decided_by),
                (A, Some(EvidenceKind::VersionRange))
            );
            let f = with("0.33.0", "PyPI");
            assert_eq!(
                (f.status, f.decided_by),
                (N, Some(EvidenceKind::VersionRange))
            );
            assert_eq!(with("not a version", "PyPI").status, U);
            // Another ecosystem's package of that name is no evidence.
            assert_eq!(with("0.31.0", "npm").status, U);
            // A recorded verdict for this rule counts; one for another rule does not.
            let recorded = |id: &str, st: Status| {
                let mut s = subject(&b.c["c2"], None);
                s.recorded = vec![(
                    RuleId::from(id),
                    Evidence {
                        kind: EvidenceKind::Recorded,
                        status: st,
                        detail: "ledger".to_string(),
                        file: None,
                        line: None,
                    },
                )];
                evaluate(&r, &s, &registry())
            };
            let f = recorded("test-eval-1", A);
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::Recorded)));
            assert_eq!(recorded("TEST-EVAL-9", A).status, U);
        }

        struct Mem(BTreeMap<&'static str, &'static str>);
        impl SourceFiles for Mem {
            fn read(&self, path: &str) -> Result<Option<String>, String> {
                Ok(self.0.get(path).map(|t| t.to_string()))
            }
        }

        #[test]
        fn the_signature_decides_first_and_its_doubt_blocks_clean_answers() {
            let b = build();
            let sig = "  signature:\n    language: python\n    conditions:\n      - id: call-without-num-splits\n        file: m.py\n        exists: { text: BlockInfo }\n";
            let r = rule(
                &[("introduced", &b.c["c1"]), ("fixed", &b.c["c3"])],
                "",
                sig,
            );
            let on = |files: &Mem, pin: &str| {
                let mut s = subject(&b.c[pin], Some(&b.clone));
                s.sources = Some(files);
                evaluate(&r, &s, &registry())
            };
            let buggy = Mem(BTreeMap::from([("m.py", "x = BlockInfo(1)\n")]));
            let clean = Mem(BTreeMap::from([("m.py", "x = Other(1)\n")]));
            let missing = Mem(BTreeMap::new());
            // Ancestry says affected at c2 and not affected at c4; the stronger signature that
            // sees the shape wins over ancestry's clean answer.
            let f = on(&buggy, "c4");
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::Signature)));
            let f = on(&buggy, "c2");
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::Signature)));
            assert_eq!(f.evidence[0].file.as_deref(), Some("m.py"));
            assert_eq!(f.evidence[0].line, Some(1));
            let f = on(&clean, "c4");
            assert_eq!((f.status, f.decided_by), (N, Some(EvidenceKind::Signature)));
            // A clean signature against affected ancestry: they disagree.
            let f = on(&clean, "c2");
            assert_eq!((f.status, f.decided_by), (U, None), "disagreement");
            // The file is gone: undecidable, and ancestry's clean answer does not take over.
            let f = on(&missing, "c4");
            assert_eq!(f.status, U, "{:?}", f.evidence);
            assert_eq!(on(&missing, "c2").status, A);
            // No sources at all: the signature takes no part; ancestry decides.
            let f = evaluate(&r, &subject(&b.c["c4"], Some(&b.clone)), &registry());
            assert_eq!((f.status, f.decided_by), (N, Some(EvidenceKind::Ancestry)));
            assert!(
                f.evidence
                    .iter()
                    .any(|e| e.kind == EvidenceKind::Signature && e.status == U)
            );
        }

        #[test]
        fn requires_gates_the_finding_on_another_components_pin() {
            let b = build();
            let requires = |events: &str| {
                format!(
                    "  requires:\n    - component: vllm\n      note: \"the code path\"\n      ranges:\n        - type: GIT\n          repo: https://github.com/vllm-project/vllm\n          events:\n{events}"
                )
            };
            let holds_from_c1 = requires(&format!(
                "            - introduced: \"{}\"\n            - fixed: \"{}\"\n",
                b.c["c1"], b.c["c3"]
            ));
            let r = rule(&[("introduced", &b.c["c1"])], "", &holds_from_c1);
            let vllm = |name: &str| OtherPin {
                component: "vllm".to_string(),
                commit: ObjectId::from_hex(b.c[name].as_bytes()).ok(),
                commit_unknown: None,
                clone: Some(&b.clone),
            };
            let fa = subject(&b.c["c2"], Some(&b.clone));
            let reg = registry();
            // The condition holds: the pin's verdict stands.
            let f = evaluate_with(&r, &fa, &reg, &[vllm("c2")]);
            assert_eq!((f.status, f.decided_by), (A, Some(EvidenceKind::Ancestry)));
            // It does not hold: not affected, decided by the requirement, its evidence first.
            let f = evaluate_with(&r, &fa, &reg, &[vllm("c4")]);
            assert_eq!(
                (f.status, f.decided_by),
                (N, Some(EvidenceKind::Requirement))
            );
            assert_eq!(f.evidence[0].kind, EvidenceKind::Requirement);
            assert!(f.evidence[0].detail.contains("the code path"));
            // Two conditions, the first holds and the second fails: the failing one is listed
            // first, as the finding's reason.
            let both = format!(
                "{holds_from_c1}{}",
                requires(&format!("            - introduced: \"{}\"\n", b.c["c4"]))
                    .trim_start_matches("  requires:\n")
            );
            let r2 = rule(&[("introduced", &b.c["c1"])], "", &both);
            let f = evaluate_with(&r2, &fa, &reg, &[vllm("c2")]);
            assert_eq!(
                (f.status, f.decided_by),
                (N, Some(EvidenceKind::Requirement))
            );
            assert_eq!(
                (f.evidence[0].kind, f.evidence[0].status),
                (EvidenceKind::Requirement, N),
                "{:?}",
                f.evidence
            );
            // The requirement fails on a clean pin: still not affected, by the pin's own evidence.
            let clean = subject(&b.c["c0"], Some(&b.clone));
            let f = evaluate_with(&r, &clean, &reg, &[vllm("c4")]);
            assert_eq!((f.status, f.decided_by), (N, Some(EvidenceKind::Ancestry)));
            assert_eq!(f.evidence[0].kind, EvidenceKind::Ancestry);
            // Cannot be checked: at best unknown, never affected and never clean on that basis.
            let f = evaluate_with(&r, &fa, &reg, &[]);
            assert_eq!((f.status, f.decided_by), (U, None));
            let mut unknown_rev = vllm("c2");
            unknown_rev.commit = None;
            unknown_rev.commit_unknown = Some("a plain directory has no revision".to_string());
            let f = evaluate_with(&r, &fa, &reg, &[unknown_rev]);
            assert_eq!(f.status, U);
            assert!(
                f.evidence
                    .iter()
                    .any(|e| e.detail.contains("plain directory"))
            );
            let f = evaluate_with(&r, &clean, &reg, &[]);
            assert_eq!(f.status, N);
            // The other pin is missing from the clone: unknown.
            let mut absent = vllm("c2");
            absent.commit = ObjectId::from_hex(b"1234567890123456789012345678901234567890").ok();
            assert_eq!(evaluate_with(&r, &fa, &reg, &[absent]).status, U);
            // Without a clone, the other pin equal to a range event still decides.
            let mut at_event = vllm("c1");
            at_event.clone = None;
            assert_eq!(evaluate_with(&r, &fa, &reg, &[at_event]).status, A);
        }
    }
}

#[cfg(test)]
mod lattice_tests {
    use super::*;

    fn evidence(kind: EvidenceKind, status: Status) -> Evidence {
        Evidence {
            kind,
            status,
            detail: String::new(),
            file: None,
            line: None,
        }
    }

    #[test]
    fn a_rule_that_does_not_apply_is_not_affected() {
        assert_eq!(absent(None), Status::NotAffected);
        for s in [Status::Affected, Status::NotAffected, Status::Unknown] {
            assert_eq!(absent(Some(s)), s);
        }
    }

    #[test]
    fn over_values_is_clean_only_when_every_value_is() {
        use Status::*;
        let v = |statuses: &[Status], default| over_values(statuses, default);
        assert_eq!(
            v(&[Affected, NotAffected], true),
            SetVerdict {
                status: Affected,
                by_default: true
            }
        );
        assert_eq!(
            v(&[Affected, NotAffected], false),
            SetVerdict {
                status: Unknown,
                by_default: false
            }
        );
        assert_eq!(
            v(&[NotAffected, Affected], true),
            SetVerdict {
                status: Unknown,
                by_default: false
            }
        );
        assert_eq!(v(&[Unknown, Affected], true).status, Unknown);
        assert_eq!(
            v(&[Affected, Affected], false),
            SetVerdict {
                status: Affected,
                by_default: false
            }
        );
        assert_eq!(v(&[NotAffected, NotAffected], true).status, NotAffected);
        assert_eq!(v(&[NotAffected, Unknown], true).status, Unknown);
        assert_eq!(v(&[Unknown], false).status, Unknown);
        assert_eq!(v(&[NotAffected], false).status, NotAffected);
        // Nothing to decide over is never an answer.
        assert_eq!(
            v(&[], true),
            SetVerdict {
                status: Unknown,
                by_default: false
            }
        );
    }

    #[test]
    fn evidence_on_its_own_decides_unless_it_could_not_tell() {
        let e = evidence(EvidenceKind::Hygiene, Status::Affected);
        assert_eq!(
            on_its_own(&e),
            Verdict {
                status: Status::Affected,
                decided_by: Some(EvidenceKind::Hygiene)
            }
        );
        let e = evidence(EvidenceKind::Fingerprint, Status::NotAffected);
        assert_eq!(on_its_own(&e).decided_by, Some(EvidenceKind::Fingerprint));
        let e = evidence(EvidenceKind::Fingerprint, Status::Unknown);
        assert_eq!(
            on_its_own(&e),
            Verdict {
                status: Status::Unknown,
                decided_by: None
            }
        );
    }

    #[test]
    fn a_distrusted_verdict_is_never_clean() {
        let clean = Verdict {
            status: Status::NotAffected,
            decided_by: Some(EvidenceKind::Signature),
        };
        assert_eq!(
            distrusted(clean),
            Verdict {
                status: Status::Unknown,
                decided_by: None
            }
        );
        for v in [
            Verdict {
                status: Status::Affected,
                decided_by: Some(EvidenceKind::Signature),
            },
            Verdict {
                status: Status::Unknown,
                decided_by: None,
            },
        ] {
            assert_eq!(distrusted(v), v);
        }
    }
}
