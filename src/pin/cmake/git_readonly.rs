//! `execute_process` of `git` that only reads the repository (`rev-parse --short HEAD`,
//! `describe --always`, `log -1 --format=%ad`): a build-information step many projects run
//! before their `include()`s. Such a call writes nothing in the tree, so what CMake includes
//! afterwards is still the tree's file; its output is unknown (an input), and an `OUTPUT_FILE`
//! or `ERROR_FILE` is still a write.
//!
//! Read-only means here: git itself writes nothing and runs no other program. Forms that
//! refresh the index (`status`, `describe --dirty`, `diff`) may write `.git/index` and run the
//! repository's `core.fsmonitor` program; forms that print a diff (`show` without `-s`,
//! `log -p`) run diff drivers and text conversion programs; signature checks (`%G?`,
//! `--show-signature`) run `gpg.program`; `-c`, `--config-env`, `--exec-path`, `--git-dir`
//! and `--work-tree` change where git reads its configuration and programs. None of those is
//! allowed, nor a `GIT_*` environment variable the CMake code sets. The repository's own
//! configuration (the builder's `.git/config`, `~/.gitconfig`) is the builder's environment,
//! as the compiler is.

use super::paths::{BINARY_ROOT, SOURCE_ROOT};
use super::value::{Arg, Input};

/// What `find_program(VAR NAMES git git.exe)` leaves in `VAR` when it searches ([`finds_git`]):
/// the git found on the machine.
pub(super) const FOUND_GIT: &str = "find_program(git)";

/// Variables and environment variables that steer where a program is found: one naming a
/// directory of the tree (or the build directory) may find a `git` the tree ships.
pub(super) const SEARCH_PATHS: &[&str] = &[
    "CMAKE_PREFIX_PATH",
    "CMAKE_PROGRAM_PATH",
    "CMAKE_SYSTEM_PREFIX_PATH",
    "CMAKE_SYSTEM_PROGRAM_PATH",
    "CMAKE_FIND_ROOT_PATH",
    "CMAKE_APPBUNDLE_PATH",
    "CMAKE_SYSTEM_APPBUNDLE_PATH",
    "CMAKE_STAGING_PREFIX",
    "CMAKE_SYSROOT",
];

/// Whether a search-path value names the tree or the build directory.
pub(super) fn names_tree(text: &str) -> bool {
    text.contains(SOURCE_ROOT) || text.contains(BINARY_ROOT)
}

/// Whether an environment variable the CMake code sets changes which git runs or how
/// (`PATH`, `GIT_*`, `CMAKE_*` search paths).
pub(super) fn steers_git(env: &str) -> bool {
    env == "PATH" || env.starts_with("GIT_") || env.starts_with("CMAKE_")
}

/// `find_program(VAR NAMES git [git.exe])` (or `find_program(VAR git)`), with at most `DOC`,
/// `REQUIRED`, `NO_CACHE`, `NAMES_PER_DIR` and the `NO_*` / find-root options that only narrow
/// the search: the variable it sets; `None` for any other search (another name, `PATHS`/`HINTS`
/// that may name the tree's own directories).
pub(super) fn finds_git(args: &[&str]) -> Option<String> {
    let (var, rest) = args.split_first()?;
    let mut names = Vec::new();
    let mut i: usize;
    if rest.first() == Some(&"NAMES") {
        i = 1;
        // The names end at the next option (`DOC`, `PATHS`, `NO_...`).
        let option =
            |a: &str| a.len() > 1 && a.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
        while let Some(a) = rest.get(i) {
            if option(a) {
                break;
            }
            names.push(*a);
            i += 1;
        }
    } else {
        names.push(*rest.first()?);
        i = 1;
    }
    while let Some(a) = rest.get(i) {
        match *a {
            "DOC" => i += 2,
            // Options that only narrow where it searches (the search paths themselves are
            // checked where git runs).
            "REQUIRED"
            | "NO_CACHE"
            | "NAMES_PER_DIR"
            | "CMAKE_FIND_ROOT_PATH_BOTH"
            | "ONLY_CMAKE_FIND_ROOT_PATH" => i += 1,
            a if a.starts_with("NO_") => i += 1,
            _ => return None,
        }
    }
    (!names.is_empty() && names.iter().all(|n| matches!(*n, "git" | "git.exe")))
        .then(|| (*var).to_string())
}

/// `execute_process` keywords (CMake 4.x), which end a `COMMAND`'s arguments.
const KEYWORDS: &[&str] = &[
    "COMMAND",
    "WORKING_DIRECTORY",
    "TIMEOUT",
    "RESULT_VARIABLE",
    "RESULTS_VARIABLE",
    "OUTPUT_VARIABLE",
    "ERROR_VARIABLE",
    "INPUT_FILE",
    "OUTPUT_FILE",
    "ERROR_FILE",
    "OUTPUT_QUIET",
    "ERROR_QUIET",
    "COMMAND_ECHO",
    "OUTPUT_STRIP_TRAILING_WHITESPACE",
    "ERROR_STRIP_TRAILING_WHITESPACE",
    "ENCODING",
    "ECHO_OUTPUT_VARIABLE",
    "ECHO_ERROR_VARIABLE",
    "COMMAND_ERROR_IS_FATAL",
];

/// One argument as written and as expanded.
pub(super) struct Word<'a> {
    /// The text as written, references unexpanded.
    pub raw: &'a str,
    /// What it expands to (none, one or a list's items).
    pub items: &'a [Arg],
}

/// What a read-only git `execute_process` writes: the paths of `OUTPUT_FILE` / `ERROR_FILE`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitReads {
    pub files: Vec<String>,
}

/// The call's writes when every `COMMAND` of it is a read-only git invocation; `None`
/// otherwise (then the caller's general rule applies: any path in the tree it names may be
/// written).
pub(super) fn read_only(words: &[Word<'_>]) -> Option<GitReads> {
    let mut out = GitReads::default();
    let mut commands = 0;
    let mut i = 0;
    while i < words.len() {
        let word = words.get(i)?;
        let keyword = literal(word)?;
        if !KEYWORDS.contains(&keyword.as_str()) {
            return None;
        }
        // The arguments up to the next keyword.
        let mut j = i + 1;
        while j < words.len()
            && !words
                .get(j)
                .and_then(literal)
                .is_some_and(|k| KEYWORDS.contains(&k.as_str()))
        {
            j += 1;
        }
        let group = words.get(i + 1..j)?;
        match keyword.as_str() {
            "COMMAND" => {
                let (program, args) = group.split_first()?;
                if !is_git(program) {
                    return None;
                }
                let args: Vec<String> = args.iter().map(literal).collect::<Option<_>>()?;
                if !git_reads_only(&args) {
                    return None;
                }
                commands += 1;
            }
            "OUTPUT_FILE" | "ERROR_FILE" => {
                for w in group {
                    out.files.extend(w.items.iter().map(|a| a.text.clone()));
                    // A path from an input may be any file; a relative one is the working
                    // directory's (or CMake's own): left to the general rule.
                    if w.items
                        .iter()
                        .any(|a| !a.taint.is_empty() || !a.text.starts_with('/'))
                    {
                        return None;
                    }
                }
            }
            _ => {}
        }
        i = j;
    }
    (commands > 0).then_some(out)
}

/// A word that expands to exactly one argument known without inputs.
fn literal(word: &Word<'_>) -> Option<String> {
    match word.items {
        [only] if only.taint.is_empty() => Some(only.text.clone()),
        _ => None,
    }
}

/// The program is git: written `git` (or an absolute path to it outside the tree), or a
/// variable holding git as `FindGit` or `find_program(VAR NAMES git)` leave it (an input: the
/// git found on the machine), every value it can take (a joined condition's sides) git.
fn is_git(program: &Word<'_>) -> bool {
    let named_git = |text: &str| {
        if matches!(text, "git" | "git.exe") {
            return true;
        }
        let base = text.rsplit('/').next().unwrap_or(text);
        text.starts_with('/') && !names_tree(text) && base == "git"
    };
    if let Some(text) = literal(program) {
        return named_git(&text);
    }
    let raw = program.raw.trim();
    let Some(name) = raw
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .filter(|n| !n.contains(['$', '{', '}']))
    else {
        return false;
    };
    let input_ok = |t: &Input| match t {
        Input::Join(_) => true,
        Input::Opaque(o) => o == FOUND_GIT,
        Input::Cache(n) => n == name && name == "GIT_EXECUTABLE",
        Input::Env(_) => false,
    };
    match program.items {
        // Unset: FindGit's cache entry, the git found (or one the user names).
        [] => name == "GIT_EXECUTABLE",
        [only] => {
            (only.text.is_empty() || named_git(&only.text))
                && only
                    .alts
                    .iter()
                    .all(|a| a.text.is_empty() || named_git(&a.text))
                && !only.taint.is_empty()
                && only.taint.iter().all(input_ok)
        }
        _ => false,
    }
}

/// Global options allowed before the subcommand (the ones taking a value: `-C`).
const GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--no-replace-objects",
    "-P",
];

/// Options of `log`, `show` and `rev-list` that neither write nor run a program.
const LOG_FLAGS: &[&str] = &[
    "--count",
    "--all",
    "--branches",
    "--tags",
    "--abbrev-commit",
    "--no-abbrev-commit",
    "--first-parent",
    "--no-merges",
    "--merges",
    "--reverse",
    "--oneline",
    "--no-color",
    "--no-decorate",
    "--no-patch",
    "-s",
    "-q",
    "--quiet",
    "--no-walk",
    "--no-show-signature",
    "--",
];

/// Options of `log`, `show` and `rev-list` with a value (`--opt=value`; `-n` also `-n N`).
const LOG_VALUED: &[&str] = &[
    "--max-count",
    "--skip",
    "--since",
    "--after",
    "--until",
    "--before",
    "--date",
    "--abbrev",
    "--format",
    "--pretty",
    "--author",
    "--committer",
    "--grep",
];

/// Options of `describe` that neither refresh the index nor run a program.
const DESCRIBE_FLAGS: &[&str] = &[
    "--always",
    "--tags",
    "--all",
    "--long",
    "--exact-match",
    "--first-parent",
    "--contains",
    "--",
];

const DESCRIBE_VALUED: &[&str] = &["--abbrev", "--match", "--exclude", "--candidates"];

/// `git ARGS` (after the program) reads only.
fn git_reads_only(args: &[String]) -> bool {
    let mut at = 0;
    while let Some(a) = args.get(at) {
        if a == "-C" {
            at += 2;
        } else if GLOBAL_FLAGS.contains(&a.as_str()) {
            at += 1;
        } else {
            break;
        }
    }
    let Some((sub, rest)) = args.get(at..).and_then(<[String]>::split_first) else {
        return false;
    };
    let valued = |a: &str, names: &[&str]| {
        names
            .iter()
            .any(|n| a.strip_prefix(n).is_some_and(|v| v.starts_with('=')))
    };
    // A format asking for a signature check runs gpg.
    let no_signature = |a: &str| !a.contains("%G") && !a.contains("show-signature");
    let operand = |a: &str| !a.starts_with('-');
    match sub.as_str() {
        // Prints what it is asked, never writes, runs nothing.
        "rev-parse" => rest.iter().all(|a| !a.starts_with("--output")),
        "rev-list" | "log" | "show" => {
            let mut i = 0;
            let mut no_patch = false;
            while let Some(a) = rest.get(i) {
                let ok = if a == "-n" {
                    i += 1;
                    rest.get(i).is_some_and(|n| n.parse::<u64>().is_ok())
                } else if let Some(n) = a.strip_prefix("-n").or_else(|| a.strip_prefix('-'))
                    && !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit())
                {
                    true
                } else if LOG_FLAGS.contains(&a.as_str()) {
                    no_patch |= a == "-s" || a == "--no-patch";
                    true
                } else {
                    (valued(a, LOG_VALUED) && no_signature(a)) || (operand(a) && no_signature(a))
                };
                if !ok {
                    return false;
                }
                i += 1;
            }
            // `show` prints the commit's diff (diff drivers, text conversion) unless told not to.
            sub != "show" || no_patch
        }
        "describe" => rest.iter().all(|a| {
            DESCRIBE_FLAGS.contains(&a.as_str()) || valued(a, DESCRIBE_VALUED) || operand(a)
        }),
        // `symbolic-ref NAME` reads; with a second operand it writes.
        "symbolic-ref" => {
            let operands = rest.iter().filter(|a| operand(a)).count();
            operands == 1
                && rest
                    .iter()
                    .all(|a| operand(a) || matches!(a.as_str(), "-q" | "--quiet" | "--short"))
        }
        "branch" => rest.len() == 1 && rest.first().is_some_and(|a| a == "--show-current"),
        // Plumbing: compares without refreshing the index, runs no diff driver or text
        // conversion unless asked (`--ext-diff`, `--textconv`, not allowed).
        "diff-index" => rest.iter().all(|a| {
            operand(a)
                || matches!(
                    a.as_str(),
                    "--quiet"
                        | "--exit-code"
                        | "--cached"
                        | "--name-only"
                        | "--name-status"
                        | "-r"
                        | "--"
                )
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One unquoted, untainted argument per word.
    fn items(raw: &[&str]) -> Vec<Vec<Arg>> {
        raw.iter()
            .map(|r| {
                vec![Arg {
                    text: (*r).to_string(),
                    taint: Default::default(),
                    quoted: false,
                    line: 1,
                    alts: crate::pin::cmake::value::Alts::new(),
                }]
            })
            .collect()
    }

    fn words(raw: &[&str]) -> bool {
        let items = items(raw);
        let w: Vec<Word<'_>> = raw
            .iter()
            .zip(&items)
            .map(|(r, i)| Word { raw: r, items: i })
            .collect();
        read_only(&w).is_some()
    }

    #[test]
    fn reading_forms_and_only_those() {
        let read = |args: &str| {
            let mut v = vec!["COMMAND", "git"];
            v.extend(args.split_whitespace());
            v.extend(["WORKING_DIRECTORY", "/src", "OUTPUT_VARIABLE", "X"]);
            words(&v)
        };
        for ok in [
            "rev-parse --short HEAD",
            "rev-parse --abbrev-ref HEAD",
            "rev-list --count HEAD",
            "describe --always --abbrev=40",
            "describe --tags --match=v*",
            "log -1 --format=%ad --date=local",
            "log -n 1 --pretty=format:%H",
            "show -s --format=%ci HEAD",
            "-C sub rev-parse HEAD",
            "--no-pager log -1",
            "symbolic-ref --short HEAD",
            "branch --show-current",
            "diff-index --quiet HEAD -- .",
        ] {
            assert!(read(ok), "{ok}");
        }
        for no in [
            "status",
            "status --porcelain",
            "describe --dirty",
            "describe --always --dirty=-x",
            "describe --broken",
            "show HEAD",
            "log -p",
            "log --stat",
            "log --format=%G?",
            "log --show-signature",
            "log --output=/src/x.cmake",
            "rev-parse --output=x",
            "-c core.fsmonitor=x rev-parse HEAD",
            "--git-dir=/src/x rev-parse HEAD",
            "--exec-path=/src rev-parse HEAD",
            "diff",
            "diff-index -p --ext-diff HEAD",
            "diff-index --textconv -p HEAD",
            "checkout v1",
            "apply p.diff",
            "fetch",
            "submodule update --init",
            "symbolic-ref HEAD refs/heads/x",
            "branch new",
            "config user.name",
            "",
        ] {
            assert!(!read(no), "{no}");
        }
        // Any other program, anywhere in the pipeline.
        assert!(!words(&[
            "COMMAND",
            "git",
            "rev-parse",
            "HEAD",
            "COMMAND",
            "sh",
            "-c",
            "x"
        ]));
        assert!(!words(&["COMMAND", "cmake", "-E", "copy", "a", "b"]));
        assert!(!words(&["COMMAND", "/tmp/git-wrapper", "rev-parse"]));
        assert!(words(&["COMMAND", "/usr/bin/git", "rev-parse", "HEAD"]));
        // A git the tree ships (a relative path, a path under the tree or the build directory).
        assert!(!words(&["COMMAND", "tools/git", "rev-parse", "HEAD"]));
        assert!(!words(&[
            "COMMAND",
            &format!("{SOURCE_ROOT}/tools/git"),
            "rev-parse"
        ]));
        assert!(!words(&[
            "COMMAND",
            &format!("{BINARY_ROOT}/git"),
            "rev-parse"
        ]));
        // An unknown keyword or argument ahead of COMMAND: not read here.
        assert!(!words(&["FOO", "COMMAND", "git", "rev-parse"]));
    }

    #[test]
    fn find_program_of_git_and_nothing_else() {
        let f = |a: &str| finds_git(&a.split_whitespace().collect::<Vec<_>>());
        assert_eq!(
            f("GIT_EXECUTABLE NAMES git git.exe").as_deref(),
            Some("GIT_EXECUTABLE")
        );
        assert_eq!(f("G git").as_deref(), Some("G"));
        assert_eq!(f("G NAMES git DOC where REQUIRED").as_deref(), Some("G"));
        assert_eq!(
            f("GIT_EXE NAMES git git.exe NO_CMAKE_FIND_ROOT_PATH").as_deref(),
            Some("GIT_EXE")
        );
        for no in [
            "G NAMES sh",
            "G NAMES git sh",
            "G git /src/tools",
            "G NAMES git PATHS /src/tools",
            "G NAMES git NO_DEFAULT_PATH PATHS /src/tools",
            "G NAMES git VALIDATOR v",
            "G NAMES git HINTS /src/tools",
            "G",
            "G NAMES",
        ] {
            assert_eq!(f(no), None, "{no}");
        }
    }

    #[test]
    fn output_files_are_still_written() {
        let raw = [
            "COMMAND",
            "git",
            "rev-parse",
            "HEAD",
            "OUTPUT_FILE",
            "/src/out.cmake",
        ];
        let items = items(&raw);
        let w: Vec<Word<'_>> = raw
            .iter()
            .zip(&items)
            .map(|(r, i)| Word { raw: r, items: i })
            .collect();
        assert_eq!(
            read_only(&w).map(|r| r.files),
            Some(vec!["/src/out.cmake".to_string()])
        );
        // Relative to the working directory (real CMake writes it there): not read here.
        assert!(!words(&[
            "COMMAND",
            "git",
            "rev-parse",
            "HEAD",
            "WORKING_DIRECTORY",
            "/src",
            "OUTPUT_FILE",
            "out.cmake"
        ]));
    }
}
