#!/usr/bin/env python3
"""Build rules/ledger.yaml, the release ledger: every kernel-project pin each real vLLM release declares.

    tools/ledger/fetch.sh                       # the real sdists (and wheels), with pip, outside the repo
    tools/ledger/build.py [--cache DIR] [--pinprobe BIN] [--repo NAME=DIR ...] [--out rules/ledger.yaml]

Input: the unpacked vLLM sdists under CACHE/sdist/vllm-VERSION/ (tools/ledger/fetch.sh; CACHE
defaults to $PINPROBE_REAL_DATA_DIR, else target/realdata in the checkout). Every release that ships
`cmake/external_projects/` gets one ledger entry. Nothing from the sdists is copied into the
repository: the ledger holds facts only (versions, SHAs, URLs, file names, line numbers).

Per release:
- `version` from `vllm/_version.py` (`__version__`), checked against the sdist's `PKG-INFO`
  `Version:`. `vllm_commit` is `__commit_id__` without its `g` prefix: an abbreviated SHA, since
  no clone of vllm-project/vllm is available to expand it (`vllm_commit_full: false` says so).
- `pins`: every FetchContent_Declare, FetchContent_Populate (the direct form
  `FetchContent_Populate(name GIT_REPOSITORY .. GIT_TAG ..)` too) and ExternalProject_Add with a
  GIT_REPOSITORY/GIT_TAG in `cmake/external_projects/*.cmake`, as CMake itself evaluates each file
  in two configurations: `cuda` (VLLM_GPU_LANG=CUDA, VLLM_TARGET_DEVICE=cuda, CUDA 13.0, no
  *_SRC_DIR override, empty environment: the PyPI build) and `rocm` (VLLM_GPU_LANG=HIP,
  VLLM_TARGET_DEVICE=rocm). A pin lists the configurations that fetch it. Whether CMakeLists.txt
  includes a file in a configuration is not evaluated here (it includes all of them for CUDA).

How each pin is found, twice, by independent means (the build fails if they disagree):
1. Real CMake (`cmake -P`, `pip install cmake`): each file runs in script mode after a prelude
   that replaces FetchContent_Declare / FetchContent_Populate / FetchContent_MakeAvailable /
   FetchContent_GetProperties / ExternalProject_Add (and `include`, and every command script mode
   does not know, discovered by running) with stand-ins that print their arguments. CMake
   evaluates set(), if(), quoting, ${} expansion and ENV checks itself: its records say which
   repository and tag each configuration fetches. Nothing is downloaded.
2. A text reader written here (CMake's tokenizer rules: # and #[[ ]] comments, quoted and bracket
   arguments): every such call, the file and line of its GIT_TAG, and the values a ${VAR}
   argument can take from the file's set() commands.
Every CMake record must match exactly one text call (same file, command, name, and repository and
tag among the text's candidates), which gives its line; a text call CMake never reached is listed
in `unreached` for that release.

Recorded verdicts (`verdicts` under a pin): with `--repo NAME=DIR` (a clone or bare mirror of a
component's repository) and `--pinprobe BIN`, the script runs `BIN scan SDIST --format json --repo
...` and keeps the findings on that pin that the clone decided (decided_by `signature` or
`ancestry`), only where git confirms the clone holds the pinned commit. Each is checked against
this script's own OSV range evaluation with `git merge-base --is-ancestor` (introduced / fixed /
last_affected / limit; introduced "0" with `introduced_unknown` never says affected by ancestry
alone): a contradiction aborts the build. Provenance records the clone (name and HEAD commit), the
pinned commit and the rule's range commits the clone holds.

Release-wheel verdicts: a release's wheel (CACHE/wheel/vllm-VERSION-*.whl) is the build of exactly
that release's tree (its pins and its PATCH_COMMAND patches), so where it is present the rules
that signatures decide on its shipped files are recorded as verdicts of the release's
flash-attention pin, even where no clone holds the pinned commit: `BIN scan WHEEL --format json`
gives the findings, and each one decided by a signature (source signatures PINPROBE-2026-0001,
-0004, -0008; ELF `symbols:` signatures -0003, -0007: every rule with a `signature` or `symbols`)
is checked here by independent means before it is recorded: Python `ast` on the shipped FA4 and
FA3-interface sources (docs/src/design.md's three conditions for -0001; the unguarded or re-raising
`_vllm_fa3_C` import for -0004; the FP8 `max_offset` / `rescale_threshold` shape for -0008) and
`nm -D` on the shipped `_vllm_fa3_C*.so` with the rule's own regexes for -0003 / -0007. A
disagreement aborts the build; a rule with no independent check is not recorded. Provenance:
`decided_by: release-wheel signature`, the wheel's file name and sha256, the pinprobe version,
and the check. A clone verdict for the same rule that disagrees aborts the build too.

Patches: every pin records `patches`, the files its PATCH_COMMAND applies (paths relative to the
sdist, sha256 of their bytes; `[]` when none). A source tree scan uses a pin's recorded verdicts
only when the tree pins the same commit and declares byte-identical patch files.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import math
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
PIN_COMMANDS = ("FetchContent_Declare", "FetchContent_Populate", "ExternalProject_Add")
WHEEL_DECIDER = "release-wheel signature"
FA_PACKAGE = "vllm/vllm_flash_attn/"
# Keywords of FetchContent_Declare / ExternalProject_Add that end a PATCH_COMMAND's arguments.
DECLARE_KEYWORDS = {
    "GIT_REPOSITORY", "GIT_TAG", "GIT_PROGRESS", "GIT_SHALLOW", "GIT_SUBMODULES", "GIT_REMOTE_NAME",
    "GIT_CONFIG", "URL", "URL_HASH", "URL_MD5", "SOURCE_DIR", "BINARY_DIR", "SOURCE_SUBDIR",
    "CONFIGURE_COMMAND", "BUILD_COMMAND", "INSTALL_COMMAND", "UPDATE_COMMAND", "TEST_COMMAND",
    "UPDATE_DISCONNECTED", "CMAKE_ARGS", "CMAKE_CACHE_ARGS", "EXCLUDE_FROM_ALL", "SYSTEM",
    "OVERRIDE_FIND_PACKAGE", "FIND_PACKAGE_ARGS", "DOWNLOAD_COMMAND", "DOWNLOAD_EXTRACT_TIMESTAMP",
    "PREFIX", "TMP_DIR", "STAMP_DIR", "LOG_DIR", "DOWNLOAD_DIR", "INSTALL_DIR", "DEPENDS",
    "BUILD_BYPRODUCTS", "BUILD_ALWAYS", "USES_TERMINAL_DOWNLOAD", "LOG_DOWNLOAD", "LOG_BUILD",
}
CONFIGURATIONS = {
    "cuda": {"VLLM_GPU_LANG": "CUDA", "VLLM_TARGET_DEVICE": "cuda"},
    "rocm": {"VLLM_GPU_LANG": "HIP", "VLLM_TARGET_DEVICE": "rocm"},
}


class LedgerError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Means 2: a text reader for CMake's command syntax.

def tokenize_calls(text: str):
    """Yield (command, line, args) with args as [(value, line, quoted)] for every command call."""
    i, n, line = 0, len(text), 1

    def bracket_len(at: int):
        m = re.match(r"\[(=*)\[", text[at:])
        return (m.group(1), m.end()) if m else None

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c == "#":
            b = bracket_len(i + 1)
            if b:
                end = text.find("]" + b[0] + "]", i + 1 + b[1])
                end = n if end < 0 else end + len(b[0]) + 2
                line += text.count("\n", i, end)
                i = end
            else:
                end = text.find("\n", i)
                i = n if end < 0 else end
        elif c.isalpha() or c == "_":
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i:])
            name = m.group(0)
            j = i + m.end()
            while j < n and text[j] in " \t":
                j += 1
            if j >= n or text[j] != "(":
                i = j
                continue
            cmd_line = line
            j += 1
            depth, args, cur, cur_line, quoted = 1, [], None, line, False
            while j < n and depth > 0:
                ch = text[j]
                if ch == "\n":
                    line += 1
                if ch in " \t\r\n" or ch in "()" or ch == "#" and cur is None:
                    if cur is not None:
                        args.append((cur, cur_line, quoted))
                        cur, quoted = None, False
                    if ch == "(":
                        depth += 1
                    elif ch == ")":
                        depth -= 1
                    elif ch == "#":
                        b = bracket_len(j + 1)
                        if b:
                            end = text.find("]" + b[0] + "]", j + 1 + b[1])
                            end = n if end < 0 else end + len(b[0]) + 2
                        else:
                            end = text.find("\n", j)
                            end = n if end < 0 else end
                        line += text.count("\n", j, end)
                        j = end
                        continue
                    j += 1
                elif ch == '"' and cur is None:
                    k, buf, start_line = j + 1, [], line
                    while k < n and text[k] != '"':
                        if text[k] == "\\" and k + 1 < n:
                            if text[k + 1] == "\n":
                                line += 1
                                k += 2
                                continue
                            buf.append(text[k:k + 2])
                            k += 2
                            continue
                        if text[k] == "\n":
                            line += 1
                        buf.append(text[k])
                        k += 1
                    args.append(("".join(buf), start_line, True))
                    j = k + 1
                elif ch == "[" and cur is None and bracket_len(j):
                    eq, blen = bracket_len(j)
                    end = text.find("]" + eq + "]", j + blen)
                    end = n if end < 0 else end
                    args.append((text[j + blen:end], line, True))
                    line += text.count("\n", j, end)
                    j = end + len(eq) + 2
                else:
                    if cur is None:
                        cur, cur_line = "", line
                    cur += ch
                    j += 1
            if cur is not None:
                args.append((cur, cur_line, quoted))
            yield name, cmd_line, args
            i = j
        else:
            i += 1


def text_calls(path: Path, rel: str):
    """Every pin call in one file, with the candidate values of its GIT_REPOSITORY and GIT_TAG."""
    text = path.read_text(encoding="utf-8")
    sets: dict[str, set[str]] = {}
    calls = []
    for name, line, args in tokenize_calls(text):
        lname = name.lower()
        if lname == "set" and len(args) >= 2:
            sets.setdefault(args[0][0], set()).add(args[1][0])
        elif lname in (c.lower() for c in PIN_COMMANDS) and args:
            kw = {}
            for idx, (value, vline, _q) in enumerate(args[1:], start=1):
                if value in ("GIT_REPOSITORY", "GIT_TAG", "SOURCE_DIR", "URL") and idx + 1 < len(args):
                    kw[value] = (args[idx + 1][0], args[idx + 1][1])
            if "GIT_REPOSITORY" in kw or "GIT_TAG" in kw:
                calls.append({
                    "command": next(c for c in PIN_COMMANDS if c.lower() == lname),
                    "name": args[0][0], "line": line, "file": rel, "kw": kw,
                })

    def candidates(raw: str) -> set[str]:
        out = {raw}
        for _ in range(4):
            nxt = set()
            for value in out:
                m = re.search(r"\$\{([A-Za-z0-9_]+)\}", value)
                if not m:
                    nxt.add(value)
                    continue
                for sub in sets.get(m.group(1), {m.group(0)}):
                    nxt.add(value[:m.start()] + sub + value[m.end():])
            out = nxt
        return out

    for call in calls:
        call["repo_candidates"] = candidates(call["kw"].get("GIT_REPOSITORY", ("", 0))[0])
        call["tag_candidates"] = candidates(call["kw"].get("GIT_TAG", ("", 0))[0])
        call["tag_line"] = call["kw"].get("GIT_TAG", ("", call["line"]))[1]
    return calls


# ---------------------------------------------------------------------------------------------
# Means 1: real CMake with recording stand-ins.

PRELUDE = r"""
cmake_policy(SET CMP0054 NEW)
function(_ledger_record cmd)
  string(REPLACE "|" "%7C" _a "${ARGN}")
  message("LEDGER|${cmd}|${CMAKE_CURRENT_LIST_FILE}|${_a}")
endfunction()
function(FetchContent_Declare)
  _ledger_record(FetchContent_Declare ${ARGV})
endfunction()
function(FetchContent_Populate)
  _ledger_record(FetchContent_Populate ${ARGV})
endfunction()
function(ExternalProject_Add)
  _ledger_record(ExternalProject_Add ${ARGV})
endfunction()
function(FetchContent_MakeAvailable)
endfunction()
function(FetchContent_GetProperties name)
  set(${name}_POPULATED FALSE PARENT_SCOPE)
endfunction()
macro(include what)
endmacro()
"""


def cmake_records(sdist: Path, rel: str, config: dict[str, str], cmake: str):
    """What CMake's own evaluation of one file declares: [(command, name, {KEYWORD: value})]."""
    stubs: list[str] = []
    for _attempt in range(40):
        with tempfile.TemporaryDirectory() as tmp:
            driver = Path(tmp) / "driver.cmake"
            body = [PRELUDE]
            body += [f"function({s})\nendfunction()" for s in stubs]
            body += [f'set({k} "{v}")' for k, v in config.items()]
            body += [
                'set(CMAKE_CUDA_COMPILER_VERSION "13.0")',
                'set(CUDA_ARCHS "9.0a;10.0a;12.0a")',
                f'set(CMAKE_SOURCE_DIR "{sdist}")',
                f'set(CMAKE_CURRENT_SOURCE_DIR "{sdist}")',
                f'set(CMAKE_BINARY_DIR "{tmp}/build")',
                f'set(CMAKE_CURRENT_BINARY_DIR "{tmp}/build")',
                f'set(CMAKE_CURRENT_LIST_DIR "{sdist / "cmake" / "external_projects"}")',
                f'_include("{sdist / rel}")',
            ]
            driver.write_text("\n".join(body) + "\n", encoding="utf-8")
            env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp}
            proc = subprocess.run([cmake, "-P", str(driver)], capture_output=True, text=True,
                                  env=env, cwd=tmp, check=False)
        out = proc.stdout + proc.stderr
        m = re.search(r'Unknown CMake command "([A-Za-z0-9_]+)"', out)
        if m and m.group(1) not in stubs:
            stubs.append(m.group(1))
            continue
        records = []
        for row in out.splitlines():
            if not row.startswith("LEDGER|"):
                continue
            _, cmd, _file, argstr = row.split("|", 3)
            args = [a.replace("%7C", "|") for a in argstr.split(";")] if argstr else []
            kw = {}
            for idx, value in enumerate(args[1:], start=1):
                if value in ("GIT_REPOSITORY", "GIT_TAG", "SOURCE_DIR", "URL") and idx + 1 < len(args):
                    kw[value] = args[idx + 1]
            kw["PATCH_COMMAND"] = patch_arguments(args)
            records.append((cmd, args[0] if args else "", kw))
        if proc.returncode != 0 and not records:
            raise LedgerError(f"{sdist / rel}: cmake -P failed: {out.strip()[-400:]}")
        return records
    raise LedgerError(f"{sdist / rel}: too many unknown commands for cmake -P stand-ins")


def patch_arguments(args: list[str]) -> list[str]:
    """The arguments of a declaration's PATCH_COMMAND, as CMake evaluated them."""
    out, inside = [], False
    for value in args[1:]:
        if value == "PATCH_COMMAND":
            inside = True
        elif value in DECLARE_KEYWORDS:
            inside = False
        elif inside:
            out.append(value)
    return out


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def patch_files(sdist: Path, arguments: list[str]):
    """The patch files a PATCH_COMMAND applies: [{file (sdist-relative), sha256}], sorted."""
    found: dict[str, str] = {}
    for value in arguments:
        candidate = value.rsplit("=", 1)[-1]
        path = Path(candidate)
        if not path.is_absolute():
            path = sdist / candidate
        try:
            rel = path.resolve().relative_to(sdist.resolve())
        except ValueError:
            if candidate.endswith((".patch", ".diff")):
                raise LedgerError(f"{sdist}: PATCH_COMMAND applies {candidate}, outside the sdist")
            continue
        files = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() and rel.parts else []
        for f in files:
            if f.is_file() and f.name.endswith((".patch", ".diff")):
                found[f.resolve().relative_to(sdist.resolve()).as_posix()] = sha256_file(f)
        if not files and candidate.endswith((".patch", ".diff")):
            raise LedgerError(f"{sdist}: PATCH_COMMAND applies {candidate}, which the sdist lacks")
    return [{"file": k, "sha256": v} for k, v in sorted(found.items())]


# ---------------------------------------------------------------------------------------------
# Components, clones, verdicts.

def canonical(url: str) -> str:
    u = url.strip().lower().rstrip("/")
    u = re.sub(r"\.git$", "", u)
    u = re.sub(r"^git@github\.com:", "https://github.com/", u)
    u = re.sub(r"^(git|http)://", "https://", u)
    return u


def load_components():
    doc = yaml.safe_load((REPO_ROOT / "rules" / "components.yaml").read_text(encoding="utf-8"))
    return doc["components"]


def component_of(components, name: str, repo: str):
    for c in components:
        if name in (c.get("declares") or []):
            return c["name"]
    for c in components:
        if canonical(repo) in [canonical(c["repo"])] + [canonical(a) for a in c.get("aliases") or []]:
            return c["name"]
    return None


def load_rules():
    rules = {}
    for path in sorted((REPO_ROOT / "rules").glob("PINPROBE-*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        rules[doc["id"]] = doc
    return rules


def git(clone: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", clone, *args], capture_output=True, text=True, check=False)


def clone_label(clone: str) -> str:
    """A clone's name for provenance: its origin URL, else owner/name from a mirror path."""
    url = git(clone, "config", "--get", "remote.origin.url").stdout.strip()
    if url:
        return canonical(url).removeprefix("https://github.com/")
    parts = [p for p in Path(clone).resolve().parts if "+" in p]
    return parts[-1].replace("+", "/", 1) if parts else Path(clone).name


def has_commit(clone: str, sha: str) -> bool:
    return git(clone, "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def is_ancestor(clone: str, a: str, b: str) -> bool | None:
    rc = git(clone, "merge-base", "--is-ancestor", a, b).returncode
    return {0: True, 1: False}.get(rc)


def own_ancestry(rule: dict, component_repos: set[str], clone: str, pin: str):
    """OSV GIT range semantics by git itself: ('affected'|'not_affected'|'unknown', commits used)."""
    results, used = [], []
    for affected in rule.get("affected", []):
        spec = affected.get("database_specific") or {}
        for rng in affected.get("ranges", []):
            if rng.get("type") != "GIT" or canonical(rng.get("repo", "")) not in component_repos:
                continue
            events = rng.get("events", [])
            intro = [e["introduced"] for e in events if "introduced" in e]
            fixed = [e["fixed"] for e in events if "fixed" in e]
            last = [e["last_affected"] for e in events if "last_affected" in e]
            limit = [e["limit"] for e in events if "limit" in e]
            for sha in [s for s in intro + fixed + last + limit if s != "0"]:
                if not has_commit(clone, sha):
                    results.append("unknown")
                    break
                used.append(sha)
            else:
                def anc(a):
                    return a == "0" or is_ancestor(clone, a, pin)
                if any(is_ancestor(clone, f, pin) for f in fixed) or \
                        any(is_ancestor(clone, la, pin) and la != pin for la in last) or \
                        (limit and not any(is_ancestor(clone, pin, li) and pin != li for li in limit)):
                    results.append("not_affected")
                elif any(anc(i) for i in intro):
                    # A cherry-picked fix is not looked for here: only "affected" from pinprobe
                    # may agree with it, never be overruled by it.
                    results.append("unknown" if spec.get("introduced_unknown") else "affected")
                else:
                    results.append("not_affected")
    if not results:
        return None, used
    if "affected" in results:
        return "affected", used
    if all(r == "not_affected" for r in results):
        return "not_affected", used
    return "unknown", used


def recorded_verdicts(pinprobe: str, sdist: Path, repos: dict[str, str], pins, rules, components):
    if not pinprobe or not repos:
        return
    args = [pinprobe, "scan", str(sdist), "--format", "json", "--fail-on", "never"]
    for name, path in repos.items():
        args += ["--repo", f"{name}={path}"]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as err:
        raise LedgerError(f"{sdist}: {pinprobe} printed no JSON: {proc.stderr.strip()[:200]}") from err
    findings = [f for t in report.get("targets", []) for f in t.get("findings", [])]
    for pin in pins:
        clone = repos.get(pin["component"] or "")
        if not clone or not pin["commit"] or "cuda" not in pin["configurations"]:
            continue
        if not has_commit(clone, pin["commit"]):
            pin.setdefault("clone_lacks_commit", []).append(pin["component"])
            continue
        head = git(clone, "rev-parse", "HEAD").stdout.strip()
        comp = next(c for c in components if c["name"] == pin["component"])
        repos_of = {canonical(comp["repo"])} | {canonical(a) for a in comp.get("aliases") or []}
        decided = set()
        for f in findings:
            if f.get("component") != pin["component"] or not f["rule"].startswith("PINPROBE-"):
                continue
            decided.add(f["rule"])
            if f.get("decided_by") not in ("signature", "ancestry"):
                continue
            rule = rules.get(f["rule"])
            own, used = own_ancestry(rule, repos_of, clone, pin["commit"]) if rule else (None, [])
            if own is not None and own != "unknown" and own != f["status"] and \
                    not (own == "affected" and f["status"] == "not_affected" and f["decided_by"] == "signature"):
                raise LedgerError(
                    f"{sdist}: {f['rule']} on {pin['component']}@{pin['commit']}: pinprobe says "
                    f"{f['status']} ({f['decided_by']}), git ancestry says {own}")
            pin.setdefault("verdicts", []).append({
                "rule": f["rule"],
                "status": f["status"],
                "decided_by": f["decided_by"],
                "git_ancestry": own or "not applicable",
                "clone": f"{clone_label(clone)} at {head}",
                "commits": [pin["commit"]] + [u for u in used if u != pin["commit"]],
            })
        # Rules pinprobe did not evaluate on this pin (v1 misses the direct FetchContent_Populate
        # form): git's answer alone, for rules without a source signature and without `requires`.
        for rule_id, rule in rules.items():
            spec = rule.get("database_specific") or {}
            if rule_id in decided or spec.get("signature") or any(
                    (a.get("database_specific") or {}).get("requires") for a in rule.get("affected", [])):
                continue
            own, used = own_ancestry(rule, repos_of, clone, pin["commit"])
            if own in ("affected", "not_affected"):
                pin.setdefault("verdicts", []).append({
                    "rule": rule_id,
                    "status": own,
                    "decided_by": "ancestry",
                    "git_ancestry": own,
                    "note": "git merge-base --is-ancestor in tools/ledger/build.py (no pinprobe finding on this pin)",
                    "clone": f"{clone_label(clone)} at {head}",
                    "commits": [pin["commit"]] + [u for u in used if u != pin["commit"]],
                })


# ---------------------------------------------------------------------------------------------
# Release-wheel verdicts, each checked by independent means.

def ast_fa4(z: zipfile.ZipFile):
    """PINPROBE-2026-0001 from docs/src/design.md's three conditions, with `ast` (as tests/real/real_releases.rs)."""
    base = FA_PACKAGE + "cute/"
    bi = ast.parse(z.read(base + "block_info.py"))
    sm90 = ast.parse(z.read(base + "flash_fwd_sm90.py"))
    field = overwrite = False
    for node in ast.walk(bi):
        if isinstance(node, ast.ClassDef) and node.name == "BlockInfo":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and getattr(item.target, "id", None) == "num_splits":
                    field = True
                if isinstance(item, ast.FunctionDef) and item.name == "get_n_block_min_max":
                    for sub in ast.walk(item):
                        if isinstance(sub, ast.Assign) \
                                and any(getattr(t, "id", None) == "num_splits" for t in sub.targets) \
                                and isinstance(sub.value, ast.Attribute) and sub.value.attr == "num_splits" \
                                and getattr(sub.value.value, "id", None) == "self":
                            overwrite = True
    bad_call = False
    for node in ast.walk(sm90):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "BlockInfo":
            kw = {k.arg: k.value for k in node.keywords}
            split = kw.get("is_split_kv", node.args[4] if len(node.args) > 4 else None)
            literal_false = isinstance(split, ast.Constant) and split.value is False
            if split is not None and not literal_false and "num_splits" not in kw:
                bad_call = True
    return "affected" if field and overwrite and bad_call else "not_affected"


def ast_fa3_import(z: zipfile.ZipFile):
    """PINPROBE-2026-0004: the `_vllm_fa3_C` import is unguarded or its `except` raises."""
    iface = ast.parse(z.read(FA_PACKAGE + "flash_attn_interface.py"))
    affected, guarded = False, set()
    for node in ast.walk(iface):
        if isinstance(node, ast.Try):
            for m in ast.walk(ast.Module(body=node.body, type_ignores=[])):
                if isinstance(m, ast.ImportFrom) and any(a.name == "_vllm_fa3_C" for a in m.names):
                    guarded.add(id(m))
                    if any(isinstance(x, ast.Raise) for h in node.handlers for x in ast.walk(h)):
                        affected = True
    for m in ast.walk(iface):
        if isinstance(m, ast.ImportFrom) and any(a.name == "_vllm_fa3_C" for a in m.names) \
                and id(m) not in guarded:
            affected = True
    return "affected" if affected else "not_affected"


def ast_fp8_offset(z: zipfile.ZipFile):
    """PINPROBE-2026-0008: FP8 P offset by `max_offset = 8` while the FP8 `rescale_threshold`
    keeps 8 + threshold at or above log2(448), e4m3's largest value."""
    sm100 = ast.parse(z.read(FA_PACKAGE + "cute/flash_fwd_sm100.py"))

    def is_width(test, n):
        return f"width == {n}" in ast.unparse(test)
    offset = any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "max_offset" for t in n.targets)
                 and is_width(n.value, 8) for n in ast.walk(sm100))
    affected = False
    for n in ast.walk(sm100):
        if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "rescale_threshold" for t in n.targets):
            v, fp8 = n.value, None
            while isinstance(v, ast.IfExp):
                if is_width(v.test, 8):
                    fp8 = v.body.value
                    break
                v = v.orelse
            if fp8 is None:
                fp8 = v.value
            if offset and 8 + fp8 >= math.log2(448):
                affected = True
    return "affected" if affected else "not_affected"


def nm_symbols(z: zipfile.ZipFile, rule: dict):
    """A `symbols:` rule judged with `nm -D` on the shipped libraries its pattern names."""
    spec = rule["database_specific"]["symbols"]
    pattern = re.compile("^" + re.escape(spec["library"]).replace(r"\*", ".*") + "$")
    names = [n for n in z.namelist() if n.startswith(FA_PACKAGE) and "/" not in n[len(FA_PACKAGE):]
             and pattern.match(n[len(FA_PACKAGE):])]
    if not names:
        return None
    anchor = re.compile(spec["anchor"])
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = z.extract(name, tmp)
            proc = subprocess.run(["nm", "-D", path], capture_output=True, text=True, check=False)
            os.remove(path)
            if proc.returncode != 0:
                return None
            symbols = []
            for line in proc.stdout.splitlines():
                fields = line.split()
                if len(fields) not in (2, 3):
                    continue
                letter, sym = fields[-2], fields[-1].split("@")[0]
                symbols.append((sym, "U" if letter == "U" else "w" if letter in "wv" else "D"))
            if not any(k == "D" and anchor.search(n) for n, k in symbols):
                return None
            met = all(
                any(k == ("U" if "undefined" in c else "D") and re.search(c.get("undefined") or c.get("defined"), n)
                    for n, k in symbols)
                for c in spec["conditions"])
            verdicts.append("affected" if met else "not_affected")
    return "affected" if "affected" in verdicts else "not_affected"


def independent_check(rule_id: str, rule: dict, z: zipfile.ZipFile):
    """(verdict, how) by means other than pinprobe's, or (None, why not)."""
    spec = rule.get("database_specific") or {}
    if spec.get("symbols"):
        return nm_symbols(z, rule), "nm -D on the shipped library, the rule's regexes in Python"
    checks = {
        "PINPROBE-2026-0001": (ast_fa4, "Python ast: docs/src/design.md's three conditions on the shipped FA4 source"),
        "PINPROBE-2026-0004": (ast_fa3_import, "Python ast: the _vllm_fa3_C import's guard"),
        "PINPROBE-2026-0008": (ast_fp8_offset, "Python ast: the FP8 max_offset and rescale_threshold"),
    }
    if rule_id not in checks:
        return None, "no independent check in tools/ledger/build.py"
    check, how = checks[rule_id]
    try:
        return check(z), how
    except (KeyError, SyntaxError, AttributeError, TypeError) as err:
        return None, f"{how}: {err}"


def wheel_of(cache: Path, version: str):
    found = sorted((cache / "wheel").glob(f"vllm-{version}-*.whl"))
    return found[0] if found else None


def wheel_verdicts(pinprobe: str, cache: Path, version: str, pins, rules):
    """Verdicts the release's wheel decides by signature, checked independently (doc comment)."""
    wheel = wheel_of(cache, version)
    if not pinprobe or wheel is None:
        return
    targets = [p for p in pins if p["component"] == "flash-attention" and p["commit"]
               and "cuda" in p["configurations"]]
    if len(targets) != 1:
        return
    pin = targets[0]
    env = dict(os.environ, PINPROBE_OFFLINE="1")
    proc = subprocess.run([pinprobe, "scan", str(wheel), "--format", "json", "--fail-on", "never"],
                          capture_output=True, text=True, check=False, env=env)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as err:
        raise LedgerError(f"{wheel}: {pinprobe} printed no JSON: {proc.stderr.strip()[:200]}") from err
    version_line = subprocess.run([pinprobe, "--version"], capture_output=True, text=True,
                                  check=False).stdout.strip()
    digest = sha256_file(wheel)
    signed = {rid for rid, r in rules.items()
              if (r.get("database_specific") or {}).get("signature") or (r.get("database_specific") or {}).get("symbols")}
    z = zipfile.ZipFile(wheel)
    for f in (f for t in report.get("targets", []) for f in t.get("findings", [])):
        rid = f.get("rule")
        if f.get("component") != "flash-attention" or rid not in signed or f.get("decided_by") != "signature" \
                or f.get("status") not in ("affected", "not_affected"):
            continue
        own, how = independent_check(rid, rules[rid], z)
        if own is None:
            print(f"build.py: {version} {rid}: not recorded ({how})", file=sys.stderr)
            continue
        if own != f["status"]:
            raise LedgerError(f"{wheel.name}: {rid}: pinprobe's signature says {f['status']}, {how} says {own}")
        for other in pin.get("verdicts", []):
            if other["rule"] == rid and other["status"] != own:
                raise LedgerError(f"{wheel.name}: {rid}: the wheel says {own}, the clone verdict says {other['status']}")
        pin.setdefault("verdicts", []).append({
            "rule": rid,
            "status": own,
            "decided_by": WHEEL_DECIDER,
            "wheel": wheel.name,
            "wheel_sha256": digest,
            "pinprobe": version_line,
            "checked_by": how,
            "commits": [pin["commit"]],
        })


# ---------------------------------------------------------------------------------------------

def release_entry(sdist: Path, cmake: str, components, pinprobe, repos, rules, cache: Path):
    version_file = sdist / "vllm" / "_version.py"
    values = {}
    for node in ast.parse(version_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = node.value.value
    # `__version__ = version = '0.27.0'` is one Assign with two targets.
    version = values.get("__version__") or values.get("version")
    commit_id = values.get("__commit_id__") or values.get("commit_id")
    pkg_version = re.search(r"^Version: (.+)$", (sdist / "PKG-INFO").read_text(encoding="utf-8"), re.M)
    if not version or not pkg_version or pkg_version.group(1).strip() != version:
        raise LedgerError(f"{sdist}: _version.py says {version!r}, PKG-INFO says "
                          f"{pkg_version.group(1) if pkg_version else None!r}")
    ext = sdist / "cmake" / "external_projects"
    if not ext.is_dir():
        return None
    pins, unreached = [], []
    for path in sorted(ext.glob("*.cmake")):
        rel = path.relative_to(sdist).as_posix()
        texts = text_calls(path, rel)
        matched_text = set()
        by_key: dict[tuple, dict] = {}
        for config_name, config in CONFIGURATIONS.items():
            for cmd, name, kw in cmake_records(sdist, rel, config, cmake):
                if "GIT_REPOSITORY" not in kw and "GIT_TAG" not in kw:
                    continue  # SOURCE_DIR form or one-argument Populate: not a pin
                hits = [i for i, t in enumerate(texts)
                        if t["command"] == cmd and t["name"] == name
                        and kw.get("GIT_REPOSITORY", "") in t["repo_candidates"]
                        and kw.get("GIT_TAG", "") in t["tag_candidates"]]
                if len(hits) != 1:
                    raise LedgerError(f"{sdist / rel}: CMake declares {cmd}({name} "
                                      f"{kw.get('GIT_REPOSITORY')} {kw.get('GIT_TAG')}) but the text "
                                      f"reader finds {len(hits)} matching calls")
                t = texts[hits[0]]
                matched_text.add(hits[0])
                repo, tag = kw.get("GIT_REPOSITORY", ""), kw.get("GIT_TAG", "")
                key = (cmd, name, repo, tag, t["tag_line"])
                if key in by_key:
                    if by_key[key]["patches"] != patch_files(sdist, kw.get("PATCH_COMMAND", [])):
                        raise LedgerError(f"{sdist / rel}: {name} applies different patches per configuration")
                    by_key[key]["configurations"].append(config_name)
                    continue
                commit = tag.lower() if FULL_SHA.match(tag.lower()) else None
                patches = patch_files(sdist, kw.get("PATCH_COMMAND", []))
                by_key[key] = {
                    "component": component_of(components, name, repo),
                    "declared_name": name,
                    "command": cmd,
                    "repo": repo,
                    "reference": tag,
                    "commit": commit,
                    "file": rel,
                    "line": t["tag_line"],
                    "configurations": [config_name],
                    "patches": patches,
                }
        pins.extend(by_key.values())
        for i, t in enumerate(texts):
            if i not in matched_text:
                unreached.append({"file": rel, "line": t["line"], "command": t["command"],
                                  "declared_name": t["name"]})
    recorded_verdicts(pinprobe, sdist, repos, pins, rules, components)
    wheel_verdicts(pinprobe, cache, version, pins, rules)
    entry = {
        "version": version,
        "vllm_commit": (commit_id or "")[1:] if (commit_id or "").startswith("g") else commit_id,
        "vllm_commit_full": False,
        "vllm_commit_source": "vllm/_version.py __commit_id__ (abbreviated by setuptools-scm)",
        "pins": pins,
    }
    if unreached:
        entry["unreached"] = unreached
    return entry


class LedgerDumper(yaml.SafeDumper):
    """Quotes strings a YAML reader could take for a number (versions, abbreviated SHAs)."""


def _str(dumper, value):
    style = '"' if re.fullmatch(r"[0-9a-fA-F.+-]+", value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


LedgerDumper.add_representer(str, _str)


def version_key(v: str):
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.]", v))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get("PINPROBE_REAL_DATA_DIR", "target/realdata"))
    ap.add_argument("--out", default=str(REPO_ROOT / "rules" / "ledger.yaml"))
    ap.add_argument("--cmake", default=shutil.which("cmake") or "cmake")
    ap.add_argument("--pinprobe", help="pinprobe binary used for the recorded verdicts")
    ap.add_argument("--repo", action="append", default=[], help="NAME=DIR clone of a component")
    opts = ap.parse_args()
    repos = dict(r.split("=", 1) for r in opts.repo)
    components = load_components()
    rules = load_rules()
    sdists = sorted((Path(opts.cache) / "sdist").glob("vllm-*"),
                    key=lambda p: version_key(p.name.removeprefix("vllm-")))
    if not sdists:
        print(f"build.py: no sdists under {opts.cache}/sdist (run tools/ledger/fetch.sh)", file=sys.stderr)
        return 2
    cmake_version = subprocess.run([opts.cmake, "--version"], capture_output=True, text=True,
                                   check=False).stdout.splitlines()[0]
    releases = []
    try:
        for sdist in sdists:
            entry = release_entry(sdist, opts.cmake, components, opts.pinprobe, repos, rules,
                                  Path(opts.cache))
            if entry:
                releases.append(entry)
                print(f"{entry['version']}: {len(entry['pins'])} pins", file=sys.stderr)
    except (LedgerError, OSError, yaml.YAMLError) as err:
        print(f"build.py: {err}", file=sys.stderr)
        return 2
    clones = [{"component": name, "clone": clone_label(path),
               "head": git(path, "rev-parse", "HEAD").stdout.strip()} for name, path in repos.items()]
    verdicts_by = None
    if opts.pinprobe:
        verdicts_by = subprocess.run([opts.pinprobe, "--version"], capture_output=True, text=True,
                                     check=False).stdout.strip()
        verdicts_by += " scan --repo, checked with git" if repos else ""
        if list((Path(opts.cache) / "wheel").glob("vllm-*.whl")):
            verdicts_by += "; scan of each release wheel, checked with Python ast and nm -D"
    doc = {
        "schema": 1,
        "generated_by": "tools/ledger/build.py (see its doc comment; do not edit by hand)",
        "source": "vLLM sdists from PyPI, downloaded with `pip download` by tools/ledger/fetch.sh",
        "extracted_with": f"{cmake_version} -P with recording stand-ins, checked by a text reader",
        "configurations": {k: " ".join(f"{a}={b}" for a, b in v.items()) for k, v in CONFIGURATIONS.items()},
        "clones": clones,
        "verdicts_by": verdicts_by,
        "releases": releases,
    }
    header = ("# The release ledger: every pin each real vLLM release declares in cmake/external_projects/.\n"
              "# Generated by tools/ledger/build.py from the real sdists; regenerate, do not edit.\n")
    Path(opts.out).write_text(header + yaml.dump(doc, Dumper=LedgerDumper, sort_keys=False, width=100), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
