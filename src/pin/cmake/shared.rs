//! Copy-on-write maps for a run's state: a joined decision runs both sides from one state, and
//! a function call or directory pushes a scope that starts as its parent's. A map is a shared
//! base plus the few names changed since (a layer, shared too until a holder changes it):
//! cloning it copies nothing, the base is copied only when the layer is folded into it, and a
//! join compares only the names either side changed while both still share the base.

use std::collections::HashMap;
use std::rc::Rc;

/// Names are shared (a layer copy copies no name) and hashed with Fx (short names, no
/// untrusted-key flooding concern worth SipHash's cost at every variable read).
type Map<T> = HashMap<Rc<str>, T, rustc_hash::FxBuildHasher>;

/// Names changed before the layer is folded into the base.
const MAX_LAYER: usize = 32;

/// A map from names, shared until changed. Values are held behind `Rc`, so copying a layer or
/// a base (a write after a clone, a fold) copies no value.
#[derive(Debug, Clone)]
pub(super) struct Shared<V> {
    base: Rc<Map<Rc<V>>>,
    /// Names changed since the base: a value, or `None` where removed. Shared too (a join
    /// or a call clones the whole state; most clones are dropped unchanged).
    layer: Rc<Map<Option<Rc<V>>>>,
}

impl<V> Default for Shared<V> {
    fn default() -> Self {
        Shared {
            base: Rc::default(),
            layer: Rc::default(),
        }
    }
}

impl<V: Clone + PartialEq> PartialEq for Shared<V> {
    fn eq(&self, other: &Self) -> bool {
        if let Some(names) = self.changed_since(other) {
            return names.iter().all(|n| self.get(n) == other.get(n));
        }
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<V: Clone> FromIterator<(String, V)> for Shared<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        Shared {
            base: Rc::new(
                iter.into_iter()
                    .map(|(k, v)| (Rc::from(k), Rc::new(v)))
                    .collect(),
            ),
            layer: Rc::default(),
        }
    }
}

impl<V: Clone> Shared<V> {
    pub fn get(&self, name: &str) -> Option<&V> {
        match self.layer.get(name) {
            Some(v) => v.as_deref(),
            None => self.base.get(name).map(|v| &**v),
        }
    }

    fn entry(&self, name: &str) -> Option<&Rc<V>> {
        match self.layer.get(name) {
            Some(v) => v.as_ref(),
            None => self.base.get(name),
        }
    }

    /// Whether both hold the very same value for `name` (or neither holds one): equal without
    /// comparing.
    pub fn same_entry(&self, other: &Self, name: &str) -> bool {
        match (self.entry(name), other.entry(name)) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&Rc<str>, &V)> {
        let base = self
            .base
            .iter()
            .filter(|(k, _)| !self.layer.contains_key(*k))
            .map(|(k, v)| (k, &**v));
        let layer = self
            .layer
            .iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)));
        base.chain(layer)
    }

    pub fn keys(&self) -> impl Iterator<Item = &Rc<str>> {
        self.iter().map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn insert(&mut self, name: impl Into<Rc<str>>, value: V) {
        Rc::make_mut(&mut self.layer).insert(name.into(), Some(Rc::new(value)));
        self.fold_when_large();
    }

    /// Remove a name; an absent one changes nothing.
    pub fn remove(&mut self, name: &str) -> Option<V> {
        let old = self.get(name).cloned();
        if old.is_some() {
            Rc::make_mut(&mut self.layer).insert(Rc::from(name), None);
            self.fold_when_large();
        }
        old
    }

    pub fn extend<K: Into<Rc<str>>>(&mut self, entries: impl IntoIterator<Item = (K, V)>) {
        for (k, v) in entries {
            self.insert(k, v);
        }
    }

    /// The names either changed since they shared a base; `None` when they do not share one.
    pub fn changed_since(&self, other: &Self) -> Option<Vec<Rc<str>>> {
        if !Rc::ptr_eq(&self.base, &other.base) {
            return None;
        }
        if Rc::ptr_eq(&self.layer, &other.layer) {
            return Some(Vec::new());
        }
        let mut names: Vec<Rc<str>> = self.layer.keys().cloned().collect();
        names.extend(
            other
                .layer
                .keys()
                .filter(|k| !self.layer.contains_key(*k))
                .cloned(),
        );
        Some(names)
    }

    /// The map itself.
    pub fn into_map(mut self) -> HashMap<String, V> {
        self.fold();
        Rc::unwrap_or_clone(self.base)
            .into_iter()
            .map(|(k, v)| (k.to_string(), Rc::unwrap_or_clone(v)))
            .collect()
    }

    fn fold_when_large(&mut self) {
        if self.layer.len() > MAX_LAYER {
            self.fold();
        }
    }

    fn fold(&mut self) {
        if self.layer.is_empty() {
            return;
        }
        let base = Rc::make_mut(&mut self.base);
        let layer = std::mem::take(&mut self.layer);
        for (k, v) in Rc::unwrap_or_clone(layer) {
            match v {
                Some(v) => {
                    base.insert(k, v);
                }
                None => {
                    base.remove(&k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_its_base_and_changes_only_its_own_layer() {
        let mut a: Shared<u32> = [("x".to_string(), 1)].into_iter().collect();
        let mut b = a.clone();
        assert_eq!(b.changed_since(&a), Some(Vec::new()));
        // Removing an absent name changes nothing.
        assert_eq!(b.remove("y"), None);
        assert_eq!(b.changed_since(&a), Some(Vec::new()));
        b.insert("y", 2);
        assert_eq!(b.changed_since(&a), Some(vec![Rc::from("y")]));
        assert_eq!(a.get("y"), None, "the other holder is untouched");
        assert_eq!(b.get("y"), Some(&2));
        assert_ne!(a, b);
        b.remove("y");
        assert_eq!(a, b, "equal contents are equal maps");
        assert_eq!(b.remove("x"), Some(1));
        assert!(!b.contains_key("x") && a.contains_key("x"));
        a.extend([("z".to_string(), 3)]);
        assert_eq!(a.len(), 2);
        assert_eq!(a.clone().into_map().len(), 2);
        let mut keys: Vec<&str> = a.keys().map(|k| &**k).collect();
        keys.sort();
        assert_eq!(keys, ["x", "z"]);
    }

    #[test]
    fn a_large_layer_is_folded_without_changing_the_other_holder() {
        let a: Shared<usize> = [("x".to_string(), 0)].into_iter().collect();
        let mut b = a.clone();
        for i in 0..(MAX_LAYER * 3) {
            b.insert(format!("n{i}"), i);
        }
        b.remove("x");
        assert_eq!(a.len(), 1);
        assert_eq!(b.len(), MAX_LAYER * 3);
        assert_eq!(b.changed_since(&a), None, "folded: the base is its own now");
        assert_eq!(b.get("n5"), Some(&5));
        assert!(!b.contains_key("x"));
        b.insert("m", 9);
        assert_eq!(b.get("m"), Some(&9));
    }
}
