#!/usr/bin/env bash
# The pinprobe Action's install step (action.yml runs it; tests/cli/action.rs runs it against a
# release served on loopback). The fast path: download the released static binary for this
# action's own version and refuse it unless its SHA-256 matches the release's SHA256SUMS. The
# version comes from the Cargo.toml next to this action (the file the action's ref pins), never
# from github.action_ref, which composite actions are not promised.
#
# Inputs (environment):
#   INPUT_BUILD_FROM_SOURCE   true: skip the download, build from the action's source
#   INPUT_RELEASE_REPOSITORY  OWNER/NAME whose releases hold the binaries; empty: the action's
#                             own repository, read from its checkout path (_actions/OWNER/NAME/REF)
#   PINPROBE_SOURCE           the action's source root (default GITHUB_ACTION_PATH/../../..)
#   PINPROBE_RELEASES         the releases' base URL (default https://github.com/REPO/releases/download);
#                             the archive is BASE/vVERSION/pinprobe-VERSION-TRIPLE.tar.gz, beside SHA256SUMS
#   INPUT_VERIFY_PROVENANCE   true (default): before the checksum, verify the archive's build-provenance
#                             attestation with `gh attestation verify`, the signer pinned to the
#                             release workflow of the release repository (.github/workflows/release.yml)
#                             run on the tag vVERSION (--source-ref refs/tags/vVERSION);
#                             no gh, no attestation or a failed verification stops the job (exit 2).
#                             false: the checksum alone (a SHA256SUMS in the same editable release), said
#                             so in a warning. GH_TOKEN: gh's token (action.yml passes github.token).
#
# Why both: SHA256SUMS sits in the same release as the archive, so whoever can edit the release
# can rewrite both; the attestation is signed through the release workflow's OIDC identity and
# recorded outside the release.
# Outputs (GITHUB_OUTPUT): source=release (the binary is on GITHUB_PATH) or source=build (no
# release for this version or platform, or asked for: action.yml builds it), version, and
# cache-key: the build cache's key, a hash of the files the build reads (Cargo.lock, Cargo.toml,
# src/, rules/, kernels/), and cache-prefix, its platform part (restore-keys). Exit 2, with nothing installed, on a checksum mismatch, a release
# without this archive in its SHA256SUMS, or a download that fails other than with 404.
set -euo pipefail

fail() {
  echo "::error title=pinprobe install::$*"
  exit 2
}

source_root=${PINPROBE_SOURCE:-${GITHUB_ACTION_PATH:-$(dirname "$0")}/../../..}
output=${GITHUB_OUTPUT:-/dev/null}
gh_path=${GITHUB_PATH:-/dev/null}
work=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/pinprobe-install
[ -f "$source_root/Cargo.toml" ] || fail "no Cargo.toml at the action's source root $source_root"

# The [package] version of the action's own Cargo.toml.
version=$(awk '
  /^\[/ { in_package = ($0 == "[package]") }
  in_package && /^version *= *"/ { sub(/^version *= *"/, ""); sub(/".*/, ""); print; exit }
' "$source_root/Cargo.toml")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
  fail "cannot read the package version from $source_root/Cargo.toml"

key_files=()
for f in Cargo.lock Cargo.toml src rules kernels; do
  [ -e "$source_root/$f" ] && key_files+=("$f")
done
tree_hash=$(cd "$source_root" && find "${key_files[@]}" -type f -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -c1-32)
cache_prefix=pinprobe-$(uname -s)-$(uname -m)-
{
  echo "version=$version"
  echo "cache-key=$cache_prefix$version-$tree_hash"
  echo "cache-prefix=$cache_prefix"
} >>"$output"

build() {
  echo "pinprobe: $*: building $version from the action's source"
  echo "source=build" >>"$output"
  exit 0
}

[ "${INPUT_BUILD_FROM_SOURCE:-false}" != true ] || build "build-from-source is true"
[ "$(uname -s)" = Linux ] || build "no release binary for $(uname -s)"
case $(uname -m) in
  x86_64 | amd64) triple=x86_64-unknown-linux-musl ;;
  aarch64 | arm64) triple=aarch64-unknown-linux-musl ;;
  *) build "no release binary for $(uname -m)" ;;
esac

repo=${INPUT_RELEASE_REPOSITORY:-}
if [ -z "$repo" ] && [ -z "${PINPROBE_RELEASES:-}" ]; then
  # The runner checks actions out to RUNNER_WORK/_actions/OWNER/NAME/REF/.
  actions_dir=$(cd "$source_root" && pwd -P)
  if [[ $actions_dir =~ /_actions/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/[^/]+$ ]]; then
    repo=${BASH_REMATCH[1]}/${BASH_REMATCH[2]}
  else
    build "the action's repository is unknown (set release-repository)"
  fi
fi
[ -z "$repo" ] || [[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
  fail "release-repository must be OWNER/NAME, not '$repo'"
base=${PINPROBE_RELEASES:-https://github.com/$repo/releases/download}
asset=pinprobe-$version-$triple.tar.gz

rm -rf "$work"
mkdir -p "$work"
# download URL FILE: 0 when fetched, 1 on 404 (no such release or asset); exit 2 otherwise.
download() {
  local code
  code=$(curl --silent --show-error --location --retry 3 --connect-timeout 20 \
    --output "$2" --write-out '%{http_code}' "$1") || fail "cannot download $1 (curl failed)"
  case $code in
    200) return 0 ;;
    404) return 1 ;;
    *) fail "cannot download $1 (HTTP $code)" ;;
  esac
}

download "$base/v$version/SHA256SUMS" "$work/SHA256SUMS" || build "no release v$version"
expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$work/SHA256SUMS")
[[ $expected =~ ^[0-9a-f]{64}$ ]] ||
  fail "the release v$version's SHA256SUMS lists no (or more than one) checksum for $asset"
download "$base/v$version/$asset" "$work/$asset" ||
  fail "the release v$version lists $asset in SHA256SUMS but does not hold it"
# The build-provenance attestation first: the release workflow of the release repository, and
# nothing else, must have built this very archive.
signer=$repo/.github/workflows/release.yml
if [ "${INPUT_VERIFY_PROVENANCE:-true}" = true ]; then
  [ -n "$repo" ] || fail "cannot verify the build provenance of $asset: the release repository is unknown (set release-repository, or verify-provenance: false)"
  if ! command -v gh >/dev/null; then
    rm -f "$work/$asset"
    fail "cannot verify the build provenance of $asset: gh is not on PATH (install the GitHub CLI, or set verify-provenance: false to trust SHA256SUMS alone)"
  fi
  # --source-ref: the attested run built the tag of this very version (the release workflow
  # runs on tag pushes), not a branch or another tag.
  if ! gh attestation verify "$work/$asset" --repo "$repo" --signer-workflow "$signer" \
    --source-ref "refs/tags/v$version" --deny-self-hosted-runners >"$work/attestation.log" 2>&1; then
    cat "$work/attestation.log" || true
    rm -f "$work/$asset"
    fail "no valid build-provenance attestation for $asset signed by $signer at refs/tags/v$version: refusing to run it"
  fi
  echo "pinprobe: $asset: build provenance verified (signer $signer, source refs/tags/v$version)"
  echo "provenance=verified" >>"$output"
else
  echo "::warning title=pinprobe install::verify-provenance is false: $asset is checked only against SHA256SUMS from the same release"
  echo "provenance=skipped" >>"$output"
fi
actual=$(sha256sum "$work/$asset" | cut -d' ' -f1)
if [ "$actual" != "$expected" ]; then
  rm -f "$work/$asset"
  fail "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; refusing to run it"
fi

tar -xzf "$work/$asset" -C "$work" "pinprobe-$version-$triple/pinprobe" ||
  fail "$asset does not hold pinprobe-$version-$triple/pinprobe"
bin_dir=$work/bin
mkdir -p "$bin_dir"
mv "$work/pinprobe-$version-$triple/pinprobe" "$bin_dir/pinprobe"
chmod 0755 "$bin_dir/pinprobe"
reported=$("$bin_dir/pinprobe" --version) || fail "the released binary does not run here"
[ "$reported" = "pinprobe $version" ] ||
  fail "the released binary says '$reported', expected 'pinprobe $version'"
echo "$bin_dir" >>"$gh_path"
echo "source=release" >>"$output"
echo "pinprobe: $asset from $base/v$version, SHA-256 $actual matches SHA256SUMS"
