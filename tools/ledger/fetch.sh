#!/usr/bin/env bash
# Download the real vLLM sdists (unpacked) and wheels that tools/ledger/build.py reads, with pip by
# package name, into a cache outside the repository (nothing downloaded is ever committed).
#
#   tools/ledger/fetch.sh [CACHE_DIR] [VERSION...]
#
# CACHE_DIR defaults to $PINPROBE_REAL_DATA_DIR, else target/realdata in the checkout. Versions default to every
# vLLM release 0.26.0-0.33.0. Layout written:
#   CACHE_DIR/sdist/vllm-VERSION/   the sdist, unpacked by pip (what `cmake` would configure)
#   CACHE_DIR/wheel/vllm-VERSION-*.whl
#   CACHE_DIR/wheel/flash_attn_4-4.0.0b36-*.whl
# Set PINPROBE_FETCH_WHEELS=0 to skip the wheels (about 300-450 MB each).
#
# Why `--no-clean`: `pip download` of an sdist prepares its metadata, and vLLM's setup.py imports
# torch, so the download "fails" after unpacking. --no-clean keeps pip's unpacked tree, which is
# byte for byte the sdist's content; nothing of vLLM's build runs beyond that metadata hook.
set -euo pipefail
cache=${1:-${PINPROBE_REAL_DATA_DIR:-target/realdata}}
shift || true
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.26.0 0.27.0 0.27.1 0.28.0 0.29.0 0.30.0 0.31.0 0.32.0 0.33.0)
mkdir -p "$cache/sdist" "$cache/wheel" "$cache/tmp"

for v in "${versions[@]}"; do
  dest="$cache/sdist/vllm-$v"
  if [ ! -f "$dest/vllm/_version.py" ]; then
    work=$(mktemp -d "$cache/tmp/dl-XXXXXX")
    # Fails on purpose at the metadata step (see above); the unpacked tree is what we keep.
    TMPDIR="$work" python3 -m pip download --quiet --no-clean --no-deps --no-binary :all: \
      --no-build-isolation --disable-pip-version-check "vllm==$v" -d "$work/dl" >/dev/null 2>&1 || true
    src=$(find "$work" -mindepth 2 -maxdepth 3 -type f -name PKG-INFO -path '*vllm_*' -printf '%h\n' | head -1)
    if [ -z "$src" ] || ! grep -qx "Version: $v" "$src/PKG-INFO"; then
      echo "fetch.sh: vllm==$v: pip left no unpacked sdist with Version: $v in $work" >&2
      exit 2
    fi
    rm -rf "$dest"
    mv "$src" "$dest"
    rm -rf "$work"
  fi
  echo "sdist vllm $v: $dest"
  if [ "${PINPROBE_FETCH_WHEELS:-1}" != 0 ] && ! compgen -G "$cache/wheel/vllm-$v-*.whl" >/dev/null; then
    python3 -m pip download --quiet --no-deps --only-binary :all: --disable-pip-version-check \
      --platform manylinux_2_28_x86_64 --python-version 3.12 "vllm==$v" -d "$cache/wheel"
  fi
done
if [ "${PINPROBE_FETCH_WHEELS:-1}" != 0 ] && ! compgen -G "$cache/wheel/flash_attn_4-4.0.0b36-*.whl" >/dev/null; then
  python3 -m pip download --quiet --no-deps --only-binary :all: --disable-pip-version-check \
    --python-version 3.12 "flash-attn-4==4.0.0b36" -d "$cache/wheel"
fi
