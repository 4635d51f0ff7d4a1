//! One revision's runs shared with another's (`pinprobe diff`): the second revision's run
//! starts where the first revision's run of the same setup reached, after the last top-level
//! statement of the root `CMakeLists.txt` up to which everything that run consulted is the
//! same in both trees.
//!
//! A run is a function of what it consults: its setup's cache seed, its choices, the names
//! used as variables in the tree ([`Machine::var_names`]), the budgets, the relevance answers
//! it asks for ([`Run::asked`]), and every file read and listing asked of the view. While a
//! [`Sharing`] session records (the first revision), each run of the root's top-level
//! statements keeps, after each statement, its state ([`Saved`]) with what the statement
//! consulted ([`Access`], each answer kept as a SHA-256), the steps taken and the decisions
//! it added to [`Machine::relevant`]. When the session resumes (the second revision), a run
//! of a setup with the same seed, in an evaluation with the same variable names and budgets,
//! takes the longest kept prefix whose every decision its own choices take the same way,
//! whose every consulted access answers the same in its own tree (read through its own view),
//! whose relevance answers are the same, and whose steps stay within its budget; from there
//! on it runs as usual. Every step of the prefix would have run the same (each consults only
//! what was checked), so the state is the one a fresh run reaches there. A run that ended
//! at a statement (`return()`, a fatal error, a stop pinprobe cannot follow) ends there again.
//!
//! Below the top level, the statements of an included file (`include()`) are shared the same
//! way, wherever the call is: a recorded execution of the same parse that started from an
//! equal run state (the [`State`], the number of decisions and joins, the call being
//! summarised) and whose decisions, relevance answers, budget and accesses hold here is taken
//! as recorded ([`included`]). So in vLLM, where FlashAttention's file is included last, the
//! other external projects' files before it are not run again either. Each included
//! execution's accesses include the tree's listing (`if(EXISTS)` reads the machine's listing
//! without a note).
//!
//! What is consulted is seen where it enters: a view that records every access the
//! evaluation makes ([`Journal`]; an access other than `read`, `files_under` and `children`
//! is never replayed), and the machine's caches (a parsed file, the tree's listing, a glob),
//! which note their hits. Parsed files are shared too: the second revision takes the first's
//! parse of a file whose bytes are the same, so a function body is one value in both (a
//! state's functions compare by their body's identity).
//!
//! A session is per thread (the state is not `Send`): both revisions are evaluated on the
//! thread that opened it, the first one while it records, then [`Sharing::resume`]. A review
//! knows what differs between its revisions before recording ([`Changed`], read from the two
//! trees' objects): a run then keeps only the states the second revision can start from (the
//! one before the first statement that consults a changed file, and one in [`KEEP_EVERY`]),
//! and each state keeps only the relevance answers asked since the one before.

use super::{Decision, EmptyArgs, Flow, Machine, Node, Run, Seed, State, Stop};
use crate::view::recording::{self, Access as ViewAccess, Notes};
use crate::view::{Answer, View, digest_bytes, digest_names};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// One thing a run consulted in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Access {
    Read(String),
    FilesUnder(String),
    Children(String),
    /// A glob the machine answered ([`super::super::paths::glob`]), pattern and recursion.
    Glob(String, bool),
    /// Anything the journal cannot replay (another view method, an error).
    Unreplayable,
}

/// What a run had reached after a top-level statement (the fields of [`Run`] a statement
/// changes).
#[derive(Clone)]
struct Saved {
    trace: Vec<Decision>,
    /// `None` where the run is not resumed from here ([`Changed`]: a later statement is).
    st: Option<State>,
    no_default: bool,
    joins: u32,
    next_args: EmptyArgs,
    call_forced: (Vec<bool>, usize),
    /// The relevance answers the run asked for since the link before (all of them would
    /// make the links quadratic: a run of vLLM's asks thousands).
    asked: Vec<(String, bool)>,
    /// How many it asked since it started.
    asked_total: usize,
}

/// A run after its first `statements` top-level statements.
struct Link {
    statements: usize,
    /// Steps taken since the run started.
    steps: usize,
    /// What the statement consulted (the earlier ones' in the links before).
    accesses: Vec<Access>,
    /// The length of the run's journal here.
    journal: usize,
    /// Decisions the run added to [`Machine::relevant`] so far.
    added: Rc<Vec<String>>,
    saved: Saved,
    /// How the run ended at this statement, when it did.
    end: Option<End>,
}

/// How a run ended at a top-level statement: `return()`, or a stop that carries only text
/// (one that carries an I/O error is not kept).
#[derive(Clone)]
enum End {
    Returned,
    Fatal(String),
    Undecided(String),
    Syntax {
        file: String,
        line: u32,
        message: String,
    },
}

impl End {
    fn of(result: &Result<Flow, Stop>) -> Option<Option<End>> {
        Some(match result {
            Ok(Flow::Next) => None,
            Ok(_) => Some(End::Returned),
            Err(Stop::Fatal(m)) => Some(End::Fatal(m.clone())),
            Err(Stop::Undecided(m)) => Some(End::Undecided(m.clone())),
            Err(Stop::Syntax {
                file,
                line,
                message,
            }) => Some(End::Syntax {
                file: file.clone(),
                line: *line,
                message: message.clone(),
            }),
            Err(_) => return None,
        })
    }

    fn result(self) -> Result<(), Stop> {
        match self {
            End::Returned => Ok(()),
            End::Fatal(m) => Err(Stop::Fatal(m)),
            End::Undecided(m) => Err(Stop::Undecided(m)),
            End::Syntax {
                file,
                line,
                message,
            } => Err(Stop::Syntax {
                file,
                line,
                message,
            }),
        }
    }
}

/// One recorded run: its setup's seed and its links, in order.
struct Chain {
    seed: Vec<(String, Seed)>,
    links: Vec<Link>,
}

/// A parsed file, with the digest of its bytes.
type Parsed = (Answer, Rc<Vec<Node>>);

/// What a run consults of its machine besides the tree and the relevance answers.
#[derive(PartialEq)]
struct Settings {
    var_names: HashSet<String>,
    max_steps: usize,
    fork_all: bool,
}

/// What one recorded evaluation keeps.
pub(in crate::pin::cmake) struct Shelf {
    /// The machine's variable names and budgets (set when it attaches).
    settings: RefCell<Option<Settings>>,
    /// The answer of every access the evaluation made.
    answers: RefCell<FxHashMap<Access, Answer>>,
    /// Accesses since the last link of the run being recorded.
    journal: RefCell<Vec<Access>>,
    /// Parsed files, with the digest of their bytes.
    parsed: RefCell<HashMap<String, Parsed>>,
    chains: RefCell<Vec<Chain>>,
    /// Executions of included files, by the identity of the file's parse.
    calls: RefCell<HashMap<*const Vec<Node>, Vec<Call>>>,
}

impl Shelf {
    /// The distinct accesses of the run's journal from `from` on.
    fn since(&self, from: usize) -> Vec<Access> {
        let journal = self.journal.borrow();
        let mut seen = FxHashSet::default();
        journal
            .get(from..)
            .unwrap_or_default()
            .iter()
            .filter(|a| seen.insert(*a))
            .cloned()
            .collect()
    }

    fn keep(&self, access: Access, answer: Option<Answer>) {
        match answer {
            Some(a) => {
                let mut answers = self.answers.borrow_mut();
                // One access answered two ways (a view that changed under the run) cannot be
                // replayed.
                if answers
                    .insert(access.clone(), a)
                    .is_some_and(|old| old != a)
                {
                    self.journal.borrow_mut().push(Access::Unreplayable);
                }
                self.journal.borrow_mut().push(access);
            }
            None => self.journal.borrow_mut().push(Access::Unreplayable),
        }
    }
}

/// The view a recording evaluation reads through: answers as `inner` does, and notes each
/// access with its answer in the shelf.
pub(in crate::pin::cmake) type Journal<'a> = recording::Recording<'a, Rc<Shelf>>;

impl Notes for Rc<Shelf> {
    fn note(&self, noted: Option<(ViewAccess, Answer)>) {
        match noted {
            Some((access, answer)) => Shelf::keep(self, access.into(), Some(answer)),
            None => Shelf::keep(self, Access::Unreplayable, None),
        }
    }
}

impl From<ViewAccess> for Access {
    fn from(access: ViewAccess) -> Access {
        match access {
            ViewAccess::Read(p) => Access::Read(p),
            ViewAccess::FilesUnder(d) => Access::FilesUnder(d),
            ViewAccess::Children(d) => Access::Children(d),
        }
    }
}

/// What differs between the two revisions, when the review knows it before recording: the
/// paths whose contents differ (added, removed or changed), and whether any was added or
/// removed (then every listing may differ). A statement that consults none of them answers
/// the same at HEAD, so a run is resumed after it rather than before: the state before it
/// is not kept (one in [`KEEP_EVERY`] is, in case HEAD's choices take a decision otherwise).
/// A prediction only: what is resumed is checked as ever.
#[derive(Debug, Clone, Default)]
pub struct Changed {
    pub paths: HashSet<String>,
    pub listing: bool,
}

impl Changed {
    fn touches(&self, access: &Access) -> bool {
        match access {
            Access::Read(p) => self.paths.contains(p),
            Access::FilesUnder(_) | Access::Children(_) | Access::Glob(..) => self.listing,
            Access::Unreplayable => true,
        }
    }
}

/// Where [`Changed`] is known, the state after one top-level statement in this many is kept
/// whatever the next statement consults.
const KEEP_EVERY: usize = 16;

/// The session of this thread.
struct Session {
    resuming: bool,
    changed: Option<Rc<Changed>>,
    shelves: Vec<Rc<Shelf>>,
    /// Runs that started from a recorded prefix, and the top-level statements they skipped.
    resumed: usize,
    skipped: usize,
    /// Executions of included files taken as recorded.
    calls: usize,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// A session sharing the CMake evaluations of two revisions on this thread: evaluations made
/// while it records are kept; after [`Sharing::resume`], each evaluation starts its runs from
/// what they kept where everything consulted is the same. Ends when dropped.
pub struct Sharing {
    /// Not `Send`: the session is this thread's.
    _thread: std::marker::PhantomData<Rc<()>>,
}

impl Sharing {
    /// Record the evaluations this thread makes from now on.
    pub fn record() -> Sharing {
        Sharing::record_for(None)
    }

    /// [`Sharing::record`], knowing what differs in the revision that will resume
    /// ([`Changed`]): only the states a run of it can resume from are kept.
    pub fn record_for(changed: Option<Changed>) -> Sharing {
        SESSION.with(|s| {
            *s.borrow_mut() = Some(Session {
                resuming: false,
                changed: changed.map(Rc::new),
                shelves: Vec::new(),
                resumed: 0,
                skipped: 0,
                calls: 0,
            });
        });
        Sharing {
            _thread: std::marker::PhantomData,
        }
    }

    /// Stop recording; the evaluations from now on start from the recorded ones.
    pub fn resume(&self) {
        SESSION.with(|s| {
            if let Some(session) = s.borrow_mut().as_mut() {
                session.resuming = true;
            }
        });
    }

    /// Runs started from a recorded prefix so far, the top-level statements they skipped, and
    /// the executions of included files taken as recorded.
    pub fn shared(&self) -> (usize, usize, usize) {
        SESSION.with(|s| {
            s.borrow().as_ref().map_or((0, 0, 0), |session| {
                (session.resumed, session.skipped, session.calls)
            })
        })
    }
}

impl Drop for Sharing {
    fn drop(&mut self) {
        SESSION.with(|s| *s.borrow_mut() = None);
    }
}

/// The journal an evaluation starting now reads through, when this thread records.
pub(in crate::pin::cmake) fn journal(view: &dyn View) -> Option<Journal<'_>> {
    SESSION.with(|s| {
        let recording = s.borrow().as_ref().is_some_and(|session| !session.resuming);
        recording.then(|| {
            recording::Recording::new(
                view,
                Rc::new(Shelf {
                    settings: RefCell::new(None),
                    answers: RefCell::default(),
                    journal: RefCell::default(),
                    parsed: RefCell::default(),
                    chains: RefCell::default(),
                    calls: RefCell::default(),
                }),
            )
        })
    })
}

/// A machine's part in the session.
#[derive(Default)]
pub(super) enum Role {
    #[default]
    None,
    Record(Rc<Shelf>, Recording),
    Resume(Box<Resume>),
}

/// The run being recorded.
#[derive(Default)]
pub(super) struct Recording {
    seed: Vec<(String, Seed)>,
    steps: usize,
    /// What differs at the revision that will resume, when known.
    changed: Option<Rc<Changed>>,
    /// [`Machine::relevant`] when the run started.
    relevant: HashSet<String>,
}

/// A resuming machine: the shelf it starts from, and what it found of its own tree.
pub(super) struct Resume {
    shelf: Rc<Shelf>,
    /// Whether each access answers here as it did there.
    same: FxHashMap<Access, bool>,
    /// The seed of the run being made.
    seed: Vec<(String, Seed)>,
}

fn settings(m: &Machine<'_>) -> Settings {
    Settings {
        var_names: m.var_names.clone(),
        max_steps: m.max_steps,
        fork_all: m.fork_all,
    }
}

/// Attach a machine (its variable names and budgets set) to this thread's session: it records
/// through `journal`, or resumes from the first recorded evaluation with the same variable
/// names and budgets.
pub(in crate::pin::cmake) fn attach(m: &mut Machine<'_>, journal: Option<&Journal<'_>>) {
    let mine = settings(m);
    SESSION.with(|s| {
        let mut s = s.borrow_mut();
        let Some(session) = s.as_mut() else {
            return;
        };
        if let Some(j) = journal {
            // The listing the machine was given (read past the journal): its answer.
            if let Some(files) = &m.all_files {
                j.notes
                    .answers
                    .borrow_mut()
                    .insert(Access::FilesUnder(String::new()), digest_names(files));
            }
            *j.notes.settings.borrow_mut() = Some(mine);
            session.shelves.push(j.notes.clone());
            m.share = Role::Record(
                j.notes.clone(),
                Recording {
                    changed: session.changed.clone(),
                    ..Recording::default()
                },
            );
        } else if session.resuming {
            let found = session
                .shelves
                .iter()
                .find(|sh| sh.settings.borrow().as_ref() == Some(&mine));
            if let Some(shelf) = found {
                // The listing the machine was given answers for itself.
                let mut same = FxHashMap::default();
                if let Some(files) = &m.all_files {
                    let recorded = shelf
                        .answers
                        .borrow()
                        .get(&Access::FilesUnder(String::new()))
                        .copied();
                    same.insert(
                        Access::FilesUnder(String::new()),
                        recorded == Some(digest_names(files)),
                    );
                }
                m.share = Role::Resume(Box::new(Resume {
                    shelf: shelf.clone(),
                    same,
                    seed: Vec::new(),
                }));
            }
        }
    });
}

impl Machine<'_> {
    /// A run starts with this seed (before it reads anything).
    pub(super) fn share_begin(&mut self, seed: &[(String, Seed)]) {
        let steps = self.steps;
        match &mut self.share {
            Role::None => {}
            Role::Record(shelf, rec) => {
                shelf.journal.borrow_mut().clear();
                *rec = Recording {
                    seed: seed.to_vec(),
                    steps,
                    relevant: self.relevant.clone(),
                    changed: rec.changed.take(),
                };
            }
            Role::Resume(r) => r.seed = seed.to_vec(),
        }
    }

    /// A cache answered `access` (the view was asked the first time).
    pub(super) fn share_hit(&self, access: Access) {
        if let Role::Record(shelf, _) = &self.share {
            shelf.journal.borrow_mut().push(access);
        }
    }

    /// A glob answered, from the cache or not.
    pub(super) fn share_glob(&self, pattern: &str, recurse: bool, found: &[String]) {
        if let Role::Record(shelf, _) = &self.share {
            shelf.keep(
                Access::Glob(pattern.to_string(), recurse),
                Some(digest_names(found)),
            );
        }
    }

    /// The recorded parse of `path` when its bytes are the same here (resuming), and keep
    /// this machine's parse (recording).
    pub(super) fn share_parsed(&self, path: &str, bytes: &[u8]) -> Option<Rc<Vec<Node>>> {
        match &self.share {
            Role::Resume(r) => {
                let parsed = r.shelf.parsed.borrow();
                let (digest, nodes) = parsed.get(path)?;
                (*digest == digest_bytes(Some(bytes))).then(|| nodes.clone())
            }
            _ => None,
        }
    }

    pub(super) fn share_keep_parse(&self, path: &str, bytes: &[u8], nodes: &Rc<Vec<Node>>) {
        if let Role::Record(shelf, _) = &self.share {
            shelf
                .parsed
                .borrow_mut()
                .insert(path.to_string(), (digest_bytes(Some(bytes)), nodes.clone()));
        }
    }
}

/// Run the top-level statements of the root `CMakeLists.txt`: from a recorded prefix where
/// one holds (resuming), keeping each statement's state (recording).
pub(super) fn top_level(run: &mut Run<'_, '_>, nodes: &[Node]) -> Result<(), Stop> {
    let start = match run.m.share {
        Role::Resume(_) => match resume(run) {
            Resumed::At(at) => at,
            Resumed::Ended(end) => return end.result(),
        },
        _ => 0,
    };
    let mut links = Vec::new();
    let mut result = Ok(());
    for i in start..nodes.len() {
        let r = run.block(nodes.get(i..=i).unwrap_or_default(), false);
        let end = End::of(&r);
        if let Some(end) = end.clone() {
            record(run, i + 1, &mut links, end);
        }
        match r {
            Ok(Flow::Next) => {}
            Ok(_) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    if let Role::Record(shelf, rec) = &run.m.share
        && !links.is_empty()
    {
        shelf.chains.borrow_mut().push(Chain {
            seed: rec.seed.clone(),
            links,
        });
    }
    result
}

/// Keep the run's state after its first `statements` top-level statements.
fn record(run: &Run<'_, '_>, statements: usize, links: &mut Vec<Link>, end: Option<End>) {
    let Role::Record(shelf, rec) = &run.m.share else {
        return;
    };
    // Over the budget: where a run with fewer steps before it would stop is not known.
    if run.m.steps > run.m.max_steps {
        return;
    }
    // A run resumes at the latest before a statement that consults what changed: after
    // one, no later state is of use.
    if let Some(changed) = &rec.changed
        && links
            .iter()
            .any(|l| l.accesses.iter().any(|a| changed.touches(a)))
    {
        return;
    }
    let accesses = shelf.since(links.last().map_or(0, |l| l.journal));
    if let Some(changed) = &rec.changed
        && !accesses.iter().any(|a| changed.touches(a))
        && let Some(before) = links.last_mut()
        && before.statements % KEEP_EVERY != 0
    {
        // This statement consults nothing that changed: a run resumes after it, not before.
        before.saved.st = None;
    }
    let added = match links.last() {
        Some(l) if run.m.relevant.len() == rec.relevant.len() + l.added.len() => l.added.clone(),
        None if run.m.relevant.len() == rec.relevant.len() => Rc::default(),
        // The run added decisions (a set only grows during a run).
        _ => {
            let mut added: Vec<String> = run
                .m
                .relevant
                .iter()
                .filter(|w| !rec.relevant.contains(*w))
                .cloned()
                .collect();
            added.sort();
            Rc::new(added)
        }
    };
    let asked_before = links.last().map_or(0, |l| l.saved.asked_total);
    links.push(Link {
        statements,
        steps: run.m.steps.saturating_sub(rec.steps),
        accesses,
        journal: shelf.journal.borrow().len(),
        added,
        saved: Saved {
            trace: run.trace.clone(),
            st: Some(run.st.clone()),
            no_default: run.no_default,
            joins: run.joins,
            next_args: run.next_args.clone(),
            call_forced: run.call_forced.clone(),
            asked: run.asked.get(asked_before..).unwrap_or_default().to_vec(),
            asked_total: run.asked.len(),
        },
        end,
    });
}

/// Where a resumed run goes on.
enum Resumed {
    /// At this top-level statement.
    At(usize),
    /// Nowhere: it ended as recorded.
    Ended(End),
}

/// Start a resuming run from the longest recorded prefix that holds for it.
fn resume(run: &mut Run<'_, '_>) -> Resumed {
    let Role::Resume(r) = &mut run.m.share else {
        return Resumed::At(0);
    };
    let shelf = r.shelf.clone();
    let chains = shelf.chains.borrow();
    let view = run.m.view;
    let (steps, max_steps) = (run.m.steps, run.m.max_steps);
    // The best link so far: (chain, link, statements).
    let mut best: Option<(usize, usize, usize)> = None;
    for (c, chain) in chains.iter().enumerate() {
        let most = chain.links.last().map_or(0, |l| l.statements);
        if chain.seed != r.seed || best.is_some_and(|(_, _, n)| n >= most) {
            continue;
        }
        let mut decided = 0;
        for (l, link) in chain.links.iter().enumerate() {
            // Every decision of the statement is taken the same way by this run's choices
            // (the value computed is the same: everything before it was).
            let trace = &link.saved.trace;
            let same_way = trace
                .iter()
                .enumerate()
                .skip(decided)
                .all(|(k, d)| run.choices.get(k).copied().unwrap_or(d.computed) == d.outcome);
            decided = trace.len();
            // Each relevance answer is this machine's: true for a decision the run itself
            // added before asking (the same run adds it here too), else the machine's now.
            let answers_same = link.saved.asked.iter().all(|(what, was)| {
                (*was && link.added.contains(what)) || run.m.relevant.contains(what) == *was
            });
            let within_budget = steps.saturating_add(link.steps) <= max_steps;
            let holds = same_way
                && answers_same
                && within_budget
                && link
                    .accesses
                    .iter()
                    .all(|a| same(&mut r.same, &shelf, view, a));
            if !holds {
                break;
            }
            if link.saved.st.is_some() && best.is_none_or(|(_, _, n)| link.statements > n) {
                best = Some((c, l, link.statements));
            }
        }
    }
    let Some((chain, link)) = best.and_then(|(c, l, _)| {
        let chain = chains.get(c)?;
        Some((chain, chain.links.get(l)?))
    }) else {
        return Resumed::At(0);
    };
    let asked: Vec<(String, bool)> = chain
        .links
        .iter()
        .take_while(|k| k.statements <= link.statements)
        .flat_map(|k| k.saved.asked.iter().cloned())
        .collect();
    let s = link.saved.clone();
    let Some(st) = s.st else {
        return Resumed::At(0);
    };
    run.trace = s.trace;
    run.st = st;
    run.no_default = s.no_default;
    run.joins = s.joins;
    run.next_args = s.next_args;
    run.call_forced = s.call_forced;
    run.asked = asked;
    run.m.steps = steps.saturating_add(link.steps);
    run.m.relevant.extend(link.added.iter().cloned());
    let skipped = link.statements;
    let end = link.end.clone();
    drop(chains);
    SESSION.with(|s| {
        if let Some(session) = s.borrow_mut().as_mut() {
            session.resumed += 1;
            session.skipped += skipped;
        }
    });
    match end {
        Some(end) => Resumed::Ended(end),
        None => Resumed::At(skipped),
    }
}

/// Whether `access` answers in `view` as it did when recorded (each access asked once).
fn same(
    known: &mut FxHashMap<Access, bool>,
    shelf: &Shelf,
    view: &dyn View,
    access: &Access,
) -> bool {
    if let Some(known) = known.get(access) {
        return *known;
    }
    let recorded = shelf.answers.borrow().get(access).copied();
    let now = match access {
        Access::Read(p) => view.read(p).ok().map(|b| digest_bytes(b.as_deref())),
        Access::FilesUnder(d) => view.files_under(d).ok().map(|n| digest_names(&n)),
        Access::Children(d) => view.children(d).ok().map(|n| digest_names(&n)),
        Access::Glob(p, recurse) => super::super::paths::glob(view, p, *recurse)
            .ok()
            .map(|n| digest_names(&n)),
        Access::Unreplayable => None,
    };
    let answer = recorded.is_some() && now == recorded;
    known.insert(access.clone(), answer);
    answer
}

/// What a run was when it started the statements of an included file: everything the
/// execution of those statements reads of the run besides its choices and the relevance
/// answers.
#[derive(Clone)]
struct Entry {
    st: State,
    decided: usize,
    joins: u32,
    no_default: bool,
    summarizing: usize,
    call_forced: (Vec<bool>, usize),
}

impl Entry {
    fn of(run: &Run<'_, '_>) -> Entry {
        Entry {
            st: run.st.clone(),
            decided: run.trace.len(),
            joins: run.joins,
            no_default: run.no_default,
            summarizing: run.summarizing,
            call_forced: run.call_forced.clone(),
        }
    }

    /// Whether `run` (with `decided` decisions) is where this entry was, but for the state
    /// (compared last: the costliest).
    fn holds_parts(&self, decided: usize, run: &Run<'_, '_>) -> bool {
        self.decided == decided
            && self.joins == run.joins
            && self.no_default == run.no_default
            && self.summarizing == run.summarizing
            && self.call_forced == run.call_forced
            && matches!(run.next_args, EmptyArgs::Decide)
    }
}

/// How the statements of an included file ended: a flow, or a stop that carries only text.
#[derive(Clone)]
enum Ending {
    Next,
    Break,
    Continue,
    Return,
    Fatal(String),
    Error(String),
    Undecided(String),
    NeedsFork,
}

impl Ending {
    fn of(result: &Result<Flow, Stop>) -> Option<Ending> {
        Some(match result {
            Ok(Flow::Next) => Ending::Next,
            Ok(Flow::Break) => Ending::Break,
            Ok(Flow::Continue) => Ending::Continue,
            Ok(Flow::Return) => Ending::Return,
            Err(Stop::Fatal(m)) => Ending::Fatal(m.clone()),
            Err(Stop::Error(m)) => Ending::Error(m.clone()),
            Err(Stop::Undecided(m)) => Ending::Undecided(m.clone()),
            Err(Stop::NeedsFork) => Ending::NeedsFork,
            Err(_) => return None,
        })
    }

    fn result(self) -> Result<Flow, Stop> {
        match self {
            Ending::Next => Ok(Flow::Next),
            Ending::Break => Ok(Flow::Break),
            Ending::Continue => Ok(Flow::Continue),
            Ending::Return => Ok(Flow::Return),
            Ending::Fatal(m) => Err(Stop::Fatal(m)),
            Ending::Error(m) => Err(Stop::Error(m)),
            Ending::Undecided(m) => Err(Stop::Undecided(m)),
            Ending::NeedsFork => Err(Stop::NeedsFork),
        }
    }
}

/// One recorded execution of an included file's statements: where it started, what it did
/// to the run and the machine, what it consulted, and how it ended.
struct Call {
    entry: Entry,
    st: State,
    joins: u32,
    no_default: bool,
    call_forced: (Vec<bool>, usize),
    next_args: EmptyArgs,
    /// The decisions it took, after the entry's.
    decisions: Vec<Decision>,
    /// The relevance answers it asked for.
    asked: Vec<(String, bool)>,
    /// Decisions it added to [`Machine::relevant`].
    added: Vec<String>,
    steps: usize,
    accesses: Vec<Access>,
    ending: Ending,
}

/// Run the statements of an included file (`include()`): as recorded, where an execution of
/// the same parse was recorded from the same run state and everything it consulted is the
/// same here (resuming); keeping the execution (recording).
pub(super) fn included(run: &mut Run<'_, '_>, nodes: &Rc<Vec<Node>>) -> Result<Flow, Stop> {
    match &run.m.share {
        Role::None => run.block(nodes, false),
        Role::Resume(_) => match replay(run, nodes) {
            Some(result) => result,
            None => run.block(nodes, false),
        },
        Role::Record(shelf, _) => {
            let shelf = shelf.clone();
            let entry = Entry::of(run);
            let from = shelf.journal.borrow().len();
            let (steps, asked) = (run.m.steps, run.asked.len());
            // The decisions found relevant before: the run's at its start where it has added
            // none since (the set only grows), else a copy.
            let relevant_len = run.m.relevant.len();
            let relevant = match &run.m.share {
                Role::Record(_, rec) if rec.relevant.len() == relevant_len => None,
                _ => Some(run.m.relevant.clone()),
            };
            // A replay starts with arguments expanded as usual ([`Entry::holds_parts`]).
            let usual = matches!(run.next_args, EmptyArgs::Decide);
            let result = run.block(nodes, false);
            let ending = Ending::of(&result);
            // The decisions it added (none where the set did not grow).
            let added = match (&relevant, &run.m.share) {
                _ if run.m.relevant.len() == relevant_len => Some(Vec::new()),
                (Some(before), _)
                | (
                    None,
                    Role::Record(
                        _,
                        Recording {
                            relevant: before, ..
                        },
                    ),
                ) => Some(
                    run.m
                        .relevant
                        .iter()
                        .filter(|w| !before.contains(*w))
                        .cloned()
                        .collect(),
                ),
                (None, _) => None,
            };
            if let Some(ending) = ending.filter(|_| usual && run.m.steps <= run.m.max_steps)
                && let Some(added) = added
            {
                let call = Call {
                    st: run.st.clone(),
                    joins: run.joins,
                    no_default: run.no_default,
                    call_forced: run.call_forced.clone(),
                    next_args: run.next_args.clone(),
                    decisions: run.trace.get(entry.decided..).unwrap_or_default().to_vec(),
                    asked: run.asked.get(asked..).unwrap_or_default().to_vec(),
                    added,
                    steps: run.m.steps - steps,
                    // `if(EXISTS)` asks the machine's listing of the tree without a note.
                    accesses: std::iter::once(Access::FilesUnder(String::new()))
                        .chain(shelf.since(from))
                        .collect(),
                    entry,
                    ending,
                };
                shelf
                    .calls
                    .borrow_mut()
                    .entry(Rc::as_ptr(nodes))
                    .or_default()
                    .push(call);
            }
            result
        }
    }
}

/// The recorded execution of `nodes` that holds for `run`, applied.
fn replay(run: &mut Run<'_, '_>, nodes: &Rc<Vec<Node>>) -> Option<Result<Flow, Stop>> {
    let (shelf, mut known) = match &mut run.m.share {
        Role::Resume(r) => (r.shelf.clone(), std::mem::take(&mut r.same)),
        _ => return None,
    };
    let calls = shelf.calls.borrow();
    let view = run.m.view;
    let decided = run.trace.len();
    let found = calls.get(&Rc::as_ptr(nodes)).and_then(|candidates| {
        candidates.iter().find(|c| {
            c.entry.holds_parts(decided, run)
                && c.decisions.iter().enumerate().all(|(k, d)| {
                    run.choices.get(decided + k).copied().unwrap_or(d.computed) == d.outcome
                })
                && c.asked.iter().all(|(what, was)| {
                    (*was && c.added.contains(what)) || run.m.relevant.contains(what) == *was
                })
                && run.m.steps.saturating_add(c.steps) <= run.m.max_steps
                && c.entry.st == run.st
                && c.accesses.iter().all(|a| same(&mut known, &shelf, view, a))
        })
    });
    if let Role::Resume(r) = &mut run.m.share {
        r.same = known;
    }
    let found = found?;
    run.st = found.st.clone();
    run.joins = found.joins;
    run.no_default = found.no_default;
    run.call_forced = found.call_forced.clone();
    run.next_args = found.next_args.clone();
    run.trace.extend(found.decisions.iter().cloned());
    run.asked.extend(found.asked.iter().cloned());
    run.m.steps = run.m.steps.saturating_add(found.steps);
    run.m.relevant.extend(found.added.iter().cloned());
    let ending = found.ending.clone();
    drop(calls);
    SESSION.with(|s| {
        if let Some(session) = s.borrow_mut().as_mut() {
            session.calls += 1;
        }
    });
    Some(ending.result())
}
