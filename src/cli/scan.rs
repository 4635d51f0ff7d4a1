//! `pinprobe scan`: find the pinned kernel commits in targets and match them against the rules.

use super::config::Config;
use super::output::OutputArgs;
use crate::exit::FailOn;
use crate::exit::{self, Exit};
use crate::model::Date;
use crate::pin::fingerprint;
use crate::report;
use crate::resolve::Clones;
use crate::rules;
use crate::scan::{self, Options};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;

pub const LONG_ABOUT: &str = "Find every kernel project a vLLM source tree pins and check each pinned commit \
against the rule database.\n\n\
pinprobe reads FetchContent_Declare, ExternalProject_Add and CPMAddPackage calls in CMakeLists.txt \
and under cmake/ (with set() indirection, PATCH_COMMAND patches and *_SRC_DIR overrides). Each \
finding is decided by the strongest evidence available: the bug's source signature on the pinned \
files (needs --repo), commit ancestry (needs --repo), the rule's list of known affected pins, or a \
package-version range. When nothing decides, the status is `unknown` and the exit code is 3: \
pinprobe never reports a pin clean that it could not check.";

pub const AFTER_HELP: &str = "Examples:\n  \
pinprobe scan ~/src/vllm\n  \
pinprobe scan ~/src/vllm --rev v0.30.0               # read a revision through git, no checkout\n  \
pinprobe scan ~/src/vllm --repo flash-attention=~/src/flash-attention\n  \
pinprobe scan . --format sarif > pinprobe.sarif\n  \
pinprobe scan . --format table --format json=r.json --format sarif=r.sarif\n  \
pinprobe scan . --fail-on high --rules ./my-rules\n  \
pinprobe scan . --fail-on-unknown never              # undecided findings pass, affected ones fail\n  \
pinprobe scan docker://registry.example/team/vllm:0.30 --platform linux/arm64\n  \
pinprobe scan oci:./image-layout:v1 --fast-layers\n  \
pinprobe scan image.tar                              # docker save output\n  \
pinprobe scan docker-daemon:vllm/vllm-openai:v0.30.0 # the local engine, through its socket\n  \
pinprobe scan --targets-from fleet.txt --state fleet.state --format jsonl   # resumable\n  \
pinprobe scan docker://registry.example/team/vllm --all-tags --format json  # every tag\n  \
pinprobe scan --targets-from fleet.txt --shard 0/4 --format json=s0.json     # then merge\n\n\
Settings: the command line, then `--config FILE`, else `$XDG_CONFIG_HOME/pinprobe/config.yaml` \
(~/.config/pinprobe/config.yaml). A `.pinprobe.yaml` inside a scanned tree is data, not orders: \
its `ignore` entries narrow the report; its fail_on, fail_on_unknown, repositories, mirrors, \
offline and formats are ignored with a warning each.\n\n\
Git credentials for private forks: PINPROBE_GIT_TOKEN for the one host PINPROBE_GIT_TOKEN_HOST \
names (HOST or HOST:PORT; offered to no other, not after a redirect), else git's credential \
helpers (`git credential fill`).\n\n\
Registry credentials: PINPROBE_REGISTRY_USERNAME / PINPROBE_REGISTRY_PASSWORD for the registry \
PINPROBE_REGISTRY_HOST names (sent to no other), else the Docker config.json (credHelpers, \
auths, credsStore; helpers run as `docker-credential-NAME get`). A Bearer \
token realm on another host than the registry gets them only when PINPROBE_REGISTRY_REALM_HOST \
names it (Docker Hub's own token service excepted).\n\n\
Exit codes: 0 nothing at or above the thresholds, 1 affected findings at or above --fail-on, \
2 usage/input/I-O error, 3 unknown findings at or above --fail-on-unknown (undecided: fail \
closed).";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to scan: a vLLM source tree (directory or git work tree), a wheel (`.whl`), a
    /// site-packages directory or virtual environment, or an image: `docker://REF` or
    /// `registry:REF`, `oci:DIR[:TAG]`, `oci-archive:FILE[:TAG]`, `docker-archive:FILE[:REF]`
    /// (or a plain `docker save` tarball), `docker-daemon:NAME` or `podman:NAME` (the local
    /// engine's API socket).
    #[arg(
        help_heading = "Targets",
        required_unless_present = "targets_from",
        value_name = "TARGET"
    )]
    pub targets: Vec<String>,

    /// Read more targets from FILE, one a line (`-`: stdin); blank lines and lines starting
    /// with `#` are skipped. They follow the TARGET arguments.
    #[arg(help_heading = "Targets", long, value_name = "FILE")]
    pub targets_from: Option<PathBuf>,

    /// Targets scanned at once [default: the number of cores]. The report lists them in the
    /// order given whatever order they finish in; the exit code is the worst over all targets.
    #[arg(help_heading = "Targets", long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,

    /// Scan only shard I of N (0 <= I < N) of the target list: the targets at positions I,
    /// I+N, I+2N, ... of the full list (arguments, then --targets-from). Every shard of the same
    /// list together covers each target exactly once (a CI matrix, a Kubernetes Indexed Job);
    /// the JSON reports say which shard they are, and `pinprobe merge` joins them.
    #[arg(help_heading = "Targets", long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,

    /// Images: a `docker://HOST/REPO` without a tag or digest stands for every tag of the
    /// repository (the registry's tag list, sorted), each tag a target in its place in the
    /// list. Without it such a reference means `:latest`.
    #[arg(help_heading = "Images", long)]
    pub all_tags: bool,

    /// With --all-tags: a repository with more tags than this is an error rather than a sweep
    /// of that many images.
    #[arg(help_heading = "Images", long, value_name = "N", default_value_t = 1000, requires = "all_tags", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tags: u32,

    /// Resume a sweep: record each finished target in FILE (its content digest, the rule
    /// database digest, the pinprobe version, its report) as it finishes, and reuse the recorded
    /// report of every target whose content, rules and settings are unchanged since. A run
    /// stopped at any point (even killed) loses only the targets in flight; the output is the
    /// same as an uninterrupted run's. One run at a time per FILE (it is locked).
    #[arg(help_heading = "Targets", long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// Registry images (`docker://`) downloaded at once, within --jobs.
    #[arg(help_heading = "Images", long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub registry_jobs: u32,

    /// Read the tree at this git revision (commit, tag, branch) through git, without a checkout.
    #[arg(help_heading = "Source trees", long, value_name = "REV")]
    pub rev: Option<String>,

    /// A local clone of a pinned project, by component name (repeatable), e.g.
    /// `flash-attention=~/src/flash-attention`. Enables ancestry and signature evidence.
    #[arg(help_heading = "Source trees", long = "repo", value_name = "NAME=PATH", value_parser = parse_repo)]
    pub repos: Vec<(String, PathBuf)>,

    /// A directory of rule files layered over the built-in database (same id replaces).
    #[arg(help_heading = "Rules and policy", long, value_name = "DIR")]
    pub rules: Option<PathBuf>,

    #[command(flatten, next_help_heading = "Output")]
    pub output: OutputArgs,

    /// A vLLM source tree whose declared pins the artifacts must match: each shipped
    /// FlashAttention copy is fingerprinted (needs `pinprobe index build`) and compared with
    /// the tree's pin; a difference is a `drift/pin-vs-artifact` finding.
    #[arg(help_heading = "Source trees", long, value_name = "TREE")]
    pub expect: Option<String>,

    /// The cache directory holding fingerprint indexes (`pinprobe index build`); default
    /// `$PINPROBE_CACHE`, `$XDG_CACHE_HOME/pinprobe` or `~/.cache/pinprobe`.
    #[arg(help_heading = "Cache", long, value_name = "DIR")]
    pub cache: Option<PathBuf>,

    /// Scan every wheel again, even one whose report the cache holds (kept for a wheel file
    /// scanned before and unchanged since: the same file, stamp and end records, under the
    /// same rules, pinprobe and settings). The cache's other entries (signature outcomes,
    /// library symbols, image layers) are still used.
    #[arg(help_heading = "Cache", long)]
    pub rescan: bool,

    /// A settings file you name (`.pinprobe.yaml`'s format: the ignore list and the settings
    /// fail_on, fail_on_unknown, repositories, mirrors, offline, formats) for every target,
    /// instead of each source tree's own `.pinprobe.yaml` and of the user-level
    /// `$XDG_CONFIG_HOME/pinprobe/config.yaml`. Flags override its settings. A scanned tree's
    /// own `.pinprobe.yaml` only ever contributes `ignore` entries: its settings are warned
    /// about and ignored.
    #[arg(
        help_heading = "Rules and policy",
        long,
        visible_alias = "config",
        value_name = "FILE"
    )]
    pub ignore: Option<PathBuf>,

    /// An OpenVEX document whose `not_affected` statements suppress the findings they name
    /// (rule or alias, and the pin's package URL), like ignore-file entries.
    #[arg(help_heading = "Rules and policy", long, value_name = "FILE")]
    pub vex: Option<PathBuf>,

    /// Exit 1 on affected findings at or above this severity (`never`: affected findings pass).
    /// [default: `fail_on` in --config FILE or the user-level config, else low]
    #[arg(help_heading = "Gate", long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,

    /// Exit 3 on unknown (undecided) findings at or above this severity; `never` lets a build
    /// whose only open findings are undecided pass while affected ones still fail.
    /// [default: `fail_on_unknown` in --config FILE or the user-level config, else the
    /// --fail-on value]
    #[arg(help_heading = "Gate", long, value_enum, value_name = "SEVERITY")]
    pub fail_on_unknown: Option<FailOn>,

    /// Let pin-hygiene findings (fork, short-SHA, tag or branch pins) count for the exit code
    /// like kernel-bug findings. By default they are reported but never fail the scan.
    #[arg(help_heading = "Gate", long)]
    pub fail_on_hygiene: bool,

    /// Images: the platform to pick from a multi-arch index.
    #[arg(help_heading = "Images", long, value_name = "OS/ARCH[/VARIANT]", default_value = crate::view::image::DEFAULT_PLATFORM)]
    pub platform: String,

    /// Images: a PEM file of root certificates trusted for registries, besides the system's.
    #[arg(help_heading = "Images", long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,

    /// Images: a registry (`host[:port]`) to reach over plain HTTP instead of HTTPS (repeatable).
    #[arg(
        help_heading = "Images",
        long = "insecure-registry",
        value_name = "HOST"
    )]
    pub insecure_registries: Vec<String>,

    /// Images: read every layer (the default; kept for compatibility).
    #[arg(help_heading = "Images", long, conflicts_with = "fast_layers")]
    pub all_layers: bool,

    /// Images: stop once the newest deciding RECORD's files are resolved instead of reading
    /// every layer. Assumes that RECORD describes the install that matters and that older
    /// layers hold no other environment; the report says so.
    #[arg(help_heading = "Images", long)]
    pub fast_layers: bool,

    /// Images: seconds a registry connection or transfer may stall before it fails.
    #[arg(
        help_heading = "Images",
        long,
        value_name = "SECONDS",
        default_value_t = 30.0
    )]
    pub registry_timeout: f64,

    #[command(flatten, next_help_heading = "Fetching pinned history")]
    pub fetching: super::fetch_args::FetchArgs,

    /// Fail (exit 2, before anything is scanned) when the rule database in use is older than
    /// this many days, or has no date (its date: the latest `modified` of its rules). Without
    /// it, a database older than 30 days is only warned about. A newer pinprobe or `pinprobe
    /// rules pull` brings newer rules.
    #[arg(help_heading = "Rules and policy", long, value_name = "DAYS")]
    pub max_db_age: Option<u32>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not I/N with 0 <= I < N (e.g. 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub(crate) fn parse_repo(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!(
            "`{s}` is not NAME=PATH (e.g. flash-attention=../flash-attention)"
        )),
    }
}

/// The targets of a run: the arguments, then `--targets-from` (one a line, `-` for stdin).
fn targets(args: &Args) -> anyhow::Result<Vec<String>> {
    let mut targets = args.targets.clone();
    let Some(file) = &args.targets_from else {
        return Ok(targets);
    };
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin().lock()).context("--targets-from -: stdin")?
    } else {
        crate::input::read_text(file, TARGET_LIST_LIMIT)
            .with_context(|| format!("--targets-from {}", file.display()))?
    };
    targets.extend(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string),
    );
    if targets.is_empty() {
        bail!("--targets-from {}: no targets in it", file.display());
    }
    Ok(targets)
}

/// `--all-tags`: each `docker://HOST/REPO` without a tag or digest replaced, in its place, by
/// `docker://HOST/REPO:TAG` for every tag the registry lists (sorted).
fn expand_tags(args: &Args, targets: Vec<String>) -> anyhow::Result<Vec<String>> {
    use crate::view::image::{self, reference};
    let opts = image::Options {
        ca_file: args.ca_file.clone(),
        insecure_registries: args.insecure_registries.clone(),
        timeout: std::time::Duration::from_secs_f64(args.registry_timeout),
        ..image::Options::default()
    };
    let mut out = Vec::with_capacity(targets.len());
    for target in targets {
        let repo = match reference::parse(&target) {
            Ok(reference::ImageRef::Registry(r)) if r.tag.is_none() && r.digest.is_none() => r,
            _ => {
                out.push(target);
                continue;
            }
        };
        let shown = reference::redact_userinfo(&target).into_owned();
        let tags = image::registry::Registry::new(repo, &opts)
            .and_then(|mut registry| registry.tags(TAG_PAGE, args.max_tags as usize))
            .map_err(|fault| anyhow::anyhow!("--all-tags {shown}: {fault}"))?;
        if tags.is_empty() {
            bail!("--all-tags {shown}: the registry lists no tags");
        }
        for tag in tags {
            let tagged = format!("{target}:{tag}");
            // A tag the registry lists must still be a tag (no `/`, `@`, control characters).
            match reference::parse(&tagged) {
                Ok(reference::ImageRef::Registry(r)) if r.tag.as_deref() == Some(tag.as_str()) => {
                    out.push(tagged);
                }
                _ => bail!(
                    "--all-tags {shown}: the registry lists `{}`, which is not a valid tag",
                    crate::model::text::printable(&tag)
                ),
            }
        }
    }
    Ok(out)
}

/// Tags asked for per page of the registry's tag list.
const TAG_PAGE: usize = 100;

/// The largest target list read from a file (64 MiB: about a million targets).
const TARGET_LIST_LIMIT: u64 = 64 << 20;

pub fn run(mut args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let mut targets = targets(&args)?;
    if !(args.registry_timeout.is_finite() && args.registry_timeout > 0.0) {
        bail!("--registry-timeout must be a positive number of seconds");
    }
    if args.all_tags {
        targets = expand_tags(&args, targets)?;
    }
    let config = Config::for_scan(args.ignore.as_deref(), &targets, args.rev.as_deref())?;
    for w in &config.warnings {
        args.output.notice(format_args!("warning: {w}"));
    }
    args.output.formats = config.formats(&args.output.formats);
    let mut plan = args.output.plan()?;
    let shard = args.shard.map(|(index, count)| crate::model::Shard {
        index,
        count,
        of_targets: targets.len(),
    });
    if let Some((shard, of)) = args.shard {
        targets = targets
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % of == shard)
            .map(|(_, t)| t)
            .collect();
        if targets.is_empty() {
            // A shard past the end of a short list has nothing to do: an empty report, exit 0.
            args.output.notice(format_args!(
                "--shard {shard}/{of}: no targets in this shard"
            ));
        }
    }
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );
    // JSON lines on stdout stream as the targets finish; every other rendering waits for all.
    let stream = plan
        .iter()
        .position(|(f, d)| *f == report::Format::Jsonl && *d == super::output::Destination::Stdout)
        .map(|i| plan.remove(i))
        .is_some();
    let vex = args
        .vex
        .as_deref()
        .map(scan::vex::load)
        .transpose()
        .context("--vex")?;
    let cache_dir = args.cache.clone().or_else(fingerprint::default_cache_dir);
    let (db, notices) =
        rules::load_in(cache_dir.as_deref(), args.rules.as_deref()).context("loading rules")?;
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
    let indexes = match &cache_dir {
        Some(cache) => fingerprint::load_all(cache).context("loading fingerprint indexes")?,
        None => Vec::new(),
    };
    if let Some(cache) = &cache_dir {
        // Signature outcomes by file content, shared with other runs.
        rules::signature::memo::use_store(crate::cache::Store::new(cache));
        // Image layer extracts and registry blobs by digest, likewise.
        crate::view::image::use_cache(crate::cache::Store::new(cache));
        // Shipped libraries' symbol tables by RECORD hash and zip entry.
        crate::pin::shipped::library_cache::use_store(crate::cache::Store::new(cache));
        if !args.rescan {
            // Whole wheel reports by the file's stamp and end records.
            scan::reuse::use_store(crate::cache::Store::new(cache));
        }
    }
    let mut fetch =
        args.fetching
            .settings(cache_dir.clone(), args.ca_file.clone(), !args.output.quiet)?;
    if let Some(settings) = &mut fetch {
        // The config file's mirrors come after the command line's, before git's own rewrites.
        let at = args.fetching.mirrors.len().min(settings.mirrors.len());
        for (i, m) in config.mirrors.iter().cloned().enumerate() {
            settings.mirrors.insert(at + i, m);
        }
        settings.offline |= config.offline;
    }
    let opts = Options {
        rev: args.rev.clone(),
        repos: args.repos.clone(),
        indexes,
        platform: args.platform.clone(),
        ca_file: args.ca_file.clone(),
        insecure_registries: args.insecure_registries.clone(),
        fast_layers: args.fast_layers,
        registry_timeout: Some(std::time::Duration::from_secs_f64(args.registry_timeout)),
        // One progress bar per terminal: none while several targets run at once.
        progress: !args.output.quiet && (jobs == 1 || targets.len() == 1),
        fetch,
        jobs,
        registry_jobs: args.registry_jobs as usize,
    };
    let state = args
        .state
        .as_deref()
        .map(|file| scan::state::State::open(file, &opts, &db.digest))
        .transpose()?;
    for w in state.iter().flat_map(|s| s.warnings.iter()) {
        args.output.notice(format_args!("warning: {w}"));
    }
    let req = scan::Request {
        targets: &targets,
        expect: args.expect.as_deref(),
        ignore: args.ignore.as_deref(),
        today: Date::today(),
        state: state.as_ref(),
    };
    let header = {
        let mut header = crate::model::Report::new(db.digest.clone(), Vec::new());
        header.rules_date = db.date.clone();
        header.rules_source = Some(db.source.clone());
        header.shard = shard;
        header
    };
    let mut line = |target: &crate::model::TargetReport| -> std::io::Result<()> {
        if !stream {
            return Ok(());
        }
        let mut one = header.clone();
        one.targets.push(target.clone());
        if let Some(vex) = &vex {
            // Its warnings are given once, for the whole report, below.
            vex.apply(&mut one);
        }
        report::render_line(&one, &one.targets[0], out)?;
        out.flush()
    };
    let mut report = scan::run_streaming(&req, &opts, &db, &clones, &mut line)?;
    report.shard = shard;
    if let Some(vex) = &vex {
        for w in vex.apply(&mut report) {
            args.output.notice(format_args!("warning: {w}"));
        }
    }
    for n in report.targets.iter().flat_map(|t| t.notices.iter()) {
        args.output.notice(n);
    }
    // Each warning once per run, with the targets it concerns; not again on stderr when the
    // table that lists them is what the terminal shows.
    let table_on_terminal = {
        use is_terminal::IsTerminal;
        plan.iter()
            .any(|(f, d)| *f == report::Format::Table && *d == super::output::Destination::Stdout)
            && std::io::stdout().is_terminal()
    };
    if !table_on_terminal {
        for line in warnings_once(&report) {
            args.output.notice(format_args!("warning: {line}"));
        }
    }
    let gate = exit::Gate::new(
        args.fail_on.or(config.fail_on).unwrap_or(FailOn::Low),
        args.fail_on_unknown.or(config.fail_on_unknown),
    );
    report.gate = gate.view(args.fail_on_hygiene);
    report.sarif_unknown = args.output.sarif_unknown;
    for t in &mut report.targets {
        // A source tree in git: where it came from, for SARIF's versionControlProvenance.
        let path = std::path::Path::new(&t.target);
        if t.kind.is_source() && path.is_dir() {
            t.provenance = crate::resolve::provenance::of_tree(path, args.rev.as_deref());
        }
    }
    args.output.write(&plan, out, |format, out| {
        report::render(&report, format, &db, out)
    })?;
    if let Some(cache) = &cache_dir
        && crate::cache::written()
    {
        // Only a run that wrote entries can have taken the cache past its bound; checking
        // means listing every entry.
        crate::cache::Store::new(cache).fit(crate::cache::DEFAULT_MAX_BYTES);
    }
    if std::env::var_os("PINPROBE_STATS").is_some() {
        let (computed, reused) = rules::signature::memo::counts();
        eprintln!("pinprobe: stats: signature outcomes: {computed} computed, {reused} reused");
        if let Some(state) = &state {
            let (reused, scanned) = state.counts();
            eprintln!("pinprobe: stats: --state: {reused} targets reused, {scanned} scanned");
        }
        let (read, reused) = crate::pin::shipped::library_cache::counts();
        eprintln!("pinprobe: stats: library symbol tables: {read} read, {reused} reused");
        eprintln!(
            "pinprobe: stats: wheel reports reused: {}",
            scan::reuse::reused()
        );
    }
    Ok(exit::for_scan(&report, gate, args.fail_on_hygiene))
}

/// The targets' warnings, each said once: a warning several targets share names them
/// (`(targets: A, B)`, or `(all N targets)`), in the order first seen.
pub fn warnings_once(report: &crate::model::Report) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &report.targets {
        for w in &t.warnings {
            match seen.iter_mut().find(|(text, _)| text == w) {
                Some((_, targets)) => {
                    if !targets.contains(&t.target.as_str()) {
                        targets.push(&t.target);
                    }
                }
                None => seen.push((w, vec![&t.target])),
            }
        }
    }
    let many = report.targets.len() > 1;
    seen.into_iter()
        .map(|(text, targets)| match targets.len() {
            _ if !many => text.to_string(),
            n if n == report.targets.len() => format!("{text} (all {n} targets)"),
            _ => format!("{text} (targets: {})", targets.join(", ")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Report, TargetReport};

    fn target(name: &str, warnings: &[&str]) -> TargetReport {
        let mut t = TargetReport::new(name.to_string(), crate::model::TargetKind::Wheel);
        t.warnings = warnings.iter().map(|w| w.to_string()).collect();
        t
    }

    #[test]
    fn each_warning_is_said_once_with_the_targets_it_concerns() {
        let mut report = Report::new("sha256:x".into(), Vec::new());
        report.targets = vec![
            target("a.whl", &["fetch failed", "only a"]),
            target("b.whl", &["fetch failed"]),
            target("c.whl", &["fetch failed", "b and c", "fetch failed"]),
        ];
        report.targets[1].warnings.push("b and c".into());
        assert_eq!(
            warnings_once(&report),
            [
                "fetch failed (all 3 targets)",
                "only a (targets: a.whl)",
                "b and c (targets: b.whl, c.whl)",
            ]
        );
        // One target: the warning as it is, once.
        report.targets.truncate(1);
        report.targets[0].warnings.push("fetch failed".into());
        assert_eq!(warnings_once(&report), ["fetch failed", "only a"]);
    }
}
