//! Searching: Spencer's `regtry` at each start, leftmost first, by backtracking. Each node
//! takes the rest of the match as a continuation, so alternatives and repetitions retry the
//! rest exactly as Spencer's `regmatch` does.

use super::parse::Node;
use super::{OverBudget, Regex};

/// Steps (nodes tried) one search may take before it gives up.
const MAX_STEPS: usize = 1_000_000;
/// Nested nodes one match may hold before it gives up (the stack a match uses grows with the
/// nodes matched on its path).
const MAX_DEPTH: usize = 1_000;

/// The spans of a match: the whole match, then each group (`None` where it took no part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::pin::cmake) struct Captures {
    spans: Vec<Option<(usize, usize)>>,
}

impl Captures {
    /// Group `i`'s span (0: the whole match).
    pub(in crate::pin::cmake) fn span(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i).copied().flatten()
    }

    /// Group `i`'s text in the haystack searched ("" where it took no part).
    pub(in crate::pin::cmake) fn text<'h>(&self, i: usize, haystack: &'h str) -> &'h str {
        self.span(i)
            .and_then(|(a, b)| haystack.get(a..b))
            .unwrap_or("")
    }

    /// The number of spans, the whole match included.
    pub(in crate::pin::cmake) fn len(&self) -> usize {
        self.spans.len()
    }
}

type Spans = Vec<Option<(usize, usize)>>;
type Step = Result<bool, OverBudget>;
type Rest<'k, 'h> = dyn FnMut(&mut Matcher<'h>, usize, &mut Spans) -> Step + 'k;

struct Matcher<'h> {
    hay: &'h [u8],
    bol: usize,
    steps: usize,
    depth: usize,
}

pub(super) fn search(
    re: &Regex,
    hay: &[u8],
    at: usize,
    bol: usize,
) -> Result<Option<Captures>, OverBudget> {
    let mut m = Matcher {
        hay,
        bol,
        steps: 0,
        depth: 0,
    };
    // A pattern every alternative of which starts with `^` can match only at `bol`.
    let starts = if re.anchored {
        bol.max(at)..=bol
    } else {
        at..=hay.len()
    };
    for start in starts {
        let mut spans: Spans = vec![None; re.groups + 1];
        let mut end = None;
        let found = m.node(&re.root, start, &mut spans, &mut |_, p, _| {
            end = Some(p);
            Ok(true)
        })?;
        if let (true, Some(end)) = (found, end) {
            spans[0] = Some((start, end));
            // A span splitting a UTF-8 character has no text pinprobe can hold.
            let text = std::str::from_utf8(hay).ok();
            let whole = |(a, b): (usize, usize)| text.is_some_and(|t| t.get(a..b).is_some());
            if !spans.iter().flatten().all(|s| whole(*s)) {
                return Err(OverBudget);
            }
            return Ok(Some(Captures { spans }));
        }
    }
    Ok(None)
}

impl<'h> Matcher<'h> {
    fn node(&mut self, n: &Node, pos: usize, spans: &mut Spans, k: &mut Rest<'_, 'h>) -> Step {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.depth > MAX_DEPTH {
            return Err(OverBudget);
        }
        self.depth += 1;
        let r = self.node_inner(n, pos, spans, k);
        self.depth -= 1;
        r
    }

    fn node_inner(
        &mut self,
        n: &Node,
        pos: usize,
        spans: &mut Spans,
        k: &mut Rest<'_, 'h>,
    ) -> Step {
        match n {
            Node::Empty => k(self, pos, spans),
            Node::Bol => {
                if pos == self.bol {
                    k(self, pos, spans)
                } else {
                    Ok(false)
                }
            }
            Node::Eol => {
                if pos == self.hay.len() {
                    k(self, pos, spans)
                } else {
                    Ok(false)
                }
            }
            Node::Literal(lit) => {
                if self.hay.get(pos..).is_some_and(|h| h.starts_with(lit)) {
                    k(self, pos + lit.len(), spans)
                } else {
                    Ok(false)
                }
            }
            Node::Set(set) => match self.hay.get(pos) {
                Some(&b) if set[usize::from(b)] => k(self, pos + 1, spans),
                _ => Ok(false),
            },
            Node::Group(g, inner) => {
                let g = *g;
                self.node(inner, pos, spans, &mut |m, p, s| {
                    let old = s.get(g).copied().flatten();
                    if let Some(slot) = s.get_mut(g) {
                        *slot = Some((pos, p));
                    }
                    if k(m, p, s)? {
                        return Ok(true);
                    }
                    if let Some(slot) = s.get_mut(g) {
                        *slot = old;
                    }
                    Ok(false)
                })
            }
            Node::Alt(alts) => {
                for a in alts {
                    if self.node(a, pos, spans, k)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Node::Concat(items) => self.seq(items, pos, spans, k),
            Node::Star(inner) => self.repeat(inner, 0, pos, spans, k),
            Node::Plus(inner) => self.repeat(inner, 1, pos, spans, k),
            Node::Optional(inner) => {
                if self.node(inner, pos, spans, k)? {
                    return Ok(true);
                }
                k(self, pos, spans)
            }
        }
    }

    fn seq(&mut self, items: &[Node], pos: usize, spans: &mut Spans, k: &mut Rest<'_, 'h>) -> Step {
        match items.split_first() {
            None => k(self, pos, spans),
            Some((first, rest)) => {
                self.node(first, pos, spans, &mut |m, p, s| m.seq(rest, p, s, k))
            }
        }
    }

    /// `inner` at least `min` (0 or 1) times, greedily: the most repetitions first, then one
    /// fewer each time the rest fails.
    fn repeat(
        &mut self,
        inner: &Node,
        min: usize,
        pos: usize,
        spans: &mut Spans,
        k: &mut Rest<'_, 'h>,
    ) -> Step {
        if let Some(set) = inner.single_byte() {
            // Spencer's `regrepeat`: count, then back off one byte at a time.
            let n = self
                .hay
                .get(pos..)
                .unwrap_or_default()
                .iter()
                .take_while(|b| set[usize::from(**b)])
                .count();
            // Each try that fails went through `node` (which counts it): only the search's
            // own end, which never fails, does not.
            for i in (min..=n).rev() {
                if k(self, pos + i, spans)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if min == 1 {
            return self.node(inner, pos, spans, &mut |m, p, s| {
                m.repeat(inner, 0, p, s, k)
            });
        }
        // One more iteration (never an empty one), else the rest from here.
        let more = self.node(inner, pos, spans, &mut |m, p, s| {
            if p == pos {
                return Ok(false);
            }
            m.repeat(inner, 0, p, s, k)
        })?;
        if more {
            return Ok(true);
        }
        k(self, pos, spans)
    }
}
