//! JSON Schemas of the JSON report (`scan --format json`) and review (`diff --format json`),
//! generated from these types; the checked-in copies under `schema/` are tested to be current.

use schemars::generate::SchemaSettings;

/// The schema of [`super::Report`].
pub fn report() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<super::Report>().to_value()
}

/// The schema of [`super::Review`].
pub fn review() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<super::Review>().to_value()
}
