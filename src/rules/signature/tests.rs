//! Tests for source signatures: the matcher keys on small Python files written here, validation
//! errors, and resource bounds on hostile input.

use std::cell::RefCell;
use std::collections::HashMap;

use super::*;

/// Files held in memory; `Err` entries simulate read failures. Counts reads per path.
#[derive(Default)]
struct Files {
    files: HashMap<String, Result<String, String>>,
    reads: RefCell<HashMap<String, usize>>,
}

impl Files {
    fn with(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.to_owned(), Ok(text.to_owned()));
        self
    }
}

impl SourceFiles for Files {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        *self.reads.borrow_mut().entry(path.to_owned()).or_default() += 1;
        match self.files.get(path) {
            None => Ok(None),
            Some(Ok(text)) => Ok(Some(text.clone())),
            Some(Err(e)) => Err(e.clone()),
        }
    }
}

fn signature(yaml: &str) -> Signature {
    serde_saphyr::from_str(yaml).expect("test signature deserialises")
}

/// A one-condition signature over `m.py`.
fn one(mode: &str, matcher: &str) -> Signature {
    let sig = signature(&format!(
        "language: python\nconditions:\n  - id: c\n    file: m.py\n    {mode}: {matcher}\n"
    ));
    sig.validate().expect("test signature is valid");
    sig
}

fn on(sig: &Signature, text: &str) -> Outcome {
    sig.evaluate(&Files::default().with("m.py", text))
}

fn present_lines(outcome: &Outcome) -> Vec<u32> {
    match outcome {
        Outcome::Present { hits } => hits.iter().map(|h| h.line).collect(),
        other => panic!("expected present, got {other:?}"),
    }
}

fn assert_absent(outcome: &Outcome) {
    assert!(
        matches!(outcome, Outcome::Absent { .. }),
        "expected absent, got {outcome:?}"
    );
}

fn undecidable_reason(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Undecidable { reason } => reason,
        other => panic!("expected undecidable, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Matcher keys on small files.

#[test]
fn text_is_exact_and_regex_searches() {
    let src = "x = foo_bar\n";
    assert_eq!(
        present_lines(&on(&one("exists", "{ text: foo_bar }"), src)),
        [1]
    );
    assert_absent(&on(&one("exists", "{ text: foo }"), src));
    assert_eq!(
        present_lines(&on(
            &one("exists", "{ kind: identifier, regex: 'o_b' }"),
            src
        )),
        [1]
    );
    assert_absent(&on(
        &one("exists", "{ kind: identifier, regex: '^bar' }"),
        src,
    ));
}

#[test]
fn kind_tells_false_from_an_attribute() {
    let sig = one(
        "exists",
        "{ kind: call, arg: { position: 0, value: { kind: \"false\" } } }",
    );
    assert_eq!(present_lines(&on(&sig, "f(False)\n")), [1]);
    assert_absent(&on(&sig, "f(self.false)\n"));
    assert_absent(&on(&sig, "f(x)\n"));
}

#[test]
fn field_child_has_and_inside() {
    let src = "def f():\n    a = b\n\nc = a\n";
    // `a` on the left of an assignment inside a function: line 2 only.
    let sig = one(
        "exists",
        "{ kind: identifier, text: a, field: left, inside: { kind: function_definition } }",
    );
    assert_eq!(present_lines(&on(&sig, src)), [2]);
    let sig = one(
        "exists",
        "{ kind: assignment, child: { field: right, text: a } }",
    );
    assert_eq!(present_lines(&on(&sig, src)), [4]);
    let sig = one(
        "exists",
        "{ kind: function_definition, name: f, has: { kind: identifier, text: b } }",
    );
    assert_eq!(present_lines(&on(&sig, src)), [1]);
    // `child` is direct only: the identifier sits two levels below the function.
    let sig = one(
        "exists",
        "{ kind: function_definition, child: { kind: identifier, text: b } }",
    );
    assert_absent(&on(&sig, src));
}

#[test]
fn not_all_any_combine() {
    let src = "a = 1\nb = 2\nc = 3\n";
    let sig = one(
        "exists",
        "{ kind: assignment, any: [ { has: { text: '2' } }, { has: { text: '3' } } ], not: { has: { text: b } } }",
    );
    assert_eq!(present_lines(&on(&sig, src)), [3]);
    let sig = one(
        "exists",
        "{ kind: assignment, all: [ { has: { text: a } }, { has: { text: '2' } } ] }",
    );
    assert_absent(&on(&sig, src));
}

#[test]
fn arg_by_position_keyword_and_presence() {
    let sig = one("exists", "{ kind: call, arg: { keyword: k } }");
    assert_eq!(present_lines(&on(&sig, "f(1,\n  k=2)\n")), [1]);
    assert_absent(&on(&sig, "f(1, j=2)\n"));
    // Keyword arguments do not count as positions.
    let sig = one(
        "exists",
        "{ kind: call, arg: { position: 1, value: { text: y } } }",
    );
    assert_eq!(present_lines(&on(&sig, "f(x, k=1, y)\n")), [1]);
    assert_absent(&on(&sig, "f(x)\n"));
    // After *args the positions are unknown: no match rather than a guess.
    assert_absent(&on(&sig, "f(*xs, y)\n"));
    // `arg` only applies to calls.
    assert_absent(&on(&one("exists", "{ arg: { position: 0 } }"), "x = (y)\n"));
}

#[test]
fn absent_condition_holds_when_nothing_matches() {
    let sig = one("absent", "{ kind: call, name: eval }");
    let outcome = on(&sig, "print(1)\n");
    // An `absent` condition has no place to point at: present with no hits.
    assert_eq!(outcome, Outcome::Present { hits: vec![] });
    let outcome = on(&sig, "x = 1\neval(x)\n");
    let Outcome::Absent { reason } = &outcome else {
        panic!("expected absent, got {outcome:?}");
    };
    assert!(reason.contains("line 2"), "{reason}");
}

// ---------------------------------------------------------------------------------------------
// Validation.

fn invalid(yaml: &str) -> String {
    let sig = signature(yaml);
    let message = sig.validate().expect_err("signature is invalid").message;
    // evaluate refuses it too, without reading anything.
    let outcome = sig.evaluate(&Files::default());
    assert!(undecidable_reason(&outcome).starts_with("invalid signature"));
    message
}

fn invalid_matcher(matcher: &str) -> String {
    invalid(&format!(
        "language: python\nconditions:\n  - id: c\n    file: m.py\n    exists: {matcher}\n"
    ))
}

#[test]
fn validate_rejects_unknown_kind_field_and_supertype() {
    let message = invalid_matcher("{ has: { kind: function_call } }");
    assert!(message.contains("condition `c`"), "{message}");
    assert!(message.contains("exists.has.kind"), "{message}");
    assert!(message.contains("function_call"), "{message}");
    assert!(invalid_matcher("{ kind: call, field: argz }").contains("argz"));
    // A supertype never appears in a tree, so a matcher on it could never hold.
    assert!(invalid_matcher("{ kind: expression }").contains("expression"));
}

#[test]
fn validate_rejects_bad_regex() {
    let message = invalid_matcher("{ all: [ { kind: call }, { regex: 'a(b' } ] }");
    assert!(message.contains("exists.all[1].regex"), "{message}");
}

#[test]
fn validate_rejects_zero_conditions() {
    assert!(invalid("language: python\nconditions: []\n").contains("no conditions"));
}

#[test]
fn validate_rejects_bad_condition_shapes() {
    let both = "language: python\nconditions:\n  - id: c\n    file: m.py\n    exists: { kind: call }\n    absent: { kind: call }\n";
    assert!(invalid(both).contains("exactly one"));
    let neither = "language: python\nconditions:\n  - id: c\n    file: m.py\n";
    assert!(invalid(neither).contains("exactly one"));
    let dup = "language: python\nconditions:\n  - id: c\n    file: m.py\n    exists: { kind: call }\n  - id: c\n    file: n.py\n    exists: { kind: call }\n";
    assert!(invalid(dup).contains("earlier condition"));
    for file in ["''", "/etc/passwd", "a/../b.py"] {
        let yaml = format!(
            "language: python\nconditions:\n  - id: c\n    file: {file}\n    exists: {{ kind: call }}\n"
        );
        assert!(invalid(&yaml).contains("`file`"), "{file}");
    }
    assert!(invalid_matcher("{ }").contains("empty matcher"));
    assert!(invalid_matcher("{ any: [] }").contains("empty list"));
    assert!(invalid_matcher("{ arg: { value: { kind: call } } }").contains("position"));
}

#[test]
fn validate_bounds_matcher_nesting() {
    // Built in code: serde-saphyr's own depth budget refuses YAML this deep before we see it.
    let nested = |depth: usize| {
        let mut m = Matcher {
            kind: Some("call".into()),
            ..Matcher::default()
        };
        for _ in 1..depth {
            m = Matcher {
                not: Some(Box::new(m)),
                ..Matcher::default()
            };
        }
        Signature {
            language: Language::Python,
            conditions: vec![Condition {
                id: "c".into(),
                file: "m.py".into(),
                exists: Some(m),
                absent: None,
            }],
        }
    };
    nested(64).validate().expect("64 levels are allowed");
    let message = nested(65)
        .validate()
        .expect_err("65 levels are not")
        .message;
    assert!(message.contains("deeper than 64"), "{message}");
}

#[test]
fn deserialising_rejects_unknown_keys_and_languages() {
    let typo = "language: python\nconditions:\n  - id: c\n    file: m.py\n    exists: { kind: call, hass: { kind: call } }\n";
    let err = serde_saphyr::from_str::<Signature>(typo).expect_err("unknown key");
    assert!(err.to_string().contains("hass"), "{err}");
    let typo =
        "language: python\nconditions:\n  - id: c\n    file: m.py\n    exist: { kind: call }\n";
    assert!(serde_saphyr::from_str::<Signature>(typo).is_err());
    let typo = "language: python\nconditions:\n  - id: c\n    file: m.py\n    exists: { kind: call, arg: { position: 1, kw: x } }\n";
    assert!(serde_saphyr::from_str::<Signature>(typo).is_err());
    let rust = "language: rust\nconditions: []\n";
    assert!(serde_saphyr::from_str::<Signature>(rust).is_err());
}

// ---------------------------------------------------------------------------------------------
// Resource bounds.

#[test]
fn deeply_nested_file_does_not_overflow_the_stack() {
    const DEPTH: usize = 50_000;
    let parens = format!("x = {}1{}\n", "(".repeat(DEPTH), ")".repeat(DEPTH));
    let calls = format!("x = {}1{}\n", "f(".repeat(DEPTH), ")".repeat(DEPTH));
    let lists = format!("x = {}1{}\n", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let cheap = one(
        "exists",
        "{ kind: integer, inside: { kind: call, name: g } }",
    );
    // Quadratic on a deep tree: every node searches all its descendants.
    let costly = one(
        "exists",
        "{ has: { kind: identifier, text: nothing }, inside: { kind: module } }",
    );
    for text in [&parens, &calls, &lists] {
        for sig in [&cheap, &costly] {
            // Any answer is fine (tree-sitter may give up and report an error, the budget may
            // run out); the point is that it comes back.
            match on(sig, text) {
                Outcome::Present { .. } => panic!("nothing here matches"),
                Outcome::Absent { .. } | Outcome::Undecidable { .. } => {}
            }
        }
    }
}

#[test]
fn step_budget_turns_a_runaway_search_into_undecidable() {
    // 3,000 nested calls, each searching all its descendants: ~4.5M steps per matcher, times
    // the nested `has` below, well past the budget.
    let text = format!("x = {}1{}\n", "f(".repeat(3000), ")".repeat(3000));
    let sig = one(
        "exists",
        "{ has: { has: { kind: identifier, text: nothing } } }",
    );
    let reason = on(&sig, &text);
    assert!(undecidable_reason(&reason).contains("budget"), "{reason:?}");
}

#[test]
fn oversized_file_is_undecidable() {
    let text = "x = 1\n".repeat(tree::MAX_FILE_BYTES / 6 + 1);
    let reason = on(&one("exists", "{ kind: call }"), &text);
    assert!(undecidable_reason(&reason).contains("limit"), "{reason:?}");
}
