//! The pattern to a tree, as Spencer's `reg` / `regbranch` / `regpiece` / `regatom` read it, with
//! the same errors.

use super::CompileError;

/// CMake 4 allows 31 groups (`NSUBEXP` is 32 with the whole match); `CMAKE_MATCH_<n>` holds 0 to 9.
pub(super) const MAX_GROUPS: usize = 31;

/// Patterns longer than this are not compiled: every search with one is unknown. (CMake 4.4
/// compiles far longer ones, 40,000 bytes and more; a pattern this long is far past anything a
/// build writes.)
pub(super) const MAX_PATTERN: usize = 16 * 1024;

#[derive(Debug, Clone)]
pub(super) enum Node {
    /// Matches the empty string (an empty alternative).
    Empty,
    /// `^`: only where the search's line begins.
    Bol,
    /// `$`: only at the end.
    Eol,
    /// A run of literal bytes.
    Literal(Vec<u8>),
    /// `.`, `[...]`, `[^...]`: one byte from the set.
    Set(Box<[bool; 256]>),
    Group(usize, Box<Node>),
    /// Alternatives, tried in order.
    Alt(Vec<Node>),
    Concat(Vec<Node>),
    Star(Box<Node>),
    Plus(Box<Node>),
    Optional(Box<Node>),
}

impl Node {
    /// Every alternative begins with `^`.
    pub(super) fn anchored(&self) -> bool {
        match self {
            Node::Bol => true,
            Node::Group(_, n) => n.anchored(),
            Node::Alt(alts) => !alts.is_empty() && alts.iter().all(Node::anchored),
            Node::Concat(items) => items.first().is_some_and(Node::anchored),
            Node::Plus(n) => n.anchored(),
            _ => false,
        }
    }

    /// One byte, matched by itself (repeated without recursion).
    pub(super) fn single_byte(&self) -> Option<[bool; 256]> {
        match self {
            Node::Set(s) => Some(**s),
            // (A repeated literal is one byte: the parser cuts a run before its `*+?`.)
            Node::Literal(b) => match b.as_slice() {
                [one] => {
                    let mut s = [false; 256];
                    s[usize::from(*one)] = true;
                    Some(s)
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Spencer's `META`: the bytes that end a literal run.
const META: &[u8] = b"^$.[()|?+*\\";

fn is_mult(b: Option<u8>) -> bool {
    matches!(b, Some(b'*' | b'+' | b'?'))
}

struct Parser<'p> {
    p: &'p [u8],
    at: usize,
    groups: usize,
}

pub(super) fn parse(pattern: &[u8]) -> Result<(Node, usize), CompileError> {
    let mut p = Parser {
        p: pattern,
        at: 0,
        groups: 0,
    };
    let (node, _) = p.reg(false)?;
    Ok((node, p.groups))
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.p.get(self.at).copied()
    }

    /// Alternatives up to `)` (in a group) or the end; with whether every one has width.
    fn reg(&mut self, paren: bool) -> Result<(Node, bool), CompileError> {
        let group = if paren {
            if self.groups >= MAX_GROUPS {
                return Err(CompileError("Too many parentheses."));
            }
            self.groups += 1;
            Some(self.groups)
        } else {
            None
        };
        let mut alts = Vec::new();
        let mut width = true;
        loop {
            let (branch, w) = self.branch()?;
            width &= w;
            alts.push(branch);
            if self.peek() == Some(b'|') {
                self.at += 1;
            } else {
                break;
            }
        }
        if paren {
            if self.peek() != Some(b')') {
                return Err(CompileError("Unmatched parentheses."));
            }
            self.at += 1;
        } else if self.peek().is_some() {
            return Err(if self.peek() == Some(b')') {
                CompileError("Unmatched parentheses.")
            } else {
                CompileError("Junk on end.")
            });
        }
        let node = if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(alts)
        };
        Ok(match group {
            Some(n) => (Node::Group(n, Box::new(node)), width),
            None => (node, width),
        })
    }

    /// Pieces up to `|`, `)` or the end; with whether any has width.
    fn branch(&mut self) -> Result<(Node, bool), CompileError> {
        let mut items = Vec::new();
        let mut width = false;
        while let Some(b) = self.peek() {
            if b == b'|' || b == b')' {
                break;
            }
            let (piece, w) = self.piece()?;
            width |= w;
            items.push(piece);
        }
        // An empty branch is an empty sequence: it matches the empty string.
        Ok((Node::Concat(items), width))
    }

    fn piece(&mut self) -> Result<(Node, bool), CompileError> {
        let (atom, width) = self.atom()?;
        let op = self.peek();
        if !is_mult(op) {
            return Ok((atom, width));
        }
        if !width && op != Some(b'?') {
            return Err(CompileError("*+ operand could be empty."));
        }
        self.at += 1;
        if is_mult(self.peek()) {
            return Err(CompileError("Nested *?+."));
        }
        Ok(match op {
            Some(b'*') => (Node::Star(Box::new(atom)), false),
            Some(b'+') => (Node::Plus(Box::new(atom)), true),
            _ => (Node::Optional(Box::new(atom)), false),
        })
    }

    fn atom(&mut self) -> Result<(Node, bool), CompileError> {
        let Some(b) = self.peek() else {
            return Err(CompileError("Internal error."));
        };
        self.at += 1;
        Ok(match b {
            b'^' => (Node::Bol, false),
            b'$' => (Node::Eol, false),
            b'.' => {
                // Any byte but NUL (a C string ends there).
                let mut s = [true; 256];
                s[0] = false;
                (Node::Set(Box::new(s)), true)
            }
            b'[' => (self.bracket()?, true),
            b'(' => self.reg(true)?,
            b'|' | b')' => return Err(CompileError("Internal error.")),
            b'?' | b'+' | b'*' => return Err(CompileError("?+* follows nothing.")),
            b'\\' => {
                let Some(next) = self.peek() else {
                    return Err(CompileError("Trailing backslash."));
                };
                self.at += 1;
                (Node::Literal(vec![next]), true)
            }
            _ => {
                let start = self.at - 1;
                let mut len = self.p[start..]
                    .iter()
                    .position(|c| META.contains(c))
                    .unwrap_or(self.p.len() - start);
                // Back off the last byte when a repetition follows it: `abc*` is `ab` `c*`.
                if len > 1 && is_mult(self.p.get(start + len).copied()) {
                    len -= 1;
                }
                self.at = start + len;
                (Node::Literal(self.p[start..start + len].to_vec()), true)
            }
        })
    }

    /// After `[`: the set up to `]`. `]` or `-` first is literal, `-` last is literal, and a
    /// range runs from the byte written before `-` (exclusive, it is in already) to the one
    /// after; a range more than one below empty is an error.
    fn bracket(&mut self) -> Result<Node, CompileError> {
        let mut set = [false; 256];
        let negate = self.peek() == Some(b'^');
        if negate {
            self.at += 1;
        }
        if let Some(b @ (b']' | b'-')) = self.peek() {
            set[usize::from(b)] = true;
            self.at += 1;
        }
        while let Some(b) = self.peek() {
            if b == b']' {
                break;
            }
            if b == b'-' {
                self.at += 1;
                match self.peek() {
                    None | Some(b']') => set[usize::from(b'-')] = true,
                    Some(end) => {
                        let from = usize::from(self.p[self.at - 2]) + 1;
                        let to = usize::from(end);
                        if from > to + 1 {
                            return Err(CompileError("Invalid range in []."));
                        }
                        if from <= to {
                            set[from..=to].iter_mut().for_each(|s| *s = true);
                        }
                        self.at += 1;
                    }
                }
            } else {
                set[usize::from(b)] = true;
                self.at += 1;
            }
        }
        if self.peek() != Some(b']') {
            return Err(CompileError("Unmatched []."));
        }
        self.at += 1;
        // The set is a C string: NUL is never in it, and never matched.
        set[0] = false;
        if negate {
            for (i, s) in set.iter_mut().enumerate() {
                *s = i != 0 && !*s;
            }
        }
        Ok(Node::Set(Box::new(set)))
    }
}
