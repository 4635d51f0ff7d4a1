//! CMake's regular expressions against real CMake: generated patterns (valid and not: `\d`,
//! classes, braces, lazy quantifiers, bad ranges, too many groups) on generated subjects (bytes
//! beyond ASCII too), through every command that takes one: `if(MATCHES)`,
//! `string(REGEX MATCH|MATCHALL|REPLACE)` and `list(FILTER ... REGEX)`, with `CMAKE_MATCH_<n>`
//! and `CMAKE_MATCH_COUNT` after each, under both settings of policy CMP0186.
//!
//! Each step fetches `r<i>` at a tag spelling (hex, so any byte survives the recording) what
//! the step computed, so CMake's records say step by step what CMake computed, up to a fatal
//! error. pinprobe must give the same tag for every step it decides; a step it leaves unknown is
//! counted (a repeated search that matches the empty string is unknown by design: CMake 3 and 4
//! differ there), and each case's steps must all be there in order.

use super::{Case, HEAD, Outcome, Record};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// The recorded cases: seeds `REGEX_BASE..REGEX_BASE + REGEX_RECORDED`.
pub(super) const REGEX_RECORDED: usize = 96;
const REGEX_BASE: u64 = 31_000;
const STEPS: usize = 10;

struct Gen {
    rng: StdRng,
}

impl Gen {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn bracket(&mut self) -> String {
        let mut s = String::from("[");
        if self.chance(0.3) {
            s.push('^');
        }
        if self.chance(0.1) {
            s.push_str(self.pick(&["]", "-"]));
        }
        for _ in 0..self.rng.random_range(1..4) {
            let item = self.pick(&[
                "a", "b", "c", "1", "x", "a-c", "0-9", "c-a", "b-a", "a-a", ".", "*", "[:digit:",
                "\\", "-", "{", ")",
            ]);
            s.push_str(item);
        }
        if self.chance(0.1) {
            s.push('-');
        }
        if self.chance(0.95) {
            s.push(']');
        }
        s
    }

    fn atom(&mut self, depth: usize) -> String {
        match self.rng.random_range(0..12) {
            0..=3 => self
                .pick(&[
                    "a", "b", "c", "1", "2", "x", "-", "_", ":", "{", "}", "ab", "ca", "é",
                ])
                .to_string(),
            4 => ".".into(),
            5 | 6 => self.bracket(),
            7 => format!(
                "\\{}",
                self.pick(&[
                    "d", "w", "s", ".", "(", "[", "*", "a", "n", "t", "\\", "$", "^", "|"
                ])
            ),
            8 | 9 if depth < 2 => format!("({})", self.alternatives(depth + 1)),
            10 => self.pick(&["^", "$"]).to_string(),
            _ => self
                .pick(&["[[:digit:]]", "{2}", "a{1,2}", "()", ")", "("])
                .to_string(),
        }
    }

    fn piece(&mut self, depth: usize) -> String {
        let mut s = self.atom(depth);
        if self.chance(0.35) {
            s.push_str(self.pick(&["*", "+", "?", "*", "+", "?", "+?", "*?", "**", "{2}"]));
        }
        s
    }

    fn branch(&mut self, depth: usize) -> String {
        (0..self.rng.random_range(1..4))
            .map(|_| self.piece(depth))
            .collect()
    }

    fn alternatives(&mut self, depth: usize) -> String {
        let mut s = self.branch(depth);
        if self.chance(0.25) {
            s.push('|');
            s.push_str(&self.branch(depth));
        }
        s
    }

    fn pattern(&mut self) -> String {
        let mut s = String::new();
        if self.chance(0.2) {
            s.push('^');
        }
        s.push_str(&self.alternatives(0));
        if self.chance(0.2) {
            s.push('$');
        }
        if self.chance(0.03) {
            s = "(a)".repeat(self.rng.random_range(30..33));
        }
        s
    }

    fn subject(&mut self) -> String {
        (0..self.rng.random_range(0..12))
            .map(|_| {
                self.pick(&[
                    "a", "b", "c", "a", "b", "1", "2", "x", "-", "_", ":", "{", "}", "d", "w", " ",
                    ".", "(", ")", "[", "]", "*", "é", "ab", "ca",
                ])
            })
            .collect()
    }

    /// One step: a command over `P` and `S` that sets `O` (and `CMAKE_MATCH_*`).
    fn step(&mut self, i: usize, out: &mut Vec<String>) {
        let p = self.pattern();
        out.push(format!("set(P [==[{p}]==])"));
        out.push("set(O none)".into());
        match self.rng.random_range(0..9) {
            0 | 1 => {
                let s = self.subject();
                out.push(format!("set(S [==[{s}]==])"));
                out.push(
                    "if(\"${S}\" MATCHES \"${P}\")\n  set(O 1)\nelse()\n  set(O 0)\nendif()".into(),
                );
            }
            2 | 3 => {
                let s = self.subject();
                out.push(format!("set(S [==[{s}]==])"));
                out.push("string(REGEX MATCH \"${P}\" O \"${S}\")".into());
            }
            4 | 5 => {
                let s = self.subject();
                out.push(format!("set(S [==[{s}]==])"));
                out.push("string(REGEX MATCHALL \"${P}\" O \"${S}\")".into());
            }
            6 | 7 => {
                let s = self.subject();
                let r = self.pick(&[
                    "<\\\\1>",
                    "[\\\\0]",
                    "\\\\2\\\\1",
                    "x",
                    "",
                    "\\\\n",
                    "$1",
                    "\\\\t",
                ]);
                out.push(format!("set(S [==[{s}]==])"));
                out.push(format!(
                    "string(REGEX REPLACE \"${{P}}\" \"{r}\" O \"${{S}}\")"
                ));
            }
            _ => {
                let items: Vec<String> = (0..self.rng.random_range(0..5))
                    .map(|_| self.subject())
                    .collect();
                out.push(format!("set(O [==[{}]==])", items.join(";")));
                out.push(format!(
                    "list(FILTER O {} REGEX \"${{P}}\")",
                    self.pick(&["INCLUDE", "EXCLUDE"])
                ));
            }
        }
        out.push(
            "string(HEX \"${O}/${CMAKE_MATCH_COUNT}/${CMAKE_MATCH_0}/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}/${CMAKE_MATCH_3}\" H)"
                .into(),
        );
        out.push(format!(
            "FetchContent_Declare(r{i} GIT_REPOSITORY https://example.invalid/r.git GIT_TAG \"t${{H}}\")\nFetchContent_MakeAvailable(r{i})"
        ));
    }
}

/// The `i`th recorded regex case.
pub(super) fn regex_case(i: usize) -> Case {
    let seed = REGEX_BASE + i as u64;
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
    };
    // A first match defines the variables the steps print (CMake never defines them before
    // one; pinprobe reads an undefined `CMAKE_*` variable as unknown).
    let mut out = vec!["string(REGEX MATCH \"(a)(b)(c)(d)\" X abcd)".to_string()];
    if g.chance(0.3) {
        out.push("cmake_policy(SET CMP0186 NEW)".into());
    }
    for step in 0..STEPS {
        g.step(step, &mut out);
    }
    let mut files = BTreeMap::new();
    files.insert(
        "CMakeLists.txt".to_string(),
        format!("{HEAD}{}\n", out.join("\n")),
    );
    Case {
        name: format!("regex seed {seed}"),
        files,
        has_inputs: false,
        variants: Vec::new(),
        undecided_ok: true,
    }
}

pub(super) fn regex_cases() -> Vec<Case> {
    (0..REGEX_RECORDED).map(regex_case).collect()
}

/// Steps pinprobe decided the same as CMake, and steps it left unknown.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Tally {
    pub decided: usize,
    pub unknown: usize,
}

/// One case against CMake's default run: the same steps in order, the same tag for every step
/// pinprobe decides, the same failure.
pub(super) fn check_regex(
    case: &Case,
    src: &std::path::Path,
    runs: &[Outcome],
) -> Result<Tally, String> {
    let eval = super::evaluate(src);
    let ctx = |msg: String| {
        format!(
            "case {}: {msg}\n{}\ncmake: {:?}",
            case.name,
            case.files
                .get("CMakeLists.txt")
                .map(String::as_str)
                .unwrap_or(""),
            runs.first().map(|o| (&o.records, &o.log))
        )
    };
    if let Some(reason) = &eval.undecided {
        return Err(ctx(format!("pinprobe undecided: {reason}")));
    }
    let Some(run) = runs.first() else {
        return Err(ctx("no CMake run".into()));
    };
    let Some(conf) = eval.configurations.iter().find(|c| c.default) else {
        return Err(ctx("no default configuration".into()));
    };
    if conf.failed.is_some() != run.failed {
        return Err(ctx(format!(
            "failed: pinprobe {:?}, cmake {}",
            conf.failed, run.failed
        )));
    }
    if conf.fetches.len() != run.records.len() {
        return Err(ctx(format!(
            "pinprobe has {} steps, cmake {}",
            conf.fetches.len(),
            run.records.len()
        )));
    }
    let mut tally = Tally::default();
    for (f, r) in conf.fetches.iter().zip(&run.records) {
        let Record { name, tag, .. } = r;
        if !f.name.eq_ignore_ascii_case(name) {
            return Err(ctx(format!("step {name}: pinprobe's is {}", f.name)));
        }
        match &f.tag {
            Some(v) if v.is_exact() => {
                if &v.text != tag {
                    return Err(ctx(format!(
                        "step {name}: pinprobe {} ({}), cmake {tag} ({})",
                        v.text,
                        unhex(&v.text),
                        unhex(tag)
                    )));
                }
                tally.decided += 1;
            }
            Some(_) => tally.unknown += 1,
            None => return Err(ctx(format!("step {name}: pinprobe has no tag"))),
        }
    }
    Ok(tally)
}

/// A step's tag as text, for messages.
fn unhex(tag: &str) -> String {
    let bytes: Vec<u8> = tag
        .strip_prefix('t')
        .unwrap_or(tag)
        .as_bytes()
        .chunks(2)
        .filter_map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every step agreed; unknown ones (empty matches in repeated searches) stay a small share.
pub(super) fn require_decided(t: Tally) {
    eprintln!(
        "regex steps: {} decided as CMake does, {} unknown",
        t.decided, t.unknown
    );
    assert!(t.decided > 0, "no regex step decided");
    assert!(
        t.unknown * 5 <= t.decided + t.unknown,
        "over a fifth of the regex steps unknown: {t:?}"
    );
}
