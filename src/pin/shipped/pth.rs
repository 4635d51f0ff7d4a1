//! `.pth` files as CPython's `site.addpackage` reads them: text split at universal newlines
//! (`\n`, `\r\n` and a lone `\r` each end a line), a line starting with `#` or holding only
//! whitespace skipped, a line starting with `import ` or `import\t` executed, and every other
//! line, right-trimmed, a path entry (joined to the site directory when relative, appended to
//! `sys.path` when it exists).
//!
//! Where Python versions differ, the reading that can run code wins: a line after a UTF-8
//! byte-order mark counts as an `import` line when the rest is one (3.13 reads `.pth` files as
//! `utf-8-sig`), and a file that is not UTF-8 is flagged (`site` fails on it in the locale
//! encoding most images use, or reads it otherwise: which, this reading cannot tell).

/// One meaningful line of a `.pth` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PthLine {
    /// A path entry: the line right-trimmed (`site` joins a relative one to the site directory).
    Path { line: u32, path: String },
    /// A line `site` executes when Python starts.
    Import { line: u32, code: String },
}

/// A `.pth` file's lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pth {
    pub lines: Vec<PthLine>,
    /// The bytes are not UTF-8 (read here with replacement characters).
    pub not_utf8: bool,
}

impl Pth {
    /// Read `bytes` as `site` does.
    pub fn parse(bytes: &[u8]) -> Pth {
        let not_utf8 = std::str::from_utf8(bytes).is_err();
        let text = String::from_utf8_lossy(bytes);
        let mut lines = Vec::new();
        for (i, raw) in universal_lines(&text).enumerate() {
            let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let unmarked = if i == 0 {
                raw.strip_prefix('\u{feff}').unwrap_or(raw)
            } else {
                raw
            };
            if raw.starts_with('#') || raw.chars().all(is_py_space) {
                continue;
            }
            if is_import(raw) || is_import(unmarked) {
                lines.push(PthLine::Import {
                    line: n,
                    code: raw.to_string(),
                });
                continue;
            }
            lines.push(PthLine::Path {
                line: n,
                path: raw.trim_end_matches(is_py_space).to_string(),
            });
        }
        Pth { lines, not_utf8 }
    }

    /// The path entries, in order.
    pub fn paths(&self) -> impl Iterator<Item = (u32, &str)> {
        self.lines.iter().filter_map(|l| match l {
            PthLine::Path { line, path } => Some((*line, path.as_str())),
            PthLine::Import { .. } => None,
        })
    }

    /// The executed lines, in order.
    pub fn imports(&self) -> impl Iterator<Item = (u32, &str)> {
        self.lines.iter().filter_map(|l| match l {
            PthLine::Import { line, code } => Some((*line, code.as_str())),
            PthLine::Path { .. } => None,
        })
    }
}

/// Python's `str.isspace` for one character: Unicode white space and the four information
/// separators (U+001C..U+001F), which `str.strip` also removes.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn is_import(line: &str) -> bool {
    line.starts_with("import ") || line.starts_with("import\t")
}

/// Lines as Python's universal-newline text mode yields them (without their ends).
fn universal_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.as_bytes().get(end) {
            Some(b'\r') if rest.as_bytes().get(end + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
            None => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `line` (a relative `.pth` path entry) joined to `site` and normalised as `os.path.abspath`
/// does (lexically), while it stays inside the view; `None` when it climbs out.
pub fn join_relative(site: &str, line: &str) -> Option<String> {
    let mut parts: Vec<&str> = site.split('/').filter(|p| !p.is_empty()).collect();
    for part in line.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_every_newline_python_knows() {
        let pth = Pth::parse(
            b"# c\n\n  \n/abs\r\nrel/dir  \rimport sys; x\nimport\tos\n importnot\nimportx\n",
        );
        assert_eq!(
            pth.lines,
            [
                PthLine::Path {
                    line: 4,
                    path: "/abs".into()
                },
                PthLine::Path {
                    line: 5,
                    path: "rel/dir".into()
                },
                PthLine::Import {
                    line: 6,
                    code: "import sys; x".into()
                },
                PthLine::Import {
                    line: 7,
                    code: "import\tos".into()
                },
                PthLine::Path {
                    line: 8,
                    path: " importnot".into()
                },
                PthLine::Path {
                    line: 9,
                    path: "importx".into()
                },
            ]
        );
        assert!(!pth.not_utf8);
        assert!(Pth::parse(b"/a\xff\n").not_utf8);
        // A byte-order mark: an import line for the Pythons that strip it.
        assert_eq!(
            Pth::parse("\u{feff}import x\n".as_bytes())
                .imports()
                .count(),
            1
        );
        assert_eq!(Pth::parse(b"").lines, []);
    }

    #[test]
    fn relative_entries_join_the_site_directory_and_stay_inside() {
        assert_eq!(
            join_relative("a/b/site", "../src").as_deref(),
            Some("a/b/src")
        );
        assert_eq!(
            join_relative("a/site", "./x/./y").as_deref(),
            Some("a/site/x/y")
        );
        assert_eq!(join_relative("a/site", "../../.."), None);
    }
}
