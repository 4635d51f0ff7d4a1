//! Text that came from an input (component names, repository URLs, paths, registry error
//! bodies, rule summaries) made safe to show: on a terminal no control character passes raw
//! (a CSI sequence recolours or moves the cursor, OSC 8 forges a hyperlink, OSC 0 retitles the
//! window, a bare CR overwrites the line), and in Markdown no HTML, link or code span escapes
//! its cell.

/// `s` with every control character (C0 but `\n` when `keep_newlines`, DEL, C1) written as a
/// visible escape: `\x1b`, `\r`, `\u{9b}`.
pub fn printable_lines(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// One line of text for a terminal: [`printable_lines`] with newlines escaped too.
pub fn printable(s: &str) -> String {
    printable_lines(s, false)
}

/// Text for a Markdown table cell or line: no HTML (`<`, `>`, `&` as entities), no code span,
/// link or escape (`` ` ``, `[`, `]`, `\`), no row break (`|` escaped, CR and LF as spaces), no
/// other control character.
pub fn markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '`' => out.push_str("\\`"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push_str(&printable(&c.to_string())),
            c => out.push(c),
        }
    }
    out
}

/// `s` as a Markdown code span that stays one: fenced with one backtick more than its longest
/// run of backticks, `|` escaped (GitHub tables split on it even in code), CR and LF as spaces,
/// other control characters escaped. HTML in a code span is shown, not interpreted.
pub fn markdown_code(s: &str) -> String {
    let mut body = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => body.push_str("\\|"),
            '\n' | '\r' => body.push(' '),
            c if c.is_control() => body.push_str(&printable(&c.to_string())),
            c => body.push(c),
        }
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest == 0 {
        format!("{fence}{body}{fence}")
    } else {
        format!("{fence} {body} {fence}")
    }
}

/// A writer that passes text on line by line through [`printable_lines`] (newlines kept), for
/// output that carries strings pinprobe does not control (a GPU driver's device name, an
/// imported artifact's version string, a harness's messages) to a terminal. A line is written
/// when its newline arrives, and the rest on `flush`; bytes that are not UTF-8 show as U+FFFD.
pub struct PrintableWriter<W: std::io::Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: std::io::Write> PrintableWriter<W> {
    pub fn new(inner: W) -> Self {
        PrintableWriter {
            inner,
            line: Vec::new(),
        }
    }

    fn emit(&mut self) -> std::io::Result<()> {
        if self.line.is_empty() {
            return Ok(());
        }
        let text = printable_lines(&String::from_utf8_lossy(&self.line), true);
        self.line.clear();
        self.inner.write_all(text.as_bytes())
    }
}

impl<W: std::io::Write> std::io::Write for PrintableWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for part in buf.split_inclusive(|b| *b == b'\n') {
            self.line.extend_from_slice(part);
            if part.ends_with(b"\n") {
                self.emit()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.emit()?;
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for PrintableWriter<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// `file:line`, or `file` alone when the line is not known (0): a shipped file or a wheel's
/// record has no line, and `:0` is no place.
pub fn file_line(file: &str, line: u32) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_writer_escapes_across_writes_and_keeps_newlines() {
        use std::io::Write;
        let mut out = Vec::new();
        {
            let mut w = PrintableWriter::new(&mut out);
            // An OSC 0 title sequence and a CSI split across writes, a C1 CSI in UTF-8.
            w.write_all(b"gpu \x1b]0;pwned\x07 ok\n\x1b")
                .expect("write");
            w.write_all("[31mred \u{9b}2J\r\nend".as_bytes())
                .expect("write");
        }
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "gpu \\x1b]0;pwned\\x07 ok\n\\x1b[31mred \\u{9b}2J\\r\nend"
        );
    }

    use super::*;

    #[test]
    fn terminal_text_has_no_raw_control_characters() {
        let hostile =
            "fa\x1b[31mred\x1b]8;;http://x\x07link\x1b]8;;\x07\x1b]0;title\x07\rover\u{9b}2J\x7f";
        let shown = printable(hostile);
        assert_eq!(
            shown,
            "fa\\x1b[31mred\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07\\x1b]0;title\\x07\\rover\\u{9b}2J\\x7f"
        );
        assert!(!shown.chars().any(char::is_control));
        assert_eq!(printable_lines("a\nb\r\n", true), "a\nb\\r\n");
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("naïve ✓"), "naïve ✓");
    }

    #[test]
    fn markdown_cells_hold_no_html_link_code_or_row_break() {
        assert_eq!(
            markdown_cell("<img src=x onerror=y>&amp;|a\rb\nc`d`[l](u)\\"),
            "&lt;img src=x onerror=y&gt;&amp;amp;\\|a b c\\`d\\`\\[l\\](u)\\\\"
        );
        assert_eq!(markdown_cell("\x1b[2J"), "\\x1b\\[2J");
    }

    #[test]
    fn markdown_code_spans_cannot_be_closed_early() {
        assert_eq!(markdown_code("abc"), "`abc`");
        assert_eq!(markdown_code("a`b"), "`` a`b ``");
        assert_eq!(markdown_code("x``y`"), "``` x``y` ```");
        assert_eq!(markdown_code("a|b\rc"), "`a\\|b c`");
        assert_eq!(markdown_code("<b>"), "`<b>`");
    }
}
