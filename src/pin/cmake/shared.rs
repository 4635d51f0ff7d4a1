//! Copy-on-write maps for a run's state: a joined decision runs both sides from one state, and
//! a function call or directory pushes a scope that starts as its parent's. Each is a clone of
//! a pointer here; a map is copied only when one of its holders first changes it, and a join
//! skips maps both sides still share.

use std::collections::HashMap;
use std::rc::Rc;

/// A map from names, shared until changed.
#[derive(Debug, Clone)]
pub(super) struct Shared<V>(Rc<HashMap<String, V>>);

impl<V> Default for Shared<V> {
    fn default() -> Self {
        Shared(Rc::new(HashMap::new()))
    }
}

impl<V: PartialEq> PartialEq for Shared<V> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<V> std::ops::Deref for Shared<V> {
    type Target = HashMap<String, V>;
    fn deref(&self) -> &HashMap<String, V> {
        &self.0
    }
}

impl<V> FromIterator<(String, V)> for Shared<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        Shared(Rc::new(iter.into_iter().collect()))
    }
}

impl<V: Clone> Shared<V> {
    /// The map to change: copied first when another state still holds it.
    pub fn make_mut(&mut self) -> &mut HashMap<String, V> {
        Rc::make_mut(&mut self.0)
    }

    pub fn insert(&mut self, name: String, value: V) -> Option<V> {
        self.make_mut().insert(name, value)
    }

    /// Remove a name; an absent one copies nothing.
    pub fn remove(&mut self, name: &str) -> Option<V> {
        if !self.0.contains_key(name) {
            return None;
        }
        self.make_mut().remove(name)
    }

    pub fn extend(&mut self, entries: impl IntoIterator<Item = (String, V)>) {
        self.make_mut().extend(entries);
    }

    /// Whether both are the same map, unchanged by either since they were one.
    pub fn same(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// The map itself (copied only when still shared).
    pub fn into_map(self) -> HashMap<String, V> {
        Rc::unwrap_or_clone(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_until_one_side_changes() {
        let mut a: Shared<u32> = [("x".to_string(), 1)].into_iter().collect();
        let mut b = a.clone();
        assert!(a.same(&b));
        // Removing an absent name changes nothing and copies nothing.
        assert_eq!(b.remove("y"), None);
        assert!(a.same(&b));
        b.insert("y".into(), 2);
        assert!(!a.same(&b));
        assert_eq!(a.get("y"), None, "the other holder is untouched");
        assert_eq!(b.get("y"), Some(&2));
        assert_ne!(a, b);
        b.remove("y");
        assert_eq!(a, b, "equal contents are equal maps");
        assert!(!a.same(&b));
        a.extend([("z".to_string(), 3)]);
        assert_eq!(a.clone().into_map().len(), 2);
    }
}
