// hopgraph web page, part 8 of 8: the results (passages of graph and naive retrieval side by
// side, entities, relations, timings), query and ask (with the streamed answer), and the
// page's start-up. The graph switcher is in graphs.js, the documents panel in documents.js,
// uploads and their jobs in uploads.js and jobs.js.
"use strict";

// ---------------------------------------------------------------------------------------------
// Results

const SLIDE_TYPES = new Set(["pptx", "ppt", "odp", "key"]);

/** Where a passage came from, as `records.source_line` writes it: "report.pdf · p. 3 ·
 * Safety › Battery"; the document id for a passage stored without a source. */
function sourceLine(passage) {
  const source = passage.source || {};
  const file = source.file || passage.doc_id;
  const parts = file ? [file] : [];
  const page = source.page;
  if (typeof page === "number") {
    const dot = String(file || "").lastIndexOf(".");
    const suffix = dot >= 0 ? String(file).slice(dot + 1).toLowerCase() : "";
    parts.push(`${SLIDE_TYPES.has(suffix) ? "slide" : "p."} ${page}`);
  } else if (page) {
    parts.push(String(page));
  }
  const headings = (source.headings || []).filter((h) => h);
  if (headings.length) parts.push(headings.join(" › "));
  return parts.join(" · ");
}

function passageItem(passage, rank, extra) {
  const relations = passage.relations || [];
  const where = sourceLine(passage);
  return el(
    "li",
    { class: "passage", "data-passage": passage.id },
    el(
      "div",
      { class: "passage-head" },
      el("span", { class: "rank" }, `#${rank}`),
      el("span", { class: "score", title: "score" }, Number(passage.score).toFixed(3)),
      extra,
      // The whole source, as text: CSS wraps a long one.
      where ? el("span", { class: "doc source muted", title: "where it came from" }, where)
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

// ---------------------------------------------------------------------------------------------
// Start-up

document.addEventListener("DOMContentLoaded", () => {
  initDrawing();
  $("query-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runQuery();
  });
  $("ask").addEventListener("click", runAsk);
  initDocuments(); // the documents panel's search box and pager
  initUploads(); // the upload area
  initGraphs(); // the graph switcher and the API-key events; lists the graphs
  initJobs(); // the recent upload jobs, following those still running
});
