//! CMake regular expressions compiled once per pattern: a tree's code runs the same `MATCHES`,
//! `string(REGEX ...)` and `list(FILTER ... REGEX)` in every configuration and loop iteration.

use super::regex::{CompileError, Regex};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Patterns kept at most; past it the cache starts over (a tree building patterns from
/// loop variables cannot grow it without bound).
const MAX_PATTERNS: usize = 4096;

type Compiled = Result<Rc<Regex>, CompileError>;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Compiled>> = RefCell::new(HashMap::new());
}

/// The CMake pattern compiled in CMake's dialect; `Err` with CMake's reason when CMake refuses
/// it.
pub(super) fn compiled(pattern: &str) -> Compiled {
    COMPILED.with(|cache| {
        if let Some(found) = cache.borrow().get(pattern) {
            return found.clone();
        }
        let re = Regex::new(pattern).map(Rc::new);
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
        assert_eq!(a.is_match("v12"), Ok(true));
        assert!(compiled("(unclosed").is_err());
        assert!(compiled("(unclosed").is_err());
        assert!(compiled("a+?").is_err(), "CMake has no lazy quantifiers");
    }

    #[test]
    fn the_cache_is_bounded() {
        for i in 0..MAX_PATTERNS + 10 {
            assert!(compiled(&format!("^p{i}$")).is_ok());
        }
        COMPILED.with(|c| assert!(c.borrow().len() <= MAX_PATTERNS));
        assert!(compiled("^p5$").is_ok_and(|r| r.is_match("p5") == Ok(true)));
    }
}
