//! Every stage's report on the synthetic fixtures, snapshotted as JSON (and the other formats of
//! the demo tree): a change in what a report says shows up as a snapshot diff to review.
//!
//! Run through the binary, so the snapshots hold whatever the crate's internal layout. Temporary
//! paths are replaced by `[TMP]`; the synthetic git histories have fixed identities and clocks,
//! so their SHAs are stable.

use crate::common;

use common::artifact::*;
use common::*;
use std::path::Path;

/// The binary's stdout with `tmp` replaced by `[TMP]`, plus its exit code.
fn report(tmp: &Path, dir: &Path, args: &[&str]) -> String {
    let run = run_in(dir, args);
    let text = run.stdout.replace(&tmp.display().to_string(), "[TMP]");
    format!("exit {}\n{text}", run.code)
}

#[test]
fn demo_tree_in_every_format() {
    // Named relative to the checkout: the table wraps at 100 columns, so an absolute path (a
    // long checkout) would move its line breaks.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for format in ["json", "sarif", "markdown", "table"] {
        let text = report(
            here,
            here,
            &["scan", "fixtures/demo-vllm", "--format", format],
        );
        insta::assert_snapshot!(format!("demo_{format}"), text);
    }
}

#[test]
fn source_trees_with_a_clone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let repo = format!("flash-attention={}", h.dir.display());
    for (name, commit) in [
        ("before", &h.c0),
        ("introduced", &h.introduce),
        ("fixed", &h.fix),
        ("cherry_picked", &h.side_pick),
        ("literal_false", &h.literal_false),
    ] {
        let tree = tmp.path().join(name);
        vllm_tree(&tree, FA_REPO, commit);
        let text = report(
            tmp.path(),
            tmp.path(),
            &[
                "scan",
                tree.to_str().expect("utf-8"),
                "--repo",
                &repo,
                "--format",
                "json",
            ],
        );
        insta::assert_snapshot!(format!("tree_{name}"), text);
    }
}

#[test]
fn wheels_and_environments() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (name, version, call) in [
        ("affected", "0.30.0", Sm90Call::Buggy),
        ("fixed", "0.33.0", Sm90Call::Fixed),
        ("patched_back", "0.33.0", Sm90Call::Buggy),
    ] {
        let files = with_dist_info("vllm", version, vllm_files(version, call));
        let wheel = tmp
            .path()
            .join(format!("vllm-{version}-{name}-cp38-abi3-linux_x86_64.whl"));
        write_wheel(&wheel, &files);
        let text = report(
            tmp.path(),
            tmp.path(),
            &["scan", wheel.to_str().expect("utf-8"), "--format", "json"],
        );
        insta::assert_snapshot!(format!("wheel_{name}"), text);

        let env = tmp.path().join(format!("env-{name}"));
        let site = "lib/python3.12/site-packages";
        let mut placed = files.clone();
        for (path, _) in placed.iter_mut() {
            *path = format!("{site}/{path}");
        }
        write_tree(&env, &placed);
        write(&env, "pyvenv.cfg", "home = /usr/bin\n");
        let text = report(
            tmp.path(),
            tmp.path(),
            &["scan", env.to_str().expect("utf-8"), "--format", "json"],
        );
        insta::assert_snapshot!(format!("env_{name}"), text);
    }
}

/// The terminal table of a real-shaped wheel (vLLM 0.30.0's layout, the buggy FA4 source): a
/// verdict line first, and no line wider than the width it is laid out for: COLUMNS, or 100
/// when piped.
#[test]
fn a_wheel_table_fits_100_columns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    // Named relative to the run's directory: the table wraps at 100 columns, so an absolute path
    // (a long checkout or TMPDIR) would move the line breaks.
    let wheel = "vllm-0.30.0-cp38-abi3-manylinux1_x86_64.whl";
    write_wheel(&tmp.path().join(wheel), &files);
    for (columns, width) in [(None, 100), (Some("100"), 100), (Some("80"), 80)] {
        let mut cmd = Pinprobe::new(&["scan", wheel]).dir(tmp.path());
        if let Some(c) = columns {
            cmd = cmd.env("COLUMNS", c);
        }
        let run = cmd.run();
        assert_eq!(run.code, 1, "{}", run.all());
        assert!(run.stdout.starts_with("AFFECTED: "), "{}", run.stdout);
        for line in run.stdout.lines() {
            assert!(
                line.chars().count() <= width,
                "{} chars at COLUMNS={columns:?}: {line}\n{}",
                line.chars().count(),
                run.stdout
            );
        }
        if columns.is_none() {
            insta::assert_snapshot!("wheel_table_100", run.stdout);
        }
    }
}

#[test]
fn image_layouts_and_archives() {
    use common::image::{Compression, Image, Layer, SITE, vllm_install};
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = Layer::new("base", Compression::Gzip).file("etc/os-release", "ID=test\n");
    let install = Layer::new("pip install vllm", Compression::Gzip).files(vllm_install(
        SITE,
        "0.30.0",
        &block_info_new(),
        &fwd_sm90(Sm90Call::Buggy),
    ));
    let image = Image::new(vec![base, install]);
    let layout = tmp.path().join("layout");
    common::image::write_oci(&layout, &[("v1", &image.build())]);
    let archive = tmp.path().join("image.tar");
    common::image::write_docker_save_oci(&archive, &image);
    for (name, target) in [
        ("oci_layout", format!("oci:{}:v1", layout.display())),
        ("docker_save", archive.display().to_string()),
    ] {
        let text = report(
            tmp.path(),
            tmp.path(),
            &["scan", &target, "--format", "json"],
        );
        insta::assert_snapshot!(format!("image_{name}"), text);
    }
}

/// The report formats a scan writes, each to be snapshotted for every target kind.
const FORMATS: [&str; 7] = [
    "json",
    "jsonl",
    "table",
    "markdown",
    "sarif",
    "openvex",
    "cyclonedx",
];

/// Every report format of every target kind: a source tree (the demo), a wheel, an installed
/// environment and a container image (an OCI layout), each carrying the affected FA4 pin or
/// source, so every format has an affected finding to show and the exit code is 1. Pairs
/// snapshotted elsewhere in this file (the demo tree's JSON, SARIF, Markdown and table; the
/// wheel's, the environment's and the image's JSON; the wheel's table) are not repeated.
///
/// Targets are named relative to the run's directory (the table wraps at 100 columns); the
/// filters turn the temporary directory into `[TMP]` and the ids the exchange formats derive
/// from what they describe (CycloneDX's serial number, OpenVEX's document id) into
/// placeholders, and SOURCE_DATE_EPOCH fixes their document time.
#[test]
fn every_format_of_every_target_kind() {
    use common::image::{Compression, Image, Layer, SITE, vllm_install};
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    write_wheel(
        &tmp.path()
            .join("vllm-0.30.0-cp38-abi3-manylinux1_x86_64.whl"),
        &files,
    );
    let env = tmp.path().join("venv");
    let placed: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(path, bytes)| {
            (
                format!("lib/python3.12/site-packages/{path}"),
                bytes.clone(),
            )
        })
        .collect();
    write_tree(&env, &placed);
    write(&env, "pyvenv.cfg", "home = /usr/bin\n");
    let base = Layer::new("base", Compression::Gzip).file("etc/os-release", "ID=test\n");
    let install = Layer::new("pip install vllm", Compression::Gzip).files(vllm_install(
        SITE,
        "0.30.0",
        &block_info_new(),
        &fwd_sm90(Sm90Call::Buggy),
    ));
    let image = Image::new(vec![base, install]);
    common::image::write_oci(&tmp.path().join("layout"), &[("v1", &image.build())]);
    let done: &[(&str, &str)] = &[
        ("tree", "json"),
        ("tree", "sarif"),
        ("tree", "markdown"),
        ("tree", "table"),
        ("wheel", "json"),
        ("wheel", "table"),
        ("env", "json"),
        ("image", "json"),
    ];
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&tmp.path().display().to_string()), "[TMP]");
    settings.add_filter(
        r"urn:uuid:[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}",
        "urn:uuid:[UUID]",
    );
    settings.add_filter(r"(openvex\.dev/docs/pinprobe/)[0-9a-f]{32}", "${1}[ID]");
    let _bound = settings.bind_to_scope();
    for (kind, dir, target) in [
        ("tree", here, "fixtures/demo-vllm"),
        (
            "wheel",
            tmp.path(),
            "vllm-0.30.0-cp38-abi3-manylinux1_x86_64.whl",
        ),
        ("env", tmp.path(), "venv"),
        ("image", tmp.path(), "oci:layout:v1"),
    ] {
        for format in FORMATS {
            if done.contains(&(kind, format)) {
                continue;
            }
            let run = Pinprobe::new(&["scan", target, "--format", format])
                .dir(dir)
                .env("SOURCE_DATE_EPOCH", "1764720000")
                .run();
            assert_eq!(run.code, 1, "{kind} {format}: {}", run.all());
            insta::assert_snapshot!(
                format!("{kind}_{format}"),
                format!("exit {}\n{}", run.code, run.stdout)
            );
        }
    }
}

/// `text` with every character a regular expression treats specially escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[test]
fn diff_of_a_pin_bump() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let h = FaHistory::build(&tmp.path().join("fa"));
    let v = tmp.path().join("vllm");
    init(&v);
    vllm_tree(&v, FA_REPO, &h.c0);
    let base = commit(&v, "pin before the bug");
    vllm_tree(&v, FA_REPO, &h.introduce);
    let bump = commit(&v, "bump to the bug");
    vllm_tree(&v, FA_REPO, &h.fix);
    let fix = commit(&v, "bump to the fix");
    let repo = format!("flash-attention={}", h.dir.display());
    for (name, from, to) in [("introduces", &base, &bump), ("fixes", &bump, &fix)] {
        for format in ["json", "markdown"] {
            let text = report(
                tmp.path(),
                &v,
                &["diff", from, to, ".", "--repo", &repo, "--format", format],
            );
            insta::assert_snapshot!(format!("diff_{name}_{format}"), text);
        }
    }
}
