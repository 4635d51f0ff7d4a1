//! ELF dynamic-symbol signatures in container images: the FA3 library
//! (`vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so`, built here by the system C compiler, one of
//! them past the 8 MiB a kept file may have) is streamed from its layer for its dynamic
//! symbols, in OCI layouts and both `docker save` forms, and merges like a kept file: newer
//! layers replace it, whiteouts delete it, hard and symbolic links reach it, RECORD is checked
//! against the streamed hash. A library that cannot be resolved or read gives `unknown` for
//! PINPROBE-2026-0003 and -0007, never a clean answer; a truncated layer is an error (exit 2).

use crate::common;

use common::artifact::*;
use common::elf::{self, Sym};
use common::image::*;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const R3: &str = "PINPROBE-2026-0003";
const R7: &str = "PINPROBE-2026-0007";
const FA3: &str = "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so";
/// vLLM 0.27.0's commit (rules/ledger.yaml): the ledger's recorded verdicts say `not_affected`
/// for every FlashAttention rule, so only the library can make R3 and R7 anything else.
const COMMIT_0_27_0: &str = "4bdc8a788";

/// Which kernel the FA3 dispatch of a compiled library references and whether it is built.
#[derive(Debug, Clone, Copy)]
enum Build {
    /// The SM80 kernel referenced, not built: R7's bug.
    Sm80Missing,
    /// The non-packed SM90 kernel referenced, not built: R3's bug.
    Sm90Missing,
    /// Both built, plus `pad` bytes of read-only data (to pass the kept-file limit).
    Complete { pad: usize },
}

/// A shared library from `cc -shared` (`None` when no compiler: the test skips).
fn compile(dir: &Path, build: Build) -> Vec<u8> {
    let (kernel, defined, pad) = match build {
        Build::Sm80Missing => (elf::SM80, false, 0),
        Build::Sm90Missing => (elf::SM90_UNPACKED, false, 0),
        Build::Complete { pad } => (elf::SM80, true, pad),
    };
    let mut source = format!("void k(void) __asm__(\"{kernel}\");\n");
    if defined {
        source.push_str(&format!(
            "void k90(void) __asm__(\"{}\");\nvoid k90(void) {{}}\nvoid k(void) {{ k90(); }}\n",
            elf::SM90_UNPACKED
        ));
    }
    if pad > 0 {
        source.push_str(&format!(
            "__attribute__((used)) const unsigned char pad[{pad}] = {{1}};\n"
        ));
    }
    source.push_str(&format!(
        "void d(void) __asm__(\"{}\");\nvoid d(void) {{ k(); }}\n",
        elf::DISPATCH
    ));
    let name = format!("{build:?}").replace([' ', '{', '}', ':'], "");
    let c = dir.join(format!("{name}.c"));
    let so = dir.join(format!("{name}.so"));
    std::fs::write(&c, &source).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .expect("cc");
    assert!(status.success(), "cc -shared {source}");
    std::fs::read(&so).unwrap()
}

fn have_cc() -> bool {
    common::require::require(common::require::tool("cc"), "cc to build shared libraries")
}

/// A vLLM 0.27.0 install under [`SITE`] (fixed FA4 source and the other files the
/// FlashAttention signatures read), shipping `library` at [`FA3`] when given. RECORD lists
/// `record_for` (default: the library shipped).
fn install(library: Option<&[u8]>, record_for: Option<&[u8]>) -> Vec<(String, Vec<u8>)> {
    let mut files = vllm_files("0.27.0", Sm90Call::Fixed);
    for (path, bytes) in files.iter_mut() {
        if path == "vllm/_version.py" {
            *bytes = format!(
                "__version__ = version = '0.27.0'\n__commit_id__ = commit_id = 'g{COMMIT_0_27_0}'\n"
            )
            .into_bytes();
        }
    }
    files.push((
        "vllm/vllm_flash_attn/flash_attn_interface.py".into(),
        b"try:\n    from . import _vllm_fa3_C\n    FA3_AVAILABLE = True\nexcept ImportError as e:\n    FA3_AVAILABLE = False\n".to_vec(),
    ));
    files.push((
        "vllm/vllm_flash_attn/cute/flash_fwd_sm100.py".into(),
        b"class FlashAttentionForwardSm100:\n    def softmax_loop(self):\n        max_offset = 8 if cutlass.const_expr(self.q_dtype.width == 8) else 0\n        rescale_threshold = 8.0 if const_expr(self.q_dtype.width == 16) else 0.0\n".to_vec(),
    ));
    if let Some(lib) = record_for.or(library) {
        files.push((FA3.into(), lib.to_vec()));
    }
    let mut files = with_dist_info("vllm", "0.27.0", files);
    if let Some(lib) = library {
        match files.iter_mut().find(|(p, _)| p == FA3) {
            Some((_, bytes)) => *bytes = lib.to_vec(),
            None => files.push((FA3.into(), lib.to_vec())),
        }
    } else {
        files.retain(|(p, _)| p != FA3);
    }
    files
        .into_iter()
        .map(|(p, b)| (format!("{SITE}/{p}"), b))
        .collect()
}

fn base_layer(library: Option<&[u8]>) -> Layer {
    Layer::new("RUN pip install vllm==0.27.0", Compression::Gzip).files(install(library, None))
}

#[derive(Debug, Clone, Copy)]
enum Form {
    OciLayout,
    DockerSaveOci,
    DockerSaveLegacy,
}

/// Write `image` in `form` under `dir`; the target string to scan.
fn write(dir: &Path, image: &Image, form: Form) -> String {
    std::fs::create_dir_all(dir).unwrap();
    match form {
        Form::OciLayout => {
            let layout = dir.join("oci");
            write_oci(&layout, &[("latest", &image.build())]);
            format!("oci:{}:latest", layout.display())
        }
        Form::DockerSaveOci => {
            let path = dir.join("image.tar");
            write_docker_save_oci(&path, image);
            path.display().to_string()
        }
        Form::DockerSaveLegacy => {
            let path = dir.join("legacy.tar");
            write_docker_save_legacy(&path, &image.build(), false);
            path.display().to_string()
        }
    }
}

fn scan(target: &str, cache: &Path) -> (i32, Value) {
    let run = Pinprobe::new(&["scan", target, "--format", "json"])
        .cache(cache)
        .run();
    assert_ne!(run.code, 2, "{}", run.stderr);
    (run.code, run.json())
}

/// The finding of `rule` on the bundled flash-attention copy.
fn finding<'a>(report: &'a Value, rule: &str) -> &'a Value {
    report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule && f["component"] == "flash-attention")
        .unwrap_or_else(|| panic!("no {rule} finding: {report:#}"))
}

fn status(report: &Value, rule: &str) -> String {
    finding(report, rule)["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// R3's and R7's statuses.
fn both(report: &Value) -> (String, String) {
    (status(report, R3), status(report, R7))
}

fn s(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn the_fa3_library_decides_in_every_image_form() {
    if !have_cc() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cases = [
        (Build::Sm80Missing, s("not_affected", "affected")),
        (Build::Sm90Missing, s("affected", "not_affected")),
        // 9 MiB: past the 8 MiB a kept file may have, streamed all the same.
        (
            Build::Complete { pad: 9 << 20 },
            s("not_affected", "not_affected"),
        ),
    ];
    for (i, (build, expected)) in cases.into_iter().enumerate() {
        let lib = compile(tmp.path(), build);
        let image = Image::new(vec![base_layer(Some(&lib))]);
        for form in [Form::OciLayout, Form::DockerSaveOci, Form::DockerSaveLegacy] {
            let target = write(&tmp.path().join(format!("{i}-{form:?}")), &image, form);
            let (code, report) = scan(&target, &cache);
            assert_eq!(both(&report), expected, "{build:?} {form:?}: {report:#}");
            let affected = expected.0 == "affected" || expected.1 == "affected";
            assert_eq!(code, if affected { 1 } else { 0 }, "{build:?} {form:?}");
            // The evidence names the library's symbols, read from the image.
            let evidence = finding(&report, R7)["evidence"].to_string();
            assert!(evidence.contains("_vllm_fa3_C.abi3.so"), "{evidence}");
            // A warm re-scan reads no layer: the symbols come from the cached layer extract,
            // and decide exactly as the streamed library did.
            let (again_code, again) = scan(&target, &cache);
            assert_eq!(both(&again), expected, "warm {build:?} {form:?}: {again:#}");
            assert_eq!(again_code, code, "warm {build:?} {form:?}");
            let image = &again["targets"][0]["image"];
            assert_eq!(image["bytes_read"], 0, "warm {build:?} {form:?}: {image:#}");
            let layers = image["layers"].as_array().expect("layers");
            assert!(
                layers.iter().all(|l| l["cached"] == true),
                "warm {build:?} {form:?}: {image:#}"
            );
        }
    }
}

#[test]
fn the_library_merges_like_a_kept_file() {
    if !have_cc() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let bad = compile(tmp.path(), Build::Sm80Missing);
    let good = compile(tmp.path(), Build::Complete { pad: 0 });
    let at = |rel: &str| format!("{SITE}/{rel}");
    let fa3 = at(FA3);
    let cases: Vec<(&str, Vec<Layer>, (String, String))> = vec![
        (
            "a newer layer replaces the library",
            vec![
                base_layer(Some(&bad)),
                Layer::new("COPY fa3", Compression::Zstd).file(&fa3, good.clone()),
            ],
            s("not_affected", "not_affected"),
        ),
        (
            "an older layer's library is hidden by the newer one",
            vec![
                base_layer(Some(&good)),
                Layer::new("COPY fa3", Compression::None).file(&fa3, bad.clone()),
            ],
            s("not_affected", "affected"),
        ),
        (
            "a whiteout deletes the library",
            vec![
                base_layer(Some(&good)),
                Layer::new("RUN rm fa3", Compression::Gzip).whiteout(&fa3),
            ],
            s("unknown", "unknown"),
        ),
        (
            "an opaque directory hides it",
            vec![
                base_layer(Some(&good)),
                Layer::new("RUN reinstall", Compression::Gzip)
                    .opaque(&at("vllm/vllm_flash_attn"))
                    .files(
                        install(None, None)
                            .into_iter()
                            .filter(|(p, _)| p.contains("vllm_flash_attn/"))
                            .collect(),
                    ),
            ],
            s("unknown", "unknown"),
        ),
        (
            "a hard link to a library read in the same layer",
            vec![
                base_layer(None),
                Layer::new("COPY fa3", Compression::Gzip)
                    .file(&at("vllm/vllm_flash_attn/_vllm_fa3_C.orig.so"), bad.clone())
                    .hardlink(&fa3, &at("vllm/vllm_flash_attn/_vllm_fa3_C.orig.so")),
            ],
            s("not_affected", "affected"),
        ),
        (
            "a hard link to a file the scan does not read",
            vec![
                base_layer(None),
                Layer::new("COPY fa3", Compression::Gzip)
                    .file("opt/blobs/fa3.bin", bad.clone())
                    .hardlink(&fa3, "opt/blobs/fa3.bin"),
            ],
            s("unknown", "unknown"),
        ),
        (
            "a symbolic link to a library elsewhere in the image",
            vec![
                base_layer(None),
                Layer::new("COPY fa3", Compression::Gzip)
                    .file("opt/fa3/_vllm_fa3_C.abi3.so", bad.clone())
                    .symlink(&fa3, "/opt/fa3/_vllm_fa3_C.abi3.so"),
            ],
            s("not_affected", "affected"),
        ),
        (
            "a symbolic link to the package directory elsewhere",
            vec![
                Layer::new("COPY fa", Compression::Gzip)
                    .file("srv/fa/_vllm_fa3_C.abi3.so", bad.clone())
                    .files(
                        install(None, None)
                            .into_iter()
                            .filter_map(|(p, b)| {
                                let rest = p.strip_prefix(&at("vllm/vllm_flash_attn/"))?;
                                Some((format!("srv/fa/{rest}"), b))
                            })
                            .collect(),
                    ),
                Layer::new("RUN pip install", Compression::Gzip)
                    .files(
                        install(None, None)
                            .into_iter()
                            .filter(|(p, _)| !p.contains("vllm_flash_attn/"))
                            .collect(),
                    )
                    .symlink(&at("vllm/vllm_flash_attn"), "/srv/fa"),
            ],
            s("not_affected", "affected"),
        ),
        (
            "a dangling symbolic link",
            vec![
                base_layer(None),
                Layer::new("RUN ln", Compression::Gzip)
                    .symlink(&fa3, "/opt/nowhere/_vllm_fa3_C.abi3.so"),
            ],
            s("unknown", "unknown"),
        ),
        (
            "a symbolic link to a file the scan does not read",
            vec![
                base_layer(None),
                Layer::new("COPY fa3", Compression::Gzip)
                    .file("opt/fa3/libfa3.so.1", bad.clone())
                    .symlink(&fa3, "/opt/fa3/libfa3.so.1"),
            ],
            s("unknown", "unknown"),
        ),
    ];
    for (i, (name, layers, expected)) in cases.into_iter().enumerate() {
        let target = write(
            &tmp.path().join(format!("m{i}")),
            &Image::new(layers),
            Form::OciLayout,
        );
        let (code, report) = scan(&target, &cache);
        assert_eq!(both(&report), expected, "{name}: {report:#}");
        if expected.0 == "unknown" {
            assert_eq!(code, 3, "{name}");
            assert!(
                finding(&report, R7)["evidence"]
                    .to_string()
                    .contains("symbol signature undecidable"),
                "{name}: {report:#}"
            );
        }
    }
}

#[test]
fn record_is_checked_against_the_streamed_hash() {
    if !have_cc() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let bad = compile(tmp.path(), Build::Sm80Missing);
    let good = compile(tmp.path(), Build::Complete { pad: 0 });
    // RECORD written for the good library, the bad one installed in its place (after install,
    // as an environment allows): the verdict follows the file, and says it was modified.
    let layer =
        Layer::new("RUN pip install", Compression::Gzip).files(install(Some(&bad), Some(&good)));
    let target = write(tmp.path(), &Image::new(vec![layer]), Form::OciLayout);
    let (_, report) = scan(&target, &cache);
    assert_eq!(status(&report, R7), "affected", "{report:#}");
    assert!(
        finding(&report, R7)["evidence"]
            .to_string()
            .contains("_vllm_fa3_C.abi3.so was modified after install"),
        "{report:#}"
    );
    // RECORD matching: no integrity evidence for the library.
    let layer = Layer::new("RUN pip install", Compression::Gzip).files(install(Some(&good), None));
    let target = write(
        &tmp.path().join("ok"),
        &Image::new(vec![layer]),
        Form::OciLayout,
    );
    let (_, report) = scan(&target, &cache);
    assert_eq!(status(&report, R7), "not_affected", "{report:#}");
    assert!(!report.to_string().contains("modified after install"));
}

/// `lib` with `pad` zero bytes between the ELF header and the tables (offsets moved).
fn tables_moved_by(lib: &[u8], pad: usize) -> Vec<u8> {
    let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut f = lib[..64].to_vec();
    f.extend(std::iter::repeat_n(0u8, pad));
    f.extend_from_slice(&lib[64..]);
    let shoff = le64(&f, 0x28) + pad as u64;
    f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    let shnum = u16::from_le_bytes([f[elf::SHNUM], f[elf::SHNUM + 1]]) as u64;
    for i in 1..shnum {
        let at = (shoff + i * 64 + 0x18) as usize;
        let off = le64(&f, at) + pad as u64;
        f[at..at + 8].copy_from_slice(&off.to_le_bytes());
    }
    f
}

#[test]
fn bad_libraries_and_layers_never_give_a_clean_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let good = elf::fa3_library(elf::SM80, Sym::Defined);
    // Control: the written library decides, clean.
    let target = write(
        &tmp.path().join("good"),
        &Image::new(vec![base_layer(Some(&good))]),
        Form::OciLayout,
    );
    let (code, report) = scan(&target, &cache);
    assert_eq!(
        both(&report),
        s("not_affected", "not_affected"),
        "{report:#}"
    );
    assert_eq!(code, 0);
    let mut wrong_class = good.clone();
    wrong_class[elf::CLASS] = 1;
    let mut huge_table = good.clone();
    let shoff = u64::from_le_bytes(huge_table[0x28..0x30].try_into().unwrap()) as usize;
    // `.dynsym` (section 1) claims 2^40 symbols.
    huge_table[shoff + 64 + 0x20..shoff + 64 + 0x28].copy_from_slice(&(24u64 << 40).to_le_bytes());
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() - 10].to_vec()),
        ("header only", good[..64].to_vec()),
        ("wrong class", wrong_class),
        ("a huge symbol table", huge_table),
        ("garbage", b"\x7fELF garbage, not a library".to_vec()),
        (
            "not the FA3 library",
            elf::shared_object(&[("other", Sym::Defined)]),
        ),
        // The tables past the reader's first-pass prefix: a layer streams once.
        ("tables past the prefix", tables_moved_by(&good, 17 << 20)),
    ];
    for (name, lib) in bad {
        let target = write(
            &tmp.path().join(name.replace(' ', "-")),
            &Image::new(vec![base_layer(Some(&lib))]),
            Form::DockerSaveOci,
        );
        let (code, report) = scan(&target, &cache);
        assert_eq!(both(&report), s("unknown", "unknown"), "{name}: {report:#}");
        assert_eq!(code, 3, "{name}");
        assert!(
            finding(&report, R3)["evidence"]
                .to_string()
                .contains("symbol signature undecidable"),
            "{name}: {report:#}"
        );
    }
    // A layer cut inside the library: an error naming the layer, never a verdict.
    let big = tables_moved_by(&good, 1 << 20);
    let image = Image::new(vec![
        Layer::new("RUN pip install", Compression::None).files(install(Some(&big), None)),
    ]);
    let built = image.build();
    let layout = tmp.path().join("cut");
    write_oci(&layout, &[("latest", &built)]);
    let blob: PathBuf = layout
        .join("blobs/sha256")
        .join(hex_of(&built.layers[0].digest));
    let bytes = std::fs::read(&blob).unwrap();
    std::fs::write(&blob, &bytes[..bytes.len() / 2]).unwrap();
    let run = Pinprobe::new(&[
        "scan",
        &format!("oci:{}:latest", layout.display()),
        "--format",
        "json",
    ])
    .cache(&cache)
    .run();
    run.assert_error("layer");
}
