//! Benchmark: a whole `pinprobe scan` (bundled rules plus one ancestry rule) of a vLLM tree
//! pinned into a 5,000-commit FlashAttention history, next to the single
//! `git merge-base --is-ancestor FIX PIN` call that answers the same ancestry question.
//!
//! Run: `cargo bench --bench scan_vs_git` (release build; needs `git`). Prints medians and the
//! ratio for two pins: one after the fix (the walk finds it) and one before (the whole history
//! is walked and searched for a cherry-picked fix).

// A measurement program: it prints its figures and stops on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COMMITS: usize = 5_000;
const INTRODUCE: usize = 1_000;
const FIX: usize = 4_000;
const RUNS: usize = 21;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn blob(out: &mut Vec<u8>, path: &str, text: &str) {
    writeln!(out, "M 100644 inline {path}\ndata {}\n{text}", text.len()).unwrap();
}

/// Build the history with fast-import; returns the SHA of every commit, oldest first.
fn build_history(dir: &Path) -> Vec<String> {
    git(dir, &["init", "-q", "-b", "main"]);
    let sm90 = |fixed: bool| {
        format!(
            "class Sm90:\n    def kernel(self, num_splits):\n        b = BlockInfo(\n            self.tile_m,\n            self.tile_n,\n            self.is_causal,\n            self.is_local,\n            self.is_split_kv,\n{}        )\n",
            if fixed {
                "            num_splits=num_splits,\n"
            } else {
                ""
            }
        )
    };
    let block_info = |new: bool| {
        format!(
            "class BlockInfo:\n    tile_n: int\n{}\n    def get_n_block_min_max(self, seqlen, split_idx=0, num_splits=1):\n        if self.is_split_kv:\n{}            return 0, 1\n        return 0, 2\n",
            if new {
                "    num_splits: Int32 = 1\n"
            } else {
                ""
            },
            if new {
                "            num_splits = self.num_splits\n"
            } else {
                ""
            }
        )
    };
    let mut stream = Vec::new();
    for i in 1..=COMMITS {
        let msg = format!("commit {i}");
        write!(
            stream,
            "commit refs/heads/main\nmark :{i}\ncommitter Bench <bench@example.invalid> {} +0000\ndata {}\n{msg}\n",
            1_700_000_000 + i * 3600, // an hour apart: ~7 months of history
            msg.len()
        )
        .unwrap();
        if i > 1 {
            writeln!(stream, "from :{}", i - 1).unwrap();
        }
        if i == 1 {
            blob(
                &mut stream,
                "flash_attn/cute/block_info.py",
                &block_info(false),
            );
            blob(
                &mut stream,
                "flash_attn/cute/flash_fwd_sm90.py",
                &sm90(false),
            );
            for k in 0..50 {
                blob(
                    &mut stream,
                    &format!("csrc/kernel_{k}.cu"),
                    &format!("// kernel {k}\n"),
                );
            }
        }
        if i == INTRODUCE {
            blob(
                &mut stream,
                "flash_attn/cute/block_info.py",
                &block_info(true),
            );
        }
        if i == FIX {
            blob(
                &mut stream,
                "flash_attn/cute/flash_fwd_sm90.py",
                &sm90(true),
            );
        }
        blob(
            &mut stream,
            &format!("csrc/kernel_{}.cu", i % 50),
            &format!("// kernel {} rev {i}\n", i % 50),
        );
        stream.push(b'\n');
    }
    let marks = dir.join("marks");
    let mut child = Command::new("git")
        .args([
            "fast-import",
            "--quiet",
            &format!("--export-marks={}", marks.display()),
        ])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import");
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
    let text = std::fs::read_to_string(&marks).unwrap();
    let mut shas = vec![String::new(); COMMITS];
    for line in text.lines() {
        let (mark, sha) = line.split_once(' ').unwrap();
        let n: usize = mark.trim_start_matches(':').parse().unwrap();
        shas[n - 1] = sha.to_string();
    }
    git(dir, &["reset", "-q", "--hard", "main"]);
    shas
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(mut cmd: impl FnMut() -> Command, expect: &[i32]) -> Duration {
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let mut c = cmd();
        let start = Instant::now();
        let status = c
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("runs");
        runs.push(start.elapsed());
        let code = status.code().unwrap_or(-1);
        assert!(expect.contains(&code), "unexpected exit {code}");
    }
    median(runs)
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("pinprobe-bench-{}", std::process::id()));
    let fa = tmp.join("flash-attention");
    std::fs::create_dir_all(&fa).unwrap();
    let start = Instant::now();
    let shas = build_history(&fa);
    eprintln!("built {COMMITS} commits in {:?}", start.elapsed());
    // The bundled rule set, with the one fact a synthetic history cannot share (the fix's SHA)
    // retargeted: same id, so it replaces the built-in rule; signature and the rest unchanged.
    let bundled = tmp.join("rules-bundled");
    std::fs::create_dir_all(&bundled).unwrap();
    let r1 = include_str!("../rules/PINPROBE-2026-0001.yaml")
        .replace("6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46", &shas[FIX - 1]);
    std::fs::write(bundled.join("PINPROBE-2026-0001.yaml"), r1).unwrap();
    // Plus a rule with a known introducing commit, whose verdict also needs INTRO <= PIN.
    let extra = tmp.join("rules-extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(
        extra.join("bench.yaml"),
        format!(
            "id: BENCH-1\nsummary: bench\naffected:\n  - package: {{ecosystem: GIT, name: flash-attention}}\n    ranges:\n      - type: GIT\n        repo: https://github.com/vllm-project/flash-attention\n        events:\n          - introduced: \"{}\"\n          - fixed: \"{}\"\n    database_specific: {{component: flash-attention}}\ndatabase_specific: {{severity: high, kind: performance}}\n",
            shas[INTRODUCE - 1],
            shas[FIX - 1]
        ),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_pinprobe");
    let fix = shas[FIX - 1].clone();
    // The same history twice: as a fresh clone has it (no commit-graph file) and after
    // `git commit-graph write` (what `git gc` leaves), which speeds up both tools.
    let fa_graph = tmp.join("flash-attention-graph");
    git(
        &tmp,
        &[
            "clone",
            "-q",
            "--no-local",
            fa.to_str().unwrap(),
            fa_graph.to_str().unwrap(),
        ],
    );
    git(&fa_graph, &["commit-graph", "write", "--reachable"]);
    let intro = shas[INTRODUCE - 1].clone();
    println!(
        "pinprobe scan vs git merge-base --is-ancestor, {COMMITS} commits, median of {RUNS} runs"
    );
    println!(
        "{:<22} {:<13} {:<16} {:>10} {:>12} {:>7}",
        "pin", "clone", "rules", "pinprobe", "git", "ratio"
    );
    for (label, pin_index) in [
        ("after the fix (5000)", COMMITS),
        ("before the fix (3999)", FIX - 1),
    ] {
        let pin = shas[pin_index - 1].clone();
        let tree = tmp.join(format!("vllm-{pin_index}"));
        std::fs::create_dir_all(tree.join("cmake/external_projects")).unwrap();
        std::fs::write(
            tree.join("cmake/external_projects/vllm_flash_attn.cmake"),
            format!("FetchContent_Declare(\n  vllm-flash-attn\n  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n  GIT_TAG {pin}\n)\n"),
        )
        .unwrap();
        for (clone_label, repo) in [("fresh clone", &fa), ("commit-graph", &fa_graph)] {
            let repo_arg = format!("flash-attention={}", repo.display());
            let is_ancestor = |a: &str| {
                let (a, pin, repo) = (a.to_string(), pin.clone(), repo.clone());
                move || {
                    let mut c = Command::new("git");
                    c.args([
                        "-C",
                        repo.to_str().unwrap(),
                        "merge-base",
                        "--is-ancestor",
                        &a,
                        &pin,
                    ]);
                    c
                }
            };
            let git_fix = time(is_ancestor(&fix), &[0, 1]);
            let git_intro = time(is_ancestor(&intro), &[0, 1]);
            for (rules_label, dirs) in [
                ("bundled", vec![&bundled]),
                ("+ INTRO rule", vec![&bundled, &extra]),
            ] {
                // `--rules` takes one directory: merge the two into a scratch one.
                let dir = tmp.join(format!("rules-{}", dirs.len()));
                std::fs::create_dir_all(&dir).unwrap();
                for d in &dirs {
                    for e in std::fs::read_dir(d).unwrap() {
                        let e = e.unwrap();
                        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
                    }
                }
                let ours = time(
                    || {
                        let mut c = Command::new(bin);
                        c.args([
                            "scan",
                            tree.to_str().unwrap(),
                            "--repo",
                            &repo_arg,
                            "--rules",
                            dir.to_str().unwrap(),
                            "--format",
                            "json",
                        ]);
                        c
                    },
                    // Exit 0 after the fix, 1 before it: the benchmark also checks the verdict.
                    &[if pin_index >= FIX { 0 } else { 1 }],
                );
                // The baseline: git answering the ancestry questions the verdict needs (the fix
                // alone; with the INTRO rule and no fix in the pin, the introduction too).
                let baseline = if dirs.len() > 1 && pin_index < FIX {
                    git_fix + git_intro
                } else {
                    git_fix
                };
                let git_label = if dirs.len() > 1 && pin_index < FIX {
                    "FIX+INTRO"
                } else {
                    "FIX"
                };
                let ms = |d: Duration| d.as_secs_f64() * 1e3;
                println!(
                    "{label:<22} {clone_label:<13} {rules_label:<16} {:>8.2}ms {:>6.2}ms {git_label:<9} {:>5.2}x",
                    ms(ours),
                    ms(baseline),
                    ms(ours) / ms(baseline)
                );
            }
        }
    }
    if std::env::var_os("PINPROBE_BENCH_KEEP").is_some() {
        eprintln!("kept {}", tmp.display());
    } else {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
