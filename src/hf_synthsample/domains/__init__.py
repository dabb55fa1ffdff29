"""Synthetic domains: grammars, samplers, interpreters/evaluators and salient features.

Domain modules are plain Python (no ``datasets`` import), so they can be used on their own;
the builders in :mod:`hf_synthsample.builders` turn them into datasets.
"""
