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

// Timed forms (data-timed): a save sends the seconds the page was visible since it opened
// or since the last timed save, as `elapsed` (the labelling screen reports time the same way).
(function () {
  let activeMs = 0;
  let since = performance.now();
  let visible = !document.hidden;
  function tick() {
    const now = performance.now();
    if (visible) activeMs += now - since;
    since = now;
  }
  document.addEventListener("visibilitychange", () => {
    tick();
    visible = !document.hidden;
  });
  document.addEventListener("htmx:configRequest", (event) => {
    const elt = event.detail.elt;
    if (!elt || !elt.closest || !elt.closest("[data-timed]")) return;
    tick();
    event.detail.parameters["elapsed"] = (activeMs / 1000).toFixed(3);
    activeMs = 0;
  });
})();
