//! What the exchange formats (OpenVEX, CycloneDX) share: a product identity per pinned
//! component (a package URL carrying the pinned commit), the vulnerability findings (rules of
//! the database, not hygiene or drift notes), and the document's timestamp.

use crate::model::{Date, Finding, Pin, Report, TargetReport, purl_encode};
use crate::rules::Database;

/// One product: a pinned component of one target, named by its package URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Product {
    /// `pkg:github/OWNER/REPO@SHA` for a GitHub repository at a resolved commit; without
    /// `@SHA` when the commit is not known; `pkg:pypi/vllm@VERSION` for a shipped vLLM;
    /// `pkg:generic/NAME[@REF]` otherwise.
    pub purl: String,
    pub component: String,
    /// The resolved commit, when there is one.
    pub commit: Option<String>,
    /// `https://github.com/OWNER/REPO` (or the repository as written).
    pub repo_url: Option<String>,
    /// The commit, else the tag or branch the pin names, else (vLLM) its distribution's version.
    pub version: Option<String>,
}

/// The product of `pin`.
pub(crate) fn product(pin: &Pin) -> Product {
    Product {
        purl: pin.purl(),
        component: pin.component.clone(),
        commit: pin.full_commit(),
        repo_url: pin
            .canonical_repo()
            .map(|c| format!("https://{c}"))
            .or(pin.repo.clone()),
        version: pin.purl_version().or_else(|| {
            // vLLM's own distribution: its version.
            (pin.component == "vllm")
                .then(|| pin.shipped_by().map(|(_, v)| v.to_string()))
                .flatten()
        }),
    }
}

/// The product a finding is about: its component's pin in `target`.
pub(crate) fn product_of(target: &TargetReport, finding: &Finding) -> Product {
    target
        .components
        .iter()
        .find(|p| p.component == finding.component)
        .map(product)
        .unwrap_or_else(|| Product {
            purl: format!("pkg:generic/{}", purl_encode(&finding.component)),
            component: finding.component.clone(),
            commit: None,
            repo_url: None,
            version: None,
        })
}

/// Findings of rules in the database (vulnerabilities), with their target.
pub(crate) fn vulnerability_findings<'a>(
    report: &'a Report,
    db: &'a Database,
) -> impl Iterator<Item = (&'a TargetReport, &'a Finding)> {
    report.targets.iter().flat_map(move |t| {
        t.findings
            .iter()
            .filter(|f| db.get(&f.rule).is_some())
            .map(move |f| (t, f))
    })
}

/// The document time, RFC 3339 in UTC: `SOURCE_DATE_EPOCH` when set (reproducible output),
/// else now.
pub(crate) fn timestamp() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
    let date = Date::from_days((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(component: &str, canonical: Option<&str>, commit: Option<&str>) -> Pin {
        let mut p = Pin::shipped(
            component,
            "f",
            None,
            commit.map(crate::model::CommitId::from),
            crate::model::FoundBy::Cmake,
        );
        p.repo_canonical = canonical.map(String::from);
        p
    }

    #[test]
    fn purls_carry_the_commit() {
        let sha = "506341a143fcabd4bb79052a7605ada727d6b3f5";
        let p = product(&pin(
            "flash-attention",
            Some("github.com/vllm-project/flash-attention"),
            Some(sha),
        ));
        assert_eq!(
            p.purl,
            format!("pkg:github/vllm-project/flash-attention@{sha}")
        );
        assert_eq!(
            p.repo_url.as_deref(),
            Some("https://github.com/vllm-project/flash-attention")
        );
        // Lower-cased (purl's github type), no version without a full commit.
        let p = product(&pin(
            "flashmla",
            Some("github.com/vllm-project/FlashMLA"),
            Some("0a1b2c3d4"),
        ));
        assert_eq!(p.purl, "pkg:github/vllm-project/flashmla");
        // vLLM from its dist-info: the PyPI version, not the reference's words.
        let mut v = pin("vllm", None, Some("ced6857af"));
        v.found_by = crate::model::FoundBy::DistInfo;
        v.reference = Some("vllm 0.30.0".into());
        assert_eq!(product(&v).purl, "pkg:pypi/vllm@0.30.0");
        assert_eq!(product(&v).version.as_deref(), Some("0.30.0"));
        // A copy shipped in vLLM with no known commit: a path in vLLM's distribution.
        let mut copy = pin("tml_fa4", None, None);
        copy.found_by = crate::model::FoundBy::ShippedFiles;
        copy.file = "vllm/third_party/tml_fa4".into();
        copy.reference = Some("shipped in vllm 0.30.0".into());
        assert_eq!(
            product(&copy).purl,
            "pkg:pypi/vllm@0.30.0#vllm/third_party/tml_fa4"
        );
        // In an environment: the path inside the distribution, below the site directory.
        copy.file = "venv/lib/python3.12/site-packages/vllm/third_party/tml_fa4".into();
        assert_eq!(
            product(&copy).purl,
            "pkg:pypi/vllm@0.30.0#vllm/third_party/tml_fa4"
        );
        // The same copy at a commit the ledger names: the repository at that commit.
        let mut fa = pin(
            "flash-attention",
            Some("github.com/vllm-project/flash-attention"),
            Some(sha),
        );
        fa.found_by = crate::model::FoundBy::ShippedFiles;
        fa.reference = Some("shipped in vllm 0.30.0".into());
        assert_eq!(
            product(&fa).purl,
            format!("pkg:github/vllm-project/flash-attention@{sha}")
        );
        // A shipped copy whose commit is unknown is never the versionless repository purl.
        fa.commit = None;
        assert_eq!(product(&fa).purl, "pkg:pypi/vllm@0.30.0#f");
        // A tag pin: the tag is the version.
        let mut tag = pin(
            "triton-kernels",
            Some("github.com/triton-lang/triton"),
            None,
        );
        tag.reference = Some("v3.5.1".into());
        assert_eq!(product(&tag).purl, "pkg:github/triton-lang/triton@v3.5.1");
        assert_eq!(product(&tag).version.as_deref(), Some("v3.5.1"));
        let p = product(&pin("odd name", Some("gitlab.example/x/y"), None));
        assert_eq!(
            p.purl,
            "pkg:generic/odd%20name?vcs_url=git%2Bhttps:%2F%2Fgitlab.example%2Fx%2Fy"
        );
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let t = timestamp();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }
}
