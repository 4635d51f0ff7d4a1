//! Running compiled matchers over a [`SourceTree`]. Recursion follows only the matcher's own
//! nesting (bounded when the signature is compiled); children, descendants and ancestors are
//! walked with loops, and every step is charged against a budget so that a large or deeply
//! nested file cannot make a rule run for minutes.
//!
//! Matching is three-valued ([`Tri`], Kleene logic): a node matches, does not, or the matcher
//! cannot tell (`Maybe`): a call whose arguments include a `*splat` before the position asked
//! for or a `**splat` that may carry the keyword, or a callee that is not a plain name. `not`
//! keeps `Maybe`; `all` is the weakest of its parts, `any` and the walks the strongest. A
//! condition whose best node is `Maybe` is undecidable, never absent.
//!
//! A call's name sees through local aliases: `from m import BlockInfo as BI`, `import m as x`
//! (then `x.BlockInfo`), and plain assignments `BI = BlockInfo` / `BI = m.BlockInfo` anywhere in
//! the file (followed up to [`MAX_ALIAS_HOPS`] times).

use super::compile::{Compiled, CompiledArg};
use super::tree::SourceTree;

/// Steps one condition may take on one file (a step is one node tested, or 64 bytes of text fed
/// to a regex). The rules in the database take well under 1% of this on real kernel sources.
pub(super) const STEP_BUDGET: u64 = 20_000_000;

/// How many alias assignments a callee name is followed through.
const MAX_ALIAS_HOPS: usize = 8;

/// A three-valued match result, ordered `No < Maybe < Yes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Tri {
    No,
    Maybe,
    Yes,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
            Tri::Yes => Tri::No,
        }
    }
}

impl From<bool> for Tri {
    fn from(b: bool) -> Tri {
        if b { Tri::Yes } else { Tri::No }
    }
}

/// What a search over a file found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// The first node (preorder) that matches.
    Match(usize),
    /// No node matches, but this one (the first) might: the matcher cannot tell.
    Maybe(usize),
    None,
}

/// The step budget ran out before the search finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exhausted;

/// One search over one file with its own budget.
pub(super) struct Search<'t> {
    tree: &'t SourceTree,
    steps_left: u64,
    /// Local names bound to another name (`BI` -> `BlockInfo`), built on first use.
    aliases: Option<Vec<(&'t str, &'t str)>>,
}

impl<'t> Search<'t> {
    pub(super) fn new(tree: &'t SourceTree, budget: u64) -> Self {
        Self {
            tree,
            steps_left: budget,
            aliases: None,
        }
    }

    /// The first node, in preorder (source order), that `matcher` matches; else the first it
    /// might match.
    pub(super) fn first_match(&mut self, matcher: &Compiled) -> Result<Found, Exhausted> {
        let mut maybe = None;
        for index in 0..self.tree.len() {
            match self.matches(matcher, index)? {
                Tri::Yes => return Ok(Found::Match(index)),
                Tri::Maybe => {
                    maybe.get_or_insert(index);
                }
                Tri::No => {}
            }
        }
        Ok(maybe.map_or(Found::None, Found::Maybe))
    }

    fn charge(&mut self, steps: u64) -> Result<(), Exhausted> {
        self.steps_left = self.steps_left.checked_sub(steps).ok_or(Exhausted)?;
        Ok(())
    }

    /// Whether every key given in `m` holds on node `index`. Cheap keys are tried first.
    fn matches(&mut self, m: &Compiled, index: usize) -> Result<Tri, Exhausted> {
        self.charge(1)?;
        let tree = self.tree;
        let node = tree.node(index);
        if m.kind.as_deref().is_some_and(|kind| node.kind != kind) {
            return Ok(Tri::No);
        }
        if m.field.is_some() && node.field != m.field.as_deref() {
            return Ok(Tri::No);
        }
        if m.text
            .as_deref()
            .is_some_and(|text| tree.text(index) != text)
        {
            return Ok(Tri::No);
        }
        let mut result = Tri::Yes;
        if let Some(name) = m.name.as_deref() {
            result = result.min(self.name_is(index, name)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(regex) = &m.regex {
            let text = tree.text(index);
            self.charge(text.len() as u64 / 64)?;
            if !regex.is_match(text) {
                return Ok(Tri::No);
            }
        }
        if let Some(arg) = &m.arg {
            result = result.min(self.arg_matches(arg, index)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(child) = &m.child {
            result = result.min(self.any_node(tree.children(index), child)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(has) = &m.has {
            result = result.min(self.any_node(tree.descendants(index), has)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(inside) = &m.inside {
            result = result.min(self.any_node(tree.ancestors(index), inside)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(not) = &m.not {
            result = result.min(self.matches(not, index)?.not());
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        for each in &m.all {
            result = result.min(self.matches(each, index)?);
            if result == Tri::No {
                return Ok(Tri::No);
            }
        }
        if let Some(any) = &m.any {
            let mut best = Tri::No;
            for each in any {
                best = best.max(self.matches(each, index)?);
                if best == Tri::Yes {
                    break;
                }
            }
            result = result.min(best);
        }
        Ok(result)
    }

    fn any_node(
        &mut self,
        nodes: impl Iterator<Item = usize>,
        m: &Compiled,
    ) -> Result<Tri, Exhausted> {
        let mut best = Tri::No;
        for index in nodes {
            best = best.max(self.matches(m, index)?);
            if best == Tri::Yes {
                break;
            }
        }
        Ok(best)
    }

    /// Whether node `index` is named `wanted`: its `name` field, or for a `call` its callee
    /// seen through local aliases. A callee that is neither a name nor an attribute (a
    /// subscript, a call's result) might be anything: `Maybe`.
    fn name_is(&mut self, index: usize, wanted: &str) -> Result<Tri, Exhausted> {
        let tree = self.tree;
        if tree.node(index).kind != "call" {
            return Ok((self.name(index) == Some(wanted)).into());
        }
        let Some(mut name) = self.name(index) else {
            return Ok(Tri::Maybe);
        };
        if self.aliases.is_none() {
            self.aliases = Some(self.collect_aliases()?);
        }
        let aliases = self.aliases.as_deref().unwrap_or(&[]);
        for _ in 0..=MAX_ALIAS_HOPS {
            if name == wanted {
                return Ok(Tri::Yes);
            }
            // Every binding of `name` is a candidate; follow the first that reaches `wanted`.
            let targets: Vec<&str> = aliases
                .iter()
                .filter(|(local, _)| *local == name)
                .map(|(_, target)| *target)
                .collect();
            if targets.contains(&wanted) {
                return Ok(Tri::Yes);
            }
            match targets.first() {
                Some(next) if *next != name => name = next,
                _ => break,
            }
        }
        Ok(Tri::No)
    }

    /// Local names bound to other names: `import a.b as x` (x -> b), `from m import y as z`
    /// (z -> y), `x = y` and `x = m.y` (x -> y).
    fn collect_aliases(&mut self) -> Result<Vec<(&'t str, &'t str)>, Exhausted> {
        let tree = self.tree;
        let mut out = Vec::new();
        let last_segment = |node: usize| -> Option<&'t str> {
            match tree.node(node).kind {
                "identifier" => Some(tree.text(node)),
                "attribute" => tree.child_by_field(node, "attribute").map(|a| tree.text(a)),
                "dotted_name" => tree.text(node).rsplit('.').next(),
                _ => None,
            }
        };
        for index in 0..tree.len() {
            self.charge(1)?;
            let (left, right) = match tree.node(index).kind {
                "aliased_import" => (
                    tree.child_by_field(index, "alias"),
                    tree.child_by_field(index, "name"),
                ),
                "assignment" => (
                    tree.child_by_field(index, "left"),
                    tree.child_by_field(index, "right"),
                ),
                _ => continue,
            };
            let (Some(left), Some(right)) = (left, right) else {
                continue;
            };
            if tree.node(left).kind != "identifier" {
                continue;
            }
            if let Some(target) = last_segment(right) {
                out.push((tree.text(left), target));
            }
        }
        Ok(out)
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
    fn arg_matches(&mut self, arg: &CompiledArg, index: usize) -> Result<Tri, Exhausted> {
        match self.argument(arg, index)? {
            Arg::Missing => Ok(Tri::No),
            Arg::Unknown => Ok(Tri::Maybe),
            Arg::Found(value) => match &arg.value {
                None => Ok(Tri::Yes),
                Some(m) => self.matches(m, value),
            },
        }
    }

    /// The value node of the call's argument at `arg.position` (counting positional arguments
    /// only) or, if there is none, of its keyword argument `arg.keyword`. When neither is
    /// there but a `*splat` at or before the position, or a `**splat`, could supply it, the
    /// answer is [`Arg::Unknown`].
    fn argument(&mut self, arg: &CompiledArg, call: usize) -> Result<Arg, Exhausted> {
        let tree = self.tree;
        if tree.node(call).kind != "call" {
            return Ok(Arg::Missing);
        }
        let Some(arguments) = tree.child_by_field(call, "arguments") else {
            return Ok(Arg::Missing);
        };
        if tree.node(arguments).kind == "generator_expression" {
            // `f(x for x in xs)`: the generator is the one positional argument.
            return Ok(if arg.position == Some(0) {
                Arg::Found(arguments)
            } else {
                Arg::Missing
            });
        }
        let mut positional = 0usize;
        let mut positions_known = true;
        let mut keyword_splat = false;
        let mut by_position = None;
        let mut by_keyword = None;
        for child in tree.children(arguments) {
            self.charge(1)?;
            match tree.node(child).kind {
                "comment" => {}
                "dictionary_splat" => keyword_splat = true,
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
        if let Some(found) = by_position.or(by_keyword) {
            return Ok(Arg::Found(found));
        }
        let splat_may_hold = (arg.position.is_some() && !positions_known)
            || (arg.keyword.is_some() && keyword_splat);
        Ok(if splat_may_hold {
            Arg::Unknown
        } else {
            Arg::Missing
        })
    }
}

/// Where a call's argument is.
enum Arg {
    Found(usize),
    Missing,
    /// A splat may or may not supply it.
    Unknown,
}
