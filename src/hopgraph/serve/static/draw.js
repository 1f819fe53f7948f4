// hopgraph web page, part 2 of 8: the subgraph drawing (cytoscape.js, vendored): its style,
// drawing a query's subgraph, expanding an entity, focusing a passage. The edge labels are
// placed by labels.js.
"use strict";

// ---------------------------------------------------------------------------------------------
// The subgraph drawing

const COLORS = {
  query: "#e8590c", bridge: "#7048e8", entity: "#adb5bd", passage: "#1c7ed6", path: "#e03131",
};

const CY_STYLE = [
  { selector: "node", style: {
    label: "data(short)", "font-size": 11, "text-wrap": "wrap", "text-max-width": 120,
    "text-valign": "bottom", "text-margin-y": 4, color: "#212529",
    "background-color": COLORS.entity, width: 22, height: 22,
    "border-width": 1, "border-color": "#868e96",
  } },
  { selector: 'node[kind = "query"]', style: {
    "background-color": COLORS.query, width: 34, height: 34, "font-weight": "bold",
  } },
  { selector: 'node[kind = "bridge"]', style: {
    "background-color": COLORS.bridge, shape: "diamond", width: 30, height: 30,
  } },
  { selector: 'node[kind = "passage"]', style: {
    "background-color": COLORS.passage, shape: "round-rectangle", width: 34, height: 22,
    "text-valign": "center", "text-margin-y": 0, color: "#fff", "font-weight": "bold",
  } },
  { selector: "node[?on_path]", style: { "border-width": 4, "border-color": COLORS.path } },
  { selector: "node.expanded", style: { "border-style": "double" } },
  { selector: "node:selected", style: { "overlay-opacity": 0.15, "overlay-color": "#000" } },
  // Edge labels stay level (their boxes are what placeEdgeLabels keeps apart) and are moved
  // by placeEdgeLabels through text-margin-x/y.
  { selector: "edge", style: {
    width: 1.5, "line-color": "#ced4da", "target-arrow-color": "#ced4da",
    "target-arrow-shape": "triangle", "curve-style": "bezier",
    label: "data(short)", "font-size": 9, color: "#495057", "text-rotation": "none",
    "text-background-color": "#fff", "text-background-opacity": 0.9,
    "text-background-padding": 2,
  } },
  { selector: 'edge[kind = "evidence"]', style: { "line-style": "dashed" } },
  // "name" links a bridge to an entity named inside its name ("X's influence" -> "X").
  { selector: 'edge[kind = "name"]', style: { "line-style": "dotted", "font-style": "italic" } },
  { selector: "edge[?on_path]", style: {
    width: 4, "line-color": COLORS.path, "target-arrow-color": COLORS.path, color: "#c92a2a",
  } },
  // A label with no room of its own is hidden, and shown while the pointer is on its edge.
  { selector: "edge.label-hidden", style: { label: "" } },
  { selector: "edge.label-hidden.hovered", style: { label: "data(short)", "z-index": 100 } },
];

let cy = null;
let passageTexts = new Map(); // passage id -> text, from the last query's results

function initDrawing() {
  if (typeof window.cytoscape !== "function") {
    $("subgraph-status").textContent = "The drawing library did not load.";
    return;
  }
  cy = window.cytoscape({
    container: $("subgraph"), style: CY_STYLE, elements: [],
    minZoom: 0.2, maxZoom: 3,
  });
  window.hopgraphCy = cy; // read by tests and handy in the console
  const box = $("subgraph");
  // Native tooltips: the full text of the element under the pointer.
  cy.on("mouseover", "node, edge", (event) => {
    box.title = event.target.data("full") || "";
    if (event.target.isEdge()) event.target.addClass("hovered");
  });
  cy.on("mouseout", "node, edge", (event) => {
    box.title = "";
    event.target.removeClass("hovered");
  });
  // A node dragged elsewhere moves its edges: place their labels again.
  cy.on("dragfree", "node", () => showCounts(placeEdgeLabels()));
  cy.on("tap", 'node[kind != "passage"]', (event) => expandEntity(event.target));
  cy.on("tap", 'node[kind = "passage"]', (event) => focusPassage(event.target));
}

/** Node and edge objects of the contract -> Cytoscape elements (labels shortened). */
function toElements(subgraph) {
  const names = new Map((subgraph.nodes || []).map((n) => [n.id, n.label]));
  const nameOf = (id) => names.get(id) ?? (cy ? cy.getElementById(id).data("label") : null);
  const nodes = (subgraph.nodes || []).map((n) => {
    const passage = n.kind === "passage";
    const text = passage
      ? n.text || passageTexts.get(n.id.replace(/^p:/, "")) || n.label
      : n.label;
    const short = passage ? (n.rank ? `#${n.rank}` : "¶") : truncate(n.label, 40);
    return { group: "nodes", data: { ...n, short, full: text } };
  });
  const edges = (subgraph.edges || []).map((e) => ({
    group: "edges",
    data: { ...e, short: truncate(edgeWords(e, nameOf), 32), full: e.label || "" },
  }));
  return [...nodes, ...edges];
}

/** An edge's label without the names its ends already show: "Leonhard Euler was a student
 * of Johann Bernoulli" between those two entities reads "was a student of". */
function edgeWords(edge, nameOf) {
  const text = (edge.label || "").trim();
  let words = text;
  const source = nameOf(edge.source);
  const target = edge.kind === "relation" ? nameOf(edge.target) : null;
  if (source && words.toLowerCase().startsWith(`${source.toLowerCase()} `)) {
    words = words.slice(source.length + 1);
  }
  if (target && words.toLowerCase().endsWith(` ${target.toLowerCase()}`)) {
    words = words.slice(0, words.length - target.length - 1);
  }
  return words.trim() || text;
}

/** Lay the drawing out, then place the edge labels; `done` gets the hidden labels' count. */
function layout(options = {}, done = () => {}) {
  const roots = cy.nodes('[kind = "query"]');
  const base = roots.length
    // Left to right from the query entities: edges run mostly across, so labels stay legible.
    ? { name: "breadthfirst", directed: false, roots, direction: "rightward", spacingFactor: 1.1 }
    : { name: "cose", animate: false };
  const run = cy.layout({ ...base, fit: true, padding: 30, animate: false, ...options });
  run.one("layoutstop", () => done(placeEdgeLabels()));
  run.run();
}

/** The drawing's status line: its counts, and how to read a hidden label. */
function showCounts(hidden, prefix = "") {
  const counts = `${cy.nodes().length} nodes, ${cy.edges().length} edges`;
  const note = hidden
    ? `; ${hidden} edge label${hidden === 1 ? "" : "s"} hidden for room (point at an edge to `
      + "read it)"
    : "";
  $("subgraph-status").textContent = `${prefix}${counts}${note}.`;
}

/** Draw a query's subgraph; null clears the drawing. */
function drawSubgraph(subgraph) {
  if (!cy) return;
  cy.elements().remove();
  $("subgraph-status").textContent = "";
  if (!subgraph) return;
  cy.add(toElements(subgraph));
  if (cy.nodes().empty()) {
    $("subgraph-status").textContent = "Nothing to draw.";
    return;
  }
  layout({}, (hidden) => showCounts(hidden));
}

// ---------------------------------------------------------------------------------------------
// Expanding an entity, focusing a passage

/** Add an entity's neighbours and relations (GET /entities/{name}) to the drawing. */
async function expandEntity(node) {
  const name = node.data("label");
  const signal = graphSignal();
  $("subgraph-status").textContent = `Loading ${name}…`;
  try {
    const data = await graphApi("GET", `/entities/${encodeURIComponent(name)}`);
    if (signal.aborted || node.removed()) return; // another graph, or another drawing
    const fresh = toElements(data.subgraph || relationsSubgraph(data))
      .filter((element) => cy.getElementById(element.data.id).empty());
    // Nodes before edges, and only edges whose two ends are drawn.
    const added = cy.add(fresh.filter((e) => e.group === "nodes"));
    cy.add(fresh.filter((e) => e.group === "edges" && hasNode(e.data.source)
      && hasNode(e.data.target)));
    node.addClass("expanded");
    // Start the new nodes on a ring around the clicked one, then let the force layout settle.
    const { x, y } = node.position();
    added.positions((_, i) => {
      const angle = (2 * Math.PI * i) / added.length;
      return { x: x + 80 * Math.cos(angle), y: y + 80 * Math.sin(angle) };
    });
    const shown = (data.relations || []).length;
    const total = data.total_relations ?? shown;
    const prefix = `${data.name || name}: ${shown} of ${total} relations, `
      + `${added.length} new nodes; `;
    if (added.length) {
      layout({ name: "cose", randomize: false, animate: false },
        (hidden) => showCounts(hidden, prefix));
    } else {
      showCounts(placeEdgeLabels(), prefix);
    }
  } catch (error) {
    if (isAborted(error) || signal.aborted) return;
    // Said in the drawing's status line: the results stay (they are this query's, not stale).
    $("subgraph-status").textContent = `Could not load ${name}: ${errorText(error)}`;
  }
}

function hasNode(id) {
  return cy.getElementById(id).nonempty();
}

/** If the server sent relations but no subgraph, build one from them. */
function relationsSubgraph(data) {
  const nodes = new Map();
  const edges = (data.relations || []).map((r) => {
    for (const end of [r.subject, r.object]) {
      nodes.set(`e:${end.id}`, { id: `e:${end.id}`, label: end.name, kind: "entity",
        on_path: false, rank: null });
    }
    return { id: `r:${r.id}`, source: `e:${r.subject.id}`, target: `e:${r.object.id}`,
      label: r.text, kind: "relation", on_path: false, score: null };
  });
  return { nodes: [...nodes.values()], edges };
}

/** Clicking a passage node scrolls to its card in the results. */
function focusPassage(node) {
  const id = node.id().replace(/^p:/, "");
  const card = document.querySelector(`#graph-results [data-passage="${CSS.escape(id)}"]`)
    || document.querySelector(`[data-passage="${CSS.escape(id)}"]`);
  if (!card) return;
  document.querySelectorAll(".passage.focus").forEach((c) => c.classList.remove("focus"));
  card.classList.add("focus");
  card.scrollIntoView({ behavior: "smooth", block: "nearest" });
}
