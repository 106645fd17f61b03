"""Puts halo's and JAX's timings of the same kernels side by side.

    python3 compare.py OUT_DIR

reads OUT_DIR/bench.log (halo's Benchmark*OnPlugin lines) and
OUT_DIR/jax/results.json (pallas_jax.py) and prints a Markdown table:
each kernel's median time on both sides, halo/JAX (the issue's goal:
at most 1.05), and each side's speedup over its dense program. Where a
side has several counts, the median of their medians is used.
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
}


def halo_results(path):
    """Benchmark name -> {metric: [values over counts]}."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        if not line.startswith("Benchmark"):
            continue
        fields = line.split()
        name = re.sub(r"-\d+$", "", fields[0])
        metrics = out.setdefault(name, {})
        # after the name and the iteration count: value unit pairs
        rest = fields[2:]
        for value, unit in zip(rest[0::2], rest[1::2]):
            try:
                metrics.setdefault(unit, []).append(float(value))
            except ValueError:
                pass
    return out


def main(out_dir):
    halo = halo_results(os.path.join(out_dir, "bench.log"))
    jax_path = os.path.join(out_dir, "jax", "results.json")
    jax = {}
    if os.path.exists(jax_path):
        for r in json.load(open(jax_path))["results"]:
            jax[r["name"]] = r
    rows = ["| kernel | halo kernel (ms) | JAX kernel (ms) | halo / JAX | halo: dense / kernel | JAX: dense / kernel |",
            "|---|---|---|---|---|---|"]
    for jname, hname in PAIRS.items():
        h = halo.get(hname, {})
        j = jax.get(jname, {})
        hk = statistics.median(h["kernel-ms"]) if "kernel-ms" in h else None
        hr = statistics.median(h["dense/kernel"]) if "dense/kernel" in h else None
        jk = j.get("kernel_ms")
        jr = j.get("dense/kernel", j.get("xla/kernel"))

        def fmt(x, spec="{:.4g}"):
            return spec.format(x) if x is not None else "—"

        ratio = hk / jk if hk is not None and jk else None
        note = f" ({j['error']})" if "error" in j else ""
        rows.append(f"| {jname}{note} | {fmt(hk)} | {fmt(jk)} | {fmt(ratio, '{:.3f}')} | {fmt(hr, '{:.3f}')} | {fmt(jr, '{:.3f}')} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-out")
