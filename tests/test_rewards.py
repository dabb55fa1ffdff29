"""Verifiers, TRL reward functions and chat prompts (hf_synthsample.rewards, issue 46 item 3)."""

from __future__ import annotations

import contextlib
import json
import pickle
import types

import pytest

import hf_synthsample
from hf_synthsample.rewards import (DEFAULT_INSTRUCTIONS, DOMAINS, canonical_thingtalk, extract_answer, reward_function,
                                    tagged, to_prompt, to_prompts, verifier)


@pytest.fixture(scope="module")
def calculator_rows():
    return list(hf_synthsample.load_dataset("calculator", "mixture", num_examples=20, seed=0, split="train"))


@pytest.fixture(scope="module")
def scan_rows():
    return list(hf_synthsample.load_dataset("scan_star", "random", num_examples=20, num_test=5, num_primitives=6,
                                            seed=0, split="train"))


@pytest.fixture(scope="module")
def karel_rows():
    return list(hf_synthsample.load_dataset("karel", "baseline", num_examples=4, seed=0, split="train"))


@pytest.fixture(scope="module")
def schema2qa_rows():
    return list(hf_synthsample.load_dataset("schema2qa", "all", num_examples=20, seed=0, split="train"))


# ---------------------------------------------------------------------- normalization


@pytest.mark.parametrize("completion, answer", [
    ("<answer>7</answer>", "7"),
    ("  <Answer>\n 7 \n</ANSWER> ", "7"),
    ("first <answer>1</answer>, then <answer>2</answer>", "2"),  # the last tag
    ("Some reasoning.\nAnswer: 7", "7"),
    ("Some reasoning.\n**Final answer:** 7", "7"),
    ("Answer: 1\nAnswer: 2", "2"),
    ("<answer>3", "<answer>3"),  # unclosed: no tag
    ("I_WALK\t\tI_JUMP\n", "I_WALK I_JUMP"),
    ("<answer>```\nDEF run m( move m)\n```</answer>", "DEF run m( move m)"),
    ("`I_WALK`", "I_WALK"),
    ("", ""),
    ("   \n ", ""),
    (None, ""),
    (42, ""),
    ([], ""),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "<answer>5</answer>"}], "5"),
    ([{"role": "assistant", "content": [{"type": "text", "text": "Answer: 5"}]}], "5"),
    ({"role": "assistant", "content": "6"}, "6"),
])
def test_extract_answer(completion, answer):
    assert extract_answer(completion) == answer


# ---------------------------------------------------------------------- calculator


def test_calculator_hand_checked():
    v = verifier("calculator")
    row = {"expression": "(1+2)*3-4", "answer": 5}  # 9 - 4 = 5
    right = ["5", " 5 ", "5\n", "<answer>5</answer>", "I compute 9-4.\n<answer> 5 </answer>", "Answer: 5",
             "5.", "5.0", "+5", [{"role": "assistant", "content": "<answer>5</answer>"}]]
    wrong = ["4", "15", "-5", "5.5", "five", "The answer is 5", "5 7", "(1+2)*3-4", "<answer>4</answer> 5",
             "", "   ", None, [], [{"role": "assistant", "content": ""}], "9" * 5000]
    assert [v.score(c, row) for c in right] == [1.0] * len(right)
    assert [v.score(c, row) for c in wrong] == [0.0] * len(wrong)


def test_calculator_value_without_answer_column():
    v = verifier("calculator")
    assert v.score("8", {"expression": "7-9"}) == 1.0  # (7 - 9) mod 10, floor modulo
    assert v.reference({"expression": "7-9"}) == "8"


def test_calculator_generated_rows(calculator_rows):
    v = verifier("calculator")
    for row in calculator_rows:
        assert v.score(tagged(v.reference(row)), row) == 1.0
        assert v.score(str((row["answer"] + 1) % 10), row) == 0.0
        assert v.score(row["expression"], row) == 0.0 or row["expression"] == str(row["answer"])


# ---------------------------------------------------------------------- SCAN


def test_scan_hand_checked():
    v = verifier("scan")
    row = {"commands": "jump left twice", "actions": "I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP"}
    right = ["I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP", "  I_TURN_LEFT   I_JUMP\nI_TURN_LEFT I_JUMP ",
             "i_turn_left i_jump i_turn_left i_jump", "I_TURN_LEFT, I_JUMP, I_TURN_LEFT, I_JUMP.",
             "Let me see: jump left is I_TURN_LEFT I_JUMP.\n<answer>I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP</answer>",
             "Answer: I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP"]
    wrong = ["I_TURN_LEFT I_JUMP", "I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT", "I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_JUMP",
             "The actions are I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP", "TURN_LEFT JUMP TURN_LEFT JUMP", "", None]
    assert [v.score(c, row) for c in right] == [1.0] * len(right)
    assert [v.score(c, row) for c in wrong] == [0.0] * len(wrong)
    assert v.score("I_WALK", {"actions": ["I_WALK"]}) == 1.0  # a list of actions works too


def test_scan_generated_rows(scan_rows):
    v = verifier("scan_star")
    assert v.domain == "scan_star"
    for row in scan_rows:
        assert v.score(row["actions"].lower(), row) == 1.0
        assert v.score(row["actions"] + " I_WALK", row) == 0.0


# ---------------------------------------------------------------------- Karel


def _grid(col: int, markers: str = "") -> dict:
    return {"rows": 2, "cols": 3, "hero": f"0:{col}:east", "blocked": "1:1", "markers": markers, "crashed": False}


@pytest.fixture()
def karel_row():
    # move then put a marker; the hero starts in columns 0 and 1, and (held out) 0 again
    examples = [{"example_index": i, "inpgrid_json": _grid(c), "outgrid_json": _grid(c + 1, f"0:{c + 1}:1")}
                for i, c in enumerate([0, 1, 0])]
    return {"program_tokens": "DEF run m( move putMarker m)".split(), "examples": examples, "num_grids": 2}


def test_karel_hand_checked(karel_row):
    v = verifier("karel")
    right = ["DEF run m( move putMarker m)", "<answer>DEF run m( move putMarker m)</answer>",
             "DEF  run\nm(  move   putMarker  m)", "Answer: ```\nDEF run m( move putMarker m)\n```",
             "DEF run m( REPEAT R=1 r( move r) putMarker m)"]  # another program, same behaviour
    wrong = ["DEF run m( move m)", "DEF run m( putMarker move m)", "def run m( move putMarker m)",  # case-sensitive
             "move putMarker", "DEF run m( move putMarker", "The program is DEF run m( move putMarker m)",
             "DEF run m( WHILE c( frontIsClear c) w( turnLeft w) m)",  # never ends: timeout
             "", None]
    assert [v.score(c, karel_row) for c in right] == [1.0] * len(right)
    assert [v.score(c, karel_row) for c in wrong] == [0.0] * len(wrong)
    assert v.reference(karel_row) == "DEF run m( move putMarker m)"


def test_karel_pairs_and_partial(karel_row):
    # right on the pairs starting in column 0 (the first shown one and the held-out one) only
    only_col0 = "DEF run m( IF c( leftIsClear c) i( move putMarker i) m)"
    assert verifier("karel").score(only_col0, karel_row) == 0.5
    assert verifier("karel", partial=False).score(only_col0, karel_row) == 0.0
    assert verifier("karel", pairs="held_out").score(only_col0, karel_row) == 1.0
    assert verifier("karel", pairs="all").score(only_col0, karel_row) == pytest.approx(2 / 3)
    no_num_grids = {k: v for k, v in karel_row.items() if k != "num_grids"}
    with pytest.raises(ValueError, match="no held_out pairs"):  # 5 shown by default: none held out
        verifier("karel", pairs="held_out").score(only_col0, no_num_grids)
    with pytest.raises(ValueError, match="pairs"):
        verifier("karel", pairs="some")


def test_karel_generated_rows(karel_rows):
    v = verifier("karel", pairs="all", partial=False)
    for row in karel_rows:
        assert v.score(tagged(v.reference(row)), row) == 1.0
        assert v.score("DEF run m( m)", row) == 0.0  # the empty program: every pair changes the world


# ---------------------------------------------------------------------- Schema2QA


BOOKS = "now => ( @org.schema.Book.Book ) filter param:numberOfPages:Number >= NUMBER_0 => notify"
TWO = ("now => ( @org.schema.Book.Book ) filter param:numberOfPages:Number >= NUMBER_0 and "
       "param:inLanguage:Entity(tt:iso_lang_code) == \" english \" => notify")
TWO_SWAPPED = ("now => ( @org.schema.Book.Book ) filter param:inLanguage:Entity(tt:iso_lang_code) == \" english \" "
               "and param:numberOfPages:Number >= NUMBER_0 => notify")


def test_schema2qa_hand_checked():
    v = verifier("schema2qa")
    row = {"utterance": "books with at least NUMBER_0 pages", "program": BOOKS}
    right = [BOOKS, f"<answer>{BOOKS}</answer>", "  " + BOOKS.replace(" ", "   ") + "\n",
             BOOKS.replace("( @org.schema.Book.Book )", "( ( @org.schema.Book.Book ) )"),  # redundant parentheses
             f"The program:\nAnswer: {BOOKS}"]
    wrong = [BOOKS.replace(">=", "<="), BOOKS.replace("Book.Book", "Book.Person"), BOOKS.lower(),
             BOOKS.replace("NUMBER_0", "NUMBER_1"), "now => => notify", f"The program is {BOOKS}",
             BOOKS[:-7], "", None]
    assert [v.score(c, row) for c in right] == [1.0] * len(right)
    assert [v.score(c, row) for c in wrong] == [0.0] * len(wrong)


def test_schema2qa_conjunction_order_is_not_compared():
    assert canonical_thingtalk(TWO) == canonical_thingtalk(TWO_SWAPPED)
    assert verifier("schema2qa").score(TWO_SWAPPED, {"program": TWO}) == 1.0
    assert verifier("schema2qa").score(TWO_SWAPPED.replace(" and ", " or "), {"program": TWO}) == 0.0


def test_schema2qa_generated_rows(schema2qa_rows):
    v = verifier("schema2qa")
    programs = [row["program"] for row in schema2qa_rows]
    for row in schema2qa_rows:
        assert v.score(tagged(row["program"]), row) == 1.0
        assert sum(v.score(p, row) for p in programs) == sum(canonical_thingtalk(p) == canonical_thingtalk(row["program"])
                                                            for p in programs)


# ---------------------------------------------------------------------- errors


def test_unknown_domain_lists_the_accepted_ones():
    with pytest.raises(ValueError, match=r"accepted domains: \['calculator', 'karel', 'scan', 'scan_star', 'schema2qa'\]"):
        verifier("cogs")
    with pytest.raises(ValueError, match="accepted domains"):
        reward_function("cfq")
    with pytest.raises(ValueError, match="accepted domains"):
        to_prompt({"x": 1}, "cogs")
    with pytest.raises(TypeError, match="takes no options"):
        verifier("scan", partial=False)


@pytest.mark.parametrize("domain, row, column", [
    ("calculator", {"distribution": "dcfg"}, "answer"),
    ("scan", {"commands": "walk"}, "actions"),
    ("scan_star", {"commands": "walk", "actions": None}, "actions"),
    ("karel", {"program_tokens": ["DEF"]}, "examples"),
    ("schema2qa", {"utterance": "books"}, "program"),
])
def test_missing_column_names_it(domain, row, column):
    with pytest.raises(ValueError, match=f"'{column}'"):
        verifier(domain).score("anything", row)
    with pytest.raises(ValueError, match=f"'{column}'"):
        verifier(domain).score("", row)  # a row error even for an empty completion


def test_bad_row_values_are_data_errors():
    with pytest.raises(ValueError, match="'answer' must be an integer"):
        verifier("calculator").score("1", {"answer": "one"})
    with pytest.raises(ValueError, match="'program' is not a ThingTalk program"):
        verifier("schema2qa").score("x", {"program": "now =>"})
    with pytest.raises(ValueError, match="'examples'"):
        verifier("karel").score("x", {"examples": [{"inpgrid_json": "{}"}]})


# ---------------------------------------------------------------------- the TRL reward function


def _trl_call(func, inputs, completions):
    """Call ``func`` through TRL's own ``GRPOTrainer._calculate_rewards`` (its calling convention), on a
    stand-in trainer: the device is the CPU and the cross-process gather is the identity."""
    trl_grpo = pytest.importorskip("trl.trainer.grpo_trainer")
    logged = {}
    fake = types.SimpleNamespace(
        accelerator=types.SimpleNamespace(device="cpu"), reward_funcs=[func], reward_processing_classes=[None],
        reward_func_names=[func.__name__], state=types.SimpleNamespace(global_step=3), environments=None,
        _log_completion_extra=lambda column, values: logged.update({column: values}),
        _log_metric=lambda name, value: logged.update({name: value}))
    patches = {"gather": lambda t: t, "profiling_context": lambda *a, **k: contextlib.nullcontext()}
    saved = {k: getattr(trl_grpo, k) for k in patches}
    try:
        for k, v in patches.items():
            setattr(trl_grpo, k, v)
        prompts = [x["prompt"] for x in inputs]
        ids = [[1, 2, 3] for _ in completions]
        method = trl_grpo.GRPOTrainer._calculate_rewards
        method = getattr(method, "__wrapped__", method)  # without TRL's profiling decorator
        out = method(fake, inputs, prompts, completions, ids)
    finally:
        for k, v in saved.items():
            setattr(trl_grpo, k, v)
    return out[:, 0].tolist()


def test_reward_function_the_way_grpo_calls_it_plain():
    f = reward_function("calculator")
    assert f.__name__ == "calculator_reward"
    rows = [{"prompt": "1+2*3 =", "expression": "1+2*3", "answer": 7}, {"prompt": "9-4 =", "expression": "9-4", "answer": 5}]
    inputs = [rows[0], rows[0], rows[1], rows[1]]  # two generations per prompt
    completions = [" 7", "<answer>8</answer>", "Answer: 5", ""]
    assert _trl_call(f, inputs, completions) == [1.0, 0.0, 1.0, 0.0]


def test_reward_function_the_way_grpo_calls_it_conversational():
    ds = to_prompts(hf_synthsample.load_dataset("scan_star", "random", num_examples=3, num_test=1, num_primitives=6,
                                                seed=1, split="train"), "scan_star")
    inputs = [ds[0], ds[0], ds[1]]
    assert inputs[0]["prompt"][0]["role"] == "user"
    completions = [[{"role": "assistant", "content": tagged(ds[0]["actions"])}],
                   [{"role": "assistant", "content": "I_WALK"}],
                   [{"role": "assistant", "content": "Thinking...\nAnswer: " + ds[1]["actions"].lower()}]]
    assert _trl_call(reward_function("scan_star", name="scan"), inputs, completions) == [1.0, 0.0, 1.0]


def test_reward_function_karel_rows_as_grpo_passes_them(karel_rows):
    inputs = [{"prompt": to_prompt(r, "karel"), **r} for r in karel_rows]
    completions = [[{"role": "assistant", "content": tagged(" ".join(r["program_tokens"]))}] for r in karel_rows]
    completions[-1] = [{"role": "assistant", "content": "I cannot solve this."}]
    assert _trl_call(reward_function("karel", partial=False), inputs, completions) == [1.0] * (len(inputs) - 1) + [0.0]


def test_reward_function_errors_and_pickling():
    f = reward_function("scan")
    with pytest.raises(ValueError, match="'actions'"):
        f(prompts=["walk"], completions=["I_WALK"], commands=["walk"])  # the column was dropped from the dataset
    with pytest.raises(ValueError, match="'actions' has 2 values for 1 completions"):
        f(prompts=["walk"], completions=["I_WALK"], actions=["I_WALK", "I_RUN"])
    assert f(prompts=[], completions=[]) == []
    g = pickle.loads(pickle.dumps(f))
    assert g.__name__ == "scan_reward" and g(prompts=["walk"], completions=["I_WALK"], actions=["I_WALK"]) == [1.0]
    with pytest.raises(ValueError, match="name"):
        reward_function("scan", name="")


# ---------------------------------------------------------------------- prompts


def test_prompts_for_every_domain(calculator_rows, scan_rows, karel_rows, schema2qa_rows):
    for domain, rows, shown in [("calculator", calculator_rows, "expression"), ("scan", scan_rows, "commands"),
                                ("schema2qa", schema2qa_rows, "utterance")]:
        messages = to_prompt(rows[0], domain)
        assert [m["role"] for m in messages] == ["user"]
        assert rows[0][shown] in messages[0]["content"] and "<answer>" in messages[0]["content"]
    karel = to_prompt(karel_rows[0], "karel", system="You write Karel programs.")
    assert [m["role"] for m in karel] == ["system", "user"]
    text = karel[1]["content"]
    assert text.count("input:  rows=") == karel_rows[0]["num_grids"] == 5  # the shown grids, not the held-out one
    hero = json.loads(json.dumps(karel_rows[0]["examples"][0]["inpgrid_json"]))["hero"]
    assert f"hero={hero}" in text and "DEF run m(" in text
    assert set(DEFAULT_INSTRUCTIONS) == set(DOMAINS)


def test_to_prompts_keeps_the_columns_and_adds_completions():
    ds = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=6, seed=2, split="train")
    out = to_prompts(ds, "calculator", instruction="{input} = ?", completion="completion")
    assert out.column_names == ds.column_names + ["prompt", "completion"]
    assert out[0]["prompt"] == [{"role": "user", "content": f"{ds[0]['expression']} = ?"}]
    f = reward_function("calculator")
    cols = {k: out[k] for k in out.column_names if k not in ("prompt", "completion")}
    assert f(prompts=out["prompt"], completions=out["completion"], **cols) == [1.0] * len(out)
    with pytest.raises(ValueError, match="'{input}'"):
        to_prompts(ds, "calculator", instruction="no field")
    with pytest.raises(ValueError, match="'expression'"):
        to_prompts(ds.remove_columns("expression"), "calculator")
