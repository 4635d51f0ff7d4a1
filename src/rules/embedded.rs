//! The rule database compiled into the binary. Every `rules/*.yaml` file must be listed here;
//! a test keeps this list and the directory in step.

pub const COMPONENTS: &str = include_str!("../../rules/components.yaml");

pub const RULES: &[(&str, &str)] = &[(
    "PINPROBE-2026-0001.yaml",
    include_str!("../../rules/PINPROBE-2026-0001.yaml"),
)];

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_file_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/rules");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .expect("rules/ exists")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yaml") && n != "components.yaml")
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = super::RULES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }
}
