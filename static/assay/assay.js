// Assay: small progressive enhancements; every page works without this file.
document.addEventListener("htmx:responseError", (event) => {
  const status = document.getElementById("save-status");
  if (status) {
    status.textContent = "Not saved (" + event.detail.xhr.status + "). Try again.";
    status.className = "save-status error";
  }
});
document.addEventListener("htmx:sendError", () => {
  const status = document.getElementById("save-status");
  if (status) {
    status.textContent = "Not saved: the server could not be reached.";
    status.className = "save-status error";
  }
});
