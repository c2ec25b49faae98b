#!/usr/bin/env python3
"""Keeps the built-in tuning tables (autotune/builtin/*.json).

merge_tuning.py BUILTIN NEW: replace BUILTIN's entries (GPU, shape, dtype, bucket,
samples) with those of NEW (a `fusedsample export` of a partial re-tune), keep the
rest. Measurements of different runs are not compared: a re-tuned bucket's entry is
the new run's alone.

merge_tuning.py --reformat BUILTIN...: rewrite the files in the built-in form only.

The built-in form is what the library embeds (see cmake/embed_templates.cmake), so
it is kept small: every config on one line, no "params" (the reader takes them as
optional; they only restate the spec text), times rounded to 1 ns. Rounding never
changes which config of an entry ranks first (the library's TuningEntry::best:
interleaved measurements before flushed ones, then the median; checked before any
file is written)."""
import json
import sys


def key(e):
    return (e["gpu_name"], e["vocab"], e["d_model"], e["dtype"], e["bucket"], e.get("samples", "1"))


def fastest(e):
    """The config the library picks (TuningEntry::best: ranks_before)."""
    return min(e["configs"], key=lambda c: (c.get("method") != "interleaved", c["median_us"]))["spec"]


def slim(doc):
    for e in doc["entries"]:
        before = fastest(e)
        for c in e["configs"]:
            c.pop("params", None)
            for k in ("median_us", "floor_us"):
                if k in c:
                    c[k] = round(c[k], 3)
        if fastest(e) != before:
            sys.exit(f"rounding would change the winner of {key(e)}: {before} -> {fastest(e)}")
    return doc


def dumps(doc):
    """Two-space JSON, except that each config is one line."""
    head = {k: v for k, v in doc.items() if k != "entries"}
    lines = json.dumps(head, indent=2, ensure_ascii=False)[:-2] + ',\n  "entries": [\n'
    entries = []
    for e in doc["entries"]:
        fields = json.dumps({k: v for k, v in e.items() if k != "configs"}, ensure_ascii=False)[:-1]
        configs = ",\n".join("      " + json.dumps(c, ensure_ascii=False) for c in e["configs"])
        entries.append(f'    {fields}, "configs": [\n{configs}\n    ]}}')
    text = lines + ",\n".join(entries) + "\n  ]\n}\n"
    assert json.loads(text) == doc
    return text


def write_all(docs):
    """Slims and checks every (path, doc) first, then writes them: a failed check writes nothing."""
    texts = [(path, dumps(slim(doc))) for path, doc in docs]
    for path, text in texts:
        with open(path, "w") as f:
            f.write(text)


def merge(builtin_path, new_path):
    builtin = json.load(open(builtin_path))
    new = json.load(open(new_path))
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
    write_all([(builtin_path, builtin)])
    print(f"{builtin_path}: {replaced} entries replaced, {len(fresh)} added")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--reformat":
        write_all([(p, json.load(open(p))) for p in sys.argv[2:]])
        for p in sys.argv[2:]:
            print(f"{p}: rewritten")
    elif len(sys.argv) == 3:
        merge(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
