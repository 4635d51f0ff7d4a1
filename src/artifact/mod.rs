//! Artifact scanning: what a built vLLM ships (a wheel, a site-packages directory, a virtual
//! environment, an image's filesystem), its components recognised from the files themselves.
//!
//! (Being built: this file fixes the interface other targets use.)

use crate::report::TargetReport;
use crate::rules::Database;
use crate::target::View;

/// Whether a path (relative to a filesystem or archive root) can matter to an artifact scan:
/// package metadata (`*.dist-info/METADATA`, `RECORD`), `vllm/_version.py`, and the Python
/// sources of bundled or standalone FlashAttention copies. Image scanners keep only these.
pub fn is_interesting(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_dist_info = path
        .rsplit('/')
        .nth(1)
        .is_some_and(|dir| dir.ends_with(".dist-info"));
    (in_dist_info && matches!(name, "METADATA" | "RECORD"))
        || path.ends_with("vllm/_version.py")
        || (name.ends_with(".py")
            && (path.contains("vllm/vllm_flash_attn/")
                || path.contains("flash_attn/cute/")
                || path.contains("vllm/third_party/")))
}

/// Scan a view holding an artifact's files (wheel root, site-packages, venv or image root).
pub fn scan_view(view: &dyn View, _db: &Database) -> TargetReport {
    let mut report = TargetReport::new(view.describe(), view.kind());
    report.undecided = Some("artifact scanning is not built yet".into());
    report
}

#[cfg(test)]
mod tests {
    use super::is_interesting;

    #[test]
    fn interesting_paths() {
        for p in [
            "usr/lib/python3.12/site-packages/vllm-0.30.0.dist-info/RECORD",
            "venv/lib/python3.11/site-packages/vllm-0.30.0.dist-info/METADATA",
            "site-packages/vllm/_version.py",
            "vllm/vllm_flash_attn/cute/flash_fwd_sm90.py",
            "x/site-packages/flash_attn/cute/block_info.py",
            "vllm/third_party/tml_fa4/cute/block_info.py",
        ] {
            assert!(is_interesting(p), "{p}");
        }
        for p in [
            "vllm/engine/llm_engine.py",
            "usr/bin/python3",
            "vllm-0.30.0.dist-info/WHEEL",
            "etc/passwd",
        ] {
            assert!(!is_interesting(p), "{p}");
        }
    }
}
