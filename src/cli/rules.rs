//! `pinprobe rules`: list, show, lint, test and export the rule database.

use crate::exit::{self, Exit};
use crate::rules::vectors::Outcome;
use crate::rules::{self, Origin, lint::Diagnostic};
use anyhow::Context;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: RulesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum RulesCommand {
    /// List the rules: id, severity, kind, component and summary.
    List {
        /// A directory of rule files layered over the built-in database.
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one rule in full (as YAML-shaped JSON with --json).
    Show {
        /// The rule id, e.g. PINPROBE-2026-0001.
        id: String,
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check rule files: schema, full SHAs, unique ids, known components, signatures that parse.
    /// Without DIR, checks the built-in database. Errors name file and line; exit 2 on any.
    Lint {
        /// A directory of rule files.
        dir: Option<PathBuf>,
    },
    /// Run every rule's test vectors (pins or source snippets with the status they expect).
    /// Vectors that need a clone are skipped, visibly, unless --repo gives it. Exit 0 when none
    /// failed, 1 otherwise.
    Test {
        /// A local clone of a pinned project, by component name (repeatable), e.g.
        /// `flash-attention=~/src/flash-attention`. Enables ancestry and needs_clone vectors.
        #[arg(long = "repo", value_name = "NAME=PATH", value_parser = super::scan::parse_repo)]
        repos: Vec<(String, PathBuf)>,
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
    },
    /// Pull a signed rule database published as an OCI artifact (`docker://HOST/REPO:TAG`)
    /// into the cache; scans then use it instead of the built-in one. Refused (exit 2, one
    /// line) when it is unsigned, signed by a key not trusted, or its signature does not
    /// verify; when it is not the database its signed statement names; when its serial is lower
    /// than the newest database already trusted (the built-in one, or the last pull), or equal
    /// to it for another database; when it drops a rule without a withdrawal record (OSV
    /// `withdrawn`). Its manifest and layer digests, media types and every rule are checked
    /// before it is stored.
    #[command(long_about = None, after_help = PULL_AFTER_HELP)]
    Pull {
        /// The artifact, e.g. `docker://registry.example/pinprobe/rules:latest`.
        #[arg(value_name = "REF")]
        reference: String,
        /// A file of public keys (`pinprobe-ed25519:<base64>`, one a line, `#` comments)
        /// trusted to sign databases, besides the project's key built into pinprobe
        /// (repeatable).
        #[arg(long = "trust", value_name = "FILE")]
        trust: Vec<PathBuf>,
        /// Accept a database older than, or dropping rules of, the newest one already trusted
        /// (a deliberate rollback). Said on stderr at the pull and on every run that uses it,
        /// --quiet or not.
        #[arg(long)]
        allow_rules_downgrade: bool,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Sign and publish a directory holding a whole rule database (rule files,
    /// components.yaml, ledger.yaml) as an OCI artifact; it must load cleanly first.
    Push {
        /// The database directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Where to publish it, e.g. `docker://registry.example/pinprobe/rules:2026-11-30`.
        #[arg(value_name = "REF")]
        reference: String,
        /// The signing key (`pinprobe rules keygen` writes one).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The feed serial: higher is newer, and pulls refuse a lower one than they already
        /// trust [default: now, in seconds since the Unix epoch].
        #[arg(long, value_name = "N")]
        serial: Option<u64>,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Make a key pair for signing rule databases: the secret key to FILE (mode 0600, never
    /// overwritten), the public key to FILE.pub and stdout.
    Keygen {
        /// Where to write the secret key.
        #[arg(value_name = "FILE")]
        secret: PathBuf,
    },
    /// Export the database: `--osv DIR` writes one OSV JSON document (schema 1.6) per rule.
    Export {
        /// The directory to write `<id>.json` files into (created if needed).
        #[arg(long, value_name = "DIR")]
        osv: PathBuf,
        #[arg(long, value_name = "DIR")]
        rules: Option<PathBuf>,
    },
}

/// Registry options of `rules pull` and `rules push` (credentials as for image scans:
/// PINPROBE_REGISTRY_* or the Docker config).
#[derive(Debug, clap::Args)]
pub struct RegistryArgs {
    /// The cache directory pulled databases are stored in; default `$PINPROBE_CACHE`,
    /// `$XDG_CACHE_HOME/pinprobe` or `~/.cache/pinprobe`.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// A PEM file of root certificates trusted for the registry, besides the system's.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// A registry (`host[:port]`) to reach over plain HTTP instead of HTTPS (repeatable).
    #[arg(long = "insecure-registry", value_name = "HOST")]
    insecure_registries: Vec<String>,
}

impl RegistryArgs {
    fn options(&self) -> crate::view::image::Options {
        crate::view::image::Options {
            ca_file: self.ca_file.clone(),
            insecure_registries: self.insecure_registries.clone(),
            ..Default::default()
        }
    }
}

const PULL_AFTER_HELP: &str = "Trust: the project's feed key is built into pinprobe; --trust FILE \
adds keys for your own feed. A pull records the database it accepted and the highest serial ever \
accepted in CACHE/rules/trust.json; scans use that database only while it is not older than the \
binary's own, and every report names the database it used (rules_digest).\n\n\
Exit codes: 0 pulled; 2 refused or failed (unsigned, untrusted key, bad signature, not the signed \
database, rollback, replay, dropped rule, registry or I/O error), on one line of stderr.\n\n\
Examples:\n  pinprobe rules keygen ~/.config/pinprobe/feed.key\n  \
pinprobe rules push ./db docker://registry.example/team/rules:1 --key ~/.config/pinprobe/feed.key\n  \
pinprobe rules pull docker://registry.example/team/rules:1 --trust ~/.config/pinprobe/feed.key.pub";

/// The keys a pull trusts: the built-in ones and every --trust FILE's.
fn trusted_keys(files: &[PathBuf]) -> anyhow::Result<Vec<rules::feed::PublicKey>> {
    let mut keys = rules::feed::builtin_keys();
    for file in files {
        let text = crate::input::read_text(file, crate::input::MAX_TEXT)
            .with_context(|| format!("--trust {}", file.display()))?;
        keys.extend(rules::feed::parse_trust_file(
            &format!("--trust {}", file.display()),
            &text,
        )?);
    }
    Ok(keys)
}

fn pull(
    reference: &str,
    trust: &[PathBuf],
    allow_downgrade: bool,
    args: &RegistryArgs,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let Some(cache) = args
        .cache
        .clone()
        .or_else(crate::pin::fingerprint::default_cache_dir)
    else {
        anyhow::bail!("no cache directory: pass --cache DIR or set PINPROBE_CACHE");
    };
    let trust = rules::oci::Trust {
        keys: trusted_keys(trust)?,
        allow_downgrade,
    };
    let pulled = rules::oci::pull(reference, &cache, &args.options(), &trust)?;
    for w in &pulled.warnings {
        // Never hidden: a deliberate rollback is said every time.
        eprintln!("pinprobe: warning: {}", crate::model::text::printable(w));
    }
    writeln!(
        out,
        "pulled {} ({}): database {}, serial {}, signed by {}, dated {}, stored in {}",
        crate::view::image::reference::redact_userinfo(reference),
        pulled.digest,
        pulled.db_digest,
        pulled.serial,
        pulled.keyid,
        pulled.date.as_deref().unwrap_or("undated"),
        pulled.path.display()
    )?;
    Ok(Exit::Clean)
}

fn keygen(secret: &std::path::Path, out: &mut dyn Write) -> anyhow::Result<Exit> {
    use std::io::Write as _;
    let (secret_text, public_text) = rules::feed::generate()?;
    let public_path = {
        let mut p = secret.as_os_str().to_owned();
        p.push(".pub");
        PathBuf::from(p)
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options
        .open(secret)
        .with_context(|| format!("{}: the secret key (never overwritten)", secret.display()))?;
    file.write_all(secret_text.as_bytes())
        .with_context(|| secret.display().to_string())?;
    std::fs::write(&public_path, &public_text)
        .with_context(|| public_path.display().to_string())?;
    write!(out, "{public_text}")?;
    Ok(Exit::Clean)
}

fn push(
    dir: &std::path::Path,
    reference: &str,
    key: &std::path::Path,
    serial: Option<u64>,
    args: &RegistryArgs,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let text = crate::input::read_text(key, crate::input::MAX_TEXT)
        .with_context(|| format!("--key {}", key.display()))?;
    let key = rules::feed::SecretKey::parse(&format!("--key {}", key.display()), &text)?;
    let serial = match serial {
        Some(n) => n,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .context("the system clock is before 1970: pass --serial N")?
            .as_secs(),
    };
    let digest = rules::oci::push(dir, reference, &args.options(), &key, serial)?;
    writeln!(
        out,
        "pushed {} to {} ({digest}), serial {serial}, signed by {}",
        dir.display(),
        crate::view::image::reference::redact_userinfo(reference),
        key.public().id
    )?;
    Ok(Exit::Clean)
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match args.command {
        RulesCommand::Pull {
            reference,
            trust,
            allow_rules_downgrade,
            registry,
        } => pull(&reference, &trust, allow_rules_downgrade, &registry, out),
        RulesCommand::Push {
            dir,
            reference,
            key,
            serial,
            registry,
        } => push(&dir, &reference, &key, serial, &registry, out),
        RulesCommand::Keygen { secret } => keygen(&secret, out),
        RulesCommand::List { rules, json } => list(rules, json, out),
        RulesCommand::Show { id, rules, json } => show(&id, rules, json, out),
        RulesCommand::Lint { dir } => lint(dir, out),
        RulesCommand::Test { repos, rules } => test(&repos, rules, out),
        RulesCommand::Export { osv, rules } => export(&osv, rules, out),
    }
}

fn test(
    repos: &[(String, PathBuf)],
    dir: Option<PathBuf>,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let (db, notices) = rules::load(dir.as_deref()).context("loading rules")?;
    for n in &notices {
        eprintln!("pinprobe: {}", crate::model::text::printable(n));
    }
    let clones = crate::resolve::Clones::open(repos)?;
    let results = rules::vectors::run(&db, &clones);
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for r in &results {
        match &r.outcome {
            Outcome::Passed => {
                passed += 1;
                writeln!(out, "ok       {} {}: {}", r.rule, r.name, r.expect)?;
            }
            Outcome::Failed { got, why } => {
                failed += 1;
                writeln!(
                    out,
                    "FAIL     {} {}: expected {}, got {got} ({why})",
                    r.rule, r.name, r.expect
                )?;
            }
            Outcome::Skipped { reason } => {
                skipped += 1;
                writeln!(out, "skipped  {} {}: skipped ({reason})", r.rule, r.name)?;
            }
        }
    }
    writeln!(
        out,
        "{passed} passed, {failed} failed, {skipped} skipped ({} rules, {})",
        db.rules.len(),
        db.digest
    )?;
    Ok(exit::for_vectors(failed))
}

fn export(
    osv: &std::path::Path,
    dir: Option<PathBuf>,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let (db, notices) = rules::load(dir.as_deref()).context("loading rules")?;
    for n in &notices {
        eprintln!("pinprobe: {}", crate::model::text::printable(n));
    }
    let written = rules::osv::export(&db, osv)?;
    writeln!(
        out,
        "wrote {} OSV documents (schema {}) to {} ({})",
        written.len(),
        rules::osv::SCHEMA_VERSION,
        osv.display(),
        db.digest
    )?;
    Ok(Exit::Clean)
}

fn list(dir: Option<PathBuf>, json: bool, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (db, _) = rules::load(dir.as_deref()).context("loading rules")?;
    if json {
        let items: Vec<_> = db
            .rules
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.rule.id,
                    "severity": r.rule.database_specific.severity,
                    "kind": r.rule.database_specific.kind,
                    "summary": r.rule.summary,
                    "origin": match &r.origin { Origin::Builtin => "builtin".to_string(), Origin::Pulled(p) | Origin::User(p) => p.display().to_string() },
                })
            })
            .collect();
        serde_json::to_writer_pretty(
            &mut *out,
            &serde_json::json!({"rules_digest": db.digest, "rules": items}),
        )?;
        writeln!(out)?;
        return Ok(Exit::Clean);
    }
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(["id", "severity", "kind", "arch", "summary"]);
    for r in &db.rules {
        let s = &r.rule.database_specific;
        table.add_row([
            r.rule.id.to_string(),
            s.severity.to_string(),
            s.kind.clone(),
            s.arch.join(","),
            r.rule.summary.clone(),
        ]);
    }
    writeln!(out, "{table}")?;
    writeln!(out, "{} rules, digest {}", db.rules.len(), db.digest)?;
    Ok(Exit::Clean)
}

fn show(id: &str, dir: Option<PathBuf>, json: bool, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (db, _) = rules::load(dir.as_deref()).context("loading rules")?;
    let Some(loaded) = db.get(id) else {
        anyhow::bail!(
            "no rule `{id}` (known: {})",
            db.rules
                .iter()
                .map(|r| r.rule.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let r = &loaded.rule;
    if json {
        serde_json::to_writer_pretty(&mut *out, r)?;
        writeln!(out)?;
        return Ok(Exit::Clean);
    }
    let s = &r.database_specific;
    writeln!(out, "{}  [{} {}]", r.id, s.severity, s.kind)?;
    writeln!(out, "{}", r.summary)?;
    if !s.arch.is_empty() {
        writeln!(out, "arch: {}", s.arch.join(", "))?;
    }
    writeln!(out, "\n{}", r.details.trim_end())?;
    for a in &r.affected {
        writeln!(
            out,
            "\naffected: {} {}",
            a.package.ecosystem, a.package.name
        )?;
        for range in &a.ranges {
            if let Some(repo) = &range.repo {
                writeln!(out, "  repo: {repo}")?;
            }
            for e in &range.events {
                writeln!(out, "  {}: {}", e.name(), e.value())?;
            }
        }
        if !a.versions.is_empty() {
            writeln!(out, "  versions: {}", a.versions.join(", "))?;
        }
        for k in a.specific().known_affected_pins {
            writeln!(out, "  known affected pin: {} {}", k.commit, k.note)?;
        }
    }
    if !s.symptoms.is_empty() {
        writeln!(out, "\nsymptoms: {}", s.symptoms)?;
    }
    if !s.workaround.is_empty() {
        writeln!(out, "workaround: {}", s.workaround)?;
    }
    if s.signature.is_some() {
        writeln!(
            out,
            "signature: yes (source shape, evaluated on pinned or shipped files)"
        )?;
    }
    if let Some(symbols) = &s.symbols {
        writeln!(
            out,
            "symbols: {} (dynamic symbols of the shipped library)",
            symbols.library
        )?;
    }
    for reference in &r.references {
        writeln!(out, "{}: {}", reference.kind.to_lowercase(), reference.url)?;
    }
    writeln!(out, "source: {}", loaded.file)?;
    Ok(Exit::Clean)
}

fn lint(dir: Option<PathBuf>, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (builtin, _) = rules::load(None).context("loading built-in rules")?;
    let Some(dir) = dir else {
        writeln!(
            out,
            "{} built-in rules: ok ({})",
            builtin.rules.len(),
            builtin.digest
        )?;
        return Ok(Exit::Clean);
    };
    let rules::load::RuleDir {
        files,
        components,
        ledger,
    } = rules::load::read_dir(&dir)?;
    let mut registry = builtin.registry.clone();
    let mut problems: Vec<Diagnostic> = Vec::new();
    if let Some(text) = components {
        match serde_saphyr::from_str::<crate::pin::components::Registry>(&text) {
            Ok(r) => registry.layer(r),
            Err(e) => problems.push(Diagnostic {
                file: dir.join("components.yaml").display().to_string(),
                line: None,
                message: e.to_string().replace('\n', " "),
            }),
        }
    }
    if let Some(text) = ledger {
        let file = dir.join(rules::load::LEDGER_FILE).display().to_string();
        for cut in rules::lint::comment_truncations(&text) {
            problems.push(Diagnostic {
                file: file.clone(),
                line: Some(cut.line),
                message: cut.to_string(),
            });
        }
        if let Err(mut d) = rules::Ledger::parse(&file, &text) {
            problems.append(&mut d);
        }
    }
    let mut ids: Vec<(crate::model::RuleId, String)> = Vec::new();
    for (path, text) in &files {
        let file = path.display().to_string();
        match rules::load::parse(&file, text, &registry) {
            Ok(rule) => {
                if let Some((_, other)) = ids.iter().find(|(id, _)| *id == rule.id) {
                    problems.push(Diagnostic {
                        file: file.clone(),
                        line: text
                            .lines()
                            .position(|l| l.starts_with("id:"))
                            .map(|i| i + 1),
                        message: format!("duplicate rule id {} (also in {other})", rule.id),
                    });
                }
                ids.push((rule.id, file));
            }
            Err(mut d) => problems.append(&mut d),
        }
    }
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    if problems.is_empty() {
        writeln!(out, "{} rule files: ok", files.len())?;
    } else {
        writeln!(
            out,
            "{} problems in {} rule files",
            problems.len(),
            files.len()
        )?;
    }
    Ok(exit::for_lint(problems.len()))
}
