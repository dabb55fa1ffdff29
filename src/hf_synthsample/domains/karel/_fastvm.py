"""Compiled kernels (numba) for the I/O sampler: a batch of grids drawn, and one program run on all of them.

Imported by :mod:`.io` when numba is importable (the ``fast`` extra) and ``HF_SYNTHSAMPLE_NO_NUMBA`` is
unset. The grids are the words of ``io._uniform_numpy`` and the instruction set is ``interpreter._vm``'s,
so the rows are the same with or without numba; infinite loops simply run out of ticks (no cycle check).
"""

from __future__ import annotations

import os

if os.environ.get("HF_SYNTHSAMPLE_NO_NUMBA"):
    raise ImportError("numba disabled by HF_SYNTHSAMPLE_NO_NUMBA")

import numba  # noqa: E402  (ImportError when absent: io then uses the pure path)
import numpy as np  # noqa: E402

__all__ = ["run_batch", "uniform_batch", "draw_and_run", "MAX_BRANCH_POINTS"]

MAX_BRANCH_POINTS = 31  # coverage bits must fit an int64


@numba.njit(cache=True, nogil=True)
def run_batch(code, nslots, B, M, pos0, d0, rows, cols, T, X, D, noop_ok):  # pragma: no cover (compiled)
    k = pos0.shape[0]
    S = B.shape[0] // k
    n = code.shape[0]
    Mw = M.copy()
    ctr = np.zeros(max(nslots, 1), np.int64)
    out = np.zeros((k, 8), np.int64)
    valid = 0
    turn = np.array([0, 3, 1], np.int64)
    for j in range(k):
        pos = pos0[j]
        d = d0[j]
        pc = 0
        t = 0
        cov = 0
        status = 0
        while pc < n:
            op = code[pc, 0]
            a = code[pc, 1]
            b = code[pc, 2]
            pc += 1
            if op < 6 or op == 9 or (op == 8 and ctr[a] != 0):  # the ops that take a tick
                t += 1
                if t > T:
                    status = 3
                    break
            if op == 0:
                nxt = pos + D[d]
                w = B[nxt]
                if w:
                    status = w
                    break
                pos = nxt
            elif op == 1:
                d = (d + 3) & 3
            elif op == 2:
                d = (d + 1) & 3
            elif op == 3:
                m = Mw[pos]
                if m == 0:
                    status = 4
                    break
                Mw[pos] = m - 1
            elif op == 4:
                m = np.int64(Mw[pos]) + 1
                if m > X:
                    status = 5
                    break
                Mw[pos] = m
            elif op == 5 or op == 9:
                c = a & 7
                if c < 3:
                    v = B[pos + D[(d + turn[c]) & 3]] == 0
                else:
                    v = (Mw[pos] > 0) == (c == 3)
                if a & 8:
                    v = not v
                shift = (a >> 4) << 1
                if v:
                    cov |= 1 << shift
                else:
                    cov |= 2 << shift
                    pc = b
            elif op == 6:
                pc = a
            elif op == 8:
                if ctr[a]:
                    ctr[a] -= 1
                else:
                    pc = b
            else:
                ctr[a] = b
        if status == 0 and not noop_ok and pos == pos0[j] and d == d0[j]:
            if (Mw[j * S : j * S + S] == M[j * S : j * S + S]).all():
                status = 6  # a no-op
        if status == 0:
            out[valid] = (j, pos, d, cov, pos0[j], d0[j], rows[j], cols[j])
            valid += 1
    return out[:valid]


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(seed, i):  # pragma: no cover (compiled)
    z = seed + np.uint64(i + 1) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True, inline="always")
def _markers(lw, uniform_counts, table, cap):  # pragma: no cover (compiled)
    """The marker count of a cell from the low word ``lw``: uniform 1..9 (capped) or by ``table``."""
    return min(1 + ((lw * 9) >> 32), cap) if uniform_counts else table[lw & 255]


@numba.njit(cache=True, nogil=True)
def uniform_batch(seed, k, lo_size, side, wa, wb, ma, mb, uniform_counts, table, cap):  # pragma: no cover
    """``io._uniform_numpy`` in loops: the same grids from the same words (same integer and float ops),
    computing only the words of cells inside each grid."""
    seed = np.uint64(seed)
    W = side + 2
    S = (side + 2) * W
    per = 8 + side * side
    span = side - lo_size + 1
    B = np.full(k * S, 2, np.uint8)
    M = np.zeros(k * S, np.uint8)
    rows = np.empty(k, np.int64)
    cols = np.empty(k, np.int64)
    pos = np.empty(k, np.int64)
    dirs = np.empty(k, np.int64)
    sh32 = np.uint64(32)
    sh11 = np.uint64(11)
    low = np.uint64(0xFFFFFFFF)
    for j in range(k):
        o = j * per
        if span > 1:
            nr = lo_size + ((np.int64(_mix(seed, o) >> sh32) * span) >> 32)
            nc = lo_size + ((np.int64(_mix(seed, o + 1) >> sh32) * span) >> 32)
        else:
            nr = lo_size
            nc = lo_size
        wr = wa + np.int64(_mix(seed, o + 2) >> sh11) * 2.0**-53 * (wb - wa) if wb > wa else wa
        mr = ma + np.int64(_mix(seed, o + 3) >> sh11) * 2.0**-53 * (mb - ma) if mb > ma else ma
        t2 = wr + (1.0 - wr) * mr
        base = j * S
        for r in range(nr):
            for c in range(nc):
                word = _mix(seed, o + 8 + r * side + c)
                u = np.int64(word >> sh32) * 2.0**-32
                i = base + (r + 1) * W + c + 1
                if u < wr:
                    B[i] = 1
                else:
                    B[i] = 0
                    if u < t2:
                        M[i] = _markers(np.int64(word & low), uniform_counts, table, cap)
        hero = base + (((np.int64(_mix(seed, o + 4) >> sh32) * nr) >> 32) + 1) * W + ((np.int64(_mix(seed, o + 5) >> sh32) * nc) >> 32) + 1
        B[hero] = 0
        word = _mix(seed, o + 7)
        if np.int64(word >> sh32) * 2.0**-32 < mr:
            M[hero] = _markers(np.int64(word & low), uniform_counts, table, cap)
        else:
            M[hero] = 0
        rows[j] = nr
        cols[j] = nc
        pos[j] = hero
        dirs[j] = np.int64(_mix(seed, o + 6) >> sh32) >> 30
    return B, M, rows, cols, pos, dirs


@numba.njit(cache=True, nogil=True)
def draw_and_run(seed, k, ip, fp, table, code, nslots, D):  # pragma: no cover (compiled)
    """One uniform batch (``uniform_batch``) and a program run on it (``run_batch``) in one call;
    ``ip`` = (min size, max size, uniform counts, cap, tick budget, max markers, no-ops ok),
    ``fp`` = (wall ratio low, high, marker ratio low, high)."""
    B, M, rows, cols, pos, dirs = uniform_batch(seed, k, ip[0], ip[1], fp[0], fp[1], fp[2], fp[3], ip[2] != 0, table, ip[3])
    return B, M, run_batch(code, nslots, B, M, pos, dirs, rows, cols, ip[4], ip[5], D, ip[6] != 0)
