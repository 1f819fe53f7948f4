// hopgraph web page, part 1 of 5: DOM helpers and API calls (the key, a retry after a 401,
// the chosen graph). Plain JS, no build step; the five scripts share the page's global scope
// and load in order: common.js, draw.js, labels.js, graphs.js, app.js. Every piece of server
// data goes into the DOM as text (textContent / text nodes), never as HTML.
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

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// ---------------------------------------------------------------------------------------------
// API calls, with the key (when one is stored) and a retry after asking for it on a 401

class ApiError extends Error {}

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
 * On a 401 it asks for a key and tries again with it; `signal` cancels it. */
async function request(method, path, body, signal) {
  for (;;) {
    const key = localStorage.getItem(KEY_STORAGE);
    const headers = { Accept: "application/json, text/event-stream" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
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
