#!/usr/bin/env bash
# Build a two-commit vLLM-shaped git history in DIR: the bundled demo tree pinning
# vllm-project/flash-attention at the FA4 split-KV fix (6d11b3c1, not affected), then a bump to
# the pin vLLM 0.30.0 shipped (506341a1, affected). `pinprobe diff HEAD~1 HEAD DIR` reports the
# bug as introduced, from the rule's known pins alone (no clone needed). Used by the CI job that
# runs the Action and by tests/cli/action.rs.
set -euo pipefail
dir=${1:?usage: fixture-bump.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
fix=6d11b3c1b6ca7dac0b111bb0db63ca16eeb19a46
affected=506341a143fcabd4bb79052a7605ada727d6b3f5
cmake=cmake/external_projects/vllm_flash_attn.cmake

rm -rf "$dir"
mkdir -p "$dir"
cp -R "$root/fixtures/demo-vllm/." "$dir/"
export GIT_AUTHOR_NAME=pinprobe GIT_AUTHOR_EMAIL=pinprobe@example.invalid
export GIT_COMMITTER_NAME=pinprobe GIT_COMMITTER_EMAIL=pinprobe@example.invalid
export GIT_CONFIG_NOSYSTEM=1
cd "$dir"
git init -q -b main .
sed -i.bak "s/$affected/$fix/" "$cmake" && rm -f "$cmake.bak"
git add -A
git commit -q -m "pin flash-attention at the split-KV fix"
sed -i.bak "s/$fix/$affected/" "$cmake" && rm -f "$cmake.bak"
git commit -q -a -m "bump flash-attention to vLLM 0.30.0's pin"
git log --oneline
