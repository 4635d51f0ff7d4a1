//! A progress bar for layer transfers and decompression, drawn on stderr only when stderr is a
//! terminal (hidden otherwise, so logs and CI output stay clean).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A byte-counting bar over `total` stored bytes (a spinner when the total is unknown).
pub fn bar(wanted: bool, total: u64) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let template = "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} (layers read newest first; may stop early)";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
