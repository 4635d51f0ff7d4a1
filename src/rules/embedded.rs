//! The rule database compiled into the binary. Every `rules/*.yaml` file must be listed here;
//! a test keeps this list and the directory in step.

pub const COMPONENTS: &str = include_str!("../../rules/components.yaml");

pub const RULES: &[(&str, &str)] = &[
    (
        "PINPROBE-2026-0001.yaml",
        include_str!("../../rules/PINPROBE-2026-0001.yaml"),
    ),
    (
        "PINPROBE-2026-0002.yaml",
        include_str!("../../rules/PINPROBE-2026-0002.yaml"),
    ),
    (
        "PINPROBE-2026-0003.yaml",
        include_str!("../../rules/PINPROBE-2026-0003.yaml"),
    ),
    (
        "PINPROBE-2026-0004.yaml",
        include_str!("../../rules/PINPROBE-2026-0004.yaml"),
    ),
    (
        "PINPROBE-2026-0005.yaml",
        include_str!("../../rules/PINPROBE-2026-0005.yaml"),
    ),
    (
        "PINPROBE-2026-0006.yaml",
        include_str!("../../rules/PINPROBE-2026-0006.yaml"),
    ),
    (
        "PINPROBE-2026-0007.yaml",
        include_str!("../../rules/PINPROBE-2026-0007.yaml"),
    ),
    (
        "PINPROBE-2026-0008.yaml",
        include_str!("../../rules/PINPROBE-2026-0008.yaml"),
    ),
    (
        "PINPROBE-2026-0009.yaml",
        include_str!("../../rules/PINPROBE-2026-0009.yaml"),
    ),
    (
        "PINPROBE-2026-0010.yaml",
        include_str!("../../rules/PINPROBE-2026-0010.yaml"),
    ),
    (
        "PINPROBE-2026-0011.yaml",
        include_str!("../../rules/PINPROBE-2026-0011.yaml"),
    ),
    (
        "PINPROBE-2026-0012.yaml",
        include_str!("../../rules/PINPROBE-2026-0012.yaml"),
    ),
    (
        "PINPROBE-2026-0013.yaml",
        include_str!("../../rules/PINPROBE-2026-0013.yaml"),
    ),
];

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
