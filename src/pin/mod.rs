//! Pin finders: turn a view into the kernel projects it pins.

pub mod cmake;
pub mod url;
