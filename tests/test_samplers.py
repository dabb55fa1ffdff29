"""Structural samplers: UAT, CMaxEnt (against the naive greedy), hybrid, uniform, bad input."""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st_

from hf_synthsample import structure as st
from hf_synthsample.sampling import CMaxEntSampler, HybridSampler, UATSampler, UniformSampler
from hf_synthsample.sampling.cmaxent import reference_greedy
from hf_synthsample.sampling.structural import uat_order


# ---------------------------------------------------------------------- hand-known cases


def test_cmaxent_hand_known_case():
    # rows 0, 1 identical; the first pick is any row with the highest single-row entropy (row 3:
    # 2 atoms + 2 compounds, H = 2 log 2); then the row adding the most new mass evenly
    ds = Dataset.from_dict(
        {
            "atoms": [["a"], ["a"], ["b"], ["a", "c"]],
            "compounds": [["x"], ["x"], ["y"], ["x", "z"]],
        }
    )
    s = CMaxEntSampler(seed=0)
    idx = s.indices(ds, 2)
    assert s.order_[0] == 3
    # after row 3 (atoms a, c; compounds x, z) adding row 2 (b, y) gives 3 equal counts: H = 2 log 3
    assert idx.tolist() == [2, 3]


def test_uat_hand_known_first_draw():
    # weights p^-1: template a (3 rows, p = 3/4) rows weigh 4/3 each, template b (1 row) weighs 4:
    # the first draw is b with probability 4 / (3 * 4/3 + 4) = 1/2
    firsts = [uat_order(["a", "a", "a", "b"], -1.0, 1, seed)[0] for seed in range(4000)]
    assert abs(np.mean(np.asarray(firsts) == 3) - 0.5) < 0.03


# ---------------------------------------------------------------------- CMaxEnt == naive greedy

labels = st_.sampled_from(["a", "b", "c", "d", "e"])
bags = st_.lists(labels, min_size=0, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    atoms=st_.lists(bags, min_size=1, max_size=9),
    data=st_.data(),
    w=st_.sampled_from([(1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.5, 2.0)]),
    seed=st_.integers(0, 3),
)
def test_cmaxent_equals_naive_greedy(atoms, data, w, seed):
    n = len(atoms)
    compounds = data.draw(st_.lists(st_.lists(st_.sampled_from(["x", "y", "z"]), max_size=3), min_size=n, max_size=n))
    weighted = data.draw(st_.booleans())
    cw = {"x": 0.5, "y": 0.0} if weighted else None
    distinct = data.draw(st_.booleans())
    structures = len({(tuple(sorted(a)), tuple(sorted(c))) for a, c in zip(atoms, compounds)})
    k = data.draw(st_.integers(0, structures if distinct else n))
    ds = Dataset.from_dict({"atoms": atoms, "compounds": compounds})
    s = CMaxEntSampler(w_atoms=w[0], w_compounds=w[1], compound_weights=cw, seed=seed, distinct=distinct)
    s.indices(ds, k)
    expected = reference_greedy(atoms, compounds, k, s.priority(n), w_atoms=w[0], w_compounds=w[1], compound_weights=cw,
                                distinct=distinct)
    assert s.order_.tolist() == expected


@pytest.mark.parametrize("big_run", [1, 10**9])
def test_cmaxent_equals_naive_greedy_dense_features(big_run, monkeypatch):
    # features in every row (default multiplicity 1: updates go to the rows lacking them) and rare ones;
    # big_run 1: every exception run scattered through its own view; 10**9: all runs in one scatter
    from hf_synthsample.sampling import cmaxent

    monkeypatch.setattr(cmaxent, "_BIG_RUN", big_run)
    rng = np.random.default_rng(0)
    n = 400
    atoms = [["now", "notify"] + [f"p{rng.integers(30)}" for _ in range(rng.integers(1, 4))] for _ in range(n)]
    compounds = [[f"c{rng.integers(5)}"] * int(rng.integers(1, 3)) + [f"d{rng.integers(200)}"] for _ in range(n)]
    ds = Dataset.from_dict({"atoms": atoms, "compounds": compounds})
    s = CMaxEntSampler(seed=1)
    eng, _ = s.engine(ds, 25)
    assert (eng.atoms.default > 0).any() and (eng.compounds.default == 0).any()
    s.indices(ds, 25)
    assert s.order_.tolist() == reference_greedy(atoms, compounds, 25, s.priority(n))


def test_hybrid_equals_naive_greedy_within_template():
    rng = np.random.default_rng(3)
    n = 60
    templates = [f"t{rng.integers(4)}" for _ in range(n)]
    atoms = [[f"a{rng.integers(6)}" for _ in range(rng.integers(1, 4))] for _ in range(n)]
    compounds = [[f"c{rng.integers(8)}" for _ in range(rng.integers(1, 3))] for _ in range(n)]
    ds = Dataset.from_dict({"template": templates, "atoms": atoms, "compounds": compounds})
    s = HybridSampler(seed=2)
    s.indices(ds, 30)
    # replay: the same template draws, each step the naive greedy restricted to that template
    names = sorted(set(templates))
    # a structure (template + atom and compound multisets) is picked at most once (distinct=True)
    key = [(templates[i], tuple(sorted(atoms[i])), tuple(sorted(compounds[i]))) for i in range(n)]
    left = Counter(t for t, *_ in set(key))
    r = np.random.default_rng(2)
    prio = s.priority(n)
    chosen: list[int] = []
    for _ in range(30):
        live = [t for t in names if left[t] > 0]
        t = live[r.integers(len(live))]
        cand = [i for i in range(n) if templates[i] == t and key[i] not in {key[j] for j in chosen}]
        sub_atoms = [atoms[i] for i in chosen] + [None]
        # naive: evaluate every candidate with the chosen set
        best, picks = -math.inf, []
        for e in cand:
            va = Counter(x for i in chosen + [e] for x in set(atoms[i]))  # once per example
            vc = Counter(x for i in chosen + [e] for x in set(compounds[i]))
            picks.append((st.entropy(va) + st.entropy(vc), e))
            best = max(best, picks[-1][0])
        del sub_atoms
        e = min((e for v, e in picks if v >= best - 1e-9 * (1 + abs(best))), key=lambda e: prio[e])
        chosen.append(e)
        left[t] -= 1
    assert s.order_.tolist() == chosen


# ---------------------------------------------------------------------- UAT in distribution


def test_uat_template_marginals_match_formula():
    # 2 draws from templates a (4 rows), b (2), c (1); exact law of the first two templates
    templates = ["a"] * 4 + ["b"] * 2 + ["c"]
    alpha = -0.5
    n = len(templates)
    w = np.array([(templates.count(t) / n) ** alpha for t in templates])
    exact: Counter = Counter()
    for i in range(n):
        for j in range(n):
            if i != j:
                exact[(templates[i], templates[j])] += w[i] / w.sum() * w[j] / (w.sum() - w[i])
    trials = 6000
    seen = Counter()
    for seed in range(trials):
        o = uat_order(templates, alpha, 2, seed)
        seen[(templates[o[0]], templates[o[1]])] += 1
    for key, p in exact.items():
        assert abs(seen[key] / trials - p) < 4 * math.sqrt(p * (1 - p) / trials) + 1e-3, key


def test_uat_alpha_zero_is_uniform_in_distribution():
    # all 10 subsets of size 2 of 5 rows equally likely (chi-square with 9 dof, fixed seeds)
    templates = ["a", "a", "a", "b", "c"]
    trials = 5000
    counts = Counter(tuple(sorted(uat_order(templates, 0.0, 2, seed).tolist())) for seed in range(trials))
    assert set(counts) == set(combinations(range(5), 2))
    chi2 = sum((c - trials / 10) ** 2 / (trials / 10) for c in counts.values())
    assert chi2 < 27.9  # p = 0.001


def test_uat_alpha_minus_one_covers_templates_sooner():
    templates = ["big"] * 2000 + [f"t{i}" for i in range(20) for _ in range(5)]
    ds = Dataset.from_dict({"template": templates})

    def draws_to_cover(order):
        seen, need = set(), len(set(templates))
        for j, i in enumerate(order):
            seen.add(templates[i])
            if len(seen) == need:
                return j + 1
        return len(order) + 1

    uat, uni = [], []
    for seed in range(10):
        s = UATSampler(alpha=-1.0, seed=seed)
        s.indices(ds, len(ds))
        uat.append(draws_to_cover(s.order_))
        u = UniformSampler(seed=seed)
        u.indices(ds, len(ds))
        uni.append(draws_to_cover(u.order_))
    assert np.mean(uat) * 10 < np.mean(uni)


def test_uniform_sampler_is_seeded_and_without_replacement():
    ds = Dataset.from_dict({"x": list(range(50))})
    a = UniformSampler(seed=3).indices(ds, 20)
    assert a.tolist() == UniformSampler(seed=3).indices(ds, 20).tolist()
    assert len(set(a.tolist())) == 20 and a.tolist() == sorted(a.tolist())
    assert a.tolist() != UniformSampler(seed=4).indices(ds, 20).tolist()


# ---------------------------------------------------------------------- programs and bad input


def test_structure_computed_from_programs_and_unparsable():
    ds = Dataset.from_dict({"program": ["(f a)", "(f a)", "(f b", "(g a)", "(h (f a))"]})
    with pytest.raises(ValueError, match=r"1 of 5 programs do not parse.*\[2\]"):
        CMaxEntSampler(language="sexpr").indices(ds, 2)
    s = CMaxEntSampler(language="sexpr", skip_unparsable=True)
    idx = s.indices(ds, 3)  # 3 distinct structures: (f a) once
    assert s.unparsable_.tolist() == [2] and sorted(idx.tolist()) in ([0, 3, 4], [1, 3, 4])
    with pytest.raises(ValueError, match="larger than the 3 distinct structures.*distinct=False"):
        s.indices(ds, 4)
    s = CMaxEntSampler(language="sexpr", skip_unparsable=True, distinct=False)
    assert s.indices(ds, 4).tolist() == [0, 1, 3, 4]
    with pytest.raises(ValueError, match="larger than the 4 rows"):
        s.indices(ds, 5)
    u = UATSampler(alpha=-1, language="sexpr", skip_unparsable=True)
    assert 2 not in u.indices(ds, 4).tolist()


@pytest.mark.parametrize("alpha", [-1.5, 0.1, 1])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        UATSampler(alpha=alpha)


def test_bad_k_and_columns():
    ds = Dataset.from_dict({"template": ["a", "b"]})
    for sampler in (UATSampler(), UniformSampler()):
        with pytest.raises(ValueError, match="k"):
            sampler.indices(ds, 3)
        with pytest.raises(ValueError, match="k"):
            sampler.indices(ds, -1)
    with pytest.raises(ValueError, match="program_column"):
        UATSampler().indices(Dataset.from_dict({"x": [1, 2]}), 1)
    with pytest.raises(ValueError, match="program_column"):
        CMaxEntSampler().indices(ds, 1)
    with pytest.raises(ValueError, match="w_atoms"):
        CMaxEntSampler(w_atoms=-1)
    with pytest.raises(ValueError, match="language"):
        CMaxEntSampler(language="klingon")


def test_cmaxent_keysers_weights_from_the_pool():
    programs = ["(a (b c))", "(a (b c))", "(a (b d))", "(e (b c) d)", "(e f)", "(a (e c))"]
    ds = Dataset.from_dict({"program": programs})
    s = CMaxEntSampler(compound_weights=True, language="sexpr", seed=5)
    s.indices(ds, 4)
    w = st.compound_weights(programs, language="sexpr")
    assert w["(e c)"] == 0.0 and math.isclose(w["(b c)"], 2 / 3)  # (e c) only inside (a (e c)): dropped from the objective
    atoms = [st.atoms(p, language="sexpr") for p in programs]
    comps = [st.compounds(p, language="sexpr") for p in programs]
    assert s.order_.tolist() == reference_greedy(atoms, comps, 4, s.priority(len(programs)), compound_weights=w)


def test_vectorised_grouping_equals_dictionary_grouping():
    from hf_synthsample.sampling.structural import _group_rows, _group_rows_exact

    rng = np.random.default_rng(7)
    n = 3000
    lens = rng.integers(0, 4, size=n)
    off = np.concatenate([[0], np.cumsum(lens)])
    codes = np.sort(rng.integers(0, 5, size=off[-1]))  # few codes: many identical rows
    codes = np.concatenate([np.sort(codes[off[i]:off[i + 1]]) for i in range(n)] or [codes])
    templates = rng.integers(0, 3, size=n)
    order = rng.permutation(n)
    for t in (None, templates):
        fast, fast_reps = _group_rows(order, (off, codes), (off, codes[::-1].copy()), t)
        slow, slow_reps = _group_rows_exact(order, (off, codes), (off, codes[::-1].copy()), t)
        assert len(fast) < n and fast_reps.tolist() == slow_reps.tolist()
        assert fast.flat.tolist() == slow.flat.tolist() and fast.sizes.tolist() == slow.sizes.tolist()


def test_fused_full_pass_equals_per_side_scores():
    import torch

    rng = np.random.default_rng(11)
    n = 600
    atoms = [["now"] + [f"p{rng.integers(40)}" for _ in range(rng.integers(0, 5))] for _ in range(n)]
    compounds = [[f"c{rng.integers(300)}" for _ in range(rng.integers(0, 4))] for _ in range(n)]
    ds = Dataset.from_dict({"atoms": atoms, "compounds": compounds})
    for w in ((1.0, 1.0), (2.0, 0.5)):
        eng, _ = CMaxEntSampler(seed=3, w_atoms=w[0], w_compounds=w[1], distinct=False).engine(ds, 80)
        every = torch.arange(len(eng.members))
        for _ in range(80):
            fused = eng.full_scores()
            alive = eng.alive
            assert torch.allclose(fused[alive], eng.scores()[alive], rtol=1e-12, atol=1e-12)
            g = eng.best_group()
            assert g == eng.best_group(every)  # the per-side path over all groups
            eng.take(g)


@pytest.mark.parametrize("big_run", [1, 10**9])
def test_compaction_keeps_the_picks(big_run, monkeypatch):
    # dropping used-up groups (renumbering the rest) changes nothing in what is picked
    from hf_synthsample.sampling import cmaxent

    monkeypatch.setattr(cmaxent, "_BIG_RUN", big_run)
    rng = np.random.default_rng(5)
    n = 250
    atoms = [["now"] + [f"p{rng.integers(12)}" for _ in range(rng.integers(0, 4))] for _ in range(n)]
    compounds = [[f"c{rng.integers(60)}" for _ in range(rng.integers(0, 3))] for _ in range(n)]
    ds = Dataset.from_dict({"atoms": atoms, "compounds": compounds})
    for distinct in (True, False):
        s = CMaxEntSampler(seed=1, distinct=distinct)
        eng, _ = s.engine(ds, 1)
        k = len(eng.members) - 5 if distinct else 120
        plain = [eng.take(eng.best_group()) for _ in range(k)]
        eng, _ = s.engine(ds, 1)
        out = []
        for i in range(k):
            out.append(eng.take(eng.best_group()))
            if i % 23 == 10:
                eng.compact()
        assert out == plain and len(eng.alive) < len(eng.members)
