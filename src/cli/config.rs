//! The run settings (fail thresholds, repositories, mirrors, offline, formats; parsed and
//! shape-checked by [`crate::scan::policy`]) validated and merged under the command line: a flag
//! always wins, a `--repo` replaces the file's clone of that component, and the file's formats
//! apply only when no `--format` is given.
//!
//! Where the settings come from: a file the user names, `--config FILE` (`--ignore` is the same
//! flag), else the user-level config, `$XDG_CONFIG_HOME/pinprobe/config.yaml` (default
//! `~/.config/pinprobe/config.yaml`). Never from a scanned tree: a `.pinprobe.yaml` inside a
//! target (for `diff`, BASE's or HEAD's) is data, not orders. Its `ignore` entries narrow what
//! is reported; every setting it holds ([`TREE_FORBIDDEN`]) is ignored with one warning line
//! each, so a tree cannot write files, move the cache, choose clones, mirrors or the network,
//! or loosen the gate of the scan that judges it.

use super::output::{Rendering, parse_rendering};
use crate::exit::FailOn;
use crate::scan::policy::{self, Policy, Setting};
use clap::ValueEnum;
use std::path::{Path, PathBuf};

/// Validated settings, empty where the file says nothing.
#[derive(Debug, Default)]
pub struct Config {
    pub fail_on: Option<FailOn>,
    pub fail_on_unknown: Option<FailOn>,
    /// Clone paths, resolved against the file's folder.
    pub repos: Vec<(String, PathBuf)>,
    pub mirrors: Vec<(String, String)>,
    pub offline: bool,
    pub formats: Vec<Rendering>,
    /// One line per setting found where settings may not come from (a scanned tree's file).
    pub warnings: Vec<String>,
}

/// The settings a scanned tree's `.pinprobe.yaml` may not set, and what each would act on.
pub const TREE_FORBIDDEN: &[(&str, &str)] = &[
    ("fail_on", "the gate"),
    ("fail_on_unknown", "the gate"),
    ("repositories", "which clones are read"),
    ("mirrors", "where history is fetched from"),
    ("offline", "network access"),
    ("formats", "which files are written"),
];

/// The user-level config file: `$XDG_CONFIG_HOME/pinprobe/config.yaml`, else
/// `~/.config/pinprobe/config.yaml` (`None` without either variable).
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("pinprobe").join("config.yaml"))
}

/// One warning line per setting a scanned tree's policy holds (none of them applies).
pub fn tree_warnings(policy: &Policy) -> Vec<String> {
    let s = &policy.settings;
    let mut found: Vec<(&str, Option<usize>)> = Vec::new();
    if let Some(v) = &s.fail_on {
        found.push(("fail_on", Some(v.line)));
    }
    if let Some(v) = &s.fail_on_unknown {
        found.push(("fail_on_unknown", Some(v.line)));
    }
    if let Some(v) = s.repositories.first() {
        found.push(("repositories", Some(v.line)));
    }
    if let Some(v) = s.mirrors.first() {
        found.push(("mirrors", Some(v.line)));
    }
    if s.offline.is_some() {
        found.push(("offline", None));
    }
    if let Some(v) = s.formats.first() {
        found.push(("formats", Some(v.line)));
    }
    found
        .into_iter()
        .map(|(key, line)| {
            let what = TREE_FORBIDDEN
                .iter()
                .find(|(k, _)| *k == key)
                .map_or("the run", |(_, w)| *w);
            let at = match line.filter(|l| *l > 0) {
                Some(line) => format!("{}:{line}", policy.file),
                None => policy.file.clone(),
            };
            format!(
                "{at}: `{key}` is ignored: a scanned tree's settings are data, not orders (it would set {what}); \
only its `ignore` entries apply. Set it on the command line, with --config FILE or in \
$XDG_CONFIG_HOME/pinprobe/config.yaml"
            )
        })
        .collect()
}

impl Config {
    /// Validate `policy`'s settings; relative repository paths are read from `dir`.
    pub fn from_policy(policy: &Policy, dir: &Path) -> anyhow::Result<Config> {
        let s = &policy.settings;
        let at = |line: usize| format!("{}:{line}", policy.file);
        let threshold = |key: &str, setting: &Option<Setting<String>>| match setting {
            None => Ok(None),
            Some(Setting { value, line }) => {
                FailOn::from_str(value.trim(), true).map(Some).map_err(|_| {
                    anyhow::anyhow!(
                        "{}: {key}: `{value}` is not one of low, medium, high, critical, never",
                        at(*line)
                    )
                })
            }
        };
        let mut formats = Vec::new();
        for f in &s.formats {
            formats.push(
                parse_rendering(f.value.trim())
                    .map_err(|e| anyhow::anyhow!("{}: formats: {e}", at(f.line)))?,
            );
        }
        Ok(Config {
            fail_on: threshold("fail_on", &s.fail_on)?,
            fail_on_unknown: threshold("fail_on_unknown", &s.fail_on_unknown)?,
            repos: s
                .repositories
                .iter()
                .map(|r| (r.value.0.clone(), resolve(dir, &r.value.1)))
                .collect(),
            mirrors: s.mirrors.iter().map(|m| m.value.clone()).collect(),
            offline: s.offline == Some(true),
            formats,
            warnings: Vec::new(),
        })
    }

    /// `scan`'s settings: from `--config FILE`, else the user-level config. The one target's
    /// `.pinprobe.yaml`, when it is a directory (read at `rev`), sets none of them: each setting
    /// it holds is a warning.
    pub fn for_scan(
        named: Option<&Path>,
        targets: &[String],
        rev: Option<&str>,
    ) -> anyhow::Result<Config> {
        let mut config = Config::for_user(named)?;
        if named.is_none()
            && let [target] = targets
            && Path::new(target).is_dir()
            && let Some(policy) = policy::from_tree(Path::new(target), rev)?
        {
            config.warnings.extend(tree_warnings(&policy));
        }
        Ok(config)
    }

    /// `diff`'s settings: from `--config FILE`, else the user-level config; BASE's
    /// `.pinprobe.yaml` sets none of them (each is a warning) and HEAD's is never read here.
    pub fn for_diff(named: Option<&Path>, path: &Path, base: &str) -> anyhow::Result<Config> {
        let mut config = Config::for_user(named)?;
        if named.is_none()
            && let Some(policy) = policy::from_tree(path, Some(base))?
        {
            config.warnings.extend(tree_warnings(&policy));
        }
        Ok(config)
    }

    /// The settings of the file the user names, else of the user-level config if it exists.
    fn for_user(named: Option<&Path>) -> anyhow::Result<Config> {
        if let Some(file) = named {
            return Config::from_file(file);
        }
        match user_config_path() {
            Some(file) if file.exists() => {
                let policy = Policy::load(&file)?;
                let dir = file.parent().unwrap_or(Path::new("."));
                let mut config = Config::from_policy(&policy, dir)?;
                if let Some(first) = policy.entries.first() {
                    config.warnings.push(format!(
                        "{}:{}: the user-level config's `ignore` entries are not used (pass the file with --config, or put them in the tree's .pinprobe.yaml)",
                        policy.file, first.line
                    ));
                }
                Ok(config)
            }
            _ => Ok(Config::default()),
        }
    }

    fn from_file(file: &Path) -> anyhow::Result<Config> {
        let policy = Policy::load(file)?;
        let dir = file.parent().unwrap_or(Path::new("."));
        Config::from_policy(&policy, dir)
    }

    /// The clones: every `--repo`, then the file's for components no `--repo` names.
    pub fn repos(&self, cli: &[(String, PathBuf)]) -> Vec<(String, PathBuf)> {
        let mut repos = cli.to_vec();
        for (name, path) in &self.repos {
            if !cli.iter().any(|(n, _)| n == name) {
                repos.push((name.clone(), path.clone()));
            }
        }
        repos
    }

    /// The renderings: `--format`s when given, else the file's.
    pub fn formats(&self, cli: &[Rendering]) -> Vec<Rendering> {
        if cli.is_empty() {
            self.formats.clone()
        } else {
            cli.to_vec()
        }
    }
}

/// A clone path from a settings file: `~/` is the home directory, a relative path is read from
/// the file's folder.
fn resolve(dir: &Path, path: &str) -> PathBuf {
    let path = path.trim();
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    let p = Path::new(path);
    if p.is_absolute() {
        p.into()
    } else {
        dir.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> anyhow::Result<Config> {
        let policy = Policy::parse("t/.pinprobe.yaml", text)?;
        Config::from_policy(&policy, Path::new("t"))
    }

    #[test]
    fn values_are_checked_with_their_line() {
        let c = config("fail_on: high\nfail_on_unknown: never\nformats: [json=r.json]\nrepositories:\n  fa: ../fa\n  mla: /abs/mla\n")
            .expect("valid");
        assert_eq!(c.fail_on, Some(FailOn::High));
        assert_eq!(c.fail_on_unknown, Some(FailOn::Never));
        assert_eq!(c.formats.len(), 1);
        assert_eq!(
            c.repos,
            [
                ("fa".to_string(), PathBuf::from("t/../fa")),
                ("mla".to_string(), PathBuf::from("/abs/mla"))
            ]
        );
        for (text, at) in [
            (
                "ignore: []\nfail_on: sometimes\n",
                "t/.pinprobe.yaml:2: fail_on:",
            ),
            (
                "fail_on_unknown: always\n",
                "t/.pinprobe.yaml:1: fail_on_unknown:",
            ),
            (
                "formats:\n  - table\n  - yaml\n",
                "t/.pinprobe.yaml:3: formats:",
            ),
        ] {
            let err = config(text).expect_err(text).to_string();
            assert!(err.starts_with(at), "{text:?}: {err}");
        }
    }

    #[test]
    fn flags_win_over_the_file() {
        let c =
            config("repositories:\n  fa: ../fa\n  mla: ../mla\nformats: [json]\n").expect("valid");
        let cli = [("fa".to_string(), PathBuf::from("/mine/fa"))];
        assert_eq!(
            c.repos(&cli),
            [
                ("fa".to_string(), PathBuf::from("/mine/fa")),
                ("mla".to_string(), PathBuf::from("t/../mla"))
            ]
        );
        let table = parse_rendering("table").expect("table");
        assert_eq!(c.formats(std::slice::from_ref(&table)), [table]);
        assert_eq!(c.formats(&[]), c.formats);
    }

    #[test]
    fn a_trees_settings_are_one_warning_each_with_their_line() {
        let policy = Policy::parse(
            "t/.pinprobe.yaml",
            "ignore: []\nformats: [json=../x.json, sarif=/abs/x.sarif]\nrepositories:\n  fa: ../fa\n  mla: ../mla\noffline: false\nfail_on: never\n",
        )
        .expect("valid");
        let warnings = tree_warnings(&policy);
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        for (at, key) in [
            ("t/.pinprobe.yaml:2: ", "formats"),
            ("t/.pinprobe.yaml:4: ", "repositories"),
            ("t/.pinprobe.yaml: ", "offline"),
            ("t/.pinprobe.yaml:7: ", "fail_on"),
        ] {
            let line = format!("{at}`{key}` is ignored");
            assert!(
                warnings.iter().any(|w| w.starts_with(&line)),
                "{line} in {warnings:#?}"
            );
        }
        for w in &warnings {
            assert!(!w.contains('\n'), "one line: {w}");
        }
        let only_ignore = Policy::parse("t/.pinprobe.yaml", "ignore: []\n").expect("valid");
        assert!(tree_warnings(&only_ignore).is_empty());
    }

    #[test]
    fn every_forbidden_key_is_a_setting_a_policy_can_hold() {
        let text: String = TREE_FORBIDDEN
            .iter()
            .map(|(key, _)| match *key {
                "repositories" | "mirrors" => format!("{key}:\n  a: b\n"),
                "formats" => format!("{key}: [json]\n"),
                "offline" => format!("{key}: true\n"),
                _ => format!("{key}: high\n"),
            })
            .collect();
        let policy = Policy::parse("p", &text).expect("every key parses");
        assert_eq!(tree_warnings(&policy).len(), TREE_FORBIDDEN.len());
    }
}
