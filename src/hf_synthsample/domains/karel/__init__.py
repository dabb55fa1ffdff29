"""Karel (Bunel et al. 2018; Shin et al. 2019): DSL (``dsl``), worlds (``world``), interpreter
(``interpreter``), program and I/O samplers (``programs``, ``io``), salient variables
(``features``) and the field's JSON Lines format (``jsonl``). The dataset builder is
:mod:`hf_synthsample.builders.karel`; the execution metric ``metrics/karel_execution``.
"""
