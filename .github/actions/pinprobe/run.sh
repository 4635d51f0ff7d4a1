#!/usr/bin/env bash
# The pinprobe Action's review step (action.yml runs it; tests/cli/action.rs runs it with a simulated
# GitHub environment and the real binary). Inputs arrive as INPUT_* variables, never interpolated
# into the script:
#   INPUT_MODE     diff (a pin bump, default) | scan (a tree, wheel, environment or image)
#   INPUT_TARGET   scan: what to scan (a path, a .whl, a site-packages directory, docker://REF,
#                  oci:DIR[:TAG], a docker-save tarball), default INPUT_PATH
#   INPUT_PATH     the vLLM source tree (a git work tree), default .
#   INPUT_BASE     diff: the revision before the bump; empty: the event's pull_request.base.sha
#                  (or a push event's `before`; a push that creates the branch, whose `before`
#                  is all zeros, is compared with itself) read from GITHUB_EVENT_PATH
#   INPUT_HEAD     diff: the revision after it; empty: pull_request.head.sha (or `after`)
#   INPUT_FAIL_ON  low | medium | high | critical | never (default high)
#   INPUT_FAIL_ON_UNKNOWN  the same for undecided findings (empty: pinprobe's default)
#   INPUT_RULES    a directory of extra rules (optional)
#   INPUT_ALLOW_HEAD_IGNORES  diff, true: apply HEAD's .pinprobe.yaml (default false: BASE's)
#   INPUT_ALLOW_HEAD_RULES    diff, true: read an in-repository rules directory at HEAD (default BASE)
#   INPUT_REPOS    clones of pinned projects, NAME=PATH, one a line (optional)
#   INPUT_SARIF    true | false: write the SARIF file (the upload is action.yml's step)
#   INPUT_SARIF_UNKNOWN  true: undecided findings in the SARIF too, as notes (default false:
#                  code scanning's alerts are the affected findings)
#   PINPROBE_INFORMATION_URI  SARIF's tool informationUri; default: the action's repository
#                  (from its checkout path, _actions/OWNER/NAME/REF), else GITHUB_REPOSITORY's
#   PINPROBE       the binary (default: pinprobe on PATH)
# Writes the Markdown report to GITHUB_STEP_SUMMARY, the JSON and SARIF under RUNNER_TEMP/pinprobe,
# and to GITHUB_OUTPUT: `findings` (diff: findings the bump introduces; scan: affected findings;
# suppressed ones left out), the counts by status (diff: introduced, fixed, kept, unknown,
# suppressed; scan: affected, not-affected, unknown, suppressed; the other mode's are empty),
# `json`, `sarif` (the SARIF path, empty when off) and `exit-code`. Exits with pinprobe's code:
# 0 clean, 1 introduced (diff) or affected (scan) findings, 2 error, 3 undecided.
set -uo pipefail

fail() {
  echo "::error title=pinprobe::$*"
  exit 2
}

mode=${INPUT_MODE:-diff}
path=${INPUT_PATH:-.}
base=${INPUT_BASE:-}
head=${INPUT_HEAD:-}
fail_on=${INPUT_FAIL_ON:-high}
pinprobe=${PINPROBE:-pinprobe}
out_dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/pinprobe
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
output=${GITHUB_OUTPUT:-/dev/null}

event_field() {
  [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] || return 0
  jq -r "$1 // empty" "$GITHUB_EVENT_PATH"
}
command -v "$pinprobe" >/dev/null || fail "pinprobe not found (PINPROBE=$pinprobe)"

case $mode in
  diff)
    [ -n "$base" ] || base=$(event_field '.pull_request.base.sha // .before')
    [ -n "$head" ] || head=$(event_field '.pull_request.head.sha // .after')
    if [ -z "$base" ] || [ -z "$head" ]; then
      fail "no base/head revision: set the base and head inputs, or run on pull_request or push"
    fi
    # A push that creates the branch has no `before`: review HEAD against itself, so the SARIF
    # still lists every open finding and code scanning gets its analysis of the branch.
    [[ ! $base =~ ^0+$ ]] || base=$head
    git -C "$path" rev-parse --git-dir >/dev/null 2>&1 || fail "$path is not a git work tree"
    # A shallow checkout (actions/checkout's default fetch-depth: 1) lacks the base: fetch what
    # is missing by SHA. fetch-depth: 0 avoids this.
    for rev in "$base" "$head"; do
      if ! git -C "$path" rev-parse --verify --quiet "$rev^{commit}" >/dev/null; then
        echo "pinprobe: fetching $rev (use actions/checkout with fetch-depth: 0 to avoid this)"
        git -C "$path" fetch --quiet --no-tags origin "$rev" ||
          fail "revision $rev is not in $path and could not be fetched"
      fi
    done
    args=(diff "$base" "$head" "$path")
    [ "${INPUT_ALLOW_HEAD_IGNORES:-false}" != true ] || args+=(--allow-head-ignores)
    [ "${INPUT_ALLOW_HEAD_RULES:-false}" != true ] || args+=(--allow-head-rules)
    ;;
  scan)
    args=(scan "${INPUT_TARGET:-$path}")
    ;;
  *) fail "mode must be diff or scan, not '$mode'" ;;
esac
[ -z "${INPUT_RULES:-}" ] || args+=(--rules "$INPUT_RULES")
while IFS= read -r repo; do
  repo=${repo#"${repo%%[![:space:]]*}"}
  repo=${repo%"${repo##*[![:space:]]}"}
  [ -z "$repo" ] || args+=(--repo "$repo")
done <<<"${INPUT_REPOS:-}"

mkdir -p "$out_dir"
json=$out_dir/pinprobe.json
markdown=$out_dir/pinprobe.md
sarif=
outputs=(--format "json=$json" --format "markdown=$markdown")
if [ "${INPUT_SARIF:-true}" = true ]; then
  sarif=$out_dir/pinprobe.sarif
  outputs+=(--format "sarif=$sarif")
  [ "${INPUT_SARIF_UNKNOWN:-false}" != true ] || outputs+=(--sarif-unknown)
fi
if [ -z "${PINPROBE_INFORMATION_URI:-}" ]; then
  # Code scanning links the tool to its documentation: the action's repository.
  action_root=$(cd "$(dirname "$0")/../../.." && pwd -P)
  server=${GITHUB_SERVER_URL:-https://github.com}
  if [[ $action_root =~ /_actions/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/[^/]+$ ]]; then
    export PINPROBE_INFORMATION_URI=$server/${BASH_REMATCH[1]}/${BASH_REMATCH[2]}
  elif [ -n "${GITHUB_REPOSITORY:-}" ]; then
    export PINPROBE_INFORMATION_URI=$server/$GITHUB_REPOSITORY
  fi
fi
gate=(--fail-on "$fail_on")
[ -z "${INPUT_FAIL_ON_UNKNOWN:-}" ] || gate+=(--fail-on-unknown "$INPUT_FAIL_ON_UNKNOWN")
# One run, every rendering: JSON for the outputs, Markdown for the job summary, SARIF.
"$pinprobe" "${args[@]}" "${gate[@]}" "${outputs[@]}"
code=$?
if [ "$code" -eq 2 ]; then
  echo "exit-code=2" >>"$output"
  fail "pinprobe $mode failed (see the log above)"
fi
if [ "$mode" = diff ]; then
  counts=$(jq -r '.counts | "introduced=\(.introduced)\nfixed=\(.fixed)\nkept=\(.kept)\nunknown=\(.unknown)\nsuppressed=\(.suppressed)\naffected=\nnot-affected="' "$json") ||
    fail "unreadable JSON from pinprobe"
  findings=$(jq -r '.counts.introduced' "$json") || fail "unreadable JSON from pinprobe"
  edits=$(jq -r '[.policy_edits[]? | select(.allowed | not)] | length' "$json") ||
    fail "unreadable JSON from pinprobe"
else
  counts=$(jq -r '[.targets[].findings[]] as $all | [$all[] | select(.suppressed == null)] as $open
    | ($open | map(select(.status == "affected")) | length) as $affected
    | "affected=\($affected)\nnot-affected=\($open | map(select(.status == "not_affected")) | length)\nunknown=\($open | map(select(.status == "unknown")) | length)\nsuppressed=\(($all | length) - ($open | length))\nintroduced=\nfixed=\nkept="' "$json") ||
    fail "unreadable JSON from pinprobe"
  findings=$(printf '%s\n' "$counts" | sed -n 's/^affected=//p')
  edits=0
fi
cat "$markdown" >>"$summary" || fail "cannot append to the job summary"
{
  echo "findings=$findings"
  printf '%s\n' "$counts"
  echo "json=$json"
  echo "sarif=$sarif"
  echo "exit-code=$code"
} >>"$output"

case $code in
  0) echo "pinprobe: nothing at or above the thresholds ($mode)" ;;
  1)
    if [ "$edits" -gt 0 ]; then
      echo "::error title=pinprobe::the pull request adds or edits $edits ignore entr(y/ies) or rule override(s) of its own; see the job summary"
    fi
    if [ "$findings" -gt 0 ]; then
      if [ "$mode" = diff ]; then
        echo "::error title=pinprobe::the pin bump introduces $findings finding(s); see the job summary"
      else
        echo "::error title=pinprobe::$findings affected finding(s); see the job summary"
      fi
    fi
    ;;
  3) echo "::warning title=pinprobe::undecided: a pin could not be checked (pass clones with the repos input, or allow fetching)" ;;
esac
exit "$code"
