//! Values of the evaluator: a string plus the unknown inputs it depends on, and the expansion of
//! one written argument (`${}`, `$ENV{}`, `$CACHE{}`, escapes, `;` splitting) into them.
//!
//! A value with no inputs is exact. A value with inputs is what the *default configuration*
//! (no `-D`, empty environment) gives when every input is a cache or environment variable, and
//! may be anything otherwise.

use super::lexer::{Quoting, Token};
use std::collections::BTreeSet;

/// Longest value kept; a longer one stops the evaluation (over budget).
pub(super) const MAX_VALUE: usize = 1 << 20;

/// Something the evaluation cannot know.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Input {
    /// A cache variable the user may pass with `-D` (default: unset, or the `set(CACHE)` /
    /// `option()` default).
    Cache(String),
    /// An environment variable (default: unset).
    Env(String),
    /// Something with no default pinprobe can name: the compiler, `find_package`, a command's
    /// output, the build directory.
    Opaque(String),
    /// A value that differs between the sides of this condition (which depends on an input);
    /// the text is the default side's.
    Join(String),
}

impl Input {
    /// Whether the default configuration fixes it (cache and environment variables do).
    pub fn has_default(&self) -> bool {
        !matches!(self, Input::Opaque(_))
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Cache(n) => write!(f, "-D{n}"),
            Input::Env(n) => write!(f, "$ENV{{{n}}}"),
            Input::Opaque(n) => write!(f, "{n}"),
            Input::Join(n) => write!(f, "the outcome of {n}"),
        }
    }
}

/// The inputs a value depends on: a set shared until changed (values are cloned at every
/// read, join and call; their inputs seldom change), with no allocation while empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Taint(Option<std::rc::Rc<BTreeSet<Input>>>);

impl Taint {
    pub fn new() -> Taint {
        Taint(None)
    }

    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|s| s.is_empty())
    }

    pub fn iter(&self) -> std::collections::btree_set::Iter<'_, Input> {
        static EMPTY: BTreeSet<Input> = BTreeSet::new();
        match &self.0 {
            Some(s) => s.iter(),
            None => EMPTY.iter(),
        }
    }

    /// Add every input of `other` (sharing its set when this one is empty).
    pub fn absorb(&mut self, other: &Taint) {
        if self.is_empty() {
            self.0.clone_from(&other.0);
        } else if !other.is_empty() && self.0 != other.0 {
            self.extend(other.iter().cloned());
        }
    }

    /// Add an input; one already there changes (and copies) nothing.
    pub fn insert(&mut self, i: Input) -> bool {
        if self.0.as_ref().is_some_and(|s| s.contains(&i)) {
            return false;
        }
        std::rc::Rc::make_mut(self.0.get_or_insert_with(Default::default)).insert(i)
    }
}

impl Extend<Input> for Taint {
    fn extend<T: IntoIterator<Item = Input>>(&mut self, iter: T) {
        for i in iter {
            self.insert(i);
        }
    }
}

impl FromIterator<Input> for Taint {
    fn from_iter<T: IntoIterator<Item = Input>>(iter: T) -> Self {
        let set: BTreeSet<Input> = iter.into_iter().collect();
        if set.is_empty() {
            Taint(None)
        } else {
            Taint(Some(std::rc::Rc::new(set)))
        }
    }
}

impl IntoIterator for Taint {
    type Item = Input;
    type IntoIter = std::collections::btree_set::IntoIter<Input>;
    fn into_iter(self) -> Self::IntoIter {
        self.0
            .map(std::rc::Rc::unwrap_or_clone)
            .unwrap_or_default()
            .into_iter()
    }
}

impl<'a> IntoIterator for &'a Taint {
    type Item = &'a Input;
    type IntoIter = std::collections::btree_set::Iter<'a, Input>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Literal values a joined value keeps at most; past it the value is any value.
const MAX_ALTERNATIVES: usize = 64;

/// The outcome of one joined condition that selects an alternative.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Outcome {
    /// Which join (numbered per run): one evaluation of a condition has one outcome, so two
    /// alternatives that need different outcomes of the same join never combine.
    pub join: u32,
    pub outcome: bool,
    /// Whether this is the outcome with every input at its default (the side run first).
    pub default_side: bool,
    /// `file:line: if(...)` as written.
    pub what: String,
}

/// One literal value a joined value can take, and the join outcomes that select it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Alt {
    pub text: String,
    pub when: Vec<Outcome>,
}

/// A value's known alternatives ([`Val::alts`]): shared until changed, no allocation while
/// empty (most values have none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Alts(Option<std::rc::Rc<Vec<Alt>>>);

impl Alts {
    pub const fn new() -> Alts {
        Alts(None)
    }

    /// The list to change in place (copied first when another value holds it).
    #[cfg(test)]
    pub fn make_mut(&mut self) -> &mut Vec<Alt> {
        std::rc::Rc::make_mut(self.0.get_or_insert_with(Default::default))
    }
}

impl std::ops::Deref for Alts {
    type Target = [Alt];
    fn deref(&self) -> &[Alt] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl From<Vec<Alt>> for Alts {
    fn from(v: Vec<Alt>) -> Alts {
        if v.is_empty() {
            Alts(None)
        } else {
            Alts(Some(std::rc::Rc::new(v)))
        }
    }
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Val {
    pub text: String,
    pub taint: Taint,
    /// When the inputs are only joined conditions whose every side gave a known value: every
    /// literal value it can take (see [`Val::finite`]). Empty: unknown inputs can make it any
    /// value.
    pub alts: Alts,
}

impl Val {
    pub fn exact(text: impl Into<String>) -> Val {
        Val {
            text: text.into(),
            ..Val::default()
        }
    }

    pub fn with(text: impl Into<String>, input: Input) -> Val {
        Val {
            text: text.into(),
            taint: [input].into_iter().collect(),
            alts: Alts::new(),
        }
    }

    /// Every value it can take, each with the join outcomes that select it: itself when exact;
    /// its alternatives when every input is a joined condition and they hold its own text (a
    /// value whose text or inputs changed after the join lost them); `None`: any value.
    pub fn finite(&self) -> Option<Vec<Alt>> {
        if self.taint.is_empty() {
            return Some(vec![Alt {
                text: self.text.clone(),
                when: Vec::new(),
            }]);
        }
        let only_joins = self.taint.iter().all(|i| matches!(i, Input::Join(_)));
        let holds_own = self.alts.iter().any(|a| a.text == self.text);
        (only_joins && holds_own).then(|| self.alts.to_vec())
    }

    /// The value of a variable that differs between the two sides of a joined condition: this
    /// (the default side's, text kept) or `other`; both known: a finite set of the two sides'
    /// values, each with the outcome that selects it.
    pub fn merge(&mut self, other: Option<&Val>, mark: &Input, mine: &Outcome, theirs: &Outcome) {
        let combined = match (self.finite(), other.and_then(Val::finite)) {
            (Some(a), Some(b)) => {
                let mut out: Vec<Alt> = Vec::new();
                let sides = a
                    .into_iter()
                    .filter_map(|x| x.and(mine))
                    .chain(b.into_iter().filter_map(|x| x.and(theirs)));
                for alt in sides {
                    if !out.contains(&alt) {
                        out.push(alt);
                    }
                }
                Some(out).filter(|o| o.len() <= MAX_ALTERNATIVES)
            }
            _ => None,
        };
        self.taint.insert(mark.clone());
        if let Some(o) = other {
            // Whatever the other side depends on, the merged value does too.
            self.taint.extend(o.taint.iter().cloned());
        }
        self.alts = combined.unwrap_or_default().into();
    }

    /// Elements joined with `;` (a `set()` of several arguments, `ARGV`): known alternatives
    /// combine (the ones needing different outcomes of one join never do).
    pub fn joined<'a>(parts: impl IntoIterator<Item = &'a Val>, sep: &str) -> Val {
        let parts: Vec<&Val> = parts.into_iter().collect();
        let text = parts
            .iter()
            .map(|v| v.text.as_str())
            .collect::<Vec<_>>()
            .join(sep);
        let taint: Taint = parts.iter().flat_map(|v| v.taint.iter().cloned()).collect();
        if taint.is_empty() {
            return Val::exact(text);
        }
        let mut pieces: Vec<Piece> = Vec::new();
        for (i, v) in parts.iter().enumerate() {
            if i > 0 {
                pieces.push(Piece::Text(sep.to_string()));
            }
            pieces.push(Piece::Value((*v).clone()));
        }
        let alts = combine(&pieces).unwrap_or_default().into();
        Val { text, taint, alts }
    }
}

impl Alt {
    /// This alternative, further selected by `o`; `None` when it needs the other outcome of
    /// the same join.
    fn and(mut self, o: &Outcome) -> Option<Alt> {
        if self
            .when
            .iter()
            .any(|w| w.join == o.join && w.outcome != o.outcome)
        {
            return None;
        }
        if !self.when.iter().any(|w| w.join == o.join) {
            self.when.push(o.clone());
        }
        Some(self)
    }
}

/// A piece of an expanded text: literal, or a variable's value.
enum Piece {
    Text(String),
    Value(Val),
}

/// Every text the pieces can make together, each with the join outcomes selecting it;
/// `None` when a piece can be any value or there would be too many (or too long) ones.
fn combine(pieces: &[Piece]) -> Option<Vec<Alt>> {
    let mut out = vec![Alt {
        text: String::new(),
        when: Vec::new(),
    }];
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.iter_mut().for_each(|a| a.text.push_str(t)),
            Piece::Value(v) => {
                let choices = v.finite()?;
                let mut next = Vec::new();
                for a in &out {
                    for c in &choices {
                        let mut alt = a.clone();
                        let mut ok = true;
                        for w in &c.when {
                            match alt.clone().and(w) {
                                Some(x) => alt = x,
                                None => {
                                    ok = false;
                                    break;
                                }
                            }
                        }
                        if !ok {
                            continue;
                        }
                        alt.text.push_str(&c.text);
                        if alt.text.len() > MAX_VALUE {
                            return None;
                        }
                        if !next.contains(&alt) {
                            next.push(alt);
                        }
                        if next.len() > MAX_ALTERNATIVES {
                            return None;
                        }
                    }
                }
                out = next;
            }
        }
    }
    Some(out)
}

/// One argument after expansion: a list element (or a whole quoted argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg {
    pub text: String,
    pub taint: Taint,
    /// Written quoted or bracketed: `if()` neither dereferences it nor reads it as a keyword.
    pub quoted: bool,
    pub line: u32,
    /// Known alternatives, as [`Val::alts`].
    pub alts: Alts,
}

impl Arg {
    pub fn val(&self) -> Val {
        Val {
            text: self.text.clone(),
            taint: self.taint.clone(),
            alts: self.alts.clone(),
        }
    }
}

/// Where `${NAME}` reads from.
pub(super) trait Lookup {
    /// `${NAME}`: a macro argument, normal variable, cache entry or built-in; undefined names
    /// read as empty with their input recorded.
    fn var(&self, name: &str) -> Val;
    fn env(&self, name: &str) -> Val;
    fn cache(&self, name: &str) -> Val;
}

/// Why an expansion failed.
#[derive(Debug)]
pub(super) enum ExpandError {
    TooLong,
}

/// Expand one written argument into its elements.
pub(super) fn expand(token: &Token, scope: &dyn Lookup) -> Result<Vec<Arg>, ExpandError> {
    match token.quoting {
        Quoting::Bracket => Ok(vec![Arg {
            text: token.text.clone(),
            taint: Taint::new(),
            quoted: true,
            line: token.line,
            alts: Alts::new(),
        }]),
        Quoting::Quoted => {
            let v = expand_text(&token.text, scope)?;
            Ok(vec![Arg {
                text: v.text,
                taint: v.taint,
                quoted: true,
                line: token.line,
                alts: v.alts,
            }])
        }
        // No reference, escape or list separator (most arguments): the word itself, one
        // element, none when empty.
        Quoting::Unquoted if !token.text.contains(['$', '\\', ';']) => {
            Ok(if token.text.is_empty() {
                Vec::new()
            } else {
                vec![Arg {
                    text: token.text.clone(),
                    taint: Taint::new(),
                    quoted: false,
                    line: token.line,
                    alts: Alts::new(),
                }]
            })
        }
        Quoting::Unquoted => {
            let v = expand_text(&token.text, scope)?;
            let mut items = elements(&v.text);
            // An unknown value that is empty by default may not be empty: keep one element
            // standing for it, so its inputs are not lost with the empty argument.
            if items.is_empty() && !v.taint.is_empty() {
                items.push(String::new());
            }
            // Known alternatives stay with the argument only when each is one list element,
            // as the default's: then every alternative makes the same argument list.
            let alts = match (items.as_slice(), v.finite()) {
                ([one], Some(alts)) if !v.taint.is_empty() && !one.is_empty() => {
                    if alts
                        .iter()
                        .all(|a| matches!(split_list(&a.text).as_slice(), [x] if *x == a.text))
                    {
                        alts
                    } else {
                        Vec::new()
                    }
                }
                _ => Vec::new(),
            };
            let alts: Alts = alts.into();
            Ok(items
                .into_iter()
                .map(|text| Arg {
                    text,
                    taint: v.taint.clone(),
                    quoted: false,
                    line: token.line,
                    alts: alts.clone(),
                })
                .collect())
        }
    }
}

/// CMake's list splitting: on `;` outside `[]` (as CMake counts them) and not escaped, empty
/// elements dropped.
pub(super) fn split_list(text: &str) -> Vec<String> {
    let mut items = list_items(text);
    items.retain(|item| !item.is_empty());
    items
}

/// The elements an unquoted argument (or `${ARGN}`) makes of a value: [`split_list`].
pub(super) fn elements(text: &str) -> Vec<String> {
    split_list(text)
}

/// Every element of a list value, empty ones kept (as `list()` sees them). As CMake's
/// `cmList::Expand`, each escaped `\;` is a `;` in its element (the backslash dropped).
pub(super) fn list_items(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut item = String::new();
    // CMake's count of `[` less `]`: a `]` first makes it negative, and then no `;` splits.
    // Every byte looked at is ASCII, so each cut is at a character boundary.
    let mut depth = 0i64;
    let mut start = 0;
    let mut bytes = text.bytes().enumerate();
    while let Some((i, b)) = bytes.next() {
        match b {
            // `\;` is a `;` in its element, inside brackets or not.
            b'\\' if text.as_bytes().get(i + 1) == Some(&b';') => {
                item.push_str(text.get(start..i).unwrap_or_default());
                item.push(';');
                bytes.next();
                start = i + 2;
            }
            b'[' => depth += 1,
            b']' => depth -= 1,
            b';' if depth == 0 => {
                item.push_str(text.get(start..i).unwrap_or_default());
                out.push(std::mem::take(&mut item));
                start = i + 1;
            }
            _ => {}
        }
    }
    item.push_str(text.get(start..).unwrap_or_default());
    out.push(item);
    out
}

/// Expand references and escapes in a quoted or unquoted argument's text (not split).
pub(super) fn expand_text(text: &str, scope: &dyn Lookup) -> Result<Val, ExpandError> {
    // Open references, innermost last: (kind, name so far).
    #[derive(PartialEq)]
    enum Kind {
        Var,
        Env,
        Cache,
    }
    // No reference and no escape: the text itself (most arguments).
    if !text.contains(['$', '\\']) {
        return Ok(Val::exact(text));
    }
    let mut open: Vec<(Kind, String)> = Vec::new();
    let mut out = String::new();
    let mut taint = Taint::new();
    // The text in pieces (literal text, referenced values) for its known alternatives;
    // `None` once a reference's name depends on an input.
    let mut pieces: Option<Vec<Piece>> = Some(Vec::new());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let rest = text.get(i..).unwrap_or("");
        if c == '$' {
            let opener = [
                ("${", Kind::Var),
                ("$ENV{", Kind::Env),
                ("$CACHE{", Kind::Cache),
            ]
            .into_iter()
            .find(|(p, _)| rest.starts_with(p));
            if let Some((p, kind)) = opener {
                for _ in 1..p.len() {
                    chars.next();
                }
                open.push((kind, String::new()));
                continue;
            }
        }
        let mut buf = [0u8; 4];
        let ch: &str = if c == '\\' {
            match chars.next() {
                Some((_, 't')) => "\t",
                Some((_, 'n')) => "\n",
                Some((_, 'r')) => "\r",
                Some((_, ';')) => "\\;",
                Some((_, other)) => other.encode_utf8(&mut buf),
                None => "\\",
            }
        } else {
            c.encode_utf8(&mut buf)
        };
        if c == '}'
            && let Some((kind, name)) = open.pop()
        {
            let v = match kind {
                Kind::Var => scope.var(&name),
                Kind::Env => scope.env(&name),
                Kind::Cache => scope.cache(&name),
            };
            taint.absorb(&v.taint);
            match open.last_mut() {
                Some((_, outer)) => {
                    outer.push_str(&v.text);
                    if !v.taint.is_empty() {
                        pieces = None;
                    }
                }
                None => {
                    out.push_str(&v.text);
                    if let Some(p) = pieces.as_mut() {
                        p.push(Piece::Value(v));
                    }
                }
            }
            if out.len() > MAX_VALUE || open.last().is_some_and(|(_, n)| n.len() > MAX_VALUE) {
                return Err(ExpandError::TooLong);
            }
            continue;
        }
        match open.last_mut() {
            Some((_, name)) => name.push_str(ch),
            None => {
                out.push_str(ch);
                if let Some(p) = pieces.as_mut() {
                    match p.last_mut() {
                        Some(Piece::Text(t)) => t.push_str(ch),
                        _ => p.push(Piece::Text(ch.to_string())),
                    }
                }
            }
        }
    }
    // An unclosed `${` is an error in CMake; the text stays literal here, marked unknown.
    if !open.is_empty() {
        for (_, name) in open {
            out.push_str(&name);
        }
        taint.insert(Input::Opaque("an unterminated ${} reference".into()));
    }
    let alts = match pieces {
        Some(p) if !taint.is_empty() => combine(&p).unwrap_or_default().into(),
        _ => Alts::new(),
    };
    Ok(Val {
        text: out,
        taint,
        alts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value joined from two sides of join `join`: `texts[0]` on the default side.
    fn joined_value(join: u32, texts: &[&str]) -> Val {
        let alts: Vec<Alt> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Alt {
                text: t.to_string(),
                when: vec![Outcome {
                    join,
                    outcome: i == 0,
                    default_side: i == 0,
                    what: format!("join {join}"),
                }],
            })
            .collect();
        Val {
            text: texts.first().map(|t| t.to_string()).unwrap_or_default(),
            taint: [Input::Join(format!("join {join}"))].into_iter().collect(),
            alts: alts.into(),
        }
    }

    fn texts(alts: &[Alt]) -> Vec<&str> {
        alts.iter().map(|a| a.text.as_str()).collect()
    }

    /// As `cmList::Expand` (checked against CMake 4.4: `set(L [==[a\]==] b [==[c\;d]==])`
    /// then `list(GET L 0 x)` is `a;b`, and `list(FILTER L INCLUDE REGEX .)` makes
    /// `a;b;c;d`): an escaped `;` never splits and is a plain `;` in its element, inside
    /// brackets too; a backslash before anything else stays.
    #[test]
    fn list_elements_unescape_semicolons_as_cmake_does() {
        assert_eq!(list_items("a\\;b;c\\;d"), ["a;b", "c;d"]);
        assert_eq!(list_items("[x\\;y];z"), ["[x;y]", "z"]);
        assert_eq!(
            list_items("a\\\\;b"),
            ["a\\;b"],
            "only the backslash before `;`"
        );
        assert_eq!(list_items("a\\b;;\\"), ["a\\b", "", "\\"]);
        assert_eq!(split_list(";\\;;"), [";"]);
        assert_eq!(elements("a\\;b;c"), ["a;b", "c"]);
        assert!(list_items("").is_empty());
    }

    #[test]
    fn inputs_are_written_as_a_user_would_set_them() {
        assert_eq!(Input::Cache("FA_TAG".into()).to_string(), "-DFA_TAG");
        assert_eq!(Input::Env("FA_TAG".into()).to_string(), "$ENV{FA_TAG}");
        assert_eq!(
            Input::Opaque("file(READ x)".into()).to_string(),
            "file(READ x)"
        );
        assert_eq!(
            Input::Join("if(X)".into()).to_string(),
            "the outcome of if(X)"
        );
    }

    #[test]
    fn joined_elements_keep_each_alternative_with_its_separators() {
        let a = joined_value(1, &["a", "b"]);
        let v = Val::joined([&Val::exact("x"), &a, &Val::exact("z")], ";");
        assert_eq!(v.text, "x;a;z");
        let alts = v.finite().expect("finite");
        assert_eq!(texts(&alts), vec!["x;a;z", "x;b;z"]);
    }

    #[test]
    fn a_value_changed_after_its_join_is_any_value() {
        let mut v = joined_value(1, &["a", "b"]);
        assert_eq!(v.finite().map(|a| a.len()), Some(2));
        // Its text no longer among the alternatives: they are stale.
        v.text.push('!');
        assert_eq!(v.finite(), None);
        // An input other than a join: any value, even with alternatives that hold its text.
        let mut w = joined_value(2, &["a", "b"]);
        w.taint.insert(Input::Cache("C".into()));
        assert_eq!(w.finite(), None);
    }

    /// Variables for [`expand_text`]: each name's value given.
    struct Vars(Vec<(&'static str, String)>);

    impl Lookup for Vars {
        fn var(&self, name: &str) -> Val {
            self.0
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| Val::exact(v.clone()))
                .unwrap_or_else(|| Val::with("", Input::Cache(name.into())))
        }
        fn env(&self, name: &str) -> Val {
            Val::with("", Input::Env(name.into()))
        }
        fn cache(&self, name: &str) -> Val {
            self.var(name)
        }
    }

    #[test]
    fn an_expansion_is_bounded_at_max_value_bytes() {
        let vars = Vars(vec![
            ("AT", "x".repeat(MAX_VALUE)),
            ("OVER", "x".repeat(MAX_VALUE + 1)),
            ("HALF", "x".repeat(MAX_VALUE / 2 + 1)),
        ]);
        assert_eq!(
            expand_text("${AT}", &vars).map(|v| v.text.len()).ok(),
            Some(MAX_VALUE)
        );
        assert!(matches!(
            expand_text("${OVER}", &vars),
            Err(ExpandError::TooLong)
        ));
        // The sum of references counts, and a name built past the cap inside a reference.
        assert!(matches!(
            expand_text("${HALF}${HALF}", &vars),
            Err(ExpandError::TooLong)
        ));
        assert!(matches!(
            expand_text("${X${AT}}", &vars),
            Err(ExpandError::TooLong)
        ));
        // A name of exactly MAX_VALUE bytes is still a name (of an unset variable here).
        assert_eq!(
            expand_text("${${AT}}", &vars).map(|v| v.text).ok(),
            Some(String::new())
        );
    }

    #[test]
    fn alternatives_are_bounded_in_count_and_length() {
        // 8 x 8 = 64 alternatives: kept; 5 x 13 = 65: any value.
        let many = |join: u32, n: usize| {
            let names: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            // Each alternative its own join, so every pair combines.
            let mut v = joined_value(join, &refs);
            for (i, a) in v.alts.make_mut().iter_mut().enumerate() {
                a.when = vec![Outcome {
                    join: join * 100 + i as u32,
                    outcome: true,
                    default_side: true,
                    what: String::new(),
                }];
            }
            v
        };
        let pieces = |a: Val, b: Val| vec![Piece::Value(a), Piece::Value(b)];
        assert_eq!(
            combine(&pieces(many(1, 8), many(2, 8))).map(|a| a.len()),
            Some(64)
        );
        assert_eq!(combine(&pieces(many(1, 5), many(2, 13))), None);
        // A combined text of exactly MAX_VALUE bytes is kept; one byte more is not.
        let long = "x".repeat(MAX_VALUE - 1);
        let at_cap = vec![
            Piece::Text(long.clone()),
            Piece::Value(joined_value(3, &["a", "b"])),
        ];
        assert_eq!(combine(&at_cap).map(|a| a.len()), Some(2));
        let over = vec![
            Piece::Text(format!("{long}y")),
            Piece::Value(joined_value(3, &["a", "b"])),
        ];
        assert_eq!(combine(&over), None);
    }
}
