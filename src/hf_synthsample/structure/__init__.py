"""Program structure, written once for every language: trees, abstract templates, atoms, compounds.

A structure *language* (:class:`Language`) parses a program into a :class:`Node` tree whose nodes
carry a ``kind`` saying what the abstraction of Oren et al. (2021, Table 2) does with them. From the
tree come :func:`abstract_template`, :func:`atoms` and :func:`compounds` (subtrees of height
1..``max_height`` holding a terminal, Keysers et al. 2020) with their weights
(:func:`example_compound_weights`, :func:`compound_weights`), and the measures that compare datasets
(:func:`frequencies`, :func:`entropy`, :func:`atom_divergence`, :func:`compound_divergence`,
:func:`template_coverage`). One table, :data:`LANGUAGES`, names each built-in language's object
(``"module:attribute"``: a domain's language lives with its domain, the field's formats in
:mod:`hf_synthsample.languages`), imported on first use, so the dependency goes one way; other
packages add theirs through the ``hf_synthsample.languages`` entry point group, and a session
through :func:`register_language`.

Example:
    >>> from hf_synthsample.structure import abstract_template, compounds
    >>> abstract_template('now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify')
    'now => ( @table ) filter param:property:type op entity => notify'
    >>> compounds("(a (b c) d)", language="sexpr", max_height=1)
    ['(b c)', '(a b d)']
"""

from . import distributions, extraction, language, report, summary, tree
from .distributions import *  # noqa: F403 (each module's __all__ is part of the package's)
from .extraction import *  # noqa: F403
from .language import *  # noqa: F403
from .report import *  # noqa: F403
from .summary import *  # noqa: F403
from .tree import *  # noqa: F403

__all__ = [*tree.__all__, *language.__all__, *extraction.__all__, *distributions.__all__, *report.__all__,
           *summary.__all__]
