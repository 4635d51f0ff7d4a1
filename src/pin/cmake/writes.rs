//! What a configuration writes into the source tree. CMake reads the tree as the configuration
//! left it: a file that `file(WRITE)`, `configure_file()`, `file(COPY)`, `file(DOWNLOAD)` or a
//! process run in the tree wrote (or that `file(REMOVE)` removed) is not the view's copy, so
//! reading it (`include()`, `add_subdirectory()`, `file(READ|STRINGS|GLOB)`, `if(EXISTS)`)
//! gives an unknown value, never the view's content.

use super::value::Arg;
use std::collections::BTreeSet;

/// View paths the configuration may have written or removed so far, each with everything
/// below it (`""` is the whole tree).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Writes(BTreeSet<String>);

impl Writes {
    pub(super) fn insert(&mut self, rel: String) {
        self.0.insert(rel);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn extend(&mut self, other: Writes) {
        self.0.extend(other.0);
    }

    /// Whether the file or directory at `rel` may differ from the view's.
    pub(super) fn covers(&self, rel: &str) -> bool {
        self.0.iter().any(|w| within(rel, w))
    }

    /// Whether anything at or below the directory `dir` may differ from the view's (a glob
    /// or an `EXISTS` of a directory there).
    pub(super) fn touches(&self, dir: &str) -> bool {
        self.0.iter().any(|w| within(w, dir) || within(dir, w))
    }
}

/// `path` is `dir` or below it.
fn within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The path arguments a command writes (or removes) in the tree. `args` are the expanded
/// arguments after the command name; relative paths are resolved by the caller against the
/// current source directory, which also covers CMake's binary-directory ones for a build
/// directory inside the tree.
pub(super) fn written_by<'a>(command: &str, args: &'a [Arg]) -> Vec<&'a Arg> {
    let after = |k: &str| -> Vec<&'a Arg> {
        args.iter()
            .position(|a| a.text == k)
            .and_then(|i| args.get(i + 1))
            .into_iter()
            .collect()
    };
    match command {
        "configure_file" => args.get(1).into_iter().collect(),
        "write_file" | "make_directory" => args.first().into_iter().collect(),
        "file" => {
            let Some((op, rest)) = args.split_first() else {
                return Vec::new();
            };
            match op.text.as_str() {
                "WRITE" | "APPEND" | "LOCK" => rest.first().into_iter().collect(),
                "TOUCH" | "REMOVE" | "REMOVE_RECURSE" | "MAKE_DIRECTORY" => rest.iter().collect(),
                "CONFIGURE" | "GENERATE" | "ARCHIVE_CREATE" => after("OUTPUT"),
                "COPY" | "INSTALL" | "ARCHIVE_EXTRACT" => after("DESTINATION"),
                "RENAME" => rest.iter().take(2).collect(),
                "COPY_FILE" | "CREATE_LINK" | "DOWNLOAD" => rest.get(1).into_iter().collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// The `file()` forms that write or remove files ([`written_by`] names which arguments).
const FILE_WRITES: &[&str] = &[
    "WRITE",
    "APPEND",
    "LOCK",
    "TOUCH",
    "REMOVE",
    "REMOVE_RECURSE",
    "MAKE_DIRECTORY",
    "CONFIGURE",
    "GENERATE",
    "ARCHIVE_CREATE",
    "COPY",
    "INSTALL",
    "ARCHIVE_EXTRACT",
    "RENAME",
    "COPY_FILE",
    "CREATE_LINK",
    "DOWNLOAD",
];

/// Whether the command only creates directories (`file(MAKE_DIRECTORY)`, `make_directory()`):
/// no file's content changes, so one at a path from an input is not a write anywhere.
pub(super) fn only_makes_directories(command: &str, args: &[Arg]) -> bool {
    command == "make_directory"
        || (command == "file" && args.first().is_some_and(|a| a.text == "MAKE_DIRECTORY"))
}

/// Whether a command (with its first argument as written) may write files in the tree: a
/// function body that does cannot be summarised.
pub(super) fn writes_files(command: &str, first: Option<&str>) -> bool {
    match command {
        "configure_file" | "write_file" | "make_directory" | "execute_process" | "exec_program" => {
            true
        }
        "file" => first.is_some_and(|op| FILE_WRITES.contains(&op)),
        _ => false,
    }
}

/// Where a process may write in the tree, as far as its arguments show: every absolute path
/// under `root` they name (`WORKING_DIRECTORY /src/gen`, `sh -c "echo x > /src/pins/t"`).
/// What a process computes for itself, or reaches relative to the build directory, is not
/// seen (a process can as well download the affected kernel itself: outside what a CMake
/// evaluation can know).
pub(super) fn process_writes<'a>(args: &'a [&'a str], root: &str) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for a in args {
        let mut from = 0;
        while let Some(i) = a.get(from..).and_then(|s| s.find(root)) {
            let start = from + i;
            let tail = a.get(start..).unwrap_or_default();
            let end = tail
                .find(|c: char| {
                    c.is_whitespace()
                        || matches!(c, '"' | '\'' | ';' | '&' | '|' | '>' | '<' | ')' | '`')
                })
                .unwrap_or(tail.len());
            out.push(tail.get(..end).unwrap_or(tail));
            from = start + end.max(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_covers_itself_and_what_is_below_it() {
        let mut w = Writes::default();
        w.insert("gen".into());
        assert!(w.covers("gen") && w.covers("gen/a.cmake"));
        assert!(!w.covers("generated.cmake") && !w.covers("other/gen"));
        assert!(w.touches("") && w.touches("gen/x") && !w.touches("ge"));
        let mut all = Writes::default();
        all.insert(String::new());
        assert!(all.covers("any/file") && all.touches("any"));
    }

    fn arg(text: &str) -> Arg {
        Arg {
            text: text.into(),
            taint: Default::default(),
            quoted: false,
            line: 1,
            alts: crate::pin::cmake::value::Alts::new(),
        }
    }

    /// Every writing `file()` form names a path it writes; the others name none.
    #[test]
    fn each_writing_file_form_names_what_it_writes() {
        for op in FILE_WRITES
            .iter()
            .chain(&["READ", "STRINGS", "GLOB", "CHMOD", "SIZE"])
        {
            let args: Vec<Arg> = [*op, "p1", "p2", "OUTPUT", "o", "DESTINATION", "d"]
                .iter()
                .map(|t| arg(t))
                .collect();
            let written: Vec<&str> = written_by("file", &args)
                .iter()
                .map(|a| a.text.as_str())
                .collect();
            assert_eq!(!written.is_empty(), writes_files("file", Some(op)), "{op}");
            let expected: &[&str] = match *op {
                "WRITE" | "APPEND" | "LOCK" => &["p1"],
                "TOUCH" | "REMOVE" | "REMOVE_RECURSE" | "MAKE_DIRECTORY" => {
                    &["p1", "p2", "OUTPUT", "o", "DESTINATION", "d"]
                }
                "CONFIGURE" | "GENERATE" | "ARCHIVE_CREATE" => &["o"],
                "COPY" | "INSTALL" | "ARCHIVE_EXTRACT" => &["d"],
                "RENAME" => &["p1", "p2"],
                "COPY_FILE" | "CREATE_LINK" | "DOWNLOAD" => &["p2"],
                _ => &[],
            };
            assert_eq!(written, expected, "{op}");
        }
        let two = [arg("in"), arg("out")];
        assert_eq!(written_by("configure_file", &two)[0].text, "out");
        assert_eq!(written_by("write_file", &two)[0].text, "in");
        assert!(written_by("message", &two).is_empty());
        assert!(writes_files("execute_process", None) && !writes_files("message", None));
    }

    #[test]
    fn process_arguments_name_the_tree_paths_they_write() {
        let args = [
            "COMMAND",
            "sh",
            "-c",
            "cd /src/gen && echo x > /src/pins/tag.txt",
            "WORKING_DIRECTORY",
            "/src/w",
        ];
        assert_eq!(
            process_writes(&args, "/src"),
            ["/src/gen", "/src/pins/tag.txt", "/src/w"]
        );
    }
}
