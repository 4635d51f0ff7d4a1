//! Control flow: blocks, `if()` chains, loops, decisions and function and macro calls.

use super::fetch::is_fetch_command;
use super::*;

impl Run<'_, '_> {
    pub(super) fn expand_args(&mut self, tokens: &[Token]) -> Result<Vec<Arg>, Stop> {
        // The mode is the first expansion's only (a called function's body has its own).
        let mode = std::mem::take(&mut self.next_args);
        let mut probed: Vec<(String, Taint)> = Vec::new();
        let mut forced = match &mode {
            EmptyArgs::Forced(outcomes) => outcomes.iter(),
            _ => [].iter(),
        };
        let mut out = Vec::new();
        let mut total = 0usize;
        for t in tokens {
            let mut args = expand(t, self).map_err(|ExpandError::TooLong| {
                Stop::Undecided(format!(
                    "{}: a value over {} bytes",
                    self.here(t.line),
                    super::super::value::MAX_VALUE
                ))
            })?;
            // An unquoted reference to an unknown value that is empty by default: CMake drops
            // the argument when it is empty, so whether it is is a decision.
            if let [only] = args.as_slice()
                && !only.quoted
                && only.text.is_empty()
                && !only.taint.is_empty()
            {
                let t_ = Truth {
                    value: true,
                    taint: only.taint.clone(),
                };
                let what = format!("{}: `{}` is empty", self.here(t.line), t.text);
                let has_default = t_.taint.iter().all(Input::has_default);
                if !has_default {
                    // Kept, standing for any value: argument lists may differ from CMake's
                    // when it is empty (a known approximation), so no default is claimed.
                    self.no_default = true;
                } else {
                    match &mode {
                        EmptyArgs::Probe => probed.push((what, t_.taint)),
                        EmptyArgs::Forced(_) => {
                            if forced.next().copied().unwrap_or(true) {
                                args.clear();
                            }
                        }
                        // Inside a call the argument count decides what runs: summarise the
                        // call.
                        EmptyArgs::Decide if self.summarizing > 0 => return Err(Stop::NeedsFork),
                        EmptyArgs::Decide => {
                            if self.decide(t_, what) {
                                args.clear();
                            }
                        }
                    }
                }
            }
            total += args.iter().map(|a| a.text.len()).sum::<usize>();
            if total > 16 * super::super::value::MAX_VALUE {
                return Err(Stop::Undecided(format!(
                    "{}: arguments over {} bytes",
                    self.here(t.line),
                    16 * super::super::value::MAX_VALUE
                )));
            }
            out.extend(args);
        }
        if !probed.is_empty() {
            return Err(Stop::Empties(probed));
        }
        Ok(out)
    }

    pub(super) fn decide(&mut self, t: Truth, what: String) -> bool {
        if t.taint.is_empty() {
            return t.value;
        }
        // A fork on a value a join made: that join changes what this run decides, so it is
        // relevant (forked from the next pass on, see `super::evaluate`).
        for i in &t.taint {
            if let Input::Join(w) = i {
                self.m.relevant.insert(w.clone());
            }
        }
        let k = self.trace.len();
        let outcome = self.choices.get(k).copied().unwrap_or(t.value);
        self.trace.push(Decision {
            outcome,
            computed: t.value,
            has_default: t.taint.iter().all(Input::has_default),
            inputs: t.taint,
            what,
        });
        outcome
    }

    pub(super) fn condition(&mut self, inv: &Invocation) -> Result<bool, Stop> {
        let args = self.expand_args(&inv.args)?;
        let t = cond::evaluate(&args, self).map_err(|e| {
            Stop::Fatal(format!("{}: {}(): {}", self.here(inv.line), inv.name, e.0))
        })?;
        if t.taint.is_empty() {
            return Ok(t.value);
        }
        if self.summarizing > 0 {
            return Err(Stop::NeedsFork);
        }
        let what = self.condition_text(inv);
        Ok(self.decide(t, what))
    }

    /// Run a block. `function_body`: the body of a function or macro, which CMake leaves at
    /// its first failing command (an error in a nested `if`/`foreach` body does not leave it).
    pub(super) fn block(&mut self, nodes: &[Node], function_body: bool) -> Result<Flow, Stop> {
        for node in nodes {
            self.step()?;
            self.line = match node {
                Node::Cmd(inv) => inv.line,
                Node::If(branches) => branches
                    .first()
                    .and_then(|(c, _)| c.as_ref())
                    .map_or(self.line, |c| c.line),
                Node::Foreach(head, _)
                | Node::While(head, _)
                | Node::Function(head, ..)
                | Node::Block(head, _) => head.line,
            };
            let flow = match node {
                Node::Cmd(inv) => {
                    let run = |r: &mut Self| match r.command(inv) {
                        Err(Stop::Error(e)) if !function_body => {
                            Rc::make_mut(&mut r.st.errors).push(e);
                            Ok(Flow::Next)
                        }
                        other => other,
                    };
                    // Which arguments a fetch has is what it fetches: relevant from the start.
                    let fetch = is_fetch_command(&lowercase(&inv.name));
                    self.joining_empties(&run, fetch)?
                }
                Node::If(branches) => {
                    self.joining_empties(&|r: &mut Self| r.if_chain(branches), false)?
                }
                Node::Foreach(head, body) => {
                    // A `foreach()` CMake refuses fails as a command does: a function's or
                    // macro's body is left there.
                    let run = |r: &mut Self| match r.foreach(head, body) {
                        Err(Stop::Error(e)) if !function_body => {
                            Rc::make_mut(&mut r.st.errors).push(e);
                            Ok(Flow::Next)
                        }
                        other => other,
                    };
                    self.joining_empties(&run, false)?
                }
                Node::While(head, body) => {
                    let mut flow = Flow::Next;
                    loop {
                        self.line = head.line;
                        if !self.condition(head)? {
                            break;
                        }
                        self.step()?;
                        match self.block(body, false)? {
                            Flow::Break => break,
                            Flow::Return => {
                                flow = Flow::Return;
                                break;
                            }
                            _ => {}
                        }
                    }
                    flow
                }
                Node::Function(head, body, is_macro) => {
                    let args = self.expand_args(&head.args)?;
                    if let Some((name, params)) = args.split_first() {
                        if !name.taint.is_empty() {
                            return Err(Stop::Undecided(format!(
                                "{}: a function name from an input",
                                self.here(head.line)
                            )));
                        }
                        self.st.commands.insert(
                            name.text.to_ascii_lowercase(),
                            Def {
                                name: name.text.clone(),
                                params: params.iter().map(|p| p.text.clone()).collect(),
                                body: body.clone(),
                                is_macro: *is_macro,
                                file: self
                                    .st
                                    .dirs
                                    .last()
                                    .map(|d| d.code_file.clone())
                                    .unwrap_or_else(|| "".into()),
                                line: head.line,
                            },
                        );
                    }
                    Flow::Next
                }
                Node::Block(head, body) => self.run_block(head, body)?,
            };
            if !matches!(flow, Flow::Next) {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    /// `block([SCOPE_FOR [POLICIES] [VARIABLES]] [PROPAGATE <var>...])`: a variable scope of its
    /// own unless `SCOPE_FOR` leaves `VARIABLES` out; what `PROPAGATE` names is set (or unset)
    /// in the enclosing scope as the block leaves it.
    pub(super) fn run_block(&mut self, head: &Invocation, body: &[Node]) -> Result<Flow, Stop> {
        let args = self.expand_args(&head.args)?;
        let mut variables = true;
        let mut propagate: Vec<String> = Vec::new();
        let mut mode = "";
        for a in &args {
            match a.text.as_str() {
                "SCOPE_FOR" => {
                    mode = "SCOPE_FOR";
                    variables = false;
                }
                "PROPAGATE" => mode = "PROPAGATE",
                "VARIABLES" if mode == "SCOPE_FOR" => variables = true,
                "POLICIES" if mode == "SCOPE_FOR" => {}
                name if mode == "PROPAGATE" => {
                    if !a.taint.is_empty() {
                        return Err(Stop::Undecided(format!(
                            "{}: block(PROPAGATE) of a name from an input",
                            self.here(head.line)
                        )));
                    }
                    propagate.push(name.to_string());
                }
                // CMake stops the configuration here (CMake 4.4: nothing after it runs, in a
                // function's body either).
                other => {
                    return Err(Stop::Fatal(format!(
                        "{}: block() given `{other}`",
                        self.here(head.line)
                    )));
                }
            }
        }
        if !variables {
            return self.block(body, false);
        }
        let copy = self.st.scopes.last().cloned().unwrap_or_default();
        self.st.scopes.push(copy);
        let flow = self.block(body, false);
        let inner = self.st.scopes.pop().unwrap_or_default();
        for name in propagate {
            self.put_var(&name, inner.get(&name).cloned());
        }
        flow
    }

    /// `if()`/`elseif()`/`else()`. A condition that depends on an input is either a decision
    /// (the driver runs both outcomes as separate configurations) or, past
    /// [`FORK_LIMIT`] decisions in this run or when it has no default (the compiler,
    /// `find_package`), *joined*: both sides run here, from the same state, and the states are
    /// merged, every value that differs marked as depending on the condition (the default
    /// side's text kept), and fetches only the other side makes kept with the condition.
    pub(super) fn if_chain(
        &mut self,
        branches: &[(Option<Invocation>, Vec<Node>)],
    ) -> Result<Flow, Stop> {
        let Some(((cond, body), rest)) = branches.split_first() else {
            return Ok(Flow::Next);
        };
        let Some(inv) = cond else {
            return self.block(body, false);
        };
        self.line = inv.line;
        let args = self.expand_args(&inv.args)?;
        let t = cond::evaluate(&args, self).map_err(|e| {
            Stop::Fatal(format!("{}: {}(): {}", self.here(inv.line), inv.name, e.0))
        })?;
        if t.taint.is_empty() {
            return if t.value {
                self.block(body, false)
            } else {
                self.if_chain(rest)
            };
        }
        // Named only where it decides on an input (most conditions do not).
        let what = self.condition_text(inv);
        let opaque = t.taint.iter().any(|i| !i.has_default());
        let flow_inside = branches.iter().any(|(_, b)| has_control_flow(b));
        let relevant = self.m.fork_all || self.is_relevant(&what);
        let join = !flow_inside
            && (opaque || !relevant || self.trace.len() >= FORK_LIMIT || self.summarizing > 0);
        let side = |r: &mut Self, outcome: bool| {
            if outcome {
                r.block(body, false)
            } else {
                r.if_chain(rest)
            }
        };
        if !join && self.summarizing > 0 {
            // Inside a call: the call runs once per outcome ([`Run::call_paths`]).
            let (forced, seen) = &mut self.call_forced;
            let Some(outcome) = forced.get(*seen).copied() else {
                return Err(Stop::CallFork(what, t));
            };
            *seen += 1;
            return side(self, outcome);
        }
        if !join {
            let outcome = self.decide(t, what);
            return side(self, outcome);
        }
        if opaque {
            self.no_default = true;
        }
        self.join_two(&what, t, Some(inv), &side)
    }

    pub(super) fn condition_text(&self, inv: &Invocation) -> String {
        let text: Vec<String> = inv
            .args
            .iter()
            .map(|t| match t.quoting {
                Quoting::Quoted => format!("\"{}\"", t.text),
                _ => t.text.clone(),
            })
            .collect();
        format!("{}: {}({})", self.here(inv.line), inv.name, text.join(" "))
    }

    pub(super) fn foreach(&mut self, head: &Invocation, body: &[Node]) -> Result<Flow, Stop> {
        let args = self.expand_args(&head.args)?;
        let Some((var, rest)) = args.split_first() else {
            return Err(Stop::Error(format!(
                "{}: foreach() without arguments",
                self.here(head.line)
            )));
        };
        let kw = |a: &Arg, k: &str| !a.quoted && a.text == k;
        let mut items: Vec<Val> = Vec::new();
        let mut vars = vec![var.text.clone()];
        if rest.first().is_some_and(|a| kw(a, "RANGE")) {
            let nums: Vec<&Arg> = rest.iter().skip(1).collect();
            let mut taint = Taint::new();
            let mut n = Vec::new();
            for a in &nums {
                taint.extend(a.taint.iter().cloned());
                // CMake stops at a bound that is no integer, and at a range that counts away
                // from its stop.
                n.push(a.text.trim().parse::<i64>().map_err(|_| {
                    Stop::Fatal(format!(
                        "{}: foreach(RANGE) needs integers",
                        self.here(head.line)
                    ))
                })?);
            }
            if !taint.is_empty() {
                return Err(Stop::Undecided(format!(
                    "{}: foreach(RANGE) bounds from an input",
                    self.here(head.line)
                )));
            }
            // CMake: a step of 0 (or none) counts towards the stop, up or down; a step that
            // counts away from it is an error.
            let (start, stop, step) = match n.as_slice() {
                [stop] => (0, *stop, 0),
                [start, stop] => (*start, *stop, 0),
                [start, stop, step] => (*start, *stop, *step),
                _ => {
                    return Err(Stop::Undecided(format!(
                        "{}: foreach(RANGE) with more than three bounds is not evaluated",
                        self.here(head.line)
                    )));
                }
            };
            // Written with signs, not comparisons with 0: a step is never 0 past this point.
            let towards = match start.cmp(&stop) {
                std::cmp::Ordering::Greater => -1,
                _ => 1,
            };
            let step = if step == 0 { towards } else { step };
            if step.signum() != towards && start != stop {
                return Err(Stop::Fatal(format!(
                    "{}: foreach(RANGE) from {start} to {stop} by {step}",
                    self.here(head.line)
                )));
            }
            let mut i = start;
            while (step.is_positive() && i <= stop) || (step.is_negative() && i >= stop) {
                self.step()?;
                items.push(Val::exact(i.to_string()));
                let Some(next) = i.checked_add(step) else {
                    break;
                };
                i = next;
            }
        } else if rest.first().is_some_and(|a| kw(a, "IN")) {
            let mut mode = "";
            let mut zip: Vec<Vec<Val>> = Vec::new();
            for a in rest.iter().skip(1) {
                if !a.quoted && matches!(a.text.as_str(), "LISTS" | "ITEMS" | "ZIP_LISTS") {
                    mode = if a.text == "LISTS" {
                        "LISTS"
                    } else if a.text == "ITEMS" {
                        "ITEMS"
                    } else {
                        "ZIP_LISTS"
                    };
                    continue;
                }
                match mode {
                    "ITEMS" => items.push(a.val()),
                    "LISTS" | "ZIP_LISTS" => {
                        // A variable, never a macro's argument (`ARGN` in a macro is the
                        // caller's variable).
                        let v = self.read_var(&a.text);
                        let mut taint = v.taint.clone();
                        taint.extend(a.taint.iter().cloned());
                        let list: Vec<Val> = list_items(&v.text)
                            .into_iter()
                            .map(|t| Val {
                                text: t,
                                taint: taint.clone(),
                                alts: crate::pin::cmake::value::Alts::new(),
                            })
                            .collect();
                        if mode == "LISTS" {
                            items.extend(list);
                        } else {
                            zip.push(list);
                        }
                    }
                    _ => {
                        return Err(Stop::Error(format!(
                            "{}: foreach(IN) without LISTS or ITEMS",
                            self.here(head.line)
                        )));
                    }
                }
            }
            if mode == "ZIP_LISTS" {
                return Err(Stop::Undecided(format!(
                    "{}: foreach(IN ZIP_LISTS) is not evaluated",
                    self.here(head.line)
                )));
            }
            vars.truncate(1);
        } else {
            items = rest.iter().map(Arg::val).collect();
        }
        let name = vars.first().cloned().unwrap_or_default();
        let saved = self.st.scopes.last().and_then(|s| s.get(&name)).cloned();
        let mut flow = Flow::Next;
        for item in items {
            self.step()?;
            self.set_var(&name, item);
            match self.block(body, false)? {
                Flow::Break => break,
                Flow::Return => {
                    flow = Flow::Return;
                    break;
                }
                _ => {}
            }
        }
        // The loop variable is restored after the loop (CMake 3.21+ behaviour and earlier alike
        // for normal variables).
        self.put_var(&name, saved);
        Ok(flow)
    }

    pub(super) fn call(&mut self, inv: &Invocation, def: Def) -> Result<Flow, Stop> {
        if self.st.depth >= MAX_DEPTH {
            return Err(Stop::Undecided(format!(
                "{}: calls and includes nested deeper than {MAX_DEPTH}",
                self.here(inv.line)
            )));
        }
        let args = self.expand_args(&inv.args)?;
        if args.len() < def.params.len() {
            return Err(Stop::Error(format!(
                "{}: {}() called with {} arguments, needs {}",
                self.here(inv.line),
                inv.name,
                args.len(),
                def.params.len()
            )));
        }
        let join =
            |xs: &[Arg]| Val::joined(xs.iter().map(Arg::val).collect::<Vec<_>>().iter(), ";");
        let mut frame: HashMap<String, Val> = HashMap::new();
        frame.insert("ARGC".into(), Val::exact(args.len().to_string()));
        frame.insert("ARGV".into(), join(&args));
        frame.insert(
            "ARGN".into(),
            join(args.get(def.params.len()..).unwrap_or_default()),
        );
        for (i, a) in args.iter().enumerate() {
            frame.insert(format!("ARGV{i}"), a.val());
        }
        for (p, a) in def.params.iter().zip(&args) {
            frame.insert(p.clone(), a.val());
        }
        self.st.depth += 1;
        let result = if def.is_macro {
            self.st.macro_frames.push(Some(Rc::new(frame)));
            let pushed = self.enter_body(&def);
            let r = self.block(&def.body, true);
            self.leave_body(pushed);
            self.st.macro_frames.pop();
            r
        } else {
            let before = self.st.clone();
            let r = match self.run_function(&def, &frame, Vec::new()) {
                Err(Stop::CallFork(..)) => {
                    self.st = before.clone();
                    self.call_paths(&def, &frame, Vec::new())
                }
                r => r,
            };
            match r {
                Err(Stop::NeedsFork | Stop::CallFork(..)) => {
                    self.st = before;
                    self.summarize(inv, &def, frame)
                }
                r => r.map(|_| Flow::Next),
            }
        };
        self.st.depth -= 1;
        result
    }

    /// Where a called body's statements lie: the file that defines the function or macro
    /// (the list file, `CMAKE_CURRENT_LIST_FILE`, stays the caller's, as in CMake). Whether
    /// anything was pushed, for [`Run::leave_body`].
    fn enter_body(&mut self, def: &Def) -> bool {
        let Some(caller) = self.st.dirs.last() else {
            return false;
        };
        if caller.code_file == def.file {
            return false;
        }
        let inner = Dirs {
            source_dir: caller.source_dir.clone(),
            list_file: caller.list_file.clone(),
            code_file: def.file.clone(),
        };
        self.st.dirs.push(Rc::new(inner));
        true
    }

    fn leave_body(&mut self, pushed: bool) {
        if pushed {
            self.st.dirs.pop();
        }
    }

    /// Run a function's body in its own scope; `forced`: the outcomes of its first decisions
    /// that guard `return()`/`break()`/`continue()` ([`Stop::CallFork`] past them).
    pub(super) fn run_function(
        &mut self,
        def: &Def,
        frame: &HashMap<String, Val>,
        forced: Vec<bool>,
    ) -> Result<Flow, Stop> {
        let mut scope = self.st.scopes.last().cloned().unwrap_or_default();
        scope.extend(frame.clone());
        scope.insert("CMAKE_CURRENT_FUNCTION", Val::exact(def.name.clone()));
        scope.insert(
            "CMAKE_CURRENT_FUNCTION_LIST_FILE",
            Val::exact(abs(&def.file)),
        );
        scope.insert(
            "CMAKE_CURRENT_FUNCTION_LIST_DIR",
            Val::exact(abs(parent_dir(&def.file))),
        );
        scope.insert(
            "CMAKE_CURRENT_FUNCTION_LIST_LINE",
            Val::exact(def.line.to_string()),
        );
        self.st.scopes.push(scope);
        self.st.macro_frames.push(None);
        self.summarizing += 1;
        let outer = std::mem::replace(&mut self.call_forced, (forced, 0));
        let pushed = self.enter_body(def);
        let r = self.block(&def.body, true);
        self.leave_body(pushed);
        self.call_forced = outer;
        self.summarizing -= 1;
        self.st.macro_frames.pop();
        self.st.scopes.pop();
        self.land_return();
        r.map(|_| Flow::Next)
    }

    /// A call whose body decides on an input where `return()`/`break()`/`continue()` hangs
    /// on it: the whole call runs under each outcome (the `forced` ones first) and the states
    /// it ends in are joined, as a joined `if()`'s sides are. Past [`MAX_CALL_FORKS`] such
    /// decisions in one call, [`Stop::CallFork`] (the caller summarises the call).
    pub(super) fn call_paths(
        &mut self,
        def: &Def,
        frame: &HashMap<String, Val>,
        forced: Vec<bool>,
    ) -> Result<Flow, Stop> {
        let start = self.st.clone();
        match self.run_function(def, frame, forced.clone()) {
            Err(Stop::CallFork(what, t)) if forced.len() < MAX_CALL_FORKS => {
                self.st = start;
                let side = |r: &mut Self, outcome: bool| {
                    let mut next = forced.clone();
                    next.push(outcome);
                    r.call_paths(def, frame, next)
                };
                self.join_two(&what, t, None, &side)
            }
            r => r,
        }
    }

    /// A function call whose body pinprobe cannot follow (a condition on an input guards a
    /// `return()`): what it sets in the caller (`set(... PARENT_SCOPE)`, `return(PROPAGATE)`)
    /// becomes unknown. A function with any other effect (cache, environment, fetches,
    /// includes, definitions, calls) makes the evaluation unknown.
    pub(super) fn summarize(
        &mut self,
        inv: &Invocation,
        def: &Def,
        frame: HashMap<String, Val>,
    ) -> Result<Flow, Stop> {
        let mark = Input::Opaque(format!(
            "{}: the result of {}()",
            self.here(inv.line),
            inv.name
        ));
        self.no_default = true;
        let mut names: Vec<Token> = Vec::new();
        let mut problem: Option<String> = None;
        collect_parent_writes(&def.body, &mut names, &mut problem, &self.st.commands, 0);
        if let Some(p) = problem {
            return Err(Stop::Undecided(format!(
                "{}: {}() depends on an input and {p}",
                self.here(inv.line),
                inv.name
            )));
        }
        // Expand the written names in the call's own scope.
        let mut scope = self.st.scopes.last().cloned().unwrap_or_default();
        scope.extend(frame);
        self.st.scopes.push(scope);
        self.st.macro_frames.push(None);
        let expanded = self.expand_args(&names);
        self.st.macro_frames.pop();
        self.st.scopes.pop();
        for name in expanded? {
            if !name.taint.is_empty() {
                return Err(Stop::Undecided(format!(
                    "{}: {}() sets a variable whose name depends on an input",
                    self.here(inv.line),
                    inv.name
                )));
            }
            let current = self
                .st
                .scopes
                .last()
                .and_then(|s| s.get(&name.text))
                .cloned();
            match current {
                Some(mut v) => {
                    v.taint.insert(mark.clone());
                    self.set_var(&name.text, v);
                }
                None => {
                    Rc::make_mut(&mut self.st.maybe)
                        .entry(name.text.clone())
                        .or_default()
                        .insert(mark.clone());
                }
            }
        }
        Ok(Flow::Next)
    }
}

/// A command name as CMake matches it (any case); most are written in lower case already,
/// and those are not copied.
pub(super) fn lowercase(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(name.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// Whether `return()`, `break()` or `continue()` appears in a block (outside function and
/// macro definitions, whose bodies run elsewhere).
fn has_control_flow(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Cmd(inv) => matches!(
            inv.name.to_ascii_lowercase().as_str(),
            "return" | "break" | "continue"
        ),
        Node::If(branches) => branches.iter().any(|(_, b)| has_control_flow(b)),
        Node::Foreach(_, b) | Node::While(_, b) => b.iter().any(|n| match n {
            Node::Cmd(inv) => inv.name.eq_ignore_ascii_case("return"),
            other => has_control_flow(std::slice::from_ref(other)),
        }),
        Node::Block(_, b) => has_control_flow(b),
        Node::Function(..) => false,
    })
}

/// The names a function body sets in its caller (`set(X ... PARENT_SCOPE)`,
/// `unset(X PARENT_SCOPE)`, `return(PROPAGATE X...)`), as written; `problem` says why the body
/// has effects beyond them.
fn collect_parent_writes(
    nodes: &[Node],
    names: &mut Vec<Token>,
    problem: &mut Option<String>,
    functions: &Shared<Def>,
    depth: usize,
) {
    for n in nodes {
        match n {
            Node::Cmd(inv) => {
                let name = inv.name.to_ascii_lowercase();
                let last_is = |k: &str| inv.args.last().is_some_and(|t| t.text == k);
                match name.as_str() {
                    "set" | "unset" => {
                        if inv.args.iter().any(|t| t.text == "CACHE")
                            || inv.args.first().is_some_and(|t| t.text.starts_with("ENV{"))
                        {
                            *problem = Some("sets a cache or environment variable".into());
                        } else if last_is("PARENT_SCOPE")
                            && let Some(t) = inv.args.first()
                        {
                            names.push(t.clone());
                        }
                    }
                    "return" => {
                        let mut propagate = false;
                        for t in &inv.args {
                            if t.text == "PROPAGATE" {
                                propagate = true;
                            } else if propagate {
                                names.push(t.clone());
                            }
                        }
                    }
                    "option"
                    | "include"
                    | "add_subdirectory"
                    | "cmake_language"
                    | "project"
                    | "cmake_policy"
                    | "cmake_minimum_required" => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    // Writing a file a later read could see; other forms only set variables
                    // of the function's scope.
                    n if writes::writes_files(n, inv.args.first().map(|t| t.text.as_str())) => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    n if is_fetch_command(n) => {
                        *problem = Some(format!("calls {}()", inv.name));
                    }
                    n if functions.contains_key(n) => {
                        // What a called function sets in its caller stays in this function's
                        // scope; only its other effects matter.
                        match functions.get(n) {
                            Some(def) if depth < 8 && !def.is_macro => {
                                let mut ignored = Vec::new();
                                collect_parent_writes(
                                    &def.body,
                                    &mut ignored,
                                    problem,
                                    functions,
                                    depth + 1,
                                );
                            }
                            _ => *problem = Some(format!("calls {}()", inv.name)),
                        }
                    }
                    _ => {}
                }
            }
            Node::If(branches) => {
                for (_, b) in branches {
                    collect_parent_writes(b, names, problem, functions, depth);
                }
            }
            Node::Foreach(_, b) | Node::While(_, b) | Node::Block(_, b) => {
                collect_parent_writes(b, names, problem, functions, depth)
            }
            Node::Function(..) => *problem = Some("defines a function".into()),
        }
    }
}
