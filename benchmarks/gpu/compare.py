"""Puts halo's and JAX's timings of the same kernels side by side.

    python3 compare.py OUT_DIR

reads OUT_DIR/bench.log (halo's Benchmark*OnPlugin lines, one per config
of a sweep: BenchmarkDSDOnPlugin/bn128_w4_s3) and OUT_DIR/jax/results.json
(pallas_jax.py: dsd/bn128_w4_s3; and jax2/, run.sh's second DSD sweep) and prints a Markdown table: each kernel
and config's median time on both sides, halo/JAX (the issue's goal: at
most 1.05), and each side's speedup over its dense program; then, per
kernel, each side's fastest config. Where a side has several counts of
one benchmark, the median of their medians is used.
"""

import json
import os
import re
import statistics
import sys

# pallas_jax.py's names -> halo's benchmarks.
PAIRS = {
    "add": "BenchmarkAddOnPlugin",
    "matmul_gelu": "BenchmarkMatmulGeluOnPlugin",
    "dsd": "BenchmarkDSDOnPlugin",
    "masked_matmul": "BenchmarkMaskedMatmulOnPlugin",
    "attention": "BenchmarkAttentionOnPlugin",
}


def halo_results(path):
    """(kernel, config) -> {metric: [values over counts]}."""
    out = {}
    if not os.path.exists(path):
        return out
    back = {v: k for k, v in PAIRS.items()}
    for line in open(path):
        if not line.startswith("Benchmark"):
            continue
        fields = line.split()
        name = re.sub(r"-\d+$", "", fields[0])
        bench, _, config = name.partition("/")
        if bench not in back:
            continue
        # after the name and the iteration count: value unit pairs (a
        # parent benchmark's header line, which only logs, has none)
        rest = fields[2:]
        for value, unit in zip(rest[0::2], rest[1::2]):
            try:
                v = float(value)
            except ValueError:
                continue
            out.setdefault((back[bench], config), {}).setdefault(unit, []).append(v)
    return out


def jax_results(path, log):
    """(kernel, config) -> result dict, from results.json, else (missing
    or cut short) from the RESULT / FAILED / SKIPPED lines of jax.log."""
    results = None
    if os.path.exists(path):
        try:
            results = json.load(open(path))["results"]
        except (ValueError, KeyError, TypeError) as e:
            print(f"(results.json unreadable: {e}; reading jax.log)")
    if results is None and os.path.exists(log):
        results = []
        for line in open(log, errors="replace"):
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "RESULT":
                try:
                    results.append(json.loads(rest))
                except ValueError:
                    pass
            elif word in ("FAILED", "SKIPPED"):
                name, _, msg = rest.partition(" ")
                results.append({"name": name, "error" if word == "FAILED" else "skipped": msg})
    out = {}
    for r in results or []:
        kernel, _, config = r.get("name", "").partition("/")
        out[(kernel, config)] = r
    return out


def cell(text, n=120):
    """text as a Markdown table cell: its first line, at most n characters,
    bars escaped."""
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    if len(line) > n:
        line = line[:n] + "…"
    return line.replace("|", "\\|")


def dispatch_rows(bench_log, jax):
    """halo's BenchmarkAwaitOnPlugin (an f32 add, dispatched and waited
    for: callback and blocking waits) beside JAX's xla_add/<dims>."""
    halo = {}
    if os.path.exists(bench_log):
        for line in open(bench_log):
            if line.startswith("BenchmarkAwaitOnPlugin/"):
                fields = line.split()
                dims = re.sub(r"-\d+$", "", fields[0]).split("/", 1)[1]
                rest = fields[2:]
                halo[dims] = {u: float(v) for v, u in zip(rest[0::2], rest[1::2]) if re.match(r"^[0-9.e+-]+$", v)}
    rows = []
    for dims in sorted(set(halo) | {k[1] for k in jax if k[0] == "xla_add"}):
        h, j = halo.get(dims, {}), jax.get(("xla_add", dims), {})
        hb, hc, jk = h.get("blocking-ms"), h.get("callback-ms"), j.get("kernel_ms")
        rows.append(f"| add f32[{dims}] | {fmt(hb)} | {fmt(hc)} | {fmt(jk)} | {fmt(hb / jk if hb and jk else None, '{:.3f}')} |")
    if rows:
        rows = ["| program | halo, blocking wait (ms) | halo, callback wait (ms) | JAX (ms) | halo blocking / JAX |",
                "|---|---|---|---|---|"] + rows
    return rows


def fmt(x, spec="{:.4g}"):
    return spec.format(x) if x is not None else "—"


def main(out_dir):
    halo = halo_results(os.path.join(out_dir, "bench.log"))
    jax = jax_results(os.path.join(out_dir, "jax", "results.json"), os.path.join(out_dir, "jax.log"))
    # run.sh's second DSD sweep (HALO_DSD_BLOCK2), when there was one
    jax.update(jax_results(os.path.join(out_dir, "jax2", "results.json"), os.path.join(out_dir, "jax2.log")))
    rows = ["| kernel | config | halo kernel (ms) | JAX kernel (ms) | halo / JAX | halo: dense / kernel | JAX: dense / kernel "
            "| halo queued (ms) | JAX queued (ms) | halo: dense / kernel, queued | JAX: dense / kernel, queued |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    best = {}
    for key in sorted((set(halo) | set(jax)) - {k for k in jax if k[0] == "xla_add"}, key=lambda k: (list(PAIRS).index(k[0]) if k[0] in PAIRS else 99, k[1])):
        h, j = halo.get(key, {}), jax.get(key, {})
        hk = statistics.median(h["kernel-ms"]) if "kernel-ms" in h else None
        hr = statistics.median(h["dense/kernel"]) if "dense/kernel" in h else None
        jk = j.get("kernel_ms")
        jr = j.get("dense/kernel", j.get("xla/kernel"))
        ratio = hk / jk if hk is not None and jk else None
        note = f" ({cell(j['error'])})" if "error" in j else f" (skipped: {cell(j['skipped'])})" if "skipped" in j else ""
        # calls queued back to back (pairbench.RunQueued, queued() in
        # pallas_jax.py): the programs' own time
        hq = statistics.median(h["kernel-queued-ms"]) if "kernel-queued-ms" in h else None
        hqr = statistics.median(h["dense/kernel-queued"]) if "dense/kernel-queued" in h else None
        jq, jqr = j.get("kernel_queued_ms"), j.get("dense/kernel_queued")
        rows.append(f"| {key[0]}{note} | {key[1] or '—'} | {fmt(hk)} | {fmt(jk)} | {fmt(ratio, '{:.3f}')} | {fmt(hr, '{:.3f}')} | {fmt(jr, '{:.3f}')} "
                    f"| {fmt(hq)} | {fmt(jq)} | {fmt(hqr, '{:.3f}')} | {fmt(jqr, '{:.3f}')} |")
        b = best.setdefault(key[0], {})
        if hk is not None and ("halo" not in b or hk < b["halo"][1]):
            b["halo"] = (key[1], hk, hr)
        if jk is not None and ("jax" not in b or jk < b["jax"][1]):
            b["jax"] = (key[1], jk, jr)
    print("\n".join(rows))
    print()
    print("| kernel | halo's fastest config | ms | dense / kernel | JAX's fastest config | ms | dense / kernel | halo / JAX (fastest) |")
    print("|---|---|---|---|---|---|---|---|")
    for kernel, b in best.items():
        h, j = b.get("halo", (None, None, None)), b.get("jax", (None, None, None))
        ratio = h[1] / j[1] if h[1] is not None and j[1] else None
        print(f"| {kernel} | {h[0] or '—'} | {fmt(h[1])} | {fmt(h[2], '{:.3f}')} | {j[0] or '—'} | {fmt(j[1])} | {fmt(j[2], '{:.3f}')} | {fmt(ratio, '{:.3f}')} |")
    rows = dispatch_rows(os.path.join(out_dir, "bench.log"), jax)
    if rows:
        print()
        print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-out")
