// Assay labelling screens: keyboard grading, save feedback, undo, passage selection.
// Every action is also a plain form, so the screens work (slower) without this file.
// A save answers with its own fragment and a "labels-changed" event; the other regions
// of a screen refresh themselves on that event (hx-trigger in the templates).
(function () {
  "use strict";

  const root = () => document.getElementById("labelling");
  const messages = () => {
    const el = document.getElementById("label-messages");
    return el ? el.dataset : {};
  };

  // ------------------------------------------------------------------ text offsets
  // Python counts code points; JavaScript strings count UTF-16 code units. Characters
  // outside the BMP (CJK Extension B, emoji) are two units but one code point.
  function codePoints(text) {
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
      n++;
    }
    return n;
  }

  // Offset in the document's text of a DOM boundary point inside the page container.
  // Each span carries data-start, the code-point offset of its first character.
  function pointOffset(container, node, offset) {
    if (node === container) {
      const kids = container.childNodes;
      if (offset < kids.length && kids[offset].dataset) return Number(kids[offset].dataset.start);
      return Number(container.dataset.end);
    }
    const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    const anchor = element.closest("[data-start]") || container;
    const range = document.createRange();
    range.setStart(anchor, 0);
    range.setEnd(node, offset);
    return Number(anchor.dataset.start) + codePoints(range.toString());
  }

  function selectionOffsets(container) {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    if (!range.intersectsNode(container)) return null;
    const clipped = range.cloneRange();
    if (!container.contains(clipped.startContainer)) clipped.setStart(container, 0);
    if (!container.contains(clipped.endContainer)) {
      clipped.setEnd(container, container.childNodes.length);
    }
    const start = pointOffset(container, clipped.startContainer, clipped.startOffset);
    const end = pointOffset(container, clipped.endContainer, clipped.endOffset);
    if (!(end > start)) return null;
    return { start: start, end: end, text: clipped.toString() };
  }
  window.assayLabel = { codePoints: codePoints, selectionOffsets: selectionOffsets };

  // ------------------------------------------------------------------ active time
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
  function takeElapsed() {
    tick();
    const seconds = activeMs / 1000;
    activeMs = 0;
    return seconds.toFixed(3);
  }
  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  }
  window.addEventListener("pagehide", () => {
    const r = root();
    if (!r || !r.dataset.canLabel || !r.dataset.statusUrl || !navigator.sendBeacon) return;
    const elapsed = takeElapsed();
    if (Number(elapsed) < 1) return;
    const data = new FormData();
    data.append("action", "time");
    data.append("elapsed", elapsed);
    data.append("csrfmiddlewaretoken", csrfToken());
    navigator.sendBeacon(r.dataset.statusUrl, data);
  });

  // ------------------------------------------------------------------ save feedback
  function setStatus(text, kind) {
    const status = document.getElementById("save-status");
    if (!status) return;
    status.textContent = text;
    status.className = "save-status " + kind;
  }
  const isWrite = (event) =>
    root() && root().contains(event.detail.elt) &&
    (event.detail.requestConfig ? event.detail.requestConfig.verb : event.detail.verb) === "post";

  document.addEventListener("htmx:configRequest", (event) => {
    if (!root() || event.detail.verb !== "post" || !root().contains(event.detail.elt)) return;
    event.detail.parameters["elapsed"] = takeElapsed();
    // A note kept on an ungraded card goes with the card's next grade.
    const elt = event.detail.elt;
    const card = elt.matches && elt.matches(".grade-form") ? elt.closest(".candidate") : null;
    const kept = card && !card.classList.contains("graded") && card.querySelector(".note textarea");
    if (kept && kept.value.trim()) event.detail.parameters["note"] = kept.value;
  });
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (isWrite(event)) setStatus(messages().saving || "…", "pending");
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (!isWrite(event) || !event.detail.successful) return;
    if (event.detail.elt.id === "undo-form") lastUndone = null;
    const holder = event.detail.elt.closest(".candidate, .evidence-row, .doc-result");
    if (holder) holder.classList.remove("save-failed");
  });
  function failed(event, text) {
    if (!root()) return;
    setStatus(text, "error");
    const elt = event.detail.elt;
    const holder = elt && elt.closest && elt.closest(".candidate, .evidence-row, .doc-result");
    if (holder) holder.classList.add("save-failed");
    if (elt && elt.id === "undo-form" && lastUndone) pushUndo(lastUndone);
  }
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const type = xhr.getResponseHeader("Content-Type") || "";
    let detail = String(xhr.status);
    if (type.indexOf("text/plain") === 0 && xhr.responseText.length < 300) {
      detail += ": " + xhr.responseText;
    }
    failed(event, (messages().failed || "Not saved.") + " (" + detail + ")");
  });
  document.addEventListener("htmx:sendError", (event) => {
    failed(event, messages().offline || "Not saved: the server could not be reached.");
  });

  // ------------------------------------------------------------------ undo
  let lastUndone = null;
  function undoKey() {
    const r = root();
    return r ? "assay-undo:" + r.dataset.project + ":" + r.dataset.query : null;
  }
  function undoStack() {
    try {
      return JSON.parse(sessionStorage.getItem(undoKey()) || "[]");
    } catch (error) {
      return [];
    }
  }
  function saveStack(stack) {
    try {
      sessionStorage.setItem(undoKey(), JSON.stringify(stack.slice(-200)));
    } catch (error) {
      /* private mode: undo lasts as long as the page */
    }
  }
  function pushUndo(history) {
    const stack = undoStack();
    stack.push(history);
    saveStack(stack);
  }
  // Every change made here can be undone, except an undo itself.
  document.addEventListener("labels-changed", (event) => {
    const detail = event.detail || {};
    if (detail.history && !detail.undone && !detail.remote) pushUndo(detail.history);
  });
  // A label saved in another tab on the same query (the document view, a search) reaches
  // this screen as the same event, so its counter and covered cards refresh without a
  // reload; events from elsewhere are marked remote and never relayed again.
  const channelName = () => {
    const el = root();
    return el && el.dataset.query ? `assay-labels-${el.dataset.project}-${el.dataset.query}` : null;
  };
  let channel = null;
  document.addEventListener("DOMContentLoaded", () => {
    const name = channelName();
    if (!name || !("BroadcastChannel" in window)) return;
    channel = new BroadcastChannel(name);
    channel.onmessage = (message) => {
      const detail = { ...message.data, remote: true };
      document.body.dispatchEvent(new CustomEvent("labels-changed", { detail, bubbles: true }));
    };
  });
  // Captured on the way down: htmx may fire the event on the body without bubbling.
  document.addEventListener(
    "labels-changed",
    (event) => {
      const detail = event.detail || {};
      if (!channel || detail.remote) return;
      // Only the change itself: htmx adds the element (which cannot be posted) to it.
      const fields = ["history", "undone", "kind", "document", "chunk", "judgment"];
      channel.postMessage(Object.fromEntries(fields.map((name) => [name, detail[name]])));
    },
    { capture: true },
  );
  function undo() {
    const form = document.getElementById("undo-form");
    if (!form) return;
    const stack = undoStack();
    const history = stack.pop();
    if (history === undefined) {
      setStatus(messages().nothingToUndo || "Nothing to undo.", "pending");
      return;
    }
    saveStack(stack);
    lastUndone = history;
    form.elements.history.value = history;
    setStatus(messages().undoing || "…", "pending");
    if (form.requestSubmit) form.requestSubmit();
    else htmx.trigger(form, "submit");
  }

  // ------------------------------------------------------------------ candidates
  // A card is replaced whenever it is saved or refreshed; the place holding it is not,
  // so the current card is remembered by its place.
  let currentId = null;
  const cards = () => Array.from(document.querySelectorAll("#labelling .candidate"));
  function current() {
    const place = currentId ? document.getElementById(currentId) : null;
    return place ? place.querySelector(".candidate") : null;
  }
  function setCurrent(card, scroll) {
    cards().forEach((c) => c.classList.remove("is-current"));
    if (!card) return;
    card.classList.add("is-current");
    const place = card.closest(".card-place");
    currentId = place ? place.id : null;
    if (scroll !== false) {
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: "nearest" });
    }
  }
  function move(step) {
    const list = cards();
    if (!list.length) return;
    const index = list.indexOf(current());
    const next = index < 0 ? 0 : Math.min(Math.max(index + step, 0), list.length - 1);
    setCurrent(list[next]);
  }
  function grade(value) {
    const card = current();
    if (!card) return false;
    const button = card.querySelector('.grade-form button[name="grade"][value="' + value + '"]');
    if (!button) return false;
    button.click();
    move(1);
    return true;
  }
  function openNote() {
    const card = current();
    const details = card && card.querySelector("details.note");
    if (!details) return;
    details.open = true;
    const area = details.querySelector("textarea");
    if (area) area.focus();
  }
  document.addEventListener("click", (event) => {
    const card = event.target.closest && event.target.closest("#labelling .candidate");
    if (card) setCurrent(card, false);
    const mark = event.target.closest && event.target.closest(".doc-page-text .hl");
    if (mark && window.getSelection().isCollapsed) showEvidence(mark.dataset.judgments);
  });
  document.addEventListener("htmx:afterSettle", () => {
    const card = current();
    if (card) card.classList.add("is-current");
    else if (currentId === null) setCurrent(firstToDo(), false);
  });
  function firstToDo() {
    const list = cards();
    return list.find((c) => !c.classList.contains("graded")) || list[0] || null;
  }

  // ------------------------------------------------------------------ document view
  const pageText = () => document.getElementById("doc-page-text");
  function hideSelection() {
    const form = document.getElementById("passage-form");
    if (form) form.hidden = true;
    const hint = document.getElementById("selection-hint");
    if (hint) hint.hidden = false;
  }
  function captureSelection() {
    const container = pageText();
    const form = document.getElementById("passage-form");
    if (!container || !form) return;
    const picked = selectionOffsets(container);
    if (!picked) {
      hideSelection();
      return;
    }
    form.elements.start.value = picked.start;
    form.elements.end.value = picked.end;
    form.elements.text.value = picked.text;
    const preview = picked.text.length > 200 ? picked.text.slice(0, 199) + "…" : picked.text;
    form.querySelector(".selection-preview").textContent = preview;
    form.querySelector(".selection-length").textContent =
      picked.end - picked.start + " " + (messages().selected || "");
    form.hidden = false;
    const hint = document.getElementById("selection-hint");
    if (hint) hint.hidden = true;
  }
  document.addEventListener("mouseup", (event) => {
    if (event.target.closest && event.target.closest("#passage-form")) return;
    setTimeout(captureSelection, 0);
  });
  document.addEventListener("keyup", (event) => {
    if (event.shiftKey) captureSelection();
  });
  function gradeSelection(value) {
    const form = document.getElementById("passage-form");
    if (!form || form.hidden) return false;
    const button = form.querySelector('button[name="grade"][value="' + value + '"]');
    if (!button) return false;
    button.click();
    return true;
  }
  function showEvidence(ids) {
    (ids || "").split(" ").forEach((id, i) => {
      const row = document.getElementById("docev-" + id);
      if (!row) return;
      if (i === 0) row.scrollIntoView({ block: "nearest" });
      row.classList.add("is-current");
      setTimeout(() => row.classList.remove("is-current"), 1200);
    });
  }
  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "doc-view") {
      window.getSelection().removeAllRanges();
      hideSelection();
    }
  });

  // ------------------------------------------------------------------ search results
  // Results are below the candidates: "r" (and every finished search) moves to the first.
  function focusResults() {
    const results = document.getElementById("search-results");
    if (!results) return false;
    const card = results.querySelector(".candidate");
    if (card) {
      setCurrent(card);
      return true;
    }
    const link = results.querySelector(".doc-result a");
    if (link) {
      link.focus();
      link.scrollIntoView({ block: "nearest" });
      return true;
    }
    return false;
  }
  document.addEventListener("htmx:afterSwap", (event) => {
    const target = event.detail.target;
    if (target && target.id === "search-results" && root()) {
      const fresh = document.getElementById("search-results");
      if (!focusResults() && fresh) fresh.scrollIntoView({ block: "nearest" });
    }
  });

  // ------------------------------------------------------------------ keyboard
  function typing(target) {
    if (!target || !target.closest) return false;
    return Boolean(target.closest("input, textarea, select, [contenteditable]"));
  }
  function click(id) {
    const el = document.getElementById(id);
    if (!el) return false;
    el.click();
    return true;
  }
  document.addEventListener("keydown", (event) => {
    const r = root();
    if (!r) return;
    const target = event.target;
    if (target && target.matches && target.matches(".note textarea")) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        const card = target.closest(".candidate");
        if (target.form.elements.grade && target.form.elements.grade.type === "hidden") {
          target.form.requestSubmit();
        } else if (card) {
          // No grade yet: the server keeps the note until the card's first grade.
          target.form.querySelector("button.keep-note").click();  // htmx sends the clicked button
          card.focus();
        }
      } else if (event.key === "Escape") {
        target.closest("details").open = false;
        const card = target.closest(".candidate");
        if (card) card.focus();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (typing(target)) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const screen = r.dataset.screen;
    const key = event.key;
    let handled = true;
    if (screen === "queue") {
      handled = key === "n" && click("next-query");
    } else if (screen === "document") {
      if ("0123".includes(key) && key.length === 1) {
        // Nothing selected: say what to do instead of doing nothing.
        if (!gradeSelection(key)) setStatus(messages().selectFirst || "", "pending");
      } else if (key === "[") handled = click("prev-page");
      else if (key === "]") handled = click("next-page");
      else if (key === "u") undo();
      else if (key === "b") handled = click("back-link");
      else if (key === "Escape") {
        window.getSelection().removeAllRanges();
        hideSelection();
      } else handled = false;
    } else {
      if ("0123".includes(key) && key.length === 1) handled = grade(key);
      else if (key === "j") move(1);
      else if (key === "k") move(-1);
      else if (key === "o") {
        const link = current() && current().querySelector("a.open-doc");
        if (link) window.location.href = link.href;
        else handled = false;
      } else if (key === "n") openNote();
      else if (key === "u") undo();
      else if (key === "r") handled = focusResults();
      else if (key === "/") {
        const input = document.getElementById("search-input");
        if (input) input.focus();
        else handled = false;
      } else if (key === "d") handled = click("done-confirm") || click("done-button");
      else if (key === "s") {
        const reason = document.getElementById("skip-reason");
        if (reason) reason.focus();
        else handled = false;
      } else handled = false;
    }
    if (handled) event.preventDefault();
  });

  // "Show the whole query" only where the query is longer than its first lines.
  function hideNeedlessToggles() {
    document.querySelectorAll("[data-clamp-toggle]").forEach((toggle) => {
      const text = toggle.previousElementSibling;
      if (text && !toggle.open && text.scrollHeight <= text.clientHeight + 1) toggle.hidden = true;
    });
  }

  function start() {
    if (!root()) return;
    hideNeedlessToggles();
    if (root().dataset.screen !== "document") setCurrent(firstToDo(), false);
    const focus = document.querySelector(".doc-page-text .focus");
    if (focus) focus.scrollIntoView({ block: "center" });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
