//! The CMake projects a `setup.py` configures, read statically (never executed): a
//! `CMakeExtension("name", sourcedir="csrc")`-style extension (any class whose name contains
//! `CMake`, its `sourcedir` / `source_dir` / `cmake_lists_dir` keyword or its second positional
//! argument), and `cmake` run through `subprocess` with `-S DIR` or a positional source
//! directory (a list `["cmake", "-S", "csrc", ...]` or a command string `"cmake -S csrc"`).
//!
//! A path written as an expression (`os.path.join(ROOT_DIR, "csrc")`, `Path(__file__).parent /
//! "csrc"`) is read as its string literals joined, the rest taken as `setup.py`'s own
//! directory, and said so; an argument with no literal at all is reported as not read.

/// One Python token: enough of Python's lexical structure to find calls and their arguments.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Str(String),
    Name(String),
    Punct(char),
}

/// Tokens with their 1-based lines; comments dropped, string prefixes (`r`, `f`, `b`) dropped.
fn tokens(text: &str) -> Vec<(Token, u32)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let start_line = line;
            let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let quote_len = if triple { 3 } else { 1 };
            i += quote_len;
            let mut value = String::new();
            while i < chars.len() {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    value.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                let closes = if triple {
                    chars[i] == c && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c)
                } else {
                    chars[i] == c || chars[i] == '\n'
                };
                if closes {
                    break;
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
            i += quote_len;
            out.push((Token::Str(value), start_line));
        } else if c.is_alphanumeric() || c == '_' {
            let mut name = String::new();
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                name.push(chars[i]);
                i += 1;
            }
            // A string prefix: the string follows.
            if matches!(
                name.to_ascii_lowercase().as_str(),
                "r" | "f" | "b" | "rb" | "br" | "fr" | "rf" | "u"
            ) && matches!(chars.get(i), Some('"' | '\''))
            {
                continue;
            }
            out.push((Token::Name(name), line));
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The argument groups of the call whose `(` is at `open`, split at top-level commas, and the
/// index after its `)`.
fn arguments(toks: &[(Token, u32)], open: usize) -> (Vec<&[(Token, u32)]>, usize) {
    let mut depth = 0usize;
    let mut groups = Vec::new();
    let mut start = open + 1;
    let mut i = open;
    while i < toks.len() {
        match &toks[i].0 {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if start < i {
                        groups.push(&toks[start..i]);
                    }
                    return (groups, i + 1);
                }
            }
            Token::Punct(',') if depth == 1 => {
                groups.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    (groups, toks.len())
}

/// A path expression: its string literals joined with `/`; whether anything else was in it.
fn path_of(group: &[(Token, u32)]) -> Option<(String, bool)> {
    let literals: Vec<&str> = group
        .iter()
        .filter_map(|(t, _)| match t {
            Token::Str(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    if literals.is_empty() {
        return None;
    }
    let only_literal = group.len() == 1;
    Some((literals.join("/"), !only_literal))
}

fn expression(group: &[(Token, u32)]) -> String {
    let mut out = String::new();
    for (t, _) in group {
        match t {
            Token::Str(s) => out.push_str(&format!("{s:?}")),
            Token::Name(n) => out.push_str(n),
            Token::Punct(c) => out.push(*c),
        }
    }
    out
}

/// What `setup.py` says of a CMake source directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    /// The directory, as written (relative to `setup.py`'s directory); `None`: not read.
    pub dir: Option<String>,
    /// `setup.py:LINE: ...`, what was read.
    pub why: String,
    /// Read from an extension's arguments (a list of strings starting with `"cmake"` may be
    /// something else than a command line: only an extension that names nothing usable is
    /// worth a warning).
    pub extension: bool,
}

const SOURCE_KEYWORDS: [&str; 5] = [
    "sourcedir",
    "source_dir",
    "cmake_lists_dir",
    "cmake_source_dir",
    "src_dir",
];

/// Options of `cmake` that take the next argument as their value.
const VALUED: [&str; 9] = [
    "-B",
    "-G",
    "-T",
    "-A",
    "-C",
    "-D",
    "-U",
    "--toolchain",
    "--install-prefix",
];

/// The CMake source directories `setup.py` (`text`, named `file`) configures.
pub fn configured(file: &str, text: &str) -> Vec<Configured> {
    let toks = tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = (&toks[i].0, toks[i].1);
        // `SomethingCMakeSomething(...)`: an extension (or a class definition, skipped).
        if let Token::Name(name) = tok
            && name.to_ascii_lowercase().contains("cmake")
            && toks
                .get(i + 1)
                .is_some_and(|(t, _)| *t == Token::Punct('('))
            && !(i > 0 && toks[i - 1].0 == Token::Name("class".into()))
            && !(i > 0 && toks[i - 1].0 == Token::Name("def".into()))
        {
            let (groups, _) = arguments(&toks, i + 1);
            let keyword = groups.iter().find(|g| {
                matches!(g.first(), Some((Token::Name(k), _)) if SOURCE_KEYWORDS.contains(&k.as_str()))
                    && matches!(g.get(1), Some((Token::Punct('='), _)))
            });
            let positional = groups
                .iter()
                .filter(|g| !matches!(g.get(1), Some((Token::Punct('='), _))))
                .nth(1);
            if let Some(value) = keyword.map(|g| &g[2..]).or(positional.map(|g| &g[..])) {
                out.push(read_dir(
                    file,
                    line,
                    &format!("{name}({})", expression(value)),
                    value,
                ));
            }
        }
        // `"cmake", ...` in a list or tuple, or a `"cmake ..."` command string.
        if let Token::Str(s) = tok {
            let words: Vec<String> = if s == "cmake" {
                let mut words = Vec::new();
                let mut j = i + 1;
                while let Some((Token::Punct(','), _)) = toks.get(j) {
                    match toks.get(j + 1) {
                        Some((Token::Str(w), _)) => words.push(w.clone()),
                        Some((Token::Punct(']' | ')'), _)) | None => break,
                        Some(_) => {
                            // A value not written out: stands for one argument.
                            words.push(String::from("\u{0}"));
                        }
                    }
                    j += 2;
                    while let Some((t, _)) = toks.get(j) {
                        if matches!(t, Token::Punct(',' | ']' | ')')) {
                            break;
                        }
                        j += 1;
                    }
                }
                words
            } else if let Some(rest) = s.strip_prefix("cmake ")
                // A command line, not prose: it names a source or build directory.
                && rest.split_whitespace().any(|w| w.starts_with("-S") || w == "-B")
            {
                rest.split_whitespace().map(str::to_string).collect()
            } else {
                Vec::new()
            };
            if !words.is_empty()
                && let Some(dir) = source_argument(&words)
            {
                let why = format!(
                    "{file}:{line}: cmake {}",
                    words.join(" ").replace('\u{0}', "…")
                );
                out.push(Configured {
                    dir: (dir != "\u{0}").then_some(dir),
                    why,
                    extension: false,
                });
            }
        }
        i += 1;
    }
    out
}

/// The source directory of a `cmake` command line (after `cmake`): `-S DIR`, `-SDIR`, or the
/// first argument that is not an option or an option's value; `None` for `--build`,
/// `--install`, `-P` and `-E` (no configuration).
fn source_argument(words: &[String]) -> Option<String> {
    if words
        .iter()
        .any(|w| matches!(w.as_str(), "--build" | "--install" | "-P" | "-E" | "--open"))
    {
        return None;
    }
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "-S" {
            return words.get(i + 1).cloned();
        }
        if let Some(dir) = w.strip_prefix("-S") {
            return Some(dir.to_string());
        }
        if VALUED.contains(&w) {
            i += 2;
            continue;
        }
        if !w.starts_with('-') {
            return Some(w.to_string());
        }
        i += 1;
    }
    None
}

fn read_dir(file: &str, line: u32, call: &str, value: &[(Token, u32)]) -> Configured {
    match path_of(value) {
        Some((dir, false)) => Configured {
            dir: Some(dir),
            why: format!("{file}:{line}: {call}"),
            extension: true,
        },
        Some((dir, true)) => Configured {
            dir: Some(dir),
            why: format!(
                "{file}:{line}: {call} (read as its string literals from {file}'s directory)"
            ),
            extension: true,
        },
        None => Configured {
            dir: None,
            why: format!("{file}:{line}: {call}"),
            extension: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(text: &str) -> Vec<Option<String>> {
        configured("setup.py", text)
            .into_iter()
            .map(|c| c.dir)
            .collect()
    }

    #[test]
    fn cmake_extensions_by_keyword_or_position() {
        let text = "from setuptools import setup, Extension\n\nclass CMakeExtension(Extension):\n    def __init__(self, name, sourcedir=\"\"):\n        super().__init__(name, sources=[])\n\nsetup(\n    ext_modules=[\n        CMakeExtension(\"a._C\", sourcedir=\"csrc\"),  # the kernels\n        CMakeExtension('b._C', 'kernels/b'),\n        CMakeExtension(name=\"c\", source_dir=os.path.join(ROOT_DIR, \"c\", 'sub')),\n        CMakeExtension(\"d\", sourcedir=computed()),\n        CMakeExtension(\"e\"),\n    ]\n)\n";
        let found = configured("setup.py", text);
        assert_eq!(
            found.iter().map(|c| c.dir.clone()).collect::<Vec<_>>(),
            [
                Some("csrc".into()),
                Some("kernels/b".into()),
                Some("c/sub".into()),
                None
            ]
        );
        assert_eq!(found[0].why, "setup.py:9: CMakeExtension(\"csrc\")");
        assert!(
            found[2]
                .why
                .ends_with("(read as its string literals from setup.py's directory)"),
            "{}",
            found[2].why
        );
        assert_eq!(found[3].why, "setup.py:12: CMakeExtension(computed())");
    }

    #[test]
    fn cmake_run_through_subprocess() {
        assert_eq!(
            dirs(
                "subprocess.check_call([\"cmake\", \"-S\", \"kernels\", \"-B\", build_dir, \"-DX=1\"])\n"
            ),
            [Some("kernels".into())]
        );
        assert_eq!(
            dirs("subprocess.run(['cmake', '-B', 'build', '-G', 'Ninja', 'csrc/ext'])\n"),
            [Some("csrc/ext".into())]
        );
        assert_eq!(
            dirs("os.system(\"cmake -Skern -B build\")\n"),
            [Some("kern".into())]
        );
        // A source directory not written out, and a build step (no configuration).
        assert_eq!(
            dirs("subprocess.run([\"cmake\", ext.sourcedir, \"-B\", b])\n"),
            [None]
        );
        assert!(dirs("subprocess.run([\"cmake\", \"--build\", \".\"])\n").is_empty());
        // Comments and other strings are not calls.
        assert!(dirs("# CMakeExtension(\"x\", \"y\")\nprint('cmake is used')\n").is_empty());
    }

    fn strs(text: &str) -> Vec<(Token, u32)> {
        tokens(text)
    }

    fn name(n: &str) -> Token {
        Token::Name(n.into())
    }

    fn s(v: &str) -> Token {
        Token::Str(v.into())
    }

    #[test]
    fn tokens_are_pythons_names_strings_and_punctuation_with_their_lines() {
        let text = "import os  # a comment with \"quotes\" and (parens\nROOT = os.path.dirname(__file__)\nx = r'raw\\\\path' + f\"{y}\" + b'b' + rb\"rb\" + u'u' + Rb'x'\nrb = 1\n";
        assert_eq!(
            strs(text),
            [
                (name("import"), 1),
                (name("os"), 1),
                (name("ROOT"), 2),
                (Token::Punct('='), 2),
                (name("os.path.dirname"), 2),
                (Token::Punct('('), 2),
                (name("__file__"), 2),
                (Token::Punct(')'), 2),
                (name("x"), 3),
                (Token::Punct('='), 3),
                (s("raw\\path"), 3),
                (Token::Punct('+'), 3),
                (s("{y}"), 3),
                (Token::Punct('+'), 3),
                (s("b"), 3),
                (Token::Punct('+'), 3),
                (s("rb"), 3),
                (Token::Punct('+'), 3),
                (s("u"), 3),
                (Token::Punct('+'), 3),
                (s("x"), 3),
                (name("rb"), 4),
                (Token::Punct('='), 4),
                (name("1"), 4),
            ]
        );
    }

    #[test]
    fn strings_end_where_python_ends_them() {
        // Triple quotes span lines (counted) and hold single quotes; an escaped quote does not
        // end a string; one never closed ends with the text.
        let text = "a = \"\"\"one \"two\" 'x'\nthree\"\"\"\nb = '''q''' \nc = \"it\\\"s\" 'd\\'\\\\'\nd = 'open";
        assert_eq!(
            strs(text),
            [
                (name("a"), 1),
                (Token::Punct('='), 1),
                (s("one \"two\" 'x'\nthree"), 1),
                (name("b"), 3),
                (Token::Punct('='), 3),
                (s("q"), 3),
                (name("c"), 4),
                (Token::Punct('='), 4),
                (s("it\"s"), 4),
                (s("d'\\"), 4),
                (name("d"), 5),
                (Token::Punct('='), 5),
                (s("open"), 5),
            ]
        );
        assert_eq!(
            strs("e = \"\"\"\n"),
            [(name("e"), 1), (Token::Punct('='), 1), (s("\n"), 1)]
        );
        // A quote as the very last character, and a backslash at the very end.
        assert_eq!(strs("'"), [(s(""), 1)]);
        assert_eq!(strs("'a\\"), [(s("a\\"), 1)]);
        assert_eq!(strs("#"), []);
    }

    #[test]
    fn arguments_split_at_top_level_commas_only() {
        let toks = tokens("f(a, g(b, c), [d, e], {k: v, w: z}, 'x',)\nh()\nopen(q, r");
        let (groups, after) = arguments(&toks, 1);
        let shown: Vec<String> = groups.iter().map(|g| expression(g)).collect();
        assert_eq!(shown, ["a", "g(b,c)", "[d,e]", "{k:v,w:z}", "\"x\""]);
        assert_eq!(toks[after], (name("h"), 2));
        let (groups, after) = arguments(&toks, after + 1);
        assert!(groups.is_empty());
        assert_eq!(toks[after], (name("open"), 3));
        // Never closed: every group so far, and the end.
        let (groups, after) = arguments(&toks, after + 1);
        assert_eq!(
            groups.iter().map(|g| expression(g)).collect::<Vec<_>>(),
            ["q"]
        );
        assert_eq!(after, toks.len());
    }

    #[test]
    fn a_path_expression_is_its_literals_joined() {
        let toks = tokens("'csrc'\nos.path.join(ROOT, 'a', \"b\")\nROOT\n");
        assert_eq!(path_of(&toks[..1]), Some(("csrc".into(), false)));
        assert_eq!(
            path_of(&toks[1..toks.len() - 1]),
            Some(("a/b".into(), true))
        );
        assert_eq!(path_of(&toks[toks.len() - 1..]), None);
        assert_eq!(
            expression(&toks[1..toks.len() - 1]),
            "os.path.join(ROOT,\"a\",\"b\")"
        );
    }

    #[test]
    fn the_source_argument_of_a_cmake_command_line() {
        let w = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        for (line, dir) in [
            ("-S src -B build", Some("src")),
            ("-B build -Ssrc", Some("src")),
            (
                "-G Ninja -D X=1 -DY=2 --toolchain t.cmake -A x64 -T v -C c.cmake -U Z --install-prefix /p kern",
                Some("kern"),
            ),
            ("-B build", None),
            ("-S", None),
            ("--build build", None),
            ("--install build", None),
            ("-P script.cmake", None),
            ("-E copy a b", None),
            ("--open build", None),
            ("--fresh -Wdev csrc", Some("csrc")),
        ] {
            assert_eq!(source_argument(&w(line)).as_deref(), dir, "{line}");
        }
    }

    #[test]
    fn vllms_own_setup_shapes() {
        // As vLLM's setup.py writes them: the extension class defined with `cmake_lists_dir`,
        // the extensions named without a directory, cmake run with the extension's attribute,
        // then `--build` and `--version`.
        let text = "class CMakeExtension(Extension):\n    def __init__(self, name: str, cmake_lists_dir: str = \".\", **kwa) -> None:\n        super().__init__(name, sources=[], py_limited_api=True, **kwa)\n\nclass cmake_build_ext(build_ext):\n    def configure(self, ext: CMakeExtension) -> None:\n        subprocess.check_call(\n            [\"cmake\", ext.cmake_lists_dir, *build_tool, *cmake_args],\n            cwd=self.build_temp,\n        )\n        subprocess.check_output([\"cmake\", \"--version\"])\n        subprocess.check_call([\"cmake\", *build_args], cwd=self.build_temp)\n        subprocess.check_call((\"cmake\", \"--build\", \".\"))\n\next_modules.append(CMakeExtension(name=\"vllm._C\"))\next_modules.append(CMakeExtension(name=\"vllm.kernels\", cmake_lists_dir=\"csrc/kernels\"))\ndef CMakeFactory(self, x):\n    pass\nclass CMakeBuild(build_ext, Mixin):\n    pass\n";
        assert_eq!(
            configured("setup.py", text),
            [
                Configured {
                    dir: None,
                    why: "setup.py:8: cmake … … …".into(),
                    extension: false,
                },
                Configured {
                    dir: None,
                    why: "setup.py:12: cmake …".into(),
                    extension: false,
                },
                Configured {
                    dir: Some("csrc/kernels".into()),
                    why: "setup.py:16: CMakeExtension(\"csrc/kernels\")".into(),
                    extension: true,
                },
            ]
        );
    }

    #[test]
    fn a_keyword_first_and_a_triple_quoted_string_holding_quotes() {
        // The survivors of the first mutation run (written after it, not judged again).
        assert_eq!(
            dirs("CMakeExtension(sourcedir=\"k0\", name=\"z\")\n"),
            [Some("k0".into())]
        );
        assert_eq!(
            strs("x = \"\"\"a\"b\"c\"\"\"\n"),
            [(name("x"), 1), (Token::Punct('='), 1), (s("a\"b\"c"), 1)]
        );
    }

    #[test]
    fn every_source_keyword_and_command_string() {
        let text = "CMakeExtension('a', sourcedir='k1')\nx = CMakeExt('b', source_dir='k2')\nMyCMakeExtension('c', cmake_lists_dir='k3')\ncmakeext('d', cmake_source_dir='k4')\nCMAKE('e', src_dir='k5')\nCMakeExtension('f', other='no')\nCMakeExtension('g', 'k7', sourcedir='k6')\nos.system('cmake -B build k8')\nos.system('cmake is a build tool')\nos.system('cmake --build build -S')\nsubprocess.run(['cmake', '-S', 'k9', ])\nsubprocess.run(['cmake', '-B', 'b', name, 'k10'])\nsubprocess.run(['cmake', f'-S{src}'])\n";
        let found = configured("setup.py", text);
        let dirs: Vec<(Option<&str>, u32, bool)> = found
            .iter()
            .map(|c| {
                let line = c.why["setup.py:".len()..]
                    .split(':')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a line");
                (c.dir.as_deref(), line, c.extension)
            })
            .collect();
        assert_eq!(
            dirs,
            [
                (Some("k1"), 1, true),
                (Some("k2"), 2, true),
                (Some("k3"), 3, true),
                (Some("k4"), 4, true),
                (Some("k5"), 5, true),
                (Some("k6"), 7, true),
                (Some("k8"), 8, false),
                (Some("k9"), 11, false),
                (None, 12, false),
                (Some("{src}"), 13, false),
            ]
        );
        assert_eq!(found[6].why, "setup.py:8: cmake -B build k8");
        assert_eq!(found[8].why, "setup.py:12: cmake -B b … k10");
    }
}
