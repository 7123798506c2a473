"""Analyses passes query through `passflow.analysis.AnalysisManager`."""

from passflow.analyses.dominance import DominanceInfo, DomTreeNode

__all__ = ["DomTreeNode", "DominanceInfo"]
