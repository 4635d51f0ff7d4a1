#!/usr/bin/env bash
# Behaviour unchanged (issue 36): run two pinprobe binaries on the same targets, every report
# format written by one scan per binary and target, and compare each output byte for byte, with
# the exit code and stderr.
#
#   benches/results/same-output.sh BASE_BINARY NEW_BINARY TARGET...
#
# Each binary runs offline with the built-in rules and an empty cache of its own (so neither
# reads what the other wrote), from the same working directory, on the same target paths, with
# SOURCE_DATE_EPOCH fixed so the OpenVEX and CycloneDX timestamps are the same.
# Prints one line per target and format, `same` or `DIFFERS`, and exits 1 if anything differs.
set -u
base=$1 new=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
formats="json jsonl table markdown sarif openvex cyclonedx"
status=0
for target in "$@"; do
  for side in base new; do
    bin=$base
    [ "$side" = new ] && bin=$new
    rm -rf "${work:?}/$side"
    mkdir -p "$work/$side/cache" "$work/$side/config"
    args=()
    for format in $formats; do
      args+=(--format "$format=$work/$side/$format")
    done
    SOURCE_DATE_EPOCH=1764720000 XDG_CONFIG_HOME="$work/$side/config" \
      XDG_CACHE_HOME="$work/$side/cache" \
      "$bin" scan --offline --cache "$work/$side/cache" "${args[@]}" "$target" \
      >"$work/$side/stdout" 2>"$work/$side/stderr"
    echo $? >"$work/$side/rc"
    # stderr names the output files, which differ between the two sides by their folder.
    sed -i "s|$work/$side/|OUT/|g" "$work/$side/stderr"
  done
  for what in rc stdout stderr $formats; do
    if cmp -s "$work/base/$what" "$work/new/$what"; then
      echo "same     $what $target (exit $(cat "$work/new/rc"), $(wc -c <"$work/new/$what") bytes)"
    else
      echo "DIFFERS  $what $target"
      diff "$work/base/$what" "$work/new/$what" | head -20
      status=1
    fi
  done
done
exit $status
