"""The block-sparse pattern of halo's HashedBlockSparse (examples/pallas_dsd),
so that the JAX kernels run on the same matrix as halo's."""

import math

import numpy as np

_M64 = (1 << 64) - 1


def splitmix64(x):
    """SplitMix64's output function at state x (Python ints)."""
    z = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def splitmix64_np(x):
    """splitmix64 over a numpy uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def hashed_block_sparse(m, k, bm, bk, p, seed):
    """Returns (row_idx, col_idx, blocks) as HashedBlockSparse builds them:
    the ceil(p * blocks) block numbers with the smallest splitmix64(seed + b),
    sorted row-major, and float32 values from splitmix64(seed ^ 0x5eed + e)."""
    gm, gk = m // bm, k // bk
    total = gm * gk
    n = max(1, min(total, math.ceil(p * total)))
    b = np.arange(total, dtype=np.uint64)
    h = splitmix64_np(np.uint64(seed) + b)
    order = np.lexsort((b, h))  # by hash, then by block number
    picked = np.sort(order[:n])
    row_idx = (picked // gk).astype(np.int32)
    col_idx = (picked % gk).astype(np.int32)
    e = np.arange(n * bm * bk, dtype=np.uint64)
    with np.errstate(over="ignore"):
        vals = splitmix64_np((np.uint64(seed) ^ np.uint64(0x5EED)) + e)
    blocks = ((vals >> np.uint64(40)).astype(np.float32) / np.float32(1 << 24)).reshape(n, bm, bk)
    return row_idx, col_idx, blocks


def row_ptr(row_idx, gm):
    """Block-CSR row pointers of blocks sorted by row."""
    ptr = np.zeros(gm + 1, dtype=np.int32)
    np.add.at(ptr, row_idx + 1, 1)
    return np.cumsum(ptr).astype(np.int32)


def heavy_rows_first(ptr, sbm, bm):
    """As halo's BlockCOO.HeavyRowsFirst: the output row blocks of bm rows
    by decreasing number of non-zero blocks in their block row (ptr: the
    block-CSR row pointers of blocks sbm high), ties in row order."""
    sub = sbm // bm
    work = np.repeat(np.diff(ptr), sub)
    return np.argsort(-work, kind="stable").astype(np.int32)


STORE_STEPS = 2  # what a block's store counts for, in steps (halo's storeSteps)


def schedule(ptr, col_idx, m, n, sbm, bk, bm, bn, step, programs):
    """As halo's BlockCOO.Schedule: the persistent DSD kernel's work lists,
    (prog_steps, step_a, step_y, step_out, prog_empty, empty) as lists of
    ints. Output block id i + j*rows in that order (i fastest) goes to the
    program that would be free first (its block row's non-zero blocks
    times the K parts, plus STORE_STEPS; ties to the lowest program);
    step_out marks a block's last step as -1-id; empty lists get one 0.
    More programs than output blocks become that many (as in halo)."""
    parts = bk // step
    rows, cols, sub = m // bm, n // bn, sbm // bm
    programs = min(programs, rows * cols)
    free = [0] * programs
    mine = [[] for _ in range(programs)]
    for j in range(cols):
        for i in range(rows):
            r = i // sub
            p = min(range(programs), key=lambda q: (free[q], q))
            free[p] += (int(ptr[r + 1]) - int(ptr[r])) * parts + STORE_STEPS
            mine[p].append(i + j * rows)
    prog_steps, prog_empty = [0], [0]
    step_a, step_y, step_out, empty = [], [], [], []
    for items in mine:
        for id_ in items:
            r = (id_ % rows) // sub
            if ptr[r] == ptr[r + 1]:
                empty.append(id_)
                continue
            for b in range(int(ptr[r]), int(ptr[r + 1])):
                for h in range(parts):
                    step_a.append(b * parts + h)
                    step_y.append(int(col_idx[b]) * bk + h * step)
                    step_out.append(id_)
            step_out[-1] = -1 - id_
        prog_steps.append(len(step_a))
        prog_empty.append(len(empty))
    return tuple(a or [0] for a in (prog_steps, step_a, step_y, step_out, prog_empty, empty))


if __name__ == "__main__":
    r, c, blk = hashed_block_sparse(64, 64, 8, 8, 0.1, 1)
    print("rows", list(r), "cols", list(c))
    print("first values", [float(v) for v in blk.reshape(-1)[:4]])
    print("splitmix64(1)", hex(splitmix64(1)))
