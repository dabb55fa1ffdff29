"""What a compositionality curve returns: one record per split, Spearman's rho, a table, a plot and a
Hub-layout folder with the splits and the table in its card.

Example:
    >>> r = CurveResult(records=[_example_record(0.1, 0.1, 95.0, 90.0), _example_record(0.5, 0.5, 97.0, 40.0)])
    >>> r.spearman_rho, r.all_fitted, r.test_exact_match
    (-1.0, True, [90.0, 40.0])
    >>> print(r.to_markdown().splitlines()[2])
    | 0.1 | 0.100 | 0.000 | 100 | 50 (50) | 500 | 95.0 | yes | **90.0** |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .settings import CurveSettings
from .stats import spearman

if TYPE_CHECKING:  # pragma: no cover
    from ..splits.sweep import SplitSweep

__all__ = ["CurveResult"]


def _example_record(target: float, dc: float, fit: float, test: float) -> dict[str, Any]:
    """A record as :func:`~hf_synthsample.curve.compositionality_curve` makes one (for the examples)."""
    return {"target": target, "config": f"dc_{target:.2f}", "compound_divergence": dc, "atom_divergence": 0.0,
            "train_rows": 100, "test_rows": 50, "num_test_scored": 50, "num_fit": 20, "fit": fit,
            "fit_reached": fit >= 90.0, "steps": 500, "fit_history": [[500, fit]], "test_exact_match": test,
            "errors": {}, "train_seconds": 1.0, "eval_seconds": 0.1}


@dataclass
class CurveResult:
    """The curve: ``records`` (one dict per split, in target order), the ``settings``, the ``sweep``
    (:class:`~hf_synthsample.splits.SplitSweep`: the splits), ``model`` (its description), ``seconds``,
    ``random_compound_divergence`` (D_C of a seeded random split of the same sizes: the reference level).
    """

    records: list
    settings: CurveSettings = field(default_factory=CurveSettings)
    sweep: "SplitSweep | None" = None
    model: str = ""
    seconds: float = 0.0
    random_compound_divergence: float | None = None
    #: the random split of the same sizes as a dict (:class:`~hf_synthsample.splits.disjoint.RandomBaseline`)
    random_baseline: dict | None = None
    #: the model that ran, as a record: ``source`` (scratch, checkpoint, factory), ``name``, its class,
    #: ``model_type``, sizes and ``parameters`` (a checkpoint's folder name only, never a local path)
    model_config: dict | None = None

    @property
    def model_name(self) -> str:
        """The model's short name (``checkpoint NAME``, ``factory NAME``, ``scratch BART``) for a title."""
        return (self.model_config or {}).get("name") or self.model.split(":")[0].split(" d_model")[0]

    @property
    def rho_undefined_reason(self) -> str | None:
        """Why Spearman's rho is undefined (``None`` when it is defined)."""
        if len(self.records) < 2:
            return f"rho undefined: {len(self.records)} split(s), a correlation needs at least 2"
        if len(set(self.compound_divergence)) < 2:
            return "rho undefined: every split has the same D_C"
        if len(set(self.test_exact_match)) < 2:
            return "rho undefined: every split has the same test score"
        return None

    def qualifier(self) -> str:
        """"not a result: k of n models under the fit target" when any model did not fit, else ""."""
        if not self.not_fitted:
            return ""
        return f"not a result: {len(self.not_fitted)} of {len(self.records)} models under the fit target"

    def headline(self, digits: int = 3) -> str:
        """The curve in a line: Spearman's rho (or why it is undefined), qualified when models did not fit."""
        reason = self.rho_undefined_reason
        rho = (f"Spearman rho(D_C, test exact match) = {self.spearman_rho:.{digits}f} over {len(self.records)} splits"
               if reason is None else f"Spearman rho(D_C, test exact match) over {len(self.records)} splits: {reason}")
        q = self.qualifier()
        return f"{q[0].upper()}{q[1:]}; {rho}" if q else rho

    @property
    def template_disjoint(self) -> list:
        """The targets whose split is also (close to) template-disjoint (``record["template_statement"]``)."""
        return [r["target"] for r in self.records if r.get("template_statement")]

    def _random_sentence(self) -> str:
        """The reference level, qualified when some splits are also template-disjoint (issue 43)."""
        if self.random_compound_divergence is None:
            return ""
        o = (self.random_baseline or {}).get("overlap")
        shares = (f" and {o['test_rows_with_train_template'] / max(1, o['test_rows']):.0%} of its test rows have a "
                  "template training has" if o else "")
        text = (f" A random split of the same sizes has D_C {self.random_compound_divergence:.3f}{shares}: a split "
                "below it gets there by an unusual test side (rows with few compounds).")
        marked = [r for r in self.records if r.get("template_statement")]
        if marked:
            text += (" Splits marked † are also template-disjoint (" + "; ".join(
                f"D_C target {r['target']:g}: {r['template_statement']}" for r in marked) + "): their test sides "
                "hold templates no training row has, so their scores measure template novelty as well as compound "
                "divergence, and the random split's D_C is not the level of a split like them (rows of one "
                "structure moved together; keep some values or set group=False to tell the two apart).")
        return text

    @property
    def compound_divergence(self) -> list[float]:
        return [float(r["compound_divergence"]) for r in self.records]

    @property
    def test_exact_match(self) -> list[float]:
        return [float(r["test_exact_match"]) for r in self.records]

    @property
    def test_exact_match_length_std(self) -> list[float] | None:
        """Each split's test exact match at the dataset's mix of output lengths (``None``: not scored so,
        ``length_bins=0``)."""
        if not self.records or any("test_exact_match_length_std" not in r for r in self.records):
            return None
        return [float(r["test_exact_match_length_std"]) for r in self.records]

    @property
    def fit(self) -> list[float]:
        return [float(r["fit"]) for r in self.records]

    @property
    def spearman_rho(self) -> float:
        """Spearman's rho between each split's D_C and its test exact match (``nan`` if either is constant,
        or under 2 splits: :attr:`rho_undefined_reason` says which)."""
        if len(self.records) < 2:
            return float("nan")
        return spearman(self.compound_divergence, self.test_exact_match)

    @property
    def spearman_rho_length_std(self) -> float | None:
        """Spearman's rho between D_C and the length-standardized test score (``None``: not scored so)."""
        scores = self.test_exact_match_length_std
        return None if scores is None or len(scores) < 2 else spearman(self.compound_divergence, scores)

    @property
    def not_fitted(self) -> list[float]:
        """The targets whose model did not reach its fit target."""
        return [r["target"] for r in self.records if not r["fit_reached"]]

    @property
    def all_fitted(self) -> bool:
        return not self.not_fitted

    def to_markdown(self) -> str:
        """The table: one row per split (fit and test exact match in %), then Spearman's rho."""
        std, novel = self.test_exact_match_length_std, all("unseen_templates" in r for r in self.records)
        lines = ["| target D_C | D_C | D_A | train rows | test rows (scored) | steps | fit | fitted | test exact match |"
                 + (" at the length mix |" if std else "") + (" unseen templates (their exact match) |" if novel else ""),
                 "|---:|---:|---:|---:|---:|---:|---:|---|---:|" + ("---:|" if std else "") + ("---:|" if novel else "")]
        for i, r in enumerate(self.records):
            u = r.get("unseen_templates") or {}
            mark = " †" if r.get("template_statement") else ""
            lines.append(f"| {r['target']:g}{mark} | {r['compound_divergence']:.3f} | {r['atom_divergence']:.3f} | "
                         f"{r['train_rows']:,} | {r['test_rows']:,} ({r['num_test_scored']:,}) | {r['steps']:,} | "
                         f"{r['fit']:.1f} | {'yes' if r['fit_reached'] else '**no**'} | **{r['test_exact_match']:.1f}** |"
                         + (f" {std[i]:.1f} |" if std else "") + (f" {u['share']:.1f} %"
                         + (f" ({u['exact_match']:.1f})" if u["rows"] else "") + " |" if novel else ""))
        s = self.settings
        mix = (f" At the dataset's mix of output lengths ({len(self.records[0]['test_by_length'])} bins of "
               f"{s.target_column} words: each split's exact match per bin, weighed by the dataset's share of the bin): "
               f"rho = {self.spearman_rho_length_std:.3f}." if std and self.spearman_rho_length_std == self.spearman_rho_length_std
               else "")
        q = self.qualifier()
        head = (f"**{q[0].upper()}{q[1:]}** (their test scores say little about generalization). " if q else "")
        reason = self.rho_undefined_reason
        rho = (f"Spearman rho(D_C, test exact match) = {self.spearman_rho:.3f} over {len(self.records)} splits."
               if reason is None else f"Spearman rho(D_C, test exact match) over {len(self.records)} splits: {reason}.")
        lines += ["", f"{head}{rho}{mix} "
                      f"Fit: exact match (%) on {self.records[0]['num_fit']:,} seeded rows of each model's own training "
                      f"set; each model trained until it reached {s.fit_target:g} % (checked every {s.check_every} "
                      f"steps, at most {s.max_steps:,} steps)"
                      + (f", then {s.settle_steps:,} more with the learning rate decayed to 0 (steps counts them; the "
                         "fit is the last check's)" if s.settle_steps else "")
                      + (f"; **not reached** at D_C target(s) {', '.join(f'{t:g}' for t in self.not_fitted)}: those "
                         "test scores say little about generalization" if self.not_fitted else "; every model reached it")
                      + ". Test: exact match (%) on a seeded subset of each test set (the same seed for every split)."
                      + self._random_sentence()
                      + (" Unseen templates: the scored test rows whose abstract template no training row has."
                         if novel else "")]
        return "\n".join(lines)

    @property
    def causal_lm(self) -> bool:
        """Whether the models that ran were decoder-only causal LMs (``model_config["kind"]``)."""
        return (self.model_config or {}).get("kind") == "causal_lm"

    def training_sentence(self) -> str:
        """How each model was trained and scored, as the card says it."""
        if not self.causal_lm:
            return "one model per split, trained with the stock Seq2SeqTrainer until it fits its own rows."
        template = (self.model_config or {}).get("prompt_template", self.settings.prompt_template)
        return ("a decoder-only causal LM: one model per split, trained with the stock Trainer until it fits its own "
                f"rows, each row a prompt (the template {template!r} over {self.settings.source}) and a completion "
                f"({self.settings.target_column}, then EOS), the loss taken on the completion only; exact match is "
                "scored on the greedy completions of the prompts.")

    def __str__(self) -> str:
        return self.to_markdown()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON of the curve (Spearman's rho ``None`` when undefined)."""
        rho, std = self.spearman_rho, self.spearman_rho_length_std
        return {"spearman_rho": None if rho != rho else rho,
                "spearman_rho_length_std": None if std is None or std != std else std,
                "all_fitted": self.all_fitted, "not_fitted": self.not_fitted, "records": self.records,
                "random_compound_divergence": self.random_compound_divergence,
                "random_baseline": self.random_baseline, "template_disjoint": self.template_disjoint,
                "settings": self.settings.to_record(), "model": self.model, "model_config": self.model_config,
                "rho_undefined": self.rho_undefined_reason, "qualifier": self.qualifier() or None,
                "seconds": round(self.seconds, 1)}

    def plot(self, path: str, *, title: str | None = None) -> str:
        """Test exact match and fit against D_C (hollow: not fitted, drawn on top), written atomically;
        the title names the model and qualifies the headline (models under the fit target, an undefined
        rho's reason). Returns ``path``."""
        import textwrap

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..atomic import save_figure_atomic

        dc, test = self.compound_divergence, self.test_exact_match
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
        ax.plot(dc, self.fit, "s--", color="0.55", label="fit (exact match on training rows)", zorder=2)
        ax.plot(dc, test, "-", color="C0", zorder=3)
        if self.test_exact_match_length_std:
            ax.plot(dc, self.test_exact_match_length_std, "^:", color="C1", label="test, at the dataset's length mix",
                    zorder=2)
        for x, y, r in zip(dc, test, self.records):  # on top of every line: a hollow marker stays visible
            ax.plot([x], [y], "o", color="C0", mfc="C0" if r["fit_reached"] else "white", mew=1.5, ms=7, zorder=6)
            low = y < 12  # below the point, unless that would leave the axes
            ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 8 if low else -14), ha="center",
                        fontsize=8, zorder=7, annotation_clip=False, clip_on=False)
        ax.plot([], [], "o-", color="C0", label="test exact match (hollow: not fitted)")
        marked = [(x, y) for x, y, r in zip(dc, test, self.records) if r.get("template_statement")]
        if marked:  # issue 43: these test sides hold only templates training lacks
            ax.plot(*zip(*marked), "x", color="tab:red", ms=11, label="also template-disjoint (†)", zorder=5)
        if self.random_compound_divergence is not None:
            ax.axvline(self.random_compound_divergence, color="0.6", lw=0.8, ls="--",
                       label=f"random split of the same sizes (D_C {self.random_compound_divergence:.3f})", zorder=1)
        ax.axhline(self.settings.fit_target, color="0.7", lw=0.8, ls=":", label=f"fit target ({self.settings.fit_target:g} %)",
                   zorder=1)
        ax.set_xlabel("compound divergence D_C of the split")
        ax.set_ylabel("exact match (%)")
        ax.set_ylim(-5, 108)
        xs = list(dc) + ([self.random_compound_divergence] if self.random_compound_divergence is not None else [])
        pad = max(0.02, 0.08 * (max(xs) - min(xs)))  # room for the labels at the ends
        ax.set_xlim(min(xs) - pad, max(xs) + pad)
        head = (title or f"Compositionality curve{f' ({self.model_name})' if self.model_config or self.model else ''}")
        head = head.replace("`", "")  # no Markdown in a plot
        reason = self.rho_undefined_reason
        rho = (f"Spearman rho(D_C, test) = {self.spearman_rho:.2f} over {len(dc)} splits" if reason is None
               else f"Spearman rho(D_C, test) over {len(dc)} splits: {reason}")
        q = self.qualifier()
        sub = rho + (f"; {len(marked)} of them also template-disjoint" if marked else "")
        lines = ([f"{q[0].upper()}{q[1:]}"] if q else []) + [sub]
        text = "\n".join(textwrap.fill(line, 70) for line in [head] + lines)
        ax.set_title(text, fontsize=9.5, color="tab:red" if q else "black")
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        save_figure_atomic(fig, path, dpi=120)
        return path

    def save(self, folder: str, *, if_exists: str = "error", title: str | None = None, plots: bool = False,
             license: str | None = None, provenance: dict[str, Any] | None = None) -> str:
        """Write the sweep's Hub-layout folder with the curve's table in its card, ``curve.png`` and
        ``curve.json``; ``plots``: the split reports' plots too. Returns the folder."""
        import json

        if self.sweep is None:
            raise ValueError("this result has no sweep (the splits): nothing to write")
        head = title or "Compositionality curve"
        text = "\n".join(["## The curve", "", f"Model: {self.model or 'as given'}; {self.training_sentence()}", "",
                          self.to_markdown(), "",
                          "![test exact match against D_C](curve.png)", "", "## The splits"])
        summary = {k: v for k, v in self.to_dict().items() if k != "records"}
        return self.sweep.save(folder, if_exists=if_exists, title=head, plots=plots, license=license, card_text=text,
                               provenance=provenance,
                               extra_files={"curve.png": lambda p: self.plot(p, title=title),
                                            "curve.json": json.dumps(self.to_dict(), indent=2)},
                               metadata={"compositionality_curve": summary})
