#!/usr/bin/env bash
# Behaviour unchanged (issue 36): run two pinprobe binaries on the same targets with every report
# format and compare the bytes of each output, the exit code and stderr.
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
status=0
for target in "$@"; do
  for format in json jsonl table markdown sarif openvex cyclonedx; do
    for side in base new; do
      bin=$base
      [ "$side" = new ] && bin=$new
      mkdir -p "$work/$side/cache" "$work/$side/config"
      SOURCE_DATE_EPOCH=1764720000 XDG_CONFIG_HOME="$work/$side/config" XDG_CACHE_HOME="$work/$side/cache" \
        "$bin" scan --offline --cache "$work/$side/cache" --format "$format" "$target" \
        >"$work/$side.out" 2>"$work/$side.err"
      echo $? >"$work/$side.rc"
    done
    if cmp -s "$work/base.out" "$work/new.out" && cmp -s "$work/base.rc" "$work/new.rc" \
      && cmp -s "$work/base.err" "$work/new.err"; then
      echo "same     $format $target (exit $(cat "$work/new.rc"), $(wc -c <"$work/new.out") bytes)"
    else
      echo "DIFFERS  $format $target"
      diff <(cat "$work/base.rc" "$work/base.err" "$work/base.out") \
        <(cat "$work/new.rc" "$work/new.err" "$work/new.out") | head -20
      status=1
    fi
  done
done
exit $status
