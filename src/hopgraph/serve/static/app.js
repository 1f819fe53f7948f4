// hopgraph web page, part 3 of 3: query, compare graph and naive retrieval, ask, and
// manage documents.
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
        error: (data) => showError((data.error && data.error.message) || "The answer stream failed."),
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
