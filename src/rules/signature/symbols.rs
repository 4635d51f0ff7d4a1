//! Binary signatures: conditions on a shipped shared library's dynamic symbol table (what
//! `nm -D` lists), for bugs whose build product shows them: a library that references a kernel
//! it does not define fails to load (`undefined symbol`), and vLLM silently falls back.
//!
//! ```yaml
//! symbols:
//!   library: _vllm_fa3_C*.so      # file name in the component's package directory, one `*`
//!   anchor: '^_Z11run_mha_fwdR16Flash_fwd_params'   # defined in the library the rule means
//!   conditions:
//!     - id: fa3-references-sm80-kernel
//!       undefined: '^_Z12run_mha_fwd_ILi80E'   # regex over the raw (mangled) name
//! ```
//!
//! A condition is `undefined: REGEX` (some symbol matching it is undefined with global binding:
//! the loader must resolve it, and no other library ships FlashAttention's kernels) or
//! `defined: REGEX` (some symbol matching it is defined here). Every condition holding on some
//! library the pattern names gives [`Outcome::Present`]; all failing on every library,
//! [`Outcome::Absent`]. No library by that name, one that cannot be read (truncated, not
//! ELF64, over a bound, no `.dynsym`), or one that does not define the `anchor`:
//! [`Outcome::Undecidable`]. Signatures apply only where
//! built libraries exist (wheels, environments, images); a source tree has none to look at.

use super::{Hit, Outcome, SignatureError};
use crate::pin::shipped::elf::{DynamicSymbol, SymbolKind};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A rule's binary signature.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolSignature {
    /// The library's file name, with one `*` (e.g. `_vllm_fa3_C*.so`: the abi3 and the
    /// per-interpreter builds), in the directory that holds the component's shipped package.
    pub library: String,
    /// A symbol the library the rule describes defines (a regex, e.g. FA3's dispatch
    /// `run_mha_fwd`): a library without it is not that library, and the signature cannot
    /// decide on it.
    pub anchor: String,
    /// All must hold on one library for the bug's shape to be present.
    pub conditions: Vec<SymbolCondition>,
    /// What the real releases' libraries hold, read with `nm -D` (data: the opt-in real-data
    /// test checks pinprobe's reader against it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed: Vec<Observed>,
}

/// One condition: exactly one of `undefined` and `defined`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolCondition {
    pub id: String,
    /// Some symbol matching this regex is undefined with global (not weak) binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
    /// Some symbol matching this regex is defined in the library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defined: Option<String>,
}

/// A recorded fact about one release's library.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Observed {
    /// The vLLM release whose wheel shipped it.
    pub release: String,
    /// The wheel member's path.
    pub file: String,
    /// RECORD's hash of the library.
    pub sha256: String,
    /// `nm -D` entries matching the condition's regex, defined / undefined (U) in the library.
    pub defined: usize,
    pub undefined: usize,
}

/// Where the libraries come from (a shipped copy's package directory).
pub trait Libraries {
    /// Every library whose file name matches `pattern` (one `*`), with its path and either its
    /// dynamic symbols or why they could not be read. Empty when none exists.
    fn libraries(&self, pattern: &str) -> Vec<(String, Result<Vec<DynamicSymbol>, String>)>;
}

enum Test {
    Undefined(Regex),
    Defined(Regex),
}

impl SymbolSignature {
    /// Check that the signature is well-formed: a library pattern with exactly one `*` and no
    /// `/`, at least one condition, unique ids, exactly one regex each, regexes that compile.
    pub fn validate(&self) -> Result<(), SignatureError> {
        self.compile().map(drop)
    }

    fn compile(&self) -> Result<Vec<Test>, SignatureError> {
        let err = |message: String| SignatureError { message };
        if self.library.matches('*').count() != 1 || self.library.contains('/') {
            return Err(err(format!(
                "library `{}`: a file name with exactly one `*`",
                self.library
            )));
        }
        if self.conditions.is_empty() {
            return Err(err("symbol signature has no conditions".into()));
        }
        Regex::new(&self.anchor).map_err(|e| err(format!("anchor: {e}")))?;
        let mut ids = HashSet::new();
        self.conditions
            .iter()
            .map(|c| {
                if c.id.is_empty() || !ids.insert(c.id.as_str()) {
                    return Err(err(format!("condition id `{}` empty or repeated", c.id)));
                }
                let regex =
                    |r: &str| Regex::new(r).map_err(|e| err(format!("condition `{}`: {e}", c.id)));
                match (&c.undefined, &c.defined) {
                    (Some(r), None) => Ok(Test::Undefined(regex(r)?)),
                    (None, Some(r)) => Ok(Test::Defined(regex(r)?)),
                    _ => Err(err(format!(
                        "condition `{}`: exactly one of `undefined` and `defined`",
                        c.id
                    ))),
                }
            })
            .collect()
    }

    /// Evaluate on the libraries `source` holds; see the module docs.
    pub fn evaluate(&self, source: &dyn Libraries) -> Outcome {
        let tests = match self.compile() {
            Ok(t) => t,
            Err(e) => {
                return Outcome::Undecidable {
                    reason: format!("invalid symbol signature: {e}"),
                };
            }
        };
        let libraries = source.libraries(&self.library);
        if libraries.is_empty() {
            return Outcome::Undecidable {
                reason: format!("no library `{}` is shipped", self.library),
            };
        }
        let anchor = match Regex::new(&self.anchor) {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Undecidable {
                    reason: format!("invalid anchor: {e}"),
                };
            }
        };
        let mut absent = Vec::new();
        let mut undecidable = Vec::new();
        let mut present = None;
        for (path, symbols) in &libraries {
            let symbols = match symbols {
                Ok(s) => s,
                Err(why) => {
                    undecidable.push(format!("`{path}`: {why}"));
                    continue;
                }
            };
            if !symbols
                .iter()
                .any(|s| s.kind == SymbolKind::Defined && anchor.is_match(&s.name))
            {
                undecidable.push(format!(
                    "`{path}` defines no symbol matching `{}`: not the library the rule describes",
                    self.anchor
                ));
                continue;
            }
            let mut failed = Vec::new();
            let mut hits = Vec::new();
            for (condition, test) in self.conditions.iter().zip(&tests) {
                let found = symbols.iter().find(|s| match test {
                    Test::Undefined(r) => s.kind == SymbolKind::Undefined && r.is_match(&s.name),
                    Test::Defined(r) => s.kind == SymbolKind::Defined && r.is_match(&s.name),
                });
                match found {
                    Some(s) => hits.push((condition.id.clone(), s.name.clone())),
                    None => failed.push(condition.id.clone()),
                }
            }
            if failed.is_empty() {
                present.get_or_insert((path.clone(), hits));
            } else {
                absent.push(format!(
                    "`{path}` ({} dynamic symbols): {} not met",
                    symbols.len(),
                    failed.join(", ")
                ));
            }
        }
        if let Some((path, hits)) = present {
            return Outcome::Present {
                hits: hits
                    .into_iter()
                    .map(|(condition, name)| Hit {
                        condition: format!("{condition} (`{name}`)"),
                        file: path.clone(),
                        line: 0,
                    })
                    .collect(),
            };
        }
        if !undecidable.is_empty() {
            return Outcome::Undecidable {
                reason: undecidable.join("; "),
            };
        }
        Outcome::Absent {
            reason: absent.join("; "),
        }
    }
}

/// Whether `name` matches `pattern` (one `*` standing for any run of characters).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => name == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Libs(Vec<(String, Result<Vec<DynamicSymbol>, String>)>);
    impl Libraries for Libs {
        fn libraries(&self, pattern: &str) -> Vec<(String, Result<Vec<DynamicSymbol>, String>)> {
            self.0
                .iter()
                .filter(|(p, _)| name_matches(pattern, p.rsplit('/').next().unwrap_or(p)))
                .cloned()
                .collect()
        }
    }

    fn sym(name: &str, kind: SymbolKind) -> DynamicSymbol {
        DynamicSymbol {
            name: name.into(),
            kind,
        }
    }

    fn sig() -> SymbolSignature {
        SymbolSignature {
            library: "_fa3_C*.so".into(),
            anchor: "^run_mha_fwd$".into(),
            conditions: vec![SymbolCondition {
                id: "sm80".into(),
                undefined: Some("^_Z12run_mha_fwd_ILi80E".into()),
                defined: None,
            }],
            observed: Vec::new(),
        }
    }

    const SM80: &str = "_Z12run_mha_fwd_ILi80EN7cutlass6half_tELi64ELi64ELb0ELb0ELb0ELb1EEvR16Flash_fwd_paramsP11CUstream_st";

    #[test]
    fn three_valued_on_libraries() {
        let lib = |mut s: Vec<DynamicSymbol>| {
            s.push(sym("run_mha_fwd", SymbolKind::Defined));
            Libs(vec![("pkg/_fa3_C.abi3.so".into(), Ok(s))])
        };
        let undefined = lib(vec![sym(SM80, SymbolKind::Undefined)]);
        assert!(matches!(
            sig().evaluate(&undefined),
            Outcome::Present { .. }
        ));
        // Defined, or only weakly referenced: loads fine.
        for kind in [SymbolKind::Defined, SymbolKind::UndefinedWeak] {
            assert!(matches!(
                sig().evaluate(&lib(vec![sym(SM80, kind)])),
                Outcome::Absent { .. }
            ));
        }
        assert!(matches!(
            sig().evaluate(&Libs(vec![])),
            Outcome::Undecidable { .. }
        ));
        let broken = Libs(vec![("pkg/_fa3_C.abi3.so".into(), Err("truncated".into()))]);
        assert!(matches!(
            sig().evaluate(&broken),
            Outcome::Undecidable { .. }
        ));
        // One readable clean library does not outweigh one that cannot be read.
        // Not the library the rule means: no anchor.
        let stranger = Libs(vec![("pkg/_fa3_C.abi3.so".into(), Ok(vec![]))]);
        assert!(matches!(
            sig().evaluate(&stranger),
            Outcome::Undecidable { .. }
        ));
        let mixed = Libs(vec![
            (
                "pkg/_fa3_C.abi3.so".into(),
                Ok(vec![sym("run_mha_fwd", SymbolKind::Defined)]),
            ),
            ("pkg/_fa3_C.cpython-312.so".into(), Err("truncated".into())),
        ]);
        assert!(matches!(
            sig().evaluate(&mixed),
            Outcome::Undecidable { .. }
        ));
    }

    /// A `defined` condition holds only on a symbol the library defines; with an `undefined`
    /// one beside it, both must hold on the same library.
    #[test]
    fn defined_conditions_need_a_definition() {
        const SM90: &str = "_Z12run_mha_fwd_ILi90EN7cutlass6half_tEEvR16Flash_fwd_params";
        let mut defined = sig();
        defined.conditions = vec![SymbolCondition {
            id: "sm90".into(),
            undefined: None,
            defined: Some("^_Z12run_mha_fwd_ILi90E".into()),
        }];
        let lib = |s: Vec<DynamicSymbol>| {
            let mut s = s;
            s.push(sym("run_mha_fwd", SymbolKind::Defined));
            Libs(vec![("pkg/_fa3_C.abi3.so".into(), Ok(s))])
        };
        let outcome = defined.evaluate(&lib(vec![sym(SM90, SymbolKind::Defined)]));
        let Outcome::Present { hits } = &outcome else {
            panic!("expected present, got {outcome:?}");
        };
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].condition, format!("sm90 (`{SM90}`)"));
        assert_eq!(hits[0].file, "pkg/_fa3_C.abi3.so");
        // Referenced, not defined: the condition fails.
        for kind in [SymbolKind::Undefined, SymbolKind::UndefinedWeak] {
            assert!(matches!(
                defined.evaluate(&lib(vec![sym(SM90, kind)])),
                Outcome::Absent { .. }
            ));
        }
        // Both kinds of condition on one library: each must hold.
        let mut both = sig();
        both.conditions.push(defined.conditions[0].clone());
        let present = lib(vec![
            sym(SM80, SymbolKind::Undefined),
            sym(SM90, SymbolKind::Defined),
        ]);
        assert!(matches!(both.evaluate(&present), Outcome::Present { .. }));
        let outcome = both.evaluate(&lib(vec![sym(SM80, SymbolKind::Undefined)]));
        let Outcome::Absent { reason } = &outcome else {
            panic!("expected absent, got {outcome:?}");
        };
        assert!(reason.contains("sm90 not met"), "{reason}");
        assert!(!reason.contains("sm80"), "{reason}");
    }

    /// A library that only references the anchor (imports it from elsewhere) is not the
    /// library the rule describes: undecidable, even when the conditions would hold.
    #[test]
    fn the_anchor_must_be_defined_in_the_library() {
        let importer = Libs(vec![(
            "pkg/_fa3_C.abi3.so".into(),
            Ok(vec![
                sym("run_mha_fwd", SymbolKind::Undefined),
                sym(SM80, SymbolKind::Undefined),
            ]),
        )]);
        let outcome = sig().evaluate(&importer);
        let Outcome::Undecidable { reason } = &outcome else {
            panic!("expected undecidable, got {outcome:?}");
        };
        assert!(reason.contains("defines no symbol matching"), "{reason}");
    }

    #[test]
    fn validates_patterns_and_conditions() {
        assert!(sig().validate().is_ok());
        let mut bad = sig();
        bad.library = "dir/_fa3_C*.so".into();
        assert!(bad.validate().is_err());
        let mut both = sig();
        both.conditions[0].defined = Some("x".into());
        assert!(both.validate().is_err());
        let mut regex = sig();
        regex.conditions[0].undefined = Some("(".into());
        assert!(regex.validate().is_err());
        // Condition ids name the condition in reasons: empty or repeated ones are refused.
        let mut repeated = sig();
        repeated.conditions.push(repeated.conditions[0].clone());
        let message = repeated.validate().expect_err("repeated id").message;
        assert!(message.contains("`sm80`"), "{message}");
        let mut empty = sig();
        empty.conditions[0].id = String::new();
        assert!(empty.validate().is_err());
        let mut two = sig();
        two.conditions.push(SymbolCondition {
            id: "sm90".into(),
            undefined: None,
            defined: Some("^_Z12run_mha_fwd_ILi90E".into()),
        });
        assert!(two.validate().is_ok());
        assert!(name_matches("_fa3_C*.so", "_fa3_C.abi3.so"));
        assert!(name_matches("_fa3_C*.so", "_fa3_C.so"));
        // Without a `*` (refused in a rule), a pattern is one exact file name.
        assert!(name_matches("_fa3_C.so", "_fa3_C.so"));
        assert!(!name_matches("_fa3_C.so", "_fa3_C.abi3.so"));
        assert!(!name_matches("_fa3_C*.so", "_fa2_C.abi3.so"));
        assert!(!name_matches("ab*ba", "aba"));
    }
}
