#!/usr/bin/env python3
"""Count pinprobe's findings on the real vLLM release set (for the before/after notes of issue 15).

    tools/ledger/measure.py PINPROBE_BIN [CACHE_DIR] [--repo NAME=DIR ...]

Runs `PINPROBE_BIN scan TARGET --format json` (plus any `--repo` given) on every unpacked sdist
under CACHE_DIR/sdist/ and every wheel under CACHE_DIR/wheel/ (tools/ledger/fetch.sh lays them
out; CACHE_DIR defaults to $PINPROBE_REAL_DATA_DIR, else target/realdata in the checkout) and prints one Markdown
table: exit code, findings by status, split into kernel-rule findings (PINPROBE-*) and hygiene /
drift findings, the FA4 rule's (PINPROBE-2026-0001) status, and the components found.
Nothing is decided here: it only tallies what the binary printed.
"""
import json
import os
import subprocess
import sys
from pathlib import Path


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    binary = args.pop(0)
    cache = Path(os.environ.get("PINPROBE_REAL_DATA_DIR", "target/realdata"))
    if args and not args[0].startswith("--"):
        cache = Path(args.pop(0))
    extra = args
    targets = sorted((cache / "sdist").glob("vllm-*")) + sorted((cache / "wheel").glob("*.whl"))
    rows = []
    totals = {"kernel_unknown": 0, "hygiene_unknown": 0, "targets": 0}
    for target in targets:
        proc = subprocess.run(
            [binary, "scan", str(target), "--format", "json", *extra],
            capture_output=True, text=True, check=False,
        )
        try:
            report = json.loads(proc.stdout)
        except json.JSONDecodeError:
            rows.append((target.name, proc.returncode, "no JSON: " + proc.stderr.strip()[:120]))
            continue
        for t in report.get("targets", []):
            findings = t.get("findings", [])
            kernel = [f for f in findings if f["rule"].startswith("PINPROBE-")]
            other = [f for f in findings if not f["rule"].startswith("PINPROBE-")]

            def count(fs, status):
                return sum(1 for f in fs if f["status"] == status)

            fa4 = [f["status"] for f in kernel if f["rule"] == "PINPROBE-2026-0001"]
            comps = sorted({c["component"] for c in t.get("components", [])})
            kernel_unknown = count(kernel, "unknown")
            hygiene_unknown = count(other, "unknown")
            totals["kernel_unknown"] += kernel_unknown
            totals["hygiene_unknown"] += hygiene_unknown
            totals["targets"] += 1
            rows.append((
                target.name, proc.returncode,
                f"{count(kernel, 'affected')} / {count(kernel, 'not_affected')} / {kernel_unknown}",
                f"{count(other, 'affected')} / {count(other, 'not_affected')} / {hygiene_unknown}",
                ",".join(fa4) or "-",
                " ".join(comps),
            ))
    print("| target | exit | kernel rules: affected / not / unknown | hygiene+drift: affected / not / unknown | FA4 (0001) | components |")
    print("|---|---:|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()
    print(f"Total over {totals['targets']} targets: {totals['kernel_unknown']} unknown kernel-rule "
          f"findings, {totals['hygiene_unknown']} unknown hygiene/drift findings.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
