//! CMake tokenizer: splits one file into command invocations, following the grammar of
//! `cmake-language(7)`.
//!
//! One pass, no recursion, no backtracking beyond a bracket's `=` count, so its time is linear in
//! the file size and its stack use is constant whatever the nesting depth. Parentheses nested
//! inside arguments become `(` and `)` arguments, exactly as CMake passes them to a command.
//!
//! Arguments keep their text as written (quotes and bracket delimiters removed, `\`-newline
//! continuations of quoted arguments removed); escapes and `${}` references are left for
//! `expand`, which knows the variables.

/// How an argument was written; decides whether escapes, `${}` and `;` splitting apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quoting {
    /// `abc`, `${X}/y`: escapes and references evaluated, then split on `;`.
    Unquoted,
    /// `"a b"`: escapes and references evaluated, never split.
    Quoted,
    /// `[[a b]]`, `[=[a]=]`: taken literally.
    Bracket,
}

/// One argument of a command invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub text: String,
    pub quoting: Quoting,
    /// 1-based line where the argument starts.
    pub line: u32,
}

/// `name(args)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invocation {
    /// The command name as written (CMake compares it case-insensitively).
    pub name: String,
    /// 1-based line of the command name.
    pub line: u32,
    pub args: Vec<Token>,
}

/// A syntax error: what went wrong and the 1-based line where the construct started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LexError {
    pub line: u32,
    pub message: String,
}

/// The most commands plus arguments one file may hold (vLLM's files hold a few thousand). A
/// token costs several times its text, so this bounds memory where the file-size cap alone
/// would not (a million `(` are a million arguments).
pub(super) const MAX_TOKENS: usize = 1_000_000;

/// Tokenize a whole file.
pub(super) fn tokenize(src: &str) -> Result<Vec<Invocation>, LexError> {
    let mut cur = Cursor {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        tokens: 0,
    };
    let mut out = Vec::new();
    loop {
        // Between commands: blanks, newlines and comments.
        match cur.peek() {
            None => return Ok(out),
            Some(b' ' | b'\t' | b'\r' | b'\n') => cur.bump(),
            Some(b'#') => cur.comment()?,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => out.push(cur.invocation()?),
            Some(_) => {
                return Err(LexError {
                    line: cur.line,
                    message: "expected a command name".into(),
                });
            }
        }
    }
}

struct Cursor<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    /// Commands and arguments tokenized so far (see [`MAX_TOKENS`]).
    tokens: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// Advance one byte, counting lines. Multi-byte UTF-8 characters are skipped byte by byte;
    /// every boundary the lexer cuts at is an ASCII byte, so slices stay on char boundaries.
    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line = self.line.saturating_add(1);
        }
        self.pos += 1;
    }

    fn slice(&self, from: usize, to: usize) -> &str {
        self.src.get(from..to).unwrap_or("")
    }

    /// `name` `space*` `(` arguments `)`.
    fn invocation(&mut self) -> Result<Invocation, LexError> {
        let line = self.line;
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.bump();
        }
        let name = self.slice(start, self.pos).to_string();
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.bump();
        }
        if self.peek() != Some(b'(') {
            return Err(LexError {
                line: self.line,
                message: format!("expected `(` after command name `{name}`"),
            });
        }
        self.bump();
        let mut args = Vec::new();
        let mut depth: usize = 1;
        self.tokens += 1;
        loop {
            if self.tokens + args.len() > MAX_TOKENS {
                return Err(LexError {
                    line: self.line,
                    message: format!(
                        "more than {MAX_TOKENS} commands and arguments in one file (not a build file pinprobe reads)"
                    ),
                });
            }
            match self.peek() {
                None => {
                    return Err(LexError {
                        line,
                        message: format!("unterminated `{name}(`: missing `)`"),
                    });
                }
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.bump(),
                Some(b'#') => self.comment()?,
                Some(b'(') => {
                    args.push(self.paren("("));
                    depth += 1;
                }
                Some(b')') => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        self.tokens += args.len();
                        return Ok(Invocation { name, line, args });
                    }
                    args.push(self.paren(")"));
                }
                Some(b'"') => args.push(self.quoted()?),
                Some(b'[') if self.bracket_open().is_some() => args.push(self.bracket()?),
                Some(_) => args.push(self.unquoted()?),
            }
        }
    }

    fn paren(&mut self, text: &str) -> Token {
        let token = Token {
            text: text.into(),
            quoting: Quoting::Unquoted,
            line: self.line,
        };
        self.bump();
        token
    }

    /// `#` line comment or `#[[ ]]` bracket comment; the cursor is on `#`.
    fn comment(&mut self) -> Result<(), LexError> {
        self.bump();
        if self.peek() == Some(b'[') && self.bracket_open().is_some() {
            self.bracket().map(|_| ())
        } else {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.bump();
            }
            Ok(())
        }
    }

    /// At `[`: the number of `=` when a bracket opens here (`[==[`), else `None`.
    fn bracket_open(&self) -> Option<usize> {
        let mut n = 1;
        while self.peek_at(n) == Some(b'=') {
            n += 1;
        }
        (self.peek_at(n) == Some(b'[')).then_some(n - 1)
    }

    /// `[=*[ ... ]=*]`; the cursor is on the first `[`.
    fn bracket(&mut self) -> Result<Token, LexError> {
        let line = self.line;
        let equals = self.bracket_open().unwrap_or(0);
        for _ in 0..equals + 2 {
            self.bump();
        }
        // A newline right after the opening bracket is not part of the content.
        if self.peek() == Some(b'\r') && self.peek_at(1) == Some(b'\n') {
            self.bump();
        }
        if self.peek() == Some(b'\n') {
            self.bump();
        }
        let close = format!("]{}]", "=".repeat(equals));
        let start = self.pos;
        let Some(found) = self.src.get(start..).and_then(|rest| rest.find(&close)) else {
            return Err(LexError {
                line,
                message: format!("unterminated bracket `[{}[`", "=".repeat(equals)),
            });
        };
        while self.pos < start + found {
            self.bump();
        }
        let text = self.slice(start, self.pos).to_string();
        for _ in 0..close.len() {
            self.bump();
        }
        Ok(Token {
            text,
            quoting: Quoting::Bracket,
            line,
        })
    }

    /// `"..."`; the cursor is on the opening quote.
    fn quoted(&mut self) -> Result<Token, LexError> {
        let line = self.line;
        self.bump();
        let mut text = String::new();
        let mut run = self.pos;
        loop {
            match self.peek() {
                None => {
                    return Err(LexError {
                        line,
                        message: "unterminated quoted argument".into(),
                    });
                }
                Some(b'"') => {
                    text.push_str(self.slice(run, self.pos));
                    self.bump();
                    return Ok(Token {
                        text,
                        quoting: Quoting::Quoted,
                        line,
                    });
                }
                Some(b'\\') => {
                    let cont = match (self.peek_at(1), self.peek_at(2)) {
                        (Some(b'\n'), _) => Some(2),
                        (Some(b'\r'), Some(b'\n')) => Some(3),
                        _ => None,
                    };
                    if let Some(len) = cont {
                        // Line continuation: dropped from the value.
                        text.push_str(self.slice(run, self.pos));
                        for _ in 0..len {
                            self.bump();
                        }
                        run = self.pos;
                    } else {
                        self.bump();
                        if self.peek().is_some() {
                            self.bump();
                        }
                    }
                }
                Some(b'\r') if self.peek_at(1) == Some(b'\n') => {
                    // CRLF inside a quoted argument reads as LF, as CMake does.
                    text.push_str(self.slice(run, self.pos));
                    self.bump();
                    run = self.pos;
                }
                Some(_) => self.bump(),
            }
        }
    }

    /// An unquoted argument, including CMake's legacy forms with embedded `"..."`.
    fn unquoted(&mut self) -> Result<Token, LexError> {
        let line = self.line;
        let start = self.pos;
        loop {
            match self.peek() {
                None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b'#') => break,
                Some(b'\\') => {
                    self.bump();
                    if self.peek().is_some() {
                        self.bump();
                    }
                }
                Some(b'"') => {
                    // Legacy `-Da="b c"`: the quotes stay in the text.
                    let quote_line = self.line;
                    self.bump();
                    loop {
                        match self.peek() {
                            None => {
                                return Err(LexError {
                                    line: quote_line,
                                    message: "unterminated quoted argument".into(),
                                });
                            }
                            Some(b'"') => {
                                self.bump();
                                break;
                            }
                            Some(b'\\') => {
                                self.bump();
                                if self.peek().is_some() {
                                    self.bump();
                                }
                            }
                            Some(_) => self.bump(),
                        }
                    }
                }
                Some(_) => self.bump(),
            }
        }
        Ok(Token {
            text: self.slice(start, self.pos).to_string(),
            quoting: Quoting::Unquoted,
            line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<(String, Vec<String>)> {
        tokenize(src)
            .unwrap_or_default()
            .into_iter()
            .map(|i| (i.name, i.args.into_iter().map(|t| t.text).collect()))
            .collect()
    }

    #[test]
    fn arguments_of_every_kind() {
        let src = "foo(a \"b c\" [[d\ne]] [=[f]]g]=] # c\n h#[[x]]i)\n";
        let got = texts(src);
        assert_eq!(
            got,
            vec![(
                "foo".to_string(),
                vec!["a", "b c", "d\ne", "f]]g", "h", "i"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )]
        );
    }

    #[test]
    fn lines_are_counted_through_every_construct() {
        let src = "a(\"x\ny\" [[\n\n]]\nz)\n#[[\n]]\nb(\r\nq)";
        let invs = tokenize(src).unwrap_or_default();
        let lines: Vec<(u32, Vec<u32>)> = invs
            .iter()
            .map(|i| (i.line, i.args.iter().map(|t| t.line).collect()))
            .collect();
        assert_eq!(lines, vec![(1, vec![1, 2, 5]), (8, vec![9])]);
    }

    #[test]
    fn nested_parentheses_are_arguments() {
        assert_eq!(
            texts("if((A) OR B)"),
            vec![(
                "if".to_string(),
                ["(", "A", ")", "OR", "B"]
                    .into_iter()
                    .map(String::from)
                    .collect::<Vec<_>>()
            )]
        );
    }

    #[test]
    fn continuation_and_crlf_in_quotes() {
        assert_eq!(
            texts("s(\"a\\\r\nb\r\nc\" \"d\\\"e\")"),
            vec![(
                "s".to_string(),
                vec!["ab\nc".to_string(), "d\\\"e".to_string()]
            )]
        );
    }

    #[test]
    fn errors_name_the_starting_line() {
        let err = |s: &str| tokenize(s).err().map(|e| e.line);
        assert_eq!(err("\nfoo(a\n\nb"), Some(2));
        assert_eq!(err("foo(a\n\"b\n\n"), Some(2));
        assert_eq!(err("foo(\n\n[==[ x ]=]"), Some(3));
        assert_eq!(err("#[[ never closed\n"), Some(1));
        assert_eq!(err("foo\nbar()"), Some(1));
        assert_eq!(err(")"), Some(1));
    }

    /// A command name starts with a letter or `_` (CMake: "Expected a command name").
    #[test]
    fn a_command_name_starts_with_a_letter_or_underscore() {
        assert_eq!(texts("_f()"), vec![("_f".to_string(), Vec::new())]);
        for bad in ["1x()", "@()", "-f()"] {
            let err = tokenize(bad).err().map(|e| e.message);
            assert_eq!(err.as_deref(), Some("expected a command name"), "{bad}");
        }
    }

    /// A lone `\r` is content, in quotes and in brackets alike (CMake keeps it: `"a\rb"` is
    /// three bytes); only `\r\n` reads as a newline.
    #[test]
    fn a_lone_carriage_return_is_content() {
        assert_eq!(
            texts("s(\"a\rb\" [[\rx]])"),
            vec![("s".to_string(), vec!["a\rb".to_string(), "\rx".to_string()])]
        );
    }

    /// `[` that opens no bracket is part of an unquoted argument; `# [[` is a line comment
    /// (a bracket comment opens right after the `#`), so the next line is a command.
    #[test]
    fn a_bracket_only_right_after_its_opening() {
        assert_eq!(
            texts("set(V [a])\n# [[\nset(W line)\n# ]]\n"),
            vec![
                ("set".to_string(), vec!["V".to_string(), "[a]".to_string()]),
                ("set".to_string(), vec!["W".to_string(), "line".to_string()]),
            ]
        );
    }

    /// A file holds at most [`MAX_TOKENS`] commands and arguments: one command with one
    /// argument fewer than that fits exactly, one more does not.
    #[test]
    fn the_token_bound_is_exact() {
        let file = |args: usize| format!("f({})", "a ".repeat(args));
        let fits = tokenize(&file(MAX_TOKENS - 1)).map(|i| i.len());
        assert_eq!(fits, Ok(1));
        let over = tokenize(&file(MAX_TOKENS)).err().map(|e| e.message);
        assert!(
            over.as_deref().is_some_and(|m| m.starts_with("more than")),
            "{over:?}"
        );
    }
}
