#!/usr/bin/env bash
# Stage the third-party artifacts for an opt-in `pinprobe verify --deployed` test on an H200.
#
# Runs on a machine with pip and network access (not on the GPU machine, which has neither).
# Downloads at run time, never commits anything third-party: everything lands in STAGE
# (default: .stage/ in the repository root; keep it git-ignored, e.g. in .git/info/exclude).
#
#   benches/results/stage-deployed.sh [STAGE]
#
# STAGE afterwards holds:
#   cu13.tar.xz            nvidia-cutlass-dsl-libs-cu13 4.7.1, unzipped and packed with xz -9e
#                          (~61 MB: carry it alone in one device call, unpack it under /root)
#   wheels/*.whl           the rest of FA4's Python dependencies (cp312, manylinux x86_64):
#                          nvidia-cutlass-dsl 4.7.1 + libs-base + libs-core, apache-tvm-ffi
#                          0.1.11, quack-kernels 0.6.5, torch-c-dlpack-ext, nvidia-cuda-nvdisasm.
#                          PyTorch, cuda-bindings and einops are already on the GPU machine.
#   targets/vllm-0.30.0-cute.whl     a zip holding only vllm/vllm_flash_attn/ of the vllm 0.30.0
#                                    wheel (cute/ sources as shipped; the .so files dropped):
#                                    the wheel path of --deployed
#   targets/vllm-0.30.0-fixed.tar.xz a virtual environment's layout
#                                    (pyvenv.cfg, lib/python3.12/site-packages/vllm/...) with the
#                                    same sources plus the one-line fix (num_splits=num_splits,
#                                    in the SM90 BlockInfo( call, as vLLM 0.33.0 has it): the
#                                    venv path of --deployed
#   targets/flash_attn_4-4.0.0b36-py3-none-any.whl   upstream FA4 as published on PyPI
#
# On the GPU machine (see benches/results/verify-deployed-h200.md for the exact calls):
#   mkdir -p /root/site && tar xJf .stage/cu13.tar.xz -C /root/site          # call 1
#   for w in .stage/wheels/*.whl; do python3 -m zipfile -e "$w" /root/site; done   # call 2
#   export PYTHONPATH=/root/site:/root/site/nvidia_cutlass_dsl/dsl_packages
#   (pip install --target ignores .pth files, and so does unzipping: the dsl_packages entry
#   that nvidia_cutlass_dsl_packages.pth would add must be on PYTHONPATH by hand)
set -euo pipefail

STAGE=${1:-"$(git rev-parse --show-toplevel)/.stage"}
VLLM=0.30.0
FA4=4.0.0b36
CUTLASS_DSL=4.7.1
PY=${PYTHON:-python3}
PLATFORMS=(manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_24_x86_64
  manylinux_2_27_x86_64 manylinux_2_28_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64)
PLAT_ARGS=()
for p in "${PLATFORMS[@]}"; do PLAT_ARGS+=(--platform "$p"); done

download() { # DEST SPEC...
  local dest=$1
  shift
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp "${PLAT_ARGS[@]}" -d "$dest" "$@"
}

rm -rf "$STAGE/wheels" "$STAGE/targets"
mkdir -p "$STAGE"/{dl,wheels,targets}
echo "staging into $STAGE"

# 1. FA4's dependencies, pinned as vLLM 0.30.0 pins them (cu13 libraries aside: see 2).
download "$STAGE/wheels" \
  "nvidia-cutlass-dsl==$CUTLASS_DSL" "nvidia-cutlass-dsl-libs-base==$CUTLASS_DSL" \
  "nvidia-cutlass-dsl-libs-core==$CUTLASS_DSL" \
  apache-tvm-ffi==0.1.11 quack-kernels==0.6.5 torch-c-dlpack-ext 'nvidia-cuda-nvdisasm>=13.3,<14'
download "$STAGE/dl" "nvidia-cutlass-dsl-libs-cu13==$CUTLASS_DSL"

# 2. The cu13 libraries: 88 MB zipped, too big for one carried tree; xz packs them to ~61 MB.
if [ ! -s "$STAGE/cu13.tar.xz" ]; then
  tmp=$(mktemp -d)
  "$PY" -m zipfile -e "$STAGE"/dl/nvidia_cutlass_dsl_libs_cu13-*.whl "$tmp"
  rm -rf "$tmp"/*.dist-info
  echo "packing cu13 libraries with xz -9e (a few minutes)"
  tar cf - -C "$tmp" nvidia_cutlass_dsl | xz -9e -T1 >"$STAGE/cu13.tar.xz.part"
  mv "$STAGE/cu13.tar.xz.part" "$STAGE/cu13.tar.xz"
  rm -rf "$tmp"
fi

# 3. Upstream flash-attn-4: the wheel itself is the target.
download "$STAGE/targets" "flash-attn-4==$FA4"

# 4. vLLM: the wheel is ~315 MB; keep only vllm/vllm_flash_attn/ (its cute/ sources).
download "$STAGE/dl" "vllm==$VLLM"
"$PY" - "$STAGE" "$VLLM" <<'PY'
import io, os, re, shutil, sys, tarfile, zipfile
stage, version = sys.argv[1], sys.argv[2]
wheel = [f for f in os.listdir(f"{stage}/dl") if f.startswith(f"vllm-{version}-")][0]
prefix = "vllm/vllm_flash_attn/cute/"
with zipfile.ZipFile(f"{stage}/dl/{wheel}") as zin:
    names = [n for n in zin.namelist() if n.startswith(prefix) and not n.endswith("/")]
    files = {n: zin.read(n) for n in names}
assert f"{prefix}interface.py" in files, "no FA4 cute sources in the vllm wheel"

# The shipped sources, as a (trimmed) wheel.
out = f"{stage}/targets/vllm-{version}-cute.whl"
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for n, data in sorted(files.items()):
        z.writestr(n, data)
print(f"wrote {out} ({len(files)} files)")

# The one-line fix, applied to a copy: num_splits=num_splits, in the SM90 BlockInfo( call.
sm90 = f"{prefix}flash_fwd_sm90.py"
src = files[sm90].decode()
call = re.compile(r"(block_info = BlockInfo\(\n(?:[^\n]*\n)*?)(\s*\)\n)")
m = call.search(src)
assert m and "num_splits=" not in m.group(1), "SM90 BlockInfo( call not found or already fixed"
indent = re.search(r"\n(\s+)self\.tile_m,", m.group(1)).group(1)
fixed = src[: m.end(1)] + f"{indent}num_splits=num_splits,\n" + src[m.end(1) :]
files_fixed = dict(files, **{sm90: fixed.encode()})

# ... laid out as a virtual environment, packed (the device machine unpacks it).
root = f"vllm-{version}-fixed"
out = f"{stage}/targets/{root}.tar.xz"
with tarfile.open(out, "w:xz") as t:
    def add(name, data):
        info = tarfile.TarInfo(f"{root}/{name}")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    add("pyvenv.cfg", b"home = /usr/bin\nversion = 3.12.3\n")
    for n, data in sorted(files_fixed.items()):
        add(f"lib/python3.12/site-packages/{n}", data)
print(f"wrote {out} (fix applied to {sm90})")
PY
rm -f "$STAGE"/dl/vllm-*.whl

du -sh "$STAGE"/cu13.tar.xz "$STAGE"/wheels "$STAGE"/targets
echo "staged. Carry cu13.tar.xz alone in one call; wheels/ and targets/ in the next."
