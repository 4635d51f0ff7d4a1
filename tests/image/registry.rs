//! A real registry for tests: Debian's `docker-registry` (CNCF distribution) started on a free
//! 127.0.0.1 port with filesystem storage in a temporary directory (optionally with an
//! htpasswd file for basic auth), and `skopeo` to push OCI layouts into it. `.ci/run` installs
//! both; without them the tests that need them skip through `common::require` (CI fails).
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Registry {
    pub host: String,
    child: Child,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether the registry and skopeo are installed (`common::require`: a failure under
/// `PINPROBE_CI=1`, a visible skip elsewhere).
pub fn available() -> bool {
    // `crate::require` is `tests/common/require.rs` in the image tests and the image benchmark.
    use crate::require::{require, tool};
    require(
        tool("docker-registry") && tool("skopeo"),
        "docker-registry and skopeo (.ci/run installs them)",
    )
}

impl Registry {
    /// Start a registry; with `user`, only that user (bcrypt htpasswd) may pull or push.
    pub fn start(user: Option<(&str, &str)>) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::start_in(dir.path(), user);
        registry._dir = Some(dir);
        registry
    }

    /// Start a registry whose configuration and storage live in `dir` (kept afterwards).
    pub fn start_in(dir: &Path, user: Option<(&str, &str)>) -> Registry {
        std::fs::create_dir_all(dir).unwrap();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let host = format!("127.0.0.1:{port}");
        let mut auth = String::new();
        if let Some((u, p)) = user {
            let out = Command::new("htpasswd")
                .args(["-Bbn", u, p])
                .output()
                .expect("htpasswd (apache2-utils) is installed");
            assert!(out.status.success());
            std::fs::write(dir.join("htpasswd"), &out.stdout).unwrap();
            auth = format!(
                "auth:\n  htpasswd:\n    realm: pinprobe-test\n    path: {}\n",
                dir.join("htpasswd").display()
            );
        }
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n{auth}",
            dir.join("storage").display()
        );
        let config_path = dir.join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry starts");
        let started = Instant::now();
        while TcpStream::connect(&host).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on {host}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry {
            host,
            child,
            _dir: None,
        }
    }

    /// Push `oci:LAYOUT:TAG` to `REPO:TAG` with skopeo (`--all` keeps a multi-arch index).
    pub fn push(&self, layout: &Path, tag: &str, repo: &str, creds: Option<&str>) {
        let mut cmd = Command::new("skopeo");
        cmd.args([
            "--insecure-policy",
            "copy",
            "--all",
            "--quiet",
            "--dest-tls-verify=false",
        ]);
        if let Some(c) = creds {
            cmd.arg(format!("--dest-creds={c}"));
        }
        cmd.arg(format!("oci:{}:{tag}", layout.display()))
            .arg(format!("docker://{}/{repo}:{tag}", self.host));
        let out = cmd.output().expect("skopeo runs");
        assert!(
            out.status.success(),
            "skopeo copy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn reference(&self, repo: &str, tag: &str) -> String {
        format!("docker://{}/{repo}:{tag}", self.host)
    }
}
