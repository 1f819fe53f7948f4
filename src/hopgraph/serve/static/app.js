// hopgraph web page: query, compare graph and naive retrieval, draw the subgraph, ask, and
// manage documents. Plain JS, no build step. Every piece of server data goes into the DOM as
// text (textContent / text nodes), never as HTML.
"use strict";

const KEY_STORAGE = "hopgraph.apiKey";
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------------------------
// DOM helpers

/** Create an element; string children become text nodes, so they are never parsed as HTML. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace the children of a container. */
function fill(container, children) {
  container.replaceChildren(...children);
}

function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** The last part of a path-like document id (the whole id is the title). */
function baseName(docId) {
  return docId.split("/").filter(Boolean).pop() || docId;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// ---------------------------------------------------------------------------------------------
// API calls, with the key (when one is stored) and a retry after asking for it on a 401

class ApiError extends Error {}

/** FastAPI sends {"detail": "..."} or, for schema errors, {"detail": [{"loc", "msg"}]}. */
function detailText(body, response) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ");
  }
  return `${response.status} ${response.statusText || "error"}`;
}

let keyRequest = null; // one pending "please give a key" prompt, shared by concurrent calls

/** Show the key form and resolve with the key the user enters. */
function askForKey(rejected) {
  if (keyRequest) return keyRequest;
  const form = $("auth");
  $("auth-note").textContent = rejected
    ? "That key was rejected; enter another one."
    : "The key is kept in this browser (localStorage).";
  form.hidden = false;
  $("api-key").value = "";
  $("api-key").focus();
  keyRequest = new Promise((resolve) => {
    form.onsubmit = (event) => {
      event.preventDefault();
      const key = $("api-key").value.trim();
      if (!key) return;
      localStorage.setItem(KEY_STORAGE, key);
      form.hidden = true;
      keyRequest = null;
      resolve(key);
    };
  });
  return keyRequest;
}

/** fetch() an API path; returns the Response when ok, throws ApiError with `detail` if not. */
async function request(method, path, body) {
  for (;;) {
    const key = localStorage.getItem(KEY_STORAGE);
    const headers = { Accept: "application/json, text/event-stream" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 401) {
      await askForKey(Boolean(key));
      continue; // retry with the new key
    }
    if (!response.ok) {
      const data = await response.json().catch(() => null);
      throw new ApiError(detailText(data, response));
    }
    return response;
  }
}

async function api(method, path, body) {
  return (await request(method, path, body)).json();
}

/** Run an action with the buttons disabled; any error goes to the error box. */
async function busy(action) {
  const buttons = [$("run"), $("ask")];
  buttons.forEach((b) => (b.disabled = true));
  document.body.setAttribute("aria-busy", "true");
  showError("");
  try {
    await action();
  } catch (error) {
    showError(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
  } finally {
    buttons.forEach((b) => (b.disabled = false));
    document.body.removeAttribute("aria-busy");
  }
}

// ---------------------------------------------------------------------------------------------
// Results

function passageItem(passage, rank, extra) {
  const relations = passage.relations || [];
  return el(
    "li",
    { class: "passage", "data-passage": passage.id },
    el(
      "div",
      { class: "passage-head" },
      el("span", { class: "rank" }, `#${rank}`),
      el("span", { class: "score", title: "score" }, Number(passage.score).toFixed(3)),
      extra,
      passage.doc_id
        ? el("span", { class: "doc muted", title: passage.doc_id }, baseName(passage.doc_id))
        : null,
    ),
    el("p", { class: "text" }, passage.text),
    relations.length
      ? el("ul", { class: "via", "aria-label": "relations that led to this passage" },
        relations.map((r) => el("li", {}, r)))
      : null,
  );
}

function renderPassages(container, passages, others, empty) {
  if (!passages.length) {
    fill(container, [el("li", { class: "placeholder" }, empty)]);
    return;
  }
  // Mark what the other column missed: that is the point of the comparison.
  const seen = new Set(others.map((p) => p.id));
  fill(container, passages.map((p, i) =>
    passageItem(p, i + 1, others.length && !seen.has(p.id)
      ? el("span", { class: "badge" }, "only here") : null)));
}

function renderList(container, items, empty) {
  fill(container, items.length ? items : [el("li", { class: "muted" }, empty)]);
}

function renderFound(data) {
  renderList($("entities"), (data.entities || []).map((e) =>
    el("li", {}, el("strong", {}, e.name),
      el("span", { class: "muted" },
        ` matched “${e.matched}” (${e.how}, ${Number(e.score).toFixed(3)})`))), "none");
  renderList($("relations"), (data.relations || []).map((r) =>
    el("li", {}, r.text, el("span", { class: "muted" },
      r.score === null || r.score === undefined ? "" : ` ${Number(r.score).toFixed(3)}`))),
  "none");
  renderList($("notes"), (data.notes || []).map((n) => el("li", {}, n)), "none");
}

function renderTimings(graph, naive) {
  const stages = [...new Set([...Object.keys(graph), ...Object.keys(naive)])];
  // "total" last, whatever order the server sent.
  stages.sort((a, b) => (a === "total") - (b === "total"));
  const cell = (value) => el("td", { class: "num" },
    value === undefined ? "–" : Number(value).toFixed(1));
  const table = el(
    "table",
    { class: "timings" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, "stage"),
      el("th", { scope: "col", class: "num" }, "graph"),
      el("th", { scope: "col", class: "num" }, "naive"))),
    el("tbody", {}, stages.map((stage) =>
      el("tr", { class: stage === "total" ? "total" : null },
        el("th", { scope: "row" }, stage), cell(graph[stage]), cell(naive[stage])))),
  );
  fill($("timings"), [stages.length ? table : el("p", { class: "muted" }, "none")]);
}

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
  { selector: "edge", style: {
    width: 1.5, "line-color": "#ced4da", "target-arrow-color": "#ced4da",
    "target-arrow-shape": "triangle", "curve-style": "bezier",
    label: "data(short)", "font-size": 9, color: "#495057", "text-rotation": "autorotate",
    "text-background-color": "#fff", "text-background-opacity": 0.85,
    "text-background-padding": 2,
  } },
  { selector: 'edge[kind = "evidence"]', style: { "line-style": "dashed" } },
  // "name" links a bridge to an entity named inside its name ("X's influence" -> "X").
  { selector: 'edge[kind = "name"]', style: { "line-style": "dotted", "font-style": "italic" } },
  { selector: "edge[?on_path]", style: {
    width: 4, "line-color": COLORS.path, "target-arrow-color": COLORS.path, color: "#c92a2a",
  } },
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
  cy.on("mouseover", "node, edge", (event) => { box.title = event.target.data("full") || ""; });
  cy.on("mouseout", "node, edge", () => { box.title = ""; });
  cy.on("tap", 'node[kind != "passage"]', (event) => expandEntity(event.target));
  cy.on("tap", 'node[kind = "passage"]', (event) => focusPassage(event.target));
}

/** Node and edge objects of the contract -> Cytoscape elements (labels shortened). */
function toElements(subgraph) {
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
    data: { ...e, short: truncate(e.label || "", 32), full: e.label || "" },
  }));
  return [...nodes, ...edges];
}

function layout(options = {}) {
  const roots = cy.nodes('[kind = "query"]');
  const base = roots.length
    // Left to right from the query entities: edges run mostly across, so labels stay legible.
    ? { name: "breadthfirst", directed: false, roots, direction: "rightward", spacingFactor: 1.1 }
    : { name: "cose", animate: false };
  cy.layout({ ...base, fit: true, padding: 30, animate: false, ...options }).run();
}

function drawSubgraph(subgraph) {
  if (!cy) return;
  cy.elements().remove();
  cy.add(toElements(subgraph || {}));
  layout();
  const counts = `${cy.nodes().length} nodes, ${cy.edges().length} edges`;
  $("subgraph-status").textContent = cy.nodes().length ? counts : "Nothing to draw.";
}

/** Add an entity's neighbours and relations (GET /entities/{name}) to the drawing. */
async function expandEntity(node) {
  const name = node.data("label");
  showError("");
  $("subgraph-status").textContent = `Loading ${name}…`;
  try {
    const data = await api("GET", `/entities/${encodeURIComponent(name)}`);
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
    if (added.length) layout({ name: "cose", randomize: false, animate: false });
    const shown = (data.relations || []).length;
    const total = data.total_relations ?? shown;
    $("subgraph-status").textContent =
      `${data.name || name}: ${shown} of ${total} relations, ${added.length} new nodes.`;
  } catch (error) {
    $("subgraph-status").textContent = "";
    showError(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
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

// ---------------------------------------------------------------------------------------------
// Query and ask

function formValues() {
  return {
    question: $("question").value.trim(),
    method: $("method").value,
    top_k: Math.max(1, parseInt($("top-k").value, 10) || 5),
  };
}

async function runQuery() {
  const body = formValues();
  if (!body.question) return showError("Type a question first.");
  await busy(async () => {
    const data = await api("POST", "/query", body);
    const graph = data.graph || [];
    const naive = data.naive || [];
    passageTexts = new Map([...naive, ...graph].map((p) => [p.id, p.text]));
    renderPassages($("graph-results"), graph, naive, "No passages.");
    renderPassages($("naive-results"), naive, graph, "No passages.");
    renderFound(data);
    renderTimings(data.timings_ms || {}, data.naive_timings_ms || {});
    drawSubgraph(data.subgraph);
  });
}

async function runAsk() {
  const body = formValues();
  if (!body.question) return showError("Type a question first.");
  const answer = $("answer");
  $("answer-panel").hidden = false;
  answer.textContent = "";
  answer.classList.remove("message");
  fill($("answer-passages"), []);
  await busy(async () => {
    const response = await request("POST", "/ask", body);
    const type = response.headers.get("Content-Type") || "";
    if (type.startsWith("text/event-stream")) {
      await readEvents(response, {
        evidence: (data) => showEvidence(data.passages || []),
        token: (data) => answer.append(data.text || ""),
        done: () => {},
        error: (data) => showError(data.detail || "The answer stream failed."),
      });
    } else {
      const data = await response.json();
      answer.textContent = data.answer || data.message || "";
      answer.classList.toggle("message", !data.answer);
      showEvidence(data.passages || []);
    }
  });
}

function showEvidence(passages) {
  fill($("answer-passages"), passages.map((p, i) => passageItem(p, i + 1, null)));
}

/** Read a text/event-stream body with fetch's ReadableStream; call handlers[event](data). */
async function readEvents(response, handlers) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const dispatch = (block) => {
    let event = "message";
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length || !handlers[event]) return;
    let parsed;
    try {
      parsed = JSON.parse(data.join("\n"));
    } catch {
      parsed = { text: data.join("\n") };
    }
    handlers[event](parsed);
  };
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop();
    blocks.forEach(dispatch);
    if (done) break;
  }
  if (buffer.trim()) dispatch(buffer);
}

// ---------------------------------------------------------------------------------------------
// Documents

async function loadDocuments() {
  const list = $("documents");
  try {
    const data = await api("GET", "/documents");
    const docs = data.documents || [];
    renderList(list, docs.map((d) => el("li", {},
      el("span", { class: "doc-id" }, d.doc_id),
      el("span", { class: "muted" }, ` ${d.passages} passage${d.passages === 1 ? "" : "s"}`),
      el("button", {
        type: "button", class: "danger small", "aria-label": `Delete document ${d.doc_id}`,
        onclick: () => deleteDocument(d.doc_id),
      }, "Delete"))), "No documents.");
  } catch (error) {
    renderList(list, [], "Could not list documents.");
    showError(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
  }
}

async function deleteDocument(docId) {
  if (!window.confirm(`Delete document “${docId}” and everything only it holds?`)) return;
  showError("");
  try {
    const done = await api("DELETE", `/documents/${encodeURIComponent(docId)}`);
    $("documents-status").textContent = `Deleted ${docId}: ${done.passages} passages, `
      + `${done.relations} relations, ${done.entities} entities.`;
  } catch (error) {
    showError(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
  }
  await loadDocuments();
  await loadInfo();
}

async function loadInfo() {
  try {
    const stats = await api("GET", "/stats");
    $("graph-info").textContent = `graph ${stats.graph}: ${stats.passages} passages, `
      + `${stats.entities} entities, ${stats.relations} relations`;
  } catch {
    $("graph-info").textContent = "graph: unknown";
  }
}

// ---------------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  initDrawing();
  $("query-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runQuery();
  });
  $("ask").addEventListener("click", runAsk);
  loadInfo().then(loadDocuments);
});
