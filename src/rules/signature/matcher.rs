//! Running compiled matchers over a [`SourceTree`]. Recursion follows only the matcher's own
//! nesting (bounded when the signature is compiled); children, descendants and ancestors are
//! walked with loops, and every step is charged against a budget so that a large or deeply
//! nested file cannot make a rule run for minutes.

use super::compile::{Compiled, CompiledArg};
use super::tree::SourceTree;

/// Steps one condition may take on one file (a step is one node tested, or 64 bytes of text fed
/// to a regex). The rules in the database take well under 1% of this on real kernel sources.
pub(super) const STEP_BUDGET: u64 = 20_000_000;

/// The step budget ran out before the search finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exhausted;

/// One search over one file with its own budget.
pub(super) struct Search<'t> {
    tree: &'t SourceTree,
    steps_left: u64,
}

impl<'t> Search<'t> {
    pub(super) fn new(tree: &'t SourceTree, budget: u64) -> Self {
        Self {
            tree,
            steps_left: budget,
        }
    }

    /// The first node, in preorder (source order), that `matcher` matches.
    pub(super) fn first_match(&mut self, matcher: &Compiled) -> Result<Option<usize>, Exhausted> {
        for index in 0..self.tree.len() {
            if self.matches(matcher, index)? {
                return Ok(Some(index));
            }
        }
        Ok(None)
    }

    fn charge(&mut self, steps: u64) -> Result<(), Exhausted> {
        self.steps_left = self.steps_left.checked_sub(steps).ok_or(Exhausted)?;
        Ok(())
    }

    /// Whether every key given in `m` holds on node `index`. Cheap keys are tried first.
    fn matches(&mut self, m: &Compiled, index: usize) -> Result<bool, Exhausted> {
        self.charge(1)?;
        let tree = self.tree;
        let node = tree.node(index);
        if m.kind.as_deref().is_some_and(|kind| node.kind != kind) {
            return Ok(false);
        }
        if m.field.is_some() && node.field != m.field.as_deref() {
            return Ok(false);
        }
        if m.text
            .as_deref()
            .is_some_and(|text| tree.text(index) != text)
        {
            return Ok(false);
        }
        if m.name.is_some() && self.name(index) != m.name.as_deref() {
            return Ok(false);
        }
        if let Some(regex) = &m.regex {
            let text = tree.text(index);
            self.charge(text.len() as u64 / 64)?;
            if !regex.is_match(text) {
                return Ok(false);
            }
        }
        if let Some(arg) = &m.arg
            && !self.arg_matches(arg, index)?
        {
            return Ok(false);
        }
        if let Some(child) = &m.child
            && !self.any_node(tree.children(index), child)?
        {
            return Ok(false);
        }
        if let Some(has) = &m.has
            && !self.any_node(tree.descendants(index), has)?
        {
            return Ok(false);
        }
        if let Some(inside) = &m.inside
            && !self.any_node(tree.ancestors(index), inside)?
        {
            return Ok(false);
        }
        if let Some(not) = &m.not
            && self.matches(not, index)?
        {
            return Ok(false);
        }
        for each in &m.all {
            if !self.matches(each, index)? {
                return Ok(false);
            }
        }
        if let Some(any) = &m.any {
            let mut one = false;
            for each in any {
                if self.matches(each, index)? {
                    one = true;
                    break;
                }
            }
            if !one {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn any_node(
        &mut self,
        nodes: impl Iterator<Item = usize>,
        m: &Compiled,
    ) -> Result<bool, Exhausted> {
        for index in nodes {
            if self.matches(m, index)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A node's name: for a `call` the callee (an identifier, or the last segment of an
    /// attribute such as `block_info.BlockInfo`), otherwise the text of its `name` field.
    fn name(&self, index: usize) -> Option<&'t str> {
        let tree = self.tree;
        if tree.node(index).kind == "call" {
            let callee = tree.child_by_field(index, "function")?;
            return match tree.node(callee).kind {
                "identifier" => Some(tree.text(callee)),
                "attribute" => tree
                    .child_by_field(callee, "attribute")
                    .map(|a| tree.text(a)),
                _ => None,
            };
        }
        tree.child_by_field(index, "name").map(|n| tree.text(n))
    }

    /// `arg`: the node is a call, the argument exists, and its value matches (if asked).
    fn arg_matches(&mut self, arg: &CompiledArg, index: usize) -> Result<bool, Exhausted> {
        let Some(value) = self.argument(arg, index)? else {
            return Ok(false);
        };
        match &arg.value {
            None => Ok(true),
            Some(m) => self.matches(m, value),
        }
    }

    /// The value node of the call's argument at `arg.position` (counting positional arguments
    /// only) or, if there is none, of its keyword argument `arg.keyword`. Positions after a
    /// `*splat` are unknowable and never match.
    fn argument(&mut self, arg: &CompiledArg, call: usize) -> Result<Option<usize>, Exhausted> {
        let tree = self.tree;
        if tree.node(call).kind != "call" {
            return Ok(None);
        }
        let Some(arguments) = tree.child_by_field(call, "arguments") else {
            return Ok(None);
        };
        if tree.node(arguments).kind == "generator_expression" {
            // `f(x for x in xs)`: the generator is the one positional argument.
            return Ok((arg.position == Some(0)).then_some(arguments));
        }
        let mut positional = 0usize;
        let mut positions_known = true;
        let mut by_position = None;
        let mut by_keyword = None;
        for child in tree.children(arguments) {
            self.charge(1)?;
            match tree.node(child).kind {
                "comment" | "dictionary_splat" => {}
                "list_splat" => positions_known = false,
                "keyword_argument" => {
                    if by_keyword.is_none()
                        && let Some(keyword) = arg.keyword.as_deref()
                        && tree
                            .child_by_field(child, "name")
                            .is_some_and(|name| tree.text(name) == keyword)
                    {
                        by_keyword = tree.child_by_field(child, "value");
                    }
                }
                _ => {
                    if positions_known && by_position.is_none() && arg.position == Some(positional)
                    {
                        by_position = Some(child);
                    }
                    positional += 1;
                }
            }
        }
        Ok(by_position.or(by_keyword))
    }
}
