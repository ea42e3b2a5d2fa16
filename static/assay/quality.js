// Assay labelling screens: the second row of keys, grading the quality of the current
// card's source (its document, or its site) on the chosen dimension.
// Shift+0–9 presses that grade's button on the current card (the document view: the
// document's row); read from event.code (Digit0…), since Shift+digit types ")!@#…" or
// other signs depending on the keyboard. With several dimensions, Shift+D (or the list
// beside the keys' help) chooses which one the Shift keys grade, kept for the project in
// this tab. A saved grade answers "quality-changed" with its source's token: every other
// row on the page showing that source (every card of a site) refreshes itself, taking the
// grade's new version first so that a save already queued behind it is not refused.
// Undo: quality forms are marked data-undoable, so label.js gives their actions ids and
// puts them on the undo list; the undo key's post finds the action on the server.
(function () {
  "use strict";
  if (window.assayQuality) return; // the script comes again with a redrawn document view
  window.assayQuality = true;

  const root = () => document.getElementById("labelling");
  const keys = () => document.getElementById("quality-keys");
  const message = (key, values) => window.assayMessage(key, values);

  function dimensions() {
    const k = keys();
    return k ? (k.dataset.dimensions || "").split(" ").filter(Boolean) : [];
  }
  function storeKey() {
    const r = root();
    return "assay-quality-dimension:" + (r ? r.dataset.project : "");
  }
  function active() {
    const list = dimensions();
    let chosen = null;
    try {
      chosen = sessionStorage.getItem(storeKey());
    } catch (error) {
      chosen = null;
    }
    return list.includes(chosen) ? chosen : list[0] || null;
  }
  function choose(key) {
    try {
      sessionStorage.setItem(storeKey(), key);
    } catch (error) {
      /* private mode: the choice lasts as long as the page */
    }
    mark();
  }
  // The rows of the active dimension show their keys (quality.css hides the others').
  function mark() {
    const key = active();
    document.querySelectorAll("#labelling .quality-row").forEach((row) => {
      row.classList.toggle("is-active", row.dataset.dimension === key);
    });
    document.querySelectorAll("#quality-keys .quality-key-hint").forEach((hint) => {
      hint.hidden = hint.dataset.dimension !== key;
    });
    const select = document.getElementById("quality-dimension");
    if (select && key) select.value = key;
  }
  function setStatus(text, kind) {
    const status = document.getElementById("save-status");
    if (!status) return;
    status.textContent = text;
    status.className = "save-status floating " + kind;
  }
  function typing(target) {
    return Boolean(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
  }
  function holder() {
    const r = root();
    if (!r) return null;
    if (r.dataset.screen === "document") return document.querySelector("#doc-view .doc-toolbar");
    return document.querySelector("#labelling .candidate.is-current");
  }

  document.addEventListener("keydown", (event) => {
    if (!root() || !keys() || !event.shiftKey) return;
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (typing(event.target)) return;
    const digit = /^(?:Digit|Numpad)([0-9])$/.exec(event.code || "");
    if (digit) {
      const place = holder();
      const row = place && place.querySelector(".quality-row.is-active");
      if (!row) return;
      const button = row.querySelector('button[name="grade"][value="' + digit[1] + '"]');
      event.preventDefault();
      if (button) button.click();
      else if (!row.querySelector("form")) setStatus(message("qualityNoSource"), "pending");
      return;
    }
    if (event.code === "KeyD") {
      const list = dimensions();
      if (list.length < 2) return;
      event.preventDefault();
      const next = list[(list.indexOf(active()) + 1) % list.length];
      choose(next);
      const select = document.getElementById("quality-dimension");
      const option = select ? select.querySelector('option[value="' + CSS.escape(next) + '"]') : null;
      setStatus(message("qualityDimension", { name: option ? option.textContent : next }), "ok");
    }
  });
  document.addEventListener("change", (event) => {
    if (event.target && event.target.id === "quality-dimension") {
      choose(event.target.value);
      event.target.blur();
    }
  });
  document.addEventListener("htmx:afterSettle", mark);

  // Every other row of the same source: its version at once, then its refreshed self.
  document.addEventListener("quality-changed", (event) => {
    const detail = event.detail || {};
    if (!detail.token) return;
    const source = event.target;
    document.querySelectorAll("#labelling .quality-part").forEach((part) => {
      const rows = Array.from(part.querySelectorAll(".quality-row")).filter(
        (row) => row.dataset.token === detail.token,
      );
      if (!rows.length) return;
      if (source instanceof Node && part.contains(source) && !detail.undone) return;
      rows.forEach((row) => {
        const version = row.querySelector('input[name="version"]');
        if (version && detail.version) version.value = detail.version;
      });
      htmx.trigger(part, "quality-refresh");
    });
  });

  // Another tab of the project (another query's screen, a document view) hears of the
  // change too: a site's grade is the same on every query. Relayed events are marked
  // remote and never relayed again.
  let channel = null;
  if (root() && "BroadcastChannel" in window) {
    channel = new BroadcastChannel("assay-quality-" + root().dataset.project);
    channel.onmessage = (incoming) => {
      const detail = { ...incoming.data, remote: true };
      document.body.dispatchEvent(new CustomEvent("quality-changed", { detail, bubbles: true }));
    };
  }
  document.addEventListener(
    "quality-changed",
    (event) => {
      const detail = event.detail || {};
      if (!channel || detail.remote) return;
      const fields = ["history", "undone", "conflict", "dimension", "token", "version", "grade"];
      channel.postMessage(Object.fromEntries(fields.map((name) => [name, detail[name]])));
    },
    { capture: true },
  );

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
})();
