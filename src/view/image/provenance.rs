//! Provenance: which layer brought each file. Layers are aligned with the image config's
//! `history` by skipping the entries marked `empty_layer` (ENV, LABEL, ...), so each layer gets
//! the `created_by` of the build step that made it.

use super::LayerRef;
use super::manifest::ImageConfig;
use crate::model::LayerInfo;

/// One [`LayerInfo`] per layer, base first, with its history `created_by` when the history
/// lines up; a history that does not is reported in `warnings` and left out.
pub fn layers(
    config: &ImageConfig,
    layers: &[LayerRef],
    warnings: &mut Vec<String>,
) -> Vec<LayerInfo> {
    let steps: Vec<Option<String>> = config
        .history
        .iter()
        .filter(|h| !h.empty_layer)
        .map(|h| h.created_by.clone())
        .collect();
    let aligned = steps.len() == layers.len();
    if !aligned && !config.history.is_empty() {
        warnings.push(format!(
            "the image history lists {} layer steps for {} layers; layers are shown without created_by",
            steps.len(),
            layers.len()
        ));
    }
    layers
        .iter()
        .enumerate()
        .map(|(index, l)| LayerInfo {
            index,
            digest: l.display_digest(),
            size: l.size,
            created_by: if aligned { steps[index].clone() } else { None },
            scanned: false,
            cached: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::image::manifest::History;

    #[test]
    fn skips_empty_layer_history() {
        let h = |c: &str, empty| History {
            created_by: Some(c.into()),
            empty_layer: empty,
        };
        let config = ImageConfig {
            history: vec![
                h("ADD base", false),
                h("ENV X=1", true),
                h("RUN pip install vllm", false),
            ],
            ..ImageConfig::default()
        };
        let l = |d: &str| LayerRef {
            digest: Some(d.into()),
            diff_id: None,
            size: None,
            location: d.into(),
        };
        let mut w = Vec::new();
        let out = layers(&config, &[l("a"), l("b")], &mut w);
        assert_eq!(out[1].created_by.as_deref(), Some("RUN pip install vllm"));
        assert!(w.is_empty());
        let out = layers(&config, &[l("a")], &mut w);
        assert_eq!(out[0].created_by, None);
        assert_eq!(w.len(), 1);
    }
}
