"""SQL structure on real text-to-SQL data: Advising (Finegan-Dollak et al. 2018, CC BY 4.0), read
from the file's own format as the example does (issue 43, item 5). Skips where the data is absent;
users download ``data/advising.json`` from github.com/jkkummerfeld/text2sql-data."""

from __future__ import annotations

import pytest

from conftest import shared_data

pytestmark = pytest.mark.slow

SOURCE = "github.com/jkkummerfeld/text2sql-data (data/advising.json)"


@pytest.fixture(scope="module")
def advising():
    path = shared_data("text2sql-advising", "advising.json")  # skips naming the path where it is absent
    from text2sql_advising import load_advising

    return load_advising(path)


@pytest.fixture(scope="module")
def parsed(advising):
    """The rows with their SQL structure columns, parsed once (template, atoms, compounds)."""
    from hf_synthsample.structure import StructureFunction

    return advising.map(StructureFunction(column="sql_values", language="sql"), batched=True)


#: the split reports read the parsed columns (compounds unweighted: the weights need trees)
COLUMNS = dict(column="sql_values", template_column="template", atoms_column="atoms", compounds_column="compounds",
               text_column="question", compound_weights=False)


def test_the_file_reads_as_one_row_per_question(advising):
    # the README's figures: 205 queries, 4,387 questions; the question split 2,629 / 229 / 573 (+956 excluded)
    assert len(advising) == 4387
    assert len(set(advising["query_id"])) == 205
    counts = {s: advising["question_split"].count(s) for s in ("train", "dev", "test", "exclude")}
    assert counts == {"train": 2629, "dev": 229, "test": 573, "exclude": 956}
    row = advising[0]
    assert "number0" in row["question"] and "number0" in row["sql"] and "number0" not in row["sql_values"]


def test_every_query_parses_and_the_questions_of_one_query_share_one_template(advising):
    from text2sql_advising import check_structure

    found = check_structure(advising)
    assert found["parsed"] == len(advising) and found["queries"] == 205
    assert found["queries_with_several_templates"] == []
    assert found["templates"] <= 205  # queries that differ only in a literal share a template


def test_a_template_split_holds_no_test_template_in_training(parsed):
    from hf_synthsample.splits import split_report, template_split

    split = template_split(parsed, "sql_values", "sql", test_size=0.25, seed=0, template_column="template")
    report = split_report(split["train"], split["test"], **COLUMNS)
    assert report.test_templates > 0 and report.test_templates_in_train == 0


def test_the_published_splits_side_by_side(parsed):
    from text2sql_advising import published_split

    from hf_synthsample.splits import split_report

    reports = {}
    for kind in ("question", "query"):
        split = published_split(parsed, kind)
        reports[kind] = split_report(split["train"], split["test"], **COLUMNS)
    q, s = reports["question"], reports["query"]
    assert (q.train_rows, q.test_rows) == (2629, 573)
    # the question split is random: every test row's template is in training; the query split holds
    # queries out: most test templates are unseen, and its compound divergence is far higher
    assert q.test_rows_with_train_template == q.test_rows
    assert s.test_rows_with_train_template / s.test_rows < 0.2
    assert s.compound_divergence > 5 * q.compound_divergence
    assert s.unseen_compound_share > q.unseen_compound_share


def test_an_mcd_split_of_advising_reaches_its_target(parsed):
    from hf_synthsample.splits import mcd_split, split_report
    from hf_synthsample.structure import get_language

    lang = get_language("sql", group=False)  # whole structures would make every MCD split a query split
    split = mcd_split(parsed, column="sql_values", language=lang, atoms_column="atoms", compounds_column="compounds",
                      compound_weights=False, test_size=0.25, train_size=0.5, target_divergence=0.2, seed=0,
                      progress=False)
    assert split.mcd_result.num_groups == len(parsed)
    report = split_report(split["train"], split["test"], **COLUMNS)
    assert abs(report.compound_divergence - 0.2) <= 0.01
    assert report.compound_divergence == pytest.approx(split.mcd_result.compound_divergence, abs=1e-9)
