#!/usr/bin/env python3
"""Warm-cache scan vs `--repo` scan of the same tree (issue 16).

Builds a synthetic FlashAttention-shaped history (COMMITS commits through `git fast-import`),
serves it bare with `git http-backend` behind lighttpd on loopback, pins a vLLM-shaped tree at a
commit near its tip, fetches it once into a fresh cache (cold), then times RUNS scans on the
warm cache (the pin's URL rewritten to the server with --mirror; the server must see no
request) next to RUNS scans given the same history with --repo. Prints medians and the ratio.

    cargo build --release && python3 benches/results/fetch_warm.py   # PINPROBE_BIN, COMMITS, RUNS
"""
import os, shutil, socket, statistics, subprocess, sys, tempfile, time

BIN = os.path.abspath(os.environ.get("PINPROBE_BIN", "target/release/pinprobe"))
COMMITS = int(os.environ.get("COMMITS", "5000"))
RUNS = int(os.environ.get("RUNS", "21"))
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")


def git(*args, cwd=None, **kw):
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True, **kw).stdout.strip()


def stream(n):
    out = []
    for i in range(1, n + 1):
        body = f"# revision {i}\nx = {i}\n"
        msg = f"commit {i}\n"
        out.append(f"commit refs/heads/main\nmark :{i}\n"
                   f"committer b <b@example.invalid> {1700000000 + i} +0000\n"
                   f"data {len(msg)}\n{msg}")
        if i > 1:
            out.append(f"from :{i - 1}\n")
        out.append(f"M 644 inline flash_attn/cute/file{i % 50}.py\ndata {len(body)}\n{body}\n")
    return "".join(out)


def main():
    tmp = tempfile.mkdtemp(prefix="pinprobe-bench-fetch-")
    lighttpd = None
    try:
        fa = os.path.join(tmp, "fa")
        git("init", "-q", "-b", "main", fa)
        subprocess.run(["git", "fast-import", "--quiet"], cwd=fa, input=stream(COMMITS),
                       text=True, check=True, env=GIT_ENV)
        pin = git("rev-parse", "main~10", cwd=fa)
        srv = os.path.join(tmp, "srv")
        os.makedirs(srv)
        git("clone", "-q", "--bare", fa, os.path.join(srv, "flash-attention.git"))
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        backend = os.path.join(git("--exec-path"), "git-http-backend")
        conf = os.path.join(tmp, "lighttpd.conf")
        log = os.path.join(tmp, "access.log")
        with open(conf, "w") as f:
            f.write(f'''server.document-root = "{srv}"
server.bind = "127.0.0.1"
server.port = {port}
server.modules = ("mod_alias", "mod_cgi", "mod_setenv", "mod_accesslog")
accesslog.filename = "{log}"
alias.url = ("/git" => "{backend}")
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{srv}", "GIT_HTTP_EXPORT_ALL" => "1")
}}
''')
        lighttpd = subprocess.Popen(["lighttpd", "-D", "-f", conf], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port)).close(); break
            except OSError:
                time.sleep(0.05)
        tree = os.path.join(tmp, "vllm")
        os.makedirs(os.path.join(tree, "cmake/external_projects"))
        with open(os.path.join(tree, "CMakeLists.txt"), "w") as f:
            f.write("include(cmake/external_projects/vllm_flash_attn.cmake)\n")
        with open(os.path.join(tree, "cmake/external_projects/vllm_flash_attn.cmake"), "w") as f:
            f.write("include(FetchContent)\nFetchContent_Declare(\n  vllm-flash-attn\n"
                    "  GIT_REPOSITORY https://github.com/vllm-project/flash-attention.git\n"
                    f"  GIT_TAG {pin}\n)\n")
        env = dict(os.environ, PINPROBE_CACHE=os.path.join(tmp, "cache"), HOME=tmp,
                   XDG_CONFIG_HOME=tmp, GIT_CONFIG_NOSYSTEM="1")
        env.pop("PINPROBE_OFFLINE", None)
        mirror = ["--mirror", f"https://github.com/vllm-project/=http://127.0.0.1:{port}/git/"]
        warm_cmd = [BIN, "scan", tree, "--format", "json", *mirror]
        repo_cmd = [BIN, "scan", tree, "--format", "json", "--offline",
                    "--repo", f"flash-attention={fa}"]

        def timed(cmd):
            t = time.perf_counter()
            p = subprocess.run(cmd, env=env, capture_output=True)
            return time.perf_counter() - t, p.returncode

        def settled_count():
            # lighttpd buffers its access log: wait until it stops growing.
            last = -1
            while True:
                time.sleep(2)
                now = sum(1 for _ in open(log))
                if now == last:
                    return now
                last = now

        cold, rc = timed(warm_cmd)
        before = settled_count()
        warm, repo = [], []
        for _ in range(RUNS):
            warm.append(timed(warm_cmd)); repo.append(timed(repo_cmd))
        after = settled_count()
        w = statistics.median(t for t, _ in warm) * 1000
        r = statistics.median(t for t, _ in repo) * 1000
        print(f"history: {COMMITS} commits; cold fetch + scan {cold * 1000:.1f} ms (exit {rc}); "
              f"server requests before the warm runs {before}, during them {after - before}")
        print(f"exit codes: warm {sorted(set(c for _, c in warm))}, --repo {sorted(set(c for _, c in repo))}")
        print(f"median of {RUNS}: warm cache {w:.1f} ms, --repo {r:.1f} ms, ratio {w / r:.2f}x")
        if after != before:
            sys.exit("the warm cache made requests")
    finally:
        if lighttpd:
            lighttpd.kill(); lighttpd.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
