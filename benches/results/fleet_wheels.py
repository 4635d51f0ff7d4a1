#!/usr/bin/env python3
"""Five wheels in one run vs one wheel, and one wheel vs `unzip -l` (issue 17).

Times, in one command and interleaved (so every row shares the machine's load): one wheel,
five wheels in one `pinprobe scan` (default --jobs: the core count), each with a fresh cache
(cold: every signature outcome computed, every library read) and with a warm one (outcomes and
library symbol tables from the content-addressed cache), and `unzip -l` on the first wheel.
For this binary also
"rescan" rows: warm, but with `--rescan`, so each wheel is scanned again from the lower caches
(what a warm scan costs where no whole report can be reused). Prints medians of wall and CPU time (user + sys of the child: what the work costs, whatever
the load) and the four ratios against their targets. With PINPROBE_BASE_BIN (a binary of an
earlier commit), its rows are timed in the same loop and the before/after ratios printed.
Binaries are copied first, so a rebuild by someone else cannot change them mid-run.

    cargo build --release && python3 benches/results/fleet_wheels.py W1.whl W2.whl W3.whl W4.whl W5.whl
    # PINPROBE_BIN (default target/release/pinprobe), PINPROBE_BASE_BIN, RUNS (default 7)
"""
import os, resource, shutil, statistics, subprocess, sys, tempfile, time

RUNS = int(os.environ.get("RUNS", "7"))


def timed(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - t) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    if p.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}")
    return wall, cpu


def main():
    wheels = [os.path.abspath(w) for w in sys.argv[1:]]
    if len(wheels) != 5:
        sys.exit("give five wheels")
    tmp = tempfile.mkdtemp(prefix="fleet-bench-")
    binaries = {"": os.environ.get("PINPROBE_BIN", "target/release/pinprobe")}
    if os.environ.get("PINPROBE_BASE_BIN"):
        binaries["base "] = os.environ["PINPROBE_BASE_BIN"]
    env = dict(os.environ, PINPROBE_OFFLINE="1")
    env.pop("PINPROBE_STATS", None)
    for tag, src in list(binaries.items()):
        binaries[tag] = os.path.join(tmp, f"pinprobe-{tag.strip() or 'new'}")
        shutil.copy2(src, binaries[tag])

    def scan(tag, cache, ws, *extra):
        return [binaries[tag], "scan", "-q", "--cache", cache, "--format", "json", *extra, *ws]

    for tag in binaries:  # fill each warm cache once
        timed(scan(tag, os.path.join(tmp, f"warm{tag.strip()}"), wheels), env)
    rows = {}
    for i in range(RUNS):
        for tag in binaries:
            warm = os.path.join(tmp, f"warm{tag.strip()}")
            cold = os.path.join(tmp, f"cold{tag.strip()}{i}")
            for name, cmd in [
                ("one cold", scan(tag, cold + "a", wheels[:1])),
                ("five cold", scan(tag, cold + "b", wheels)),
                ("one warm", scan(tag, warm, wheels[:1])),
                ("five warm", scan(tag, warm, wheels)),
            ] + ([] if tag else [
                # Warm but every wheel scanned again: the lower caches only (signature
                # outcomes, library symbols), without whole-report reuse.
                ("one rescan", scan(tag, warm, wheels[:1], "--rescan")),
                ("five rescan", scan(tag, warm, wheels, "--rescan")),
            ]):
                rows.setdefault(tag + name, []).append(timed(cmd, env))
        rows.setdefault("unzip -l", []).append(timed(["unzip", "-l", wheels[0]], env))
    wall = {k: statistics.median(w for w, _ in v) for k, v in rows.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
    print(f"cores {os.cpu_count()}, load before {os.getloadavg()[0]:.1f}, {RUNS} runs each, "
          "medians (wall, cpu):")
    for k in rows:
        print(f"  {k:16} {wall[k]:8.1f} ms wall {cpu[k]:8.1f} ms cpu")
    for tag in binaries:
        print(f"{tag or 'this '}binary, ratios (wall; cpu):")
        for name, a, b, target in [
            ("five/one cold", "five cold", "one cold", 1.5),
            ("five/one warm", "five warm", "one warm", 1.5),
            ("one/unzip -l cold", "one cold", "unzip -l", 2.0),
            ("one/unzip -l warm", "one warm", "unzip -l", 1.0),
        ] + ([] if tag else [
            ("five/one rescan", "five rescan", "one rescan", 1.5),
            ("one/unzip rescan", "one rescan", "unzip -l", 1.0),
        ]):
            ratio = wall[tag + a] / wall[b if b == "unzip -l" else tag + b]
            cratio = cpu[tag + a] / cpu[b if b == "unzip -l" else tag + b]
            verdict = "met" if ratio <= target else "NOT met"
            print(f"  {name:18} {ratio:6.2f}x; {cratio:6.2f}x (target {target}x wall: {verdict})")
    if "base " in binaries:
        print("this binary / base (wall; cpu):")
        for name in ("one cold", "five cold", "one warm", "five warm"):
            print(f"  {name:10} {wall[name] / wall['base ' + name]:6.2f}x; "
                  f"{cpu[name] / cpu['base ' + name]:6.2f}x")
    # What a warm scan of one wheel reads (PINPROBE_STATS=1).
    p = subprocess.run(scan("", os.path.join(tmp, "warm"), wheels[:1]),
                       env=dict(env, PINPROBE_STATS="1"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr.splitlines():
        if line.startswith("pinprobe: stats:"):
            print(f"  warm one wheel: {line[len('pinprobe: stats: '):]}")
    print(f"load after {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
