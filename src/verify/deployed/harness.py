# pinprobe verify --deployed: the harness that runs the FlashAttention 4 (CuTe DSL) kernel a build
# ships. Part of pinprobe's source; pinprobe writes it to a temporary directory at run time and
# runs it with --python. This is the only place pinprobe imports code from an artifact.
#
#   harness.py stage TARGET DEST   copy the target's FA4 sources into DEST (no import, no GPU)
#   harness.py run CONFIG_JSON     stage, import, check every split count, time them
#
# TARGET is a wheel (any zip), a site-packages directory or a virtual environment holding vLLM's
# vllm/vllm_flash_attn/cute/ or standalone flash_attn/cute/. Only that directory is staged, with
# empty package __init__.py files above it, so the rest of vLLM is never imported.
#
# Protocol (version 1): one JSON object per line on stdout, each with "event":
#   hello       python, torch, cuda, cutlass_dsl, device, capability, protocol
#   target      kind (wheel | site-packages | venv), package, module, source, files, sha256 {file: hex}
#   error       kind (missing | no_gpu | target | import | kernel | usage), message, missing (what)
#   check       shape, splits, rel_error (null if NaN), ok, seconds (first call, JIT included)
#   unsupported shape, splits, message: the kernel refused num_splits > 1 (or, at 1, the shape)
#   timing      shape, splits, samples_us [per launch, one per round], launches, copies, mode
#   shape_done  shape, eager_call_us (host time per call launched one by one), seconds
#   done        seconds
# Everything else the libraries print goes to stderr.
import glob
import hashlib
import importlib
import json
import math
import os
import random
import re
import shutil
import sys
import time
import traceback
import zipfile

PROTOCOL = 1
MAX_REL_ERROR_HINT = 1e-2  # pinprobe decides; this only fills "ok"

# (directory inside site-packages, module, package __init__ files to create)
PACKAGES = [
    ("vllm/vllm_flash_attn/cute/", "vllm.vllm_flash_attn.cute",
     ["vllm/__init__.py", "vllm/vllm_flash_attn/__init__.py"]),
    ("flash_attn/cute/", "flash_attn.cute", ["flash_attn/__init__.py"]),
]

# The protocol owns the real stdout; anything else written to fd 1 (JIT logs, C libraries) goes
# to stderr.
_PROTO = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr


def emit(event, **fields):
    _PROTO.write(json.dumps({"event": event, **fields}) + "\n")
    _PROTO.flush()


class Failure(Exception):
    def __init__(self, kind, message, missing=None):
        super().__init__(message)
        self.kind, self.message, self.missing = kind, message, missing


def describe(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


# ---- staging ---------------------------------------------------------------------------------

def _safe(name):
    parts = name.replace("\\", "/").split("/")
    return not name.startswith("/") and ".." not in parts and ":" not in parts[0]


def _finish(dest, package, files):
    prefix, module, inits = package
    for init in inits:
        path = os.path.join(dest, init)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, "w").close()
    sha = {}
    for name in ("interface.py", "flash_fwd_sm90.py", "block_info.py"):
        path = os.path.join(dest, prefix, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                sha[name] = hashlib.sha256(f.read()).hexdigest()
    return {"package": prefix.rstrip("/"), "module": module, "files": files, "sha256": sha}


def _site_dirs(target):
    """The directories of TARGET that could hold packages: itself, or a venv's site-packages."""
    found = []
    for pattern in ("lib/python*/site-packages", "lib64/python*/site-packages",
                    "Lib/site-packages", "local/lib/python*/dist-packages"):
        found += sorted(glob.glob(os.path.join(target, pattern)))
    return found


def stage(target, dest):
    """Copy the target's FA4 cute/ sources into DEST; returns what the target event reports."""
    if not os.path.exists(target):
        raise Failure("target", f"{target}: no such file or directory")
    os.makedirs(dest, exist_ok=True)
    if os.path.isfile(target):
        if not zipfile.is_zipfile(target):
            raise Failure("target", f"{target}: not a wheel (zip), site-packages directory or virtual environment")
        with zipfile.ZipFile(target) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            for package in PACKAGES:
                prefix = package[0]
                if prefix + "interface.py" not in names:
                    continue
                members = [n for n in names if n.startswith(prefix)]
                bad = [n for n in members if not _safe(n)]
                if bad:
                    raise Failure("target", f"{target}: unsafe path in the archive: {bad[0]}")
                for n in members:
                    path = os.path.join(dest, n)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with z.open(n) as src, open(path, "wb") as out:
                        shutil.copyfileobj(src, out)
                return {"kind": "wheel", "source": os.path.abspath(target),
                        **_finish(dest, package, len(members))}
    else:
        roots = [("site-packages", target)] + [("venv", d) for d in _site_dirs(target)]
        for kind, root in roots:
            for package in PACKAGES:
                src = os.path.join(root, package[0])
                if not os.path.isfile(os.path.join(src, "interface.py")):
                    continue
                out = os.path.join(dest, package[0])
                shutil.copytree(src, out, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                                dirs_exist_ok=True)
                files = sum(len(fs) for _, _, fs in os.walk(out))
                return {"kind": kind, "source": os.path.abspath(root), **_finish(dest, package, files)}
    raise Failure("target", f"{target}: no FlashAttention 4 sources (vllm/vllm_flash_attn/cute/ or "
                            "flash_attn/cute/ with interface.py) found")


# ---- imports ---------------------------------------------------------------------------------

def import_stack(module, device):
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        raise Failure("missing", f"PyTorch is not importable ({describe(e)})", "PyTorch")
    if not torch.cuda.is_available():
        raise Failure("no_gpu", "PyTorch sees no CUDA device")
    if device >= torch.cuda.device_count():
        raise Failure("usage", f"device {device} does not exist: PyTorch sees {torch.cuda.device_count()}")
    try:
        import cutlass  # noqa: F401
        import cutlass.cute  # noqa: F401
    except Exception as e:  # noqa: BLE001
        raise Failure("missing", f"the CuTe DSL is not importable ({describe(e)}); FA4 needs "
                                 "nvidia-cutlass-dsl (with its dsl_packages directory on the path)",
                      "CuTe DSL (nvidia-cutlass-dsl)")
    try:
        iface = importlib.import_module(module + ".interface")
    except ModuleNotFoundError as e:
        raise Failure("missing", f"{module}.interface needs {e.name!r}, which is not importable "
                                 f"({describe(e)})", e.name)
    except Exception as e:  # noqa: BLE001
        raise Failure("import", f"importing {module}.interface failed ({describe(e)})")
    fwd = getattr(iface, "_flash_attn_fwd", None)
    if fwd is None:
        raise Failure("import", f"{module}.interface has no _flash_attn_fwd")
    return torch, iface, fwd


def versions(torch, device):
    from importlib import metadata
    dsl = None
    for name in ("nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base"):
        try:
            dsl = metadata.version(name)
            break
        except Exception:  # noqa: BLE001
            pass
    props = torch.cuda.get_device_properties(device)
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cutlass_dsl": dsl,
        "device": props.name,
        "capability": f"{props.major}.{props.minor}",
    }


# ---- one shape -------------------------------------------------------------------------------

def unsupported(exc, splits):
    """Whether the kernel refused the configuration (an assertion or NotImplementedError saying
    "not supported"): split-KV when splits > 1, the shape itself (say, a head dim) at 1."""
    text = describe(exc)
    refused = isinstance(exc, (AssertionError, NotImplementedError, ValueError)) and re.search(
        r"not supported|unsupported", text, re.I)
    return bool(refused) and (splits == 1 or re.search(r"split", text, re.I) is not None)


def run_shape(torch, fwd, index, shape, cfg):
    import torch.nn.functional as F
    started = time.perf_counter()
    d, kvh, qpk, batch, tokens = (shape[k] for k in ("head_dim", "kv_heads", "q_per_kv", "batch", "tokens"))
    hq = kvh * qpk
    seed = cfg["seed"] + index
    gen = torch.Generator(device="cuda").manual_seed(seed % (1 << 63))
    props = torch.cuda.get_device_properties(cfg["device"])
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    kv_bytes = 2 * batch * tokens * kvh * d * 2
    copies = max(2, -(-3 * l2 // kv_bytes))
    launches = -(-cfg["launches"] // copies) * copies
    bf16 = torch.bfloat16
    q = torch.randn(batch, 1, hq, d, device="cuda", dtype=bf16, generator=gen)
    ks = [torch.randn(batch, tokens, kvh, d, device="cuda", dtype=bf16, generator=gen) for _ in range(copies)]
    vs = [torch.randn(batch, tokens, kvh, d, device="cuda", dtype=bf16, generator=gen) for _ in range(copies)]
    ref = F.scaled_dot_product_attention(
        q.float().transpose(1, 2), ks[0].float().transpose(1, 2), vs[0].float().transpose(1, 2),
        enable_gqa=True,
    ).transpose(1, 2)
    ref_norm = ref.norm().item()

    def call(j, s, out=None):
        return fwd(q, ks[j % copies], vs[j % copies], num_splits=s, out=out)[0]

    # Correctness first (JIT compilation happens here), output poisoned with NaN.
    timed = []
    for s in cfg["splits"]:
        t0 = time.perf_counter()
        out = torch.full((batch, 1, hq, d), float("nan"), device="cuda", dtype=bf16)
        try:
            call(0, s, out=out)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            if unsupported(e, s):
                emit("unsupported", shape=index, splits=s, message=describe(e))
                break
            traceback.print_exc()
            raise Failure("kernel", f"num_splits={s} on {label(shape)} failed ({describe(e)})")
        err = ((out.float() - ref).norm().item() / ref_norm) if ref_norm > 0 else float("nan")
        finite = math.isfinite(err)
        emit("check", shape=index, splits=s, rel_error=err if finite else None,
             ok=finite and err < MAX_REL_ERROR_HINT, seconds=time.perf_counter() - t0)
        timed.append(s)

    # One split launched eagerly, call by call: what the Python interface costs on the host.
    host = None
    if timed:
        n = 20
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for j in range(n):
            call(j, timed[0])
        host = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()

    # CUDA graphs of `launches` calls each, K/V rotated across copies that exceed the L2.
    graphs, mode = {}, "cuda-graph"
    for s in timed:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for j in range(copies):
                call(j, s)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for j in range(launches):
                    call(j, s)
            graph.replay()
            torch.cuda.synchronize()
            graphs[s] = graph.replay
        except Exception as e:  # noqa: BLE001
            print(f"pinprobe harness: CUDA graph capture failed, timing eagerly: {describe(e)}", file=sys.stderr)
            torch.cuda.synchronize()
            mode = f"eager ({describe(e)[:120]})"

            def eager(s=s):
                for j in range(launches):
                    call(j, s)
            graphs[s] = eager

    rng = random.Random(seed)
    samples = {s: [] for s in timed}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(cfg["rounds"]):
        order = list(timed)
        rng.shuffle(order)
        for s in order:
            start.record()
            graphs[s]()
            end.record()
            end.synchronize()
            samples[s].append(start.elapsed_time(end) * 1000.0 / launches)
    for s in timed:
        emit("timing", shape=index, splits=s, samples_us=samples[s], launches=launches,
             copies=copies, mode=mode)
    del graphs, ks, vs
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    emit("shape_done", shape=index, eager_call_us=host, seconds=time.perf_counter() - started)


def label(shape):
    return "d{head_dim} kv{kv_heads} q{q_per_kv} b{batch} t{tokens}".format(**shape)


def run(cfg):
    started = time.perf_counter()
    info = stage(cfg["target"], cfg["stage_dir"])
    sys.path.insert(0, cfg["stage_dir"])
    emit("target", **info)
    torch, _, fwd = import_stack(info["module"], cfg["device"])
    torch.cuda.set_device(cfg["device"])
    emit("hello", protocol=PROTOCOL, **versions(torch, cfg["device"]))
    for i, shape in enumerate(cfg["shapes"]):
        run_shape(torch, fwd, i, shape, cfg)
    emit("done", seconds=time.perf_counter() - started)


def main(argv):
    try:
        if len(argv) == 3 and argv[0] == "stage":
            emit("target", **stage(argv[1], argv[2]))
        elif len(argv) == 2 and argv[0] == "run":
            run(json.loads(argv[1]))
        else:
            raise Failure("usage", "usage: harness.py stage TARGET DEST | run CONFIG_JSON")
    except Failure as f:
        fields = {"kind": f.kind, "message": f.message}
        if f.missing:
            fields["missing"] = f.missing
        emit("error", **fields)
        return 3
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        emit("error", kind="failed", message=describe(e))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
