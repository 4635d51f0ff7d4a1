//! `-v/--verbose`: what is being read and evaluated, said on stderr as it happens. One switch
//! for the process (set once by the command line), so every stage can say what it does without
//! a logger threaded through it.

use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// Turn the verbose lines on or off (the command line's `-v`).
pub fn enable(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether `-v` was given.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Say `msg` on stderr when `-v` was given, as `pinprobe: MSG` with control characters escaped
/// (a path or a component name cannot send a terminal sequence).
pub fn say(msg: impl std::fmt::Display) {
    if enabled() {
        eprintln!("pinprobe: {}", super::text::printable(&msg.to_string()));
    }
}
