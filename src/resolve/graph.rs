//! The commit graph of a clone: decoded commits cached once, and git's two-sided
//! "paint down to common" walk, which answers ancestry exactly while visiting only the commits
//! between the two ends (date order makes it short; running until every queued commit is
//! reachable from both ends makes it exact, whatever the clocks say).

use gix::ObjectId;
use gix::prelude::FindExt;
use std::cell::RefCell;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::rc::Rc;

/// What the walk needs of one commit.
pub(super) struct CommitInfo {
    pub time: i64,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
}

/// Reached from the "ancestor" side.
const FROM_A: u8 = 1;
/// Reached from the "descendant" side.
const FROM_D: u8 = 2;
const STALE: u8 = 4;

pub(super) struct Graph {
    commits: RefCell<HashMap<ObjectId, Option<Rc<CommitInfo>>>>,
    shallow: HashSet<ObjectId>,
    /// git's commit-graph file, when the clone has one: parents and dates without inflating
    /// commit objects. Commits it does not list are read from the object store.
    file: Option<gix::commitgraph::Graph>,
}

impl Graph {
    pub fn new(repo: &gix::Repository, shallow: HashSet<ObjectId>) -> Self {
        // A shallow clone's commit-graph may list parents the clone does not have.
        let file = if shallow.is_empty() {
            repo.commit_graph_if_enabled().ok().flatten()
        } else {
            None
        };
        Graph {
            commits: RefCell::new(HashMap::new()),
            shallow,
            file,
        }
    }

    fn listed_in_file(&self, id: &ObjectId) -> Option<CommitInfo> {
        let file = self.file.as_ref()?;
        let commit = file.commit_at(file.lookup(id)?);
        let parents = commit
            .iter_parents()
            .map(|p| p.ok().map(|p| file.id_at(p).to_owned()))
            .collect::<Option<Vec<_>>>()?;
        Some(CommitInfo {
            time: i64::try_from(commit.committer_timestamp()).unwrap_or(i64::MAX),
            tree: commit.root_tree_id().to_owned(),
            parents,
        })
    }

    pub fn is_shallow(&self) -> bool {
        !self.shallow.is_empty()
    }

    /// A decoded commit, `None` when it is not in the object store (or not a commit).
    pub fn commit(&self, repo: &gix::Repository, id: &ObjectId) -> Option<Rc<CommitInfo>> {
        if let Some(found) = self.commits.borrow().get(id) {
            return found.clone();
        }
        if let Some(info) = self.listed_in_file(id) {
            let info = Some(Rc::new(info));
            self.commits.borrow_mut().insert(*id, info.clone());
            return info;
        }
        let mut buf = Vec::new();
        let info = repo.objects.find_commit(id, &mut buf).ok().map(|c| {
            Rc::new(CommitInfo {
                time: c.time().map(|t| t.seconds).unwrap_or(0),
                tree: c.tree(),
                parents: if self.shallow.contains(id) {
                    Vec::new()
                } else {
                    c.parents().collect()
                },
            })
        });
        self.commits.borrow_mut().insert(*id, info.clone());
        info
    }

    /// Paint from `ancestors` (side A) and `descendant` (side D) until every queued commit is
    /// reachable from both, or until `target` is reached from D. Returns whether it was, and
    /// why the walk could not see all the history it needed, if it could not.
    pub fn paint(
        &self,
        repo: &gix::Repository,
        ancestors: &[ObjectId],
        descendant: ObjectId,
        target: &ObjectId,
    ) -> (bool, Option<String>) {
        let mut flags: HashMap<ObjectId, u8> = HashMap::new();
        let mut queue: BinaryHeap<(i64, ObjectId)> = BinaryHeap::new();
        let mut truncated = None;
        let push = |id: ObjectId,
                    add: u8,
                    flags: &mut HashMap<ObjectId, u8>,
                    queue: &mut BinaryHeap<(i64, ObjectId)>| {
            let f = flags.entry(id).or_insert(0);
            if *f & add == add {
                return;
            }
            *f |= add;
            let time = self.commit(repo, &id).map_or(i64::MIN, |c| c.time);
            queue.push((time, id));
        };
        for a in ancestors {
            push(*a, FROM_A, &mut flags, &mut queue);
        }
        push(descendant, FROM_D, &mut flags, &mut queue);
        while queue
            .iter()
            .any(|(_, id)| flags.get(id).is_some_and(|f| f & STALE == 0))
        {
            let Some((_, id)) = queue.pop() else { break };
            let mut f = flags.get(&id).copied().unwrap_or(0);
            if f & (FROM_A | FROM_D) == (FROM_A | FROM_D) {
                f |= STALE;
                flags.insert(id, f);
            }
            if f & FROM_D != 0 && id == *target {
                return (true, truncated);
            }
            match self.commit(repo, &id) {
                None => {
                    if f & STALE == 0 {
                        truncated.get_or_insert_with(|| {
                            format!("commit {id} is missing from the clone")
                        });
                    }
                }
                Some(info) => {
                    if info.parents.is_empty() && self.shallow.contains(&id) && f & STALE == 0 {
                        truncated
                            .get_or_insert_with(|| format!("history ends at {id} (shallow clone)"));
                    }
                    let carry = f & (FROM_A | FROM_D | STALE);
                    for p in &info.parents {
                        push(*p, carry, &mut flags, &mut queue);
                    }
                }
            }
        }
        let reached = flags.get(target).is_some_and(|f| f & FROM_D != 0);
        (reached, truncated)
    }

    /// Commits reachable from `tip` with a commit time at or after `since`, newest first,
    /// walking in date order and stopping below `since`; and why the walk was cut short.
    pub fn walk_since(
        &self,
        repo: &gix::Repository,
        tip: ObjectId,
        since: i64,
    ) -> (Vec<ObjectId>, Option<String>) {
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut queue: BinaryHeap<(i64, ObjectId)> = BinaryHeap::new();
        let mut out = Vec::new();
        let mut truncated = None;
        if let Some(info) = self.commit(repo, &tip) {
            queue.push((info.time, tip));
            seen.insert(tip);
        }
        while let Some((time, id)) = queue.pop() {
            if time < since {
                break;
            }
            out.push(id);
            let Some(info) = self.commit(repo, &id) else {
                truncated.get_or_insert_with(|| format!("commit {id} is missing from the clone"));
                continue;
            };
            if info.parents.is_empty() && self.shallow.contains(&id) {
                truncated.get_or_insert_with(|| format!("history ends at {id} (shallow clone)"));
            }
            for p in &info.parents {
                if seen.insert(*p) {
                    match self.commit(repo, p) {
                        Some(pi) => queue.push((pi.time, *p)),
                        None => {
                            truncated.get_or_insert_with(|| {
                                format!("commit {p} is missing from the clone")
                            });
                        }
                    }
                }
            }
        }
        (out, truncated)
    }
}
