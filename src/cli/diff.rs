//! `pinprobe diff`: what a pin bump between two revisions of a vLLM source tree introduces,
//! fixes or keeps.

use super::config::Config;
use super::output::OutputArgs;
use crate::diff::{self, Request, VexSource};
use crate::exit::FailOn;
use crate::exit::{self, Exit};
use crate::model::Date;
use crate::resolve::Clones;
use crate::rules;
use crate::scan::Options;
use crate::scan::{self, policy};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;

pub const LONG_ABOUT: &str = "Compare the pins of a vLLM source tree at two git revisions and say, \
for each rule, whether the bump introduces, fixes or keeps a finding.\n\n\
Both revisions are read through git (no checkout) and scanned as `pinprobe scan --rev` would. \
Pins pair by component; findings pair by (component, rule): `introduced` (affected at HEAD and \
not decided affected at BASE: a BASE that is unknown, pins nothing or lacks the finding never \
lets it pass; `base_undecided` says when BASE could not be decided), `fixed` (affected at BASE, \
not at HEAD), `kept` (decided affected at both), `unknown` (undecided at HEAD, or a HEAD not \
affected over an undecided BASE: no fix). Pin changes include moves to or from a fork. With --repo, a component \
that stays affected gets a suggested GIT_TAG: the earliest commit on the clone's default branch \
that contains the current pin and every fix commit.\n\n\
The ignore policy is BASE's `.pinprobe.yaml` (or --ignore FILE), and a --rules directory or a \
--vex document inside the tree is read at BASE: a change never suppresses or overrides its own \
findings. Ignore entries, rule files and VEX statements HEAD adds or edits are listed for review \
and fail the gate (exit 1) unless the workflow passes --allow-head-ignores / --allow-head-rules / \
--allow-head-vex.";

pub const AFTER_HELP: &str = "Examples:\n  \
pinprobe diff origin/main HEAD                     # the tree in the current directory\n  \
pinprobe diff v0.30.0 v0.33.0 ~/src/vllm --repo flash-attention=~/src/flash-attention\n  \
pinprobe diff \"$BASE\" \"$HEAD\" --format markdown >> \"$GITHUB_STEP_SUMMARY\"\n  \
pinprobe diff \"$BASE\" \"$HEAD\" --format markdown=r.md --format sarif=r.sarif\n\n\
Git credentials for private forks: PINPROBE_GIT_TOKEN for the one host PINPROBE_GIT_TOKEN_HOST \
names (HOST or HOST:PORT; offered to no other, not after a redirect), else git's credential \
helpers (`git credential fill`).\n\n\
Exit codes (the gate judges HEAD): 0 the bump introduces nothing at or above the thresholds, 1 \
it introduces a finding at or above --fail-on (over an undecided BASE too), 2 usage/input/I-O \
error, 3 undecided at or above --fail-on-unknown (a changed pin whose findings are unknown at \
HEAD, or a HEAD that pins nothing). Kept, fixed and suppressed findings never fail a review. The \
headline says the verdict and the exit code.";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The revision before the bump (commit, tag, branch), e.g. the pull request's base.
    #[arg(help_heading = "Revisions", value_name = "BASE")]
    pub base: String,

    /// The revision after the bump, e.g. the pull request's head.
    #[arg(help_heading = "Revisions", value_name = "HEAD")]
    pub head: String,

    /// The vLLM source tree (a git work tree or bare repository).
    #[arg(help_heading = "Revisions", value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    /// A local clone of a pinned project, by component name (repeatable): ancestry and
    /// signature evidence, and a suggested GIT_TAG for what stays affected.
    #[arg(help_heading = "Source trees", long = "repo", value_name = "NAME=PATH", value_parser = super::scan::parse_repo)]
    pub repos: Vec<(String, PathBuf)>,

    /// A directory of rule files layered over the built-in database (same id replaces). One
    /// inside the tree is read at BASE (see --allow-head-rules).
    #[arg(help_heading = "Rules and policy", long, value_name = "DIR")]
    pub rules: Option<PathBuf>,

    /// A settings file you name (ignore list and settings) to use instead of BASE's
    /// `.pinprobe.yaml` and of the user-level `$XDG_CONFIG_HOME/pinprobe/config.yaml`. BASE's
    /// own file contributes only `ignore` entries; its settings are warned about and ignored.
    #[arg(
        help_heading = "Rules and policy",
        long,
        visible_alias = "config",
        value_name = "FILE"
    )]
    pub ignore: Option<PathBuf>,

    /// Apply HEAD's `.pinprobe.yaml` (the entries the change adds or edits still show for
    /// review). For the workflow's author only: never set it from pull-request input.
    #[arg(help_heading = "Rules and policy", long)]
    pub allow_head_ignores: bool,

    /// Read a --rules directory inside the tree at HEAD (the rule files the change adds or
    /// edits still show for review). For the workflow's author only.
    #[arg(help_heading = "Rules and policy", long)]
    pub allow_head_rules: bool,

    /// An OpenVEX document whose `not_affected` statements suppress findings (as `scan --vex`).
    /// One inside the tree is read at BASE (see --allow-head-vex); one outside applies as read.
    #[arg(help_heading = "Rules and policy", long, value_name = "FILE")]
    pub vex: Option<PathBuf>,

    /// Read a --vex document inside the tree at HEAD (the statements the change adds or edits
    /// still show for review). For the workflow's author only.
    #[arg(help_heading = "Rules and policy", long)]
    pub allow_head_vex: bool,

    #[command(flatten, next_help_heading = "Output")]
    pub output: OutputArgs,

    /// Exit 1 when the bump introduces a finding at or above this severity. [default: `fail_on`
    /// in --config FILE or the user-level config, else low; neither BASE's nor HEAD's
    /// `.pinprobe.yaml` sets the gate, the clones or the outputs]
    #[arg(help_heading = "Gate", long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,

    /// Exit 3 when the bump leaves a finding undecided at or above this severity; `never` lets
    /// an undecided bump pass while an introduced finding still fails. [default:
    /// `fail_on_unknown` in --config FILE or the user-level config, else the --fail-on value]
    #[arg(help_heading = "Gate", long, value_enum, value_name = "SEVERITY")]
    pub fail_on_unknown: Option<FailOn>,

    /// The cache directory pinned history is fetched into; default `$PINPROBE_CACHE`,
    /// `$XDG_CACHE_HOME/pinprobe` or `~/.cache/pinprobe`.
    #[arg(help_heading = "Cache", long, value_name = "DIR")]
    pub cache: Option<PathBuf>,

    /// A PEM file of root certificates trusted for fetches, besides the system's.
    #[arg(help_heading = "Fetching pinned history", long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    #[command(flatten, next_help_heading = "Fetching pinned history")]
    pub fetching: super::fetch_args::FetchArgs,

    /// Fail (exit 2, before anything is scanned) when the rule database in use is older than
    /// this many days, or has no date (its date: the latest `modified` of its rules). Without
    /// it, a database older than 30 days is only warned about. A newer pinprobe or `pinprobe
    /// rules pull` brings newer rules.
    #[arg(help_heading = "Rules and policy", long, value_name = "DAYS")]
    pub max_db_age: Option<u32>,
}

pub fn run(mut args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let config = Config::for_diff(args.ignore.as_deref(), &args.path, &args.base)?;
    for w in &config.warnings {
        args.output.notice(format_args!("warning: {w}"));
    }
    args.output.formats = config.formats(&args.output.formats);
    let plan = args.output.plan()?;
    let mut rule_edits = Vec::new();
    let in_tree = args
        .rules
        .as_deref()
        .and_then(|dir| diff::edits::rules_in_tree(&args.path, dir).map(|rel| (dir, rel)));
    let (db, notices) = match in_tree {
        // A rules directory the change can edit: read it at BASE (or HEAD, when allowed).
        Some((dir, rel)) => {
            let at = |rev: &str| {
                diff::edits::rule_dir_at(&args.path, rev, &rel)
                    .with_context(|| format!("reading --rules {} at {rev}", dir.display()))
            };
            let base = at(&args.base)?;
            let head = at(&args.head)?;
            rule_edits = diff::edits::rule_edits(&base, &head, args.allow_head_rules);
            let used = if args.allow_head_rules { head } else { base };
            rules::load::load_with(Some((dir, &used))).context("loading rules")?
        }
        None => {
            let cache = args
                .cache
                .clone()
                .or_else(crate::pin::fingerprint::default_cache_dir);
            rules::load_in(cache.as_deref(), args.rules.as_deref()).context("loading rules")?
        }
    };
    super::fetch_args::print_downgrade_warning(&db);
    super::fetch_args::say_database(&db, args.rules.as_deref());
    for notice in notices {
        args.output.notice(notice);
    }
    if let Some(warning) = super::fetch_args::db_freshness(&db, args.max_db_age)? {
        args.output.notice(format_args!("warning: {warning}"));
    }
    for (name, _) in &args.repos {
        if args.repos.iter().filter(|(n, _)| n == name).count() > 1 {
            bail!("--repo {name} is given more than once");
        }
    }
    args.repos = config.repos(&args.repos);
    let clones = Clones::open(&args.repos)?;
    // Both revisions' pins, and the rules' commits, are fetched where no clone has them.
    let cache = args
        .cache
        .clone()
        .or_else(crate::pin::fingerprint::default_cache_dir);
    let fetch = args
        .fetching
        .settings(cache, args.ca_file.clone(), !args.output.quiet)?;
    let opts = Options {
        repos: args.repos.clone(),
        fetch,
        ..Options::default()
    };
    let source = match &args.ignore {
        Some(file) => policy::Source::File(file.clone()),
        None => policy::Source::TreeRoot,
    };
    let vex = match &args.vex {
        None => None,
        Some(file) => Some(match diff::edits::file_in_tree(&args.path, file) {
            Some(rel) => VexSource::InTree(rel),
            None => VexSource::Fixed(scan::vex::load(file).context("--vex")?),
        }),
    };
    let request = Request {
        path: &args.path,
        base: &args.base,
        head: &args.head,
        opts: &opts,
        policy: &source,
        today: Date::today(),
        allow_head_ignores: args.allow_head_ignores,
        rule_edits,
        vex: vex.as_ref(),
        allow_head_vex: args.allow_head_vex,
    };
    let mut review = diff::review(&request, &db, &clones)?;
    let gate = exit::Gate::new(
        args.fail_on.or(config.fail_on).unwrap_or(FailOn::Low),
        args.fail_on_unknown.or(config.fail_on_unknown),
    );
    review.gate = gate.view(false);
    review.sarif_unknown = args.output.sarif_unknown;
    review.head_report.provenance =
        crate::resolve::provenance::of_tree(&args.path, Some(&args.head));
    for w in &review.warnings {
        args.output.notice(format_args!("warning: {w}"));
    }
    args.output.write(&plan, out, |format, out| {
        crate::report::diff::render(&review, format, &db, out)
    })?;
    Ok(exit::for_diff(&review, gate))
}
