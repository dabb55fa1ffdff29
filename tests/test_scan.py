"""SCAN and SCAN*: grammar counts, rule-based splits, SCAN* draws and halving, transforms.

The reference oracle is :mod:`hf_synthsample.domains.scan_interpreter`, which parses command
strings (the generators build commands from grammar productions); the halving is re-done here on
plain strings.
"""

from __future__ import annotations

import random
from collections import Counter

import datasets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_synthsample
from hf_synthsample.domains import scan as sc
from hf_synthsample.domains.scan_augment import AugZero, PrimitiveAugmenter, induce_lexicon, scan_complexity_columns
from hf_synthsample.domains.scan_interpreter import interpret, is_valid

TL, TR = "I_TURN_LEFT", "I_TURN_RIGHT"


# ---------------------------------------------------------------------------------------------
# Interpreter: hand-computed cases
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command, expected",
    [
        ("jump", "I_JUMP"),
        ("turn left", TL),
        ("turn opposite left", f"{TL} {TL}"),
        ("turn around right", " ".join([TR] * 4)),
        ("walk left", f"{TL} I_WALK"),
        ("walk opposite right thrice", " ".join([TR, TR, "I_WALK"] * 3)),
        ("look around left twice", " ".join([TL, "I_LOOK"] * 8)),
        ("walk after run", "I_RUN I_WALK"),
        ("walk and run left", f"I_WALK {TL} I_RUN"),
        ("turn left twice after jump opposite right", f"{TR} {TR} I_JUMP {TL} {TL}"),
    ],
)
def test_interpreter_scan_hand_cases(command, expected):
    assert interpret(command) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        # after binds tighter than and; a after b runs b first
        ("walk and run after look and jump", "I_WALK I_LOOK I_RUN I_JUMP"),
        ("walk after run after look", "I_LOOK I_RUN I_WALK"),
        ("walk after run and look after jump and run", "I_RUN I_WALK I_JUMP I_LOOK I_RUN"),
        ("walk twice after jump left and look", f"{TL} I_JUMP I_WALK I_WALK I_LOOK"),
        ("run and walk and look after jump after run", "I_RUN I_WALK I_RUN I_JUMP I_LOOK"),
        # SCAN* unifies opposite with around: (turn, verb) x2
        ("prim7 opposite left", f"{TL} I_PRIM7 {TL} I_PRIM7"),
    ],
)
def test_interpreter_star_precedence(command, expected):
    assert interpret(command, star=True) == expected


def test_interpreter_rejects_outside_grammar():
    for bad in ["", "turn", "turn twice", "walk and", "and walk", "walk left left", "walk around", "left",
                "walk twice thrice", "dance", "walk and run and look"]:
        assert not is_valid(bad), bad
    assert not is_valid("turn left", star=True)  # SCAN* has no turn
    assert is_valid("walk and run and look", star=True)
    assert interpret("walk opposite left", star=True, unify_around_opposite=False) == f"{TL} {TL} I_WALK"


# ---------------------------------------------------------------------------------------------
# Exact SCAN
# ---------------------------------------------------------------------------------------------
def test_scan_command_set_exact():
    pairs = sc.scan_commands()
    # |U|=4, |D|=10, |V|=34, |S|=102, |C|=102 + 2*102^2
    assert len(pairs) == 102 + 2 * 102**2 == 20_910
    assert len({c for c, _ in pairs}) == 20_910
    assert all(interpret(c) == a for c, a in pairs)  # every generated pair against the oracle
    assert {w for c, _ in pairs for w in c.split()} == {
        "walk", "look", "run", "jump", "turn", "left", "right", "opposite", "around", "twice", "thrice", "and", "after"
    }


# Counts that follow from the grammar: a given V phrase is in 3 S phrases; with `a` held-out S
# phrases and `t` dropped ones among the 102, test = a + 2((102-t)^2 - (102-t-a)^2) and
# train = r + 2 r^2 with r = 102 - a - t (rest; template splits).
SIZES = {
    "simple": (16_728, 4_182),
    "length": (16_990, 3_920),
    "addprim_jump": (14_670, 7_706),
    "addprim_turn_left": (21_890, 1_208),
    "template_around_right": (87 + 2 * 87**2, 12 + 2 * (99**2 - 87**2)),
    "template_jump_around_right": (96 + 2 * 96**2, 3 + 2 * (99**2 - 96**2)),
    "template_opposite_right": (15_225, 4_476),
    "template_right": (15_225, 4_476),
}


@pytest.fixture(scope="module")
def scan_cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("scan-cache"))


@pytest.mark.parametrize("name", list(SIZES))
def test_scan_split_sizes_and_multiset(name, scan_cache):
    ds = hf_synthsample.load_dataset("scan", name, cache_dir=scan_cache)
    assert (ds["train"].num_rows, ds["test"].num_rows) == SIZES[name]
    assert ds["train"].column_names == ["commands", "actions"]
    rows = {s: Counter(zip(*(ds[s].data.column(c).to_pylist() for c in ("commands", "actions")))) for s in ("train", "test")}
    expected = sc.scan_split(name)
    assert rows["train"] == Counter(expected["train"]) and rows["test"] == Counter(expected["test"])
    # every line is one of the enumerated pairs, all of which the interpreter checks
    everything = set(sc.scan_commands())
    assert all(pair in everything for split in rows.values() for pair in split)


def _has(command, phrase):
    return f" {phrase} " in f" {command} "


def test_scan_split_rules():
    everything = Counter(sc.scan_commands())
    # addprim: the bare primitive makes 10% of train; no other train command holds it
    for name, word, copies in (("addprim_jump", "jump", 1_467), ("addprim_turn_left", "turn left", 2_189)):
        split = sc.scan_split(name)
        train = Counter(split["train"])
        bare = next(p for p in everything if p[0] == word)
        assert train[bare] == copies and copies * 10 == len(split["train"])
        assert all(n == 1 for p, n in train.items() if p != bare)
        assert not any(_has(c, word) for c, _ in train if c != word)
        assert all(_has(c, word) and c != word for c, _ in split["test"])
        assert len(train) + len(split["test"]) == 20_910  # every command once, bare one repeated
    # length: at most 22 actions in train
    split = sc.scan_split("length")
    assert max(len(a.split()) for _, a in split["train"]) == 22 < min(len(a.split()) for _, a in split["test"])
    # templates: test holds the template, the turn version is nowhere
    for name, held, dropped in (
        ("template_around_right", [f"{u} around right" for u in sc.SCAN_VERBS], "turn around right"),
        ("template_jump_around_right", ["jump around right"], "turn around right"),
        ("template_opposite_right", [f"{u} opposite right" for u in sc.SCAN_VERBS], "turn opposite right"),
        ("template_right", [f"{u} right" for u in sc.SCAN_VERBS], "turn right"),
    ):
        split = sc.scan_split(name)
        assert all(any(_has(c, h) for h in held) for c, _ in split["test"])
        assert not any(any(_has(c, h) for h in held) for c, _ in split["train"])
        assert not any(_has(c, dropped) for s in split.values() for c, _ in s)
        assert len(split["train"]) + len(split["test"]) + 1_209 == 20_910


def test_scan_simple_is_seeded(scan_cache):
    a, b, c = (sc.scan_split("simple", seed=s) for s in (0, 0, 1))
    assert a == b and a["train"] != c["train"]
    assert set(a["train"]).isdisjoint(a["test"]) and len(set(a["train"]) | set(a["test"])) == 20_910
    ds = hf_synthsample.load_dataset("scan", "simple", seed=1, shuffle=False, cache_dir=scan_cache)
    assert list(zip(ds["train"]["commands"], ds["train"]["actions"])) == c["train"]


# ---------------------------------------------------------------------------------------------
# SCAN*
# ---------------------------------------------------------------------------------------------
def _check_star_rows(ds, *, unify=True):
    cols = scan_complexity_columns(ds[:])
    for i, row in enumerate(ds):
        assert interpret(row["commands"], star=True, unify_around_opposite=unify) == row["actions"], row["commands"]
        assert row["input_length"] == cols["input_length"][i] == len(row["commands"].split())
        assert row["output_length"] == cols["output_length"][i]
        assert row["unique_primitives"] == cols["unique_primitives"][i]


def test_star_random_rows_and_parameters(cache_dir):
    ds = hf_synthsample.load_dataset(
        "scan_star", "random", num_examples=400, max_length=40, min_length=5, num_primitives=12,
        max_unique_primitives=3, cache_dir=cache_dir, split="train",
    )
    _check_star_rows(ds)
    lengths = ds["input_length"]
    assert min(lengths) >= 5 and max(lengths) <= 40
    assert max(ds["unique_primitives"]) <= 3
    words = {w for c in ds["commands"] for w in c.split()}
    assert "turn" not in words
    function_words = {"and", "after", "twice", "thrice", "opposite", "around", "left", "right"}
    assert words - function_words == set(sc.star_primitives(12))
    assert sum(c.count(" and ") + c.count(" after ") > 1 for c in ds["commands"]) > 300  # many conjunctions
    scan_like = hf_synthsample.load_dataset(
        "scan_star", "random", num_examples=100, unify_around_opposite=False, cache_dir=cache_dir, split="train"
    )
    _check_star_rows(scan_like, unify=False)


def test_star_rows_do_not_depend_on_num_proc_or_streaming(cache_dir):
    kw = dict(num_examples=300, num_test=100, block_size=50, cache_dir=cache_dir)
    one = hf_synthsample.load_dataset("scan_star", "length_62", **kw)
    two = hf_synthsample.load_dataset("scan_star", "length_62", num_proc=2, download_mode="force_redownload", **kw)
    assert one["train"]["commands"] == two["train"]["commands"] and one["test"]["actions"] == two["test"]["actions"]
    stream = hf_synthsample.load_dataset("scan_star", "length_62", streaming=True, split="train", **kw)
    assert [r["commands"] for r in stream] == list(one["train"]["commands"])


def _halve_string(command: str) -> str:
    """The paper's halving on a plain string: keep the most leading conjunction-separated parts
    whose words (conjunctions between them included) fit in half the original length."""
    tokens = command.split()
    budget = len(tokens) // 2
    parts, current = [], []
    for t in tokens:
        if t in ("and", "after"):
            parts.append(current)
            current = [t]
        else:
            current.append(t)
    parts.append(current)
    kept = []
    for p in parts:
        if len(kept) + len(p) > budget:
            break
        kept += p
    return " ".join(kept)


@pytest.mark.parametrize("L", [31, 62, 125])
def test_star_length_splits_are_halved_from_the_longest(L, cache_dir):
    n, n_test = 300, 150
    longest = hf_synthsample.load_dataset("scan_star", "length_250", num_examples=n, num_test=n_test, cache_dir=cache_dir)
    ds = hf_synthsample.load_dataset("scan_star", f"length_{L}", num_examples=n, num_test=n_test, cache_dir=cache_dir)
    steps = {125: 1, 62: 2, 31: 3}[L]
    for split, lo_hi in (("train", lambda b: (0, b)), ("test", lambda b: (b, 2 * b))):
        _check_star_rows(ds[split])
        lengths = ds[split]["input_length"]
        lo, hi = lo_hi(L)
        assert all(lo < x <= hi for x in lengths)
        # the rows of the longest dataset, halved `steps` times, dropped when outside a level's bounds
        expected = []
        for command in longest[split]["commands"]:
            bound = 250
            for _ in range(steps):
                command = _halve_string(command)
                bound //= 2
                lo, hi = lo_hi(bound)
                if not lo < len(command.split()) <= hi:
                    break
            else:
                expected.append(command)
        got = list(ds[split]["commands"])
        assert len(expected) > 0.6 * len(got)
        assert got[: len(expected)] == expected[: len(got)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), max_length=st.integers(1, 120), n_prims=st.integers(1, 8), unify=st.booleans())
def test_star_halving_property(seed, max_length, n_prims, unify):
    g = sc.StarGrammar(num_primitives=n_prims, unify_around_opposite=unify)
    for s in g.sample_block(random.Random(seed), 5, 1, max_length).structures():
        full = g.render(s)
        assert interpret(full.commands, star=True, unify_around_opposite=unify) == full.actions
        h = sc.halve(g, s)
        if not h[0]:
            assert _halve_string(full.commands) == ""
            continue
        half = g.render(h)
        assert half.commands == _halve_string(full.commands)
        assert full.commands.startswith(half.commands)
        assert 0 < half.input_length <= full.input_length // 2
        assert interpret(half.commands, star=True, unify_around_opposite=unify) == half.actions


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), max_length=st.integers(1, 80), max_unique=st.sampled_from([None, 1, 2, 3]),
       force=st.sampled_from([None, 3]))
def test_star_block_paths_match_reference(seed, max_length, max_unique, force):
    """The vectorized block rendering and halving equal the per-structure reference versions."""
    g = sc.StarGrammar(num_primitives=7)
    block = g.sample_block(random.Random(seed), 20, 1, max_length, max_unique=max_unique, force=force)
    cols = g.render_block(block)
    structures = block.structures()
    for i, s in enumerate(structures):
        ex = g.render(s)
        assert ex.commands == cols["commands"][i].as_py() and ex.actions == cols["actions"][i].as_py()
        assert (ex.input_length, ex.output_length, ex.unique_primitives) == (
            cols["input_length"][i], cols["output_length"][i], cols["unique_primitives"][i])
        if max_unique is not None:
            assert ex.unique_primitives <= max_unique
        if force is not None:
            assert "jump" in ex.commands.split()
    assert sc.halve_block(g, block).structures() == [sc.halve(g, s) for s in structures]
    assert sc.StarBlock.from_structures(structures).structures() == structures
    assert block.take([3, 1, 1]).structures() == [structures[i] for i in (3, 1, 1)]


def test_star_jump_split(cache_dir):
    ds = hf_synthsample.load_dataset(
        "scan_star", "jump", num_examples=600, num_test=200, max_length=20, num_primitives=20, cache_dir=cache_dir
    )
    train, test = ds["train"], ds["test"]
    _check_star_rows(train)
    _check_star_rows(test)
    counts = Counter(train["commands"])
    assert 30 < counts["jump"] < 100  # ~10% bare jump
    assert not any("jump" in c.split() for c in train["commands"] if c != "jump")
    assert all("jump" in c.split() and c != "jump" for c in test["commands"])
    limited = hf_synthsample.load_dataset(
        "scan_star", "jump", num_examples=50, num_test=200, max_unique_primitives=2, cache_dir=cache_dir, split="test"
    )
    assert max(limited["unique_primitives"]) <= 2 and all("jump" in c.split() for c in limited["commands"])


def test_star_interleaved_streams_and_homogenized_splits(cache_dir):
    stream = hf_synthsample.load_dataset("scan_star", "jump", num_examples=200, num_test=200, block_size=50,
                                         max_length=12, streaming=True)
    for train_row, test_row in zip(stream["train"], stream["test"]):  # generators interleaved
        assert train_row["commands"] == "jump" or "jump" not in train_row["commands"].split()
        assert "jump" in test_row["commands"].split()
    ds = hf_synthsample.load_dataset("scan_star", "length_31", num_examples=60, num_test=60, max_unique_primitives=3,
                                     homogenize="unique_primitives", homogenize_pilot=100, cache_dir=cache_dir)
    assert max(ds["train"]["input_length"]) <= 31 < min(ds["test"]["input_length"])
    assert max(ds["test"]["input_length"]) <= 62
    assert hf_synthsample.homogenization_report(ds["test"]) is not None
    again = hf_synthsample.load_dataset("scan_star", "length_31", num_examples=60, num_test=60, max_unique_primitives=3,
                                        homogenize="unique_primitives", homogenize_pilot=100, block_size=20,
                                        num_proc=2, split="train", cache_dir=cache_dir)
    blocks_of_20 = hf_synthsample.load_dataset("scan_star", "length_31", num_examples=60, num_test=60,
                                               max_unique_primitives=3, homogenize="unique_primitives",
                                               homogenize_pilot=100, block_size=20, split="train",
                                               cache_dir=cache_dir + "-1")
    assert again["commands"] == blocks_of_20["commands"]  # homogenized rows do not depend on num_proc


# ---------------------------------------------------------------------------------------------
# Transforms
# ---------------------------------------------------------------------------------------------
def _small_split(name, n, seed=0):
    rows = sc.scan_split(name)["train"]
    rows = random.Random(seed).sample(rows, n) + [r for r in rows if r[0] in ("jump", "walk")][:2]
    return datasets.Dataset.from_dict({"commands": [c for c, _ in rows], "actions": [a for _, a in rows]})


@pytest.mark.parametrize("split, k", [("addprim_jump", 2), ("addprim_jump", 20), ("template_around_right", 5)])
def test_primitive_augmentation_preserves_mapping(split, k):
    ds = _small_split(split, 60)
    aug = PrimitiveAugmenter.for_split(split, k, seed=3)
    out = ds.map(aug, batched=True, with_indices=True, batch_size=17)
    verbs = {f"{v}_{j}" for v in sc.SCAN_VERBS for j in range(1, k + 1)} | set(sc.SCAN_VERBS)
    for row in out:
        assert interpret(row["commands"], verbs=verbs) == row["actions"]
    sources, per_source = [], Counter()
    for row in out:
        if row["augmented"] == 0:
            sources.append(row["commands"])
        per_source[len(sources) - 1] += 1
    assert sources == list(ds["commands"])  # each original first, then its variants
    for i, command in enumerate(sources):
        has_primitive = any(w in aug.lexicon for w in command.split())
        assert (2 <= per_source[i] <= k + 1) if has_primitive else per_source[i] == 1, command
    groups = {}
    for row in out:
        if row["augmented"] == 0:
            groups[len(groups)] = []
        groups[len(groups) - 1].append(row["commands"])
    assert all(len(set(g)) == len(g) for g in groups.values())  # an example's variants are distinct
    words = {w for c in out["commands"] for w in c.split()}
    assert any(w.startswith("left_") or w.startswith("right_") for w in words) == (split == "template_around_right")
    again = ds.map(aug, batched=True, with_indices=True, batch_size=5)
    assert again["commands"] == out["commands"]  # seeded by row index, not by batch


def test_induced_lexicon_on_scan():
    rows = sc.scan_split("addprim_jump")["train"]
    lexicon = induce_lexicon([c for c, _ in rows], [a for _, a in rows])
    assert lexicon == {**PrimitiveAugmenter(1).lexicon, "left": TL, "right": TR}
    with pytest.raises(ValueError, match="same length"):
        induce_lexicon(["walk"], [])


def test_augzero_preserves_mapping():
    ds = _small_split("simple", 40)
    out = ds.map(AugZero(4), batched=True)
    assert out.num_rows == 4 * ds.num_rows
    for row in out:
        copy = None if row["copy"] == 1 else row["copy"]
        assert interpret(row["commands"], copy=copy, verbs=None if copy is None else sc.SCAN_VERBS) == row["actions"]
    assert list(out.filter(lambda r: r["copy"] == 1)["commands"]) == list(ds["commands"])
    one = ds.map(AugZero(4, expand=False, seed=1), batched=True, with_indices=True, batch_size=7)
    assert one.num_rows == ds.num_rows and set(one["copy"]) == {1, 2, 3, 4}
    for row, original in zip(one, ds):
        assert row["commands"] == AugZero.rewrite(original["commands"], row["copy"])
        assert row["actions"] == AugZero.rewrite(original["actions"], row["copy"])
    with pytest.raises(ValueError, match="with_indices=True"):
        AugZero(2, expand=False)({"commands": ["walk"], "actions": ["I_WALK"]})


def test_complexity_columns():
    out = scan_complexity_columns(
        {"commands": ["walk left and walk twice", "jump_2 after look_2 around_2 right_2"], "actions": ["A B C D", "X"]}
    )
    assert out == {"input_length": [5, 5], "output_length": [4, 1], "unique_primitives": [1, 2]}


# ---------------------------------------------------------------------------------------------
# Bad input, Hub folder
# ---------------------------------------------------------------------------------------------
def test_bad_input():
    with pytest.raises(ValueError, match="available configs"):
        hf_synthsample.load_dataset("scan", "addprim_walk")
    with pytest.raises(ValueError, match="available configs"):
        hf_synthsample.load_dataset("scan_star", "length_100")
    with pytest.raises(ValueError, match="max_length"):
        hf_synthsample.load_dataset("scan_star", "length_31", max_length=0)
    with pytest.raises(ValueError, match="max_length"):
        hf_synthsample.load_dataset("scan_star", "length_31", max_length=-5)
    with pytest.raises(ValueError, match="accepted values: \\[250, 125, 62, 31"):
        hf_synthsample.load_dataset("scan_star", "length_31", max_length=40)
    with pytest.raises(ValueError, match="max_unique_primitives"):
        hf_synthsample.load_dataset("scan_star", "random", num_primitives=5, max_unique_primitives=6)
    with pytest.raises(ValueError, match="held_out_primitive"):
        hf_synthsample.load_dataset("scan_star", "jump", num_primitives=3)
    with pytest.raises(ValueError, match="unknown parameter"):
        hf_synthsample.load_dataset("scan", "simple", num_examples=5)
    with pytest.raises(ValueError, match="train_fraction"):
        hf_synthsample.load_dataset("scan", "simple", train_fraction=1.0)
    for bad_k in (0, -1):
        with pytest.raises(ValueError, match="k must be >= 1"):
            AugZero(bad_k)
        with pytest.raises(ValueError, match="k must be >= 1"):
            PrimitiveAugmenter(bad_k)
    with pytest.raises(TypeError, match="k must be an int"):
        AugZero(2.5)
    with pytest.raises(ValueError, match="with_indices=True"):
        PrimitiveAugmenter(2)({"commands": ["walk"], "actions": ["I_WALK"]})
    with pytest.raises(ValueError, match="no column named 'input'"):
        AugZero(2, columns=("input",))({"commands": ["walk"]})


def test_hub_folder_cli(tmp_path, cache_dir):
    from hf_synthsample.cli import main

    out = tmp_path / "scan-data"
    assert main(["generate", "scan", "--out", str(out), "--configs", "addprim_jump", "length", "--cache-dir", cache_dir]) == 0
    ds = datasets.load_dataset(str(out), "addprim_jump")
    assert (ds["train"].num_rows, ds["test"].num_rows) == (14_670, 7_706)
    assert Counter(ds["train"]["commands"])["jump"] == 1_467
    star = tmp_path / "star-data"
    assert main(["generate", "scan_star", "--out", str(star), "--configs", "length_31", "--num-examples", "200",
                 "--num-test", "40", "--cache-dir", cache_dir]) == 0
    loaded = datasets.load_dataset(str(star), "length_31")
    assert loaded["train"].num_rows == 200 and max(loaded["train"]["input_length"]) <= 31
    assert "length_31" in (star / "README.md").read_text()
