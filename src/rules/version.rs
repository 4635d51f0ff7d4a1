//! Package versions (PEP 440 release segments, with pre/post/dev tags compared coarsely) and
//! OSV `ECOSYSTEM` range matching.

use super::model::Event;
use std::cmp::Ordering;

/// A version: numeric release segments plus an optional suffix that sorts before the release
/// (`rc1`, `a2`, `b3`, `dev4`) or after it (`post1`, `+local`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    release: Vec<u64>,
    /// -1 for pre-releases and dev releases, 0 for the release, 1 for post/local.
    phase: i8,
    suffix: String,
}

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim().trim_start_matches('v');
        let end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (nums, rest) = s.split_at(end);
        let nums = nums.trim_end_matches('.');
        if nums.is_empty() {
            return None;
        }
        let release = nums
            .split('.')
            .map(|p| p.parse::<u64>().ok())
            .collect::<Option<Vec<_>>>()?;
        let rest = rest.trim_start_matches(['.', '-', '_']);
        let phase = if rest.is_empty() {
            0
        } else if rest.starts_with("post") || rest.starts_with('+') {
            1
        } else if ["a", "b", "rc", "c", "dev", "alpha", "beta", "pre"]
            .iter()
            .any(|p| rest.starts_with(p))
        {
            -1
        } else {
            return None;
        };
        Some(Version {
            release,
            phase,
            suffix: rest.to_string(),
        })
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let len = self.release.len().max(other.release.len());
        for i in 0..len {
            let a = self.release.get(i).copied().unwrap_or(0);
            let b = other.release.get(i).copied().unwrap_or(0);
            match a.cmp(&b) {
                Ordering::Equal => {}
                other => return other,
            }
        }
        self.phase
            .cmp(&other.phase)
            .then_with(|| self.suffix.cmp(&other.suffix))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Whether `version` falls in an OSV ECOSYSTEM range (events sorted by version, as OSV asks).
/// `None` when a version does not parse.
pub fn in_range(version: &str, events: &[Event]) -> Option<bool> {
    let v = Version::parse(version)?;
    let mut parsed = Vec::new();
    for event in events {
        let at = if event.value() == "0" {
            None
        } else {
            Some(Version::parse(event.value())?)
        };
        parsed.push((event, at));
    }
    parsed.sort_by(|a, b| a.1.cmp(&b.1));
    let mut affected = false;
    for (event, at) in parsed {
        let reached = at.as_ref().is_none_or(|at| &v >= at);
        match event {
            Event::Introduced(_) if reached => affected = true,
            Event::Fixed(_) | Event::Limit(_) if reached => affected = false,
            Event::LastAffected(_) if at.as_ref().is_some_and(|at| &v > at) => affected = false,
            _ => {}
        }
    }
    Some(affected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(i: &str, f: &str) -> Vec<Event> {
        vec![Event::Introduced(i.into()), Event::Fixed(f.into())]
    }

    #[test]
    fn vllm_range() {
        let r = ev("0.30.0", "0.33.0");
        for (v, want) in [
            ("0.29.0", false),
            ("0.30.0", true),
            ("0.31.0", true),
            ("0.32.0", true),
            ("0.32.1", true),
            ("0.33.0", false),
            ("0.33.0rc1", true),
            ("0.26.0", false),
            ("0.30.0+cu129", true),
        ] {
            assert_eq!(in_range(v, &r), Some(want), "{v}");
        }
        assert_eq!(in_range("banana", &r), None);
    }

    #[test]
    fn ordering() {
        let p = |s| Version::parse(s).expect(s);
        assert!(p("0.10.0") > p("0.9.9"));
        assert!(p("1.0rc1") < p("1.0"));
        assert!(p("1.0.post1") > p("1.0"));
        assert_eq!(p("1.0").cmp(&p("1.0.0")), Ordering::Equal);
    }
}
