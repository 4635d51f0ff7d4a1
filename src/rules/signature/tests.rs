//! Tests for source signatures: the matcher keys on small Python files written here, the
//! database's PINPROBE-2026-0001 signature on buggy, fixed and unaffected shapes, validation
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

    fn failing(mut self, path: &str, error: &str) -> Self {
        self.files.insert(path.to_owned(), Err(error.to_owned()));
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
// PINPROBE-2026-0001, loaded from the rule file the binary embeds.

const RULE: &str = include_str!("../../../rules/PINPROBE-2026-0001.yaml");
const BLOCK_INFO: &str = "flash_attn/cute/block_info.py";
const SM90: &str = "flash_attn/cute/flash_fwd_sm90.py";

fn r1() -> Signature {
    let rule: serde_json::Value = serde_saphyr::from_str(RULE).expect("rule file is YAML");
    let raw = rule
        .pointer("/database_specific/signature")
        .expect("rule has database_specific.signature")
        .clone();
    let sig: Signature = serde_json::from_value(raw).expect("signature deserialises");
    sig.validate().expect("rule signature is valid");
    sig
}

/// A BlockInfo in the shape the bug needs (written for these tests).
const BLOCK_INFO_BUGGY: &str = r#"from dataclasses import dataclass

import cutlass
from cutlass import Int32, const_expr


@dataclass(frozen=True)
class BlockInfo:
    tile_m: cutlass.Constexpr[int]
    tile_n: cutlass.Constexpr[int]
    is_causal: cutlass.Constexpr[bool]
    is_local: cutlass.Constexpr[bool] = False
    is_split_kv: cutlass.Constexpr[bool] = False
    window_left: Int32 | None = None
    window_right: Int32 | None = None
    packgqa: cutlass.Constexpr[int] = 1
    num_splits: Int32 = 1

    def get_n_block_min_max(self, seqlen, m_block, split_idx=0, num_splits=1):
        n_max = (seqlen + self.tile_n - 1) // self.tile_n
        n_min = 0
        if const_expr(self.is_split_kv):
            if const_expr(self.packgqa == 1):
                num_splits = self.num_splits
            per_split = (n_max - n_min + num_splits - 1) // num_splits
            n_min = n_min + split_idx * per_split
            n_max = min(n_min + per_split, n_max)
        return n_min, n_max
"#;

fn block_info_without_field() -> String {
    BLOCK_INFO_BUGGY.replace("    num_splits: Int32 = 1\n", "")
}

fn block_info_without_overwrite() -> String {
    BLOCK_INFO_BUGGY.replace("num_splits = self.num_splits", "pass")
}

/// An SM90 kernel that builds `BlockInfo(` with `args` (one per line, already indented).
fn sm90(args: &str) -> String {
    format!(
        r#"import cutlass.cute as cute

from flash_attn.cute.block_info import BlockInfo


class FlashAttentionForwardSm90:
    def __init__(self, tile_m, tile_n, is_causal, is_local, is_split_kv):
        self.tile_m = tile_m
        self.tile_n = tile_n
        self.is_causal = is_causal
        self.is_local = is_local
        self.is_split_kv = is_split_kv

    @cute.kernel
    def kernel(self, q, k, v, num_splits, window_left, window_right):
        tile_m, tile_n = self.tile_m, self.tile_n
        block_info = BlockInfo(
{args}
        )
        return block_info
"#
    )
}

/// Line of `block_info = BlockInfo(` in [`sm90`].
const SM90_CALL_LINE: u32 = 17;

const BUGGY_ARGS: &str = "            tile_m,
            tile_n,
            self.is_causal,
            self.is_local,
            self.is_split_kv,
            window_left,
            window_right,
            packgqa=self.packgqa,";

fn r1_on(block_info: &str, sm90_text: &str) -> Outcome {
    r1().evaluate(
        &Files::default()
            .with(BLOCK_INFO, block_info)
            .with(SM90, sm90_text),
    )
}

#[test]
fn r1_buggy_shape_is_present_with_one_hit_per_condition() {
    let outcome = r1_on(BLOCK_INFO_BUGGY, &sm90(BUGGY_ARGS));
    let Outcome::Present { hits } = &outcome else {
        panic!("expected present, got {outcome:?}");
    };
    let got: Vec<(&str, &str, u32)> = hits
        .iter()
        .map(|h| (h.condition.as_str(), h.file.as_str(), h.line))
        .collect();
    assert_eq!(
        got,
        [
            ("blockinfo-has-num-splits-field", BLOCK_INFO, 8),
            ("get-n-block-min-max-reads-self-num-splits", BLOCK_INFO, 19),
            (
                "sm90-blockinfo-split-kv-without-num-splits",
                SM90,
                SM90_CALL_LINE
            ),
        ]
    );
}

#[test]
fn r1_fixed_call_passing_num_splits_on_a_later_line_is_absent() {
    let args = format!("{BUGGY_ARGS}\n            num_splits=num_splits,");
    let outcome = r1_on(BLOCK_INFO_BUGGY, &sm90(&args));
    let Outcome::Absent { reason } = &outcome else {
        panic!("expected absent, got {outcome:?}");
    };
    assert!(
        reason.contains("sm90-blockinfo-split-kv-without-num-splits"),
        "{reason}"
    );
    assert!(reason.contains(SM90), "{reason}");
}

#[test]
fn r1_literal_false_positional_is_not_affected() {
    // Upstream flash-attn-4's shape: a text search for the missing kwarg would flag this.
    let args = BUGGY_ARGS.replace("self.is_split_kv,", "False,");
    assert_absent(&r1_on(BLOCK_INFO_BUGGY, &sm90(&args)));
}

#[test]
fn r1_keyword_false_is_not_affected() {
    let args = "            tile_m,
            tile_n,
            self.is_causal,
            self.is_local,
            is_split_kv=False,
            window_left=window_left,";
    assert_absent(&r1_on(BLOCK_INFO_BUGGY, &sm90(args)));
}

#[test]
fn r1_keyword_non_literal_is_buggy() {
    let args = "            tile_m,
            tile_n,
            self.is_causal,
            self.is_local,
            window_left=window_left,
            is_split_kv=self.is_split_kv,";
    assert_eq!(
        present_lines(&r1_on(BLOCK_INFO_BUGGY, &sm90(args))),
        [8, 19, SM90_CALL_LINE]
    );
}

#[test]
fn r1_num_splits_in_a_comment_or_string_is_still_buggy() {
    let args = format!(
        "{BUGGY_ARGS}\n            # num_splits=num_splits,\n            \"num_splits=num_splits\","
    );
    let text = sm90(&args);
    assert!(text.contains("num_splits=num_splits"));
    assert_eq!(
        present_lines(&r1_on(BLOCK_INFO_BUGGY, &text)),
        [8, 19, SM90_CALL_LINE]
    );
}

#[test]
fn r1_call_spread_over_many_lines_with_comments_counts_positions_right() {
    let args = "            # tile sizes
            tile_m,  # rows
            tile_n,

            # masking
            self.is_causal,
            self.is_local,
            # split-KV: decided at compile time
            self.is_split_kv,  # not False here
            window_left,
            window_right,";
    assert_eq!(
        present_lines(&r1_on(BLOCK_INFO_BUGGY, &sm90(args))),
        [8, 19, SM90_CALL_LINE]
    );
    // The same layout with False in position 4 is not affected: comments are not arguments.
    let fixed = args.replace("self.is_split_kv,  # not False here", "False,");
    assert_absent(&r1_on(BLOCK_INFO_BUGGY, &sm90(&fixed)));
}

#[test]
fn r1_attribute_callee_is_matched_by_its_last_segment() {
    let text = sm90(BUGGY_ARGS).replace("= BlockInfo(", "= block_info_mod.BlockInfo(");
    assert_eq!(
        present_lines(&r1_on(BLOCK_INFO_BUGGY, &text)),
        [8, 19, SM90_CALL_LINE]
    );
}

#[test]
fn r1_blockinfo_without_field_or_overwrite_is_absent() {
    let outcome = r1_on(&block_info_without_field(), &sm90(BUGGY_ARGS));
    let Outcome::Absent { reason } = &outcome else {
        panic!("expected absent, got {outcome:?}");
    };
    assert!(
        reason.contains("blockinfo-has-num-splits-field"),
        "{reason}"
    );
    assert!(!reason.contains("get-n-block-min-max"), "{reason}");

    let outcome = r1_on(&block_info_without_overwrite(), &sm90(BUGGY_ARGS));
    let Outcome::Absent { reason } = &outcome else {
        panic!("expected absent, got {outcome:?}");
    };
    assert!(
        reason.contains("get-n-block-min-max-reads-self-num-splits"),
        "{reason}"
    );
}

#[test]
fn r1_field_must_be_in_the_class_body_and_overwrite_in_the_method() {
    // A local annotated assignment in a method is not a class field.
    let local = block_info_without_field().replace(
        "        n_min = 0\n",
        "        n_min = 0\n        num_splits: Int32 = 1\n",
    );
    assert_absent(&r1_on(&local, &sm90(BUGGY_ARGS)));
    // The overwrite in another method does not count.
    let elsewhere = BLOCK_INFO_BUGGY
        .replace("num_splits = self.num_splits", "pass")
        .replace(
            "        return n_min, n_max\n",
            "        return n_min, n_max\n\n    def other(self):\n        num_splits = self.num_splits\n        return num_splits\n",
        );
    assert_absent(&r1_on(&elsewhere, &sm90(BUGGY_ARGS)));
}

#[test]
fn r1_missing_file_is_undecidable_and_names_it() {
    let outcome = r1().evaluate(&Files::default().with(BLOCK_INFO, BLOCK_INFO_BUGGY));
    let reason = undecidable_reason(&outcome);
    assert!(reason.contains(SM90), "{reason}");
    assert!(reason.contains("does not exist"), "{reason}");
}

#[test]
fn r1_undecidable_outranks_a_failed_condition() {
    // block_info.py decides "absent", but sm90 is missing: the answer stays undecidable.
    let outcome = r1().evaluate(&Files::default().with(BLOCK_INFO, &block_info_without_field()));
    assert!(undecidable_reason(&outcome).contains(SM90));
}

#[test]
fn r1_read_error_is_undecidable_and_names_file_and_cause() {
    let outcome = r1().evaluate(
        &Files::default()
            .with(BLOCK_INFO, BLOCK_INFO_BUGGY)
            .failing(SM90, "permission denied"),
    );
    let reason = undecidable_reason(&outcome);
    assert!(reason.contains(SM90), "{reason}");
    assert!(reason.contains("permission denied"), "{reason}");
}

#[test]
fn r1_syntax_error_is_undecidable_with_the_first_error_line() {
    let broken = sm90(BUGGY_ARGS).replace("            tile_n,\n", "            tile_n,,\n");
    let outcome = r1_on(BLOCK_INFO_BUGGY, &broken);
    let reason = undecidable_reason(&outcome);
    assert!(reason.contains(SM90), "{reason}");
    assert!(reason.contains("line 19"), "{reason}");
}

#[test]
fn each_file_is_read_once_per_evaluation() {
    let files = Files::default()
        .with(BLOCK_INFO, BLOCK_INFO_BUGGY)
        .with(SM90, &sm90(BUGGY_ARGS));
    let sig = r1();
    assert_eq!(sig.files(), [BLOCK_INFO, SM90]);
    assert!(matches!(sig.evaluate(&files), Outcome::Present { .. }));
    assert_eq!(files.reads.borrow().get(BLOCK_INFO), Some(&1));
    assert_eq!(files.reads.borrow().get(SM90), Some(&1));
}

#[test]
fn outcome_serialises_with_a_tag() {
    let outcome = r1_on(BLOCK_INFO_BUGGY, &sm90(BUGGY_ARGS));
    let json = serde_json::to_value(&outcome).expect("outcome serialises");
    assert_eq!(json["outcome"], "present");
    assert_eq!(json["hits"][2]["line"], SM90_CALL_LINE);
}

#[test]
fn signature_round_trips_through_serde() {
    let sig = r1();
    let json = serde_json::to_value(&sig).expect("signature serialises");
    let back: Signature = serde_json::from_value(json).expect("signature deserialises");
    assert_eq!(back, sig);
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
    // After *args the positions are unknown: the matcher cannot tell, so undecidable (never
    // absent, which would read as "the bug is not there").
    assert!(undecidable_reason(&on(&sig, "f(*xs, y)\n")).contains("cannot tell"));
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
            scope: Default::default(),
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
    // The file holds the literal the matcher needs (in a comment), so the search has to run.
    let text = format!(
        "x = {}1{}\n# nothing\n",
        "f(".repeat(3000),
        ")".repeat(3000)
    );
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

// ---------------------------------------------------------------------------------------------
// Rewrites that keep the bug: aliases, literals, splats, calls split over lines.

/// The SM90 call site as the bug has it, in several rewritten forms.
fn sm90_outcome(sm90: &str) -> Outcome {
    r1().evaluate(
        &Files::default()
            .with(BLOCK_INFO, BLOCK_INFO_BUGGY)
            .with(SM90, sm90),
    )
}

#[test]
fn aliases_do_not_hide_the_call() {
    for sm90 in [
        "from flash_attn.cute.block_info import BlockInfo as BI\ndef k(self):\n    return BI(a, b, c, d, self.is_split_kv)\n",
        "import flash_attn.cute.block_info as bim\ndef k(self):\n    return bim.BlockInfo(a, b, c, d, self.is_split_kv)\n",
        "def k(self):\n    make = BlockInfo\n    other = make\n    return other(a, b, c, d, self.is_split_kv)\n",
        "def k(self):\n    return BlockInfo(\n        a,\n        b,\n        c,\n        d,\n        self.is_split_kv,\n    )\n",
        "def k(self, num_splits):\n    return BlockInfo(a, b, c, d, self.is_split_kv, num_splits=1)\n",
        "def k(self, num_splits):\n    return BlockInfo(a, b, c, d, is_split_kv=s, num_splits=None)\n",
    ] {
        let outcome = sm90_outcome(sm90);
        assert!(
            matches!(outcome, Outcome::Present { .. }),
            "{sm90}\n-> {outcome:?}"
        );
    }
}

#[test]
fn splats_and_unknown_callees_are_undecidable() {
    for sm90 in [
        // `**kwargs` may carry num_splits=num_splits.
        "def k(self, **kw):\n    return BlockInfo(a, b, c, d, self.is_split_kv, **kw)\n",
        // `*args` may hold the 5th positional.
        "def k(self, *rest):\n    return BlockInfo(a, b, *rest)\n",
        // A callee that is not a name.
        "def k(self):\n    return self.makers[0](a, b, c, d, self.is_split_kv)\n",
    ] {
        let outcome = sm90_outcome(sm90);
        assert!(
            matches!(outcome, Outcome::Undecidable { .. }),
            "{sm90}\n-> {outcome:?}"
        );
    }
    // The fix passes the variable: absent, aliases or not.
    let fixed = "from flash_attn.cute.block_info import BlockInfo as BI\ndef k(self, num_splits):\n    return BI(a, b, c, d, self.is_split_kv, num_splits=num_splits)\n";
    assert_absent(&sm90_outcome(fixed));
    // An unrelated name is not an alias.
    assert_absent(&sm90_outcome(
        "def k(self):\n    return Other(a, b, c, d, self.is_split_kv)\n",
    ));
}

// ---------------------------------------------------------------------------------------------
// Scope in what pinprobe writes out.

/// `scope: shipped` survives serialisation (the OSV export, the outcome cache's key): dropped,
/// a consumer would evaluate the signature on pinned trees of older layouts. The default scope
/// is not written.
#[test]
fn a_shipped_scope_is_written_out_and_the_default_is_not() {
    let (db, _) = crate::rules::load(None).expect("built-in rules load");
    let osv_signature = |id: &str| {
        let loaded = db.get(id).expect("built-in rule");
        let doc = crate::rules::osv::to_osv(&loaded.rule, &loaded.file).expect("exports");
        doc.pointer("/database_specific/signature")
            .cloned()
            .expect("the export carries the signature")
    };
    let shipped = osv_signature("PINPROBE-2026-0004");
    assert_eq!(shipped["scope"], "shipped", "{shipped}");
    let back: Signature = serde_json::from_value(shipped).expect("signature deserialises");
    assert_eq!(back.scope, Scope::Shipped);
    let any = osv_signature("PINPROBE-2026-0001");
    assert!(any.get("scope").is_none(), "{any}");
    let back: Signature = serde_json::from_value(any).expect("signature deserialises");
    assert_eq!(back, r1());
}

// ---------------------------------------------------------------------------------------------
// Outcomes remembered by content (memo.rs).

/// The same signature on the same bytes is computed once and then reused (the counts the scan
/// reports with `PINPROBE_STATS`); other bytes get their own outcome, never a remembered one.
#[test]
fn an_outcome_is_reused_only_for_the_same_bytes() {
    let sig = one("exists", "{ kind: call, name: memo_probe }");
    let text = "memo_probe(1)\n# an_outcome_is_reused_only_for_the_same_bytes\n";
    let (computed0, _) = memo::counts();
    let first = on(&sig, text);
    let (computed1, reused1) = memo::counts();
    assert!(computed1 > computed0, "computed {computed0} -> {computed1}");
    let second = on(&sig, text);
    let (_, reused2) = memo::counts();
    assert!(reused2 > reused1, "reused {reused1} -> {reused2}");
    assert_eq!(first, second);
    assert_eq!(present_lines(&first), [1]);
    // Other bytes, same signature: computed on them.
    assert_absent(&on(&sig, "other_probe(1)\n"));
    assert_eq!(present_lines(&on(&sig, "\nmemo_probe(2)\n")), [2]);
}

/// With a store named, an outcome is written to the content-addressed cache under its key (a
/// later process reads it instead of parsing).
#[test]
fn an_outcome_is_kept_in_the_store() {
    use crate::cache::{Kind, Store};
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .expect("test binary directory")
        .join("pinprobe-signature-store-test");
    let _ = std::fs::remove_dir_all(&dir);
    memo::use_store(Store::new(&dir));
    let sig = one("exists", "{ kind: call, name: store_probe }");
    let text = "store_probe(1)\n# an_outcome_is_kept_in_the_store\n";
    let outcome = on(&sig, text);
    assert_eq!(present_lines(&outcome), [1]);
    let key = memo::key(&sig, &[("m.py", text)]);
    let stored = Store::new(&dir)
        .get(Kind::Signature, &key)
        .expect("the outcome is in the store");
    let stored: Outcome = serde_json::from_slice(&stored).expect("a stored outcome parses");
    assert_eq!(stored, outcome);
}

// ---------------------------------------------------------------------------------------------
// Argument positions and callee names in the less common shapes.

/// `f(x for x in xs)`: the generator is the call's one positional argument (position 0); no
/// other position and no keyword exists.
#[test]
fn a_bare_generator_is_the_only_positional_argument() {
    let at = |position: usize| {
        one(
            "exists",
            &format!(
                "{{ kind: call, arg: {{ position: {position}, value: {{ kind: generator_expression }} }} }}"
            ),
        )
    };
    let src = "total = sum(x for x in xs)\n";
    assert_eq!(present_lines(&on(&at(0), src)), [1]);
    assert_absent(&on(&at(1), src));
    assert_absent(&on(
        &one("exists", "{ kind: call, arg: { keyword: x } }"),
        src,
    ));
}

/// Once a `*splat` has been passed, no later argument has a known position: asking for
/// position 1 is undecidable even when an argument sits there in the text.
#[test]
fn positions_after_a_splat_are_unknown() {
    let sig = one(
        "exists",
        "{ kind: call, arg: { position: 1, value: { text: z } } }",
    );
    for src in ["f(*xs, y, z)\n", "f(*xs, z, z)\n", "f(w, *xs, z)\n"] {
        assert!(
            undecidable_reason(&on(&sig, src)).contains("cannot tell"),
            "{src}"
        );
    }
    // Before the splat the positions are known.
    assert_eq!(present_lines(&on(&sig, "f(y, z, *xs)\n")), [1]);
    assert_absent(&on(&sig, "f(y, w, *xs)\n"));
}

/// `BI = module.BlockInfo` binds `BI` to `BlockInfo`, as `BI = BlockInfo` does: the bug's call
/// made through it is found.
#[test]
fn an_alias_to_an_attribute_is_followed() {
    let sm90 = "import flash_attn.cute.block_info as bim\nBI = bim.BlockInfo\ndef k(self):\n    return BI(a, b, c, d, self.is_split_kv)\n";
    let outcome = sm90_outcome(sm90);
    assert!(matches!(outcome, Outcome::Present { .. }), "{outcome:?}");
    let fixed = sm90.replace(
        "self.is_split_kv)",
        "self.is_split_kv, num_splits=num_splits)",
    );
    assert_absent(&sm90_outcome(&fixed));
    // Bound to another attribute: not the call.
    assert_absent(&sm90_outcome(&sm90.replace("bim.BlockInfo", "bim.Other")));
}

/// A step is one node tested or 64 bytes of text fed to a regex (matcher.rs): a regex over a
/// long node is charged for the text it reads, so big nodes cannot run a search past its budget.
#[test]
fn a_regex_is_charged_for_the_text_it_reads() {
    use super::matcher::{Found, Search};
    // One string node of 64,002 bytes: about 1,000 steps of regex.
    let text = format!("x = \"{}\"\n", "a".repeat(64 * 1000));
    let tree = tree::SourceTree::parse(text).expect("parses");
    let nodes = tree.len() as u64;
    let compiled =
        compile::compile(&one("exists", "{ kind: string, regex: zzz }")).expect("compiles");
    let matcher = &compiled[0].matcher;
    assert_eq!(
        Search::new(&tree, nodes + 2000).first_match(matcher),
        Ok(Found::None)
    );
    assert!(
        Search::new(&tree, nodes + 500)
            .first_match(matcher)
            .is_err()
    );
    // Without the regex the same search needs one step a node.
    let compiled =
        compile::compile(&one("exists", "{ kind: string, text: zzz }")).expect("compiles");
    assert_eq!(
        Search::new(&tree, nodes).first_match(&compiled[0].matcher),
        Ok(Found::None)
    );
}

/// `has` looks strictly below the node: a call does not contain itself.
#[test]
fn has_is_strictly_below_the_node() {
    let sig = one("exists", "{ kind: call, has: { kind: call } }");
    assert_absent(&on(&sig, "f(x)\n"));
    assert_eq!(present_lines(&on(&sig, "y = 1\nf(\n  g(x))\n")), [2]);
}

/// A file of exactly the size limit is parsed; one byte more is not.
#[test]
fn the_size_limit_is_inclusive() {
    let at_limit = format!("#{}\n", "a".repeat(tree::MAX_FILE_BYTES - 2));
    assert_eq!(at_limit.len(), tree::MAX_FILE_BYTES);
    let sig = one("exists", "{ kind: comment }");
    assert_eq!(present_lines(&on(&sig, &at_limit)), [1]);
    let over = format!("#a{}", &at_limit[1..]);
    assert!(undecidable_reason(&on(&sig, &over)).contains("limit"));
}

/// Paths are `/`-separated: a Windows-style relative path is refused, and so is an absolute
/// one (the message says why).
#[test]
fn validate_rejects_backslash_and_absolute_paths() {
    for file in ["'a\\b.py'", "/etc/passwd"] {
        let yaml = format!(
            "language: python\nconditions:\n  - id: c\n    file: {file}\n    exists: {{ kind: call }}\n"
        );
        let message = invalid(&yaml);
        assert!(
            message.contains("relative, `/`-separated"),
            "{file}: {message}"
        );
    }
}

/// Nesting through `arg.value` counts towards the depth bound like any other key.
#[test]
fn validate_bounds_nesting_through_argument_values() {
    let nested = |depth: usize| {
        let mut m = Matcher {
            kind: Some("call".into()),
            ..Matcher::default()
        };
        for _ in 1..depth {
            m = Matcher {
                arg: Some(Box::new(ArgMatcher {
                    position: Some(0),
                    keyword: None,
                    value: Some(m),
                })),
                ..Matcher::default()
            };
        }
        Signature {
            language: Language::Python,
            scope: Default::default(),
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
    assert!(nested(200).validate().is_err());
}

// ---------------------------------------------------------------------------------------------
// The text prefilter (prefilter.rs).

#[test]
fn the_text_prefilter_decides_as_a_parse_does_on_files_that_parse() {
    let matchers = [
        "{ kind: identifier, text: num_splits }",
        "{ kind: class_definition, name: BlockInfo }",
        "{ kind: call, name: BlockInfo }",
        "{ kind: assignment, all: [ { child: { field: left, text: max_offset } }, { child: { field: right, kind: integer } } ] }",
        "{ any: [ { kind: identifier, text: a_name }, { kind: identifier, text: b_name } ] }",
        "{ any: [ { kind: identifier, text: a_name }, { kind: call } ] }",
        "{ has: { kind: identifier, text: deep } }",
        "{ kind: call, inside: { kind: function_definition, name: outer } }",
        "{ not: { kind: identifier, text: gone } }",
        "{ kind: call, arg: { keyword: num_splits } }",
    ];
    let texts = [
        "x = 1\n",
        "num_splits = 2\n",
        "class BlockInfo:\n    pass\n",
        "def outer():\n    f(deep)\n",
        "max_offset = 3\n",
        "b_name = a\n",
        "BI = BlockInfo\nBI(1)\n",
        "# num_splits and max_offset only in a comment\ny = g(**kw)\n",
        "fns[0](x)\n",
    ];
    let mut decided_by_text = 0;
    for matcher in matchers {
        for mode in ["exists", "absent"] {
            let sig = one(mode, matcher);
            for text in texts {
                let read = || Read(vec![("m.py", Ok(Some(text.to_string())))]);
                let fast = sig.evaluate_read(&read(), true);
                assert_eq!(
                    fast,
                    sig.evaluate_read(&read(), false),
                    "{mode}: {matcher} on {text:?}"
                );
                let clauses = prefilter::requirement(&compile::compile(&sig).unwrap()[0].matcher);
                decided_by_text += usize::from(!prefilter::may_match(&clauses, text));
            }
        }
    }
    assert!(decided_by_text > 20, "{decided_by_text}");
}

#[test]
fn a_literal_missing_from_the_text_decides_without_a_parse() {
    // This block_info.py never says `num_splits` (the field and the overwrite both need it):
    // the bug's shape is absent whatever the SM90 file holds, even a syntax error, which a
    // parse would report as undecidable.
    let old = BLOCK_INFO_BUGGY.replace("num_splits", "n_splits");
    let broken = sm90(BUGGY_ARGS).replace("            tile_n,\n", "            tile_n,,\n");
    assert_absent(&r1_on(&old, &broken));
    let read = Read(vec![
        (BLOCK_INFO, Ok(Some(old.clone()))),
        (SM90, Ok(Some(broken.clone()))),
    ]);
    assert!(undecidable_reason(&r1().evaluate_read(&read, false)).contains("line 19"));
    // A missing file still outranks it: the tree is not laid out as the rule expects.
    let outcome = r1().evaluate(&Files::default().with(BLOCK_INFO, &old));
    assert!(undecidable_reason(&outcome).contains(SM90));
    let outcome = r1().evaluate(
        &Files::default()
            .with(BLOCK_INFO, &old)
            .failing(SM90, "permission denied"),
    );
    assert!(undecidable_reason(&outcome).contains("permission denied"));
}
