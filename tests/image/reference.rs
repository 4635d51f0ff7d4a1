//! Differential tests for images against a reference unpacker: an independent, whiteout-aware
//! extraction of each layer stack with Python's `tarfile` into a real directory (whiteouts and
//! opaque directories applied to older layers, then the layer's entries: files, directories,
//! symbolic and hard links), whose files are then listed by resolving every path inside that
//! root filesystem, links included (chroot-style: absolute targets from the image root).
//!
//! For every generated stack (links of every kind, whiteouts, opaque directories, decoy
//! metadata) pinprobe's merged view must agree with the reference on every path an artifact
//! scan keeps: the same bytes, or the path reported unreadable (fail closed; only where the
//! reference reached the file through a link pinprobe cannot follow); never a file the
//! reference does not hold, never other bytes. And wherever the reference holds the buggy SM90
//! source, `pinprobe scan` must not exit 0.
//!
//! Needs `python3` (CI: `.ci/run`); without it the test prints `skipped:` and passes.

use super::build::{Compression, Image, Layer, SITE};
use super::common::{Sm90Call, block_info_new, fwd_sm90};
use super::{oci, pinprobe};
use pinprobe::view::View;
use pinprobe::view::image::{self, Options};
use pinprobe::view::is_interesting;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::Command;

/// Extract layers (uncompressed tars, base first) into ROOT, then print every regular file
/// reachable from the root through directories and links resolved inside ROOT, as JSON
/// `{path: sha256}`.
const REFERENCE: &str = r#"
import hashlib, json, os, shutil, stat, sys, tarfile
root = sys.argv[1]
os.makedirs(root, exist_ok=True)

def norm(p):
    parts = []
    for x in p.split("/"):
        if x in ("", "."):
            continue
        if x == "..":
            if parts:
                parts.pop()
        else:
            parts.append(x)
    return "/".join(parts)

def remove(rel):
    p = os.path.join(root, rel)
    if os.path.islink(p) or os.path.isfile(p):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)

for layer in sys.argv[2:]:
    with tarfile.open(layer) as t:
        members = t.getmembers()
        # Whiteouts apply to older layers: first, before this layer's own entries.
        for m in members:
            rel = norm(m.name)
            parent, _, name = rel.rpartition("/")
            if name == ".wh..wh..opq":
                d = os.path.join(root, parent)
                if os.path.isdir(d) and not os.path.islink(d):
                    for child in os.listdir(d):
                        remove(os.path.join(parent, child))
            elif name.startswith(".wh."):
                remove(os.path.join(parent, name[4:]))
        for m in members:
            rel = norm(m.name)
            name = rel.rpartition("/")[2]
            if not rel or name.startswith(".wh."):
                continue
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if m.isdir():
                if os.path.islink(p) or os.path.isfile(p):
                    os.unlink(p)
                os.makedirs(p, exist_ok=True)
                continue
            remove(rel)
            if m.issym():
                os.symlink(m.linkname, p)
            elif m.islnk():
                os.link(os.path.join(root, norm(m.linkname)), p)
            elif m.isfile():
                with open(p, "wb") as f:
                    f.write(t.extractfile(m).read())

def resolve(rel, hops=0):
    """The real path of image path REL inside ROOT, links resolved chroot-style, or None."""
    if hops > 40:
        return None
    cur = ""
    parts = rel.split("/") if rel else []
    for i, part in enumerate(parts):
        nxt = cur + "/" + part if cur else part
        p = os.path.join(root, nxt)
        if os.path.islink(p):
            target = os.readlink(p)
            base = "" if target.startswith("/") else cur
            joined = norm(base + "/" + target)
            rest = "/".join(parts[i + 1:])
            return resolve(norm(joined + "/" + rest) if rest else joined, hops + 1)
        if not os.path.lexists(p):
            return None
        cur = nxt
    return cur

out = {}
stack = [("", 0)]
while stack:
    vdir, depth = stack.pop()
    real = resolve(vdir)
    if real is None or depth > 24:
        continue
    d = os.path.join(root, real)
    if not os.path.isdir(d):
        continue
    for child in sorted(os.listdir(d)):
        v = vdir + "/" + child if vdir else child
        r = resolve(v)
        if r is None:
            continue
        full = os.path.join(root, r)
        if os.path.isdir(full):
            # A link back to an ancestor would loop: the walk is bounded by depth.
            stack.append((v, depth + 1))
        elif os.path.isfile(full):
            with open(full, "rb") as f:
                out[v] = hashlib.sha256(f.read()).hexdigest()
print(json.dumps(out))
"#;

const FA: &str = "vllm/vllm_flash_attn";

fn have_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn sm90(call: Sm90Call) -> Vec<u8> {
    fwd_sm90(call)
        .replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
        .into_bytes()
}

fn block_info() -> Vec<u8> {
    block_info_new()
        .replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
        .into_bytes()
}

/// A vLLM install without its `cute/` sources (the stacks place those).
fn install(version: &str) -> Layer {
    Layer::new(
        &format!("RUN pip install vllm=={version}"),
        Compression::Gzip,
    )
    .file(&format!("{SITE}/vllm/__init__.py"), "")
    .file(
        &format!("{SITE}/vllm/_version.py"),
        format!("__version__ = '{version}'\n"),
    )
    .file(&format!("{SITE}/{FA}/__init__.py"), "")
    .file(
        &format!("{SITE}/vllm-{version}.dist-info/METADATA"),
        format!("Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"),
    )
    .file(
        &format!("{SITE}/vllm-{version}.dist-info/RECORD"),
        format!("vllm/_version.py,,\nvllm/{FA}/cute/flash_fwd_sm90.py,,\n"),
    )
}

fn cute(layer: Layer, dir: &str, call: Sm90Call) -> Layer {
    layer
        .file(&format!("{dir}/__init__.py"), "")
        .file(&format!("{dir}/block_info.py"), block_info())
        .file(&format!("{dir}/flash_fwd_sm90.py"), sm90(call))
}

fn base() -> Layer {
    Layer::new("base", Compression::Gzip)
        .file("etc/os-release", "ID=test\n")
        .dir("usr/local/lib/python3.12")
}

/// The generated stacks: (name, layers base first).
fn stacks() -> Vec<(&'static str, Vec<Layer>)> {
    let cute_dir = format!("{SITE}/{FA}/cute");
    let bug = Sm90Call::Buggy;
    let fix = Sm90Call::Fixed;
    vec![
        (
            "absolute-dir-symlink",
            vec![
                base(),
                cute(install("0.33.0"), "opt/fa/cute", bug).symlink(&cute_dir, "/opt/fa/cute"),
            ],
        ),
        (
            "relative-dir-symlink",
            vec![
                base(),
                cute(install("0.33.0"), "opt/fa/cute", bug)
                    .symlink(&cute_dir, "../../../../../../../opt/fa/cute"),
            ],
        ),
        (
            "symlink-chain-across-layers",
            vec![
                base(),
                cute(Layer::new("COPY fa", Compression::Gzip), "srv/fa/cute", bug)
                    .symlink("opt/fa", "/srv/fa"),
                install("0.33.0").symlink(&cute_dir, "/opt/fa/cute"),
            ],
        ),
        (
            "file-symlink",
            vec![
                base(),
                cute(install("0.33.0"), "opt/fa/cute", bug)
                    .file(&format!("{cute_dir}/__init__.py"), "")
                    .file(&format!("{cute_dir}/block_info.py"), block_info())
                    .symlink(
                        &format!("{cute_dir}/flash_fwd_sm90.py"),
                        "/opt/fa/cute/flash_fwd_sm90.py",
                    ),
            ],
        ),
        (
            "hardlink-to-kept-file",
            vec![
                base(),
                cute(install("0.33.0"), "opt/fa/cute", bug)
                    .file(&format!("{cute_dir}/block_info.py"), block_info())
                    .hardlink(
                        &format!("{cute_dir}/flash_fwd_sm90.py"),
                        "opt/fa/cute/flash_fwd_sm90.py",
                    ),
            ],
        ),
        (
            "hardlink-to-unkept-file",
            vec![
                base(),
                install("0.33.0")
                    .file(&format!("{cute_dir}/block_info.py"), block_info())
                    .file("opt/store/9f2c", sm90(bug))
                    .hardlink(&format!("{cute_dir}/flash_fwd_sm90.py"), "opt/store/9f2c"),
            ],
        ),
        (
            "dangling-symlink",
            vec![
                base(),
                install("0.33.0").symlink(&cute_dir, "/nowhere/cute"),
            ],
        ),
        (
            "whiteout-and-reinstall",
            vec![
                base(),
                cute(install("0.30.0"), &cute_dir, bug),
                cute(
                    install("0.33.0")
                        .whiteout(&format!("{SITE}/vllm-0.30.0.dist-info"))
                        .whiteout(&format!("{SITE}/vllm")),
                    &cute_dir,
                    fix,
                ),
            ],
        ),
        (
            "opaque-cute-directory",
            vec![
                base(),
                cute(install("0.30.0"), &cute_dir, bug),
                Layer::new("COPY cute", Compression::Gzip)
                    .opaque(&cute_dir)
                    .file(&format!("{cute_dir}/flash_fwd_sm90.py"), sm90(bug)),
            ],
        ),
        (
            "decoy-record-on-top",
            vec![
                base(),
                cute(install("0.33.0"), &cute_dir, bug),
                Layer::new("decoy", Compression::Gzip)
                    .file(
                        &format!("{SITE}/vllm-9.9.9.dist-info/METADATA"),
                        "Metadata-Version: 2.1\nName: vllm\nVersion: 9.9.9\n",
                    )
                    .file(&format!("{SITE}/vllm-9.9.9.dist-info/RECORD"), ""),
            ],
        ),
        (
            "whiteout-of-a-dist-info-that-never-was",
            vec![
                base(),
                cute(install("0.33.0"), &cute_dir, bug),
                Layer::new("rm", Compression::Gzip)
                    .whiteout(&format!("{SITE}/vllm-0.1.0.dist-info")),
            ],
        ),
        (
            "link-replaced-by-directory",
            vec![
                base(),
                cute(install("0.33.0"), "opt/fa/cute", fix).symlink(&cute_dir, "/opt/fa/cute"),
                cute(
                    Layer::new("replace", Compression::Gzip).whiteout(&cute_dir),
                    &cute_dir,
                    bug,
                ),
            ],
        ),
    ]
}

#[test]
fn merged_view_equals_a_reference_unpacker() {
    if !have_python() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: image reference: python3 not found"
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let buggy = sha(&sm90(Sm90Call::Buggy));
    let mut failures = Vec::new();
    for (name, layers) in stacks() {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(dir.join("tars")).expect("mkdir");
        let image = Image::new(layers);
        let built = image.build();
        let mut tars = Vec::new();
        for (i, layer) in built.layers.iter().enumerate() {
            let path = dir.join("tars").join(format!("{i}.tar"));
            std::fs::write(&path, &layer.tar).expect("tar written");
            tars.push(path);
        }
        let out = Command::new("python3")
            .arg("-c")
            .arg(REFERENCE)
            .arg(dir.join("rootfs"))
            .args(&tars)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{name}: reference failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reference: BTreeMap<String, String> =
            serde_json::from_slice(&out.stdout).expect("reference JSON");
        let reference: BTreeMap<String, String> = reference
            .into_iter()
            .filter(|(p, _)| is_interesting(p))
            .collect();
        let target = oci(&dir.join("layout"), &image, "v1");
        let merged = image::open(&target, &Options::default()).expect("image opens");
        let unreadable = merged.view.unreadable();
        let _ = writeln!(
            std::io::stderr(),
            "{name}: reference {} interesting files, pinprobe {} kept + {} unreadable",
            reference.len(),
            merged.view.len(),
            unreadable.len()
        );
        // Not vacuous: the stacks that place FA sources at vLLM's path are seen there.
        if name != "dangling-symlink" {
            assert!(
                reference
                    .keys()
                    .any(|p| p.contains("vllm_flash_attn/cute/")),
                "{name}: {reference:?}"
            );
        }
        for (path, want) in &reference {
            match merged.view.read(path) {
                Ok(Some(bytes)) if sha(&bytes) == *want => {}
                Ok(Some(_)) => failures.push(format!("{name}: {path}: other bytes")),
                Ok(None) => failures.push(format!("{name}: {path}: missing from pinprobe")),
                Err(_) if unreadable.contains_key(path) => {}
                Err(e) => failures.push(format!("{name}: {path}: {e}")),
            }
        }
        for path in merged.view.files_under("").expect("list") {
            if !reference.contains_key(&path) {
                failures.push(format!(
                    "{name}: {path}: pinprobe holds it, the reference not"
                ));
            }
        }
        let carries_bug = reference
            .iter()
            .any(|(p, h)| p.ends_with("vllm_flash_attn/cute/flash_fwd_sm90.py") && *h == buggy);
        let run = pinprobe(&["scan", &target, "--format", "json"], &[]);
        if carries_bug && run.code == 0 {
            failures.push(format!("{name}: the image holds the bug but scan exits 0"));
        }
        if carries_bug && run.stdout.contains("\"not_affected\"") {
            let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
            let fa4_clean = json["targets"][0]["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|f| {
                    f["rule"] == "PINPROBE-2026-0001"
                        && f["component"] == "flash-attention"
                        && f["status"] == "not_affected"
                });
            if fa4_clean {
                failures.push(format!("{name}: FA4 not_affected on an image with the bug"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Two index entries for one platform: the first is scanned and a warning says so; a variant
/// must match exactly.
#[test]
fn multi_arch_warns_on_several_matches_and_matches_variants_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = Image::new(vec![base()]).build();
    let b = Image::new(vec![base(), install("0.33.0")]).build();
    super::build::write_oci_index(dir.path(), "multi", &[&a, &b]);
    let target = format!("oci:{}:multi", dir.path().display());
    let merged = image::open(&target, &Options::default()).expect("opens");
    assert!(
        merged
            .warnings
            .iter()
            .any(|w| w.contains("2 index entries match platform linux/amd64")),
        "{:?}",
        merged.warnings
    );
    let v3 = Options {
        platform: "linux/amd64/v3".into(),
        ..Options::default()
    };
    let err = image::open(&target, &v3).expect_err("no linux/amd64/v3 entry");
    assert!(
        err.to_string()
            .contains("no image for platform linux/amd64/v3"),
        "{err}"
    );
}
