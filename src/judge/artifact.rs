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
