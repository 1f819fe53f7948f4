// hopgraph web page, part 7 of 8: the upload area. Files dropped on it or chosen with its
// button go at once, as one multipart POST /uploads (of the graph shown) with the extractor
// and "append" chosen above the area; the job the server answers with is handed to jobs.js,
// which follows it.
"use strict";

/** A message under the upload area; `failed` styles it as an error. */
function uploadStatus(message, failed = false) {
  const status = $("upload-status");
  status.textContent = message;
  status.classList.toggle("error-text", failed);
}

/** Whether a drag carries files (not text or a link dragged from the page). */
function carriesFiles(event) {
  return Boolean(event.dataTransfer) && [...event.dataTransfer.types].includes("Files");
}

/** `text` ending as a sentence does, so another sentence can follow it. */
function sentence(text) {
  return /[.!?)]$/.test(text) ? text : `${text}.`;
}

/** The words for a refused upload: the server's message names the file and the limit (413),
 * or the number of files (422), or the jobs waiting (429, which also says when to try
 * again). */
function uploadErrorText(error) {
  if (!(error instanceof ApiError)) return errorText(error);
  if (error.status === 429) {
    const wait = error.retryAfter === null ? ""
      : ` Try again in ${formatSeconds(error.retryAfter)}.`;
    return `Not uploaded, the server is busy: ${sentence(error.message)}${wait}`;
  }
  return `Not uploaded: ${error.message}`;
}

/** Send `files` as one upload job to the graph shown, then follow the job. */
async function upload(files) {
  if (!files.length) return;
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  form.append("extractor", $("upload-extractor").value);
  form.append("append", $("upload-append").checked ? "true" : "false");
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const what = `${plural(files.length, "file")} (${formatBytes(bytes)})`;
  uploadStatus(`Uploading ${what}…`);
  $("drop-zone").setAttribute("aria-busy", "true");
  try {
    // Not the graph's signal: choosing another graph meanwhile must not drop the upload.
    const job = await api("POST", graphPath("/uploads"), form);
    uploadStatus(`Uploaded ${what} to graph ${job.graph} as job ${job.id}.`);
    showJob(job);
    watchJob(job.id);
  } catch (error) {
    uploadStatus(uploadErrorText(error), true);
  } finally {
    $("drop-zone").removeAttribute("aria-busy");
  }
}

/** Wire the file input (its label is the whole drop area, so a click anywhere on it or the
 * keyboard on the input opens the file chooser) and dragging files onto the area. */
function initUploads() {
  const zone = $("drop-zone");
  const input = $("upload-files");
  input.addEventListener("change", () => {
    const files = [...input.files];
    input.value = ""; // choosing the same file again is a change again
    upload(files);
  });
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("over");
    });
  }
  zone.addEventListener("dragleave", (event) => {
    if (!zone.contains(event.relatedTarget)) zone.classList.remove("over");
  });
  zone.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    zone.classList.remove("over");
    upload([...event.dataTransfer.files]);
  });
  // A file dropped beside the area would replace the page with the file: refuse it there.
  window.addEventListener("dragover", (event) => {
    if (!carriesFiles(event) || zone.contains(event.target)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "none";
  });
  window.addEventListener("drop", (event) => {
    if (!carriesFiles(event) || zone.contains(event.target)) return;
    event.preventDefault();
    uploadStatus("Drop the files on the upload area to upload them.");
  });
}
