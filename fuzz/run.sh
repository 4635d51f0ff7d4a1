#!/usr/bin/env bash
# Run every fuzz target for SECONDS each (default 600), JOBS at a time (default 2), with
# libFuzzer's memory and per-input time limits. Seeds come from the test helpers
# (`tests/cli/fuzz_seeds.rs`), so no binary seed is committed.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Builds on a stable toolchain with RUSTC_BOOTSTRAP=1 (cargo-fuzz's sanitizer flags are
# nightly-only). Needs `cargo install cargo-fuzz`. Logs go to fuzz/logs/TARGET.log; a crash,
# timeout or out-of-memory input is saved under fuzz/artifacts/TARGET/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
jobs=${FUZZ_JOBS:-2}

all=(cmake wheel rule_yaml signature_python signature_yaml index artifact_files
     image_layers image_archive oci_manifest ignore_file registry_client tar_headers
     rule_roundtrip bug_shape_wheel rule_feed pth_file inflate)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

# Seeds: written by the test helpers into corpus/<target>/ (existing corpus entries are kept).
mkdir -p corpus logs artifacts
seeds_log="$PWD/logs/seeds.log"
if ! (cd .. && PINPROBE_FUZZ_SEEDS="$PWD/fuzz/corpus" cargo test --quiet --test cli fuzz_seeds:: >"$seeds_log" 2>&1); then
  tail -n 40 "$seeds_log" >&2
  echo "fuzz/run.sh: writing the seeds failed (cargo test --test cli fuzz_seeds::; log: fuzz/logs/seeds.log)" >&2
  exit 1
fi

export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target}
# FUZZ_NO_BUILD=1 reuses the fuzzers already built (while other runs use them).
[ -n "${FUZZ_NO_BUILD:-}" ] || cargo fuzz build -O
bin_dir="$CARGO_TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release"

run_one() {
  local target=$1
  mkdir -p "corpus/$target" "artifacts/$target"
  if "$bin_dir/$target" "corpus/$target" \
      -max_total_time="$seconds" -rss_limit_mb=512 -timeout=10 -max_len=1048576 \
      -artifact_prefix="artifacts/$target/" -print_final_stats=1 \
      >"logs/$target.log" 2>&1; then
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$target.log" | grep -o '[0-9]*$' || echo '?')
    echo "$target: ok, ${seconds}s, $execs executions"
  else
    echo "$target: FAILED (see fuzz/logs/$target.log, fuzz/artifacts/$target/)"
    return 1
  fi
}

failed=0
pids=()
names=()
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
exit $failed
