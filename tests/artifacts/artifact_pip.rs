//! Differential tests against pip: pip decides what a wheel installs. Each case builds a wheel
//! from this suite's synthetic FA4 sources (with Python's `zipfile`, which writes what it is
//! told: `//` and `./` in names, duplicates, an end record that understates the member count),
//! installs it with `pip install --no-deps --no-index --target`, and requires pinprobe's view of
//! the installed FlashAttention sources (path and sha256 of every `cute/*.py`) to equal the
//! files pip wrote, or pinprobe to refuse the wheel (exit 2) where the case says pinprobe is
//! stricter than pip. Wherever pip installed the buggy `flash_fwd_sm90.py`, `pinprobe scan`
//! must not exit 0 or report PINPROBE-2026-0001 `not_affected`.
//!
//! Needs `python3 -m pip` (CI: `.ci/run`); without it the test prints `skipped:` and passes.

use crate::common;

use assert_cmd::cargo::cargo_bin_cmd;
use common::{Sm90Call, block_info_new, fwd_sm90};
use pinprobe::view::{View, WheelView};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

const RULE: &str = "PINPROBE-2026-0001";
const CUTE: &str = "vllm/vllm_flash_attn/cute";

/// Builds a wheel: members in order, then RECORD (hashes of the members so far), then the
/// `appended` members; optionally the end record's member count understated by `understate`.
const MAKE_WHEEL: &str = r#"
import base64, hashlib, json, struct, sys, warnings, zipfile
warnings.simplefilter("ignore")
spec = json.load(sys.stdin)
def info(name):
    return zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
with zipfile.ZipFile(spec["out"], "w", zipfile.ZIP_DEFLATED) as z:
    record = []
    for name, text in spec["members"]:
        data = text.encode()
        z.writestr(info(name), data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(spec["dist_info"] + "/RECORD,,")
    z.writestr(info(spec["dist_info"] + "/RECORD"), "\n".join(record) + "\n")
    for name, text in spec["appended"]:
        z.writestr(info(name), text.encode())
if spec["understate"]:
    b = bytearray(open(spec["out"], "rb").read())
    at = b.rfind(b"PK\x05\x06")
    n = struct.unpack_from("<H", b, at + 10)[0] - spec["understate"]
    struct.pack_into("<HH", b, at + 8, n, n)
    open(spec["out"], "wb").write(bytes(b))
"#;

fn skip(why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: artifact_pip: {why}");
}

fn have_pip() -> bool {
    Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// vLLM's shipped sources with the SM90 call in `call`'s shape, imports rewritten.
fn sm90(call: Sm90Call) -> String {
    fwd_sm90(call).replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
}

fn block_info() -> String {
    block_info_new().replace("flash_attn.cute", "vllm.vllm_flash_attn.cute")
}

/// The members every case starts from: METADATA, WHEEL, and vLLM's package with the FA4 copy
/// except `flash_fwd_sm90.py` (the cases place it).
fn base(version: &str) -> Vec<(String, String)> {
    let di = format!("vllm-{version}.dist-info");
    vec![
        ("vllm/__init__.py".into(), String::new()),
        (
            "vllm/_version.py".into(),
            format!("__version__ = version = '{version}'\n"),
        ),
        ("vllm/vllm_flash_attn/__init__.py".into(), String::new()),
        (format!("{CUTE}/__init__.py"), String::new()),
        (format!("{CUTE}/block_info.py"), block_info()),
        (
            format!("{di}/METADATA"),
            format!("Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"),
        ),
        (
            format!("{di}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: pinprobe-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .into(),
        ),
    ]
}

/// What pinprobe must do with a wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Show exactly the FA sources pip installs.
    SameAsPip,
    /// Refuse the wheel (exit 2): pip refuses it too, or installs something pinprobe will not
    /// vouch for (a duplicate, a hidden member).
    Refuse,
}

struct Case {
    name: &'static str,
    version: &'static str,
    members: Vec<(String, String)>,
    appended: Vec<(String, String)>,
    understate: u16,
    want: Want,
}

fn case(name: &'static str, version: &'static str, want: Want) -> Case {
    Case {
        name,
        version,
        members: base(version),
        appended: Vec::new(),
        understate: 0,
        want,
    }
}

impl Case {
    fn member(mut self, name: &str, text: String) -> Self {
        self.members.push((name.to_string(), text));
        self
    }
    fn appended(mut self, name: &str, text: String, understate: u16) -> Self {
        self.appended.push((name.to_string(), text));
        self.understate = understate;
        self
    }
}

fn cases() -> Vec<Case> {
    let sm90_path = format!("{CUTE}/flash_fwd_sm90.py");
    let data = |v: &str, scheme: &str| format!("vllm-{v}.data/{scheme}/{CUTE}/flash_fwd_sm90.py");
    vec![
        case("plain-buggy", "0.30.0", Want::SameAsPip).member(&sm90_path, sm90(Sm90Call::Buggy)),
        case("plain-fixed", "0.33.0", Want::SameAsPip).member(&sm90_path, sm90(Sm90Call::Fixed)),
        // pip installs `.data/purelib` and `.data/platlib` over the root file: a 0.33.0 label
        // and a fixed root file, with the bug installed from `.data`.
        case("purelib-overlay", "0.33.0", Want::SameAsPip)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .member(&data("0.33.0", "purelib"), sm90(Sm90Call::Buggy)),
        case("platlib-overlay", "0.33.0", Want::SameAsPip)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .member(&data("0.33.0", "platlib"), sm90(Sm90Call::Buggy)),
        case("purelib-only", "0.33.0", Want::SameAsPip)
            .member(&data("0.33.0", "purelib"), sm90(Sm90Call::Buggy)),
        // Names pip normalises with os.path.normpath.
        case("double-slash", "0.33.0", Want::SameAsPip).member(
            "vllm//vllm_flash_attn/cute//flash_fwd_sm90.py",
            sm90(Sm90Call::Buggy),
        ),
        case("dot-segments", "0.33.0", Want::SameAsPip).member(
            "./vllm/x/../vllm_flash_attn/./cute/flash_fwd_sm90.py",
            sm90(Sm90Call::Buggy),
        ),
        // pip refuses these.
        case("unknown-scheme", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .member(
                &format!("vllm-0.33.0.data/nonsense/{CUTE}/x.py"),
                String::new(),
            ),
        case("data-without-scheme", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .member("vllm-0.33.0.data/loose.py", String::new()),
        case("escapes-the-target", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .member("vllm/../../escape.py", String::new()),
        // pip installs the last of two members with one name; pinprobe refuses, also when the
        // end record understates the count to hide the appended one.
        case("appended-duplicate", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .appended(&sm90_path, sm90(Sm90Call::Buggy), 0),
        case("hidden-duplicate", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .appended(&sm90_path, sm90(Sm90Call::Buggy), 1),
        case("normalised-duplicate", "0.33.0", Want::Refuse)
            .member(&sm90_path, sm90(Sm90Call::Fixed))
            .appended(
                "vllm/vllm_flash_attn//cute/flash_fwd_sm90.py",
                sm90(Sm90Call::Buggy),
                0,
            ),
    ]
}

fn build_wheel(dir: &Path, c: &Case) -> std::path::PathBuf {
    let out = dir.join(format!("vllm-{}-py3-none-any.whl", c.version));
    let spec = serde_json::json!({
        "out": out,
        "members": c.members,
        "appended": c.appended,
        "understate": c.understate,
        "dist_info": format!("vllm-{}.dist-info", c.version),
    });
    let mut child = Command::new("python3")
        .args(["-c", MAKE_WHEEL])
        .stdin(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(spec.to_string().as_bytes())
        .expect("spec written");
    assert!(
        child.wait().expect("waits").success(),
        "{}: wheel built",
        c.name
    );
    out
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `cute/*.py` under `root` on disk (what pip wrote), by path relative to `root`.
fn installed(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(root.join(CUTE)) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".py") && e.file_type().is_ok_and(|t| t.is_file()) {
            let bytes = std::fs::read(e.path()).expect("read installed file");
            out.insert(format!("{CUTE}/{name}"), sha(&bytes));
        }
    }
    out
}

/// pinprobe's view of the same files in the wheel.
fn viewed(wheel: &WheelView) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for path in wheel.files_under(CUTE).expect("list") {
        if path.ends_with(".py") && !path[CUTE.len() + 1..].contains('/') {
            let bytes = wheel.read(&path).expect("read").expect("listed file");
            out.insert(path, sha(&bytes));
        }
    }
    out
}

#[test]
fn wheel_view_equals_what_pip_installs() {
    if !have_pip() {
        skip("`python3 -m pip` not found");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let buggy = sha(sm90(Sm90Call::Buggy).as_bytes());
    let mut failures = Vec::new();
    for c in cases() {
        let dir = tmp.path().join(c.name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let wheel = build_wheel(&dir, &c);
        let target = dir.join("target");
        let pip = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--no-deps", "--no-index"])
            .args(["--disable-pip-version-check", "--no-compile", "--target"])
            .arg(&target)
            .arg(&wheel)
            .env("PIP_ROOT_USER_ACTION", "ignore")
            .output()
            .expect("pip runs");
        let pip_files = pip.status.success().then(|| installed(&target));
        let view = WheelView::open(&wheel);
        let scan = cargo_bin_cmd!("pinprobe")
            .args(["scan", wheel.to_str().expect("utf-8"), "--format", "json"])
            .env("PINPROBE_CACHE", dir.join("cache"))
            .output()
            .expect("pinprobe runs");
        let code = scan.status.code().unwrap_or(-1);
        let fa4 = serde_json::from_slice::<serde_json::Value>(&scan.stdout)
            .ok()
            .and_then(|r| {
                r["targets"][0]["findings"]
                    .as_array()?
                    .iter()
                    .find(|f| f["rule"] == RULE && f["component"] == "flash-attention")
                    .map(|f| f["status"].as_str().unwrap_or("").to_string())
            });
        let pip_installed_bug = pip_files
            .as_ref()
            .is_some_and(|f| f.get(&format!("{CUTE}/flash_fwd_sm90.py")) == Some(&buggy));
        let mut fail = |m: String| failures.push(format!("{}: {m}", c.name));
        match c.want {
            Want::SameAsPip => {
                let Some(pip_files) = &pip_files else {
                    fail(format!(
                        "pip refused: {}",
                        String::from_utf8_lossy(&pip.stderr)
                    ));
                    continue;
                };
                match &view {
                    Ok(view) if viewed(view) == *pip_files => {}
                    Ok(view) => fail(format!(
                        "pinprobe sees {:?}, pip installed {pip_files:?}",
                        viewed(view)
                    )),
                    Err(e) => fail(format!("pinprobe refused: {e}")),
                }
                let want = if pip_installed_bug {
                    "affected"
                } else {
                    "not_affected"
                };
                if fa4.as_deref() != Some(want) {
                    fail(format!("FA4 finding {fa4:?}, want {want} (exit {code})"));
                }
            }
            Want::Refuse => {
                if view.is_ok() || code != 2 {
                    fail(format!(
                        "pinprobe accepted it (exit {code}); pip {}",
                        if pip_files.is_some() {
                            "installed it"
                        } else {
                            "refused it"
                        }
                    ));
                }
            }
        }
        if pip_installed_bug && (code == 0 || fa4.as_deref() == Some("not_affected")) {
            fail(format!(
                "pip installed the buggy file but pinprobe says exit {code}, {fa4:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
