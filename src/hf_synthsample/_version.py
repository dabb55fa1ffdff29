"""The package version, in a module of its own so that any module can read it without importing
``hf_synthsample/__init__.py`` (which would tie the reader into an import loop through the package).

Example:
    >>> from hf_synthsample._version import __version__
    >>> __version__.count(".") >= 1
    True
"""

__version__ = "0.1.0"
