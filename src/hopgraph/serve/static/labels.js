// hopgraph web page, part 3 of 8: edge labels that do not overlap. placeEdgeLabels moves each
// label of the subgraph drawing (draw.js's `cy`) to a clear spot, or hides it.
"use strict";

// ---------------------------------------------------------------------------------------------
// Edge labels that do not overlap
//
// Each label is level text at a point of its edge. In a fixed order (the path to the answer
// first, then relations, "named in" and evidence edges, each in the server's order) a label
// takes the first spot, of a fixed list along and beside its edge, whose box is clear of the
// labels placed before it: clear of every node and node label if it can be, else of node
// shapes, else only of other edge labels. A label with no such spot is hidden (it shows while
// the pointer is on its edge). Positions depend only on the layout, so the result is the same
// on every run, and no two edge labels shown ever overlap.

const LABEL_ONLY = {
  includeNodes: false, includeEdges: false, includeLabels: true, includeMainLabels: true,
  includeSourceLabels: false, includeTargetLabels: false, includeOverlays: false,
  includeUnderlays: false, includeOutlines: false,
};
const NODE_WITH_LABEL = {
  includeNodes: true, includeLabels: true, includeOverlays: false, includeUnderlays: false,
  includeOutlines: false,
};
const NODE_ONLY = { ...NODE_WITH_LABEL, includeLabels: false };
const ALONG = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]; // fractions of the edge, tried in order
const BESIDE = [0.5, 0.35, 0.65]; // then just beside the edge at these fractions
const LABEL_GAP = 1; // model units kept between two boxes
const KIND_ORDER = { relation: 0, name: 1, evidence: 2 };

function boxesOverlap(a, b) {
  return a.x1 < b.x2 + LABEL_GAP && b.x1 < a.x2 + LABEL_GAP
    && a.y1 < b.y2 + LABEL_GAP && b.y1 < a.y2 + LABEL_GAP;
}

/** The point at fraction t of an edge's drawn line (straight, or bezier when it curves). */
function pointAlong(edge, t) {
  const start = edge.sourceEndpoint();
  const end = edge.targetEndpoint();
  const controls = edge.controlPoints() || [];
  if (controls.length === 1) { // a quadratic curve: parallel edges between two nodes
    const [c] = controls;
    const u = 1 - t;
    return { x: u * u * start.x + 2 * u * t * c.x + t * t * end.x,
      y: u * u * start.y + 2 * u * t * c.y + t * t * end.y };
  }
  // Otherwise the polyline through the control points (none: the straight line).
  const points = [start, ...controls, end];
  const lengths = points.slice(1).map((p, i) => Math.hypot(p.x - points[i].x, p.y - points[i].y));
  let left = t * lengths.reduce((sum, length) => sum + length, 0);
  for (let i = 0; i < lengths.length; i += 1) {
    if (left <= lengths[i] || i === lengths.length - 1) {
      const f = lengths[i] ? Math.min(1, left / lengths[i]) : 0;
      return { x: points[i].x + f * (points[i + 1].x - points[i].x),
        y: points[i].y + f * (points[i + 1].y - points[i].y) };
    }
    left -= lengths[i];
  }
  return start;
}

/** The spots tried for an edge's label, as label centres: on the edge, then beside it. */
function labelSpots(edge, width, height) {
  const spots = ALONG.map((t) => pointAlong(edge, t));
  const start = edge.sourceEndpoint();
  const end = edge.targetEndpoint();
  const across = Math.abs(end.x - start.x) >= Math.abs(end.y - start.y);
  // Beside a mostly level edge is above or below it; beside a steep one, left or right.
  const dx = across ? 0 : width / 2 + 3;
  const dy = across ? height / 2 + 3 : 0;
  for (const t of BESIDE) {
    const p = pointAlong(edge, t);
    spots.push({ x: p.x - dx, y: p.y - dy }, { x: p.x + dx, y: p.y + dy });
  }
  return spots;
}

/** Place every edge label (see above); returns how many are hidden. */
function placeEdgeLabels() {
  if (!cy) return 0;
  const edges = cy.edges();
  cy.batch(() => {
    edges.removeClass("label-hidden");
    edges.style({ "text-margin-x": 0, "text-margin-y": 0 });
  });
  const nodes = cy.nodes().filter((n) => n.visible());
  const obstacleSets = [
    nodes.map((n) => n.boundingBox(NODE_WITH_LABEL)),
    nodes.map((n) => n.boundingBox(NODE_ONLY)),
    [],
  ];
  const order = edges.toArray()
    .map((edge, index) => ({ edge, index }))
    .sort((a, b) => (Number(!a.edge.data("on_path")) - Number(!b.edge.data("on_path")))
      || ((KIND_ORDER[a.edge.data("kind")] ?? 3) - (KIND_ORDER[b.edge.data("kind")] ?? 3))
      || (a.index - b.index))
    .map(({ edge }) => edge);
  const placed = [];
  const moves = [];
  const hide = [];
  for (const edge of order) {
    if (!edge.visible() || !edge.data("short")) continue;
    const box = edge.boundingBox(LABEL_ONLY);
    if (!(box.w > 0 && box.h > 0)) continue;
    // Where the label sits now (margins 0) and how its box lies around that point.
    const anchor = edge.midpoint();
    const offset = { x: (box.x1 + box.x2) / 2 - anchor.x, y: (box.y1 + box.y2) / 2 - anchor.y };
    const boxAt = (spot) => ({
      x1: spot.x - box.w / 2, x2: spot.x + box.w / 2, y1: spot.y - box.h / 2,
      y2: spot.y + box.h / 2,
    });
    const spots = labelSpots(edge, box.w, box.h);
    let found = null;
    for (const obstacles of obstacleSets) {
      found = spots.find((spot) => {
        const candidate = boxAt(spot);
        return !placed.some((other) => boxesOverlap(candidate, other))
          && !obstacles.some((other) => boxesOverlap(candidate, other));
      });
      if (found) break;
    }
    if (!found) {
      hide.push(edge);
      continue;
    }
    placed.push(boxAt(found));
    moves.push([edge, found.x - offset.x - anchor.x, found.y - offset.y - anchor.y]);
  }
  cy.batch(() => {
    for (const [edge, x, y] of moves) edge.style({ "text-margin-x": x, "text-margin-y": y });
    for (const edge of hide) edge.addClass("label-hidden");
  });
  return hide.length;
}
