//! The one way tests run the binary: [`Pinprobe`] builds the command (working directory,
//! environment), [`Run`] holds what came back, with the assertions every contract test makes.
//!
//! Every run starts from a known environment: no `VLLM_FLASH_ATTN_SRC_DIR` (it bypasses pins),
//! no registry or git credentials, an empty Docker config, a private cache and a private
//! `XDG_CONFIG_HOME` (no user-level config), so what a developer has set in their shell or
//! their home directory never changes a verdict.
//!
//! [`Pinprobe::traced`] runs the binary under strace and gives back every path it (or a child)
//! wrote, created, renamed, linked or removed ([`written_paths`]).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary gave back.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as JSON (panics with both streams when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", self.stdout, self.stderr))
    }

    /// stdout and stderr together, for searching.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The status of `rule` in a JSON report (every finding of it agrees), exactly.
    pub fn assert_status(&self, rule: &str, status: &str) {
        let json = self.json();
        let found: Vec<&str> = json["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["findings"].as_array().into_iter().flatten())
            .filter(|f| f["rule"] == rule)
            .filter_map(|f| f["status"].as_str())
            .collect();
        assert!(
            !found.is_empty() && found.iter().all(|s| *s == status),
            "{rule} must be {status}, found {found:?}\nstderr: {}",
            self.stderr
        );
    }

    /// The FA4 rule affected and exit 1 (affected outranks undecided), from a JSON report.
    pub fn assert_fa4_affected(&self) {
        assert_eq!(
            self.code, 1,
            "exit 1 for an affected target\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self.assert_status("PINPROBE-2026-0001", "affected");
    }

    /// An error: exit 2, exactly one line on stderr naming `names`, no panic.
    pub fn assert_error(&self, names: &str) {
        assert_eq!(
            self.code, 2,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert_eq!(
            self.stderr.trim_end().lines().count(),
            1,
            "one line: {}",
            self.stderr
        );
        assert!(self.stderr.contains(names), "`{names}` in: {}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        assert!(
            self.stdout.is_empty(),
            "no report on an error: {}",
            self.stdout
        );
    }
}

/// A command line for the binary, built up and then [`run`](Pinprobe::run).
pub struct Pinprobe {
    cmd: Command,
    input: Option<Vec<u8>>,
    _scratch: tempfile::TempDir,
}

/// The day every run believes it is, unless its test says otherwise.
pub const TODAY: &str = "2026-12-01";

impl Pinprobe {
    pub fn new<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Pinprobe {
        let scratch = tempfile::tempdir().expect("tempdir");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pinprobe"));
        cmd.args(args)
            .env_remove("VLLM_FLASH_ATTN_SRC_DIR")
            .env_remove("PINPROBE_REGISTRY_USERNAME")
            .env_remove("PINPROBE_REGISTRY_PASSWORD")
            .env_remove("PINPROBE_REGISTRY_HOST")
            .env_remove("PINPROBE_GIT_TOKEN")
            .env_remove("PINPROBE_GIT_TOKEN_HOST")
            .env("DOCKER_CONFIG", scratch.path().join("docker"))
            .env("PINPROBE_CACHE", scratch.path().join("cache"))
            // No user-level config (src/cli/config.rs) unless a test writes one here.
            .env("XDG_CONFIG_HOME", scratch.path().join("config"))
            // No test reaches the internet: fetch tests opt back in with env_remove.
            .env("PINPROBE_OFFLINE", "1")
            // The clock is pinned (ignore-entry expiry, the rule database's age): a day after
            // the built-in database's date, so no run warns that it is old, whatever the day
            // the suite runs. Tests of dates set their own.
            .env("PINPROBE_TODAY", TODAY)
            // Tables are laid out for COLUMNS (else 100 when piped): the same in every shell.
            .env_remove("COLUMNS");
        Pinprobe {
            cmd,
            input: None,
            _scratch: scratch,
        }
    }

    /// Run in `dir` (relative targets and `diff`'s repository are read from there).
    pub fn dir(mut self, dir: &Path) -> Pinprobe {
        self.cmd.current_dir(dir);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Pinprobe {
        self.cmd.env(key, value);
        self
    }

    pub fn envs(mut self, vars: &[(&str, &str)]) -> Pinprobe {
        for (k, v) in vars {
            self.cmd.env(k, v);
        }
        self
    }

    pub fn env_remove(mut self, key: &str) -> Pinprobe {
        self.cmd.env_remove(key);
        self
    }

    /// The cache directory (default: a fresh one per run).
    pub fn cache(self, dir: &Path) -> Pinprobe {
        self.env("PINPROBE_CACHE", dir)
    }

    /// Feed `bytes` to the run's stdin (else it reads an empty stdin).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Pinprobe {
        self.input = Some(bytes.into());
        self
    }

    /// Start the run and return at once (empty stdin, stdout and stderr piped), for a test that
    /// stops it midway: [`Spawned::kill`] is SIGKILL.
    pub fn spawn(mut self) -> Spawned {
        use std::process::Stdio;
        let child = self
            .cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pinprobe runs");
        Spawned {
            child,
            _scratch: self._scratch,
        }
    }

    pub fn run(mut self) -> Run {
        use std::io::Write as _;
        use std::process::Stdio;
        let mut child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pinprobe runs");
        let input = self.input.take().unwrap_or_default();
        let mut pipe = child.stdin.take().expect("stdin piped");
        // Written from a thread: a large input must not block while the child fills stdout.
        let feeder = std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
        let out = child.wait_with_output().expect("pinprobe runs");
        let _ = feeder.join();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Pinprobe {
    /// Run under `strace -f` (every process the binary starts too); returns the run and every
    /// path written to ([`written_paths`]). Needs strace (`.ci/run` installs it).
    pub fn traced(self) -> (Run, Vec<PathBuf>) {
        let (run, written, _) = self.traced_with_connects();
        (run, written)
    }

    /// [`Pinprobe::traced`], plus every network address the process tried to connect to
    /// (`ADDR:PORT` of each `connect` to an IPv4 or IPv6 socket, whether it succeeded or not).
    pub fn traced_with_connects(self) -> (Run, Vec<PathBuf>, Vec<String>) {
        let log = tempfile::tempdir().expect("tempdir");
        let prefix = log.path().join("trace");
        let mut cmd = Command::new("strace");
        cmd.arg("-ff")
            .arg("-qq")
            .arg("-y")
            .arg("-s")
            .arg("4096")
            .arg("-e")
            .arg(TRACED_CALLS)
            .arg("-o")
            .arg(&prefix)
            .arg(self.cmd.get_program())
            .args(self.cmd.get_args());
        if let Some(dir) = self.cmd.get_current_dir() {
            cmd.current_dir(dir);
        }
        for (k, v) in self.cmd.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let cwd = self
            .cmd
            .get_current_dir()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| std::env::current_dir().expect("cwd"));
        let traced = Pinprobe {
            cmd,
            input: self.input,
            _scratch: self._scratch,
        };
        let run = traced.run();
        assert!(
            !run.stderr.contains("strace:"),
            "strace failed: {}",
            run.stderr
        );
        let mut text = String::new();
        for entry in std::fs::read_dir(log.path()).expect("trace logs") {
            let path = entry.expect("entry").path();
            text.push_str(&std::fs::read_to_string(&path).expect("trace log"));
            text.push('\n');
        }
        (run, written_paths(&text, &cwd), connects(&text))
    }
}

/// The `ADDR:PORT` of every `connect` call to an IPv4 or IPv6 address in an strace log.
pub fn connects(log: &str) -> Vec<String> {
    let field = |line: &str, key: &str| {
        let rest = &line[line.find(key)? + key.len()..];
        let end = rest.find(['"', ')'])?;
        Some(rest[..end].to_string())
    };
    log.lines()
        .filter(|l| l.trim_start().starts_with("connect(") && l.contains("AF_INET"))
        .filter_map(|l| {
            let port = field(l, "sin6_port=htons(").or_else(|| field(l, "sin_port=htons("))?;
            let addr = field(l, "inet_addr(\"")
                .or_else(|| field(l, "inet_pton(AF_INET6, \""))
                .unwrap_or_default();
            Some(format!("{addr}:{port}"))
        })
        .collect()
}

/// The system calls [`Pinprobe::traced`] records: every way a process creates, changes or
/// removes a name in the file system, and `connect` (where it reaches on the network).
const TRACED_CALLS: &str = "trace=open,openat,openat2,creat,rename,renameat,renameat2,mkdir,mkdirat,unlink,unlinkat,rmdir,link,linkat,symlink,symlinkat,truncate,chmod,fchmodat,utimensat,connect";

/// The paths an strace log (`-y`, one call a line) shows written: opened with `O_WRONLY`,
/// `O_RDWR`, `O_CREAT` or `O_TRUNC`, or created, renamed (both names), linked, removed,
/// truncated, chmod-ed or touched, by a call that succeeded. Relative names are resolved
/// against their directory descriptor's path (`-y`) or `cwd`; `/dev/` and `/proc/` are left
/// out.
pub fn written_paths(log: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in log.lines() {
        let Some((call, rest)) = line.split_once('(') else {
            continue;
        };
        let call = call.trim();
        // `= 0`, `= 3</path>`: success; `= -1 ENOENT ...`: failure.
        let Some((args, result)) = rest.rsplit_once(") = ") else {
            continue;
        };
        if result.trim_start().starts_with('-') || result.trim_start().starts_with('?') {
            continue;
        }
        let strings = quoted(args);
        let dirfds = fd_paths(args);
        let names: Vec<PathBuf> = match call {
            "open" | "openat" | "openat2" => {
                let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
                    .iter()
                    .any(|f| args.contains(f));
                if !writes {
                    continue;
                }
                strings.first().cloned().into_iter().collect()
            }
            "creat" | "mkdir" | "mkdirat" | "unlink" | "unlinkat" | "rmdir" | "truncate"
            | "chmod" | "fchmodat" | "utimensat" => strings.first().cloned().into_iter().collect(),
            "rename" | "renameat" | "renameat2" | "link" | "linkat" => strings.clone(),
            // symlink(TARGET, NAME): only the link's own name is written.
            "symlink" | "symlinkat" => strings.last().cloned().into_iter().collect(),
            _ => continue,
        };
        let at = call.ends_with("at") || call.ends_with("at2");
        for (i, name) in names.into_iter().enumerate() {
            let path = if name.is_absolute() {
                name
            } else if at && let Some(Some(dir)) = dirfds.get(i) {
                dir.join(name)
            } else {
                cwd.join(name)
            };
            if path.starts_with("/dev") || path.starts_with("/proc") {
                continue;
            }
            out.push(path);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The double-quoted strings of an strace argument list, unescaped (`\"` and `\\`).
fn quoted(args: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => s.extend(chars.next()),
                '"' => break,
                c => s.push(c),
            }
        }
        out.push(PathBuf::from(s));
    }
    out
}

/// For each path argument of an `*at` call, the directory its descriptor names (`-y` shows
/// `5</tmp/dir>`; `AT_FDCWD` is `None`), in order.
fn fd_paths(args: &str) -> Vec<Option<PathBuf>> {
    let mut out = Vec::new();
    for part in args.split(", ") {
        let part = part.trim();
        if part == "AT_FDCWD" {
            out.push(None);
        } else if let Some(open) = part.find('<')
            && part[..open].bytes().all(|b| b.is_ascii_digit())
            && !part[..open].is_empty()
            && let Some(inner) = part[open + 1..].strip_suffix('>')
        {
            out.push(Some(PathBuf::from(inner)));
        }
    }
    out
}

/// A run started by [`Pinprobe::spawn`].
pub struct Spawned {
    pub child: std::process::Child,
    _scratch: tempfile::TempDir,
}

impl Spawned {
    /// SIGKILL, as a crash or an out-of-memory kill stops a run; what it had written stays.
    pub fn kill(mut self) -> Run {
        let _ = self.child.kill();
        let out = self.child.wait_with_output().expect("pinprobe waited for");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Run the binary with `args` in the current directory.
pub fn pinprobe(args: &[&str]) -> Run {
    Pinprobe::new(args).run()
}

/// Run the binary with `args` in `dir`.
/// `pinprobe scan DIR --format json --offline`.
pub fn scan_offline_json(dir: &Path) -> Run {
    pinprobe(&[
        "scan",
        dir.to_str().expect("utf-8"),
        "--format",
        "json",
        "--offline",
    ])
}

pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    Pinprobe::new(args).dir(dir).run()
}

/// The path of a fixture under `fixtures/`.
pub fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}
