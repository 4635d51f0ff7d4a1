//! The signed, monotonic rule feed (src/rules/feed.rs) against a real registry (Debian's
//! `docker-registry`): a rollback to an older serial, a replayed old feed, a database that drops
//! a rule, one older than the binary's own, an unsigned one, one signed by a key not trusted,
//! one whose signature is cut short and one whose signed statement names another database are
//! all refused on one line with exit 2, and nothing changes in the cache; an OSV withdrawal is
//! how a rule goes away; `--allow-rules-downgrade` lets a rollback through, loudly, at the pull
//! and on every scan, `-q` or not.
//!
//! Needs docker-registry (`.ci/run` installs it); skips visibly without (fails under CI).

use crate::common;
use crate::registry;
#[allow(unused_imports)]
use common::require;

use common::*;
use pinprobe::rules::feed;
use pinprobe::view::image::{Options, reference};
use std::path::{Path, PathBuf};

const EXTRA: &str = "TEST-FEED-RULE";
const FA4: &str = "PINPROBE-2026-0001";
/// A serial above the built-in database's (`rules::embedded::SERIAL`).
const BASE_SERIAL: u64 = 1_900_000_000;

/// This repository's own `rules/` (project data), plus `EXTRA` when asked for.
fn database(root: &Path, name: &str, extra: bool) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for entry in std::fs::read_dir(&rules).expect("rules/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, dir.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    if extra {
        write(
            &dir,
            &format!("{EXTRA}.yaml"),
            &ancestry_rule(EXTRA, &[("introduced", "0")]),
        );
    }
    dir
}

struct Feed {
    reg: registry::Registry,
    tmp: tempfile::TempDir,
    key: String,
    trust: String,
    cache: PathBuf,
}

impl Feed {
    fn start() -> Feed {
        let reg = registry::Registry::start(None);
        let tmp = tempfile::tempdir().expect("tempdir");
        let secret = tmp.path().join("feed.key");
        let made = pinprobe(&["rules", "keygen", &secret.to_string_lossy()]);
        assert_eq!(made.code, 0, "{}", made.all());
        assert!(
            made.stdout.starts_with(feed::PUBLIC_PREFIX),
            "{}",
            made.stdout
        );
        let cache = tmp.path().join("cache");
        Feed {
            reg,
            key: secret.to_string_lossy().into_owned(),
            trust: format!("{}.pub", secret.display()),
            tmp,
            cache,
        }
    }

    fn target(&self, tag: &str) -> String {
        self.reg.reference("pinprobe/rules", tag)
    }

    fn push(&self, db: &Path, tag: &str, serial: u64) {
        let run = Pinprobe::new(&[
            "rules",
            "push",
            &db.to_string_lossy(),
            &self.target(tag),
            "--key",
            &self.key,
            "--serial",
            &serial.to_string(),
            "--insecure-registry",
            &self.reg.host,
        ])
        .cache(&self.cache)
        .run();
        assert_eq!(run.code, 0, "{}", run.all());
    }

    fn pull(&self, tag: &str, extra: &[&str]) -> Run {
        let target = self.target(tag);
        let mut args = vec![
            "rules",
            "pull",
            &target,
            "--trust",
            &self.trust,
            "--insecure-registry",
            &self.reg.host,
        ];
        args.extend_from_slice(extra);
        Pinprobe::new(&args).cache(&self.cache).run()
    }

    fn trust_record(&self) -> String {
        std::fs::read_to_string(self.cache.join("rules/trust.json")).unwrap_or_default()
    }

    /// Push a manifest by hand: `layer` as the database, `annotation` as the feed envelope.
    fn push_raw(&self, tag: &str, layer: &[u8], annotation: Option<&str>) {
        let opts = Options {
            insecure_registries: vec![self.reg.host.clone()],
            ..Options::default()
        };
        let reference::ImageRef::Registry(r) =
            reference::parse(&self.target(tag)).expect("reference")
        else {
            panic!("a registry reference");
        };
        let mut client = pinprobe::view::image::registry::Registry::new(r, &opts).expect("client");
        let layer_digest = client.push_blob(layer).expect("layer");
        let config = client.push_blob(b"{}").expect("config");
        let mut manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": pinprobe::rules::oci::ARTIFACT_TYPE,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": config, "size": 2},
            "layers": [{"mediaType": pinprobe::rules::oci::LAYER_MEDIA_TYPE, "digest": layer_digest, "size": layer.len()}],
        });
        if let Some(a) = annotation {
            manifest["annotations"] = serde_json::json!({ (feed::ANNOTATION): a });
        }
        client
            .push_manifest(
                tag,
                &serde_json::to_vec(&manifest).expect("json"),
                "application/vnd.oci.image.manifest.v1+json",
            )
            .expect("manifest");
    }

    fn secret(&self) -> feed::SecretKey {
        feed::SecretKey::parse("key", &std::fs::read_to_string(&self.key).expect("key"))
            .expect("key parses")
    }

    fn scan(&self, tree: &Path, extra: &[&str]) -> Run {
        let mut args = vec!["scan", tree.to_str().expect("utf-8"), "--format", "json"];
        args.extend_from_slice(extra);
        Pinprobe::new(&args).cache(&self.cache).run()
    }
}

fn rules_in(run: &Run) -> Vec<String> {
    run.json()["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["rule"].as_str().map(str::to_string))
        .collect()
}

/// The statement of the database in `dir` under `serial`, as push signs it.
fn statement_of(dir: &Path, serial: u64) -> feed::Statement {
    let read = pinprobe::rules::load::read_dir(dir).expect("read");
    let (db, _) = pinprobe::rules::load::load_layers(Some((dir, &read)), None).expect("loads");
    feed::Statement::of(&db, serial)
}

#[test]
fn rollbacks_replays_and_dropped_rules_are_refused_and_a_withdrawal_is_not() {
    if !registry::available() {
        return;
    }
    let f = Feed::start();
    let tree = f.tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");

    let v1 = database(f.tmp.path(), "v1", false);
    let v2 = database(f.tmp.path(), "v2", true);
    f.push(&v1, "v1", BASE_SERIAL);
    f.push(&v2, "v2", BASE_SERIAL + 10);
    let pulled = f.pull("v2", &[]);
    assert_eq!(pulled.code, 0, "{}", pulled.all());
    assert!(
        pulled
            .stdout
            .contains(&format!("serial {}", BASE_SERIAL + 10)),
        "{}",
        pulled.stdout
    );
    let scan = f.scan(&tree, &[]);
    assert!(
        rules_in(&scan).iter().any(|r| r == EXTRA),
        "{}",
        scan.stdout
    );
    // The report names the database it used: pulled, its serial, the key that signed it.
    let source = &scan.json()["rules_source"];
    assert_eq!(source["origin"], "pulled", "{source}");
    assert_eq!(source["serial"], BASE_SERIAL + 10, "{source}");
    assert_eq!(source["key"], f.secret().public().id.as_str(), "{source}");
    assert_eq!(source["feed"], f.target("v2").as_str(), "{source}");
    let table = Pinprobe::new(&["scan", tree.to_str().expect("utf-8")])
        .cache(&f.cache)
        .run();
    assert!(
        table.stdout.contains(&format!(
            "pulled from {}, serial {}, signed by key {}",
            f.target("v2"),
            BASE_SERIAL + 10,
            f.secret().public().id
        )),
        "{}",
        table.stdout
    );
    let record = f.trust_record();

    // A replayed old feed: validly signed, lower serial. Refused, nothing changes.
    let replay = f.pull("v1", &[]);
    replay.assert_error("older than serial");
    assert!(replay.stderr.contains(&f.target("v1")), "{}", replay.stderr);
    assert_eq!(f.trust_record(), record, "the trust record is unchanged");
    assert!(rules_in(&f.scan(&tree, &[])).iter().any(|r| r == EXTRA));

    // A newer serial that drops a rule (v1's content again): refused.
    f.push(&v1, "v3", BASE_SERIAL + 20);
    f.pull("v3", &[])
        .assert_error(&format!("drops {EXTRA} without a withdrawal record"));
    assert_eq!(f.trust_record(), record);

    // Another database under the trusted serial (a fork): refused; the same one again is fine.
    f.push(&v1, "fork", BASE_SERIAL + 10);
    f.pull("fork", &[])
        .assert_error("already trusted for another database");
    assert_eq!(f.pull("v2", &[]).code, 0);

    // The rule withdrawn (OSV `withdrawn`): accepted, and the rule judges nothing any more.
    let v4 = database(f.tmp.path(), "v4", true);
    let file = v4.join(format!("{EXTRA}.yaml"));
    let text = std::fs::read_to_string(&file).expect("rule");
    std::fs::write(
        &file,
        format!("withdrawn: \"2026-12-01T00:00:00Z\"\n{text}"),
    )
    .expect("write");
    f.push(&v4, "v4", BASE_SERIAL + 30);
    let pulled = f.pull("v4", &[]);
    assert_eq!(pulled.code, 0, "{}", pulled.all());
    let scan = f.scan(&tree, &[]);
    assert!(
        !rules_in(&scan).iter().any(|r| r == EXTRA),
        "{}",
        scan.stdout
    );
    scan.assert_fa4_affected();

    // --allow-rules-downgrade: the rollback goes through, said at the pull and on every scan,
    // even with -q.
    let forced = f.pull("v1", &["--allow-rules-downgrade"]);
    assert_eq!(forced.code, 0, "{}", forced.all());
    assert!(
        forced
            .stderr
            .contains("--allow-rules-downgrade: accepted although serial"),
        "{}",
        forced.stderr
    );
    let quiet = f.scan(&tree, &["-q"]);
    assert!(
        quiet
            .stderr
            .contains("accepted with --allow-rules-downgrade"),
        "-q never hides it: {}",
        quiet.stderr
    );
    assert_eq!(quiet.json()["rules_source"]["downgraded"], true);
    // The high-water mark stays: a pull of the v2 feed is still below it.
    f.pull("v2", &[]).assert_error("older than serial");
}

#[test]
fn a_pulled_database_refused_at_scan_time_is_said_under_quiet_and_named_in_the_report() {
    if !registry::available() {
        return;
    }
    let f = Feed::start();
    let tree = f.tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    let v2 = database(f.tmp.path(), "v2", true);
    f.push(&v2, "v2", BASE_SERIAL + 10);
    assert_eq!(f.pull("v2", &[]).code, 0);
    // A rule file changed in the cache after the pull: no longer the signed database.
    let record: serde_json::Value = serde_json::from_str(&f.trust_record()).expect("json");
    let dir = f
        .cache
        .join("rules")
        .join(record["current"].as_str().expect("current"));
    let file = dir.join(format!("{EXTRA}.yaml"));
    let text = std::fs::read_to_string(&file).expect("rule");
    std::fs::write(&file, format!("{text}\n# changed\n")).expect("write");
    let quiet = f.scan(&tree, &["-q"]);
    assert!(
        quiet.stderr.contains("is not used") && quiet.stderr.contains("built-in database"),
        "-q never hides a refusal: {}",
        quiet.stderr
    );
    let source = &quiet.json()["rules_source"];
    assert_eq!(source["origin"], "built-in", "{source}");
    assert!(
        source["refused"]
            .as_str()
            .is_some_and(|r| r.contains("the signed statement names")),
        "{source}"
    );
    quiet.assert_fa4_affected();
}

#[test]
fn a_database_older_than_the_binarys_own_or_thinner_is_refused() {
    if !registry::available() {
        return;
    }
    let f = Feed::start();
    let old = database(f.tmp.path(), "old", false);
    // A serial from 2020: older than the built-in database.
    f.push(&old, "2020", 1_577_836_800);
    let run = f.pull("2020", &[]);
    run.assert_error("the built-in database");
    // Newer, but without the FA4 rule: the "thinned" feed.
    std::fs::remove_file(old.join(format!("{FA4}.yaml"))).expect("rm");
    f.push(&old, "thin", BASE_SERIAL);
    f.pull("thin", &[]).assert_error(&format!("drops {FA4}"));
    assert!(
        !f.cache.join("rules/trust.json").exists(),
        "nothing trusted"
    );
    // Scans still use the built-in database and find the FA4 bug.
    let tree = f.tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, "506341a143fcabd4bb79052a7605ada727d6b3f5");
    f.scan(&tree, &["-q"]).assert_fa4_affected();
}

#[test]
fn unsigned_untrusted_cut_and_mismatched_signatures_are_refused_on_one_line() {
    if !registry::available() {
        return;
    }
    let f = Feed::start();
    let db = database(f.tmp.path(), "db", true);
    let layer = pinprobe::rules::oci::pack(&db).expect("pack");
    let statement = statement_of(&db, BASE_SERIAL);
    let good = feed::sign(&statement, &f.secret());

    // No signature at all.
    f.push_raw("unsigned", &layer, None);
    f.pull("unsigned", &[]).assert_error("is not signed");

    // Signed, but the key is not trusted (no --trust): the built-in key alone.
    f.push_raw("good", &layer, Some(&good));
    let run = Pinprobe::new(&[
        "rules",
        "pull",
        &f.target("good"),
        "--insecure-registry",
        &f.reg.host,
    ])
    .cache(&f.cache)
    .run();
    run.assert_error("which is not trusted");

    // A truncated signature.
    let mut env: feed::Envelope = serde_json::from_str(&good).expect("envelope");
    env.signature.truncate(env.signature.len() / 2);
    f.push_raw(
        "cut",
        &layer,
        Some(&serde_json::to_string(&env).expect("json")),
    );
    let cut = f.pull("cut", &[]);
    cut.assert_error(&f.target("cut"));
    assert!(cut.stderr.contains("signature"), "{}", cut.stderr);

    // Signed by another key presenting the trusted key's id.
    let other_dir = f.tmp.path().join("other");
    std::fs::create_dir_all(&other_dir).expect("mkdir");
    let other_key = other_dir.join("k");
    assert_eq!(
        pinprobe(&["rules", "keygen", &other_key.to_string_lossy()]).code,
        0
    );
    let other =
        feed::SecretKey::parse("k", &std::fs::read_to_string(&other_key).expect("k")).expect("k");
    let mut env: feed::Envelope =
        serde_json::from_str(&feed::sign(&statement, &other)).expect("envelope");
    env.keyid = f.secret().public().id;
    f.push_raw(
        "forged",
        &layer,
        Some(&serde_json::to_string(&env).expect("json")),
    );
    f.pull("forged", &[]).assert_error("does not verify");

    // A good signature over another database's statement.
    let thin = database(f.tmp.path(), "thin", false);
    let thin_layer = pinprobe::rules::oci::pack(&thin).expect("pack");
    f.push_raw("swapped", &thin_layer, Some(&good));
    f.pull("swapped", &[])
        .assert_error("does not match the database");

    // Garbage in the annotation.
    f.push_raw("junk", &layer, Some("{\"statement\": 1"));
    f.pull("junk", &[]).assert_error("malformed");

    assert!(
        !f.cache.join("rules/trust.json").exists(),
        "nothing trusted"
    );
    // The good one, trusted, goes through.
    assert_eq!(f.pull("good", &[]).code, 0);
}
