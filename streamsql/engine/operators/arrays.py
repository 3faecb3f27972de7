"""Array building blocks for operators that process a whole batch at once (numpy only).

- :class:`GroupedSearch`: ``searchsorted`` inside groups laid out one after another, each
  non-decreasing (rows of a partition in arrival order).
- :func:`range_min`: the minimum of ``a[lo:hi+1]`` for many ranges at once.
- :func:`segmented_accumulate`: running float sums restarted at given points, computed in the
  same order as a Python loop, so every partial sum is bit-identical to one.
- :func:`ranges`: every position of many ranges ``[lo, hi]``, and the range each belongs to.
"""
from __future__ import annotations

import numpy as np

I64_MAX = np.iinfo(np.int64).max
_LIMIT = 1 << 62


class GroupedSearch:
    """``searchsorted`` over values that are non-decreasing within each group, the groups stored
    one after another in increasing group id. A query (group, value) finds a position inside that
    group's run (its first position for values below the group's minimum, one past its last
    for values above its maximum)."""

    def __init__(self, gid: np.ndarray, vals: np.ndarray):
        self.n = len(vals)
        if self.n == 0:
            self.keys = np.zeros(0, np.int64)
            self.lo_v = self.hi_v = 0
            self.span = 1
            return
        self.lo_v, self.hi_v = int(vals.min()), int(vals.max())
        self.span = self.hi_v - self.lo_v + 3
        if (int(gid.max()) + 1) * self.span >= _LIMIT:
            raise OverflowError("grouped search keys do not fit 63 bits")
        self.keys = gid.astype(np.int64) * self.span + (vals.astype(np.int64) - self.lo_v)

    def search(self, gid: np.ndarray, vals: np.ndarray, side: str = "left") -> np.ndarray:
        if self.n == 0:
            return np.zeros(len(vals), np.int64)
        v = np.clip(vals.astype(np.int64), self.lo_v - 1, self.hi_v + 1)
        return np.searchsorted(self.keys, gid.astype(np.int64) * self.span + (v - self.lo_v), side=side)


def _sparse(a: np.ndarray, levels: int) -> list[np.ndarray]:
    """``t[k][i] = min(a[i : i + 2**k])`` for k < levels (padded with I64_MAX at the end)."""
    t = [a]
    for k in range(1, levels):
        h = 1 << (k - 1)
        prev = t[-1]
        nxt = prev.copy()
        nxt[:-h] = np.minimum(prev[:-h], prev[h:])
        t.append(nxt)
    return t


def _query(t: list[np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min over [lo, hi] (lo <= hi) from a sparse table with enough levels."""
    length = hi - lo + 1
    k = np.zeros(len(lo), np.int64)
    if len(lo):
        k = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
        # guard against rounding in log2 for exact powers of two
        k = np.where((1 << (k + 1)) <= length, k + 1, k)
        k = np.where((1 << k) > length, k - 1, k)
    out = np.full(len(lo), I64_MAX, np.int64)
    for lev in np.unique(k):
        sel = k == lev
        tab = t[int(lev)]
        out[sel] = np.minimum(tab[lo[sel]], tab[hi[sel] - (1 << int(lev)) + 1])
    return out


def range_min(a: np.ndarray, lo: np.ndarray, hi: np.ndarray, block: int = 32) -> np.ndarray:
    """``min(a[lo[i] : hi[i] + 1])`` for every i with ``lo[i] <= hi[i]`` (I64_MAX elsewhere).
    Blocks of ``block`` values: prefix and suffix minima inside blocks, a sparse table over the
    block minima for whole blocks in between, and a short sparse table for ranges inside one
    block; memory O(n)."""
    a = np.asarray(a, np.int64)
    lo = np.asarray(lo, np.int64)
    hi = np.asarray(hi, np.int64)
    out = np.full(len(lo), I64_MAX, np.int64)
    ok = lo <= hi
    if not ok.any():
        return out
    n = len(a)
    nb = (n + block - 1) // block
    pad = np.full(nb * block, I64_MAX, np.int64)
    pad[:n] = a
    blk = pad.reshape(nb, block)
    pre = np.minimum.accumulate(blk, axis=1).ravel()
    suf = np.minimum.accumulate(blk[:, ::-1], axis=1)[:, ::-1].ravel()
    l, h = lo[ok], hi[ok]
    bl, bh = l // block, h // block
    res = np.empty(len(l), np.int64)
    same = bl == bh
    if same.any():
        levels = int(np.log2(block)) + 1
        small = _sparse(pad, levels)
        res[same] = _query(small, l[same], h[same])
    cross = ~same
    if cross.any():
        lc, hc = l[cross], h[cross]
        r = np.minimum(suf[lc], pre[hc])
        b1, b2 = bl[cross] + 1, bh[cross] - 1
        mid = b1 <= b2
        if mid.any():
            bmin = blk.min(axis=1)
            levels = max(1, int(np.floor(np.log2(max(nb, 1)))) + 1)
            big = _sparse(bmin, levels)
            r[mid] = np.minimum(r[mid], _query(big, b1[mid], b2[mid]))
        res[cross] = r
    out[ok] = res
    return out


def segmented_accumulate(vals: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums of ``vals`` restarted wherever ``starts`` is True (``starts[0]`` must be):
    ``out[i] = vals[i]`` at a start, else ``out[i - 1] + vals[i]``, in that order, exactly as a
    Python loop over floats would compute them. Long segments are accumulated one by one, short
    ones grouped by length (rounded up to a power of two) along the rows of zero-padded matrices."""
    vals = np.asarray(vals, np.float64)
    n = len(vals)
    out = np.empty(n, np.float64)
    if n == 0:
        return out
    first = np.flatnonzero(starts)
    if len(first) == 0 or first[0] != 0:
        raise ValueError("the first value must start a segment")
    length = np.diff(np.append(first, n))
    long = np.flatnonzero(length > 256)
    for i in long.tolist():             # few: one accumulate each
        a = int(first[i])
        out[a:a + int(length[i])] = np.add.accumulate(vals[a:a + int(length[i])])
    keep = length <= 256
    first, length = first[keep], length[keep]
    width = np.ones(len(length), np.int64)
    big = length > 1
    width[big] = 1 << np.ceil(np.log2(length[big])).astype(np.int64)
    width = np.where(width < length, width * 2, width)
    for w in np.unique(width):
        sel = np.flatnonzero(width == w)
        st, ln = first[sel], length[sel]
        cols = np.arange(int(w), dtype=np.int64)
        mask = cols[None, :] < ln[:, None]
        idx = st[:, None] + cols[None, :]
        m = np.where(mask, vals[np.where(mask, idx, 0)], 0.0)
        acc = np.add.accumulate(m, axis=1)
        out[idx[mask]] = acc[mask]
    return out


def ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All positions of the ranges ``[lo[i], hi[i]]`` (empty where ``hi < lo``), in order, and
    the range ``i`` each belongs to."""
    n = np.maximum(np.asarray(hi, np.int64) - np.asarray(lo, np.int64) + 1, 0)
    seg = np.repeat(np.arange(len(n), dtype=np.int64), n)
    if not len(seg):
        return np.zeros(0, np.int64), seg
    starts = np.cumsum(n) - n
    return np.arange(len(seg), dtype=np.int64) - starts[seg] + np.asarray(lo, np.int64)[seg], seg
