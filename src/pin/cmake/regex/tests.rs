use super::*;

fn find(p: &str, s: &str) -> Option<Vec<String>> {
    let re = Regex::new(p).expect("compiles");
    re.captures(s)
        .expect("within budget")
        .map(|c| (0..c.len()).map(|i| c.text(i, s).to_string()).collect())
}

#[test]
fn no_perl_classes_and_no_counted_repetition() {
    assert_eq!(find("\\d+", "123"), None, "\\d is the letter d");
    assert_eq!(find("\\d+", "add").map(|g| g[0].clone()), Some("dd".into()));
    assert_eq!(find("a{2}", "aa"), None, "braces are literal");
    assert_eq!(
        find("a{2}", "a{2}").map(|g| g[0].clone()),
        Some("a{2}".into())
    );
    assert_eq!(find("[[:digit:]]", "5"), None);
    assert_eq!(
        find("[[:digit:]]", "t]").map(|g| g[0].clone()),
        Some("t]".into())
    );
    assert!(find("\\s", "a b").is_none());
}

#[test]
fn cmake_refuses_what_its_compiler_refuses() {
    for (p, why) in [
        ("[b-a]", "Invalid range in []."),
        ("a+?", "Nested *?+."),
        ("a**", "Nested *?+."),
        ("*a", "?+* follows nothing."),
        ("(a", "Unmatched parentheses."),
        ("a)", "Unmatched parentheses."),
        ("[a", "Unmatched []."),
        ("[c-a]", "Invalid range in []."),
        ("(a*)*", "*+ operand could be empty."),
        ("^*", "*+ operand could be empty."),
        ("a\\", "Trailing backslash."),
        (&"(a)".repeat(32), "Too many parentheses."),
    ] {
        assert_eq!(Regex::new(p).err(), Some(CompileError(why)), "{p}");
    }
    for p in [
        "[a-a]",
        &"(a)".repeat(31),
        "(a*)?",
        "",
        "a|",
        "()",
        "[]a]",
        "[^-]",
        "a{",
        "(1)(2)(3)(4)(5)(6)(7)(8)(9)",
    ] {
        assert!(Regex::new(p).is_ok(), "{p}");
    }
}

#[test]
fn leftmost_first_greedy_and_the_last_iteration_in_groups() {
    assert_eq!(
        find("(a|ab)(c|bcd)(d*)", "abcd").expect("m"),
        ["abcd", "a", "bcd", ""]
    );
    assert_eq!(find("(a|b)*", "abba").expect("m"), ["abba", "a"]);
    assert_eq!(find("x(a(b)?)+", "xaba").expect("m"), ["xaba", "a", "b"]);
    assert_eq!(
        find("v([0-9]+)\\.([0-9]+)", "tag v12.3-rc").expect("m"),
        ["v12.3", "12", "3"]
    );
    assert_eq!(
        find("b*", "abc").expect("m"),
        ["",],
        "the empty match at the start"
    );
    assert_eq!(find("^b", "ab"), None);
    assert_eq!(find("a$", "a\n"), None, "$ is the end only");
    assert_eq!(find(".", "\n").expect("m"), ["\n"], ". matches a newline");
    assert_eq!(find("[]-a]+", "]^_`a-").expect("m"), ["]^_`a"]);
}

#[test]
fn bytes_not_characters() {
    // `.` is one byte: one `.` cannot hold a two-byte character.
    assert_eq!(find("^.$", "é"), None);
    assert_eq!(find("^..$", "é").expect("m"), ["é"]);
    // A match ending inside a character has no text: unknown, never a wrong string.
    let re = Regex::new("^.").expect("compiles");
    assert_eq!(re.captures("é"), Err(OverBudget));
}

#[test]
fn a_runaway_search_gives_up() {
    let re = Regex::new("(a|aa)+(a|aa)+(a|aa)+b").expect("compiles");
    let s = "a".repeat(200);
    assert_eq!(re.captures(&s), Err(OverBudget));
    let re = Regex::new("(ab)*c").expect("compiles");
    assert_eq!(re.captures(&"ab".repeat(5000)), Err(OverBudget), "too deep");
    assert!(re.captures(&"ab".repeat(50)).is_ok());
}

#[test]
fn the_caret_matches_where_the_search_says() {
    let re = Regex::new("^a").expect("compiles");
    assert!(re.find_at("ba", 1, 1).expect("ok").is_some());
    assert!(re.find_at("ba", 1, 0).expect("ok").is_none());
}
