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

/// The outcome of a paint walk.
pub(super) struct Paint {
    flags: HashMap<ObjectId, u8>,
    /// Why the walk could not see all the history it needed, if it could not.
    pub truncated: Option<String>,
}

impl Paint {
    /// Commits reachable from the descendant side and not from the ancestor side.
    pub fn only_descendant_side(&self) -> Vec<ObjectId> {
        self.flags
            .iter()
            .filter(|(_, f)| **f & (FROM_A | FROM_D) == FROM_D)
            .map(|(id, _)| *id)
            .collect()
    }
}

pub(super) struct Graph {
    commits: RefCell<HashMap<ObjectId, Option<Rc<CommitInfo>>>>,
    shallow: HashSet<ObjectId>,
}

impl Graph {
    pub fn new(shallow: HashSet<ObjectId>) -> Self {
        Graph {
            commits: RefCell::new(HashMap::new()),
            shallow,
        }
    }

    pub fn is_shallow(&self) -> bool {
        !self.shallow.is_empty()
    }

    /// A decoded commit, `None` when it is not in the object store (or not a commit).
    pub fn commit(&self, repo: &gix::Repository, id: &ObjectId) -> Option<Rc<CommitInfo>> {
        if let Some(found) = self.commits.borrow().get(id) {
            return found.clone();
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
    /// reachable from both. With `stop_at`, return as soon as that commit is reached from D.
    pub fn paint(
        &self,
        repo: &gix::Repository,
        ancestors: &[ObjectId],
        descendant: ObjectId,
        stop_at: Option<&ObjectId>,
    ) -> (Paint, bool) {
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
            if f & FROM_D != 0 && stop_at == Some(&id) {
                return (Paint { flags, truncated }, true);
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
        let reached = stop_at.is_some_and(|s| flags.get(s).is_some_and(|f| f & FROM_D != 0));
        (Paint { flags, truncated }, reached)
    }
}
