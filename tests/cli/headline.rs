//! One story per run (issue 30): on every target kind (source tree, wheel, installed
//! environment, OCI image, and a tree with pin-hygiene findings) and under every kind of gate,
//! the table's per-target verdict, its closing line and the Markdown headline say the word and
//! the exit code the process exits with; pin-hygiene findings are counted apart and labelled
//! `pin-hygiene`, never `affected`; no location ends in `:0`.

use crate::common;
use common::artifact::*;
use common::*;
use std::path::Path;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-vllm");

fn word_of(code: i32) -> &'static str {
    match code {
        1 => "AFFECTED",
        3 => "UNDECIDED",
        0 => "PASSES",
        other => panic!("exit {other} is no gate verdict"),
    }
}

/// The target kinds, built here: (label, target).
fn targets(tmp: &Path) -> Vec<(String, String)> {
    let mut out = vec![("source tree".to_string(), DEMO.to_string())];
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    let wheel = tmp.join("vllm-0.30.0-cp38-abi3-linux_x86_64.whl");
    write_wheel(&wheel, &files);
    out.push(("wheel".into(), wheel.display().to_string()));
    let fixed = with_dist_info("vllm", "0.33.0", vllm_files("0.33.0", Sm90Call::Fixed));
    let env = tmp.join("env");
    let mut placed = fixed.clone();
    for (path, _) in placed.iter_mut() {
        *path = format!("lib/python3.12/site-packages/{path}");
    }
    write_tree(&env, &placed);
    write(&env, "pyvenv.cfg", "home = /usr/bin\n");
    out.push(("environment".into(), env.display().to_string()));
    {
        use common::image::{Compression, Image, Layer, SITE, vllm_install};
        let base = Layer::new("base", Compression::Gzip).file("etc/os-release", "ID=test\n");
        let install = Layer::new("pip install vllm", Compression::Gzip).files(vllm_install(
            SITE,
            "0.30.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Buggy),
        ));
        let layout = tmp.join("layout");
        common::image::write_oci(&layout, &[("v1", &Image::new(vec![base, install]).build())]);
        out.push(("image".into(), format!("oci:{}:v1", layout.display())));
    }
    // A tree whose only affected findings are pin hygiene (CUTLASS by tag) beside the fix.
    let hygiene = tmp.join("hygiene");
    vllm_tree(
        &hygiene,
        FA_REPO,
        "6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46",
    );
    let mut top = std::fs::read_to_string(hygiene.join("CMakeLists.txt")).expect("read");
    top.push_str(
        "include(FetchContent)\nFetchContent_Declare(cutlass GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git GIT_TAG v4.2.1)\nFetchContent_MakeAvailable(cutlass)\n",
    );
    write(&hygiene, "CMakeLists.txt", &top);
    out.push(("hygiene tree".into(), hygiene.display().to_string()));
    out
}

#[test]
fn the_headline_is_the_exit_code_on_every_target_kind_and_gate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let gates: [&[&str]; 5] = [
        &[],
        &["--fail-on", "high", "--fail-on-unknown", "never"],
        &["--fail-on", "never", "--fail-on-unknown", "never"],
        &["--fail-on", "critical"],
        &["--fail-on-hygiene", "--fail-on-unknown", "never"],
    ];
    let mut codes = std::collections::BTreeSet::new();
    for (label, target) in targets(tmp.path()) {
        for gate in gates {
            let mut args = vec!["scan", target.as_str()];
            args.extend_from_slice(gate);
            let run = Pinprobe::new(&args).env("COLUMNS", "300").run();
            let what = format!("{label} {gate:?}");
            let word = word_of(run.code);
            codes.insert(run.code);
            let first = run.stdout.lines().next().unwrap_or_default();
            assert!(
                first.starts_with(&format!("{word}: ")),
                "{what}: exit {} but the verdict line is {first:?}\n{}",
                run.code,
                run.stderr
            );
            let closing = run
                .stdout
                .lines()
                .rev()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            assert!(
                closing.starts_with(&format!("{word}: "))
                    && closing.ends_with(&format!("(exit {})", run.code)),
                "{what}: {closing:?}"
            );
            for line in run.stdout.lines() {
                assert!(
                    !line.split_whitespace().any(|w| w.ends_with(":0")),
                    "{what}: a `:0` location: {line}"
                );
            }
            // Pin hygiene is its own count and label.
            if label == "hygiene tree" {
                assert!(first.contains("1 pin-hygiene"), "{what}: {first}");
                assert!(first.contains("0 affected"), "{what}: {first}");
                assert!(run.stdout.contains("pin-hygiene"), "{what}");
                let hygiene_fails = gate.contains(&"--fail-on-hygiene");
                assert_eq!(run.code == 1, hygiene_fails, "{what}: {}", run.stdout);
            }
            let mut md_args = args.clone();
            md_args.extend(["--format", "markdown"]);
            let md = Pinprobe::new(&md_args).run();
            assert_eq!(md.code, run.code, "{what}");
            assert!(
                md.stdout
                    .contains(&format!("**{word}** (exit {})", run.code)),
                "{what}: {}",
                md.stdout
            );
        }
    }
    // The cases cover every verdict.
    assert_eq!(codes.into_iter().collect::<Vec<_>>(), [0, 1, 3]);
}
