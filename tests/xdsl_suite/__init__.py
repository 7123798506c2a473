"""xDSL's shipped lit suite run with `xdsl-opt` pointing at passflow-xdsl-opt
(docs/conformance.md, "xDSL's own suite")."""
