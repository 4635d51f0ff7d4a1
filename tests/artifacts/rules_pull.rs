//! `pinprobe rules push` / `rules pull` against a real registry (Debian's `docker-registry`, as
//! the image tests use): a whole rule database published as a signed OCI artifact, pulled into
//! the cache with its signature, digests, media types and rules checked, then used by scans
//! instead of the built-in database; `--max-db-age` fails when the database in use is old.
//! (The feed's trust cases, rollbacks and bad signatures: tests/artifacts/rule_feed.rs.)
//!
//! Needs docker-registry (`.ci/run` installs it); skips visibly without (fails under CI).

use crate::common;
use crate::registry;
#[allow(unused_imports)]
use common::require;

use common::*;
use pinprobe::view::image::{Options, reference};
use std::path::{Path, PathBuf};

const PULLED_RULE: &str = "TEST-PULLED-RULE";

/// A whole database: this repository's own `rules/` (project data) plus one rule only it has.
fn database(root: &Path) -> PathBuf {
    let dir = root.join("db");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for entry in std::fs::read_dir(&rules).expect("rules/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, dir.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let sha = "1111111111111111111111111111111111111111";
    write(
        &dir,
        &format!("{PULLED_RULE}.yaml"),
        &ancestry_rule(PULLED_RULE, &[("introduced", sha)]),
    );
    dir
}

fn run(args: &[&str], cache: &Path) -> Run {
    Pinprobe::new(args).cache(cache).run()
}

/// A signing key made by `pinprobe rules keygen` in `dir`: (secret key file, trust file).
fn keys(dir: &Path) -> (String, String) {
    let secret = dir.join("feed.key");
    let made = pinprobe(&["rules", "keygen", &secret.to_string_lossy()]);
    assert_eq!(made.code, 0, "{}", made.all());
    let public = dir.join("feed.key.pub");
    (
        secret.to_string_lossy().into_owned(),
        public.to_string_lossy().into_owned(),
    )
}

fn rules_in(run: &Run) -> Vec<String> {
    let json = run.json();
    json["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["rule"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn pushed_database_is_pulled_checked_and_used_by_scans() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = database(tmp.path());
    let cache = tmp.path().join("cache");
    let target = reg.reference("pinprobe/rules", "v1");
    let tree = tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, "0123456789abcdef0123456789abcdef01234567");
    let tree = tree.to_string_lossy().into_owned();

    // Before any pull: the built-in database.
    let before = run(&["scan", &tree, "--format", "json"], &cache);
    assert!(!rules_in(&before).iter().any(|r| r == PULLED_RULE));

    let (key, trust) = keys(tmp.path());
    let pushed = run(
        &[
            "rules",
            "push",
            &db.to_string_lossy(),
            &target,
            "--key",
            &key,
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    assert_eq!(pushed.code, 0, "{}", pushed.all());
    let pulled = run(
        &[
            "rules",
            "pull",
            &target,
            "--trust",
            &trust,
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    assert_eq!(pulled.code, 0, "{}", pulled.all());
    assert!(pulled.stdout.contains("sha256:"), "{}", pulled.stdout);

    // Scans now use the pulled database, and say so; its digest is the report's.
    let after = run(&["scan", &tree, "--format", "json"], &cache);
    assert!(
        rules_in(&after).iter().any(|r| r == PULLED_RULE),
        "{}",
        after.stdout
    );
    assert!(
        after.stderr.contains("rules: the database pulled into"),
        "{}",
        after.stderr
    );
    let digest = after.json()["rules_digest"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        pulled.stdout.contains(&digest),
        "{digest} in {}",
        pulled.stdout
    );

    // --max-db-age: quiet while the database is young, an error (exit 2) once it is older.
    let young = Pinprobe::new(&["scan", &tree, "--format", "json", "--max-db-age", "30"])
        .cache(&cache)
        .run();
    assert!(!young.stderr.contains("--max-db-age"), "{}", young.stderr);
    let old = Pinprobe::new(&["scan", &tree, "--format", "json", "--max-db-age", "30"])
        .cache(&cache)
        .env("PINPROBE_TODAY", "2099-01-01")
        .run();
    assert_eq!(old.code, 2, "{}", old.stderr);
    assert!(
        old.stderr.contains("older than --max-db-age 30") && old.stderr.contains(&digest),
        "{}",
        old.stderr
    );
}

#[test]
fn a_database_that_does_not_load_is_neither_pushed_nor_pulled() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = database(tmp.path());
    let cache = tmp.path().join("cache");
    // A rule with a short SHA: the database does not load, so it is not published.
    write(
        &db,
        "BAD.yaml",
        &ancestry_rule("TEST-BAD", &[("introduced", "abc123")]),
    );
    let target = reg.reference("pinprobe/rules", "bad");
    let (key, trust) = keys(tmp.path());
    let pushed = run(
        &[
            "rules",
            "push",
            &db.to_string_lossy(),
            &target,
            "--key",
            &key,
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    pushed.assert_error("BAD.yaml");

    // Published anyway, by hand with the registry client and a valid signature over a
    // statement: the pull checks every rule and stores nothing.
    let secret = pinprobe::rules::feed::SecretKey::parse(
        "key",
        &std::fs::read_to_string(&key).expect("key"),
    )
    .expect("key parses");
    let statement = pinprobe::rules::feed::Statement {
        kind: pinprobe::rules::feed::STATEMENT_TYPE.into(),
        serial: u64::MAX / 2,
        db_digest: "sha256:0".into(),
        date: None,
        rules: vec!["TEST-BAD".into()],
        withdrawn: Vec::new(),
    };
    let envelope = pinprobe::rules::feed::sign(&statement, &secret);
    let layer = pinprobe::rules::oci::pack(&db).expect("pack");
    let opts = Options {
        insecure_registries: vec![reg.host.clone()],
        ..Options::default()
    };
    let reference::ImageRef::Registry(r) = reference::parse(&target).expect("reference") else {
        panic!("a registry reference");
    };
    let mut client = pinprobe::view::image::registry::Registry::new(r, &opts).expect("client");
    let layer_digest = client.push_blob(&layer).expect("layer");
    let config = client.push_blob(b"{}").expect("config");
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": pinprobe::rules::oci::ARTIFACT_TYPE,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": config, "size": 2},
        "layers": [{"mediaType": pinprobe::rules::oci::LAYER_MEDIA_TYPE, "digest": layer_digest, "size": layer.len()}],
        "annotations": {(pinprobe::rules::feed::ANNOTATION): envelope},
    });
    client
        .push_manifest(
            "bad",
            &serde_json::to_vec(&manifest).expect("json"),
            "application/vnd.oci.image.manifest.v1+json",
        )
        .expect("manifest");
    let pulled = run(
        &[
            "rules",
            "pull",
            &target,
            "--trust",
            &trust,
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    pulled.assert_error("does not load");
    let stored = std::fs::read_dir(cache.join("rules"))
        .map(|d| {
            d.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(stored, 0, "nothing stored");

    // An artifact of another type is refused by its manifest.
    let other = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": config, "size": 2},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest, "size": layer.len()}],
    });
    client
        .push_manifest(
            "other",
            &serde_json::to_vec(&other).expect("json"),
            "application/vnd.oci.image.manifest.v1+json",
        )
        .expect("manifest");
    let pulled = run(
        &[
            "rules",
            "pull",
            &reg.reference("pinprobe/rules", "other"),
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    pulled.assert_error("not a pinprobe rule database");
}

/// The registry client goes through `HTTP_PROXY` like git fetches do: a registry host that
/// does not resolve is reached through a proxy on loopback that forwards to the real one.
#[test]
fn the_registry_client_goes_through_the_proxy_from_the_environment() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = database(tmp.path());
    let cache = tmp.path().join("cache");
    let (key, trust) = keys(tmp.path());
    let pushed = run(
        &[
            "rules",
            "push",
            &db.to_string_lossy(),
            &reg.reference("pinprobe/rules", "v1"),
            "--key",
            &key,
            "--insecure-registry",
            &reg.host,
        ],
        &cache,
    );
    assert_eq!(pushed.code, 0, "{}", pushed.all());
    let port: u16 = reg
        .host
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .expect("port");
    let proxy = common::git_http::Cutter::start(port, usize::MAX);
    let unresolvable = "registry.invalid:5000";
    let pull = |proxy_url: Option<String>| {
        let mut cmd = Pinprobe::new(&[
            "rules",
            "pull",
            &format!("docker://{unresolvable}/pinprobe/rules:v1"),
            "--trust",
            &trust,
            "--insecure-registry",
            unresolvable,
        ])
        .cache(&cache)
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
        if let Some(url) = proxy_url {
            cmd = cmd.env("HTTP_PROXY", url);
        }
        cmd.run()
    };
    // Without the proxy the host does not resolve.
    assert_eq!(pull(None).code, 2);
    let through = pull(Some(format!("http://127.0.0.1:{}", proxy.port)));
    assert_eq!(through.code, 0, "{}", through.all());
    assert!(proxy.requests.load(std::sync::atomic::Ordering::SeqCst) > 0);
}
