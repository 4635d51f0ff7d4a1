//! CMake regular expressions compiled once per pattern: a tree's code runs the same `MATCHES`,
//! `string(REGEX ...)` and `list(FILTER ... REGEX)` in every configuration and loop iteration.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Patterns kept at most; past it the cache starts over (a tree building patterns from
/// loop variables cannot grow it without bound).
const MAX_PATTERNS: usize = 4096;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Option<Rc<regex::Regex>>>> =
        RefCell::new(HashMap::new());
}

/// The CMake pattern compiled (translated to the `regex` crate's syntax); `None` when it is
/// not a valid expression there.
pub(super) fn compiled(pattern: &str) -> Option<Rc<regex::Regex>> {
    COMPILED.with(|cache| {
        if let Some(found) = cache.borrow().get(pattern) {
            return found.clone();
        }
        let re = regex::Regex::new(&super::cond::translate_regex(pattern))
            .ok()
            .map(Rc::new);
        let mut cache = cache.borrow_mut();
        if cache.len() >= MAX_PATTERNS {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re.clone());
        re
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_compilation_per_pattern_and_invalid_ones_stay_invalid() {
        let a = compiled("^v([0-9]+)").expect("valid");
        let b = compiled("^v([0-9]+)").expect("valid");
        assert!(
            Rc::ptr_eq(&a, &b),
            "the second lookup is the cached expression"
        );
        assert!(a.is_match("v12"));
        assert!(compiled("(unclosed").is_none());
        assert!(compiled("(unclosed").is_none());
    }

    #[test]
    fn the_cache_is_bounded() {
        for i in 0..MAX_PATTERNS + 10 {
            assert!(compiled(&format!("^p{i}$")).is_some());
        }
        COMPILED.with(|c| assert!(c.borrow().len() <= MAX_PATTERNS));
        assert!(compiled("^p5$").is_some_and(|r| r.is_match("p5")));
    }
}
