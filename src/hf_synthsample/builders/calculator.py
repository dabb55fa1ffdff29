"""Calculator dataset builder: the four distributions of Shin et al. (2019), their mixture, and
homogenized variants on each salient variable.

Configs: ``dcfg``, ``t2t``, ``rcfg``, ``bal``, ``mixture`` (each row from one of the four: the paper's
evaluation distribution) and e.g. ``dcfg-homogenized-max-paren-depth`` for every distribution and variable.

Example:
    >>> import hf_synthsample
    >>> ds = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=100, seed=1)
    >>> sorted(ds["train"].column_names)  # doctest: +NORMALIZE_WHITESPACE
    ['answer', 'distribution', 'expression', 'length', 'max_paren_depth', 'mean_paren_depth',
     'num_ops', 'num_parens']
"""

from __future__ import annotations

import dataclasses
import functools
import random

from ..domains import calculator as calc
from ..settings import setting
from ..validation import check_int
from .base import SyntheticBuilder, SyntheticConfig, homogenized_config_name, params_of

__all__ = ["CalculatorConfig", "Calculator"]

_DISTRIBUTION_CHOICES = (*calc.DISTRIBUTIONS, "mixture")

#: Shin et al. (2019), cited by every domain it defines (Calculator, Karel).
SHIN2019_CITATION = """@inproceedings{shin2019synthetic,
  title={Synthetic Datasets for Neural Program Synthesis},
  author={Shin, Richard and Kant, Neel and Gupta, Kavi and Bender, Christopher and Trabucco, Brandon and Singh, Rishabh and Song, Dawn},
  booktitle={International Conference on Learning Representations},
  year={2019}
}"""
_DEFAULTS = calc.CalculatorParams()


@dataclasses.dataclass
class CalculatorConfig(SyntheticConfig):
    """Calculator generation parameters (see :class:`~hf_synthsample.domains.calculator.CalculatorParams`)."""

    distribution: str = setting("dcfg", help=f"one of {_DISTRIBUTION_CHOICES}", choices=_DISTRIBUTION_CHOICES)
    p_digit: float = setting(_DEFAULTS.p_digit, help="DCFG/RCFG: probability of a digit at each node, in (0, 1]",
                             min=0.0, min_inclusive=False, max=1.0)
    max_tree_depth: int = setting(_DEFAULTS.max_tree_depth, help="DCFG/RCFG: recursion cap (a digit is forced there)",
                                  min=0, max=30)
    max_length: int | None = setting(_DEFAULTS.max_length, min=1,
                                     help="DCFG/RCFG: longer expressions (characters) are redrawn; None: no limit")
    max_run: int = setting(_DEFAULTS.max_run, help="RCFG: runs of 2..max_run operands for + and *", min=2, max=64)
    t2t_min_depth: int = setting(_DEFAULTS.t2t_min_depth, help="T2T: smallest tree depth", min=0, max=30)
    t2t_max_depth: int = setting(_DEFAULTS.t2t_max_depth, help="T2T: largest tree depth", min=0, max=30)
    bal_min_depth: int = setting(_DEFAULTS.bal_min_depth, help="BAL: smallest tree depth", min=0, max=16)
    bal_max_depth: int = setting(_DEFAULTS.bal_max_depth, help="BAL: largest tree depth", min=0, max=16)

    def validate(self, salient_variables) -> None:
        super().validate(salient_variables)
        check_int("t2t_max_depth", self.t2t_max_depth, min=self.t2t_min_depth)
        check_int("bal_max_depth", self.bal_max_depth, min=self.bal_min_depth)

    def params(self) -> calc.CalculatorParams:
        return params_of(self, calc.CalculatorParams)


def _builder_configs() -> list[CalculatorConfig]:
    return [
        *(CalculatorConfig(name=d, distribution=d, named_parameters=("distribution",),
                           description=f"Calculator expressions from the {d.upper()} distribution.")
          for d in calc.DISTRIBUTIONS),
        CalculatorConfig(name="mixture", distribution="mixture", named_parameters=("distribution",),
                         description="Each row drawn from DCFG, T2T, RCFG or BAL with equal probability "
                         "(the evaluation distribution of Shin et al. 2019, section 6.2)."),
        *(CalculatorConfig(name=homogenized_config_name(d, v), distribution=d, homogenize=(v,),
                           named_parameters=("distribution", "homogenize"),
                           description=f"{d.upper()} expressions homogenized on {v} "
                                       "(generator-side, eps from the config).")
          for d in calc.DISTRIBUTIONS for v in calc.SALIENT_VARIABLES),
    ]


class Calculator(SyntheticBuilder):
    """Calculator expressions with their answer (mod 10) and the five salient variables."""

    DOMAIN = "calculator"
    BUILDER_CONFIG_CLASS = CalculatorConfig
    BUILDER_CONFIGS = _builder_configs()
    DEFAULT_CONFIG_NAME = "dcfg"
    SALIENT_VARIABLES = calc.SALIENT_VARIABLES
    SOURCE_MODULES = ("hf_synthsample.domains.calculator",)
    DESCRIPTION = (
        "Calculator (Shin et al., 2019): arithmetic expressions over the digits 0-9 with +, - and *, "
        "printed with every redundant parenthesis removed; the label is the value modulo 10. "
        "Columns: expression, answer, distribution, and the salient variables length, num_ops, "
        "num_parens, mean_paren_depth and max_paren_depth."
    )
    CITATION = SHIN2019_CITATION
    CARD_METADATA = {"task_categories": ["text-classification"]}  # expressions, no natural language

    FEATURES = {"expression": "string", "answer": "int32", "distribution": "string", "length": "int32",
                "num_ops": "int32", "num_parens": "int32", "mean_paren_depth": "float64", "max_paren_depth": "int32"}

    @functools.cached_property
    def _params(self) -> calc.CalculatorParams:
        return self.config.params()

    def _draw(self, rng: random.Random) -> dict:
        dist = self.config.distribution
        if dist == "mixture":
            dist = calc.DISTRIBUTIONS[int(rng.random() * len(calc.DISTRIBUTIONS))]
        return calc.sample_row(rng, dist, self._params)
