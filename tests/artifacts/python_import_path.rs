//! Python's real import path, judged by CPython itself in a real virtual environment
//! (`python3 -m venv`): which `vllm` `import vllm` loads (`python -c 'import vllm;
//! print(vllm.__file__)'`) against what pinprobe reports for the environment.
//!
//! - A `.pth` `import` line or a `sitecustomize.py` that puts a buggy vLLM outside the scanned
//!   environment first on `sys.path`: CPython imports the buggy copy; pinprobe cannot see it and
//!   must say `unknown`, naming the file, never `not_affected`.
//! - A `.pth` path entry (relative, as `site` joins it to the site directory) to the directory
//!   holding the package: CPython imports it from there, and pinprobe judges that copy.
//! - A `.pth` path entry to a buggy copy while site-packages holds a clean one: path entries
//!   come after site-packages, CPython imports the clean copy, and pinprobe says `not_affected`.
//!
//! Needs python3 with venv (`.ci/run` installs python3); skips visibly without (fails under CI).

use crate::common;

use common::artifact::{vllm_files, with_dist_info, write_tree};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const FA4: &str = "PINPROBE-2026-0001";

/// A fresh venv in `dir`: (its python, its site-packages).
fn venv(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(dir)
        .output()
        .ok()?;
    if !made.status.success() {
        return None;
    }
    let python = dir.join("bin/python");
    let out = Command::new(&python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .ok()?;
    let site = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some((python, site))
}

fn setup() -> Option<(tempfile::TempDir, PathBuf, PathBuf, PathBuf)> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let env = root.join("env");
    let made = venv(&env);
    if !common::require::require(
        made.is_some(),
        "python3 with the venv module (python3-venv) to judge import paths with CPython",
    ) {
        return None;
    }
    let (python, site) = made?;
    Some((tmp, env, python, site))
}

/// The file CPython imports `vllm` from, in that environment (no user site, no PYTHONPATH).
fn imported(python: &Path) -> PathBuf {
    let out = Command::new(python)
        .args(["-c", "import vllm; print(vllm.__file__)"])
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .env("PYTHONNOUSERSITE", "1")
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The statuses and locations of the FA4 rule's findings in a JSON report.
fn fa4(run: &Run) -> Vec<(String, String, String)> {
    run.json()["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["findings"].as_array().into_iter().flatten())
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

fn scan(env: &Path) -> Run {
    Pinprobe::new(&["scan", env.to_str().expect("utf-8"), "--format", "json"]).run()
}

/// A clean vLLM (0.33.0, the fix) installed in site-packages, a buggy one (0.30.0) at `buggy`.
fn clean_and_buggy(site: &Path, buggy: &Path) {
    write_tree(
        site,
        &with_dist_info("vllm", "0.33.0", vllm_files("0.33.0", Sm90Call::Fixed)),
    );
    write_tree(buggy, &vllm_files("0.30.0", Sm90Call::Buggy));
}

#[test]
fn startup_code_that_imports_a_copy_outside_the_target_is_unknown_naming_the_file() {
    let Some((tmp, env, python, site)) = setup() else {
        return;
    };
    let outside = tmp.path().canonicalize().expect("c").join("elsewhere");
    clean_and_buggy(&site, &outside);
    // Before: CPython imports the clean copy, and pinprobe says not_affected.
    assert!(imported(&python).starts_with(&site));
    let before = fa4(&scan(&env));
    assert!(
        !before.is_empty() && before.iter().all(|(s, _, _)| s == "not_affected"),
        "{before:?}"
    );

    for (file, text) in [
        (
            "zz-shadow.pth",
            format!(
                "import sys; sys.path.insert(0, {:?})\n",
                outside.display().to_string()
            ),
        ),
        (
            "sitecustomize.py",
            format!(
                "import sys\nsys.path.insert(0, {:?})\n",
                outside.display().to_string()
            ),
        ),
    ] {
        std::fs::write(site.join(file), &text).expect("write");
        // CPython imports the buggy copy outside the environment.
        let from = imported(&python);
        assert!(
            from.starts_with(&outside),
            "{file}: CPython imports {from:?}"
        );
        let run = scan(&env);
        let found = fa4(&run);
        assert!(!found.is_empty(), "{file}: {}", run.all());
        for (status, _, evidence) in &found {
            assert_eq!(status, "unknown", "{file}: {found:?}");
            assert!(evidence.contains(file), "{file} named: {evidence}");
        }
        assert_eq!(run.code, 3, "{file}: undecided, fail closed: {}", run.all());
        std::fs::remove_file(site.join(file)).expect("rm");
    }
}

#[test]
fn a_pth_path_entry_is_followed_where_python_follows_it() {
    let Some((_tmp, env, python, site)) = setup() else {
        return;
    };
    // The distribution's metadata in site-packages, its package in a directory a relative
    // `.pth` line names (as `site.addpackage` joins it to the site directory).
    let src = env.join("src");
    let files = with_dist_info("vllm", "0.30.0", vllm_files("0.30.0", Sm90Call::Buggy));
    let (package, meta): (Vec<_>, Vec<_>) =
        files.into_iter().partition(|(p, _)| p.starts_with("vllm/"));
    write_tree(&site, &meta);
    write_tree(&src, &package);
    let rel = pathdiff(&src, &site);
    std::fs::write(site.join("vllm-src.pth"), format!("{rel}\n")).expect("write");
    let from = imported(&python);
    assert!(from.starts_with(&src), "CPython imports {from:?}");
    let run = scan(&env);
    run.assert_fa4_affected();
    let src_rel = src
        .strip_prefix(&env)
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    assert!(
        fa4(&run)
            .iter()
            .any(|(s, file, _)| s == "affected" && file.starts_with(&src_rel)),
        "the copy CPython imports is the one judged: {:?}",
        fa4(&run)
    );
}

#[test]
fn a_pth_path_entry_after_site_packages_does_not_shadow_its_package() {
    let Some((tmp, env, python, site)) = setup() else {
        return;
    };
    let outside = tmp.path().canonicalize().expect("c").join("elsewhere");
    clean_and_buggy(&site, &outside);
    std::fs::write(
        site.join("elsewhere.pth"),
        format!("{}\n", outside.display()),
    )
    .expect("w");
    let from = imported(&python);
    assert!(
        from.starts_with(&site),
        "path entries come after site-packages: {from:?}"
    );
    let found = fa4(&scan(&env));
    assert!(
        !found.is_empty() && found.iter().all(|(s, _, _)| s == "not_affected"),
        "{found:?}"
    );
}

/// `to` relative to `from` (both absolute, `to` under `from`'s ancestors).
fn pathdiff(to: &Path, from: &Path) -> String {
    let common = to
        .ancestors()
        .find(|a| from.starts_with(a))
        .expect("a common ancestor");
    let ups = from
        .strip_prefix(common)
        .expect("under")
        .components()
        .count();
    let mut out = vec![".."; ups].join("/");
    let rest = to.strip_prefix(common).expect("under");
    if !rest.as_os_str().is_empty() {
        out = format!("{out}/{}", rest.display());
    }
    out
}
