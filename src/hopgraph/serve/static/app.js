// hopgraph web page, part 3 of 3: choose a graph, query, compare graph and naive retrieval,
// ask, and manage documents.
"use strict";

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
      // The whole id, as text: CSS wraps a long one.
      passage.doc_id ? el("span", { class: "doc muted" }, passage.doc_id) : null,
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

/** Back to the page as it starts: no passages, answer, drawing, entities or timings. */
function clearResults() {
  passageTexts = new Map();
  fill($("graph-results"), [el("li", { class: "placeholder" },
    "Run a query to see the passages graph retrieval finds.")]);
  fill($("naive-results"), [el("li", { class: "placeholder" },
    "Passages found by vector search alone appear here.")]);
  $("answer-panel").hidden = true;
  $("answer").textContent = "";
  $("answer").classList.remove("message");
  fill($("answer-passages"), []);
  renderList($("entities"), [], "none yet");
  renderList($("relations"), [], "none yet");
  renderList($("notes"), [], "none");
  fill($("timings"), [el("p", { class: "muted" }, "none yet")]);
  drawSubgraph(null);
}

/** Show a failure; the results of an earlier request go, so none sits under the error. */
function fail(error) {
  clearResults();
  showError(typeof error === "string" ? error : errorText(error));
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
  if (!body.question) return fail("Type a question first.");
  await busy(async () => {
    const signal = graphSignal();
    const data = await graphApi("POST", "/query", body);
    if (signal.aborted) return; // another graph was chosen meanwhile
    const graph = data.graph || [];
    const naive = data.naive || [];
    passageTexts = new Map([...naive, ...graph].map((p) => [p.id, p.text]));
    renderPassages($("graph-results"), graph, naive, "No passages.");
    renderPassages($("naive-results"), naive, graph, "No passages.");
    renderFound(data);
    renderTimings(data.timings_ms || {}, data.naive_timings_ms || {});
    drawSubgraph(data.subgraph);
  }, fail);
}

async function runAsk() {
  const body = formValues();
  if (!body.question) return fail("Type a question first.");
  const answer = $("answer");
  $("answer-panel").hidden = false;
  answer.textContent = "";
  answer.classList.remove("message");
  fill($("answer-passages"), []);
  await busy(async () => {
    const signal = graphSignal();
    const response = await graphRequest("POST", "/ask", body);
    const type = response.headers.get("Content-Type") || "";
    if (type.startsWith("text/event-stream")) {
      await readEvents(response, signal, {
        evidence: (data) => showEvidence(data.passages || []),
        token: (data) => answer.append(data.text || ""),
        done: () => {},
        error: (data) => fail((data.error && data.error.message) || "The answer stream failed."),
      });
    } else {
      const data = await response.json();
      if (signal.aborted) return;
      answer.textContent = data.answer || data.message || "";
      answer.classList.toggle("message", !data.answer);
      showEvidence(data.passages || []);
    }
  }, fail);
}

function showEvidence(passages) {
  fill($("answer-passages"), passages.map((p, i) => passageItem(p, i + 1, null)));
}

/** Read a text/event-stream body with fetch's ReadableStream; call handlers[event](data)
 * until the stream ends or `signal` is aborted. */
async function readEvents(response, signal, handlers) {
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
    if (!data.length || !handlers[event] || signal.aborted) return;
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
// Documents and the graph's counts

/** A message in the documents panel; `failed` styles it as an error. */
function documentsStatus(message, failed = false) {
  const status = $("documents-status");
  status.textContent = message;
  status.classList.toggle("error-text", failed);
}

async function loadDocuments() {
  const list = $("documents");
  const signal = graphSignal();
  try {
    const data = await graphApi("GET", "/documents");
    if (signal.aborted) return;
    const docs = data.documents || [];
    renderList(list, docs.map((d) => el("li", {},
      el("span", { class: "doc-id" }, d.doc_id),
      el("span", { class: "muted" }, ` ${d.passages} passage${d.passages === 1 ? "" : "s"}`),
      el("button", {
        type: "button", class: "danger small", "aria-label": `Delete document ${d.doc_id}`,
        onclick: () => deleteDocument(d.doc_id),
      }, "Delete"))), "No documents.");
  } catch (error) {
    if (isAborted(error) || signal.aborted) return;
    renderList(list, [], "Could not list documents.");
    documentsStatus(errorText(error), true);
  }
}

async function deleteDocument(docId) {
  if (!window.confirm(`Delete document “${docId}” and everything only it holds?`)) return;
  documentsStatus("");
  try {
    const done = await graphApi("DELETE", `/documents/${encodeURIComponent(docId)}`);
    documentsStatus(`Deleted ${docId}: ${done.passages} passages, `
      + `${done.relations} relations, ${done.entities} entities.`);
  } catch (error) {
    if (isAborted(error)) return;
    documentsStatus(errorText(error), true);
  }
  await Promise.all([loadDocuments(), loadInfo()]);
}

async function loadInfo() {
  const signal = graphSignal();
  try {
    const stats = await graphApi("GET", "/stats");
    if (signal.aborted) return;
    $("graph-info").textContent = `${stats.passages} passages, ${stats.entities} entities, `
      + `${stats.relations} relations`;
  } catch (error) {
    if (isAborted(error) || signal.aborted) return;
    $("graph-info").textContent = "counts unknown";
  }
}

// ---------------------------------------------------------------------------------------------
// The graph switcher

let graphsListed = false; // whether GET /graphs has answered (a new key may change the list)
let graphShown = false; // whether showGraph has run once

/** Fill the switcher from GET /graphs and show the graph picked: the one shown now, else the
 * one kept in localStorage, else the server's default graph (each only if still listed). */
async function loadGraphs() {
  const select = $("graph");
  let data;
  try {
    data = await api("GET", "/graphs");
  } catch (error) {
    // The routes at the root still serve the server's default graph.
    fill(select, [el("option", { value: "" }, "default")]);
    select.disabled = true;
    if (!graphShown) showGraph(null); // its loads go on; the error shows now
    fail(error);
    return;
  }
  graphsListed = true;
  const names = data.graphs || [];
  const kept = localStorage.getItem(GRAPH_STORAGE);
  const pick = [chosen.graph, kept, data.default].find((name) => names.includes(name))
    ?? names[0] ?? null;
  fill(select, names.length
    ? names.map((name) => el("option", { value: name }, name))
    : [el("option", { value: "" }, "no graphs")]);
  select.value = pick ?? "";
  select.disabled = !names.length;
  if (!graphShown || pick !== chosen.graph) await showGraph(pick);
}

/** Make `name` the page's graph: clear the results, load its documents and counts. */
async function showGraph(name) {
  useGraph(name);
  graphShown = true;
  if (name !== null) localStorage.setItem(GRAPH_STORAGE, name);
  clearResults();
  showError("");
  documentsStatus("");
  fill($("documents"), [el("li", { class: "muted" }, "loading…")]);
  $("graph-info").textContent = "";
  await Promise.all([loadInfo(), loadDocuments()]);
}

/** A key was entered after the page had started: the calls that asked for it go on by
 * themselves; the graph list (the key's graphs) and the panels are read again. */
async function afterNewKey() {
  const before = chosen.graph;
  await loadGraphs(); // shows another graph if this one is not the key's
  if (chosen.graph === before) await Promise.all([loadInfo(), loadDocuments()]);
}

// ---------------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  initDrawing();
  $("query-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runQuery();
  });
  $("ask").addEventListener("click", runAsk);
  $("graph").addEventListener("change", (event) => showGraph(event.target.value || null));
  // Until a key is entered, say why the panels are empty. At the start the calls waiting for
  // the key go on by themselves once it is entered (the graph list, then the panels).
  document.addEventListener("hopgraph:key-needed", () => {
    $("graph-info").textContent = "needs an API key";
    renderList($("documents"), [], "Enter the API key to list the documents.");
  });
  document.addEventListener("hopgraph:key-entered", () => {
    if (graphsListed) afterNewKey();
  });
  loadGraphs();
});
