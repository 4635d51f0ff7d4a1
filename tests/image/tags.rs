//! `--all-tags`: a tag-less `docker://HOST/REPO` expanded through the registry's tag list
//! (`/v2/<name>/tags/list`, `Link` pages, `n=`), against a real registry with several tags.

use super::front::Front;
use super::{Image, Layer, SITE, build, pinprobe, registry, registry_opts};
use crate::common::{Sm90Call, block_info_new, fwd_sm90};
use build::Compression;
use pinprobe::view::image::reference::{self, ImageRef};
use pinprobe::view::image::registry::Registry;
use std::sync::atomic::Ordering;

/// An image with vLLM `version` whose FA4 SM90 call has the bug shape or not.
fn release(version: &str, call: Sm90Call) -> Image {
    let files = build::vllm_install(SITE, version, &block_info_new(), &fwd_sm90(call));
    Image::new(vec![
        Layer::new("ADD rootfs.tar /", Compression::Gzip).file("etc/os-release", "ID=debian\n"),
        Layer::new(
            &format!("RUN pip install vllm=={version}"),
            Compression::Gzip,
        )
        .files(files),
    ])
}

/// Push five tags to `pp/fleet`, in an order that is not the sorted one.
fn push_fleet(reg: &registry::Registry) -> Vec<&'static str> {
    let dir = tempfile::tempdir().unwrap();
    let buggy = release("0.30.0", Sm90Call::Buggy).build();
    let fixed = release("0.33.0", Sm90Call::Fixed).build();
    let tags = [
        ("v2", &fixed),
        ("0.30.0", &buggy),
        ("latest", &fixed),
        ("v10", &buggy),
        ("0.33.0", &fixed),
    ];
    build::write_oci(dir.path(), &tags);
    for (tag, _) in &tags {
        reg.push(dir.path(), tag, "pp/fleet", None);
    }
    vec!["0.30.0", "0.33.0", "latest", "v10", "v2"]
}

fn registry_of(target: &str) -> Registry {
    let ImageRef::Registry(r) = reference::parse(target).unwrap() else {
        panic!("{target} is a registry reference")
    };
    let host = r.registry.clone();
    Registry::new(r, &registry_opts(&host)).unwrap()
}

#[test]
fn all_tags_expands_a_repository_through_paged_tag_lists() {
    if !registry::available() {
        return;
    }
    let reg = registry::Registry::start(None);
    let sorted = push_fleet(&reg);
    // Debian's registry (distribution 2.8) ignores `n` and lists the tags unsorted, in one
    // answer; a front pages its list as distribution 3, Harbor or GHCR do.
    let front = Front::start(&reg.host);
    front.page_tags.store(true, Ordering::SeqCst);
    let repo_direct = format!("docker://{}/pp/fleet", reg.host);
    assert_eq!(registry_of(&repo_direct).tags(2, 100).unwrap(), sorted);
    let repo = format!("docker://{}/pp/fleet", front.host);
    // Pages of two: three requests through `Link: <...>; rel="next"`, one sorted list.
    assert_eq!(registry_of(&repo).tags(2, 100).unwrap(), sorted);
    assert_eq!(front.pages.load(Ordering::SeqCst), 3, "pages of 2, 2 and 1");
    assert_eq!(registry_of(&repo).tags(100, 100).unwrap(), sorted);
    let over = registry_of(&repo).tags(2, 4).unwrap_err().to_string();
    assert!(over.contains("more than 4 tags"), "{over}");

    let args = |extra: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = [
            "scan",
            &repo,
            "--insecure-registry",
            &front.host,
            "--format",
            "json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        all.extend(extra.iter().map(|s| s.to_string()));
        all
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        pinprobe(&a, &[])
    };
    let swept = run(&["--all-tags", "--jobs", "2"]);
    assert_eq!(swept.code, 1, "{}", swept.stderr);
    let report = swept.json();
    let listed: Vec<String> = report["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap().to_string())
        .collect();
    let want: Vec<String> = sorted.iter().map(|t| format!("{repo}:{t}")).collect();
    assert_eq!(listed, want);
    for t in report["targets"].as_array().unwrap() {
        let name = t["target"].as_str().unwrap();
        let r1 = t["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "PINPROBE-2026-0001")
            .map(|f| f["status"].as_str().unwrap().to_string());
        let buggy = name.ends_with(":0.30.0") || name.ends_with(":v10");
        let want = if buggy { "affected" } else { "not_affected" };
        assert_eq!(r1.as_deref(), Some(want), "{name}");
    }
    // Each tag is a target like any other: sharded, a tag keeps its place in the list.
    let shard = run(&["--all-tags", "--shard", "1/2"]);
    let names: Vec<String> = shard.json()["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, [want[1].clone(), want[3].clone()]);
    // Bounded: a repository with more tags than --max-tags is one error line.
    run(&["--all-tags", "--max-tags", "3"]).assert_error("more than 3 tags");
    // Without --all-tags a tag-less reference is `:latest`, as before: one target, as given.
    let latest = run(&[]);
    assert_eq!(latest.code, 3, "{}", latest.stderr);
    let targets = latest.json()["targets"].as_array().unwrap().clone();
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0]["target"], repo.as_str());
    // A repository the registry does not know.
    let absent = format!("docker://{}/pp/absent", front.host);
    pinprobe(
        &[
            "scan",
            &absent,
            "--all-tags",
            "--insecure-registry",
            &front.host,
        ],
        &[],
    )
    .assert_error("--all-tags");
}
