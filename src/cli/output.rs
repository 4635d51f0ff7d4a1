//! Where a command's report goes: several `--format NAME[=FILE]` at once (one scan, many
//! renderings), `--output FILE` for the one that has no file of its own, and `--quiet` for the
//! notices on stderr. Shared by `scan` and `diff`.
//!
//! The plan is checked before anything is scanned (a bad `--format` costs nothing), and every
//! file is rendered in memory and then moved into place, so a failed run never leaves a
//! half-written report behind.

use crate::report::Format;
use anyhow::{Context, bail};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One requested rendering: a format and its file (`None`: stdout, or `--output`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendering {
    pub format: Format,
    pub file: Option<PathBuf>,
}

/// The output arguments `scan` and `diff` share.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// A format, `NAME` (to stdout, or to --output) or `NAME=FILE`; repeatable, one run writes
    /// them all, e.g. `--format table --format json=out.json --format sarif=out.sarif`. NAME:
    /// table, json, jsonl, sarif, markdown, openvex, cyclonedx. At most one format goes to stdout. [default: table]
    #[arg(long = "format", value_name = "NAME[=FILE]", value_parser = parse_rendering)]
    pub formats: Vec<Rendering>,

    /// Write the format that names no file of its own to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print no notices on stderr (rule overrides, warnings, progress); errors still print.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// SARIF: list undecided findings too, as `note` results. By default SARIF holds affected
    /// findings only, so code scanning's alerts are the findings that fail a gate.
    #[arg(long)]
    pub sarif_unknown: bool,
}

/// Parse `NAME` or `NAME=FILE` (`NAME=-` is stdout).
pub fn parse_rendering(s: &str) -> Result<Rendering, String> {
    let (name, file) = match s.split_once('=') {
        Some((name, file)) => (name, Some(file)),
        None => (s, None),
    };
    let format = Format::from_str(name, true).map_err(|_| {
        let names: Vec<String> = Format::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
            .collect();
        format!("unknown format `{name}` (one of {})", names.join(", "))
    })?;
    let file = match file {
        Some("") => return Err(format!("`{s}`: no file after `=`")),
        Some("-") | None => None,
        Some(file) => Some(PathBuf::from(file)),
    };
    Ok(Rendering { format, file })
}

/// Where one rendering is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

impl OutputArgs {
    /// The renderings and their destinations, checked: at most one goes to stdout (or
    /// `--output`), no two to the same file, and `--output` only with a format to put there.
    pub fn plan(&self) -> anyhow::Result<Vec<(Format, Destination)>> {
        let formats = if self.formats.is_empty() {
            vec![Rendering {
                format: Format::Table,
                file: None,
            }]
        } else {
            self.formats.clone()
        };
        let unnamed = formats.iter().filter(|r| r.file.is_none()).count();
        if unnamed > 1 {
            bail!(
                "--format: {unnamed} formats would share stdout; give all but one a file (NAME=FILE)"
            );
        }
        if unnamed == 0 && self.output.is_some() {
            bail!("--output: every --format names its own file, so nothing would go to --output");
        }
        let plan: Vec<(Format, Destination)> = formats
            .into_iter()
            .map(|r| {
                let dest = match (r.file, &self.output) {
                    (Some(file), _) => Destination::File(file),
                    (None, Some(file)) => Destination::File(file.clone()),
                    (None, None) => Destination::Stdout,
                };
                (r.format, dest)
            })
            .collect();
        for (i, (_, dest)) in plan.iter().enumerate() {
            if let Destination::File(file) = dest
                && plan[..i].iter().any(|(_, d)| d == dest)
            {
                bail!(
                    "{}: named by more than one --format/--output",
                    file.display()
                );
            }
        }
        Ok(plan)
    }

    /// A notice on stderr (`pinprobe: MSG`), unless `--quiet`.
    pub fn notice(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            // Control characters escaped: a component name or registry message cannot send a
            // terminal sequence.
            eprintln!(
                "pinprobe: {}",
                crate::model::text::printable(&msg.to_string())
            );
        }
    }

    /// Render every planned format with `render`: files first (each written whole, then moved
    /// into place), then stdout.
    pub fn write(
        &self,
        plan: &[(Format, Destination)],
        out: &mut dyn Write,
        mut render: impl FnMut(Format, &mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let mut to_stdout = None;
        for (format, dest) in plan {
            match dest {
                Destination::Stdout => to_stdout = Some(*format),
                Destination::File(file) => {
                    let mut buf = Vec::new();
                    render(*format, &mut buf)?;
                    write_whole(file, &buf)
                        .with_context(|| format!("writing {}", file.display()))?;
                }
            }
        }
        if let Some(format) = to_stdout {
            render(format, out)?;
            out.flush()?;
        }
        Ok(())
    }
}

/// Write `bytes` to a temporary file beside `file`, then rename it over `file`. A `file` that
/// exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place:
/// renaming over it would replace a device node with a regular file.
fn write_whole(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(file).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut out = std::fs::OpenOptions::new().write(true).open(file)?;
        return out.write_all(bytes);
    }
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(formats: &[&str], output: Option<&str>) -> OutputArgs {
        OutputArgs {
            formats: formats
                .iter()
                .map(|s| parse_rendering(s).expect("parses"))
                .collect(),
            output: output.map(PathBuf::from),
            quiet: false,
            sarif_unknown: false,
        }
    }

    #[test]
    fn names_and_files_parse() {
        assert_eq!(
            parse_rendering("json=out/a=b.json").expect("parses"),
            Rendering {
                format: Format::Json,
                file: Some(PathBuf::from("out/a=b.json"))
            }
        );
        assert_eq!(parse_rendering("SARIF=-").expect("parses").file, None);
        assert!(
            parse_rendering("out.json")
                .unwrap_err()
                .contains("unknown format `out.json`")
        );
        assert!(parse_rendering("json=").is_err());
    }

    #[test]
    fn plans_are_checked() {
        let plan = args(&[], None).plan().expect("default");
        assert_eq!(plan, vec![(Format::Table, Destination::Stdout)]);
        let plan = args(&["json=a.json", "table"], Some("t.txt"))
            .plan()
            .expect("plan");
        assert_eq!(
            plan,
            vec![
                (Format::Json, Destination::File("a.json".into())),
                (Format::Table, Destination::File("t.txt".into()))
            ]
        );
        assert!(args(&["json", "table"], None).plan().is_err());
        assert!(args(&["json=a", "sarif=a"], None).plan().is_err());
        assert!(args(&["json=a", "table"], Some("a")).plan().is_err());
        assert!(args(&["json=a"], Some("b")).plan().is_err());
    }
}
