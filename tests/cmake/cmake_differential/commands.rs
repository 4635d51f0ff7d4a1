//! Command cases: what each command pinprobe evaluates computes, one table per command family,
//! with CMake's answers recorded in `tests/data/cmake_oracle/commands.json`.
//!
//! Each step of a table sets `OUT`; the table fetches `k` at a tag made of every step's `OUT` in
//! turn (a list's `;` written `,`), so one step pinprobe computes differently from CMake changes
//! the tag the two are compared on. The issue-13 cases (one per class of construct) are here
//! too, so their CMake answers are recorded and replayed like the tables'.

use super::{AFFECTED, Case, FA, FIX, HEAD, cache_inputs as cache_inputs_of, case, files, pairs};

/// Files besides `CMakeLists.txt` that the tables read.
const TABLE_FILES: &[(&str, &str)] = &[
    ("pins/lines.txt", "# a comment\nabc\n\ndef 1\nghi\n"),
    // Matches `p*/*.txt` by name but sits above the directories `p*` stands for.
    ("p.txt", "p\n"),
    ("pins/deep/d.txt", "d\n"),
    ("pins/deep/er/e.txt", "e\n"),
    (
        "pins/one.txt",
        "  830d2c4537c7396e14a02a46fbddd18b5d107c65\n\n",
    ),
    (
        "inc/a.cmake",
        "get_filename_component(A_NAME \"${CMAKE_CURRENT_LIST_FILE}\" NAME)\nget_filename_component(A_DIR \"${CMAKE_CURRENT_LIST_DIR}\" NAME)\nset(A_SET \"${A_SET}a\")\n",
    ),
    (
        "inc/guarded.cmake",
        "include_guard(GLOBAL)\nset(G_COUNT \"${G_COUNT}g\")\n",
    ),
    (
        "inc/early.cmake",
        "set(E_SEEN before)\nreturn()\nset(E_SEEN after)\n",
    ),
    (
        "sub/CMakeLists.txt",
        "set(SUB_LOCAL x)\nset(SUB_UP \"${PARENT_IN}-up\" PARENT_SCOPE)\nget_filename_component(SUB_DIR_NAME \"${CMAKE_CURRENT_SOURCE_DIR}\" NAME)\nset(SUB_DIR_NAME \"${SUB_DIR_NAME}\" PARENT_SCOPE)\n",
    ),
    ("modules/pinmod.cmake", "set(MOD_SEEN yes)\n"),
    ("inc/proj.cmake", "project(incproj LANGUAGES NONE)\n"),
    ("psub/CMakeLists.txt", "project(psub LANGUAGES NONE)\n"),
    ("here.cmake", "set(HERE_SEEN yes)\n"),
    (
        "inc/dirguard.cmake",
        "include_guard(DIRECTORY)\nset(DG \"${DG}g\" PARENT_SCOPE)\n",
    ),
    (
        "inc/gl.cmake",
        "include_guard(GLOBAL)\nset(GL \"${GL}g\" CACHE INTERNAL \"\")\n",
    ),
    (
        "inc/dd.cmake",
        "include_guard(DIRECTORY)\nset(DC \"${DC}d\" CACHE INTERNAL \"\")\n",
    ),
    (
        "inc/de.cmake",
        "include_guard(DIRECTORY)\nset(EC \"${EC}e\" CACHE INTERNAL \"\")\n",
    ),
    (
        "gd/a/CMakeLists.txt",
        "include(${CMAKE_SOURCE_DIR}/inc/dd.cmake)\ninclude(${CMAKE_SOURCE_DIR}/inc/de.cmake)\nadd_subdirectory(deep)\n",
    ),
    (
        "gd/a/deep/CMakeLists.txt",
        "include(${CMAKE_SOURCE_DIR}/inc/dd.cmake)\n",
    ),
    (
        "gd/b/CMakeLists.txt",
        "include(${CMAKE_SOURCE_DIR}/inc/dd.cmake)\n",
    ),
    (
        "ret/CMakeLists.txt",
        "set(SUB_RET early PARENT_SCOPE)\nreturn()\nset(SUB_RET late PARENT_SCOPE)\n",
    ),
];

/// A table: each step in turn, its `OUT` appended to the tag.
fn outputs_table(name: &str, steps: &[&str]) -> Case {
    outputs_table_with(name, steps, &[])
}

/// A table whose steps read names the user may set (`-D`), with variant runs that set them.
fn outputs_table_with(name: &str, steps: &[&str], inputs: &[super::Variant]) -> Case {
    let mut top = String::from("set(R r)\n");
    for s in steps {
        top.push_str(&format!(
            "set(OUT \"\")\n{s}\nstring(REPLACE \";\" \",\" OUT \"${{OUT}}\")\nstring(APPEND R \"/${{OUT}}\")\n"
        ));
    }
    top.push_str(
        "FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG \"${R}\")\nFetchContent_MakeAvailable(k)\n",
    );
    let mut list: Vec<(&str, &str)> = vec![("CMakeLists.txt", &top)];
    list.extend_from_slice(TABLE_FILES);
    let mut c = case(&format!("commands {name}"), &list, !inputs.is_empty());
    c.variants = inputs.to_vec();
    c
}

pub(super) fn command_cases() -> Vec<Case> {
    let mut cases = vec![
        outputs_table(
            "list",
            &[
                "set(L a b c d)\nlist(INSERT L 1 x y)\nset(OUT \"${L}\")",
                "set(L a b)\nlist(INSERT L 2 z)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(INSERT L -1 z)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(INSERT L 0 z)\nset(OUT \"${L}\")",
                "set(L a b c b a)\nlist(REMOVE_ITEM L b a)\nset(OUT \"${L}\")",
                "set(L a b c d)\nlist(REMOVE_AT L 0 -1)\nset(OUT \"${L}\")",
                "set(L a b c d)\nlist(REMOVE_AT L 1)\nset(OUT \"${L}\")",
                "set(L a b a c b)\nlist(REMOVE_DUPLICATES L)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(REVERSE L)\nset(OUT \"${L}\")",
                "set(L c a B b)\nlist(SORT L)\nset(OUT \"${L}\")",
                "set(L c a B b)\nlist(SORT L ORDER DESCENDING)\nset(OUT \"${L}\")",
                "set(L c a B b)\nlist(SORT L CASE INSENSITIVE)\nset(OUT \"${L}\")",
                "set(L c a B b)\nlist(SORT L COMPARE STRING CASE INSENSITIVE ORDER DESCENDING)\nset(OUT \"${L}\")",
                "set(L c a B b)\nlist(SORT L CASE SENSITIVE ORDER ASCENDING)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(LENGTH L OUT)",
                "set(L \"a;;b\")\nlist(LENGTH L OUT)",
                "set(L \"\")\nlist(LENGTH L OUT)",
                "set(L \"a[b;c]d;e\")\nlist(LENGTH L OUT)",
                "set(L \"a[[b;c]];e[;]\")\nlist(LENGTH L OUT)",
                "set(L \"a]b;c\")\nlist(LENGTH L OUT)",
                "set(L \"a]]b;c[x;y]\")\nlist(LENGTH L OUT)",
                "set(L \"a[b;c\")\nlist(LENGTH L OUT)",
                "set(L \"x;a[b;c]d\")\nlist(GET L 1 OUT)",
                "foreach(i \"a[1;2]\" b)\n  string(APPEND OUT \"<${i}>\")\nendforeach()",
                "set(L a b c)\nlist(GET L 0 -1 OUT)",
                "set(L a b c)\nlist(GET L -2 OUT)",
                "set(L a b c)\nlist(GET L 2 OUT)",
                "set(L a b c)\nlist(GET L -3 OUT)",
                "set(L a b c)\nlist(INSERT L -3 z)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(INSERT L 3 z)\nset(OUT \"${L}\")",
                "set(E \"\")\nlist(SUBLIST E 0 1 OUT)",
                "set(E \"\")\nlist(SUBLIST E 5 1 OUT)\nset(OUT \"${OUT}e\")",
                "set(L a b c)\nlist(SUBLIST L 0 -1 OUT)",
                "set(L a b c)\nlist(SUBLIST L 2 0 OUT)",
                "set(L a b c)\nlist(REMOVE_AT L -3)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(REMOVE_AT L 2)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(JOIN L + OUT)",
                "set(L a)\nlist(JOIN L + OUT)",
                "set(L a b c d)\nlist(SUBLIST L 1 2 OUT)",
                "set(L a b c d)\nlist(SUBLIST L 1 -1 OUT)",
                "set(L a b c d)\nlist(SUBLIST L 2 10 OUT)",
                "set(L a b c d)\nlist(SUBLIST L 0 0 OUT)",
                "set(L a b c d)\nlist(SUBLIST L 3 1 OUT)",
                "set(L a b c b)\nlist(FIND L b OUT)",
                "set(L a b c)\nlist(FIND L c OUT)",
                "set(L a b c)\nlist(FIND L z OUT)",
                "set(L a b c)\nlist(POP_BACK L X)\nset(OUT \"${X}-${L}\")",
                "set(L a b c)\nlist(POP_FRONT L X Y)\nset(OUT \"${X}-${Y}-${L}\")",
                "set(L a b c)\nlist(POP_BACK L X Y)\nset(OUT \"${X}-${Y}-${L}\")",
                "set(L a b c)\nlist(POP_BACK L)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(POP_FRONT L)\nset(OUT \"${L}\")",
                "set(L ab b1 cb ba)\nlist(FILTER L INCLUDE REGEX \"^b\")\nset(OUT \"${L}\")",
                "set(L ab b1 cb ba)\nlist(FILTER L EXCLUDE REGEX \"b$\")\nset(OUT \"${L}\")",
                "set(L a b)\nlist(TRANSFORM L APPEND _s)\nset(OUT \"${L}\")",
                "set(L a b)\nlist(TRANSFORM L PREPEND p_)\nset(OUT \"${L}\")",
                "set(L Ab cD)\nlist(TRANSFORM L TOLOWER)\nset(OUT \"${L}\")",
                "set(L Ab cD)\nlist(TRANSFORM L TOUPPER)\nset(OUT \"${L}\")",
                "set(L \" a\" \"b \")\nlist(TRANSFORM L STRIP)\nset(OUT \"${L}\")",
                "set(L a b)\nlist(TRANSFORM L APPEND _s OUTPUT_VARIABLE OUT)\nstring(APPEND OUT \"-${L}\")",
                "set(E \"\")\nlist(APPEND E x)\nset(OUT \"${E}\")",
                "set(L a)\nlist(PREPEND L x y)\nset(OUT \"${L}\")",
                "set(L a)\nlist(APPEND L)\nset(OUT \"${L}\")",
                "set(L a b c)\nlist(GET L 1 OUT)\nlist(APPEND OUT z)",
            ],
        ),
        outputs_table(
            "string",
            &[
                "set(OUT a)\nstring(APPEND OUT b c)",
                "set(OUT a)\nstring(PREPEND OUT b c)",
                "string(APPEND OUT x)",
                "string(CONCAT OUT a b c)",
                "string(CONCAT OUT)",
                "string(JOIN - OUT a b c)",
                "string(JOIN - OUT a)",
                "string(REPLACE a bb OUT banana ab)",
                "string(REPLACE x y OUT abc)",
                "string(TOLOWER AbC OUT)",
                "string(TOUPPER AbC OUT)",
                "string(LENGTH hello OUT)",
                "string(LENGTH \"\" OUT)",
                "string(STRIP \"  x y  \" OUT)",
                "string(SUBSTRING abcdef 1 3 OUT)",
                "string(SUBSTRING abcdef 2 -1 OUT)",
                "string(SUBSTRING abcdef 4 100 OUT)",
                "string(SUBSTRING abcdef 6 1 OUT)",
                "string(SUBSTRING abcdef 0 0 OUT)",
                "string(SUBSTRING abc 3 -1 OUT)",
                "string(SUBSTRING abc 1 0 OUT)",
                "string(SUBSTRING abc 0 3 OUT)",
                "string(SUBSTRING abc 2 1 OUT)",
                "string(FIND abcabc bc OUT)",
                "string(FIND abcabc bc OUT REVERSE)",
                "string(FIND abc z OUT)",
                "string(FIND abc a OUT)",
                "string(REPEAT ab 3 OUT)",
                "string(REPEAT ab 0 OUT)",
                "string(REPEAT x 1048576 OUT)\nstring(LENGTH \"${OUT}\" OUT)",
                "string(COMPARE EQUAL a a OUT)",
                "string(COMPARE EQUAL a b OUT)",
                "string(COMPARE NOTEQUAL a a OUT)",
                "string(COMPARE NOTEQUAL a b OUT)",
                "string(COMPARE LESS a b OUT)",
                "string(COMPARE LESS b a OUT)",
                "string(COMPARE LESS a a OUT)",
                "string(COMPARE GREATER b a OUT)",
                "string(COMPARE GREATER a b OUT)",
                "string(COMPARE GREATER a a OUT)",
                "string(COMPARE LESS_EQUAL b b OUT)",
                "string(COMPARE LESS_EQUAL c b OUT)",
                "string(COMPARE LESS_EQUAL a b OUT)",
                "string(COMPARE GREATER_EQUAL a b OUT)",
                "string(COMPARE GREATER_EQUAL b b OUT)",
                "string(COMPARE GREATER_EQUAL c b OUT)",
                "string(REGEX MATCH \"[0-9]+\" OUT ab12cd34)",
                "string(REGEX MATCHALL \"[0-9]+\" OUT ab12cd34)",
                "string(REGEX MATCH \"z\" OUT abc)",
                "string(REGEX MATCH \"b(c)\" OUT a bc d)\nset(OUT \"${OUT}-${CMAKE_MATCH_1}\")",
                "string(REGEX REPLACE \"([a-z])([0-9])\" \"\\\\2\\\\1\" OUT a1b2)",
                "string(REGEX REPLACE \"b+\" \"<&>\" OUT abbcb)",
                "string(REGEX REPLACE \"^a\" \"x\" OUT aaa)",
                "string(REGEX REPLACE \"[.]\" \"_\" OUT 1.2.3)",
                "string(REGEX REPLACE \"b\" \"$1x\" OUT abc)",
                "string(REGEX REPLACE \"(b)\" \"[\\\\1]\" OUT abc)",
                "string(REGEX REPLACE \"b\" \"\\\\\\\\\" OUT abc)",
                "string(REGEX REPLACE \"b\" \"[\\\\n]\" OUT abc)\nstring(LENGTH \"${OUT}\" OUT)",
                "string(REGEX REPLACE \"(a)(b)\" \"\\\\2\\\\0\\\\1\" OUT abc)",
                "string(ASCII 72 105 33 OUT)",
                "string(HEX \"a-Z\" OUT)",
                "string(MAKE_C_IDENTIFIER \"1a-b.c d\" OUT)",
                "string(MAKE_C_IDENTIFIER \"x_y\" OUT)",
                "string(SHA256 OUT \"abc\")",
            ],
        ),
        outputs_table(
            "math",
            &[
                "math(EXPR OUT \"1 | 6\")",
                "math(EXPR OUT \"5 ^ 3\")",
                "math(EXPR OUT \"6 & 3\")",
                "math(EXPR OUT \"1 << 4\")",
                "math(EXPR OUT \"256 >> 2\")",
                "math(EXPR OUT \"2 + 3 * 4 - 1\")",
                "math(EXPR OUT \"(2 + 3) * 4\")",
                "math(EXPR OUT \"7 / 2\")",
                "math(EXPR OUT \"-7 / 2\")",
                "math(EXPR OUT \"7 % 3\")",
                "math(EXPR OUT \"-7 % 3\")",
                "math(EXPR OUT \"-(3 + 1)\")",
                "math(EXPR OUT \"~5\")",
                "math(EXPR OUT \"0x10 + 1\")",
                "math(EXPR OUT \"0X1F\")",
                "math(EXPR OUT \"2 + 0XA\")",
                "math(EXPR OUT \"255\" OUTPUT_FORMAT HEXADECIMAL)",
                "math(EXPR OUT \"0x1f\" OUTPUT_FORMAT DECIMAL)",
                "math(EXPR OUT \"1 + 2 | 4 & 6 ^ 1\")",
                "math(EXPR OUT \"1 | 2 ^ 3 & 5\")",
                "math(EXPR OUT \"1 << 2 + 1\")",
                "math(EXPR OUT \"10 - 2 - 3\")",
                "math(EXPR OUT \"100 / 10 / 5\")",
                "math(EXPR OUT \"2*-3\")",
                "math(EXPR OUT \" 3 \")",
                "math(EXPR OUT \"--4\")",
                "math(EXPR OUT \"+4\")",
                "math(EXPR OUT \"10 % 3 * 2\")",
                "math(EXPR OUT \"-0x10\")",
                "math(EXPR OUT \"16\" OUTPUT_FORMAT HEXADECIMAL)",
                "math(EXPR OUT \"0\" OUTPUT_FORMAT HEXADECIMAL)",
                "math(EXPR OUT \"-1\" OUTPUT_FORMAT HEXADECIMAL)",
                "math(EXPR OUT \"1 << 63 >> 63\")",
                "math(EXPR OUT \"8 >> 1 << 2\")",
                "math(EXPR OUT \"12 & 10 | 1\")",
                "math(EXPR OUT \"6 ^ 3 & 1\")",
                "math(EXPR OUT \"2 * 3 % 4\")",
                "math(EXPR OUT \"9 - 3 + 1\")",
                "math(EXPR OUT \"~0\")",
                "math(EXPR OUT \"-(-2)\")",
                "math(EXPR OUT \"((1))\")",
                "set(N 6)\nmath(EXPR OUT \"${N} * ${N}\")",
                "math(EXPR OUT \"1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1\")",
                "math(EXPR OUT \"---------------------------------------------------------------1\")",
                "math(EXPR OUT \"(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))\")",
            ],
        ),
        outputs_table(
            "control flow",
            &[
                "foreach(i RANGE 3)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 2 5)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 1 10 3)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 0)\n  string(APPEND OUT ${i})\nendforeach()",
                // No step (or 0) counts towards the stop, down as well as up.
                "foreach(i RANGE 3 1)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE -2)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 1 3 0)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 4 0 -2)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 2 2 -1)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i RANGE 2 2 3)\n  string(APPEND OUT ${i})\nendforeach()\nforeach(i RANGE 2 2)\n  string(APPEND OUT ${i})\nendforeach()",
                "set(L a b)\nset(M c)\nforeach(i IN LISTS L M ITEMS d e)\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i IN ITEMS)\n  string(APPEND OUT ${i})\nendforeach()\nset(OUT \"${OUT}x\")",
                "foreach(i a b c d)\n  if(i STREQUAL b)\n    continue()\n  endif()\n  if(i STREQUAL d)\n    break()\n  endif()\n  string(APPEND OUT ${i})\nendforeach()",
                "foreach(i a b)\n  foreach(j 1 2)\n    if(j STREQUAL 2)\n      break()\n    endif()\n    string(APPEND OUT ${i}${j})\n  endforeach()\nendforeach()",
                "set(i before)\nforeach(i a b)\nendforeach()\nset(OUT \"${i}\")",
                "set(K 0)\nwhile(TRUE)\n  math(EXPR K \"${K}+1\")\n  if(K GREATER 4)\n    break()\n  endif()\nendwhile()\nset(OUT ${K})",
                "set(K 0)\nwhile(K LESS 5)\n  math(EXPR K \"${K}+1\")\n  if(K EQUAL 2)\n    continue()\n  endif()\n  string(APPEND OUT ${K})\nendwhile()",
                "set(K 3)\nwhile(K GREATER 3)\n  set(OUT never)\nendwhile()\nset(OUT \"${OUT}done\")",
                "if(FALSE)\n  set(OUT a)\nelseif(TRUE)\n  set(OUT b)\nelseif(TRUE)\n  set(OUT c)\nelse()\n  set(OUT d)\nendif()",
                "if(FALSE)\n  set(OUT a)\nelseif(FALSE)\n  set(OUT b)\nelse()\n  set(OUT d)\nendif()",
                "if(TRUE)\n  if(FALSE)\n    set(OUT a)\n  else()\n    set(OUT b)\n  endif()\nendif()",
            ],
        ),
        outputs_table(
            "functions and macros",
            &[
                "function(f1 a b)\n  set(OUT \"${a}-${b}-${ARGC}-${ARGV}-${ARGN}-${ARGV2}-${ARGV0}\" PARENT_SCOPE)\nendfunction()\nf1(1 2 3 4)",
                "function(f2)\n  set(OUT in)\nendfunction()\nset(OUT out)\nf2()",
                "function(f3)\n  set(OUT early PARENT_SCOPE)\n  return()\n  set(OUT late PARENT_SCOPE)\nendfunction()\nf3()",
                "function(f4)\n  foreach(i a b c)\n    if(i STREQUAL \"b\")\n      return()\n    endif()\n    set(OUT ${i} PARENT_SCOPE)\n  endforeach()\nendfunction()\nf4()",
                "macro(m1 a)\n  set(OUT \"${a}${ARGC}${ARGN}\")\nendmacro()\nm1(x y z)",
                "macro(m2)\n  set(OUT \"${ARGV0}-${ARGV1}\")\nendmacro()\nm2(p q)",
                "macro(m3 a)\n  if(a STREQUAL \"a\")\n    set(OUT named)\n  else()\n    set(OUT value)\n  endif()\nendmacro()\nset(a a)\nm3(zz)",
                "function(outer)\n  function(inner)\n    set(OUT deep PARENT_SCOPE)\n  endfunction()\n  inner()\n  set(OUT \"${OUT}!\" PARENT_SCOPE)\nendfunction()\nouter()",
                "function(f5)\n  set(X 1)\n  set(X 2 PARENT_SCOPE)\n  set(OUT ${X} PARENT_SCOPE)\nendfunction()\nset(X 0)\nf5()\nset(OUT \"${OUT}${X}\")",
                "function(F6)\n  set(OUT upper PARENT_SCOPE)\nendfunction()\nf6()",
                "function(f7 v)\n  set(${v} named PARENT_SCOPE)\nendfunction()\nf7(OUT)",
                "function(f8)\n  set(OUT propagated)\n  return(PROPAGATE OUT)\nendfunction()\nf8()",
                "set(OUT before)\nblock()\n  set(OUT inner)\nendblock()",
                "set(OUT before)\nblock(PROPAGATE OUT)\n  set(OUT inner)\nendblock()",
                "set(OUT a)\nblock(SCOPE_FOR VARIABLES)\n  set(OUT b PARENT_SCOPE)\nendblock()",
                "set(OUT a)\nblock(SCOPE_FOR POLICIES)\n  set(OUT b)\nendblock()",
                "block(PROPAGATE VARIABLES)\n  set(VARIABLES v)\nendblock()\nblock(PROPAGATE POLICIES)\n  set(POLICIES p)\nendblock()\nset(OUT \"${VARIABLES}${POLICIES}\")",
                "macro(m4)\n  set(OUT \"${ARGN}\")\nendmacro()\nm4(a \"b c\" d)",
                "function(f11)\n  set(OUT \"${ARGV}\" PARENT_SCOPE)\nendfunction()\nf11(a \"b;c\")",
                "macro(m5)\n  foreach(x IN LISTS ARGN)\n    string(APPEND OUT ${x})\n  endforeach()\n  set(OUT \"${OUT}-\")\nendmacro()\nm5(a b)",
                "function(f12 a)\n  if(a STREQUAL \"1\")\n    set(OUT one PARENT_SCOPE)\n  else()\n    f12(1)\n    set(OUT \"${OUT}+\" PARENT_SCOPE)\n  endif()\nendfunction()\nf12(0)",
                "function(f13)\n  include(${CMAKE_CURRENT_SOURCE_DIR}/inc/a.cmake)\n  set(OUT \"${A_SET}\" PARENT_SCOPE)\nendfunction()\nset(A_SET s)\nf13()\nset(OUT \"${OUT}-${A_SET}\")",
                "function(f14)\n  set(OUT \"${CMAKE_CURRENT_FUNCTION}\" PARENT_SCOPE)\nendfunction()\nf14()",
                "macro(m6 v)\n  set(OUT \"${v}\")\n  set(v changed)\n  set(OUT \"${OUT}-${v}\")\nendmacro()\nm6(orig)",
                "function(f15 first)\n  set(OUT \"${ARGC}\" PARENT_SCOPE)\nendfunction()\nf15(\"\" \"\")",
                "set(FN f16)\nfunction(${FN})\n  set(OUT named PARENT_SCOPE)\nendfunction()\nf16()",
                "function(fc)\n  math(EXPR C \"${C}+1\")\n  set(C ${C} PARENT_SCOPE)\nendfunction()\nset(C 0)\nforeach(i RANGE 1 250)\n  fc()\nendforeach()\nset(OUT ${C})",
                // return() inside a while() leaves the loop and the function.
                "function(f17)\n  set(i 0)\n  while(i LESS 3)\n    math(EXPR i \"${i}+1\")\n    if(i EQUAL 2)\n      set(OUT \"w${i}\" PARENT_SCOPE)\n      return()\n    endif()\n  endwhile()\n  set(OUT after PARENT_SCOPE)\nendfunction()\nf17()",
            ],
        ),
        outputs_table_with(
            "variables and the cache",
            &[
                "set(X 5)\nunset(X)\nset(OUT \"${X}\")",
                "set(OUT a b c)",
                "set(OUT a)\nset(OUT)",
                "set(OUT \"\")\nset(OUT \"${OUT}e\")",
                "set(CX cached CACHE STRING \"\")\nset(CX normal)\nunset(CX)\nset(OUT ${CX})",
                "set(CY first CACHE STRING \"\")\nset(CY second CACHE STRING \"\")\nset(OUT ${CY})",
                "set(CW first CACHE STRING \"\")\nset(CW second CACHE STRING \"\" FORCE)\nset(OUT ${CW})",
                "set(CZ n)\nset(CZ c CACHE STRING \"\")\nset(OUT ${CZ})",
                "set(CI i CACHE INTERNAL \"\")\nset(OUT ${CI})",
                "set(CJ a CACHE INTERNAL \"\")\nset(CJ b CACHE INTERNAL \"\")\nset(CK a CACHE STRING \"\")\nset(CK b CACHE INTERNAL \"\")\nset(OUT ${CJ}${CK})",
                "set(CV cached CACHE STRING \"\")\nset(CV normal)\nset(OUT \"$CACHE{CV}-${CV}\")",
                "set(CU u CACHE STRING \"\")\nunset(CU CACHE)\nset(OUT \"${CU}\")",
                "option(OPTX \"\" ON)\nset(OUT ${OPTX})",
                "option(OPTZ \"\")\nset(OUT ${OPTZ})",
                "set(OPTY normal)\noption(OPTY \"\" ON)\nset(OUT ${OPTY})",
                "set(OPTW c CACHE BOOL \"\")\noption(OPTW \"\" ON)\nset(OUT ${OPTW})",
                "set(OUT x PARENT_SCOPE)",
                "set(ENV{PP_SET2} e2)\nunset(ENV{PP_SET2})\nset(OUT \"$ENV{PP_SET2}-\")",
                "set(ENV{PP_SET4} x)\nset(ENV{PP_SET4} \"\")\nif(DEFINED ENV{PP_SET4})\n  set(OUT d)\nelse()\n  set(OUT u)\nendif()",
                "set(ENV{PP_SET5} x)\nset(ENV{PP_SET5})\nif(DEFINED ENV{PP_SET5})\n  set(OUT d)\nelse()\n  set(OUT u)\nendif()",
                "set(ENV{PP_SET6} x)\nunset(ENV{PP_SET6})\nset(ENV{PP_SET6} \"\")\nif(DEFINED ENV{PP_SET6})\n  set(OUT d)\nelse()\n  set(OUT u)\nendif()",
                "set(CT t CACHE PATH \"\")\nset(OUT \"$CACHE{CT}\")",
                "set(INNER b)\nset(OUTER_b deep)\nset(OUT \"${OUTER_${INNER}}\")",
                "set(NAME1 OUT)\nset(${NAME1} indirect)",
                "set(ENV{PP_SET} e1)\nset(OUT \"$ENV{PP_SET}\")",
                "set(OUT \"a\\;b\")\nlist(LENGTH OUT OUT)",
                "set(OUT [[a;b]])\nlist(LENGTH OUT OUT)",
            ],
            &[
                (
                    pairs(&[
                        ("X", "x"),
                        ("OUT", "o"),
                        ("CX", "ux"),
                        ("CY", "uy"),
                        ("CI", "ui"),
                        ("CV", "uv"),
                        ("OPTX", "OFF"),
                        ("OPTZ", "ON"),
                    ]),
                    vec![],
                ),
                (pairs(&[("CW", "uw"), ("CZ", "uz"), ("CU", "uu")]), vec![]),
            ],
        ),
        outputs_table(
            "argument parsing",
            &[
                "function(pa)\n  cmake_parse_arguments(A \"FLAG;OTHER\" \"ONE\" \"MANY\" ${ARGN})\n  set(OUT \"${A_FLAG}-${A_OTHER}-${A_ONE}-${A_MANY}-${A_UNPARSED_ARGUMENTS}\" PARENT_SCOPE)\nendfunction()\npa(u FLAG ONE 1 MANY x y)",
                "function(pb)\n  cmake_parse_arguments(PARSE_ARGV 1 B \"\" \"K\" \"\")\n  set(OUT \"${B_K}-${B_UNPARSED_ARGUMENTS}\" PARENT_SCOPE)\nendfunction()\npb(skip K v z)",
                "function(pd)\n  cmake_parse_arguments(D \"F\" \"\" \"\" ${ARGN})\n  if(D_F)\n    set(OUT yes PARENT_SCOPE)\n  else()\n    set(OUT no PARENT_SCOPE)\n  endif()\nendfunction()\npd(x)",
                "function(pe)\n  cmake_parse_arguments(E \"\" \"ONE\" \"\" ${ARGN})\n  set(OUT \"${E_ONE}\" PARENT_SCOPE)\nendfunction()\npe(ONE a ONE b)",
                "macro(pf)\n  cmake_parse_arguments(FM \"\" \"V\" \"\" ${ARGN})\n  set(OUT \"${FM_V}\")\nendmacro()\npf(V mv)",
                // PARSE_ARGV in a macro reads the calling function's ARGC and ARGV<n>
                // variables: the macro's own arguments are no variables.
                "macro(pgm)\n  cmake_parse_arguments(PARSE_ARGV 0 GM \"\" \"ONE\" \"\")\n  set(OUT \"${GM_ONE}-${GM_UNPARSED_ARGUMENTS}\" PARENT_SCOPE)\nendmacro()\nfunction(pgf)\n  pgm(ignored ONE m)\nendfunction()\npgf(ONE fromfunction x)",
            ],
        ),
        outputs_table(
            "file names and files",
            &[
                "get_filename_component(OUT a/b/c.tar.gz NAME)",
                "get_filename_component(OUT a/b/c.tar.gz NAME_WE)",
                "get_filename_component(OUT a/b/c.tar.gz EXT)",
                "get_filename_component(OUT a/b/c.tar.gz LAST_EXT)",
                "get_filename_component(OUT a/b/c.tar.gz NAME_WLE)",
                "get_filename_component(OUT a/b/c.tar.gz DIRECTORY)",
                "get_filename_component(OUT a/b/c.tar.gz PATH)",
                "get_filename_component(OUT noext NAME_WE)",
                "get_filename_component(OUT noext EXT)",
                "get_filename_component(OUT noslash DIRECTORY)",
                "get_filename_component(OUT .hidden NAME_WE)",
                "get_filename_component(OUT a.b/c NAME_WE)",
                "get_filename_component(OUT /a/b/ NAME)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/*.txt)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*.cmake)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/?ne.txt)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*/a.cmake)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/*/*.txt)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/one.txt)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/inc/*a*e*.cmake)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/inc/?.cmake ${CMAKE_CURRENT_SOURCE_DIR}/pins/*.txt)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/*.txt)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/p*/*.txt)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/deep/*)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/deep/e*.txt)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/pins/*e*s.t*t)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/inc/*a*d.cmake)",
                "file(GLOB_RECURSE OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/pins ${CMAKE_CURRENT_SOURCE_DIR}/pins/*.txt)",
                "file(GLOB OUT RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/nope/*)\nset(OUT \"${OUT}-\")",
                "get_filename_component(OUT \"${CMAKE_CURRENT_SOURCE_DIR}/pins\" ABSOLUTE)\nget_filename_component(OUT \"${OUT}\" NAME)",
                "file(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/pins/lines.txt\" OUT)",
                "file(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/pins/lines.txt\" OUT REGEX \"^[a-z]+$\")",
                "file(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/pins/lines.txt\" OUT LIMIT_COUNT 2)",
                "file(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/pins/lines.txt\" OUT REGEX \"^[a-z]\" LIMIT_COUNT 2)",
                "file(READ \"${CMAKE_CURRENT_SOURCE_DIR}/pins/one.txt\" OUT)\nstring(STRIP \"${OUT}\" OUT)",
                "file(READ \"${CMAKE_CURRENT_SOURCE_DIR}/pins/lines.txt\" OUT)\nstring(LENGTH \"${OUT}\" OUT)",
            ],
        ),
        outputs_table(
            "include, subdirectories and projects",
            &[
                "set(A_SET \"\")\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/inc/a.cmake)\nset(OUT \"${A_NAME}-${A_DIR}-${A_SET}\")",
                "include(${CMAKE_CURRENT_SOURCE_DIR}/inc/a.cmake RESULT_VARIABLE RV)\nget_filename_component(OUT \"${RV}\" NAME)\nset(OUT \"${OUT}-${A_SET}\")",
                "include(${CMAKE_CURRENT_SOURCE_DIR}/inc/nope.cmake OPTIONAL RESULT_VARIABLE OUT)",
                "set(G_COUNT \"\")\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/inc/guarded.cmake)\nset(G_ONE \"${G_COUNT}\")\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/inc/guarded.cmake)\nset(OUT \"${G_ONE}-${G_COUNT}\")",
                "include(${CMAKE_CURRENT_SOURCE_DIR}/inc/early.cmake)\nset(OUT \"${E_SEEN}\")",
                "list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/modules)\ninclude(pinmod)\nset(OUT \"${MOD_SEEN}\")",
                "set(HERE_SEEN no)\ninclude(here.cmake)\nset(OUT \"${HERE_SEEN}\")",
                "set(DG \"\")\nfunction(incg)\n  include(${CMAKE_CURRENT_SOURCE_DIR}/inc/dirguard.cmake)\nendfunction()\nincg()\nincg()\nset(OUT \"${DG}\")",
                "set(SUB_LOCAL before)\nset(PARENT_IN p)\nadd_subdirectory(sub)\nset(OUT \"${SUB_LOCAL}-${SUB_UP}-${SUB_DIR_NAME}\")",
                "project(inner VERSION 1.2.3 LANGUAGES NONE)\nset(OUT \"${PROJECT_NAME}-${PROJECT_VERSION}-${inner_VERSION_MINOR}-${PROJECT_VERSION_PATCH}\")",
                "get_filename_component(OUT \"${CMAKE_CURRENT_LIST_FILE}\" NAME)",
                "set(SUB_RET before)\nadd_subdirectory(ret)\nset(OUT \"${SUB_RET}\")",
                "project(second LANGUAGES NONE)\nset(OUT \"${CMAKE_PROJECT_NAME}-${PROJECT_NAME}\")",
                "project(third VERSION 4.5.6.7 LANGUAGES NONE)\nset(OUT \"${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_TWEAK}.${third_VERSION_PATCH}\")",
                // A GLOBAL guard holds across scopes; a DIRECTORY guard for the directory and
                // those below it (gd/a/deep is skipped, its sibling gd/b is not), per file.
                "set(GL \"\" CACHE INTERNAL \"\")\nfunction(incgl)\n  include(${CMAKE_CURRENT_SOURCE_DIR}/inc/gl.cmake)\nendfunction()\nincgl()\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/inc/gl.cmake)\nset(OUT \"${GL}\")",
                "set(DC \"\" CACHE INTERNAL \"\")\nset(EC \"\" CACHE INTERNAL \"\")\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/inc/de.cmake)\nadd_subdirectory(gd/a)\nadd_subdirectory(gd/b)\nset(OUT \"${DC}-${EC}\")",
                "file(STRINGS \"${PROJECT_SOURCE_DIR}/pins/deep/d.txt\" OUT)",
                // CMAKE_PROJECT_NAME is any top-directory project()'s (an included file's, a
                // function's, seen after it returns); <name>_SOURCE_DIR outlives the
                // subdirectory that set it, PROJECT_SOURCE_DIR does not.
                "include(${CMAKE_CURRENT_SOURCE_DIR}/inc/proj.cmake)\nset(OUT \"${CMAKE_PROJECT_NAME}-${PROJECT_NAME}\")",
                "function(fproj)\n  project(fnproj LANGUAGES NONE)\nendfunction()\nfproj()\nset(OUT \"${CMAKE_PROJECT_NAME}-${PROJECT_NAME}\")\nif(fnproj_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)\n  string(APPEND OUT -top)\nendif()",
                "add_subdirectory(psub)\nget_filename_component(D \"${psub_SOURCE_DIR}\" NAME)\nset(OUT \"${D}\")\nif(PROJECT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)\n  string(APPEND OUT -top)\nendif()",
            ],
        ),
        outputs_table_with(
            "names the user may set",
            &[
                "list(LENGTH NOPE OUT)",
                "list(APPEND NEW1 x y)\nset(OUT \"${NEW1}\")",
                "list(PREPEND NEW2 x)\nset(OUT \"${NEW2}\")",
                "set(L a)\nset(Y was)\nlist(POP_FRONT L X Y)\nset(OUT \"${X}-${Y}-${L}\")",
                "function(f9)\n  unset(OUT PARENT_SCOPE)\nendfunction()\nset(OUT v)\nf9()\nset(OUT \"${OUT}-\")",
                "function(f10 a)\n  if(DEFINED ARGV1)\n    set(OUT d PARENT_SCOPE)\n  else()\n    set(OUT u PARENT_SCOPE)\n  endif()\nendfunction()\nf10(x)",
                "function(pc)\n  cmake_parse_arguments(C \"\" \"ONE;TWO\" \"\" ${ARGN})\n  if(DEFINED C_ONE)\n    set(D d)\n  else()\n    set(D u)\n  endif()\n  set(OUT \"${D}-${C_KEYWORDS_MISSING_VALUES}-${C_TWO}\" PARENT_SCOPE)\nendfunction()\npc(ONE TWO b)",
            ],
            &[
                (
                    pairs(&[
                        ("NOPE", "a;b"),
                        ("NEW1", "n"),
                        ("NEW2", "m"),
                        ("Y", "y"),
                        ("OUT", "o"),
                        ("ARGV1", "a1"),
                        ("C_ONE", "c1"),
                        ("L", "l"),
                    ]),
                    vec![],
                ),
                (pairs(&[("Y", "y"), ("L", "l;m")]), vec![]),
            ],
        ),
        // A bare name compared (the right of a binary operator is a variable only if one of
        // that name exists) that the tree mentions only elsewhere: in a reference, or as the
        // name a later `set`/`option`/`unset` gives. The user may set each (`-D`).
        outputs_table_with(
            "names the tree mentions only elsewhere",
            &[
                "if(\"x\" STREQUAL REF_ONLY)\n  set(OUT 1)\nendif()",
                "if(\"x\" STREQUAL REF_ONLY_2)\n  set(OUT 1)\nendif()",
                "if(\"x\" STREQUAL SET_LATER_1)\n  set(OUT 1)\nendif()",
                "if(\"x\" STREQUAL OPTION_LATER)\n  set(OUT 1)\nendif()",
                "if(\"x\" STREQUAL UNSET_LATER)\n  set(OUT 1)\nendif()",
                "if(\"x\" STREQUAL NEVER_NAMED)\n  set(OUT 1)\nendif()",
                "message(STATUS \"${REF_ONLY}/${REF_ONLY_2}\")\nset( SET_LATER_1 y)\noption(OPTION_LATER \"\" OFF)\nunset(UNSET_LATER)",
            ],
            &[
                (
                    pairs(&[
                        ("REF_ONLY", "x"),
                        ("REF_ONLY_2", "x"),
                        ("SET_LATER_1", "x"),
                        ("OPTION_LATER", "x"),
                        ("UNSET_LATER", "x"),
                    ]),
                    vec![],
                ),
                (pairs(&[("REF_ONLY_2", "x")]), vec![]),
            ],
        ),
        // How arguments are written: quoting, escapes, brackets, comments, continuations.
        outputs_table(
            "arguments as written",
            &[
                "set(OUT \"\\${X}\")",
                "set(OUT [=[a]]b]=])",
                "set(OUT [[x;y]])\nlist(LENGTH OUT OUT)",
                "set(OUT \"a\\\"b\")",
                "set(OUT a\\;b)\nlist(LENGTH OUT OUT)",
                "set(OUT \"a;b\")\nlist(LENGTH OUT OUT)",
                "set(OUT a;b c)\nlist(LENGTH OUT OUT)",
                "set(OUT a\"b c\"d)",
                "set(OUT \"a\\\nb\")",
                "set(OUT a # a comment\n  b)",
                "set(OUT a #[[ a bracket comment ]] b)",
                "set(OUT #[==[ ]] ]==] c)",
                "set(A.B x)\nset(A-B y)\nset(A/B z)\nset(A+B w)\nset(OUT \"${A.B}${A-B}${A/B}${A+B}\")",
                "set(V1 x)\nset(OUT \"${V1}${V1}\")",
                "set(V2 V1)\nset(OUT \"${${V2}}\")",
                "set(OUT \\\\x)",
                "set(OUT \"a\\tb\")\nstring(LENGTH \"${OUT}\" OUT)",
                "set(OUT \"a\\nb\")\nstring(LENGTH \"${OUT}\" OUT)",
                "set(OUT x\\ y)",
                "set(OUT \"\" \"\")\nlist(LENGTH OUT OUT)",
                "set(E1 \"\")\nset(OUT ${E1} ${E1} z)\nlist(LENGTH OUT OUT)",
                "set(OUT @V1@)",
                "SET(OUT upper)",
                "set (OUT spaced)",
                "set(\n  OUT\n  lines\n)",
            ],
        ),
        // A function whose result depends on an input (a return() under a condition on it):
        // pinprobe summarises the call, and a function it calls is followed for effects.
        outputs_table_with(
            "a summarised call that calls a function",
            &[
                "function(inner)\n  set(INNER_SET x PARENT_SCOPE)\nendfunction()\nfunction(outer)\n  if(PP_C0)\n    set(OUT early PARENT_SCOPE)\n    return()\n  endif()\n  inner()\n  set(OUT \"late-${INNER_SET}\" PARENT_SCOPE)\nendfunction()\nouter()",
            ],
            &cache_inputs_of("PP_C0", &["ON", "OFF"]),
        ),
        // Policies as the policy version and `cmake_policy()` set them, oldest first (each
        // step's version holds for the steps after it).
        outputs_table_with(
            "policies",
            &[
                "cmake_minimum_required(VERSION 3.12)\nset(OPTP normal)\noption(OPTP \"\" ON)\nset(OUT ${OPTP})",
                "cmake_policy(SET CMP0077 NEW)\nset(OPTQ normal)\noption(OPTQ \"\" ON)\nset(OUT ${OPTQ})",
                "cmake_minimum_required(VERSION 3.20)\nset(CP n)\nset(CP c CACHE STRING \"\")\nset(OUT ${CP})",
                "cmake_policy(PUSH)\ncmake_policy(SET CMP0126 NEW)\nset(CQ n)\nset(CQ c CACHE STRING \"\")\nset(OUT ${CQ})\ncmake_policy(POP)",
                "set(CR n)\nset(CR c CACHE STRING \"\")\nset(OUT ${CR})",
                "cmake_minimum_required(VERSION 3.24)\nfunction(rp1)\n  set(OUT p)\n  return(PROPAGATE OUT)\nendfunction()\nrp1()\nset(OUT \"${OUT}-\")",
                "cmake_minimum_required(VERSION 3.5...3.26)\nset(CS n)\nset(CS c CACHE STRING \"\")\nset(OUT ${CS})",
                "cmake_policy(VERSION 3.25)\nfunction(rp2)\n  set(OUT p)\n  return(PROPAGATE OUT)\nendfunction()\nrp2()",
                "string(REGEX REPLACE \"^a\" x OUT aaa)",
                "function(px)\n  cmake_parse_arguments(PARSE_ARGV 0 X \"\" \"ONE;TWO\" \"\")\n  foreach(k ONE TWO)\n    if(DEFINED X_${k})\n      string(APPEND D d)\n    else()\n      string(APPEND D u)\n    endif()\n  endforeach()\n  set(OUT \"${D}\" PARENT_SCOPE)\nendfunction()\nset(D \"\")\npx(ONE \"\" TWO)",
                "cmake_minimum_required(VERSION 3.31)\nfunction(pz)\n  cmake_parse_arguments(Z \"\" \"ONE\" \"\" ${ARGN})\n  if(DEFINED Z_ONE)\n    set(OUT d PARENT_SCOPE)\n  else()\n    set(OUT u PARENT_SCOPE)\n  endif()\nendfunction()\npz(ONE)",
                "function(py)\n  cmake_parse_arguments(PARSE_ARGV 0 Y \"\" \"ONE;TWO\" \"\")\n  foreach(k ONE TWO)\n    if(DEFINED Y_${k})\n      string(APPEND D d)\n    else()\n      string(APPEND D u)\n    endif()\n  endforeach()\n  set(OUT \"${D}\" PARENT_SCOPE)\nendfunction()\nset(D \"\")\npy(ONE \"\" TWO)",
                "cmake_minimum_required(VERSION 4.1)\nstring(REGEX REPLACE \"^a\" x OUT aaa)",
                "string(REGEX MATCHALL \"^a\" OUT aaa)",
            ],
            &[(
                pairs(&[
                    ("OPTP", "OFF"),
                    ("OPTQ", "OFF"),
                    ("CP", "u"),
                    ("CQ", "u"),
                    ("CR", "u"),
                    ("CS", "u"),
                ]),
                vec![],
            )],
        ),
    ];
    cases.extend(issue_13_cases());
    cases
}

/// A configuration with an error: what CMake fetched before it, and after it where CMake goes
/// on (every error but a fatal one).
fn errors() -> Vec<Case> {
    let fetch = |n: &str| {
        format!(
            "FetchContent_Declare({n} GIT_REPOSITORY https://example.invalid/{n}.git GIT_TAG t)\nFetchContent_MakeAvailable({n})\n"
        )
    };
    [
        ("message", "message(FATAL_ERROR \"stop\")\n"),
        ("message SEND_ERROR", "message(SEND_ERROR \"stop\")\n"),
        (
            "a missing include",
            "include(${CMAKE_CURRENT_SOURCE_DIR}/nope.cmake)\n",
        ),
        (
            "a missing include with a result variable",
            "include(${CMAKE_CURRENT_SOURCE_DIR}/nope.cmake RESULT_VARIABLE RV)\n",
        ),
        ("a sublist", "set(L a b c d)\nlist(SUBLIST L 5 1 X)\n"),
        (
            "a range counting away from its stop",
            "foreach(i RANGE 5 1 2)\nendforeach()\n",
        ),
        (
            "a range counting down away from its stop",
            "foreach(i RANGE 1 6 -2)\nendforeach()\n",
        ),
        (
            "a range bound that is no integer",
            "foreach(i RANGE a)\nendforeach()\n",
        ),
        (
            "a sublist at the length",
            "set(L a b c)\nlist(SUBLIST L 3 1 X)\n",
        ),
        (
            "a sublist length under -1",
            "set(L a b c)\nlist(SUBLIST L 0 -2 X)\n",
        ),
        (
            "a list index at the length",
            "set(L a b c)\nlist(GET L 3 X)\n",
        ),
        (
            "a list index before the start",
            "set(L a b c)\nlist(GET L -4 X)\n",
        ),
        (
            "an insert past the end",
            "set(L a b c)\nlist(INSERT L 4 z)\n",
        ),
        (
            "an insert before the start",
            "set(L a b c)\nlist(INSERT L -4 z)\n",
        ),
        (
            "a removal at the length",
            "set(L a b c)\nlist(REMOVE_AT L 3)\n",
        ),
        ("a get from an empty list", "set(E \"\")\nlist(GET E 0 X)\n"),
        (
            "a substring begin past the end",
            "string(SUBSTRING abc 4 1 X)\n",
        ),
        (
            "a substring length under -1",
            "string(SUBSTRING abc 0 -2 X)\n",
        ),
        ("a negative repeat", "string(REPEAT ab -1 X)\n"),
        (
            "an unknown replace escape",
            "string(REGEX REPLACE b \"\\\\t\" X abc)\n",
        ),
        (
            "a replace ending in a backslash",
            "string(REGEX REPLACE b \"x\\\\\" X abc)\n",
        ),
        ("a division by zero", "math(EXPR X \"1 / 0\")\n"),
        ("a remainder by zero", "math(EXPR X \"1 % 0\")\n"),
        (
            "a missing subdirectory",
            "add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/nope)\n",
        ),
        ("a list index", "set(L a)\nlist(GET L 5 X)\n"),
        ("foreach() without arguments", "foreach()\nendforeach()\n"),
        (
            "foreach(IN) without LISTS or ITEMS",
            "foreach(x IN FOO)\nendforeach()\n",
        ),
        (
            "a function given fewer arguments than it names",
            "function(two a b)\nendfunction()\ntwo(x)\n",
        ),
        (
            "a macro given fewer arguments than it names",
            "macro(mtwo a b)\nendmacro()\nmtwo(x)\n",
        ),
        (
            "an index for PARSE_ARGV that is no number",
            "function(pa)\n  cmake_parse_arguments(PARSE_ARGV x P \"\" \"\" \"\")\nendfunction()\npa()\n",
        ),
        (
            "PARSE_ARGV outside a function",
            "set(ARGC \"\")\ncmake_parse_arguments(PARSE_ARGV 0 P \"\" \"\" \"\")\n",
        ),
        ("include() without a file", "set(NO_FILE \"\")\ninclude(${NO_FILE})\n"),
        (
            "add_subdirectory() without a directory",
            "set(NO_DIR \"\")\nadd_subdirectory(${NO_DIR})\n",
        ),
        ("a block with an unknown argument", "block(FOO)\nendblock()\n"),
        (
            "a block scope for something else",
            "block(SCOPE_FOR BAR)\nendblock()\n",
        ),
        // A function is left at its first failing command; a failing command in an if() body
        // inside it leaves neither.
        (
            "an error in a function",
            "set(L a)\nfunction(ef)\n  list(GET L 5 X)\n  FetchContent_Declare(inner GIT_REPOSITORY https://example.invalid/inner.git GIT_TAG t)\n  FetchContent_MakeAvailable(inner)\nendfunction()\nef()\n",
        ),
        // message(SEND_ERROR) reports an error and succeeds: the function goes on.
        (
            "a SEND_ERROR in a function",
            "function(es)\n  message(SEND_ERROR \"stop\")\n  FetchContent_Declare(inner GIT_REPOSITORY https://example.invalid/inner.git GIT_TAG t)\n  FetchContent_MakeAvailable(inner)\nendfunction()\nes()\n",
        ),
        (
            "an error in an if in a function",
            "set(L a)\nfunction(eg)\n  if(TRUE)\n    list(GET L 5 X)\n    FetchContent_Declare(in1 GIT_REPOSITORY https://example.invalid/in1.git GIT_TAG t)\n    FetchContent_MakeAvailable(in1)\n  endif()\n  FetchContent_Declare(in2 GIT_REPOSITORY https://example.invalid/in2.git GIT_TAG t)\n  FetchContent_MakeAvailable(in2)\nendfunction()\neg()\n",
        ),
        ("a substring", "string(SUBSTRING abc 5 1 X)\n"),
        ("math", "math(EXPR X \"1 +\")\n"),
        (
            "a missing file",
            "file(READ ${CMAKE_CURRENT_SOURCE_DIR}/nope.txt X)\n",
        ),
    ]
    .iter()
    .flat_map(|(name, stop)| {
        let top = format!(
            "{}message(STATUS \"going on\")\n{stop}{}",
            fetch("before"),
            fetch("after")
        );
        // The same in a function's body: CMake leaves it at a command that fails, and goes on
        // after one that only reports an error.
        let body = format!("{stop}{}", fetch("inside")).replace('\n', "\n  ");
        let called = format!(
            "{}function(erring)\n  {body}\nendfunction()\nerring()\n{}",
            fetch("before"),
            fetch("after")
        );
        // And in a macro's body, in an if() in a function's body, and in a loop's body.
        let expanded = format!(
            "{}macro(erring)\n  {body}\nendmacro()\nerring()\n{}",
            fetch("before"),
            fetch("after")
        );
        let nested = format!(
            "{}function(erring)\n  if(TRUE)\n    {}\n  endif()\n  {}endfunction()\nerring()\n{}",
            fetch("before"),
            stop.replace('\n', "\n    "),
            fetch("inside").replace('\n', "\n  "),
            fetch("after")
        );
        let looped = format!(
            "{}foreach(once a)\n  {body}\nendforeach()\n{}",
            fetch("before"),
            fetch("after")
        );
        [
            case(
                &format!("an error: {name}"),
                &[("CMakeLists.txt", &top)],
                false,
            ),
            case(
                &format!("an error in a function's body: {name}"),
                &[("CMakeLists.txt", &called)],
                false,
            ),
            case(
                &format!("an error in a macro's body: {name}"),
                &[("CMakeLists.txt", &expanded)],
                false,
            ),
            case(
                &format!("an error in an if() in a function's body: {name}"),
                &[("CMakeLists.txt", &nested)],
                false,
            ),
            case(
                &format!("an error in a loop's body: {name}"),
                &[("CMakeLists.txt", &looped)],
                false,
            ),
        ]
    })
    .collect()
}

/// How FetchContent, ExternalProject and CPM calls become fetches: one case a rule.
fn fetch_cases() -> Vec<Case> {
    let d = |n: &str, tag: &str| {
        format!(
            "FetchContent_Declare({n} GIT_REPOSITORY https://example.invalid/{n}.git GIT_TAG {tag})\n"
        )
    };
    let scenarios: Vec<(&str, String)> = vec![
        (
            "names in any case",
            format!("{}FetchContent_MakeAvailable(A)\n", d("a", "t1")),
        ),
        (
            "the first declaration wins",
            format!("{}{}FetchContent_MakeAvailable(b)\n", d("b", "t1"), d("b", "t2")),
        ),
        (
            "the last of a repeated keyword",
            "FetchContent_Declare(c GIT_REPOSITORY https://example.invalid/c.git GIT_TAG t1 GIT_TAG t2)\nFetchContent_MakeAvailable(c)\n".into(),
        ),
        (
            "made available twice",
            format!("{}FetchContent_MakeAvailable(e)\nFetchContent_MakeAvailable(e)\nFetchContent_Populate(e)\n", d("e", "t1")),
        ),
        (
            "several at once",
            format!("{}{}FetchContent_MakeAvailable(g f)\n", d("f", "t1"), d("g", "t2")),
        ),
        (
            "declared in a function",
            format!("function(decl)\n  {}endfunction()\ndecl()\nFetchContent_MakeAvailable(h)\n", d("h", "t1")),
        ),
        (
            "declared where CMake never goes",
            format!("if(FALSE)\n  {}endif()\n{}FetchContent_MakeAvailable(i)\n", d("i", "t1"), d("i", "t2")),
        ),
        (
            "a source directory set in the file",
            format!("set(FETCHCONTENT_SOURCE_DIR_J ${{CMAKE_CURRENT_SOURCE_DIR}})\n{}FetchContent_MakeAvailable(j)\n", d("j", "t1")),
        ),
        (
            "a source directory set empty or off",
            format!("set(FETCHCONTENT_SOURCE_DIR_K \"\")\nset(FETCHCONTENT_SOURCE_DIR_L OFF)\n{}{}FetchContent_MakeAvailable(k l)\n", d("k", "t1"), d("l", "t2")),
        ),
        (
            "a declaration only",
            d("m", "t1"),
        ),
        (
            "a populate with its own details",
            "FetchContent_Populate(n SOURCE_DIR ${CMAKE_BINARY_DIR}/n GIT_REPOSITORY https://example.invalid/n.git GIT_TAG t1)\nFetchContent_Populate(o SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR})\n".into(),
        ),
        (
            "an external project by URL and by repository",
            "include(ExternalProject)\nExternalProject_Add(p URL https://example.invalid/p.tar.gz)\nExternalProject_Add(q GIT_REPOSITORY https://example.invalid/q.git GIT_TAG t1)\n".into(),
        ),
        (
            "a tag from a variable set after the declaration",
            "set(T before)\nFetchContent_Declare(r GIT_REPOSITORY https://example.invalid/r.git GIT_TAG ${T})\nset(T after)\nFetchContent_MakeAvailable(r)\n".into(),
        ),
        (
            "a quoted list as the tag",
            "set(L t1 t2)\nFetchContent_Declare(x1 GIT_REPOSITORY https://example.invalid/x1.git GIT_TAG \"${L}\")\nFetchContent_MakeAvailable(x1)\n".into(),
        ),
        (
            "quoted lists with empty elements as tags",
            "FetchContent_Declare(x2 GIT_REPOSITORY https://example.invalid/x2.git GIT_TAG \"t1;\")\nFetchContent_Declare(x3 GIT_REPOSITORY https://example.invalid/x3.git GIT_TAG \";t2\")\nFetchContent_Declare(x4 GIT_REPOSITORY https://example.invalid/x4.git GIT_TAG \"\" GIT_TAG t3)\nFetchContent_MakeAvailable(x2 x3 x4)\n".into(),
        ),
        (
            // The tag hidden in a quoted repository value is still the tag CMake fetches.
            "a keyword inside a quoted value",
            format!("FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY \"{FA};GIT_TAG;{AFFECTED}\")\nFetchContent_MakeAvailable(vllm-flash-attn)\n"),
        ),
        (
            "populated where the caller cannot see, then asked",
            format!("function(fa)\n  {}  FetchContent_MakeAvailable(pa)\nendfunction()\nfa()\nFetchContent_GetProperties(pa)\nif(pa_POPULATED)\n  {}  FetchContent_MakeAvailable(pb)\nendif()\n", d("pa", "t1"), d("pb", "t2")),
        ),
        (
            "an undeclared name",
            format!("{}FetchContent_MakeAvailable(s nosuch)\n", d("s", "t1")),
        ),
        (
            "a CPM package once",
            "include(CPM)\nCPMAddPackage(NAME u GIT_REPOSITORY https://example.invalid/u.git GIT_TAG t1)\nCPMAddPackage(NAME U GIT_REPOSITORY https://example.invalid/u.git GIT_TAG t2)\nCPMAddPackage(NAME w GITHUB_REPOSITORY o/w VERSION 1.2)\n".into(),
        ),
    ];
    scenarios
        .iter()
        .map(|(name, top)| case(&format!("fetch: {name}"), &[("CMakeLists.txt", top)], false))
        .collect()
}

/// A value joined over a condition pinprobe cannot decide (a path from the environment), used
/// as the tag as it is: what is computed from it keeps both sides' values, or is any value.
fn joined_value_cases() -> Vec<Case> {
    let join = "if(EXISTS \"$ENV{PP_E0}\")\n  set(J b)\nelse()\n  set(J a)\nendif()\nset(X_a t1)\nset(X_b t2)\n";
    [
        ("a reference whose name is joined", "${X_${J}}"),
        ("a joined value twice", "${J}-${J}"),
        ("a joined value beside text", "v${J}.0"),
    ]
    .iter()
    .map(|(name, tag)| {
        let top = format!(
            "{join}FetchContent_Declare(k GIT_REPOSITORY https://example.invalid/k.git GIT_TAG \"{tag}\")\nFetchContent_MakeAvailable(k)\n"
        );
        let mut c = case(&format!("joined: {name}"), &[("CMakeLists.txt", &top)], true);
        c.variants = vec![(vec![], pairs(&[("PP_E0", "/")]))];
        c
    })
    .collect()
}

/// A tree whose configuration writes (or removes) a file and then reads it: CMake reads what
/// was written, so the tree's own copy (here always the fixed tag) must not decide the pin.
fn written_file_cases() -> Vec<Case> {
    let fetch_tag = format!(
        "FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG ${{TAG}})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
    );
    let stale_sub = format!(
        "FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {FIX})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
    );
    let written_sub = stale_sub.replace(FIX, AFFECTED);
    // (what the case does, its CMakeLists.txt, the tree's other files)
    type Written<'a> = (&'a str, String, Vec<(&'a str, String)>);
    let cases: Vec<Written> = vec![
        (
            "file(WRITE) then file(READ)",
            format!(
                "file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt {AFFECTED})\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt TAG)\n{fetch_tag}"
            ),
            vec![("pins/tag.txt", FIX.to_string())],
        ),
        (
            "configure_file() then include()",
            format!(
                "set(BAD {AFFECTED})\nconfigure_file(pins/tag.cmake.in ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.cmake @ONLY)\ninclude(pins/tag.cmake)\n{fetch_tag}"
            ),
            vec![
                ("pins/tag.cmake.in", "set(TAG @BAD@)\n".to_string()),
                ("pins/tag.cmake", format!("set(TAG {FIX})\n")),
            ],
        ),
        (
            "file(COPY_FILE) over a file, then file(STRINGS)",
            format!(
                "file(COPY_FILE ${{CMAKE_CURRENT_SOURCE_DIR}}/new/tag.txt ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt)\nfile(STRINGS ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt TAG)\n{fetch_tag}"
            ),
            vec![
                ("new/tag.txt", format!("{AFFECTED}\n")),
                ("pins/tag.txt", format!("{FIX}\n")),
            ],
        ),
        // file(COPY) skips a file whose copy has the same timestamp: into a new directory.
        (
            "file(COPY) into a directory, then file(READ)",
            format!(
                "file(COPY ${{CMAKE_CURRENT_SOURCE_DIR}}/new/tag.txt DESTINATION ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/copied)\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/copied/tag.txt TAG)\n{fetch_tag}"
            ),
            vec![("new/tag.txt", AFFECTED.to_string())],
        ),
        (
            "file(WRITE) of a CMakeLists.txt, then add_subdirectory()",
            format!(
                "file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/sub/CMakeLists.txt \"{}\")\nadd_subdirectory(sub)\n",
                written_sub.replace('\n', "\\n")
            ),
            vec![("sub/CMakeLists.txt", stale_sub.clone())],
        ),
        (
            "a process copies over a file, then file(READ)",
            format!(
                "execute_process(COMMAND ${{CMAKE_COMMAND}} -E copy ${{CMAKE_CURRENT_SOURCE_DIR}}/new/tag.txt ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt)\nfile(READ ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/tag.txt TAG)\n{fetch_tag}"
            ),
            vec![
                ("new/tag.txt", AFFECTED.to_string()),
                ("pins/tag.txt", FIX.to_string()),
            ],
        ),
        (
            "file(REMOVE) then if(EXISTS)",
            format!(
                "file(REMOVE ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/fixed.txt)\nif(EXISTS ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/fixed.txt)\n  set(TAG {FIX})\nelse()\n  set(TAG {AFFECTED})\nendif()\n{fetch_tag}"
            ),
            vec![("pins/fixed.txt", "yes\n".to_string())],
        ),
        (
            "file(WRITE) into a globbed directory",
            format!(
                "file(WRITE ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/g/b.tag x)\nfile(GLOB G ${{CMAKE_CURRENT_SOURCE_DIR}}/pins/g/*.tag)\nlist(LENGTH G N)\nif(N EQUAL 2)\n  set(TAG {AFFECTED})\nelse()\n  set(TAG {FIX})\nendif()\n{fetch_tag}"
            ),
            vec![("pins/g/a.tag", "x".to_string())],
        ),
    ];
    cases
        .into_iter()
        .map(|(name, top, mut rest)| {
            rest.insert(0, ("CMakeLists.txt", top));
            let list: Vec<(&str, &str)> = rest.iter().map(|(p, t)| (*p, t.as_str())).collect();
            Case {
                undecided_ok: true,
                ..case(&format!("a written file: {name}"), &list, true)
            }
        })
        .collect()
}

/// One hand-written case per class of issue 13.
fn issue_13_cases() -> Vec<Case> {
    let mut cases = errors();
    cases.extend(joined_value_cases());
    cases.extend(written_file_cases());
    // The side of a joined condition CMake takes (pinprobe cannot evaluate CMAKE_VERSION) sets
    // a normal variable over a cache entry of the same name: the tag is that side's.
    cases.push(case(
        "a joined side's variable over a cache entry",
        &[(
            "CMakeLists.txt",
            &format!(
                "set(TAG {FIX} CACHE INTERNAL \"\")\nif(CMAKE_VERSION VERSION_GREATER 3.0)\n  set(TAG {AFFECTED})\nendif()\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG ${{TAG}})\nFetchContent_MakeAvailable(vllm-flash-attn)\n"
            ),
        )],
        true,
    ));
    cases.extend(fetch_cases());
    let conditions = format!(
        r#"set(TAG {AFFECTED})
if(FALSE)
  set(TAG {FIX})
elseif("a" STREQUAL "b" OR (1 LESS 0 AND NOT OFF))
  set(TAG deadbeef)
elseif(3.10 VERSION_GREATER 3.9 AND DEFINED TAG AND TAG MATCHES "^5063")
  set(TAG "${{TAG}}")
else()
  set(TAG {FIX})
endif()
if(FALSE)
  FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {FIX})
endif()
FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG ${{TAG}})
FetchContent_MakeAvailable(vllm-flash-attn)
"#
    );
    cases.push(case(
        "conditions",
        &[("CMakeLists.txt", &conditions)],
        false,
    ));

    let scopes = format!(
        r#"set(TAG {AFFECTED})
function(pick value)
  set(TAG ${{value}})
  set(OTHER ${{ARGN}} PARENT_SCOPE)
endfunction()
pick({FIX} extra)
macro(choose v)
  set(MTAG ${{v}})
  set(MARGS "${{ARGN}}")
endmacro()
choose(${{TAG}} a b)
set(PARENT_ONLY x PARENT_SCOPE)
set(TAG {FIX} CACHE STRING "over a normal variable")
set(C1 {AFFECTED} CACHE STRING "first")
set(C1 {FIX} CACHE STRING "second, no FORCE")
set(C2 {FIX} CACHE STRING "")
set(C2 ${{C1}} CACHE STRING "" FORCE)
option(USE_FIX "" OFF)
if(USE_FIX)
  set(MTAG {FIX})
endif()
FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG ${{MTAG}})
FetchContent_MakeAvailable(vllm-flash-attn)
FetchContent_Declare(other GIT_REPOSITORY https://example.invalid/o.git GIT_TAG ${{C2}})
FetchContent_MakeAvailable(other)
"#
    );
    let mut c = case("scopes", &[("CMakeLists.txt", &scopes)], true);
    c.variants = vec![
        (pairs(&[("USE_FIX", "ON")]), vec![]),
        (pairs(&[("C1", "cafe")]), vec![]),
    ];
    cases.push(c);

    let strings = r#"include(ExternalProject)
string(CONCAT A "506341a1" "43fcabd4")
set(B "bb79052a7605")
string(APPEND B "ada727d6b3f5")
string(REPLACE "bb" "bb" B "${B}")
set(L "")
list(APPEND L x "${A}${B}" y)
list(GET L 1 TAG)
string(TOUPPER "${TAG}" UP)
string(TOLOWER "${UP}" TAG)
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/pins/deepgemm.txt DG REGEX "^[0-9a-f]+$")
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/pins/qutlass.txt QT)
string(STRIP "${QT}" QT)
string(SUBSTRING "${QT}" 0 40 QT)
math(EXPR N "2 * (3 + 4)")
set(COUNT "")
foreach(i RANGE 1 3)
  string(APPEND COUNT "${i}")
endforeach()
set(K 0)
while(K LESS 3)
  math(EXPR K "${K} + 1")
endwhile()
FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git GIT_TAG ${TAG})
FetchContent_MakeAvailable(vllm-flash-attn)
FetchContent_Declare(deepgemm GIT_REPOSITORY https://github.com/vllm-project/DeepGEMM.git GIT_TAG ${DG})
FetchContent_MakeAvailable(deepgemm)
ExternalProject_Add(qutlass GIT_REPOSITORY https://github.com/IST-DASLab/qutlass.git GIT_TAG ${QT} SOURCE_DIR q-${N}-${COUNT}-${K})
"#;
    cases.push(case(
        "strings",
        &[
            ("CMakeLists.txt", strings),
            (
                "pins/deepgemm.txt",
                "# a comment\ne21c821f39a2056d68067a466c64ddc942200106\n",
            ),
            (
                "pins/qutlass.txt",
                "  830d2c4537c7396e14a02a46fbddd18b5d107c65\n\n",
            ),
        ],
        false,
    ));

    let includes = r#"set(TAG first)
include(third_party/fa.cmake)
set(TAG third)
add_subdirectory(sub)
list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/modules)
include(pinmod)
FetchContent_MakeAvailable(vllm-flash-attn sub-dep mod-dep)
"#;
    let fa = format!(
        "set(TAG {AFFECTED})\nFetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG ${{TAG}})\n"
    );
    let sub = "set(TAG ${TAG}-sub)\nset(SUBDIR ${CMAKE_CURRENT_SOURCE_DIR})\nFetchContent_Declare(sub-dep GIT_REPOSITORY https://example.invalid/s.git GIT_TAG ${TAG})\n";
    let module = "FetchContent_Declare(mod-dep GIT_REPOSITORY https://example.invalid/m.git GIT_TAG ${TAG}-mod)\n";
    cases.push(case(
        "includes",
        &[
            ("CMakeLists.txt", includes),
            ("third_party/fa.cmake", &fa),
            ("sub/CMakeLists.txt", sub),
            ("modules/pinmod.cmake", module),
        ],
        false,
    ));

    let fetchcontent = format!(
        r#"FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA})
FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY {FA} GIT_TAG {FIX})
FetchContent_GetProperties(vllm-flash-attn)
if(NOT vllm-flash-attn_POPULATED)
  FetchContent_Populate(vllm-flash-attn)
endif()
FetchContent_MakeAvailable(vllm-flash-attn)
FetchContent_Populate(
  deepgemm
  SUBBUILD_DIR ${{CMAKE_BINARY_DIR}}/_deps/deepgemm-subbuild
  SOURCE_DIR ${{CMAKE_BINARY_DIR}}/_deps/deepgemm-src
  GIT_REPOSITORY https://github.com/vllm-project/DeepGEMM.git
  GIT_TAG e21c821f39a2056d68067a466c64ddc942200106
)
FetchContent_Declare(local-dep GIT_REPOSITORY https://example.invalid/l.git GIT_TAG {AFFECTED})
FetchContent_MakeAvailable(local-dep)
include(CPM)
CPMAddPackage(NAME fmt GITHUB_REPOSITORY fmtlib/fmt VERSION 10.2.1)
CPMAddPackage(NAME fmt GITHUB_REPOSITORY fmtlib/fmt GIT_TAG other)
"#
    );
    let mut c = case("fetchcontent", &[("CMakeLists.txt", &fetchcontent)], true);
    c.variants = vec![(
        pairs(&[("FETCHCONTENT_SOURCE_DIR_LOCAL-DEP", "/tmp")]),
        vec![],
    )];
    cases.push(c);

    let (env_top, presets) = environment_tree();
    let mut c = case(
        "env",
        &[("CMakeLists.txt", &env_top), ("CMakePresets.json", presets)],
        true,
    );
    c.variants = vec![
        (vec![], pairs(&[("PP_FA_TAG", AFFECTED)])),
        (
            pairs(&[("FA_REPO", "https://mirror.invalid/fa.git")]),
            vec![],
        ),
    ];
    cases.push(c);
    cases
}

/// The environment case's top file (without [`HEAD`]) and its presets.
pub(super) fn environment_tree() -> (String, &'static str) {
    let top = format!(
        r#"if(DEFINED ENV{{PP_FA_TAG}})
  set(TAG $ENV{{PP_FA_TAG}})
else()
  set(TAG {FIX})
endif()
set(FA_REPO {FA} CACHE STRING "")
FetchContent_Declare(vllm-flash-attn GIT_REPOSITORY ${{FA_REPO}} GIT_TAG ${{TAG}})
FetchContent_MakeAvailable(vllm-flash-attn)
"#
    );
    let presets = r#"{"version": 3, "configurePresets": [{"name": "mirror", "binaryDir": "b", "cacheVariables": {"FA_REPO": "https://mirror.invalid/fa.git"}}]}"#;
    (top, presets)
}

/// The preset is a configuration of its own, with the mirror (no CMake needed).
pub(super) fn preset_tree() -> std::collections::BTreeMap<String, String> {
    let (top, presets) = environment_tree();
    files(&[
        ("CMakeLists.txt", &format!("{HEAD}{top}")),
        ("CMakePresets.json", presets),
    ])
}
