"""tests/dp/compare.py — compares two qkv checkpoints (safetensors) tensor by tensor, or two files
of per-step losses, within a relative tolerance; prints the largest difference found.
usage: compare.py checkpoints A B RTOL | compare.py losses A B RTOL (each step's difference relative to
its loss: float32 rounding scales with the value, and the first steps' losses are near ln(vocabulary))"""
import json
import struct
import sys


def tensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F32": "f", "F64": "d"}[info["dtype"]]
        begin, end = info["data_offsets"]
        out[name] = struct.unpack(f"<{(end - begin) // struct.calcsize(fmt)}{fmt}", data[begin:end])
    return out


kind, a, b, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
if kind == "checkpoints":
    ta, tb = tensors(a), tensors(b)
    if ta.keys() != tb.keys():
        sys.exit(f"different tensors: {sorted(ta.keys() ^ tb.keys())}")
    worst, where = 0.0, ""
    for name in ta:
        scale = max(max(abs(x) for x in ta[name]), 1e-30)
        diff = max(abs(x - y) for x, y in zip(ta[name], tb[name])) / scale
        if diff > worst:
            worst, where = diff, name
    print(f"checkpoints: {len(ta)} tensors, largest difference relative to each tensor's largest value {worst:.3g} ({where})")
    sys.exit(0 if worst <= tol else f"exceeds {tol}")
la = [float(x) for x in open(a)]
lb = [float(x) for x in open(b)]
if len(la) != len(lb) or not la:
    sys.exit(f"{len(la)} and {len(lb)} steps")
worst = max(abs(x - y) / max(abs(x), abs(y), 1e-30) for x, y in zip(la, lb))
print(f"losses: {len(la)} steps, largest difference relative to the loss {worst:.3g}")
sys.exit(0 if worst <= tol else f"exceeds {tol}")
