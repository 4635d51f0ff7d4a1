//! Python source parsed once with tree-sitter and flattened into a preorder array of its named
//! nodes, so matchers can walk children, descendants and ancestors with loops and O(1) parent
//! links instead of recursion over the tree (a hostile file cannot blow the stack).

use std::ops::Range;

/// Files larger than this are not parsed: kernel sources are a few hundred KiB at most.
pub(super) const MAX_FILE_BYTES: usize = 4 << 20;

/// One named node of the parse tree.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub kind: &'static str,
    /// The field of the parent this node sits in (`name`, `arguments`, ...).
    pub field: Option<&'static str>,
    /// Index of the nearest named ancestor; `None` for the root.
    pub parent: Option<u32>,
    /// One past the index of this node's last descendant (descendants are `index + 1..end`).
    pub end: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    /// 1-based line the node starts on.
    pub line: u32,
}

/// A parsed file that has no syntax errors.
#[derive(Debug)]
pub(super) struct SourceTree {
    text: String,
    nodes: Vec<Node>,
}

/// Why a file could not be turned into a [`SourceTree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ParseFailure {
    TooLarge {
        bytes: usize,
    },
    /// The tree has an `ERROR` or `MISSING` node; `line` is the first one's 1-based line.
    Syntax {
        line: u32,
    },
    /// tree-sitter refused the grammar or gave no tree.
    Parser(String),
}

impl std::fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge { bytes } => write!(
                f,
                "is {bytes} bytes, over the {MAX_FILE_BYTES}-byte limit for parsing"
            ),
            Self::Syntax { line } => {
                write!(
                    f,
                    "does not parse as Python (first syntax error at line {line})"
                )
            }
            Self::Parser(message) => write!(f, "could not be parsed: {message}"),
        }
    }
}

/// The tree-sitter grammar every signature is checked and evaluated against.
pub(super) fn python() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

impl SourceTree {
    /// Parse `text` as Python. A tree with any syntax error is refused: a matcher run on a
    /// recovered tree could miss what it looks for and report the bug absent.
    pub(super) fn parse(text: String) -> Result<Self, ParseFailure> {
        if text.len() > MAX_FILE_BYTES {
            return Err(ParseFailure::TooLarge { bytes: text.len() });
        }
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&python())
            .map_err(|e| ParseFailure::Parser(e.to_string()))?;
        let tree = parser
            .parse(&text, None)
            .ok_or_else(|| ParseFailure::Parser("tree-sitter returned no tree".into()))?;
        if tree.root_node().has_error() {
            return Err(ParseFailure::Syntax {
                line: first_error_line(&tree),
            });
        }
        let nodes = flatten(&tree);
        Ok(Self { text, nodes })
    }

    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(super) fn node(&self, index: usize) -> &Node {
        &self.nodes[index]
    }

    /// The source text a node spans (empty if its byte range is not valid UTF-8 boundaries,
    /// which tree-sitter does not produce for UTF-8 input).
    pub(super) fn text(&self, index: usize) -> &str {
        let node = &self.nodes[index];
        self.text
            .get(node.start_byte as usize..node.end_byte as usize)
            .unwrap_or("")
    }

    /// Indices of all named descendants, in preorder.
    pub(super) fn descendants(&self, index: usize) -> Range<usize> {
        index + 1..self.nodes[index].end as usize
    }

    /// Indices of the named children, in source order.
    pub(super) fn children(&self, index: usize) -> Children<'_> {
        Children {
            tree: self,
            next: index + 1,
            end: self.nodes[index].end as usize,
        }
    }

    /// The first named child that sits in `field`.
    pub(super) fn child_by_field(&self, index: usize, field: &str) -> Option<usize> {
        self.children(index)
            .find(|&child| self.nodes[child].field == Some(field))
    }

    /// Indices of the named ancestors, nearest first.
    pub(super) fn ancestors(&self, index: usize) -> Ancestors<'_> {
        Ancestors {
            tree: self,
            next: self.nodes[index].parent,
        }
    }
}

pub(super) struct Children<'a> {
    tree: &'a SourceTree,
    next: usize,
    end: usize,
}

impl Iterator for Children<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.next >= self.end {
            return None;
        }
        let current = self.next;
        // Skip the child's own subtree to land on its next sibling.
        self.next = self.tree.nodes[current].end as usize;
        Some(current)
    }
}

pub(super) struct Ancestors<'a> {
    tree: &'a SourceTree,
    next: Option<u32>,
}

impl Iterator for Ancestors<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let current = self.next? as usize;
        self.next = self.tree.nodes[current].parent;
        Some(current)
    }
}

/// Walk the whole tree with one cursor and record the named nodes in preorder.
fn flatten(tree: &tree_sitter::Tree) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    // Named ancestors of the cursor's position, and for each cursor depth whether that level
    // pushed onto `named`.
    let mut named: Vec<u32> = Vec::new();
    let mut pushed: Vec<bool> = Vec::new();
    let mut cursor = tree.walk();
    'visit: loop {
        let node = cursor.node();
        if node.is_named() {
            let index = to_u32(nodes.len());
            nodes.push(Node {
                kind: node.kind(),
                field: cursor.field_name(),
                parent: named.last().copied(),
                end: index,
                start_byte: to_u32(node.start_byte()),
                end_byte: to_u32(node.end_byte()),
                line: to_u32(node.start_position().row.saturating_add(1)),
            });
            named.push(index);
            pushed.push(true);
        } else {
            pushed.push(false);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if pushed.pop() == Some(true)
                && let Some(index) = named.pop()
            {
                let end = to_u32(nodes.len());
                nodes[index as usize].end = end;
            }
            if cursor.goto_next_sibling() {
                continue 'visit;
            }
            if !cursor.goto_parent() {
                break 'visit;
            }
        }
    }
    nodes
}

/// The 1-based line of the first `ERROR` or `MISSING` node in preorder, descending only into
/// subtrees that contain an error.
fn first_error_line(tree: &tree_sitter::Tree) -> u32 {
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return to_u32(node.start_position().row.saturating_add(1));
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                // has_error() was set but no node says so: report the root's line.
                return 1;
            }
        }
    }
}

/// Offsets and counts fit: files over [`MAX_FILE_BYTES`] are refused before parsing.
fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}
