# pinprobe verify --compare-sdpa: time one decode shape through PyTorch's
# scaled_dot_product_attention, the way pinprobe times its probe (CUDA graph of many launches,
# K/V rotated across copies that together exceed the L2, CUDA events, median over rounds).
# Arguments: device head_dim kv_heads q_per_kv batch tokens rounds launches.
# Prints one JSON object on the last line of stdout.
import json
import statistics
import sys


def emit(obj):
    print(json.dumps(obj), flush=True)


try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    emit({"status": "skipped", "note": f"PyTorch is not importable ({type(e).__name__}: {e})"})
    sys.exit(0)

if not torch.cuda.is_available():
    emit({"status": "skipped", "note": "PyTorch sees no CUDA device"})
    sys.exit(0)

dev, d, kvh, qpk, batch, tokens, rounds, launches = map(int, sys.argv[1:9])
torch.cuda.set_device(dev)
props = torch.cuda.get_device_properties(dev)
l2 = getattr(props, "L2_cache_size", 60 << 20)
kv_bytes = 2 * batch * kvh * tokens * d * 2
copies = max(2, -(-3 * l2 // kv_bytes))
launches = -(-launches // copies) * copies
g = torch.Generator(device="cuda").manual_seed(0)
q = torch.randn(batch, kvh * qpk, 1, d, device="cuda", dtype=torch.bfloat16, generator=g)
ks = [torch.randn(batch, kvh, tokens, d, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(copies)]
vs = [torch.randn(batch, kvh, tokens, d, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(copies)]


def step(i):
    return F.scaled_dot_product_attention(q, ks[i % copies], vs[i % copies], enable_gqa=True)


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for i in range(copies + 2):
        step(i)
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()

mode = "cuda-graph"
try:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [step(i) for i in range(launches)]
    run = graph.replay
except Exception as e:  # noqa: BLE001
    mode = f"eager ({type(e).__name__} in graph capture)"

    def run():
        for i in range(launches):
            step(i)

run()
torch.cuda.synchronize()
samples = []
for _ in range(rounds):
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    run()
    b.record()
    b.synchronize()
    samples.append(a.elapsed_time(b) * 1000.0 / launches)

emit({
    "status": "measured",
    "median_us": statistics.median(samples),
    "samples_us": samples,
    "torch": torch.__version__,
    "mode": mode,
    "launches": launches,
    "copies": copies,
})
