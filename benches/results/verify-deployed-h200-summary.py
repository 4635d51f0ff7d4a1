import json, sys
path, rc, s, e = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    r = json.load(open(path))
except Exception as ex:
    print(f"run rc={rc} wall={e-s:.1f}s: no JSON ({ex})"); sys.exit()
d = r.get("deployed") or {}
print(f"run rc={rc} wall={e-s:.1f}s verdict={r['verdict']} harness={d.get('harness_ms',0)/1e3:.1f}s torch={d.get('versions',{}).get('torch')} dsl={d.get('versions',{}).get('cutlass_dsl')}")
for sh in r["shapes"]:
    dep = sh.get("deployed") or {}
    ser = dep.get("series") or {}
    pts = {p["splits"]: p for p in ser.get("points", [])}
    pp = {p["splits"]: p for p in sh["probe"]["points"]}
    med = lambda p: p["latency_us"]["median"] if p and p.get("latency_us") else float("nan")
    sc = ser.get("scaling") or {}
    bs = sc.get("best_splits"); sp = sc.get("speedup") or {}
    pb = sh["probe"]["scaling"].get("best_splits")
    curve = " ".join(f"{k}:{med(p):.1f}" for k, p in sorted(pts.items()))
    print(f"  {sh['shape']}: deployed {dep.get('verdict')} {sp.get('median',0):.2f}x (CI {sp.get('ci_low',0):.2f}-{sp.get('ci_high',0):.2f}) best {bs} {med(pts.get(bs)):.1f}us | probe {sh['verdict']} best {pb} {med(pp.get(pb)):.1f}us | probe/deployed {dep.get('probe_over_deployed')} | maxerr {ser.get('max_rel_error')} | eager {dep.get('eager_call_us')} | {dep.get('mode')} | {dep.get('reasons')}")
    print(f"    deployed curve: {curve}")
    print(f"    probe curve: " + " ".join(f"{k}:{med(p):.1f}" for k, p in sorted(pp.items())))
