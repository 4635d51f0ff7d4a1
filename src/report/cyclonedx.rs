//! CycloneDX 1.6 JSON: an SBOM of what the scanned builds pin, with pinprobe's findings as
//! vulnerabilities.
//!
//! Components: the scanned target is `metadata.component` (one target), or each target is an
//! `application` (`container` for an image) under a `scan` subject. A wheel or a source tree is
//! vLLM itself (`pkg:pypi/vllm@VERSION` when it ships a version); an environment or an image
//! holds vLLM as a component of its own. Each pinned kernel project is a `library` whose purl
//! carries the pinned commit (`pkg:github/OWNER/REPO@SHA`), else the tag it pins; a copy
//! shipped without a known commit is a path in its distribution (`pkg:pypi/vllm@0.30.0#...`).
//! `dependencies` is the graph: target -> vLLM -> its kernel pins (purls from
//! [`crate::model::Pin::purl`], built by the `packageurl` crate).
//! Vulnerabilities: one per (rule, product), `analysis.state` `exploitable` (affected),
//! `not_affected` (with `code_not_present`, or `code_not_reachable` when a `requires`
//! condition rules it out) or `in_triage` (unknown), the deciding evidence as `analysis.detail`.
//! The rule database's digest and date are metadata properties.

use super::exchange::{self, Product};
use super::headline;
use crate::model::TargetKind;
use crate::model::{EvidenceKind, Finding, Report, Severity, Status};
use crate::rules::Database;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;

pub fn render(report: &Report, db: &Database, out: &mut dyn Write) -> std::io::Result<()> {
    let mut components: Vec<Value> = Vec::new();
    let mut refs: Vec<String> = Vec::new();
    let mut graph = Graph::default();
    let library = |p: &Product, refs: &mut Vec<String>, components: &mut Vec<Value>| {
        if !refs.contains(&p.purl) {
            refs.push(p.purl.clone());
            components.push(component(p));
        }
        p.purl.clone()
    };
    // Per target: the target itself (`target-N`); where the target holds vLLM rather than
    // being it (an environment, an image), vLLM as a component of its own; and vLLM's kernel
    // pins, which vLLM depends on.
    let mut subjects: Vec<Value> = Vec::new();
    let mut vllm_refs: Vec<String> = Vec::new();
    for (i, target) in report.targets.iter().enumerate() {
        let vllm = target
            .components
            .iter()
            .find(|p| p.component == "vllm")
            .map(exchange::product);
        let target_ref = format!("target-{i}");
        let holds_vllm = matches!(target.kind, TargetKind::Installed | TargetKind::Image);
        let mut subject = Map::new();
        subject.insert(
            "type".into(),
            json!(if target.kind == TargetKind::Image {
                "container"
            } else {
                "application"
            }),
        );
        subject.insert("bom-ref".into(), json!(target_ref));
        if holds_vllm {
            subject.insert("name".into(), json!(target.target));
            if let Some(purl) = target
                .image
                .as_ref()
                .and_then(|i| image_purl(&target.target, i))
            {
                subject.insert("purl".into(), json!(purl));
            }
        } else {
            subject.insert("name".into(), json!("vllm"));
            if let Some(p) = &vllm {
                if let Some(v) = &p.version {
                    subject.insert("version".into(), json!(v));
                }
                subject.insert("purl".into(), json!(p.purl));
            }
        }
        subject.insert(
            "properties".into(),
            json!([
                {"name": "pinprobe:target", "value": target.target},
                {"name": "pinprobe:kind", "value": target.kind.as_str()},
            ]),
        );
        subjects.push(Value::Object(subject));
        // Who depends on the kernel pins: vLLM (the target itself, or its component).
        let vllm_ref = match (&vllm, holds_vllm) {
            (Some(p), true) => {
                let r = library(p, &mut refs, &mut components);
                graph.edge(&target_ref, &r);
                r
            }
            _ => target_ref.clone(),
        };
        vllm_refs.push(vllm_ref.clone());
        for pin in target.components.iter().filter(|p| p.component != "vllm") {
            let r = library(&exchange::product(pin), &mut refs, &mut components);
            graph.edge(&vllm_ref, &r);
        }
        graph.node(&target_ref);
    }
    for r in &refs {
        graph.node(r);
    }
    // The document's subject: the one target, or the scan of several.
    let subject = if subjects.len() == 1 {
        subjects.remove(0)
    } else {
        let scan = json!({
            "type": "application",
            "bom-ref": "scan",
            "name": format!("pinprobe scan of {} targets", subjects.len()),
        });
        for i in 0..subjects.len() {
            graph.edge("scan", &format!("target-{i}"));
        }
        components.splice(0..0, subjects);
        scan
    };

    // (rule, product) -> the least reassuring finding, as in the OpenVEX document.
    let mut chosen: Vec<(&Finding, String)> = Vec::new();
    for (target, finding) in exchange::vulnerability_findings(report, db) {
        let product = exchange::product_of(target, finding);
        let r = if finding.component == "vllm" {
            let at = target_index(report, &target.target);
            vllm_refs
                .get(at)
                .cloned()
                .unwrap_or_else(|| format!("target-{at}"))
        } else {
            library(&product, &mut refs, &mut components)
        };
        match chosen
            .iter_mut()
            .find(|(f, p)| f.rule == finding.rule && *p == r)
        {
            Some(slot) if rank(finding.status) > rank(slot.0.status) => slot.0 = finding,
            Some(_) => {}
            None => chosen.push((finding, r)),
        }
    }
    let vulnerabilities: Vec<Value> = chosen
        .iter()
        .enumerate()
        .map(|(i, (f, r))| vulnerability(i, f, r, db))
        .collect();

    let mut hash = Sha256::new();
    hash.update(report.rules_digest.as_bytes());
    for c in components.iter().chain(&vulnerabilities) {
        hash.update(c.to_string().as_bytes());
    }
    let doc = json!({
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": uuid(&hash.finalize()),
        "version": 1,
        "metadata": {
            "timestamp": exchange::timestamp(),
            "tools": {"components": [{
                "type": "application",
                "name": report.tool.name,
                "version": report.tool.version,
            }]},
            "component": subject,
            "properties": rules_properties(report),
        },
        "components": components,
        "dependencies": graph.render(),
        "vulnerabilities": vulnerabilities,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The dependency graph: every component once, with what it depends on (in first-seen order).
#[derive(Default)]
struct Graph {
    edges: Vec<(String, Vec<String>)>,
}

impl Graph {
    fn node(&mut self, from: &str) -> &mut Vec<String> {
        let at = match self.edges.iter().position(|(r, _)| r == from) {
            Some(at) => at,
            None => {
                self.edges.push((from.to_string(), Vec::new()));
                self.edges.len() - 1
            }
        };
        &mut self.edges[at].1
    }

    fn edge(&mut self, from: &str, to: &str) {
        let depends = self.node(from);
        if !depends.iter().any(|d| d == to) {
            depends.push(to.to_string());
        }
    }

    fn render(&self) -> Value {
        Value::Array(
            self.edges
                .iter()
                .map(|(r, d)| json!({"ref": r, "dependsOn": d}))
                .collect(),
        )
    }
}

fn rules_properties(report: &Report) -> Value {
    let mut props = vec![json!({"name": "pinprobe:rules_digest", "value": report.rules_digest})];
    if let Some(date) = &report.rules_date {
        props.push(json!({"name": "pinprobe:rules_date", "value": date}));
    }
    if let Some(source) = &report.rules_source {
        props.push(json!({"name": "pinprobe:rules_source", "value": source.describe()}));
        props.push(json!({"name": "pinprobe:rules_serial", "value": source.serial.to_string()}));
        if let Some(key) = &source.key {
            props.push(json!({"name": "pinprobe:rules_key", "value": key}));
        }
    }
    Value::Array(props)
}

fn target_index(report: &Report, target: &str) -> usize {
    report
        .targets
        .iter()
        .position(|t| t.target == target)
        .unwrap_or(0)
}

fn rank(status: Status) -> u8 {
    match status {
        Status::Affected => 2,
        Status::Unknown => 1,
        Status::NotAffected => 0,
    }
}

fn component(p: &Product) -> Value {
    let mut c = Map::new();
    c.insert("type".into(), json!("library"));
    c.insert("bom-ref".into(), json!(p.purl));
    c.insert("name".into(), json!(p.component));
    if let Some(v) = p.commit.as_ref().or(p.version.as_ref()) {
        c.insert("version".into(), json!(v));
    }
    c.insert("purl".into(), json!(p.purl));
    if let Some(url) = &p.repo_url {
        c.insert(
            "externalReferences".into(),
            json!([{"type": "vcs", "url": url}]),
        );
    }
    if let Some(commit) = &p.commit {
        c.insert(
            "pedigree".into(),
            json!({"commits": [{"uid": commit, "url": p.repo_url.as_ref().map(|u| format!("{u}/commit/{commit}"))}]}),
        );
    }
    strip_nulls(Value::Object(c))
}

fn vulnerability(i: usize, f: &Finding, affects: &str, db: &Database) -> Value {
    let rule = db.get(&f.rule).map(|r| &r.rule);
    let (state, justification) = match f.status {
        Status::Affected => ("exploitable", None),
        Status::NotAffected => (
            "not_affected",
            Some(match f.decided_by {
                Some(EvidenceKind::Requirement) => "code_not_reachable",
                _ => "code_not_present",
            }),
        ),
        Status::Unknown => ("in_triage", None),
    };
    let mut analysis = Map::new();
    analysis.insert("state".into(), json!(state));
    if let Some(j) = justification {
        analysis.insert("justification".into(), json!(j));
    }
    let mut detail = headline(f);
    if let Some(s) = &f.suppressed {
        detail.push_str(&format!(
            "; suppressed until {} by {}: {}",
            s.expires, s.entry, s.reason
        ));
    }
    analysis.insert("detail".into(), json!(detail));
    let severity = match f.severity {
        Severity::Low => "low",
        Severity::Medium => "medium",
        Severity::High => "high",
        Severity::Critical => "critical",
    };
    let mut v = Map::new();
    v.insert("bom-ref".into(), json!(format!("vuln-{i}")));
    v.insert("id".into(), json!(f.rule));
    v.insert("source".into(), json!({"name": "pinprobe"}));
    v.insert(
        "ratings".into(),
        json!([{"source": {"name": "pinprobe"}, "severity": severity, "method": "other"}]),
    );
    v.insert("description".into(), json!(f.summary));
    if let Some(rule) = rule {
        if !rule.details.trim().is_empty() {
            v.insert("detail".into(), json!(rule.details.trim()));
        }
        let w = rule.database_specific.workaround.trim();
        if !w.is_empty() {
            v.insert("workaround".into(), json!(w));
        }
        if !rule.aliases.is_empty() {
            v.insert(
                "references".into(),
                Value::Array(
                    rule.aliases
                        .iter()
                        .map(|a| json!({"id": a, "source": {"name": "alias"}}))
                        .collect(),
                ),
            );
        }
    }
    v.insert("analysis".into(), Value::Object(analysis));
    v.insert("affects".into(), json!([{"ref": affects}]));
    Value::Object(v)
}

/// A version-4-shaped UUID URN from a digest (stable for the same content).
fn uuid(digest: &[u8]) -> String {
    let mut b = [0u8; 16];
    for (dst, src) in b.iter_mut().zip(digest) {
        *dst = *src;
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// An image's package URL (`pkg:oci/NAME@sha256:...`): its manifest digest as the version,
/// the repository and tag as qualifiers when the image came from a registry. None without a
/// manifest digest (a purl without a version would stand for every image of that name).
fn image_purl(target: &str, image: &crate::model::ImageInfo) -> Option<String> {
    let digest = image.manifest.as_deref()?;
    let registry = ["docker://", "registry:"]
        .iter()
        .find_map(|prefix| target.strip_prefix(prefix));
    let reference = registry.unwrap_or_else(|| {
        // An archive or a layout: named by its file (`docker-archive:img.tar[:ref]`).
        let path = target.split_once(':').map_or(target, |(scheme, rest)| {
            if scheme.contains('/') || scheme.contains('.') {
                target
            } else {
                rest
            }
        });
        let file = path.rsplit('/').next().unwrap_or(path);
        file.split('.').next().unwrap_or(file)
    });
    let (without_digest, _) = reference.split_once('@').unwrap_or((reference, ""));
    let (repository, tag) = match without_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag)),
        _ => (without_digest, None),
    };
    let name = repository.rsplit('/').next().unwrap_or(repository);
    if name.is_empty() {
        return None;
    }
    let mut purl = packageurl::PackageUrl::new("oci", name.to_ascii_lowercase()).ok()?;
    purl.with_version(digest.to_string()).ok()?;
    if registry.is_some() {
        purl.add_qualifier("repository_url", repository.to_string())
            .ok()?;
        if let Some(tag) = tag {
            purl.add_qualifier("tag", tag.to_string()).ok()?;
        }
    }
    Some(purl.to_string())
}

#[cfg(test)]
mod tests {
    use super::image_purl;
    use crate::model::ImageInfo;

    #[test]
    fn an_image_is_named_by_its_manifest_digest() {
        let image = ImageInfo {
            manifest: Some("sha256:abcd".into()),
            ..ImageInfo::default()
        };
        assert_eq!(
            image_purl("docker://ghcr.io/acme/vllm-openai:v0.30.0", &image).as_deref(),
            Some(
                "pkg:oci/vllm-openai@sha256:abcd?repository_url=ghcr.io%2Facme%2Fvllm-openai&tag=v0.30.0"
            )
        );
        assert_eq!(
            image_purl("docker-archive:/tmp/img.tar", &image).as_deref(),
            Some("pkg:oci/img@sha256:abcd")
        );
        assert_eq!(
            image_purl("/srv/images/app.tar", &image).as_deref(),
            Some("pkg:oci/app@sha256:abcd")
        );
        let without = ImageInfo::default();
        assert_eq!(image_purl("docker://x/y:1", &without), None);
    }
}
