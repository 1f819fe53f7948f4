"""What a process holds of an opened graph: its current version (`version`: one immutable
value, and `advance` to the next), and the state that makes the next version by following
other processes and by writing (`opened`)."""

from hopgraph.state.opened import GraphState
from hopgraph.state.retrievers import Built, Start
from hopgraph.state.version import CLOSED, Changes, GraphVersion, advance

__all__ = ["CLOSED", "Built", "Changes", "GraphState", "GraphVersion", "Start", "advance"]
