// hopgraph web page, part 1 of 8: DOM helpers and API calls (the key, a retry after a 401,
// the chosen graph, event streams). Plain JS, no build step; the eight scripts share the
// page's global scope and load in order: common.js, draw.js, labels.js, graphs.js,
// documents.js, jobs.js, uploads.js, app.js. Every piece of server data goes into the DOM as
// text (textContent / text nodes), never as HTML.
"use strict";

const KEY_STORAGE = "hopgraph.apiKey";
const GRAPH_STORAGE = "hopgraph.graph";
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

/** "1 passage", "3 passages"; `many` for a word that does not just take an "s". */
function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}

/** A size for people: "512 B", "3.4 kB", "12.0 MB". */
function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A duration for people: "45 s", "3 min 5 s", "1 h 2 min". */
function formatSeconds(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// ---------------------------------------------------------------------------------------------
// API calls, with the key (when one is stored) and a retry after asking for it on a 401

/** A reply that was not ok: its message (the server's own words), HTTP status, and the
 * seconds its Retry-After asks to wait (429), or null. */
class ApiError extends Error {
  constructor(message, status = 0, retryAfter = null) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Every error of the API is {"error": {"code", "message", "fix"}} (serve/errors.py). */
function detailText(body, response) {
  const error = body && body.error;
  if (error && typeof error.message === "string") {
    return error.fix ? `${error.message} (${error.fix})` : error.message;
  }
  return `${response.status} ${response.statusText || "error"}`;
}

/** The text to show for a failed call. */
function errorText(error) {
  return error instanceof ApiError ? error.message : `Request failed: ${error.message}`;
}

/** Whether a call was cancelled on purpose (another graph was chosen): nothing to show. */
function isAborted(error) {
  return Boolean(error) && error.name === "AbortError";
}

let keyRequest = null; // one pending "please give a key" prompt, shared by concurrent calls

/** Show the key form and resolve with the key the user enters. The document hears
 * "hopgraph:key-needed" when the form opens and "hopgraph:key-entered" once a key is kept. */
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
      document.dispatchEvent(new CustomEvent("hopgraph:key-entered"));
    };
  });
  document.dispatchEvent(new CustomEvent("hopgraph:key-needed"));
  return keyRequest;
}

/** fetch() an API path; returns the Response when ok, throws ApiError with `detail` if not.
 * On a 401 it asks for a key and tries again with it; `signal` cancels it. A FormData body
 * goes as multipart (the browser writes its Content-Type), any other body as JSON. */
async function request(method, path, body, signal) {
  for (;;) {
    const key = localStorage.getItem(KEY_STORAGE);
    const headers = { Accept: "application/json, text/event-stream" };
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers["Content-Type"] = "application/json";
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined || form ? body : JSON.stringify(body),
      signal,
    });
    if (response.status === 401) {
      await askForKey(Boolean(key));
      continue; // retry with the new key
    }
    if (!response.ok) {
      const data = await response.json().catch(() => null);
      const wait = parseInt(response.headers.get("Retry-After") || "", 10);
      throw new ApiError(detailText(data, response), response.status,
        Number.isFinite(wait) ? wait : null);
    }
    return response;
  }
}

async function api(method, path, body, signal) {
  return (await request(method, path, body, signal)).json();
}

// ---------------------------------------------------------------------------------------------
// The chosen graph: its calls go to /graphs/{graph}/..., and choosing another graph cancels
// the calls still running for the previous one.

const chosen = { graph: null, controller: new AbortController() };

/** Make `name` the graph of every later call (null: the server's default graph, at the root). */
function useGraph(name) {
  chosen.controller.abort();
  chosen.controller = new AbortController();
  chosen.graph = name;
}

/** A path of the chosen graph's API: "/query" -> "/graphs/<graph>/query". */
function graphPath(path) {
  return chosen.graph === null ? path : `/graphs/${encodeURIComponent(chosen.graph)}${path}`;
}

/** The signal of the chosen graph's calls: aborted once another graph is chosen. */
function graphSignal() {
  return chosen.controller.signal;
}

/** request() for the chosen graph. */
function graphRequest(method, path, body) {
  return request(method, graphPath(path), body, graphSignal());
}

/** api() for the chosen graph. */
async function graphApi(method, path, body) {
  return (await graphRequest(method, path, body)).json();
}

/** Run an action with the buttons disabled; a failure (other than a cancelled call) goes to
 * `onError`. */
async function busy(action, onError) {
  const buttons = [$("run"), $("ask")];
  buttons.forEach((b) => (b.disabled = true));
  document.body.setAttribute("aria-busy", "true");
  showError("");
  try {
    await action();
  } catch (error) {
    if (!isAborted(error)) onError(error);
  } finally {
    buttons.forEach((b) => (b.disabled = false));
    document.body.removeAttribute("aria-busy");
  }
}

// ---------------------------------------------------------------------------------------------
// Event streams (fetch's reader rather than EventSource, which cannot send the key)

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
