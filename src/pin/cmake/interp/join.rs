//! Joined decisions: both outcomes run from one state and the states are merged.

use super::*;

impl Run<'_, '_> {
    /// A decision joined: both outcomes run here from the same state, and the states are
    /// merged, every value that differs marked as depending on the condition (the default
    /// side's text kept), and fetches only the other side makes kept with the condition
    /// ([`Run::join`]). `t.value` is the default side's outcome. Where the sides cannot be
    /// merged (they end differently, define functions differently, one fails) and neither
    /// forked, the decision is forked instead; inside a call that is [`Stop::NeedsFork`].
    pub(super) fn join_two(
        &mut self,
        what: &str,
        t: Truth,
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
                self.st = other;
                self.no_default = true;
                return Ok(Flow::Next);
            }
            (Ok(Flow::Next), Err(Stop::Fatal(_))) => return Ok(Flow::Next),
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
                self.join_two(what, t, &side)
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
            let mut env_a = flatten(std::mem::take(&mut self.st.env));
            merge_map(&mut env_a, &flatten(env), &mut |k: &String| {
                maybe_names.push(k.clone())
            });
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
        if common < fetches.len() {
            let mine = Rc::make_mut(&mut self.st.fetches);
            for f in fetches.iter().skip(common) {
                if !mine.contains(f) {
                    let mut f = f.clone();
                    f.only_if.push(mark.clone());
                    mine.push(f);
                }
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
}
