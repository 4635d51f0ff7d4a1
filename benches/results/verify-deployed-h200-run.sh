#!/bin/bash
# verify --deployed on the H200 (call 2; call 1 unpacked .stage/cu13.tar.xz into /root/site).
# Copied from .device/deployed.sh as run; .device/summary.py is benches/results/verify-deployed-h200-summary.py and
# .device/pinprobe-deployed the release binary built here (cargo build --release).
cd "$(dirname "$0")/.."
mkdir -p /tmp/res
exec > >(tee -a $OUT/log.txt) 2>&1
date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
test -f /root/site/nvidia_cutlass_dsl/cu13/lib/libcute_dsl_runtime.so || { echo "cu13 libraries missing (call 1 lost)"; exit 9; }
t0=$(date +%s.%N)
for w in .stage/wheels/*.whl; do python3 -m zipfile -e "$w" /root/site || exit 8; done
mkdir -p /root/targets && tar xJf .stage/targets/vllm-0.30.0-fixed.tar.xz -C /root/targets
echo "installed in $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
export PYTHONPATH=/root/site:/root/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
python3 -c "import torch, cuda.bindings, einops; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
P=.device/pinprobe-deployed
declare -A T=([shipped]=.stage/targets/vllm-0.30.0-cute.whl [fixed]=/root/targets/vllm-0.30.0-fixed [fa4]=.stage/targets/flash_attn_4-4.0.0b36-py3-none-any.whl)
for i in 1 2 3; do for v in fixed shipped fa4; do
  echo "== $v run $i: $P verify --deployed ${T[$v]} --format json --plot /tmp/res/$v-$i.svg"
  s=$(date +%s.%N)
  timeout 150 $P verify --deployed ${T[$v]} --format json --plot /tmp/res/$v-$i.svg > /tmp/res/$v-$i.json 2> /tmp/res/$v-$i.err; rc=$?
  e=$(date +%s.%N)
  grep -v "^\s*$" /tmp/res/$v-$i.err | grep -iv "warn" | tail -25
  python3 .device/summary.py /tmp/res/$v-$i.json $rc $s $e
  tar czf $OUT/res.tgz -C /tmp res
done; done
echo "== table run (fixed)"; timeout 150 $P verify --deployed ${T[fixed]} --plot $OUT/fixed.svg > $OUT/fixed-table.txt; echo "exit $?"; cat $OUT/fixed-table.txt
echo "== table run (shipped)"; timeout 150 $P verify --deployed ${T[shipped]} > $OUT/shipped-table.txt 2>/dev/null; echo "exit $?"; cat $OUT/shipped-table.txt
tar czf $OUT/res.tgz -C /tmp res
