//! Fetching missing history (issue 16) against a real smart-HTTP git server on loopback
//! (`git http-backend` behind lighttpd), serving a synthetic FlashAttention history that a
//! vLLM-shaped tree pins through its real GitHub URL, redirected with `--mirror`.
//!
//! Needs lighttpd and git (`.ci/run` installs them); skips visibly without.

use crate::common;

use common::artifact::{vllm_files, with_dist_info, write_wheel};
use common::git_http::{self, Cutter, GitServer, Staller};
use common::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const R1: &str = "PINPROBE-2026-0001";
const TEST_RULE: &str = "TEST-SPLITKV-ANCESTRY";
const UPSTREAM: &str = "https://github.com/vllm-project/";

struct Served {
    tmp: tempfile::TempDir,
    history: FaHistory,
    bare: PathBuf,
    server: GitServer,
    rules: PathBuf,
    cache: PathBuf,
}

/// The synthetic history, served bare from `srv/flash-attention.git`.
fn served() -> Option<Served> {
    served_with(None)
}

/// [`served`], behind HTTP basic auth when `auth` names a user and password.
fn served_with(auth: Option<(&str, &str)>) -> Option<Served> {
    if !git_http::available() {
        return None;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let history = FaHistory::build(&tmp.path().join("flash-attention"));
    let root = tmp.path().join("srv");
    std::fs::create_dir_all(&root).expect("mkdir");
    let bare = root.join("flash-attention.git");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            &history.dir.to_string_lossy(),
            &bare.to_string_lossy(),
        ],
    );
    let server = match auth {
        Some((user, password)) => GitServer::start_private(&root, tmp.path(), user, password),
        None => GitServer::start(&root, tmp.path()),
    };
    let rules = tmp.path().join("rules");
    write(
        &rules,
        "test.yaml",
        &ancestry_rule(
            TEST_RULE,
            &[("introduced", &history.introduce), ("fixed", &history.fix)],
        ),
    );
    let cache = tmp.path().join("cache");
    Some(Served {
        tmp,
        history,
        bare,
        server,
        rules,
        cache,
    })
}

impl Served {
    /// A vLLM tree pinning the real FlashAttention URL at `sha`.
    fn tree(&self, name: &str, sha: &str) -> PathBuf {
        let tree = self.tmp.path().join(name);
        vllm_tree(&tree, FA_REPO, sha);
        tree
    }

    /// `pinprobe scan TREE` online, the upstream URL rewritten to `mirror`.
    fn scan_via(&self, tree: &Path, mirror: &str, extra: &[&str]) -> Run {
        let tree = tree.to_string_lossy().into_owned();
        self.run_via(&["scan", &tree], mirror, extra, &[])
    }

    /// `pinprobe ARGS --rules … --format json --mirror UPSTREAM=mirror EXTRA`, online, with
    /// `env` set, and neither the developer's git config nor a terminal prompt.
    fn run_via(&self, args: &[&str], mirror: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let rules = self.rules.to_string_lossy().into_owned();
        let rewrite = format!("{UPSTREAM}={mirror}");
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(&["--rules", &rules, "--format", "json", "--mirror", &rewrite]);
        all.extend_from_slice(extra);
        let mut cmd = Pinprobe::new(&all)
            .cache(&self.cache)
            .env_remove("PINPROBE_OFFLINE")
            // No developer git config (url.*.insteadOf, credential helpers) reaches the test,
            // and git never prompts for a password.
            .env("HOME", self.tmp.path())
            .env("XDG_CONFIG_HOME", self.tmp.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0");
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        cmd.run()
    }

    /// The server behind an HTTPS front: its base URL, the certificate file for `--ca-file`,
    /// and the front (kept alive by the caller).
    fn https(&self) -> (String, String, git_http::TlsFront) {
        let front = git_http::TlsFront::start(self.server.port);
        let ca = self.tmp.path().join(format!("ca-{}.pem", front.port));
        std::fs::write(&ca, &front.pem).expect("write ca");
        (
            format!("https://127.0.0.1:{}/git/", front.port),
            ca.to_string_lossy().into_owned(),
            front,
        )
    }

    fn scan(&self, tree: &Path, extra: &[&str]) -> Run {
        self.scan_via(tree, &self.server.base(), extra)
    }

    fn cached(&self) -> PathBuf {
        self.cache
            .join("repos/github.com/vllm-project/flash-attention.git")
    }

    /// Whether the cache repository holds `sha`.
    fn cache_has(&self, sha: &str) -> bool {
        std::process::Command::new("git")
            .args(["cat-file", "-e", &format!("{sha}^{{commit}}")])
            .current_dir(self.cached())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

/// The status of `rule`'s finding in a JSON report.
fn status(run: &Run, rule: &str) -> String {
    let json = run.json();
    let findings = json["targets"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    findings
        .iter()
        .find(|f| f["rule"] == rule)
        .and_then(|f| f["status"].as_str())
        .unwrap_or_else(|| panic!("no {rule} in {}\n{}", run.stdout, run.stderr))
        .to_string()
}

/// The evidence details of `rule`'s finding, joined.
fn evidence(run: &Run, rule: &str) -> String {
    let json = run.json();
    json["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == rule)
        .flat_map(|f| f["evidence"].as_array().cloned().unwrap_or_default())
        .map(|e| e["detail"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn cold_warm_incremental_offline() {
    let Some(s) = served() else { return };
    let tree = s.tree("vllm", &s.history.c2);
    // Every request goes through a counting proxy.
    let counter = Cutter::start(s.server.port, usize::MAX);
    let via = format!("http://127.0.0.1:{}/git/", counter.port);
    let requests = || counter.requests.load(Ordering::SeqCst);

    // Cold cache, two runs at once: both fetch-or-wait under the lock and decide.
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| s.scan_via(&tree, &via, &[]));
        let b = scope.spawn(|| s.scan_via(&tree, &via, &[]));
        (a.join().expect("run a"), b.join().expect("run b"))
    });
    for run in [&a, &b] {
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(status(run, TEST_RULE), "affected");
        assert!(
            evidence(run, TEST_RULE).contains("contains introducing commit"),
            "{}",
            run.stdout
        );
        assert_eq!(
            status(run, R1),
            "affected",
            "signature on the fetched sources"
        );
    }
    assert!(s.cache_has(&s.history.c2));
    assert!(s.cache_has(&s.history.fix));
    let cold = requests();
    assert!(cold > 0, "the cold scan fetched over HTTP");

    // Warm cache: no request at all, same verdicts.
    let warm = s.scan_via(&tree, &via, &[]);
    assert_eq!(warm.code, 1, "{}", warm.stderr);
    assert_eq!(status(&warm, TEST_RULE), "affected");
    assert_eq!(requests(), cold, "a warm cache makes no request");

    // Offline on the warm cache: the same verdicts, no request.
    let offline = s.scan_via(&tree, &via, &["--offline"]);
    assert_eq!(offline.code, 1, "{}", offline.stderr);
    assert_eq!(status(&offline, TEST_RULE), "affected");
    assert_eq!(requests(), cold);

    // A new upstream commit: the pin moves to it, an incremental fetch brings it.
    let dir = &s.history.dir;
    git(dir, &["checkout", "-q", "main"]);
    write(dir, "NEWS.md", "new upstream commit\n");
    let new = commit(dir, "news");
    git(dir, &["push", "-q", &s.bare.to_string_lossy(), "main"]);
    assert!(!s.cache_has(&new));
    let bumped = s.tree("vllm-bumped", &new);
    let run = s.scan_via(&bumped, &via, &[]);
    assert!(requests() > cold, "fetched again");
    assert!(s.cache_has(&new), "{}", run.stderr);
    // `new` descends from the fix (and from its revert): the ancestry rule is fixed.
    assert_eq!(status(&run, TEST_RULE), "not_affected", "{}", run.stdout);
}

#[test]
fn offline_opens_no_socket_and_says_what_a_fetch_would_decide() {
    let Some(s) = served() else { return };
    let listener = Staller::start();
    let tree = s.tree("vllm", &s.history.c2);
    let mirror = format!("http://127.0.0.1:{}/", listener.port);
    for run in [
        s.scan_via(&tree, &mirror, &["--offline"]),
        Pinprobe::new(&[
            "scan",
            &tree.to_string_lossy(),
            "--rules",
            &s.rules.to_string_lossy(),
            "--mirror",
            &format!("{UPSTREAM}={mirror}"),
        ])
        .cache(&s.cache)
        .env("PINPROBE_OFFLINE", "1")
        .run(),
    ] {
        // The known-pin and version evidence of before: the test rule stays undecided.
        assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("offline: fetching") && run.stderr.contains(TEST_RULE),
            "{}",
            run.stderr
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        listener.accepted.load(Ordering::SeqCst),
        0,
        "no socket opened"
    );
    assert!(!s.cached().exists(), "offline writes no cache repository");
}

#[test]
fn sha_on_no_branch_is_fetched_by_id() {
    let Some(s) = served() else { return };
    let dir = &s.history.dir;
    git(dir, &["checkout", "-q", "--detach", &s.history.c2]);
    write(dir, "pr.txt", "a pull request head\n");
    let pr = commit(dir, "pr head");
    git(dir, &["checkout", "-q", "main"]);
    git(
        dir,
        &[
            "push",
            "-q",
            &s.bare.to_string_lossy(),
            &format!("{pr}:refs/pull/7/head"),
        ],
    );
    let tree = s.tree("vllm", &pr);
    let run = s.scan(&tree, &[]);
    assert!(s.cache_has(&pr), "{}", run.stderr);
    assert_eq!(status(&run, TEST_RULE), "affected", "{}", run.stdout);
    // On no branch of the server: reported as such.
    assert!(
        run.stdout.contains("hygiene/unreachable-pin"),
        "{}",
        run.stdout
    );
}

#[test]
fn pinned_commit_gone_from_the_server_is_unknown() {
    let Some(s) = served() else { return };
    let dir = &s.history.dir;
    git(dir, &["checkout", "-q", "-b", "feature", &s.history.c2]);
    write(dir, "feature.txt", "force-pushed away\n");
    let gone = commit(dir, "feature");
    git(dir, &["checkout", "-q", "main"]);
    let bare = s.bare.to_string_lossy().into_owned();
    git(dir, &["push", "-q", &bare, "feature"]);
    // Force-push the branch back, then let the server forget the commit.
    git(
        dir,
        &[
            "push",
            "-q",
            "-f",
            &bare,
            &format!("{}:feature", s.history.c2),
        ],
    );
    git(&s.bare, &["reflog", "expire", "--expire=now", "--all"]);
    git(&s.bare, &["gc", "-q", "--prune=now"]);
    let tree = s.tree("vllm", &gone);
    let run = s.scan(&tree, &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
    assert!(
        evidence(&run, TEST_RULE).contains(&format!("does not have commit {gone}")),
        "{}",
        run.stdout
    );
}

#[test]
fn server_down_is_unknown_naming_the_cause() {
    let Some(s) = served() else { return };
    let tree = s.tree("vllm", &s.history.c2);
    let port = git_http::free_port();
    let run = s.scan_via(&tree, &format!("http://127.0.0.1:{port}/git/"), &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
    let why = evidence(&run, TEST_RULE);
    assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}");
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn stalled_server_times_out_as_unknown() {
    let Some(s) = served() else { return };
    let staller = Staller::start();
    let tree = s.tree("vllm", &s.history.c2);
    let started = Instant::now();
    let run = s.scan_via(
        &tree,
        &format!("http://127.0.0.1:{}/git/", staller.port),
        &["--fetch-timeout", "1"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(staller.accepted.load(Ordering::SeqCst) > 0);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
}

#[test]
fn pack_cut_mid_transfer_is_unknown_and_leaves_the_cache_usable() {
    let Some(s) = served() else { return };
    let tree = s.tree("vllm", &s.history.c2);
    let cutter = Cutter::start(s.server.port, 1200);
    let run = s.scan_via(
        &tree,
        &format!("http://127.0.0.1:{}/git/", cutter.port),
        &[],
    );
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
    // The next run, with the server whole again, fetches into the same cache and decides.
    let run = s.scan(&tree, &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "affected");
}

#[test]
fn repository_not_found_is_unknown() {
    let Some(s) = served() else { return };
    let tree = s.tree("vllm", &s.history.c2);
    let run = s.scan_via(&tree, &format!("{}missing/", s.server.base()), &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
    let why = evidence(&run, TEST_RULE);
    assert!(why.contains("/git/missing/flash-attention.git"), "{why}");
}

/// The status of `rule`'s change in a `diff` JSON review.
fn change(run: &Run, rule: &str) -> (String, String) {
    let json = run.json();
    let found = json["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["rule"] == rule)
        .unwrap_or_else(|| panic!("no {rule} change in {}\n{}", run.stdout, run.stderr));
    (
        found["change"].as_str().unwrap_or_default().to_string(),
        found["status"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn diff_fetches_the_pins_of_both_revisions() {
    let Some(s) = served() else { return };
    let vllm = s.tmp.path().join("vllm-repo");
    init(&vllm);
    vllm_tree(&vllm, FA_REPO, &s.history.c2);
    let base = commit(&vllm, "pin c2");
    vllm_tree(&vllm, FA_REPO, &s.history.c4);
    let head = commit(&vllm, "bump past the fix");
    let path = vllm.to_string_lossy().into_owned();
    let args = ["diff", base.as_str(), head.as_str(), path.as_str()];

    // Offline on a cold cache: neither side's ancestry is known.
    let offline = s.run_via(&args, &s.server.base(), &["--offline"], &[]);
    assert_eq!(
        change(&offline, TEST_RULE).0,
        "unknown",
        "{}",
        offline.stdout
    );

    // Online: both pins are fetched, and the bump fixes the test rule.
    let run = s.run_via(&args, &s.server.base(), &[], &[]);
    assert_eq!(
        change(&run, TEST_RULE),
        ("fixed".to_string(), "not_affected".to_string()),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(s.cache_has(&s.history.c2) && s.cache_has(&s.history.c4));
}

/// A wheel records no FlashAttention commit: the release ledger names it (and the repository
/// its pin declares), and that history is fetched to decide ancestry.
#[test]
fn a_wheel_fetches_the_history_of_its_ledger_pin() {
    let Some(s) = served() else { return };
    write(
        &s.rules,
        "ledger.yaml",
        &format!(
            r#"schema: 1
generated_by: tests/artifacts/fetch.rs
source: synthetic
extracted_with: synthetic
releases:
- version: "9.9.0"
  vllm_commit: "0a1b2c3d4"
  pins:
  - component: flash-attention
    declared_name: vllm-flash-attn
    command: FetchContent_Declare
    repo: {FA_REPO}
    reference: "{c2}"
    commit: "{c2}"
    file: cmake/external_projects/vllm_flash_attn.cmake
    line: 17
    configurations:
    - cuda
"#,
            c2 = s.history.c2
        ),
    );
    let wheel = s.tmp.path().join("vllm-9.9.0-cp38-abi3-linux_x86_64.whl");
    write_wheel(
        &wheel,
        &with_dist_info("vllm", "9.9.0", vllm_files("9.9.0", Sm90Call::Buggy)),
    );
    let run = s.scan_via(&wheel, &s.server.base(), &[]);
    assert_eq!(
        status(&run, TEST_RULE),
        "affected",
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        evidence(&run, TEST_RULE).contains("contains introducing commit"),
        "{}",
        run.stdout
    );
    assert!(s.cache_has(&s.history.c2) && s.cache_has(&s.history.fix));

    // Offline with the cache warm: the same verdict, decided from the cache.
    let offline = s.scan_via(&wheel, &s.server.base(), &["--offline"]);
    assert_eq!(
        status(&offline, TEST_RULE),
        "affected",
        "{}",
        offline.stderr
    );
}

const SECRET: &str = "s3cret-token-value";

#[test]
fn private_repository_needs_a_token_bound_to_its_host() {
    let Some(s) = served_with(Some(("x-access-token", SECRET))) else {
        return;
    };
    let tree = s.tree("vllm", &s.history.c2);
    let (base, ca, front) = s.https();
    let host = format!("127.0.0.1:{}", front.port);
    let with = |env: &[(&str, &str)]| {
        s.run_via(
            &["scan", &tree.to_string_lossy()],
            &base,
            &["--ca-file", &ca],
            env,
        )
    };

    // No credentials: the server refuses, the finding stays undecided.
    let none = with(&[]);
    assert_eq!(none.code, 3, "{}\n{}", none.stdout, none.stderr);
    assert_eq!(status(&none, TEST_RULE), "unknown");

    // A token bound to another host is not offered to this one.
    let other = with(&[
        ("PINPROBE_GIT_TOKEN", SECRET),
        ("PINPROBE_GIT_TOKEN_HOST", "git.example.com"),
    ]);
    assert_eq!(status(&other, TEST_RULE), "unknown", "{}", other.stderr);
    assert!(!other.all().contains(SECRET), "the token is never printed");

    // A token without a host is refused outright (exit 2, one line, never printed).
    let unbound = with(&[("PINPROBE_GIT_TOKEN", SECRET)]);
    unbound.assert_error("PINPROBE_GIT_TOKEN_HOST");
    assert!(!unbound.all().contains(SECRET));

    // The token bound to this host: fetched and decided.
    let run = with(&[
        ("PINPROBE_GIT_TOKEN", SECRET),
        ("PINPROBE_GIT_TOKEN_HOST", &host),
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "affected");
    assert!(!run.all().contains(SECRET), "the token is never printed");
}

#[test]
fn git_credential_helpers_answer_for_a_private_repository() {
    let Some(s) = served_with(Some(("helper-user", "helper-pass"))) else {
        return;
    };
    // The user's git config names a helper (the `git credential fill` protocol).
    write(
        s.tmp.path(),
        ".gitconfig",
        "[credential]\n\thelper = \"!f() { echo username=helper-user; echo password=helper-pass; }; f\"\n",
    );
    let tree = s.tree("vllm", &s.history.c2);
    let (base, ca, _front) = s.https();
    let run = s.scan_via(&tree, &base, &["--ca-file", &ca]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "affected");
    assert!(!run.all().contains("helper-pass"));
}

#[test]
fn a_token_never_follows_a_redirect_to_another_host() {
    let Some(s) = served_with(Some(("x-access-token", SECRET))) else {
        return;
    };
    // HTTPS all the way: the token's host (a redirector) sends every request on to the
    // private server (another host:port), which would accept the token if it were sent there.
    let private = git_http::TlsFront::start(s.server.port);
    let redirector = git_http::Redirector::start(&format!("https://127.0.0.1:{}", private.port));
    let front = git_http::TlsFront::start(redirector.port);
    let ca = s.tmp.path().join("both.pem");
    std::fs::write(&ca, format!("{}{}", private.pem, front.pem)).expect("write ca");
    let ca = ca.to_string_lossy().into_owned();
    let tree = s.tree("vllm", &s.history.c2);
    let via = format!("https://127.0.0.1:{}/git/", front.port);
    let scan = |host: u16| {
        s.run_via(
            &["scan", &tree.to_string_lossy()],
            &via,
            &["--ca-file", &ca],
            &[
                ("PINPROBE_GIT_TOKEN", SECRET),
                ("PINPROBE_GIT_TOKEN_HOST", &format!("127.0.0.1:{host}")),
            ],
        )
    };
    let run = scan(front.port);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(status(&run, TEST_RULE), "unknown");
    assert!(!run.all().contains(SECRET));
    assert!(
        !s.cache_has(&s.history.c2),
        "nothing came from the private server"
    );

    // Control: the redirect is followed, and the server it leads to is asked for by its own
    // name: a token bound to that host is offered to it.
    let run = scan(private.port);
    assert_eq!(status(&run, TEST_RULE), "affected", "{}", run.stderr);
    assert!(!run.all().contains(SECRET));
}

/// A small history for a second kernel project: `base`, then `introduce`, then `fix`.
struct SmallHistory {
    introduce: String,
    fix: String,
}

fn small_history(dir: &Path, name: &str) -> SmallHistory {
    init(dir);
    write(dir, "README.md", &format!("{name} (synthetic)\n"));
    commit(dir, "initial");
    write(dir, "kernel.cu", "// the bug\n");
    let introduce = commit(dir, "introduce the bug");
    write(dir, "kernel.cu", "// the fix\n");
    let fix = commit(dir, "fix the bug");
    SmallHistory { introduce, fix }
}

/// An ancestry rule for `component` at `repo` (introduced, fixed).
fn component_rule(id: &str, component: &str, repo: &str, h: &SmallHistory) -> String {
    format!(
        r#"id: {id}
summary: "synthetic bug in {component} (test rule)"
affected:
  - package:
      ecosystem: GIT
      name: {component}
    ranges:
      - type: GIT
        repo: {repo}
        events:
          - introduced: "{introduce}"
          - fixed: "{fix}"
    database_specific:
      component: {component}
database_specific:
  severity: high
  kind: performance
"#,
        introduce = h.introduce,
        fix = h.fix
    )
}

/// The issue's "done when": a vLLM-shaped tree pinning three kernel projects, every pinned
/// history served on loopback, scanned with no `--repo` and a cold cache: every finding the
/// served history decides is decided (no `unknown`), and the same scan on the warm cache makes
/// no request at all.
#[test]
fn a_tree_scanned_with_no_repo_is_decided_by_fetching_and_the_warm_scan_makes_no_request() {
    if !git_http::available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let fa = FaHistory::build(&tmp.path().join("fa"));
    let mla = small_history(&tmp.path().join("mla"), "FlashMLA");
    let gemm = small_history(&tmp.path().join("gemm"), "DeepGEMM");
    let root = tmp.path().join("srv");
    for (dir, served) in [
        ("fa", "vllm-project/flash-attention.git"),
        ("mla", "vllm-project/FlashMLA.git"),
        ("gemm", "deepseek-ai/DeepGEMM.git"),
    ] {
        let target = root.join(served);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                "--bare",
                &tmp.path().join(dir).to_string_lossy(),
                &target.to_string_lossy(),
            ],
        );
    }
    let server = GitServer::start(&root, tmp.path());
    let counter = Cutter::start(server.port, usize::MAX);
    let mirror = format!("https://github.com/=http://127.0.0.1:{}/git/", counter.port);

    // The tree: FlashAttention in the bug's range, FlashMLA in its test bug's range, DeepGEMM
    // past its test bug's fix.
    let tree = tmp.path().join("vllm");
    vllm_tree(&tree, FA_REPO, &fa.c2);
    write(
        &tree,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.26)\nproject(vllm_extensions LANGUAGES CXX)\ninclude(cmake/external_projects/vllm_flash_attn.cmake)\ninclude(cmake/external_projects/flashmla.cmake)\ninclude(cmake/external_projects/deepgemm.cmake)\n",
    );
    for (name, repo, sha) in [
        (
            "flashmla",
            "https://github.com/vllm-project/FlashMLA.git",
            &mla.introduce,
        ),
        (
            "deepgemm",
            "https://github.com/deepseek-ai/DeepGEMM.git",
            &gemm.fix,
        ),
    ] {
        write(
            &tree,
            &format!("cmake/external_projects/{name}.cmake"),
            &format!(
                "include(FetchContent)\nFetchContent_Declare(\n  {name}\n  GIT_REPOSITORY {repo}\n  GIT_TAG {sha}\n)\nFetchContent_MakeAvailable({name})\n"
            ),
        );
    }
    let rules = tmp.path().join("rules");
    write(
        &rules,
        "fa.yaml",
        &ancestry_rule(
            TEST_RULE,
            &[("introduced", &fa.introduce), ("fixed", &fa.fix)],
        ),
    );
    write(
        &rules,
        "mla.yaml",
        &component_rule(
            "TEST-MLA",
            "flashmla",
            "https://github.com/vllm-project/FlashMLA",
            &mla,
        ),
    );
    write(
        &rules,
        "gemm.yaml",
        &component_rule(
            "TEST-GEMM",
            "deepgemm",
            "https://github.com/deepseek-ai/DeepGEMM",
            &gemm,
        ),
    );
    let cache = tmp.path().join("cache");
    let scan = || {
        Pinprobe::new(&[
            "scan",
            &tree.to_string_lossy(),
            "--rules",
            &rules.to_string_lossy(),
            "--format",
            "json",
            "--mirror",
            &mirror,
        ])
        .cache(&cache)
        .env_remove("PINPROBE_OFFLINE")
        .env("HOME", tmp.path())
        .env("XDG_CONFIG_HOME", tmp.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .run()
    };
    let expect = [
        (TEST_RULE, "affected"),
        (R1, "affected"),
        ("TEST-MLA", "affected"),
        ("TEST-GEMM", "not_affected"),
    ];

    let cold = scan();
    for (rule, want) in expect {
        assert_eq!(status(&cold, rule), want, "{rule}\n{}", cold.stderr);
    }
    let requests = counter.requests.load(Ordering::SeqCst);
    assert!(requests > 0, "the cold scan fetched");
    assert!(
        !cold.stderr.contains("fetching http"),
        "no progress or fetch line when stderr is not a terminal: {}",
        cold.stderr
    );

    let warm = scan();
    for (rule, want) in expect {
        assert_eq!(status(&warm, rule), want, "{rule}\n{}", warm.stderr);
    }
    assert_eq!(
        counter.requests.load(Ordering::SeqCst),
        requests,
        "the warm scan makes no request"
    );
    assert_eq!(cold.stdout, warm.stdout, "the same report, cold or warm");
}

/// Fetches go through `HTTP_PROXY` / `HTTPS_PROXY` like the registry client: a mirror host that
/// does not resolve is reached through a proxy on loopback that forwards to the git server.
#[test]
fn fetches_go_through_the_proxy_from_the_environment() {
    let Some(s) = served() else { return };
    let tree = s.tree("vllm", &s.history.c2);
    let proxy = Cutter::start(s.server.port, usize::MAX);
    let mirror = "http://git.invalid:8080/git/";
    let without = s.run_via(
        &["scan", &tree.to_string_lossy()],
        mirror,
        &[],
        &[("HTTP_PROXY", ""), ("NO_PROXY", "")],
    );
    assert_eq!(status(&without, TEST_RULE), "unknown", "{}", without.stderr);
    let through = s.run_via(
        &["scan", &tree.to_string_lossy()],
        mirror,
        &[],
        &[
            ("HTTP_PROXY", &format!("http://127.0.0.1:{}", proxy.port)),
            ("NO_PROXY", ""),
        ],
    );
    assert_eq!(
        status(&through, TEST_RULE),
        "affected",
        "{}",
        through.stderr
    );
    assert!(proxy.requests.load(Ordering::SeqCst) > 0);
}
