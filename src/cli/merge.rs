//! `pinprobe merge`: the JSON reports of a sharded sweep (`scan --shard I/N`, schema-1 `json`
//! documents or `jsonl` lines, several files or stdin) combined into the one report a single run
//! over every target would have written, rendered in any of scan's formats, with scan's exit
//! code.
//!
//! - **Order.** Sharded reports carry their shard (`"shard": {"index", "count", "of_targets"}`):
//!   the k-th target of shard I was at position I + k*N of the full list, so the merged report
//!   lists the targets in the list's order whatever order the inputs come in (`shard-*.jsonl`
//!   sorts shard 10 before shard 2). Every position must be covered: a missing shard, or one
//!   cut short, is an error. Unsharded reports are concatenated in the order given.
//! - **Agreement.** Every input must come from this pinprobe version (the report's fields are
//!   this version's) and the same rule database (its digest): otherwise exit 2 naming the files.
//! - **Duplicates.** The same position in two inputs (a shard job that ran twice) is kept once
//!   when both reports are identical and refused otherwise; an unsharded target that two inputs
//!   both report is refused.

use super::output::OutputArgs;
use crate::exit::{self, Exit, FailOn};
use crate::model::{Report, SCHEMA, Shard, TargetReport, Tool};
use crate::pin::fingerprint;
use crate::report::{self, Format};
use crate::rules;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

pub const LONG_ABOUT: &str = "Combine the JSON reports of a sharded sweep into one report, as if one \
run had scanned every target.\n\n\
Each REPORT is a file (or `-`: stdin) holding `scan --format json` documents or `--format jsonl` \
lines. Shards written by `scan --shard I/N` are put back in the order of the full target list \
(whatever order the files are given in), and every shard must be there; reports without a shard \
are concatenated in the order given. All inputs must come from this pinprobe version and the same \
rule database. The exit code is computed from the merged findings exactly as `scan` computes it.";

pub const AFTER_HELP: &str = "Examples:\n  \
pinprobe merge shard-*.jsonl --format json > fleet.json\n  \
cat shard-*.jsonl | pinprobe merge - --format sarif=fleet.sarif --format table\n  \
pinprobe merge a.json b.json --fail-on high\n\n\
Exit codes: 0 nothing at or above the thresholds, 1 affected findings at or above --fail-on, \
2 usage/input/I-O error (unreadable or disagreeing reports, a missing shard), 3 unknown findings \
at or above --fail-on-unknown.";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON reports to combine: files of `scan --format json` documents or `--format jsonl`
    /// lines (`-`: stdin), e.g. every shard's output of one sweep.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Exit 1 on affected findings at or above this severity (`never`: affected findings pass).
    #[arg(long, value_enum, value_name = "SEVERITY", default_value = "low")]
    pub fail_on: FailOn,

    /// Exit 3 on unknown (undecided) findings at or above this severity.
    /// [default: the --fail-on value]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on_unknown: Option<FailOn>,

    /// Let pin-hygiene findings count for the exit code, as `scan --fail-on-hygiene` does.
    #[arg(long)]
    pub fail_on_hygiene: bool,

    /// A directory of rule files layered over the built-in database, as given to the scans:
    /// SARIF, OpenVEX and CycloneDX describe the rules from it, so its digest must be the
    /// reports'.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,

    /// The cache directory (for a database `pinprobe rules pull` brought); default as scan's.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

/// The largest report file read (1 GiB).
const REPORT_LIMIT: u64 = 1 << 30;

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let plan = args.output.plan()?;
    let mut docs = Vec::new();
    for (i, path) in args.reports.iter().enumerate() {
        let name = path.display().to_string();
        let text = if path.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin().lock()).context("-: stdin")?
        } else {
            crate::input::read_text(path, REPORT_LIMIT).with_context(|| name.clone())?
        };
        for (n, doc) in serde_json::Deserializer::from_str(&text)
            .into_iter::<Report>()
            .enumerate()
        {
            let doc = doc.with_context(|| {
                format!(
                    "{name}: report {}: not a pinprobe schema-{SCHEMA} JSON report",
                    n + 1
                )
            })?;
            docs.push(Input { file: i, doc });
        }
    }
    let mut report = merge(&args.reports, docs)?;
    let cache_dir = args.cache.clone().or_else(fingerprint::default_cache_dir);
    let (db, notices) =
        rules::load_in(cache_dir.as_deref(), args.rules.as_deref()).context("loading rules")?;
    super::fetch_args::print_downgrade_warning(&db);
    for notice in notices {
        args.output.notice(notice);
    }
    if db.digest != report.rules_digest
        && let Some((format, _)) = plan
            .iter()
            .find(|(f, _)| matches!(f, Format::Sarif | Format::OpenVex | Format::CycloneDx))
    {
        bail!(
            "--format {}: the reports were made with rule database {}, this pinprobe has {} (pass the scans' --rules DIR)",
            format_name(*format),
            report.rules_digest,
            db.digest
        );
    }
    for w in super::scan::warnings_once(&report) {
        args.output.notice(format_args!("warning: {w}"));
    }
    let gate = exit::Gate::new(args.fail_on, args.fail_on_unknown);
    report.gate = gate.view(args.fail_on_hygiene);
    report.sarif_unknown = args.output.sarif_unknown;
    args.output.write(&plan, out, |format, out| {
        report::render(&report, format, &db, out)
    })?;
    Ok(exit::for_scan(&report, gate, args.fail_on_hygiene))
}

fn format_name(format: Format) -> String {
    use clap::ValueEnum;
    format
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// One report document and the input (index into the file list) it came from.
pub struct Input {
    pub file: usize,
    pub doc: Report,
}

/// Combine `inputs` (read from `files`, named in errors) into one report.
pub fn merge(files: &[PathBuf], inputs: Vec<Input>) -> anyhow::Result<Report> {
    let name = |i: usize| {
        files
            .get(i)
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let Some(first) = inputs.first() else {
        bail!(
            "no reports in {}",
            join(files.iter().map(|p| p.display().to_string()))
        );
    };
    let this = Tool::this();
    let (digest, date, source, first_file) = (
        first.doc.rules_digest.clone(),
        first.doc.rules_date.clone(),
        first.doc.rules_source.clone(),
        first.file,
    );
    let sharded = first.doc.shard.is_some();
    for input in &inputs {
        let doc = &input.doc;
        if doc.schema != SCHEMA || doc.tool.name != this.name {
            bail!(
                "{}: a {} schema-{} report, not a pinprobe schema-{SCHEMA} report",
                name(input.file),
                doc.tool.name,
                doc.schema
            );
        }
        if doc.tool.version != this.version {
            bail!(
                "{}: written by pinprobe {}, this is pinprobe {}: merge with the version that scanned",
                name(input.file),
                doc.tool.version,
                this.version
            );
        }
        if doc.rules_digest != digest || doc.rules_date != date {
            bail!(
                "the rule databases differ: {} was scanned with {}, {} with {}",
                name(first_file),
                digest,
                name(input.file),
                doc.rules_digest
            );
        }
        if doc.shard.is_some() != sharded {
            bail!(
                "{} is {} but {} is {}: merge the shards of one sweep",
                name(first_file),
                if sharded { "a shard" } else { "not a shard" },
                name(input.file),
                if sharded { "not" } else { "a shard" }
            );
        }
    }
    let targets = if sharded {
        by_position(&inputs, &name)?
    } else {
        concatenated(inputs, &name)?
    };
    let mut report = Report::new(digest, targets);
    report.rules_date = date;
    // The scans' database (the same digest in every input), as the first names it.
    report.rules_source = source;
    Ok(report)
}

/// Shards back in the full list's order: every position once.
fn by_position(
    inputs: &[Input],
    name: &dyn Fn(usize) -> String,
) -> anyhow::Result<Vec<TargetReport>> {
    let mut shape: Option<(Shard, usize)> = None;
    // The next k of each (file, shard index): a file may hold several shards (`cat`).
    let mut next: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut at: BTreeMap<usize, (&TargetReport, usize)> = BTreeMap::new();
    for input in inputs {
        let Some(shard) = input.doc.shard else {
            continue;
        };
        match shape {
            None => shape = Some((shard, input.file)),
            Some((s, file)) if (s.count, s.of_targets) != (shard.count, shard.of_targets) => bail!(
                "{} is a shard of {} targets in {} shards, {} of {} in {}: merge the shards of one sweep",
                name(file),
                s.of_targets,
                s.count,
                name(input.file),
                shard.of_targets,
                shard.count
            ),
            Some(_) => {}
        }
        if shard.count == 0 || shard.index >= shard.count {
            bail!(
                "{}: shard {}/{} is not a shard",
                name(input.file),
                shard.index,
                shard.count
            );
        }
        for target in &input.doc.targets {
            let k = next.entry((input.file, shard.index)).or_default();
            let position = shard.position(*k);
            *k += 1;
            if position >= shard.of_targets {
                bail!(
                    "{}: shard {}/{} holds more targets than a list of {} gives it",
                    name(input.file),
                    shard.index,
                    shard.count,
                    shard.of_targets
                );
            }
            if let Some((seen, file)) = at.get(&position) {
                if serde_json::to_value(seen)? != serde_json::to_value(target)? {
                    bail!(
                        "{} (target {} of the list) is in {} and {} with different reports: merge one run of each shard",
                        crate::model::text::printable(&target.target),
                        position + 1,
                        name(*file),
                        name(input.file)
                    );
                }
                continue;
            }
            at.insert(position, (target, input.file));
        }
    }
    if let Some((shard, _)) = shape
        && let Some(missing) = (0..shard.of_targets).find(|p| !at.contains_key(p))
    {
        bail!(
            "target {} of the list ({} targets) is in no input: shard {}/{} is missing or cut short",
            missing + 1,
            shard.of_targets,
            missing % shard.count,
            shard.count
        );
    }
    Ok(at.into_values().map(|(t, _)| t.clone()).collect())
}

/// Unsharded reports one after another; a target two inputs both report is refused.
fn concatenated(
    inputs: Vec<Input>,
    name: &dyn Fn(usize) -> String,
) -> anyhow::Result<Vec<TargetReport>> {
    let mut from: BTreeMap<String, usize> = BTreeMap::new();
    let mut targets = Vec::new();
    for input in inputs {
        for target in input.doc.targets {
            match from.get(&target.target) {
                Some(file) if *file != input.file => bail!(
                    "{} is in both {} and {}: each target must come from one input",
                    crate::model::text::printable(&target.target),
                    name(*file),
                    name(input.file)
                ),
                Some(_) => {}
                None => {
                    from.insert(target.target.clone(), input.file);
                }
            }
            targets.push(target);
        }
    }
    Ok(targets)
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
