#!/usr/bin/env python3
"""merge_tuning.py BUILTIN NEW: replace BUILTIN's entries (shape, dtype, bucket,
samples, GPU) with those of NEW (a `fusedsample export` of a partial re-tune), keep the
rest. Measurements of different runs are not compared: a re-tuned bucket's
entry is the new run's alone."""
import json
import sys

builtin_path, new_path = sys.argv[1], sys.argv[2]
builtin = json.load(open(builtin_path))
new = json.load(open(new_path))
key = lambda e: (e["gpu_name"], e["vocab"], e["d_model"], e["dtype"], e["bucket"], e.get("samples", "1"))
fresh = {key(e): e for e in new["entries"]}
replaced = 0
entries = []
for e in builtin["entries"]:
    if key(e) in fresh:
        entries.append(fresh.pop(key(e)))
        replaced += 1
    else:
        entries.append(e)
entries += fresh.values()
builtin["entries"] = entries
builtin["environment"] = new["environment"]
with open(builtin_path, "w") as f:
    json.dump(builtin, f, indent=2)
    f.write("\n")
print(f"{builtin_path}: {replaced} entries replaced, {len(fresh)} added")
