// hopgraph web page, part 4 of 8: the graph switcher and the graph's counts, and what the page
// does when the server asks for an API key or one is entered. The documents panel is in
// documents.js.
"use strict";

// ---------------------------------------------------------------------------------------------
// The graph's counts

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
  resetDocuments();
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
// Start-up: the switcher and the API key

/** Wire the switcher and the API-key events, then list the graphs (app.js calls this once the
 * page has loaded). */
function initGraphs() {
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
}
