"""The subgraph behind a retrieval, as nodes and edges to draw: query entities, bridge
entities, the relations used, the passages returned, and the path that led to each passage.

Node ids are "e:<entity id>" and "p:<passage id>". Relation edges go subject -> object;
"name" edges go from a bridge to an entity named inside its name (the default method walks
on from both); evidence edges go from the entity that led to a passage (its bridge, or an
end of the relation that cites it) to the passage. `on_path` marks, for every returned
passage reached through a bridge, the way back to a query entity: query entity -> relation
-> bridge (-> named in -> relation -> bridge ...) -> passage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.link import EntityLinker
from hopgraph.records import Retrieval

MAX_ENTITY_RELATIONS = 50  # relations drawn around one entity (a hub has thousands)


class Drawing:
    """Nodes and edges, each added once (a later `on_path` upgrades an earlier one)."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: dict[str, dict[str, Any]] = {}

    def entity(self, index: int, kind: str = "entity", on_path: bool = False) -> str:
        """Add entity `index` (a graph index); a stronger kind wins (query > bridge)."""
        node_id = f"e:{self.graph.entity_ids[index]}"
        node = self.nodes.setdefault(node_id, {"id": node_id,
                                               "label": self.graph.entity_names[index],
                                               "kind": kind, "on_path": False, "rank": None})
        order = ("entity", "bridge", "query")
        if order.index(kind) > order.index(node["kind"]):
            node["kind"] = kind
        node["on_path"] = node["on_path"] or on_path
        return node_id

    def relation(self, index: int, on_path: bool = False, score: float | None = None) -> str:
        """Add relation `index` as an edge between its entities (and those entities)."""
        g = self.graph
        source = self.entity(int(g.subjects[index]), on_path=on_path)
        target = self.entity(int(g.objects[index]), on_path=on_path)
        edge_id = f"r:{g.relation_ids[index]}"
        edge = self.edges.setdefault(edge_id, {
            "id": edge_id, "source": source, "target": target,
            "label": g.relation_texts[index], "kind": "relation", "on_path": False,
            "score": None})
        edge["on_path"] = edge["on_path"] or on_path
        if score is not None:
            edge["score"] = round(score, 6)
        return edge_id

    def passage(self, passage_id: str, rank: int, text: str) -> str:
        """Add a returned passage, labelled by its rank."""
        node_id = f"p:{passage_id}"
        self.nodes[node_id] = {"id": node_id, "label": f"#{rank}", "kind": "passage",
                               "on_path": False, "rank": rank, "text": text}
        return node_id

    def named_in(self, outer: int, inner: int, on_path: bool) -> None:
        """An edge from an entity to one named inside its name ("Johann Bernoulli's
        influence" -> "Johann Bernoulli"): the default method walks on from both."""
        source, target = self.entity(outer, on_path=on_path), self.entity(inner, on_path=on_path)
        edge = self.edges.setdefault(f"{source}>{target}", {
            "id": f"{source}>{target}", "source": source, "target": target,
            "label": "named in", "kind": "name", "on_path": False, "score": None})
        edge["on_path"] = edge["on_path"] or on_path

    def evidence(self, entity_node: str, passage_node: str, label: str, on_path: bool) -> None:
        """An edge from the entity that led to a passage to the passage."""
        edge_id = f"{entity_node}>{passage_node}"
        edge = self.edges.setdefault(edge_id, {
            "id": edge_id, "source": entity_node, "target": passage_node, "label": label,
            "kind": "evidence", "on_path": False, "score": None})
        edge["on_path"] = edge["on_path"] or on_path
        if on_path:
            self.nodes[passage_node]["on_path"] = True

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        """{"nodes": [...], "edges": [...]} in the order they were added."""
        return {"nodes": list(self.nodes.values()), "edges": list(self.edges.values())}


def for_retrieval(graph: KnowledgeGraph, linker: EntityLinker, result: Retrieval
                  ) -> dict[str, list[dict[str, Any]]]:
    """The drawing of one retrieval over the graph (and entity linker) it ran on; ids it
    does not know are left out."""
    draw = Drawing(graph)
    query: set[int] = set()
    for entity in result.entities:
        index = graph.entity_index.get(str(entity.get("id", "")))
        if index is not None:
            draw.entity(index, "query")
            query.add(index)
    bridge_via: dict[int, int] = {}  # bridge entity index -> relation it was reached through
    for found in result.bridges:
        reached = graph.entity_index.get(str(found["id"]))
        relation = graph.relation_index.get(str(found["relation"]))
        if reached is not None and relation is not None:
            draw.entity(reached, "bridge")
            bridge_via.setdefault(reached, relation)
    inner_of = {inner.index: outer for outer in bridge_via
                for inner in linker.link(graph.entity_names[outer], whole=False)
                if inner.index not in bridge_via and inner.index != outer}
    for relation_hit in result.relations:
        index = graph.relation_index.get(relation_hit.id)
        if index is not None:
            draw.relation(index, score=relation_hit.score)
    for rank, hit in enumerate(result.passages, start=1):
        node = draw.passage(hit.id, rank, hit.text)
        for rid in hit.via:
            relation = graph.relation_index.get(rid)
            if relation is None:
                continue
            ends = (int(graph.subjects[relation]), int(graph.objects[relation]))
            bridge = next((e for e in ends if bridge_via.get(e) == relation), None)
            on_path = bridge is not None
            if bridge is not None:
                _mark_path(draw, graph, _Walk(bridge_via, inner_of, query), bridge)
            source = draw.entity(bridge if bridge is not None else ends[0], on_path=on_path)
            draw.evidence(source, node, graph.relation_texts[relation], on_path)
    return draw.as_dict()


@dataclass
class _Walk:
    """How the default method reached its bridges: through which relation, from which
    outer name (a chain that went on from a name inside a bridge's name)."""

    bridge_via: dict[int, int]
    inner_of: dict[int, int]
    query: set[int]


def _mark_path(draw: Drawing, graph: KnowledgeGraph, walk: _Walk, bridge: int) -> None:
    """Mark the way back from `bridge` to a query entity: relations through which bridges
    were reached, and names inside bridges' names."""
    seen: set[int] = set()
    node = bridge
    while node not in seen and node not in walk.query:
        seen.add(node)
        if node in walk.bridge_via:
            relation = walk.bridge_via[node]
            draw.relation(relation, on_path=True)
            ends = (int(graph.subjects[relation]), int(graph.objects[relation]))
            node = ends[1] if ends[0] == node else ends[0]
        elif node in walk.inner_of:
            draw.named_in(walk.inner_of[node], node, on_path=True)
            node = walk.inner_of[node]
        else:
            return


def around_entity(graph: KnowledgeGraph, index: int, limit: int = MAX_ENTITY_RELATIONS
                  ) -> dict[str, Any]:
    """An entity, its relations (the first `limit`) and neighbours, and their drawing."""
    relations = graph.relations_of(np.array([index])).tolist()
    draw = Drawing(graph)
    draw.entity(index)
    listed = []
    for r in relations[:limit]:
        draw.relation(r)
        s, o = int(graph.subjects[r]), int(graph.objects[r])
        listed.append({"id": graph.relation_ids[r], "text": graph.relation_texts[r],
                       "subject": {"id": graph.entity_ids[s], "name": graph.entity_names[s]},
                       "object": {"id": graph.entity_ids[o], "name": graph.entity_names[o]},
                       "passages": len(graph.passage_indices(r))})
    ends = {int(graph.subjects[r]) for r in relations[:limit]} | {
        int(graph.objects[r]) for r in relations[:limit]}
    neighbours = sorted(ends - {index})
    return {"id": graph.entity_ids[index], "name": graph.entity_names[index],
            "relations": listed, "total_relations": len(relations),
            "neighbours": [{"id": graph.entity_ids[e], "name": graph.entity_names[e]}
                           for e in neighbours],
            "subgraph": draw.as_dict()}
