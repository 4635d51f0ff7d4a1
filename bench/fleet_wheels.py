#!/usr/bin/env python3
"""Five wheels in one run vs one wheel, and one wheel vs `unzip -l` (issue 17).

Times, in one command and interleaved (so every row shares the machine's load): one wheel,
five wheels in one `pinprobe scan` (default --jobs: the core count), each with a fresh cache
(cold: every signature outcome computed) and with a warm one (the outcomes from the content-
addressed cache), and `unzip -l` on the first wheel. Prints medians and ratios. The binary is
copied first, so a rebuild by someone else cannot change it mid-run.

    cargo build --release && python3 bench/fleet_wheels.py W1.whl W2.whl W3.whl W4.whl W5.whl
    # PINPROBE_BIN (default target/release/pinprobe), RUNS (default 11)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

RUNS = int(os.environ.get("RUNS", "11"))


def timed(cmd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dt = (time.perf_counter() - t) * 1e3
    if p.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}")
    return dt


def main():
    wheels = [os.path.abspath(w) for w in sys.argv[1:]]
    if len(wheels) != 5:
        sys.exit("give five wheels")
    tmp = tempfile.mkdtemp(prefix="fleet-bench-")
    binary = os.path.join(tmp, "pinprobe")
    shutil.copy2(os.environ.get("PINPROBE_BIN", "target/release/pinprobe"), binary)
    env = dict(os.environ, PINPROBE_OFFLINE="1")
    warm = os.path.join(tmp, "warm")
    scan = lambda cache, ws: [binary, "scan", "-q", "--cache", cache, "--format", "json", *ws]
    # Fill the warm cache once.
    timed(scan(warm, wheels), env)
    rows = {k: [] for k in ("one cold", "five cold", "one warm", "five warm", "unzip -l")}
    for i in range(RUNS):
        cold = os.path.join(tmp, f"cold{i}")
        rows["one cold"].append(timed(scan(cold + "a", wheels[:1]), env))
        rows["five cold"].append(timed(scan(cold + "b", wheels), env))
        rows["one warm"].append(timed(scan(warm, wheels[:1]), env))
        rows["five warm"].append(timed(scan(warm, wheels), env))
        rows["unzip -l"].append(timed(["unzip", "-l", wheels[0]], env))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"cores {os.cpu_count()}, load before {os.getloadavg()[0]:.1f}, {RUNS} runs each, medians:")
    for k, v in med.items():
        print(f"  {k:10} {v:8.1f} ms")
    ratios = [
        ("five/one cold", med["five cold"] / med["one cold"], 1.5),
        ("five/one warm", med["five warm"] / med["one warm"], 1.5),
        ("one/unzip -l cold", med["one cold"] / med["unzip -l"], 2.0),
        ("one/unzip -l warm", med["one warm"] / med["unzip -l"], 1.0),
    ]
    for name, ratio, target in ratios:
        verdict = "met" if ratio <= target else "NOT met"
        print(f"  {name:18} {ratio:6.2f}x (target {target}x: {verdict})")
    # What a warm scan of one wheel reads (PINPROBE_STATS=1).
    p = subprocess.run(scan(warm, wheels[:1]), env=dict(env, PINPROBE_STATS="1"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr.splitlines():
        if line.startswith("pinprobe: stats:"):
            print(f"  warm one wheel: {line[len('pinprobe: stats: '):]}")
    print(f"load after {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
