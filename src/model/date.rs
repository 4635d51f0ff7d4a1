//! Calendar dates (`YYYY-MM-DD`) for ignore-entry expiry and database dates.

use serde::Serialize;

/// A date, `YYYY-MM-DD`, compared as (year, month, day).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: u32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    /// Parse `YYYY-MM-DD` (a real calendar day).
    pub fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = s.get(r)?;
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse().ok()
            } else {
                None
            }
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days)
            .contains(&day)
            .then_some(Date { year, month, day })
    }

    /// Today in UTC, from the system clock; `PINPROBE_TODAY=YYYY-MM-DD` overrides it (tests).
    pub fn today() -> Date {
        if let Some(d) = std::env::var("PINPROBE_TODAY")
            .ok()
            .and_then(|s| Date::parse(&s))
        {
            return d;
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Date::from_days((secs / 86_400) as i64)
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`), the inverse of
    /// [`Date::from_days`].
    pub fn to_days(&self) -> i64 {
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = i64::from(self.year) - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = if m > 2 { m - 3 } else { m + 9 };
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    pub fn from_days(z: i64) -> Date {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as u32;
        Date { year, month, day }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Date;

    #[test]
    fn days_round_trip() {
        for z in [-1, 0, 59, 365, 11_016, 20_000, 20_787, 60_000] {
            assert_eq!(Date::from_days(z).to_days(), z);
        }
        assert_eq!(Date::parse("1970-01-01").map(|d| d.to_days()), Some(0));
    }

    #[test]
    fn dates_parse_and_order() {
        assert_eq!(
            Date::parse("2026-02-28"),
            Some(Date {
                year: 2026,
                month: 2,
                day: 28
            })
        );
        assert_eq!(Date::parse("2026-02-29"), None);
        assert!(Date::parse("2024-02-29").is_some());
        assert_eq!(Date::parse("2026-13-01"), None);
        assert_eq!(Date::parse("2026-1-01"), None);
        assert_eq!(Date::parse("+026-01-01"), None);
        assert!(Date::parse("2026-01-02") > Date::parse("2025-12-31"));
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(20_454).to_string(), "2026-01-01");
        assert_eq!(Date::from_days(19_782).to_string(), "2024-02-29");
    }
}
