// hopgraph web page, part 5 of 8: the documents panel of the chosen graph: one page of its
// documents at a time (GET /documents?offset=&limit=&q=), a search box over the document ids,
// and deleting a document after an inline confirmation (no window.confirm: a modal dialog
// would stop the page, and the progress of running uploads with it).
"use strict";

const DOCS_PAGE = 20; // documents listed per page
const SEARCH_DELAY_MS = 300; // typing pauses this long before the list is asked again

/** What the panel shows: the page's first row, the search text, and the number of the last
 * load asked (a reply to an older one is dropped, so fast typing never shows stale rows). */
const docs = { offset: 0, q: "", asked: 0, timer: null, confirms: 0 };

/** A message in the documents panel; `failed` styles it as an error. */
function documentsStatus(message, failed = false) {
  const status = $("documents-status");
  status.textContent = message;
  status.classList.toggle("error-text", failed);
}

/** Back to the first page, no search, "loading…": another graph is shown. */
function resetDocuments() {
  clearTimeout(docs.timer);
  docs.offset = 0;
  docs.q = "";
  $("documents-search").value = "";
  $("documents-pager").hidden = true;
  documentsStatus("");
  fill($("documents"), [el("li", { class: "muted" }, "loading…")]);
}

/** Load and show the current page of the chosen graph's documents. */
async function loadDocuments() {
  const asked = ++docs.asked;
  const signal = graphSignal();
  const params = new URLSearchParams({ offset: String(docs.offset), limit: String(DOCS_PAGE) });
  if (docs.q) params.set("q", docs.q);
  try {
    const data = await graphApi("GET", `/documents?${params}`);
    if (signal.aborted || asked !== docs.asked) return;
    const rows = data.documents || [];
    const total = Number.isInteger(data.total) ? data.total : rows.length;
    if (!rows.length && total > 0 && docs.offset > 0) {
      // The page emptied under us (documents were deleted): show the last page there is.
      docs.offset = Math.floor((total - 1) / DOCS_PAGE) * DOCS_PAGE;
      await loadDocuments();
      return;
    }
    renderList($("documents"), rows.map(documentItem),
      docs.q ? `No document id contains “${docs.q}”.` : "No documents.");
    $("documents").dataset.q = docs.q; // what the rows shown were searched with
    showPager(rows.length, total);
  } catch (error) {
    if (isAborted(error) || signal.aborted || asked !== docs.asked) return;
    renderList($("documents"), [], "Could not list documents.");
    $("documents-pager").hidden = true;
    documentsStatus(errorText(error), true);
  }
}

/** "21–40 of 57", and which of previous/next can be used. */
function showPager(shown, total) {
  const first = total ? docs.offset + 1 : 0;
  $("documents-range").textContent = `${first}–${docs.offset + shown} of ${total}`;
  $("documents-prev").disabled = docs.offset === 0;
  $("documents-next").disabled = docs.offset + shown >= total;
  $("documents-pager").hidden = total === 0;
}

function turnPage(step) {
  docs.offset = Math.max(0, docs.offset + step * DOCS_PAGE);
  loadDocuments();
}

/** Search with what the box holds now: from the first page. */
function searchDocuments() {
  clearTimeout(docs.timer);
  const q = $("documents-search").value.trim();
  if (q === docs.q) return;
  docs.q = q;
  docs.offset = 0;
  loadDocuments();
}

// ---------------------------------------------------------------------------------------------
// One document, and deleting it

/** A row: the id (as text), its passage count and a Delete button. */
function documentItem(doc) {
  const item = el("li", { "data-doc": doc.doc_id });
  showDocument(item, doc, false);
  return item;
}

/** The row's plain state; `focus` puts the keyboard back on its Delete button. */
function showDocument(item, doc, focus) {
  const remove = el("button", {
    type: "button", class: "danger small", "aria-label": `Delete document ${doc.doc_id}`,
    onclick: () => askDelete(item, doc),
  }, "Delete");
  item.classList.remove("confirming");
  item.replaceChildren(
    el("span", { class: "doc-id" }, doc.doc_id),
    el("span", { class: "muted" }, ` ${plural(doc.passages, "passage")}`),
    remove);
  if (focus) remove.focus();
}

/** The confirmation step, in the row itself: "Delete it" deletes, "Keep" (or Escape) goes
 * back. The keyboard lands on "Keep", so a double Enter deletes nothing. */
function askDelete(item, doc) {
  const keep = () => showDocument(item, doc, true);
  const yes = el("button", {
    type: "button", class: "danger small confirm-delete",
    "aria-label": `Yes, delete document ${doc.doc_id}`,
    onclick: () => deleteDocument(item, doc.doc_id),
  }, "Delete it");
  const no = el("button", {
    type: "button", class: "secondary small keep-document",
    "aria-label": `Keep document ${doc.doc_id}`, onclick: keep,
  }, "Keep");
  const question = el("span", { class: "confirm-text", id: `confirm-${++docs.confirms}` },
    `Delete “${doc.doc_id}” and everything only it holds?`);
  item.classList.add("confirming");
  item.replaceChildren(el("div", {
    class: "confirm", role: "group", "aria-labelledby": question.id,
    onkeydown: (event) => {
      if (event.key === "Escape") keep();
    },
  }, question, el("span", { class: "confirm-buttons" }, yes, no)));
  no.focus();
}

async function deleteDocument(item, docId) {
  item.querySelectorAll("button").forEach((b) => (b.disabled = true));
  documentsStatus("");
  try {
    const done = await graphApi("DELETE", `/documents/${encodeURIComponent(docId)}`);
    documentsStatus(`Deleted ${docId}: ${plural(done.passages, "passage")}, `
      + `${plural(done.relations, "relation")}, ${plural(done.entities, "entity", "entities")}.`);
  } catch (error) {
    if (isAborted(error)) return;
    documentsStatus(errorText(error), true);
  }
  await Promise.all([loadDocuments(), loadInfo()]);
}

// ---------------------------------------------------------------------------------------------
// Start-up

/** Wire the search box (searched once typing pauses, or at once on Enter) and the pager. */
function initDocuments() {
  $("documents-search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    searchDocuments();
  });
  $("documents-search").addEventListener("input", () => {
    clearTimeout(docs.timer);
    docs.timer = setTimeout(searchDocuments, SEARCH_DELAY_MS);
  });
  $("documents-prev").addEventListener("click", () => turnPage(-1));
  $("documents-next").addEventListener("click", () => turnPage(1));
}
