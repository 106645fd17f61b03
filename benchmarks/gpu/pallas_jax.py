"""The Pallas kernels of halo's examples written with JAX Pallas (Triton
lowering), timed on a GPU side by side with XLA's dense programs, as
halo's Benchmark*OnPlugin benchmarks time halo's kernels.

Run on the GPU machine (see README.md beside this file):

    JAX_PALLAS_USE_MOSAIC_GPU=0 python3 pallas_jax.py [--size 8192] [--out DIR]

Each kernel is written as halo's examples write it (the GPU forms: one
program per output block), with the same block sizes; vector add and
matmul+GELU with num_warps 4 and num_stages 3 (halo's defaults), the DSD
and the masked matmul for each config of --dsd-configs / --masked-configs
(the syntax of halo's HALO_BENCH_CONFIGS: bm, bn, bk, warps, stages,
group, tiles), the same lists halo's benchmarks sweep. Each is checked against the dense program
before it is timed. Timing: one call of each, alternating, per iteration,
each call waited for (jax.block_until_ready); medians over the iterations,
and the median of the per-pair ratios, as halo's internal/pairbench does.
Prints one line per benchmark and writes results.json (and the lowered
StableHLO of each kernel, whose custom call holds JAX's Triton IR, to
lowered.txt) into --out when given.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pattern  # noqa: E402

PARAMS = pltriton.CompilerParams(num_warps=4, num_stages=3)


def params(warps, stages):
    return pltriton.CompilerParams(num_warps=warps, num_stages=stages)


def parse_configs(text):
    """Configs as halo's plugintest.Configs reads them: space-separated,
    each comma-separated key=value of bm, bn, bk, warps, stages, group,
    tiles, order (1: heavy rows first), programs (a persistent kernel)."""
    out = []
    for field in text.split():
        c = {}
        for kv in field.split(","):
            k, v = kv.split("=")
            if k not in ("bm", "bn", "bk", "warps", "stages", "group", "tiles", "order", "programs") or int(v) <= 0 or k == "order" and int(v) != 1:
                raise ValueError(f"config {field!r}: bad setting {kv!r}")
            c[k] = int(v)
        out.append(c)
    return out


def config_name(c):
    """halo's Config.String: bm128_bn128_bk64_w4_s3, parts not set left out."""
    keys = [("bm", "bm"), ("bn", "bn"), ("bk", "bk"), ("warps", "w"), ("stages", "s"), ("group", "g"), ("tiles", "t"), ("order", "o"), ("programs", "p")]
    parts = [f"{short}{c[k]}" for k, short in keys if k in c]
    return "_".join(parts) or "default"


def whole():
    """A BlockSpec for a whole-array ref (indexed inside the kernel)."""
    spec = getattr(pl, "no_block_spec", None)
    return spec if spec is not None else pl.BlockSpec()


def paired(base, base_args, kern, kern_args, iters):
    tb, tk = [], []
    for _ in range(iters):
        t0 = time.perf_counter()
        jax.block_until_ready(base(*base_args))
        t1 = time.perf_counter()
        jax.block_until_ready(kern(*kern_args))
        t2 = time.perf_counter()
        tb.append(t1 - t0)
        tk.append(t2 - t1)
    ratios = [b / k for b, k in zip(tb, tk)]
    return statistics.median(tb) * 1e3, statistics.median(tk) * 1e3, statistics.median(ratios)


def queued(base, base_args, kern, kern_args, rounds=10, n=20):
    """As Go's pairbench.RunQueued: rounds of n calls of base started back
    to back (JAX dispatches asynchronously), then waited for, then the
    same for kern; the medians of the times per call and of the per-round
    ratios, as {"dense_queued_ms", "kernel_queued_ms", "dense/kernel_queued"}."""
    tb, tk = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        jax.block_until_ready([base(*base_args) for _ in range(n)])
        t1 = time.perf_counter()
        jax.block_until_ready([kern(*kern_args) for _ in range(n)])
        t2 = time.perf_counter()
        tb.append((t1 - t0) / n)
        tk.append((t2 - t1) / n)
    return {"dense_queued_ms": statistics.median(tb) * 1e3, "kernel_queued_ms": statistics.median(tk) * 1e3,
            "dense/kernel_queued": statistics.median([b / k for b, k in zip(tb, tk)])}


class DoesNotFit(Exception):
    """A config the problem size cannot take (Go's plugintest.ErrDoesNotFit)."""


def check_close(got, want, tol, what):
    got = np.asarray(got, dtype=np.float32)
    want = np.asarray(want, dtype=np.float32)
    # not (diff <= tol): a NaN where a number is wanted fails, as in Go.
    bad = ~(np.abs(got - want) <= tol * np.maximum(1.0, np.abs(want)))
    bad &= ~(np.isnan(got) & np.isnan(want))
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise AssertionError(f"{what}: element {i}: {got.reshape(-1)[i]}, want {want.reshape(-1)[i]}")


# 1. Vector add: (2,) blocks over a (4,) grid, int32.
def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def pallas_add(x, y):
    spec = pl.BlockSpec((2,), lambda i: (i,))
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                          in_specs=[spec, spec], out_specs=spec, compiler_params=PARAMS, name="add")(x, y)


# 1b. Seed 000's templated matmul with GELU fused; K blocks unrolled.
def make_matmul(m, k, n, bm, bn, bk, dtype):
    def kernel(x_ref, y_ref, o_ref):
        acc = jnp.zeros((bm, bn), jnp.float32)
        for kb in range(k // bk):
            acc += jnp.dot(x_ref[:, kb * bk:(kb + 1) * bk], y_ref[kb * bk:(kb + 1) * bk, :],
                           preferred_element_type=jnp.float32)
        o_ref[...] = jax.nn.gelu(acc, approximate=True).astype(o_ref.dtype)

    def f(x, y):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((m, n), dtype), grid=(m // bm, n // bn),
            in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)), pl.BlockSpec((k, bn), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)), compiler_params=PARAMS, name="matmul")(x, y)
    return f


# 3. DSD, the GPU form: one program per output block loops over the
# non-zero blocks of its block row (block-CSR row pointers).
def sparse_row(i, sbm, bm):
    """As halo's sparseRow: the sparse block row of output rows i*bm ..
    i*bm+bm-1, and their rows within its blocks."""
    if bm == sbm:
        return i, slice(None)
    sub = sbm // bm
    return i // sub, pl.ds((i % sub) * bm, bm)


def make_dsd(m, k, n, sbm, bk, bn, dtype, cparams=PARAMS, step=0, bm=0):
    """As halo's dsdRowKernel: with step (a divisor of bk, 0 for bk), K
    runs in parts of each block, one loop over (block, part) pairs; output
    blocks of bm rows (a divisor of the sparse blocks' height sbm, 0 for
    sbm)."""
    if step and bk % step:
        raise ValueError(f"K step {step} must divide the blocks' width {bk}")
    bm = bm or sbm
    if sbm % bm:
        raise ValueError(f"{bm} output rows per program must divide the blocks' height {sbm}")
    parts = bk // (step or bk)

    def kernel(row_ptr_ref, col_idx_ref, blocks_ref, y_ref, o_ref):
        i, j = pl.program_id(0), pl.program_id(1)
        row, x_rows = sparse_row(i, sbm, bm)

        def body(t, acc):
            if parts == 1:
                b, x = t, blocks_ref[t, x_rows, :]
                y_row = col_idx_ref[b] * bk
            else:
                b, h = t // parts, (t % parts) * step
                x = blocks_ref[b, x_rows, pl.ds(h, step)]
                y_row = col_idx_ref[b] * bk + h
            yb = y_ref[pl.ds(y_row, step or bk), pl.ds(j * bn, bn)]
            return acc + jnp.dot(x, yb, preferred_element_type=jnp.float32)

        lo, hi = row_ptr_ref[row], row_ptr_ref[row + 1]
        if parts > 1:  # block indices in (block, part) pairs
            lo, hi = lo * parts, hi * parts
        acc = lax.fori_loop(lo, hi, body, jnp.zeros((bm, bn), jnp.float32))
        o_ref[...] = acc.astype(o_ref.dtype)

    def f(row_ptr, col_idx, blocks, y):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((m, n), dtype), grid=(m // bm, n // bn),
            in_specs=[whole(), whole(), whole(), whole()],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)), compiler_params=cparams, name="dsd_rows")(
                row_ptr, col_idx, blocks, y)
    return f


def dsd_tiling(sbm, bk, step, bm):
    """The K step and output rows of a DSD form (0: the sparse blocks'
    width and height), checked as halo's BuildDSDTiled checks them."""
    step = step or bk
    bm = bm or sbm
    if bk % step:
        raise ValueError(f"K step {step} must divide the blocks' width {bk}")
    if sbm % bm:
        raise ValueError(f"{bm} output rows per program must divide the blocks' height {sbm}")
    return step, bm


def make_dsd_tiles(m, k, n, sbm, bk, bn, dtype, cparams, step, tiles, bm=0, order=False):
    """As halo's dsdTilesKernel: program (i, g) computes output blocks
    (i, g*tiles) .. (i, g*tiles+tiles-1) in one loop over (block, non-zero
    block, K part), storing each block after its last product. With order
    (halo's DSDTiling.HeavyRowsFirst) grid axis 0 is a position p in the
    row blocks' order (an extra whole-array operand after col_idx, the
    rows with the most non-zero blocks first) and row block i is order[p]."""
    step, bm = dsd_tiling(sbm, bk, step, bm)
    if (n // bn) % tiles:
        raise ValueError(f"{tiles} output blocks per program must divide the {n // bn} block columns")
    parts = bk // step

    def kernel(row_ptr_ref, col_idx_ref, *refs):
        i, g = pl.program_id(0), pl.program_id(1)
        if order:
            order_ref, refs = refs[0], refs[1:]
            i = order_ref[i]
        blocks_ref, y_ref, o_ref = refs
        row, x_rows = sparse_row(i, sbm, bm)
        lo, hi = row_ptr_ref[row], row_ptr_ref[row + 1]
        per = (hi - lo) * parts
        zeros = jnp.zeros((bm, bn), jnp.float32)
        rows = pl.ds(i * bm, bm)

        @pl.when(per == 0)
        def _():
            def zero(t, carry):
                o_ref[rows, pl.ds((g * tiles + t) * bn, bn)] = jnp.zeros((bm, bn), o_ref.dtype)
                return carry
            lax.fori_loop(0, tiles, zero, 0)

        def body(t, acc):
            r = t % per
            b = lo + r // parts
            h = (r % parts) * step
            cols = pl.ds((g * tiles + t // per) * bn, bn)
            x = blocks_ref[b, x_rows, pl.ds(h, step)]
            yb = y_ref[pl.ds(col_idx_ref[b] * bk + h, step), cols]
            acc = acc + jnp.dot(x, yb, preferred_element_type=jnp.float32)
            last = r == per - 1

            @pl.when(last)
            def _():
                o_ref[rows, cols] = acc.astype(o_ref.dtype)

            return jnp.where(last, zeros, acc)

        lax.fori_loop(0, per * tiles, body, zeros)

    grid = (m // bm, n // bn // tiles)

    def f(*args):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((m, n), dtype), grid=grid,
            in_specs=[whole() for _ in args], out_specs=whole(),
            compiler_params=cparams, name="dsd_tiles")(*args)
    return f


def make_dsd_persistent(m, k, n, sbm, bk, bn, dtype, cparams, step, programs, bm=0):
    """As halo's dsdPersistentKernel: `programs` programs, each running
    its part of pattern.schedule's work lists (six whole-array operands
    before the blocks) in one loop over K steps, storing an output block
    after its last step and starting the next from zeros. The reset is a
    lax.cond on the scalar (an scf.if yielding zeros or the sum, as halo's
    select on a scalar becomes once Triton folds it into the store's
    scf.if; a jnp.where broadcasts the condition first)."""
    step, bm = dsd_tiling(sbm, bk, step, bm)
    parts, rows = bk // step, m // bm

    def kernel(prog_steps, step_a, step_y, step_out, prog_empty, empty, blocks_ref, y_ref, o_ref):
        p = pl.program_id(0)

        def at(id_):
            i, j = id_ % rows, id_ // rows
            return i, pl.ds(i * bm, bm), pl.ds(j * bn, bn)

        def zero(e, carry):
            _, r, c = at(empty[e])
            o_ref[r, c] = jnp.zeros((bm, bn), o_ref.dtype)
            return carry
        lax.fori_loop(prog_empty[p], prog_empty[p + 1], zero, 0)
        zeros = jnp.zeros((bm, bn), jnp.float32)

        def body(st, acc):
            a, out = step_a[st], step_out[st]
            last = out < 0
            i, out_rows, out_cols = at(jnp.where(last, -out - 1, out))
            _, x_rows = sparse_row(i, sbm, bm)
            x = blocks_ref[a // parts, x_rows, pl.ds((a % parts) * step, step)]
            yb = y_ref[pl.ds(step_y[st], step), out_cols]
            acc = acc + jnp.dot(x, yb, preferred_element_type=jnp.float32)

            @pl.when(last)
            def _():
                o_ref[out_rows, out_cols] = acc.astype(o_ref.dtype)

            return lax.cond(last, lambda: zeros, lambda: acc)

        lax.fori_loop(prog_steps[p], prog_steps[p + 1], body, zeros)

    def f(*args):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((m, n), dtype), grid=(programs,),
            in_specs=[whole() for _ in args], out_specs=whole(),
            compiler_params=cparams, name="dsd_persistent")(*args)
    return f


# 4. Masked matmul, the GPU form: one program per output block; a zero
# block stores zeros, a non-zero one loops over K and multiplies by its
# distinct mask block.
def block_of(g0, g1, gm, gn, group):
    """As halo's Tiling.block: the output block of grid point (g0, g1);
    with a group, programs (launched g0 fastest) walk groups of group
    block rows column by column."""
    if not group:
        return g0, g1
    l = g0 + g1 * gm
    per = group * gn
    r = l % per
    return (l // per) * group + r % group, r // group


def make_masked(m, k, n, bm, bn, bk, dtype, cparams=PARAMS, group=0):
    gm, gn = m // bm, n // bn
    if group and gm % group:
        raise ValueError(f"group {group} must divide the {gm} block rows")

    def kernel(block_mask_ref, mask_idx_ref, x_ref, y_ref, mask_ref, o_ref):
        i, j = block_of(pl.program_id(0), pl.program_id(1), gm, gn, group)
        flag = block_mask_ref[i, j]

        @pl.when(flag != 0)
        def _():
            def body(kk, acc):
                xb = x_ref[:, pl.ds(kk * bk, bk)]
                yb = y_ref[pl.ds(kk * bk, bk), :]
                return acc + jnp.dot(xb, yb, preferred_element_type=jnp.float32)

            acc = lax.fori_loop(0, k // bk, body, jnp.zeros((bm, bn), jnp.float32))

            @pl.when(flag == 2)  # all ones: nothing to multiply
            def _():
                o_ref[...] = acc.astype(o_ref.dtype)

            @pl.when(flag == 1)
            def _():
                mblk = mask_ref[mask_idx_ref[i, j], :, :].astype(jnp.float32)
                o_ref[...] = (mblk * acc).astype(o_ref.dtype)

        @pl.when(flag == 0)
        def _():
            o_ref[...] = jnp.zeros((bm, bn), o_ref.dtype)

    def f(block_mask, mask_idx, x, y, mask_data):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((m, n), dtype), grid=(gm, gn),
            in_specs=[whole(), whole(),
                      pl.BlockSpec((bm, k), lambda a, b: (block_of(a, b, gm, gn, group)[0], 0)),
                      pl.BlockSpec((k, bn), lambda a, b: (0, block_of(a, b, gm, gn, group)[1])), whole()],
            out_specs=pl.BlockSpec((bm, bn), lambda a, b: block_of(a, b, gm, gn, group)),
            compiler_params=cparams, name="masked_matmul_blocks")(block_mask, mask_idx, x, y, mask_data)
    return f


def lower_triangle_blocks(size, bm, bn):
    """block_mask, mask_idx (gm, gn) and the distinct mask blocks of the
    lower-triangular mask in bm x bn blocks: each distinct non-zero
    block once (those crossing the diagonal, then all ones), as halo's
    sparsifyMask keeps them; block_mask is 0 (zeros), 1 or 2 (all ones)."""
    gm, gn = size // bm, size // bn
    full = np.tril(np.ones((size, size), np.float32))
    block_mask = np.zeros((gm, gn), np.int32)
    mask_idx = np.zeros((gm, gn), np.int32)
    distinct, index = [], {}
    for i in range(gm):
        for j in range(gn):
            blk = full[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn]
            if not blk.any():
                continue
            key = blk.tobytes()
            if key not in index:
                index[key] = len(distinct)
                distinct.append(blk)
            block_mask[i, j] = 2 if blk.all() else 1
            mask_idx[i, j] = index[key]
    data = np.stack(distinct)
    n2 = 1 << max(0, (len(data) - 1).bit_length())
    return block_mask, mask_idx, np.pad(data, ((0, n2 - len(data)), (0, 0), (0, 0)))


def pow2_pad(a):
    """Pads a 1-D index array to a power-of-two length (Triton tensors
    have power-of-two sizes; the padding is never read)."""
    n = 1 << max(0, (len(a) - 1).bit_length())
    return np.pad(a, (0, n - len(a)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--matmul-size", type=int, default=4096)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--bk", type=int, default=64)
    ap.add_argument("--dsd-block", type=int, default=0, help="the DSD's sparse blocks (0: --block)")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--dsd-configs", default="", help="as HALO_BENCH_CONFIGS (bm: output rows, a divisor of the block; bn, bk: K step within a block, warps, stages, tiles, order=1: heavy rows first)")
    ap.add_argument("--masked-configs", default="", help="as HALO_BENCH_CONFIGS (bm, bn, bk, warps, stages, group)")
    ap.add_argument("--attn-seq", type=int, default=2048, help="the attention's sequence length (16 heads of 64)")
    ap.add_argument("--attn-block", type=int, default=64, help="the attention's query and key blocks")
    ap.add_argument("--out", default="")
    ap.add_argument("--kernels", default="xla_add,add,matmul_gelu,dsd,masked_matmul,attention", help="which to run, comma-separated")
    a = ap.parse_args()
    bf16 = jnp.bfloat16
    print("jax", jax.__version__, "devices", jax.devices(), flush=True)
    results, lowered = [], []

    def save():
        # After every result, and atomically: a step cut off by its time
        # limit, or a compiler that kills the process, keeps what was done.
        if not a.out:
            return
        os.makedirs(a.out, exist_ok=True)
        for name, text in (("results.json", json.dumps({"jax": jax.__version__, "device": str(jax.devices()[0]), "results": results}, indent=1)),
                           ("lowered.txt", "\n".join(lowered))):
            tmp = os.path.join(a.out, name + ".tmp")
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, os.path.join(a.out, name))

    def run(name, fn):
        t0 = time.perf_counter()
        try:
            r = fn()
            r["name"] = name
            r["seconds"] = round(time.perf_counter() - t0, 1)
            results.append(r)
            print("RESULT", json.dumps(r), flush=True)
        except DoesNotFit as e:  # as Go's ErrDoesNotFit: skipped, saying why
            results.append({"name": name, "skipped": str(e)})
            print("SKIPPED", name, e, flush=True)
        except Exception as e:  # report and go on with the next
            traceback.print_exc()
            results.append({"name": name, "error": f"{type(e).__name__}: {e}"})
            print("FAILED", name, e, flush=True)
        save()

    def add():
        x = jnp.arange(8, dtype=jnp.int32)
        y = jnp.arange(8, 16, dtype=jnp.int32)
        kern = jax.jit(pallas_add)
        dense = jax.jit(lambda x, y: x + y)
        lowered.append("== add\n" + kern.lower(x, y).as_text())
        np.testing.assert_array_equal(np.asarray(kern(x, y)), np.arange(8, 24, 2))
        d, k, r = paired(dense, (x, y), kern, (x, y), a.iters * 10)
        return {"xla_ms": d, "kernel_ms": k, "xla/kernel": r}

    def matmul():
        s = a.matmul_size
        kx, ky = jax.random.split(jax.random.key(6))
        x = jax.random.uniform(kx, (s, s), jnp.float32, -1, 1).astype(bf16)
        y = jax.random.uniform(ky, (s, s), jnp.float32, -1, 1).astype(bf16)
        kern = jax.jit(make_matmul(s, s, s, a.block, a.block, a.bk, bf16))
        dense = jax.jit(lambda x, y: jax.nn.gelu(x @ y, approximate=True))
        lowered.append("== matmul\n" + kern.lower(x, y).as_text())
        check_close(kern(x, y), dense(x, y), 1 / 32, "matmul+gelu")
        d, k, r = paired(dense, (x, y), kern, (x, y), a.iters)
        return {"size": s, "xla_ms": d, "kernel_ms": k, "xla/kernel": r}

    def attention():
        # JAX's own Pallas flash attention (jax.experimental.pallas.ops.gpu
        # .attention.mha: inputs (batch, seq, heads, dim); halo's heads are
        # its batch), causal, against the dense program in XLA; halo's
        # twin: examples/pallas_attention's BenchmarkAttentionOnPlugin.
        # Not yet run: written in a session without a GPU.
        from jax.experimental.pallas.ops.gpu import attention as jax_attention
        heads, seq, dim, blk = 16, a.attn_seq, 64, a.attn_block
        keys = jax.random.split(jax.random.key(12), 3)
        q, k, v = (jax.random.uniform(key, (heads, seq, 1, dim), jnp.float32, -1, 1).astype(bf16) for key in keys)
        scale = 1 / math.sqrt(dim)
        sizes = jax_attention.BlockSizes(block_q=blk, block_k=blk)
        kern = jax.jit(lambda q, k, v: jax_attention.mha(q, k, v, None, scale, True, sizes))

        def dense_fn(q, k, v):
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k, preferred_element_type=jnp.float32) * scale
            s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -jnp.inf)
            p = jax.nn.softmax(s, axis=-1).astype(v.dtype)
            return jnp.einsum("bhqk,bkhd->bqhd", p, v, preferred_element_type=jnp.float32).astype(v.dtype)
        dense = jax.jit(dense_fn)
        lowered.append("== attention\n" + kern.lower(q, k, v).as_text())
        check_close(kern(q, k, v), dense(q, k, v), 1 / 32, "attention")
        d, kt, r = paired(dense, (q, k, v), kern, (q, k, v), a.iters)
        out = {"seq": seq, "block": blk, "xla_ms": d, "kernel_ms": kt, "xla/kernel": r}
        out.update(queued(dense, (q, k, v), kern, (q, k, v)))
        return out

    def dsd_configs():
        s, blk = a.size, a.dsd_block or a.block
        row_idx, col_idx, blocks = pattern.hashed_block_sparse(s, s, blk, blk, 0.1, 1)
        ptr = pattern.row_ptr(row_idx, s // blk)
        y = jax.random.uniform(jax.random.key(0), (s, s), jnp.float32).astype(bf16)
        # Whole-array operands padded to power-of-two lengths (never read
        # past the real blocks) in case the lowering wants them so.
        nb2 = 1 << max(0, (len(blocks) - 1).bit_length())
        blocks_d = jnp.asarray(np.pad(blocks, ((0, nb2 - len(blocks)), (0, 0), (0, 0)))).astype(bf16)
        dense_x = np.zeros((s, s), np.float32)
        for b, (r, c) in enumerate(zip(row_idx, col_idx)):
            dense_x[r * blk:(r + 1) * blk, c * blk:(c + 1) * blk] = blocks[b]
        x = jnp.asarray(dense_x).astype(bf16)
        dense = jax.jit(lambda x, y: x @ y)
        want = dense(x, y)
        args = (jnp.asarray(pow2_pad(ptr)), jnp.asarray(pow2_pad(col_idx)), blocks_d, y)
        configs = parse_configs(a.dsd_configs or f"bn={blk},bk={blk // 4},warps=4,stages=6")

        def dsd_name(c):
            # as BenchmarkDSDOnPlugin: sparse blocks other than 128 wide
            # name themselves (two block sizes' sweeps in one summary)
            return config_name(c) if blk == 128 else f"blk{blk}_{config_name(c)}"
        for c in configs:
            bn = c.get("bn", blk)

            def one(c=c, bn=bn):
                tiles, bm = c.get("tiles", 1), c.get("bm", blk)
                if s % bn or (s // bn) % tiles or blk % bm:
                    raise DoesNotFit(f"{tiles} output blocks of {bm}x{bn} per program at {s}^3, sparse blocks of {blk}")
                cp = params(c.get("warps", 4), c.get("stages", 3))
                kargs = args
                if c.get("order"):
                    rows_first = pattern.heavy_rows_first(ptr, blk, bm)
                    kargs = args[:2] + (jnp.asarray(pow2_pad(rows_first)),) + args[2:]
                if c.get("programs"):
                    if tiles > 1 or c.get("order"):
                        raise ValueError("a persistent kernel takes neither tiles nor order")
                    sched = pattern.schedule(ptr, col_idx, s, s, blk, blk, bm, bn, c.get("bk", blk), c["programs"])
                    kargs = tuple(jnp.asarray(pow2_pad(np.asarray(v, np.int32))) for v in sched) + args[2:]
                    programs = len(sched[0]) - 1  # at most one an output block
                    kern = jax.jit(make_dsd_persistent(s, s, s, blk, blk, bn, bf16, cp, c.get("bk", 0), programs,
                                                       c.get("bm", 0)))
                elif tiles > 1 or c.get("order"):
                    kern = jax.jit(make_dsd_tiles(s, s, s, blk, blk, bn, bf16, cp, c.get("bk", 0), tiles, c.get("bm", 0),
                                                  order=bool(c.get("order"))))
                else:
                    kern = jax.jit(make_dsd(s, s, s, blk, blk, bn, bf16, cp, c.get("bk", 0), c.get("bm", 0)))
                lowered.append(f"== dsd/{dsd_name(c)}\n" + kern.lower(*kargs).as_text())
                check_close(kern(*kargs), want, 1 / 64, "dsd")
                d, k, r = paired(dense, (x, y), kern, kargs, a.iters)
                return {"size": s, "block": blk, "blocks": int(len(row_idx)), "of": (s // blk) ** 2,
                        "xla_dense_ms": d, "kernel_ms": k, "dense/kernel": r, **queued(dense, (x, y), kern, kargs)}
            run("dsd/" + dsd_name(c), one)

    def masked_configs():
        s, blk = a.size, a.block
        kx, ky = jax.random.split(jax.random.key(1))
        x = jax.random.uniform(kx, (s, s), jnp.float32).astype(bf16)
        y = jax.random.uniform(ky, (s, s), jnp.float32).astype(bf16)
        dense = jax.jit(lambda x, y: x @ y)
        want = np.tril(np.ones((s, s), np.float32)) * np.asarray(dense(x, y), np.float32)
        group = next(g for g in (8, 4, 2, 1) if (s // blk) % g == 0)
        configs = parse_configs(a.masked_configs or f"bm={blk},bn={2 * blk},bk={a.bk},warps=8,stages=3,group={group}")
        for c in configs:
            def one(c=c):
                bm, bn, bk = c.get("bm", blk), c.get("bn", blk), c.get("bk", a.bk)
                block_mask, mask_idx, mask_data = lower_triangle_blocks(s, bm, bn)
                kern = jax.jit(make_masked(s, s, s, bm, bn, bk, bf16, params(c.get("warps", 4), c.get("stages", 3)), c.get("group", 0)))
                args = (jnp.asarray(block_mask), jnp.asarray(mask_idx), x, y, jnp.asarray(mask_data).astype(bf16))
                lowered.append(f"== masked_matmul/{config_name(c)}\n" + kern.lower(*args).as_text())
                check_close(kern(*args), want, 1 / 64, "masked")
                d, k, r = paired(dense, (x, y), kern, args, a.iters)
                return {"size": s, "bm": bm, "bn": bn, "bk": bk, "xla_dense_ms": d, "kernel_ms": k, "dense/kernel": r,
                        **queued(dense, (x, y), kern, args)}
            run("masked_matmul/" + config_name(c), one)

    def xla_add(dims):
        # What halo's BenchmarkAwaitOnPlugin times: one f32 add, dispatched
        # and waited for (the dispatch and synchronization cost).
        x = jnp.zeros(dims, jnp.float32)
        f = jax.jit(lambda a, b: a + b)
        jax.block_until_ready(f(x, x))
        ts = []
        for _ in range(a.iters * (10 if len(dims) == 1 else 1)):
            t0 = time.perf_counter()
            jax.block_until_ready(f(x, x))
            ts.append(time.perf_counter() - t0)
        return {"kernel_ms": statistics.median(ts) * 1e3}

    wanted = set(a.kernels.split(","))
    if "xla_add" in wanted:
        run("xla_add/4", lambda: xla_add((4,)))
        run("xla_add/8192x4096", lambda: xla_add((8192, 4096)))
    if "add" in wanted:
        run("add", add)
    for name, setup in (("dsd", dsd_configs), ("masked_matmul", masked_configs)):
        if name not in wanted:
            continue
        try:
            setup()
        except Exception as e:  # the shared setup failed: report and go on
            traceback.print_exc()
            results.append({"name": name, "error": f"setup: {type(e).__name__}: {e}"})
            print("FAILED", name, e, flush=True)
            save()
    if "attention" in wanted:
        run("attention", attention)
    # Last: its kernel compiles for half a minute.
    if "matmul_gelu" in wanted:
        run("matmul_gelu", matmul)
    save()
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
