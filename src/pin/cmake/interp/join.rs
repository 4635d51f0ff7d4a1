//! Joined decisions: both outcomes run from one state and the states are merged.

use super::super::value::{Alt, Alts};
use super::*;

impl Run<'_, '_> {
    /// A decision joined: both outcomes run here from the same state, and the states are
    /// merged, every value that differs marked as depending on the condition (the default
    /// side's text kept), and fetches only the other side makes kept with the condition
    /// ([`Run::join`]). `t.value` is the default side's outcome. Where the sides cannot be
    /// merged (they end differently, define functions differently, one fails) and neither
    /// forked, the decision is forked instead; inside a call that is [`Stop::NeedsFork`].
    ///
    /// Where one side stops CMake (`message(FATAL_ERROR)`), the configurations that go on are
    /// the other side's: its state goes on, narrowed by `cond` (the condition as written, for
    /// an `if()`) to the outcomes of earlier joins under which the condition takes the side
    /// that goes on ([`Run::narrow`]); what the stopping side fetched before it stopped is
    /// kept, with the condition.
    pub(super) fn join_two(
        &mut self,
        what: &str,
        t: Truth,
        cond: Option<&Invocation>,
        side: &dyn Fn(&mut Self, bool) -> Result<Flow, Stop>,
    ) -> Result<Flow, Stop> {
        let mark = Input::Join(what.to_string());
        let start = self.st.clone();
        let decided = self.trace.len();
        let first = side(self, t.value);
        let taken = std::mem::replace(&mut self.st, start.clone());
        let second = side(self, !t.value);
        let other = std::mem::replace(&mut self.st, taken);
        self.joins += 1;
        let outcome = |outcome: bool| Outcome {
            join: self.joins,
            outcome,
            default_side: outcome == t.value,
            what: what.to_string(),
        };
        let sides = (outcome(t.value), outcome(!t.value));
        let unfollowed = match (first, second) {
            (Ok(Flow::Next), Ok(Flow::Next)) => match self.join(other, &mark, &sides) {
                Ok(()) => return Ok(Flow::Next),
                Err(e) => e,
            },
            (Err(Stop::Fatal(_)), Ok(Flow::Next)) => {
                // The default side stops CMake: the configurations that go on are the other
                // side's.
                let stopped = std::mem::replace(&mut self.st, other);
                self.keep_fetches_of(&stopped, &mark);
                self.no_default = true;
                if let Some(inv) = cond {
                    self.narrow(inv, &t.taint, !t.value);
                }
                return Ok(Flow::Next);
            }
            (Ok(Flow::Next), Err(Stop::Fatal(_))) => {
                self.keep_fetches_of(&other, &mark);
                if let Some(inv) = cond {
                    self.narrow(inv, &t.taint, t.value);
                }
                return Ok(Flow::Next);
            }
            (Err(Stop::Error(e)), _) | (_, Err(Stop::Error(e))) => Stop::Error(e),
            (Err(e), _) | (_, Err(e)) => return Err(e),
            _ => Stop::Undecided(format!(
                "{what}: return()/break()/continue() under a condition on an input"
            )),
        };
        if self.summarizing > 0 {
            return Err(Stop::NeedsFork);
        }
        if self.trace.len() != decided {
            // A side forked: a replay would not retrace this run; the join stands as it failed.
            return Err(unfollowed);
        }
        self.st = start;
        let outcome = self.decide(t, what.to_string());
        side(self, outcome)
    }

    /// Run a command, an `if()` chain or a loop whose first expansion of arguments may meet
    /// unquoted references to unknown values that are empty by default (CMake then drops the
    /// argument). Whether each is empty is a decision: forked where it was found relevant
    /// ([`Machine::relevant`], within [`FORK_LIMIT`], outside calls), joined otherwise (the
    /// node runs with the argument dropped and with it kept, [`Run::join_two`]). The first run
    /// only probes (nothing runs before the arguments are expanded).
    pub(super) fn joining_empties(
        &mut self,
        node: &dyn Fn(&mut Self) -> Result<Flow, Stop>,
        relevant: bool,
    ) -> Result<Flow, Stop> {
        if self.m.fork_all {
            return node(self);
        }
        self.next_args = EmptyArgs::Probe;
        let probed = match node(self) {
            Err(Stop::Empties(probed)) => probed,
            other => {
                self.next_args = EmptyArgs::Decide;
                return other;
            }
        };
        self.next_args = EmptyArgs::Decide;
        // Forked: relevant ones, outside calls, while the run has forks left.
        let mut room = FORK_LIMIT.saturating_sub(self.trace.len());
        let mut forks: Vec<bool> = Vec::with_capacity(probed.len());
        for (what, _) in &probed {
            let fork = self.summarizing == 0 && room > 0 && (relevant || self.is_relevant(what));
            room -= usize::from(fork);
            forks.push(fork);
        }
        if forks.iter().filter(|f| !**f).count() > MAX_EMPTY_JOINS {
            // Too many combinations to run here: each is a decision, as a condition is.
            return node(self);
        }
        let mut planned: Vec<Option<bool>> = Vec::with_capacity(probed.len());
        for ((what, taint), fork) in probed.iter().zip(forks) {
            let t = Truth {
                value: true,
                taint: taint.clone(),
            };
            planned.push(fork.then(|| self.decide(t, what.clone())));
        }
        self.join_empties(&probed, &planned, Vec::new(), node)
    }

    /// Run `node` for every outcome of the joined empty references from `fixed.len()` on
    /// (see [`Run::joining_empties`]).
    pub(super) fn join_empties(
        &mut self,
        probed: &[(String, Taint)],
        planned: &[Option<bool>],
        mut fixed: Vec<bool>,
        node: &dyn Fn(&mut Self) -> Result<Flow, Stop>,
    ) -> Result<Flow, Stop> {
        let at = fixed.len();
        match (planned.get(at), probed.get(at)) {
            (Some(Some(outcome)), _) => {
                fixed.push(*outcome);
                self.join_empties(probed, planned, fixed, node)
            }
            (Some(None), Some((what, taint))) => {
                let t = Truth {
                    value: true,
                    taint: taint.clone(),
                };
                let side = |r: &mut Self, dropped: bool| {
                    let mut next = fixed.clone();
                    next.push(dropped);
                    r.join_empties(probed, planned, next, node)
                };
                self.join_two(what, t, None, &side)
            }
            _ => {
                self.next_args = EmptyArgs::Forced(fixed);
                let r = node(self);
                self.next_args = EmptyArgs::Decide;
                r
            }
        }
    }

    /// Merge the state of the other side of a joined condition into this (the default side's).
    /// `sides`: this side's outcome and the other's. A value that differs keeps both sides'
    /// values when each is known ([`Val::merge`]).
    pub(super) fn join(
        &mut self,
        other: State,
        mark: &Input,
        sides: &(Outcome, Outcome),
    ) -> Result<(), Stop> {
        let (mine, theirs) = sides;
        let merge_map = |a: &mut HashMap<String, Val>,
                         b: &HashMap<String, Val>,
                         maybe: &mut dyn FnMut(&String)| {
            for (k, va) in a.iter_mut() {
                let vb = b.get(k);
                if vb != Some(va) {
                    va.merge(vb, mark, mine, theirs);
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    maybe(k);
                }
            }
        };
        let State {
            scopes,
            cache,
            env,
            commands,
            declared,
            declared_alt,
            populated,
            fetches,
            reached,
            unread,
            written,
            guards,
            ..
        } = other;
        if guards != self.st.guards {
            return Err(Stop::Undecided(
                "include_guard() reached on one side of a condition on an input".into(),
            ));
        }
        if commands != self.st.commands {
            // Name them, so the reader can find the definitions.
            let mut differ: Vec<String> = self
                .st
                .commands
                .iter()
                .filter(|(k, d)| commands.get(k) != Some(*d))
                .chain(
                    commands
                        .iter()
                        .filter(|(k, _)| !self.st.commands.contains_key(k)),
                )
                .map(|(_, d)| format!("{}()", d.name))
                .collect();
            differ.sort();
            differ.dedup();
            return Err(Stop::Undecided(format!(
                "{} defined differently under a condition on an input (in {})",
                differ.join(", "),
                self.here(0).trim_end_matches(":0")
            )));
        }
        if scopes.len() != self.st.scopes.len() {
            return Err(Stop::Undecided("scopes differ after a condition".into()));
        }
        let mut maybe_names: Vec<String> = Vec::new();
        // Maps both sides still share are the same on both: only the others are merged.
        for (a, b) in self.st.scopes.iter_mut().zip(scopes) {
            match a.changed_since(&b) {
                Some(names) => {
                    for k in names {
                        // Set on both sides from one value (a copy of it): nothing to merge,
                        // nothing to compare.
                        if a.same_entry(&b, &k) {
                            continue;
                        }
                        let vb = b.get(&k);
                        match a.get(&k) {
                            Some(va) if vb == Some(va) => {}
                            Some(va) => {
                                let mut va = va.clone();
                                va.merge(vb, mark, mine, theirs);
                                a.insert(k, va);
                            }
                            None => {
                                if vb.is_some() {
                                    maybe_names.push(k.to_string());
                                }
                            }
                        }
                    }
                }
                None => {
                    let b = b.into_map();
                    let mut merged: Vec<(Rc<str>, Val)> = Vec::new();
                    for (k, va) in a.iter() {
                        let vb = b.get(&**k);
                        if vb != Some(va) {
                            let mut va = va.clone();
                            va.merge(vb, mark, mine, theirs);
                            merged.push((k.clone(), va));
                        }
                    }
                    maybe_names.extend(b.keys().filter(|k| !a.contains_key(k.as_str())).cloned());
                    a.extend(merged);
                }
            }
        }
        let flatten = |m: Shared<Option<Val>>| -> HashMap<String, Val> {
            m.into_map()
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect()
        };
        if cache.changed_since(&self.st.cache) != Some(Vec::new()) {
            let mut cache_a = flatten(std::mem::take(&mut self.st.cache));
            merge_map(&mut cache_a, &flatten(cache), &mut |k: &String| {
                maybe_names.push(k.clone())
            });
            self.st.cache = cache_a.into_iter().map(|(k, v)| (k, Some(v))).collect();
        }
        if env.changed_since(&self.st.env) != Some(Vec::new()) {
            // A variable only the other side set is absent here after the merge: it reads as
            // the environment's (any value), defined or not. (`maybe` is for the names of
            // variables and cache entries, which `$ENV{}` never reads.)
            let mut env_a = flatten(std::mem::take(&mut self.st.env));
            merge_map(&mut env_a, &flatten(env), &mut |_: &String| {});
            self.st.env = env_a.into_iter().map(|(k, v)| (k, Some(v))).collect();
        }
        if !maybe_names.is_empty() {
            let maybe = Rc::make_mut(&mut self.st.maybe);
            for n in maybe_names {
                maybe.entry(n).or_default().insert(mark.clone());
            }
        }
        let declared_alt = if Rc::ptr_eq(&declared_alt, &self.st.declared_alt) {
            HashMap::new()
        } else {
            Rc::unwrap_or_clone(declared_alt)
        };
        for (k, alts) in declared_alt {
            let mine = Rc::make_mut(&mut self.st.declared_alt)
                .entry(k)
                .or_default();
            for alt in alts {
                if !mine.contains(&alt) {
                    mine.push(alt);
                }
            }
        }
        // Declared on this side only: on the other, a later declaration is the one that wins
        // (the first declaration of a name wins), so this one becomes an alternative.
        let mine_only: Vec<String> = self
            .st
            .declared
            .keys()
            .filter(|k| !declared.contains_key(k))
            .map(|k| k.to_string())
            .collect();
        for k in mine_only {
            if let Some(d) = self.st.declared.remove(&k) {
                let alt = (d, mark.clone());
                let list = Rc::make_mut(&mut self.st.declared_alt)
                    .entry(k)
                    .or_default();
                if !list.contains(&alt) {
                    list.push(alt);
                }
            }
        }
        // Populated on one side only: a later `FetchContent_MakeAvailable` fetches on the
        // other (again here: more than CMake, never less).
        if !Rc::ptr_eq(&self.st.populated, &populated) {
            Rc::make_mut(&mut self.st.populated).retain(|k| populated.contains(k));
        }
        for (k, d) in declared.into_map() {
            match self.st.declared.get(&k) {
                Some(mine) if *mine == d => {}
                Some(_) => {
                    let alt = (d, mark.clone());
                    let list = Rc::make_mut(&mut self.st.declared_alt)
                        .entry(k)
                        .or_default();
                    if !list.contains(&alt) {
                        list.push(alt);
                    }
                }
                None => {
                    // Declared on the other side only: a later declaration on this side is
                    // the one this side fetches (the first declaration of a name wins).
                    let alt = (d, mark.clone());
                    let list = Rc::make_mut(&mut self.st.declared_alt)
                        .entry(k)
                        .or_default();
                    if !list.contains(&alt) {
                        list.push(alt);
                    }
                }
            }
        }
        let common = if Rc::ptr_eq(&fetches, &self.st.fetches) {
            fetches.len()
        } else {
            self.st
                .fetches
                .iter()
                .zip(fetches.iter())
                .take_while(|(a, b)| a == b)
                .count()
        };
        for f in fetches.iter().skip(common) {
            if !self.st.fetches.contains(f) {
                let mut f = f.clone();
                f.only_if.push(mark.clone());
                Rc::make_mut(&mut self.st.fetches).push(f);
            }
        }
        if !Rc::ptr_eq(&reached, &self.st.reached) {
            Rc::make_mut(&mut self.st.reached).extend(reached.iter().cloned());
        }
        if !Rc::ptr_eq(&self.st.unread, &unread) {
            Rc::make_mut(&mut self.st.unread).extend(unread.iter().cloned());
        }
        self.st.written.extend(written);
        Ok(())
    }
    /// What a joined side that stopped CMake fetched before it stopped (a
    /// `FetchContent_MakeAvailable` downloads at once): kept with the condition, as are the
    /// declarations it reached and the files it could not read.
    fn keep_fetches_of(&mut self, stopped: &State, mark: &Input) {
        if !Rc::ptr_eq(&stopped.fetches, &self.st.fetches) {
            let common = self
                .st
                .fetches
                .iter()
                .zip(stopped.fetches.iter())
                .take_while(|(a, b)| a == b)
                .count();
            for f in stopped.fetches.iter().skip(common) {
                if !self.st.fetches.contains(f) {
                    let mut f = f.clone();
                    f.only_if.push(mark.clone());
                    Rc::make_mut(&mut self.st.fetches).push(f);
                }
            }
        }
        if !Rc::ptr_eq(&stopped.reached, &self.st.reached) {
            Rc::make_mut(&mut self.st.reached).extend(stopped.reached.iter().cloned());
        }
        if !Rc::ptr_eq(&stopped.unread, &self.st.unread) {
            Rc::make_mut(&mut self.st.unread).extend(stopped.unread.iter().cloned());
        }
    }

    /// After a joined `if()` one of whose sides stops CMake: every configuration that goes on
    /// took `keep`. Where the condition depends only on earlier joins (`taint`), it is
    /// evaluated under each combination of their outcomes (each value narrowed to the
    /// alternative that combination selects); the combinations under which it takes the other
    /// side end there, so every value's alternatives that only they select are dropped (a
    /// value left with one text is exact). Anything else (an input besides joins, a value
    /// with no known alternatives, too many joins) narrows nothing.
    fn narrow(&mut self, inv: &Invocation, taint: &Taint, keep: bool) {
        let whats: HashSet<&str> = match taint
            .iter()
            .map(|i| match i {
                Input::Join(w) => Some(w.as_str()),
                _ => None,
            })
            .collect::<Option<HashSet<&str>>>()
        {
            Some(w) => w,
            None => return,
        };
        let mut ids: BTreeSet<u32> = BTreeSet::new();
        visit_alts(&self.st, &mut |when| {
            ids.extend(
                when.iter()
                    .filter(|o| whats.contains(o.what.as_str()))
                    .map(|o| o.join),
            );
        });
        let ids: Vec<u32> = ids.into_iter().collect();
        if ids.len() > MAX_NARROWED_JOINS {
            return;
        }
        let mut alive: Vec<Vec<(u32, bool)>> = Vec::new();
        let all = 1usize << ids.len();
        for mask in 0..all {
            let assign: Vec<(u32, bool)> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| (*id, mask & (1 << i) != 0))
                .collect();
            let saved = self.st.clone();
            restrict(&mut self.st, &|when| consistent(when, &assign));
            let truth = self.truth_of(inv);
            self.st = saved;
            match truth {
                Some(v) if v == keep => alive.push(assign),
                Some(_) => {}
                None => return,
            }
        }
        if alive.is_empty() || alive.len() == all {
            return;
        }
        restrict(&mut self.st, &|when| {
            alive.iter().any(|assign| consistent(when, assign))
        });
    }

    /// The condition's value where nothing it reads is unknown; `None` otherwise (or where
    /// it is malformed).
    fn truth_of(&mut self, inv: &Invocation) -> Option<bool> {
        let mut args = Vec::new();
        for token in &inv.args {
            args.extend(expand(token, self).ok()?);
        }
        let t = cond::evaluate(&args, self).ok()?;
        t.taint.is_empty().then_some(t.value)
    }
}

/// Joins enumerated by [`Run::narrow`] at most (2^6 evaluations of one condition).
const MAX_NARROWED_JOINS: usize = 6;

/// Whether join outcomes `when` can hold together with the outcomes `assign` fixes.
fn consistent(when: &[Outcome], assign: &[(u32, bool)]) -> bool {
    when.iter().all(|w| {
        assign
            .iter()
            .all(|(id, outcome)| w.join != *id || w.outcome == *outcome)
    })
}

/// Every list of join outcomes an alternative of a value of the state is selected by.
fn visit_alts(st: &State, f: &mut dyn FnMut(&[Outcome])) {
    let mut val = |v: &Val| v.alts.iter().for_each(|a| f(&a.when));
    for scope in &st.scopes {
        scope.iter().for_each(|(_, v)| val(v));
    }
    st.cache
        .iter()
        .for_each(|(_, v)| v.iter().for_each(&mut val));
    st.env.iter().for_each(|(_, v)| v.iter().for_each(&mut val));
    for frame in st.macro_frames.iter().flatten() {
        frame.values().for_each(&mut val);
    }
    for (_, d) in st.declared.iter() {
        d.args
            .iter()
            .for_each(|a| a.alts.iter().for_each(|x| f(&x.when)));
    }
}

/// A value's known alternatives kept where `keep` holds for the outcomes selecting them;
/// `None` when nothing changes (no alternatives, any value, all kept, or none left).
fn restricted(
    text: &str,
    taint: &Taint,
    alts: &Alts,
    keep: &dyn Fn(&[Outcome]) -> bool,
) -> Option<Val> {
    if alts.is_empty() {
        // No alternatives: nothing to narrow.
        return None;
    }
    let own = Val {
        text: text.to_string(),
        taint: taint.clone(),
        alts: alts.clone(),
    };
    let all = own.finite().filter(|a| !a.is_empty())?;
    let kept: Vec<Alt> = all.iter().filter(|a| keep(&a.when)).cloned().collect();
    let first = kept.first()?.text.clone();
    if kept.len() == all.len() {
        return None;
    }
    if kept.iter().all(|a| a.text == first) {
        return Some(Val::exact(first));
    }
    let text = if kept.iter().any(|a| a.text == text) {
        text.to_string()
    } else {
        first
    };
    Some(Val {
        text,
        taint: taint.clone(),
        alts: kept.into(),
    })
}

/// Every value of the state narrowed to the alternatives `keep` allows ([`restricted`]).
fn restrict(st: &mut State, keep: &dyn Fn(&[Outcome]) -> bool) {
    let val = |v: &Val| restricted(&v.text, &v.taint, &v.alts, keep);
    for scope in &mut st.scopes {
        let changed: Vec<(Rc<str>, Val)> = scope
            .iter()
            .filter_map(|(k, v)| val(v).map(|n| (k.clone(), n)))
            .collect();
        scope.extend(changed);
    }
    for map in [&mut st.cache, &mut st.env] {
        let changed: Vec<(Rc<str>, Option<Val>)> = map
            .iter()
            .filter_map(|(k, v)| v.as_ref().and_then(&val).map(|n| (k.clone(), Some(n))))
            .collect();
        map.extend(changed);
    }
    for frame in st.macro_frames.iter_mut().flatten() {
        let changed: Vec<(String, Val)> = frame
            .iter()
            .filter_map(|(k, v)| val(v).map(|n| (k.clone(), n)))
            .collect();
        if !changed.is_empty() {
            Rc::make_mut(frame).extend(changed);
        }
    }
    let declared: Vec<(Rc<str>, Details)> = st
        .declared
        .iter()
        .filter_map(|(k, d)| {
            let mut d2 = d.clone();
            let mut any = false;
            for a in &mut d2.args {
                if let Some(n) = restricted(&a.text, &a.taint, &a.alts, keep) {
                    a.text = n.text;
                    a.taint = n.taint;
                    a.alts = n.alts;
                    any = true;
                }
            }
            any.then(|| (k.clone(), d2))
        })
        .collect();
    st.declared.extend(declared);
}
