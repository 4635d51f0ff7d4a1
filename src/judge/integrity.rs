//! A shipped copy's verdict and its files' integrity: what RECORD says of each file the verdict
//! read becomes evidence beside it, and in a wheel a member that disagrees with RECORD (or that
//! RECORD does not list) leaves no clean verdict ([`evaluate::distrusted`]).

use crate::model::{Evidence, EvidenceKind, Finding, Status};
use crate::pin::shipped::FileRead;
use crate::pin::shipped::record::Check;
use crate::rules::evaluate::{self, Verdict};

/// Whether a file read tells of an altered or damaged wheel member: modified after the build,
/// or not listed in RECORD.
fn altered(read: &FileRead) -> bool {
    matches!(read.check, Some(Check::Modified { .. } | Check::NotListed))
}

/// `finding`, a rule's verdict on a shipped copy's files, with the integrity evidence of each
/// file it read (`reads`; files that match RECORD add nothing).
///
/// A wheel (`wheel`) is a build product whose RECORD the build wrote: a member that disagrees
/// with it (or is missing from it) means the archive was altered or damaged after the build, so
/// a clean verdict resting on its files is not trusted (fail closed). An installed environment
/// is different: a file edited after install (a hand-applied fix) is what runs, so the verdict
/// follows it, with the integrity evidence beside it.
pub fn with_integrity(mut finding: Finding, reads: &[FileRead], wheel: bool) -> Finding {
    let untrusted = wheel && reads.iter().any(altered);
    if untrusted {
        let Verdict { status, decided_by } = evaluate::distrusted(Verdict {
            status: finding.status,
            decided_by: finding.decided_by,
        });
        finding.status = status;
        finding.decided_by = decided_by;
    }
    for read in reads {
        let detail = match &read.check {
            Some(Check::Matches) => continue,
            Some(Check::Modified { expected, actual }) => format!(
                "{} was modified after install: RECORD has {expected}, the file has {actual}",
                read.path
            ),
            Some(Check::NotListed) => format!("{} is not listed in RECORD", read.path),
            Some(Check::NoHash) => format!("{} has no hash in RECORD", read.path),
            None => format!("{}: no RECORD to check it against", read.path),
        };
        let detail = if untrusted && altered(read) {
            format!("{detail} (a wheel's members must match its RECORD: no clean verdict)")
        } else {
            detail
        };
        // Integrity evidence is informational: it never decides on its own.
        finding.evidence.push(Evidence {
            kind: EvidenceKind::Integrity,
            status: Status::Unknown,
            detail,
            file: Some(read.path.clone()),
            line: None,
        });
    }
    finding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(status: Status) -> Finding {
        Finding {
            rule: "R".into(),
            status,
            severity: crate::model::Severity::High,
            summary: "s".into(),
            component: "flash-attention".into(),
            decided_by: (status != Status::Unknown).then_some(EvidenceKind::Signature),
            evidence: Vec::new(),
            location: None,
            suppressed: None,
        }
    }

    fn read(path: &str, check: Option<Check>) -> FileRead {
        FileRead {
            path: path.into(),
            check,
        }
    }

    fn modified() -> Option<Check> {
        Some(Check::Modified {
            expected: "sha256=aa".into(),
            actual: "sha256=bb".into(),
        })
    }

    fn details(f: &Finding) -> Vec<&str> {
        f.evidence.iter().map(|e| e.detail.as_str()).collect()
    }

    #[test]
    fn a_wheel_member_that_disagrees_with_record_leaves_no_clean_verdict() {
        for altered in [modified(), Some(Check::NotListed)] {
            let f = with_integrity(
                verdict(Status::NotAffected),
                &[read("a.py", Some(Check::Matches)), read("b.py", altered)],
                true,
            );
            assert_eq!(f.status, Status::Unknown);
            assert_eq!(f.decided_by, None);
            assert_eq!(f.evidence.len(), 1, "a matching file adds nothing");
            assert!(
                f.evidence[0]
                    .detail
                    .ends_with(" (a wheel's members must match its RECORD: no clean verdict)"),
                "{}",
                f.evidence[0].detail
            );
            assert_eq!(f.evidence[0].kind, EvidenceKind::Integrity);
            assert_eq!(f.evidence[0].status, Status::Unknown);
            assert_eq!(f.evidence[0].file.as_deref(), Some("b.py"));
            assert_eq!(f.evidence[0].line, None);
        }
        // An affected verdict stays affected.
        let f = with_integrity(verdict(Status::Affected), &[read("b.py", modified())], true);
        assert_eq!(f.status, Status::Affected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Signature));
    }

    #[test]
    fn an_installed_file_edited_after_install_is_what_runs() {
        let f = with_integrity(
            verdict(Status::NotAffected),
            &[
                read("b.py", modified()),
                read("c.py", Some(Check::NotListed)),
            ],
            false,
        );
        assert_eq!(f.status, Status::NotAffected);
        assert_eq!(f.decided_by, Some(EvidenceKind::Signature));
        assert_eq!(
            details(&f),
            [
                "b.py was modified after install: RECORD has sha256=aa, the file has sha256=bb",
                "c.py is not listed in RECORD",
            ]
        );
    }

    #[test]
    fn files_record_cannot_vouch_for_are_listed_but_do_not_distrust() {
        let f = with_integrity(
            verdict(Status::NotAffected),
            &[read("d.pyc", Some(Check::NoHash)), read("e.py", None)],
            true,
        );
        assert_eq!(f.status, Status::NotAffected);
        assert_eq!(
            details(&f),
            [
                "d.pyc has no hash in RECORD",
                "e.py: no RECORD to check it against",
            ]
        );
        // Beside an altered member, only the altered one carries the wheel's note.
        let f = with_integrity(
            verdict(Status::NotAffected),
            &[read("d.pyc", Some(Check::NoHash)), read("b.py", modified())],
            true,
        );
        assert_eq!(f.status, Status::Unknown);
        assert_eq!(details(&f)[0], "d.pyc has no hash in RECORD");
        assert!(details(&f)[1].ends_with("no clean verdict)"));
    }
}
