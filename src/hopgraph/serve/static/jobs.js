// hopgraph web page, part 6 of 8: upload jobs. The jobs list (GET /jobs), each live job's
// progress read from its event stream (GET /jobs/{id}/events) into per-file and overall bars,
// cancelling, and what a finished job refreshes. Jobs belong to the server, not to the graph
// shown: choosing another graph stops no watcher.
"use strict";

const JOBS_SHOWN = 10; // the most recent jobs listed
const LIVE_STATES = new Set(["queued", "running"]);
const POLL_MS = 700; // between reads of a job whose event stream cannot be had
const STREAM_TRIES = 3; // event streams opened per job before reading it by polling only

const jobs = new Map(); // job id -> its latest Job JSON
const jobRows = new Map(); // job id -> its row's elements (see jobRow)
const watched = new Map(); // job id -> the AbortController of its watcher
let jobsListed = false; // whether GET /jobs has answered once

function isLive(job) {
  return LIVE_STATES.has(job.state);
}

function jobPath(id, rest = "") {
  return `/jobs/${encodeURIComponent(id)}${rest}`;
}

/** A message under the jobs list (read out by screen readers); `failed` styles it. */
function jobsStatus(message, failed = false) {
  const status = $("jobs-status");
  status.textContent = message;
  status.classList.toggle("error-text", failed);
}

// ---------------------------------------------------------------------------------------------
// Progress bars

/** Set a <progress> to done/total. With no total yet it is empty while `mode` is
 * "waiting", moving (no value) while "working", and full once "ended" (an empty or failed
 * file). */
function setBar(node, done, total, mode) {
  node.max = total > 0 ? total : 1;
  if (total > 0) node.value = Math.min(done, total);
  else if (mode === "working") node.removeAttribute("value");
  else node.value = mode === "ended" ? 1 : 0;
  return node;
}

/** The bar's mode for a job's or a file's state (a file left running by a job that ended
 * never finished: it shows as waiting). */
function barMode(state, live) {
  if (state === "running" && live) return "working";
  return state === "queued" || state === "running" ? "waiting" : "ended";
}

// ---------------------------------------------------------------------------------------------
// Drawing a job

/** The line under a job's state: files and passages done, rate and time left while it runs. */
function jobFacts(job) {
  const facts = [`graph ${job.graph}`, `${job.files_done} of ${job.files_total} files`];
  if (job.passages_total) facts.push(`${job.passages_done} of ${job.passages_total} passages`);
  if (isLive(job) && job.rate !== null && job.rate !== undefined) {
    facts.push(`${Number(job.rate).toFixed(1)} passages/s`);
  }
  if (isLive(job) && job.eta_s !== null && job.eta_s !== undefined) {
    facts.push(`about ${formatSeconds(job.eta_s)} left`);
  }
  const when = job.started || job.created;
  if (when) facts.push(new Date(when * 1000).toLocaleTimeString());
  return facts.join(" · ");
}

function fileItem(file, live) {
  const counts = file.passages_total
    ? ` · ${file.passages_done} of ${file.passages_total} passages` : "";
  return el("li", { class: `job-file state-${file.state}`, "data-state": file.state },
    el("div", { class: "job-file-head" },
      el("span", { class: "file-name" }, file.name),
      el("span", { class: "muted" }, ` ${formatBytes(file.size)} · ${file.state}${counts}`)),
    setBar(el("progress", { "aria-label": `Progress of ${file.name}` }),
      file.passages_done || 0, file.passages_total || 0, barMode(file.state, live)),
    file.problem ? el("p", { class: "problem error-text" }, file.problem) : null);
}

/** The job's problems that no file row shows already, its error, the documents it wrote. */
function jobNotes(job) {
  const named = new Set((job.files || []).filter((f) => f.problem).map((f) => f.name));
  const written = job.documents || [];
  return [
    ...(job.problems || []).filter((p) => !named.has(p.file)).map((p) =>
      el("p", { class: "problem error-text" }, p.file ? `${p.file}: ${p.error}` : p.error)),
    job.error ? el("p", { class: "problem error-text" }, job.error) : null,
    written.length ? el("p", { class: "written muted" },
      `Wrote ${plural(written.length, "document")}: ${written.join(", ")}`) : null,
  ].filter(Boolean);
}

/** A job's row, made once and then updated in place: its Cancel button stays the same
 * element, so a click on it is never lost to an update arriving between press and release. */
function jobRow(id) {
  if (jobRows.has(id)) return jobRows.get(id);
  const row = {
    state: el("strong", { class: "job-state" }),
    cancel: el("button", {
      type: "button", class: "danger small", "aria-label": `Cancel upload job ${id}`,
      onclick: () => cancelJob(id),
    }, "Cancel"),
    facts: el("p", { class: "job-facts muted" }),
    bar: el("progress", { "aria-label": `Progress of upload job ${id}` }),
    files: el("ul", { class: "job-files plain" }),
    notes: el("div", { class: "job-notes" }),
  };
  row.item = el("li", { "data-job": id }, el("div", { class: "job-head" }, row.state, row.cancel),
    row.facts, row.bar, row.files, row.notes);
  jobRows.set(id, row);
  return row;
}

/** Bring a job's row up to date with `job`; the row's <li>. */
function drawJob(job) {
  const row = jobRow(job.id);
  const live = isLive(job);
  row.item.className = `job state-${job.state}`;
  row.item.dataset.state = job.state;
  // While running, what it does now (reading, extracting, storing) when the server says.
  row.state.textContent = job.state === "running" && job.stage && job.stage !== job.state
    ? `${job.state}: ${job.stage}` : job.state;
  row.cancel.hidden = !live;
  row.facts.textContent = jobFacts(job);
  const [done, total] = job.passages_total
    ? [job.passages_done, job.passages_total] : [job.files_done, job.files_total];
  setBar(row.bar, done || 0, total || 0, barMode(job.state, live));
  fill(row.files, (job.files || []).map((file) => fileItem(file, live)));
  fill(row.notes, jobNotes(job));
  return row.item;
}

/** Draw the recent jobs, newest first. The rows move only when a new job came. */
function renderJobs() {
  const list = $("jobs");
  const recent = [...jobs.values()].sort((a, b) => (b.created || 0) - (a.created || 0))
    .slice(0, JOBS_SHOWN);
  const items = recent.map(drawJob);
  if (!items.length) {
    renderList(list, [], "No uploads yet.");
    return;
  }
  const same = items.length === list.children.length
    && items.every((item, i) => list.children[i] === item);
  if (same) return;
  const focused = list.contains(document.activeElement) ? document.activeElement : null;
  fill(list, items);
  if (focused && list.contains(focused)) focused.focus();
}

/** Keep and draw a job's latest state; say so when its state changed. An ended job never
 * goes back to live: that would be an older reply arriving late. */
function showJob(job) {
  const before = jobs.get(job.id);
  if (before && !isLive(before) && isLive(job)) return;
  jobs.set(job.id, job);
  renderJobs();
  if (before && before.state !== job.state) jobsStatus(`Job ${job.id}: ${job.state}.`);
}

// ---------------------------------------------------------------------------------------------
// Following a job

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new DOMException("stopped", "AbortError"));
    }, { once: true });
  });
}

/** Follow a job's event stream (fetch, so the key goes along). The final Job once its `end`
 * event came; null when the stream closed or failed before that. */
async function streamJob(id, signal) {
  let final = null;
  try {
    const response = await request("GET", jobPath(id, "/events"), undefined, signal);
    await readEvents(response, signal, {
      progress: (job) => showJob(job),
      end: (job) => {
        final = job;
        showJob(job);
      },
    });
  } catch (error) {
    if (isAborted(error) || signal.aborted) throw error;
  }
  return final;
}

/** Follow a job until it ends: its event stream, and when that breaks off, reads of the job
 * (GET /jobs/{id} every POLL_MS) until it ends or a new stream carries it to its end. */
async function watchJob(id) {
  if (watched.has(id)) return;
  const controller = new AbortController();
  const signal = controller.signal;
  watched.set(id, controller);
  try {
    let final = await streamJob(id, signal);
    for (let streams = 1; !final;) {
      await pause(POLL_MS, signal);
      const job = await api("GET", jobPath(id), undefined, signal);
      showJob(job);
      if (!isLive(job)) final = job;
      else if (streams < STREAM_TRIES) {
        streams += 1;
        final = await streamJob(id, signal);
      }
    }
    jobEnded(final);
  } catch (error) {
    if (!isAborted(error)) jobsStatus(`Lost track of job ${id}: ${errorText(error)}`, true);
  } finally {
    watched.delete(id);
  }
}

/** Say how a job ended; when it wrote to the graph shown, list its documents and counts
 * again. */
function jobEnded(job) {
  const written = (job.documents || []).length;
  const problems = (job.problems || []).length;
  jobsStatus(`Job ${job.id} ${job.state}: ${plural(written, "document")} written`
    + (problems ? `, ${plural(problems, "problem")}.` : ".") + (job.error ? ` ${job.error}` : ""),
  job.state === "failed");
  const shown = chosen.graph === null || chosen.graph === job.graph;
  if (shown && (written || job.state === "done")) {
    Promise.all([loadDocuments(), loadInfo()]);
  }
}

/** Ask the server to cancel a job; a job that ended meanwhile (409) is read again. */
async function cancelJob(id) {
  try {
    showJob(await api("DELETE", jobPath(id)));
  } catch (error) {
    jobsStatus(errorText(error), true);
    if (error instanceof ApiError && error.status === 409) {
      showJob(await api("GET", jobPath(id)).catch(() => jobs.get(id)));
    }
  }
}

/** List the recent jobs and follow those still queued or running (e.g. after a reload). */
async function loadJobs() {
  try {
    const data = await api("GET", "/jobs");
    jobsListed = true;
    for (const job of data.jobs || []) jobs.set(job.id, job);
    renderJobs();
    (data.jobs || []).filter(isLive).forEach((job) => watchJob(job.id));
  } catch (error) {
    renderJobs();
    jobsStatus(`Could not list the upload jobs: ${errorText(error)}`, true);
  }
}

/** List the jobs now, and again once a key is entered if this first listing failed. */
function initJobs() {
  document.addEventListener("hopgraph:key-entered", () => {
    if (!jobsListed) loadJobs();
  });
  loadJobs();
}
