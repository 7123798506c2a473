"""Differential suite: xDSL's shipped filecheck tests through xdsl-opt and
passflow-opt, in process, compared chunk by chunk (docs/differential.md)."""
