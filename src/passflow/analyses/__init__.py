"""Analyses passes query through `passflow.analysis.AnalysisManager`."""

from passflow.analyses.dominance import DominanceInfo, DomTreeNode
from passflow.analyses.liveness import Liveness, LivenessBlockInfo

__all__ = ["DomTreeNode", "DominanceInfo", "Liveness", "LivenessBlockInfo"]
