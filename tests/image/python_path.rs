//! An image's own Python import path: its config's `Env` (`PYTHONPATH`, `PYTHONNOUSERSITE`),
//! `Volumes`, the interpreter's library directory and the user site-packages, in images built
//! by the fixture builder and scanned as an OCI layout and as a `docker save` archive.
//!
//! - `PYTHONPATH` naming a copy of a buggy vLLM inside the image: CPython imports that copy
//!   before site-packages, so the clean copy in site-packages is not what runs: its finding is
//!   `unknown` naming `PYTHONPATH` (never `not_affected`), and the buggy copy is `affected`.
//! - `PYTHONPATH` leading outside the image (a volume, a relative entry): `unknown` naming it.
//! - `sitecustomize.py` / `usercustomize.py` in the interpreter's own library directory or the
//!   user site-packages: `unknown` naming the file.

use crate::build::{self, Compression, Image, Layer, SITE};
use crate::common::{Pinprobe, Sm90Call, block_info_new, fwd_sm90};
use serde_json::Value;
use std::path::Path;

const FA4: &str = "PINPROBE-2026-0001";
const COPY: &str = "opt/vllm-0.30";
const LIB: &str = "usr/local/lib/python3.12";

fn base() -> Layer {
    Layer::new("ADD rootfs.tar / # base", Compression::Gzip)
        .file("etc/os-release", "ID=debian\n")
        .file(&format!("{LIB}/os.py"), "import sys\n")
}

/// A clean vLLM (0.33.0) installed in site-packages, and (with `copy`) a buggy vLLM 0.30.0
/// copied to /opt, then `extra` files in a layer of their own.
fn image(copy: bool, extra: &[(&str, &str)]) -> Image {
    let mut layers = vec![
        base(),
        Layer::new("RUN pip install vllm==0.33.0", Compression::Gzip).files(build::vllm_install(
            SITE,
            "0.33.0",
            &block_info_new(),
            &fwd_sm90(Sm90Call::Fixed),
        )),
    ];
    if copy {
        layers.push(
            Layer::new("COPY vllm-0.30 /opt/vllm-0.30", Compression::Zstd).files(
                build::vllm_install(
                    COPY,
                    "0.30.0",
                    &block_info_new(),
                    &fwd_sm90(Sm90Call::Buggy),
                ),
            ),
        );
    }
    let mut top = Layer::new("COPY startup files /", Compression::Gzip);
    for (path, text) in extra {
        top = top.file(path, *text);
    }
    layers.push(top);
    Image::new(layers)
}

/// Each form's target string for `image` under `dir`.
fn forms(dir: &Path, image: &Image) -> Vec<String> {
    let layout = dir.join("oci");
    build::write_oci(&layout, &[("latest", &image.build())]);
    let legacy = dir.join("legacy.tar");
    build::write_docker_save_legacy(&legacy, &image.build(), false);
    vec![
        format!("oci:{}:latest", layout.display()),
        legacy.display().to_string(),
    ]
}

/// One FA4 finding: (status, file, evidence JSON).
type Found = (String, String, String);

/// The FA4 findings.
fn fa4(report: &Value) -> Vec<Found> {
    report["targets"][0]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == FA4)
        .map(|f| {
            (
                f["status"].as_str().unwrap_or_default().to_string(),
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["evidence"].to_string(),
            )
        })
        .collect()
}

/// Scan every form of `image`: the exit code and the FA4 findings, the same in each form.
fn scan(image: &Image) -> (i32, Vec<Found>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut seen: Option<(i32, Vec<Found>)> = None;
    for target in forms(tmp.path(), image) {
        let run = Pinprobe::new(&["scan", &target, "--format", "json"])
            .cache(&tmp.path().join("cache"))
            .run();
        assert_ne!(run.code, 2, "{target}: {}", run.stderr);
        let got = (run.code, fa4(&run.json()));
        if let Some(first) = &seen {
            assert_eq!(first, &got, "{target}: every form says the same");
        }
        seen = Some(got);
    }
    seen.expect("two forms")
}

/// The finding on the copy under `dir`.
fn on<'a>(found: &'a [Found], dir: &str) -> &'a Found {
    found
        .iter()
        .find(|(_, file, _)| file.starts_with(dir))
        .unwrap_or_else(|| panic!("no finding on {dir}: {found:?}"))
}

#[test]
fn pythonpath_inside_the_image_puts_its_copy_before_site_packages() {
    // Without PYTHONPATH: site-packages' clean copy is what Python imports (the stray copy in
    // /opt is judged on its own).
    let (_, found) = scan(&image(true, &[]));
    assert_eq!(on(&found, SITE).0, "not_affected", "{found:?}");
    assert_eq!(on(&found, COPY).0, "affected", "{found:?}");

    // ENV PYTHONPATH=/opt/vllm-0.30 (after an entry that does not exist and one that holds no
    // vllm): CPython imports the buggy copy; site-packages' copy is not what runs.
    let with = image(true, &[("opt/lib/helpers.pth", "")]).env(&[
        "PATH=/usr/local/bin:/usr/bin",
        "PYTHONPATH=/opt/none:/opt/lib:/opt/vllm-0.30",
    ]);
    let (code, found) = scan(&with);
    assert_eq!(code, 1, "{found:?}");
    let (status, _, evidence) = on(&found, SITE);
    assert_eq!(status, "unknown", "{found:?}");
    assert!(
        evidence.contains("PYTHONPATH") && evidence.contains("/opt/vllm-0.30"),
        "{evidence}"
    );
    assert_eq!(on(&found, COPY).0, "affected", "{found:?}");

    // The copy in site-packages named first: it is what Python imports.
    let site_first = image(true, &[]).env(&[&format!("PYTHONPATH=/{SITE}:/opt/vllm-0.30")]);
    let (_, found) = scan(&site_first);
    assert_eq!(on(&found, SITE).0, "not_affected", "{found:?}");
}

#[test]
fn pythonpath_leading_outside_the_image_is_unknown_naming_it() {
    // Without PYTHONPATH the clean copy is not affected (other rules leave the run undecided:
    // exit 3 either way, so the FA4 finding is what is compared).
    let (_, found) = scan(&image(false, &[]));
    assert_eq!(on(&found, SITE).0, "not_affected", "{found:?}");
    for (env, volumes) in [
        ("PYTHONPATH=/mnt/models/vllm", &["/mnt/models"][..]),
        ("PYTHONPATH=src", &[][..]),
        ("PYTHONPATH=/opt/a::/opt/b", &[][..]),
    ] {
        let (code, found) = scan(&image(false, &[]).env(&[env]).volumes(volumes));
        assert_eq!(code, 3, "{env}: {found:?}");
        let (status, _, evidence) = on(&found, SITE);
        assert_eq!(status, "unknown", "{env}");
        assert!(evidence.contains("PYTHONPATH"), "{env}: {evidence}");
    }
}

#[test]
fn startup_modules_of_the_interpreter_and_the_user_site_are_unknown_naming_the_file() {
    let hook = "import sys\nsys.path.insert(0, '/srv/other')\n";
    for (file, env) in [
        (format!("{LIB}/sitecustomize.py"), None),
        (format!("{LIB}/usercustomize.py"), None),
        (
            "root/.local/lib/python3.12/site-packages/usercustomize.py".to_string(),
            None,
        ),
        (
            "opt/app/sitecustomize.py".to_string(),
            Some("PYTHONPATH=/opt/app"),
        ),
    ] {
        let mut built = image(false, &[(&file, hook)]);
        if let Some(env) = env {
            built = built.env(&[env]);
        }
        let (code, found) = scan(&built);
        assert_eq!(code, 3, "{file}: {found:?}");
        let (status, _, evidence) = on(&found, SITE);
        assert_eq!(status, "unknown", "{file}");
        assert!(evidence.contains(&file), "{file}: {evidence}");
    }
    // The user site is off in the image (PYTHONNOUSERSITE): its usercustomize does not run.
    let off = image(
        false,
        &[(
            "root/.local/lib/python3.12/site-packages/usercustomize.py",
            hook,
        )],
    )
    .env(&["PYTHONNOUSERSITE=1"]);
    assert_eq!(on(&scan(&off).1, SITE).0, "not_affected");
    // Debian's own sitecustomize (apport's hook), as a link to /etc: harmless.
    let apport = "# install the apport exception handler if available\ntry:\n    import apport_python_hook\nexcept ImportError:\n    pass\nelse:\n    apport_python_hook.install()\n";
    let mut debian = image(false, &[("etc/python3.12/sitecustomize.py", apport)]);
    let top = debian.layers.pop().expect("top layer");
    debian.layers.push(top.symlink(
        &format!("{LIB}/sitecustomize.py"),
        "/etc/python3.12/sitecustomize.py",
    ));
    assert_eq!(on(&scan(&debian).1, SITE).0, "not_affected");
}
