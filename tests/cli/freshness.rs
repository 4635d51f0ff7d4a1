//! The rule database's age, against a pinned clock (`PINPROBE_TODAY`): quiet while it is young,
//! a warning past 30 days on every run, and `--max-db-age DAYS` an error (exit 2, one line,
//! before anything is scanned) past its own limit. The database's date is the latest
//! `modified` of its rules (here the built-in database's, as a report states it).

use crate::common;

use common::run::fixture_path;
use common::*;

/// The built-in database's date, as a report states it.
fn db_date() -> String {
    let demo = fixture_path("demo-vllm").display().to_string();
    let run = Pinprobe::new(&["scan", "--format", "json", "-q", &demo]).run();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    json["rules_date"].as_str().expect("rules_date").to_string()
}

/// `date` plus `days`, through the proleptic Gregorian calendar (`date -d` agrees).
fn plus_days(date: &str, days: i64) -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "-d", &format!("{date} +{days} days"), "+%Y-%m-%d"])
        .output()
        .expect("date");
    String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_string()
}

fn scan_on(today: &str, extra: &[&str]) -> Run {
    let demo = fixture_path("demo-vllm").display().to_string();
    let mut args = vec!["scan", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(&demo);
    Pinprobe::new(&args).env("PINPROBE_TODAY", today).run()
}

#[test]
fn an_old_rule_database_is_warned_about_by_default_and_fails_past_max_db_age() {
    let date = db_date();
    // 30 days old: still quiet.
    let young = scan_on(&plus_days(&date, 30), &[]);
    assert_eq!(young.code, 1, "{}", young.stderr);
    assert!(!young.stderr.contains("days old"), "{}", young.stderr);
    // 31 days: a warning saying how old, and how to update; the scan still runs.
    let old = scan_on(&plus_days(&date, 31), &[]);
    assert_eq!(old.code, 1, "{}", old.stderr);
    let warnings: Vec<&str> = old
        .stderr
        .lines()
        .filter(|l| l.contains("days old"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", old.stderr);
    assert!(
        warnings[0].contains(&format!("dated {date}) is 31 days old"))
            && warnings[0].contains("pinprobe rules pull"),
        "{}",
        warnings[0]
    );
    assert!(!old.stdout.is_empty());
    // -q silences the warning, not the scan.
    let quiet = scan_on(&plus_days(&date, 31), &["-q"]);
    assert!(!quiet.stderr.contains("days old"), "{}", quiet.stderr);
    // --max-db-age: within it, the scan runs as usual; past it, exit 2 with one line and no report.
    let within = scan_on(&plus_days(&date, 10), &["--max-db-age", "10"]);
    assert_eq!(within.code, 1, "{}", within.stderr);
    let past = scan_on(&plus_days(&date, 11), &["--max-db-age", "10"]);
    assert_eq!(past.code, 2, "{}", past.stderr);
    assert!(past.stdout.is_empty(), "{}", past.stdout);
    let errors: Vec<&str> = past.stderr.lines().collect();
    assert_eq!(errors.len(), 1, "{}", past.stderr);
    assert!(
        errors[0].starts_with("pinprobe: error: ")
            && errors[0].contains("is 11 days old, older than --max-db-age 10"),
        "{}",
        errors[0]
    );
}

#[test]
fn diff_fails_past_max_db_age_too() {
    let date = db_date();
    let tmp = tempfile::tempdir().expect("tmp");
    vllm_tree(
        tmp.path(),
        "https://github.com/vllm-project/flash-attention.git",
        "506341a143fcabd4bb79052a7605ada727d6b3f5",
    );
    init(tmp.path());
    commit(tmp.path(), "base");
    let run = Pinprobe::new(&["diff", "HEAD", "HEAD", "--max-db-age", "0"])
        .dir(tmp.path())
        .env("PINPROBE_TODAY", plus_days(&date, 1))
        .run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("older than --max-db-age 0"),
        "{}",
        run.stderr
    );
}
