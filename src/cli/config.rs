//! The run settings of a `.pinprobe.yaml` (fail thresholds, repositories, mirrors, offline,
//! formats; parsed and shape-checked by [`crate::scan::policy`]) validated and merged under the
//! command line: a flag always wins, a `--repo` replaces the file's clone of that component, and
//! the file's formats apply only when no `--format` is given.
//!
//! Where the settings come from: `--ignore FILE` (`--config` is the same flag), else the
//! `.pinprobe.yaml` at the root of `scan`'s one source-tree target (at `--rev`), and for `diff`
//! always BASE's, whatever `--allow-head-ignores` says: a change never sets its own gate,
//! clones or outputs.

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
        })
    }

    /// `scan`'s settings: from `--ignore FILE`, else from the one target's `.pinprobe.yaml` when
    /// it is a directory (read at `rev`), else none.
    pub fn for_scan(
        ignore: Option<&Path>,
        targets: &[String],
        rev: Option<&str>,
    ) -> anyhow::Result<Config> {
        if let Some(file) = ignore {
            return Config::from_file(file);
        }
        match targets {
            [target] if Path::new(target).is_dir() => Config::from_tree(Path::new(target), rev),
            _ => Ok(Config::default()),
        }
    }

    /// `diff`'s settings: from `--ignore FILE`, else BASE's `.pinprobe.yaml`, never HEAD's.
    pub fn for_diff(ignore: Option<&Path>, path: &Path, base: &str) -> anyhow::Result<Config> {
        match ignore {
            Some(file) => Config::from_file(file),
            None => Config::from_tree(path, Some(base)),
        }
    }

    fn from_file(file: &Path) -> anyhow::Result<Config> {
        let policy = Policy::load(file)?;
        let dir = file.parent().unwrap_or(Path::new("."));
        Config::from_policy(&policy, dir)
    }

    /// The settings of the tree's `.pinprobe.yaml` (errors name the file, `@REV` when read
    /// through git, and the line).
    fn from_tree(tree: &Path, rev: Option<&str>) -> anyhow::Result<Config> {
        match policy::from_tree(tree, rev)? {
            Some(policy) => Config::from_policy(&policy, tree),
            None => Ok(Config::default()),
        }
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
}
