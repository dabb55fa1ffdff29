"""Schema2QA dataset builder: the synthetic (utterance, ThingTalk) pool over six schema.org domains,
its compositional split, and the annotated data with i.i.d. and compositional splits.

Configs: ``all`` and one per domain (the synthetic pool); ``all-compositional`` and
``<domain>-compositional`` (the pool split of Oren et al. 2021, Appendix A: examples whose abstract
template is in the annotated compositional validation (test) set form the validation (test) split,
every other one is training data); ``annotated-iid`` and ``annotated-compositional`` (the
``<domain>.tsv`` files of ``annotated_dir``, both with the same train split). The compositional and
annotated configs need ``annotated_dir``.

Example:
    >>> import hf_synthsample
    >>> ds = hf_synthsample.load_dataset("schema2qa", "hotels", num_examples=100)
    >>> sorted(ds["train"].column_names)
    ['domain', 'num_clauses', 'program', 'program_length', 'template', 'utterance']
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
from typing import Any

import datasets
import pyarrow as pa

from ..domains import schema2qa as s2q
from ..domains import thingtalk
from ..logging import get_logger
from ..settings import setting
from .base import SyntheticBuilder, SyntheticConfig, _code_hash, block_rng

__all__ = ["Schema2QAConfig", "Schema2QA", "annotated_splits"]

logger = get_logger(__name__)

_DOMAIN_CHOICES = ("all", *s2q.DOMAIN_NAMES)
_PILOT = 20_000
_PILOT_STREAM = 2_000


def _folder(name: str, value: Any) -> str:
    """An existing folder, as a ``str``."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path or None, got {value!r}")
    if not os.path.isdir(value):
        raise ValueError(f"{name}: {os.fspath(value)!r} is not an existing folder")
    return os.fspath(value)


def _fraction(default: float, help: str) -> Any:
    return setting(default, help=f"{help}, in [0, 0.5]", min=0.0, max=0.5)


@dataclasses.dataclass
class Schema2QAConfig(SyntheticConfig):
    """Schema2QA parameters."""

    schema_domain: str = setting("all", help=f"one of {_DOMAIN_CHOICES} ('all': each example from a domain drawn "
                                             "uniformly)", choices=_DOMAIN_CHOICES)
    source: str = setting("synthetic", help="'synthetic' (the grammar's pool) or 'annotated' (TSVs of annotated_dir)",
                          choices=("synthetic", "annotated"))
    split: str = setting("iid", help="'iid' or 'compositional': how validation/test are made (see the module docs)",
                         choices=("iid", "compositional"))
    annotated_dir: str | None = setting(None, help="folder with <domain>.tsv files (id, utterance, program); needed by "
                                                   "annotated and compositional configs", kind="any", check=_folder)
    comp_validation_fraction: float = _fraction(0.08, "annotated examples whose templates form the compositional "
                                                      "validation set")
    comp_test_fraction: float = _fraction(0.13, "annotated examples whose templates form the compositional test set")
    iid_validation_fraction: float = _fraction(0.09, "of the remaining annotated examples: the i.i.d. validation set")
    iid_test_fraction: float = _fraction(0.10, "of the remaining annotated examples: the i.i.d. test set")
    split_seed: int = setting(0, help="seed of the annotated template and i.i.d. splits", min=0)

    def validate(self, salient_variables) -> None:
        super().validate(salient_variables)
        if self.source == "annotated" and self.homogenize:
            raise ValueError("homogenize: only the synthetic pool can be homogenized while generating; got source='annotated'")

    def require_annotated(self) -> None:
        if (self.source == "annotated" or self.split == "compositional") and self.annotated_dir is None:
            raise ValueError(
                f"annotated_dir: config {self.name!r} needs the annotated Schema2QA folder "
                "(<domain>.tsv files: id, utterance, program); pass annotated_dir='path/to/folder'"
            )

    def split_sizes(self) -> dict[str, int]:
        if self.source == "annotated":
            if self.annotated_dir is None:
                return {"train": 0, "validation": 0, "test": 0}
            return {k: len(v) for k, v in annotated_splits(self).items()}
        return super().split_sizes()


def annotated_splits(config: Schema2QAConfig) -> dict[str, list[dict]]:
    """The annotated rows of ``config`` cut into train / validation / test: templates split first
    (:func:`~hf_synthsample.domains.schema2qa.compositional_split`), the train templates' rows then
    cut i.i.d.; validation and test are the template-disjoint sets or the i.i.d. ones (``split``)."""
    rows = _annotated_rows(config.annotated_dir, config.schema_domain)
    comp = _template_sets(config, rows)
    train_pool = [r for r in rows if r["template"] in comp[0]]
    tr, dev, test = s2q.iid_split(len(train_pool), config.split_seed, config.iid_validation_fraction, config.iid_test_fraction)
    if config.split == "compositional":
        held = {s: [r for r in rows if r["template"] in t] for s, t in (("validation", comp[1]), ("test", comp[2]))}
    else:
        held = {"validation": [train_pool[i] for i in dev], "test": [train_pool[i] for i in test]}
    return {"train": [train_pool[i] for i in tr], **held}


def _annotated_rows(folder: str, domain: str) -> list[dict]:
    rows = s2q.read_annotated(folder, None if domain == "all" else [domain])
    for r in rows:
        program, template = thingtalk.render(thingtalk.parse(r["program"]))
        tokens = program.split()
        r["template"] = template
        r["num_clauses"] = sum(1 for t in tokens if t in thingtalk.COMPARISON_OPS)
        r["program_length"] = len(tokens)
    return rows


def _template_sets(config: Schema2QAConfig, rows: list[dict] | None = None) -> tuple[set, set, set]:
    rows = _annotated_rows(config.annotated_dir, config.schema_domain) if rows is None else rows
    return s2q.compositional_split(
        [r["template"] for r in rows], config.split_seed, config.comp_validation_fraction, config.comp_test_fraction
    )


def _folder_hash(folder: str) -> str:
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".tsv"):
            h.update(name.encode())
            with open(os.path.join(folder, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def _builder_configs() -> list[Schema2QAConfig]:
    return [
        *(Schema2QAConfig(name=d, schema_domain=d, named_parameters=("schema_domain",),
                          description=f"Synthetic Schema2QA pool ({'all six domains' if d == 'all' else d}).")
          for d in _DOMAIN_CHOICES),
        *(Schema2QAConfig(name=f"{d}-compositional", schema_domain=d, split="compositional",
                          named_parameters=("schema_domain", "split"), num_validation=1_000, num_test=1_000,
                          description=f"Synthetic pool ({d}) split by the annotated compositional split: validation/"
                          "test hold only examples whose template is in the annotated compositional validation/test "
                          "set; train never does.") for d in _DOMAIN_CHOICES),
        *(Schema2QAConfig(name=f"annotated-{k}", source="annotated", split=k, named_parameters=("source", "split"),
                          description=f"Annotated Schema2QA questions (annotated_dir) with the {k} validation/test "
                          "split of Oren et al. (2021, Appendix A); the train split is shared by both annotated "
                          "configs.") for k in ("iid", "compositional")),
    ]


class Schema2QA(SyntheticBuilder):
    """Schema2QA-style (utterance, ThingTalk program) pairs: synthetic pool and annotated data."""

    DOMAIN = "schema2qa"
    BUILDER_CONFIG_CLASS = Schema2QAConfig
    BUILDER_CONFIGS = _builder_configs()
    DEFAULT_CONFIG_NAME = "all"
    SALIENT_VARIABLES = {
        "num_clauses": "comparisons (filter clauses) in the program",
        "program_length": "tokens in the program",
    }
    SOURCE_MODULES = (
        "hf_synthsample.domains.schema2qa",
        "hf_synthsample.domains.schema2qa_clauses",
        "hf_synthsample.domains.schema2qa_schema",
        "hf_synthsample.domains.thingtalk",
        "hf_synthsample.structure.tree",
        "hf_synthsample.structure.language",
        "hf_synthsample.structure.extraction",
    )
    CARD_METADATA = {"language": ["en"], "task_categories": ["text-generation"]}  # questions -> ThingTalk programs
    DESCRIPTION = (
        "Schema2QA-style semantic parsing data (Xu et al. 2020; Oren et al. 2021): natural-language questions "
        "about six schema.org domains (restaurants, people, hotels, books, movies, music) paired with ThingTalk 1.x "
        "programs, from a synchronous grammar with several canonical phrasings per construct. Columns: utterance, "
        "program, template (the abstract template of Oren et al. 2021, Table 2), domain, and the salient "
        "variables num_clauses and program_length."
    )
    CITATION = """@inproceedings{oren2021finding,
  title={Finding needles in a haystack: Sampling Structurally-diverse Training Sets from Synthetic Data for Compositional Generalization},
  author={Oren, Inbar and Herzig, Jonathan and Berant, Jonathan},
  booktitle={Proceedings of EMNLP},
  year={2021}
}
@inproceedings{xu2020schema2qa,
  title={Schema2QA: High-Quality and Low-Cost Q\\&A Agents for the Structured Web},
  author={Xu, Silei and Campagna, Giovanni and Li, Jian and Lam, Monica S.},
  booktitle={Proceedings of CIKM},
  year={2020}
}"""

    def __init__(self, *args, **kwargs):
        folder = kwargs.get("annotated_dir")
        if isinstance(folder, (str, os.PathLike)) and os.path.isdir(folder):
            # the rows depend on the annotated files' content, not only on their path
            kwargs.setdefault("hash", _code_hash(type(self)) + _folder_hash(os.fspath(folder)))
        super().__init__(*args, **kwargs)

    def configured(self, config: Schema2QAConfig, config_kwargs: dict[str, Any]) -> None:
        super().configured(config, config_kwargs)
        config.require_annotated()

    FEATURES = {"utterance": "string", "program": "string", "template": "string", "domain": "string",
                "num_clauses": "int32", "program_length": "int32"}

    def _features(self) -> datasets.Features:
        features = super()._features()
        if self.config.source == "annotated":  # the rows' ids in the annotated files
            return datasets.Features({"id": datasets.Value("string"), **features})
        return features

    def _draw(self, rng: random.Random) -> dict:
        return s2q.generate(rng, self.config.schema_domain)

    # ------------------------------------------------------------------ splits
    def split_plans(self, stats_dir=None) -> dict[str, tuple[list, dict]]:
        cfg = self.config
        if cfg.source == "annotated":
            # one block per split: the annotated rows themselves (a tuple: datasets shards lists only)
            return {
                name: ([(0, 0, len(rows))], {"split": name, "rows": tuple(rows)})
                for name, rows in annotated_splits(cfg).items()
                if rows
            }
        plans = super().split_plans(stats_dir)
        if cfg.split != "compositional":
            return plans
        train, dev, test = _template_sets(cfg)
        held_out = frozenset(dev | test)
        accept = {"train": ("exclude", held_out), "validation": ("include", frozenset(dev)), "test": ("include", frozenset(test))}
        # a pilot run estimates how often each split's templates come up, so that an empty split
        # is an error before any work and a rare one gets a draw budget that will not be exhausted
        pilot_rng = block_rng(cfg.seed, _PILOT_STREAM, 0)
        pilot_templates = [s2q.generate(pilot_rng, cfg.schema_domain)["template"] for _ in range(_PILOT)]
        for split, (_, context) in plans.items():
            mode, templates = accept[split]
            hits = sum((t in templates) == (mode == "include") for t in pilot_templates)
            if hits == 0:
                raise ValueError(
                    f"split: the {split} split of config {cfg.name!r} is empty after the compositional split: none of "
                    f"{_PILOT:,} pool examples has a template {'in' if mode == 'include' else 'outside'} the annotated "
                    f"compositional {split if mode == 'include' else 'validation/test'} set ({len(templates)} templates); "
                    "use other split_seed/fractions or set its size to 0"
                )
            context["accept"] = (mode, templates, max(10.0, 5.0 * _PILOT / hits))
            logger.info(
                f"{cfg.name}: {split} split keeps {hits / _PILOT:.2%} of the pool (pilot of {_PILOT:,}; "
                f"{len(templates)} annotated templates {'kept' if mode == 'include' else 'held out'})"
            )
        return plans

    def block_table(self, block, *, split, pilot=None, stats_dir=None, rows=None, accept=None) -> pa.Table:
        schema = self.info.features.arrow_schema
        if rows is not None:
            return pa.Table.from_pylist(list(rows), schema=schema)
        if accept is None:
            return super().block_table(block, split=split, pilot=pilot, stats_dir=stats_dir)
        cfg = self.config
        mode, templates, draws_per_row = accept
        stream, index, size = block
        rng = block_rng(cfg.seed, stream, index)
        budget = math.ceil(draws_per_row * size) + 1_000
        draws = 0

        def draw(found: int) -> dict | None:
            nonlocal draws
            if draws >= budget:
                raise ValueError(
                    f"split: only {found} of {size} rows of the {split} split found in {draws:,} draws; the "
                    "templates of this split are too rare in the pool"
                )
            draws += 1
            row = s2q.generate(rng, cfg.schema_domain)
            return row if (row["template"] in templates) == (mode == "include") else None

        return pa.Table.from_pylist(self._accepted_rows(draw, rng, block, split, pilot, stats_dir), schema=schema)
