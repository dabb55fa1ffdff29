"""The package version, in a module of its own: any module reads it here without importing
``hf_synthsample/__init__.py`` (which would tie the reader into an import loop through the package)."""

__version__ = "0.1.0"
