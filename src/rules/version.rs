//! Package versions (PEP 440 release segments, with pre/post/dev tags compared coarsely) and
//! OSV `ECOSYSTEM` range matching.

use super::model::Event;
use pep508_rs::pep440_rs::Version as Pep440;
use std::cmp::Ordering;
use std::str::FromStr;
use version_ranges::Ranges;

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

/// The PEP 440 versions an OSV ECOSYSTEM range's events make affected (events taken in version
/// order, as [`in_range`] takes them); `None` when an event's version does not parse.
pub fn affected_set(events: &[Event]) -> Option<Ranges<Pep440>> {
    let mut parsed = Vec::new();
    for event in events {
        let at = if event.value() == "0" {
            None
        } else {
            Some(Pep440::from_str(event.value()).ok()?)
        };
        parsed.push((event, at));
    }
    // `None` (the start of history) sorts first.
    parsed.sort_by(|a, b| a.1.cmp(&b.1));
    let from = |start: &Option<Pep440>| match start {
        Some(v) => Ranges::higher_than(v.clone()),
        None => Ranges::full(),
    };
    let mut out = Ranges::empty();
    let mut open: Option<Option<Pep440>> = None;
    for (event, at) in parsed {
        match (event, &at) {
            (Event::Introduced(_), _) if open.is_none() => open = Some(at),
            (Event::Fixed(_) | Event::Limit(_), Some(end)) => {
                if let Some(start) = open.take() {
                    let span = from(&start).intersection(&Ranges::strictly_lower_than(end.clone()));
                    out = out.union(&span);
                }
            }
            (Event::LastAffected(_), Some(end)) => {
                if let Some(start) = open.take() {
                    let span = from(&start).intersection(&Ranges::lower_than(end.clone()));
                    out = out.union(&span);
                }
            }
            // A fix "at 0" fixes nothing that is not yet introduced.
            _ => {}
        }
    }
    if let Some(start) = open {
        out = out.union(&from(&start));
    }
    Some(out)
}

/// How a set of allowed versions meets an affected set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetAnswer {
    /// Every allowed version is affected.
    All,
    /// No allowed version is.
    None,
    /// Some are, some are not: which one is installed decides.
    Some,
}

/// Whether the versions `allowed` lie in the affected set of `events`; `None` when an event
/// does not parse.
pub fn set_in_range(allowed: &Ranges<Pep440>, events: &[Event]) -> Option<SetAnswer> {
    let affected = affected_set(events)?;
    Some(if allowed.is_disjoint(&affected) {
        SetAnswer::None
    } else if allowed.subset_of(&affected) {
        SetAnswer::All
    } else {
        SetAnswer::Some
    })
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

    #[test]
    fn version_sets_against_ranges() {
        let set = |spec: &str| crate::pin::python::allowed_by(spec).expect(spec);
        let r = ev("0.30.0", "0.33.0");
        assert_eq!(set_in_range(&set("==0.31.0"), &r), Some(SetAnswer::All));
        assert_eq!(set_in_range(&set(">=0.30,<0.33"), &r), Some(SetAnswer::All));
        assert_eq!(set_in_range(&set(">=0.33"), &r), Some(SetAnswer::None));
        assert_eq!(set_in_range(&set("<0.30"), &r), Some(SetAnswer::None));
        assert_eq!(set_in_range(&set(">=0.29"), &r), Some(SetAnswer::Some));
        assert_eq!(set_in_range(&set(""), &r), Some(SetAnswer::Some));
        // From the start of history to a fix; last_affected is inclusive; a reintroduction.
        let r = ev("0", "0.0.9");
        assert_eq!(set_in_range(&set("==0.0.8"), &r), Some(SetAnswer::All));
        assert_eq!(set_in_range(&set("==0.0.9"), &r), Some(SetAnswer::None));
        let r = vec![
            Event::Introduced("1.0".into()),
            Event::LastAffected("1.2".into()),
            Event::Introduced("2.0".into()),
        ];
        assert_eq!(set_in_range(&set("==1.2"), &r), Some(SetAnswer::All));
        assert_eq!(set_in_range(&set(">1.2,<2"), &r), Some(SetAnswer::None));
        assert_eq!(set_in_range(&set(">=3"), &r), Some(SetAnswer::All));
        assert_eq!(
            set_in_range(&set("==1.0"), &[Event::Introduced("x".into())]),
            None
        );
        // The set agrees with `in_range` on single versions.
        let r = ev("0.30.0", "0.33.0");
        for v in [
            "0.29.0",
            "0.30.0",
            "0.32.1",
            "0.33.0",
            "0.33.0rc1",
            "0.26.0",
        ] {
            let one = set(&format!("=={v}"));
            let all = set_in_range(&one, &r) == Some(SetAnswer::All);
            assert_eq!(Some(all), in_range(v, &r), "{v}");
        }
    }
}
