"""Hard-to-learn vs random over pools: one table from the output folders of
``examples/cartography_cogs.py`` (one folder per data seed), with every subset model's fit beside its
score, mean ± sd over the pairs, the paired differences and a paired t-test.

Run (one folder per ``--data-seed``)::

    python benchmarks/cartography_pools.py runs/i48/cmp10 runs/i48/cmp11 runs/i48/cmp12 --out summary.md

A pair is the two runs of one folder with the same model seed. A pair with a model under
``--fit-target`` (the issue's 90 %) is listed and flagged, and left out of the means unless
``--keep-unfitted``: a comparison of models that did not fit their rows says nothing of the subsets.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass


@dataclass
class Pair:
    folder: str
    data_seed: int | None
    seed: int
    map_fit: float | None
    hard: float
    hard_fit: float
    random: float
    random_fit: float
    fraction: str = ""
    hard_steps: int | None = None
    random_steps: int | None = None

    @property
    def difference(self) -> float:
        return self.hard - self.random

    def fitted(self, target: float) -> bool:
        return self.hard_fit >= target and self.random_fit >= target


def read_pairs(folder: str, *, metric: str = "gen", hard: str = "hard-to-learn", random: str = "random") -> list[Pair]:
    """The (hard, random) pairs of one output folder, by model seed.

    Raises ``ValueError`` naming the folder when its ``runs.json`` is missing or holds no such pair."""
    path = os.path.join(folder, "runs.json")
    if not os.path.isfile(path):
        raise ValueError(f"folders: {folder!r} holds no runs.json (an output folder of examples/cartography_cogs.py "
                         "that finished)")
    with open(path) as f:
        runs = json.load(f)
    meta_path = os.path.join(folder, "datamap.json")
    meta = json.load(open(meta_path)) if os.path.isfile(meta_path) else {}
    by_key: dict[tuple[str, int], dict[str, dict]] = {}  # (fraction, model seed): region -> run
    for r in runs:
        fraction, _, region = r["run"].partition("-")  # "33%-hard-to-learn"
        if region in (hard, random):
            if metric not in r:
                raise ValueError(f"metric: {metric!r} is not a score of {path} (accepted: "
                                 f"{', '.join(k for k, v in r.items() if isinstance(v, (int, float)))})")
            by_key.setdefault((fraction, int(r["seed"])), {})[region] = r
    pairs = [Pair(folder, meta.get("data_seed"), seed, (meta.get("datamap_model") or {}).get("fit"),
                  float(d[hard][metric]), float(d[hard]["fit"]), float(d[random][metric]), float(d[random]["fit"]),
                  fraction, d[hard].get("steps"), d[random].get("steps"))
             for (fraction, seed), d in sorted(by_key.items()) if hard in d and random in d]
    if not pairs:
        raise ValueError(f"folders: {folder!r} has no {hard!r} and {random!r} run with the same seed")
    return pairs


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample sd (n - 1; 0.0 for one value)."""
    n = len(values)
    m = sum(values) / n
    return m, (math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0)


def paired_t(differences: list[float]) -> tuple[float, float] | None:
    """The paired t statistic and its two-sided p (scipy's t distribution); None under 2 pairs or no spread."""
    n = len(differences)
    m, sd = mean_sd(differences)
    if n < 2 or sd == 0:
        return None
    from scipy.stats import t as student_t

    stat = m / (sd / math.sqrt(n))
    return stat, float(2 * student_t.sf(abs(stat), n - 1))


def summary(pairs: list[Pair], *, fit_target: float = 90.0, keep_unfitted: bool = False) -> dict:
    used = [p for p in pairs if keep_unfitted or p.fitted(fit_target)]
    if not used:
        raise ValueError(f"every pair has a model under --fit-target {fit_target:g} %; pass --keep-unfitted to "
                         "compare them anyway")
    diffs = [p.difference for p in used]
    test = paired_t(diffs)
    # pairs of one pool share its map: the pools, each its pairs' mean difference, are the independent units
    by_pool: dict = {}
    for p in used:
        by_pool.setdefault(p.data_seed if p.data_seed is not None else p.folder, []).append(p.difference)
    pool_diffs = [sum(v) / len(v) for v in by_pool.values()]
    pool_test = paired_t(pool_diffs)
    return {"pairs": len(used), "left_out": [(p.folder, p.seed) for p in pairs if p not in used],
            "hard": mean_sd([p.hard for p in used]), "random": mean_sd([p.random for p in used]),
            "difference": mean_sd(diffs), "hard_ahead": sum(d > 0 for d in diffs),
            "t": None if test is None else test[0], "p": None if test is None else test[1],
            "pools": {k: sum(v) / len(v) for k, v in by_pool.items()}, "pool_difference": mean_sd(pool_diffs),
            "pool_t": None if pool_test is None else pool_test[0], "pool_p": None if pool_test is None else pool_test[1]}


def table(pairs: list[Pair], s: dict, *, metric: str, fit_target: float) -> str:
    lines = [f"| data seed | subset | model seed | map fit | hard-to-learn: {metric} (fit; steps) | "
             f"random: {metric} (fit; steps) | hard - random |", "|---|---|---:|---:|---:|---:|---:|"]
    for p in pairs:
        flag = "" if p.fitted(fit_target) else f" (a model under {fit_target:g} %)"
        map_fit = "-" if p.map_fit is None else f"{p.map_fit:.1f} %"
        lines.append(f"| {p.data_seed if p.data_seed is not None else p.folder} | {p.fraction} | {p.seed} | {map_fit} | "
                     f"{p.hard:.1f} ({p.hard_fit:.1f}; {p.hard_steps or '-'}) | {p.random:.1f} ({p.random_fit:.1f}; "
                     f"{p.random_steps or '-'}) | {p.difference:+.1f}{flag} |")
    (hm, hs), (rm, rs), (dm, ds) = s["hard"], s["random"], s["difference"]
    lines.append(f"| mean ± sd ({s['pairs']} pairs) | | | | {hm:.1f} ± {hs:.1f} | {rm:.1f} ± {rs:.1f} | "
                 f"{dm:+.1f} ± {ds:.1f} |")
    test = "no paired t (under 2 pairs)" if s["t"] is None else f"paired t = {s['t']:.2f}, two-sided p = {s['p']:.3f}"
    lines += ["", f"Hard-to-learn ahead in {s['hard_ahead']} of {s['pairs']} pairs; {test}."]
    if len(s["pools"]) < s["pairs"]:  # several model seeds on a pool: the pools are the units
        (pm, ps), n = s["pool_difference"], len(s["pools"])
        per = ", ".join(f"{k}: {v:+.1f}" for k, v in s["pools"].items())
        pool_test = ("no t (under 2 pools)" if s["pool_t"] is None else
                     f"t = {s['pool_t']:.2f}, two-sided p = {s['pool_p']:.3f}")
        lines.append(f"Per pool (the mean difference of its pairs; pairs of a pool share its map): {per}; "
                     f"over the {n} pools {pm:+.1f} ± {ps:.1f}, {pool_test}.")
    if s["left_out"]:
        lines.append(f"Left out (a model under {fit_target:g} % fit): {s['left_out']}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="+", help="output folders of examples/cartography_cogs.py, one per data seed")
    p.add_argument("--metric", default="gen", help="the score compared: a key of runs.json (gen, dev, test, gen BLEU)")
    p.add_argument("--fit-target", type=float, default=90.0, help="a pair counts when both models fit this %% of "
                   "their own rows [90]")
    p.add_argument("--keep-unfitted", action="store_true", help="count pairs with a model under --fit-target too")
    p.add_argument("--out", help="also write the table here (markdown, written to a temp file then renamed)")
    a = p.parse_args(argv)
    if not 0 <= a.fit_target <= 100:
        p.error(f"--fit-target: {a.fit_target} is not a percentage (0..100)")
    try:
        pairs = [pair for folder in a.folders for pair in read_pairs(folder, metric=a.metric)]
        text = table(pairs, summary(pairs, fit_target=a.fit_target, keep_unfitted=a.keep_unfitted),
                     metric=a.metric, fit_target=a.fit_target)
    except ValueError as e:
        p.error(str(e))
    print(text)
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
