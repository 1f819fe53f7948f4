"""The in-memory graph: entities, relations and passages of one graph as compact columns.

knowledge (`KnowledgeGraph`: incidence matrix, documents, expansion), columns (growable
arrays, CSR rows, the relation views), edit (removal), reference (expansion by matrix powers,
the definition the walk is tested against).
"""

from hopgraph.graph.columns import RelationInfo
from hopgraph.graph.knowledge import KnowledgeGraph

__all__ = ["KnowledgeGraph", "RelationInfo"]
