"""Program structure, written once for every language: trees, abstract templates, atoms, compounds.

A program (ThingTalk, a SCAN/COGS logical form, a Karel program, a calculator expression...) is
parsed by a per-language *adapter* into a small language-agnostic :class:`Node` tree. Each node has
a ``label`` (the atom), its ``children`` and a ``kind`` saying what the abstraction of Oren et al.
(2021, Table 2) does with it: ``"entity"`` (values), ``"table"``, ``"property"``, ``"type"``,
``"op"``, ``"func"``, ``"func_mod"``, or ``""`` (kept as it is). From the tree:

* :func:`abstract_template` prints the program with every abstractable node replaced by its
  category token (``entity``, ``@table``, ``property``, ``type``, ``op``, ``func``, ``func_mod``):
  two programs share a template exactly when they differ only in those nodes.
* :func:`atoms` lists the node labels (values abstracted to ``entity``).
* :func:`compounds` lists the subtrees of height 1..``max_height`` (each node with its children
  down to that depth, Keysers et al. 2020) that contain at least one terminal of the program,
  values abstracted; :func:`example_compound_weights` gives Keysers et al.'s weight of each
  compound in each example, :func:`compound_weights` a pool-wide variant (one weight per compound).
* :func:`frequencies` counts each distinct atom / compound once per example (Keysers et al.
  2020): the distributions behind entropies, divergences and the CMaxEnt objective.
* :func:`entropy`, :func:`chernoff_coefficient`, :func:`atom_divergence` (alpha 0.5) and
  :func:`compound_divergence` (alpha 0.1) compare datasets; :func:`template_coverage` and
  :func:`plot_template_frequencies` are the diagnostics of a pool.

Adapters are registered by name with :func:`register_language`; ``"sexpr"`` (``(label child
child ...)`` s-expressions), ``"thingtalk"`` (ThingTalk 1.x as in Schema2QA, registered by
:mod:`hf_synthsample.domains.thingtalk`) and ``"scan"``, ``"scan_actions"``, ``"cogs"``,
``"karel"`` and ``"calculator"`` (registered by :mod:`hf_synthsample.languages`) are built in.
The adapter modules import this one and register themselves when imported; this module imports
them by name (:data:`ADAPTER_MODULES`) on the first lookup, so the dependency goes one way.

Example:
    >>> from hf_synthsample.structure import abstract_template, compounds
    >>> abstract_template('now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify')
    'now => ( @table ) filter param:property:type op entity => notify'
    >>> compounds("(a (b c) d)", language="sexpr", max_height=1)
    ['(b c)', '(a b d)']
"""

from . import distributions, extraction, report, tree
from .distributions import *  # noqa: F403 (each module's __all__ is part of the package's)
from .distributions import _example_weights, _occurrence_supers  # noqa: F401 (read by splits._data)
from .extraction import *  # noqa: F403
from .report import *  # noqa: F403
from .tree import *  # noqa: F403

__all__ = [*tree.__all__, *extraction.__all__, *distributions.__all__, *report.__all__]
