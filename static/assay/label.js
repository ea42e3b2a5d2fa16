// Assay labelling screens: keyboard grading, save feedback, undo, passage selection.
// Every action is also a plain form, so the screens work (slower) without this file.
// A save answers with its own fragment and a "labels-changed" event; the other regions
// of a screen refresh themselves on that event (hx-trigger in the templates).
(function () {
  "use strict";

  const root = () => document.getElementById("labelling");
  const message = (key, values) => window.assayMessage(key, values);
  const isGradeKey = (key) => window.assayGrades().includes(key);

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
  // The status line is fixed at the bottom of the window (label.css), where it is seen
  // whatever card is on screen, and read out by screen readers (aria-live).
  function setStatus(text, kind) {
    const status = document.getElementById("save-status");
    if (!status) return;
    status.textContent = text;
    status.className = "save-status floating " + kind;
  }
  const isWrite = (event) =>
    root() && root().contains(event.detail.elt) &&
    (event.detail.requestConfig ? event.detail.requestConfig.verb : event.detail.verb) === "post";
  // A change of a label (not an undo, not the queue status): posted to the judge address,
  // or by a form marked data-undoable (a card's quality grade, quality.js).
  const isLabelChange = (detail) =>
    root() && detail.verb === "post" && root().contains(detail.elt) &&
    detail.elt.id !== "undo-form" &&
    (detail.path === root().dataset.judgeUrl || detail.elt.hasAttribute("data-undoable"));

  // Each action gets its id when the person acts (the key press, the click), before it is
  // queued behind a save still in flight; htmx asks htmx:confirm again when it sends a
  // queued request, and the id is already there.
  document.addEventListener("htmx:confirm", (event) => {
    const detail = event.detail;
    const trigger = detail.triggeringEvent;
    if (!trigger || trigger.assayAction || trigger.assayUndo) return;
    if (detail.elt.id === "undo-form" && pendingUndo) {
      trigger.assayUndo = pendingUndo;
      return;
    }
    if (!isLabelChange(detail)) return;
    if (!confirmShortPassage(event, trigger)) return;
    const entry = actionEntry(detail.elt, trigger);
    trigger.assayAction = entry.id;
    if (entry.undoable) pushUndo(entry);
  });
  document.addEventListener("htmx:configRequest", (event) => {
    if (!root() || event.detail.verb !== "post" || !root().contains(event.detail.elt)) return;
    event.detail.parameters["elapsed"] = takeElapsed();
    const trigger = event.detail.triggeringEvent || {};
    if (trigger.assayAction) event.detail.parameters["action_id"] = trigger.assayAction;
    if (trigger.assayShortOk) event.detail.parameters["short_ok"] = "1";
    if (trigger.assayUndo) {
      event.detail.parameters["action_id"] = trigger.assayUndo.id;
      if (trigger.assayUndo.pos) event.detail.parameters["pos"] = trigger.assayUndo.pos;
    }
    // A note kept on an ungraded card goes with the card's next grade.
    const elt = event.detail.elt;
    const card = elt.matches && elt.matches(".grade-form") ? elt.closest(".candidate") : null;
    const kept = card && !card.classList.contains("graded") && card.querySelector(".note textarea");
    if (kept && kept.value.trim()) event.detail.parameters["note"] = kept.value;
  });
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (isWrite(event)) setStatus(message("saving"), "pending");
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (!isWrite(event)) return;
    const trigger = event.detail.requestConfig.triggeringEvent || {};
    // An action that logged no change (refused, failed, the same grade again) leaves the
    // undo list: undo reverses what the person changed.
    if (trigger.assayAction && !loggedChange(event.detail.xhr)) dropUndo(trigger.assayAction);
    if (!event.detail.successful) return;
    if (trigger.assayUndo) showUndone(trigger.assayUndo);
    const holder = event.detail.elt.closest(".candidate, .evidence-row, .doc-result");
    if (holder) holder.classList.remove("save-failed");
  });
  // Whether the answer logged a change: an event (labels-changed, quality-changed) naming
  // its history row.
  function loggedChange(xhr) {
    try {
      const events = JSON.parse(xhr.getResponseHeader("HX-Trigger") || "{}");
      return Object.values(events).some((detail) => Boolean(detail && detail.history));
    } catch (error) {
      return false;
    }
  }
  function failed(event, text) {
    if (!root()) return;
    setStatus(text, "error");
    const elt = event.detail.elt;
    const holder = elt && elt.closest && elt.closest(".candidate, .evidence-row, .doc-result");
    if (holder) holder.classList.add("save-failed");
    const config = event.detail.requestConfig || {};
    const trigger = config.triggeringEvent || {};
    if (trigger.assayUndo) pushUndo(trigger.assayUndo); // not undone: it can be tried again
  }
  document.addEventListener("htmx:responseError", (event) => {
    failed(event, window.assayFailure(event.detail.xhr));
  });
  document.addEventListener("htmx:sendError", (event) => {
    failed(event, message("offline"));
  });

  // ------------------------------------------------------------------ undo
  // The undo list holds the person's own actions, newest last, each by its id: undo
  // names the action, and the server reverses the change that action made, even when
  // its save had not answered as undo was pressed (requests on a screen go one at a time).
  let pendingUndo = null;
  function undoKey() {
    const r = root();
    return r ? "assay-undo:" + r.dataset.project + ":" + r.dataset.query : null;
  }
  function undoStack() {
    try {
      const stack = JSON.parse(sessionStorage.getItem(undoKey()) || "[]");
      return stack.filter((entry) => entry && typeof entry.id === "string");
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
  function pushUndo(entry) {
    const stack = undoStack();
    stack.push(entry);
    saveStack(stack);
  }
  function dropUndo(id) {
    saveStack(undoStack().filter((entry) => entry.id !== id));
  }
  function actionId() {
    const bytes = new Uint8Array(8);
    window.crypto.getRandomValues(bytes); // randomUUID needs https; this works on plain http
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  // What an action is on: the place to bring back into view, the card's number.
  function actionEntry(form, trigger) {
    const place = form.closest(".card-place, .evidence-row, .doc-result");
    const position = form.querySelector('input[name="pos"]');
    // Keeping a note on a card not graded yet changes no label: nothing to undo.
    const keep = trigger.submitter && trigger.submitter.value === "keep";
    return {
      id: actionId(),
      place: place ? place.id : null,
      pos: position ? position.value : null,
      undoable: !keep,
    };
  }
  function undo() {
    const form = document.getElementById("undo-form");
    if (!form) return;
    const stack = undoStack();
    const entry = stack.pop();
    if (entry === undefined) {
      setStatus(message("nothingToUndo"), "pending");
      return;
    }
    saveStack(stack);
    setStatus(message("undoing"), "pending");
    pendingUndo = entry; // read by htmx:confirm as the form is submitted, synchronously
    try {
      if (form.requestSubmit) form.requestSubmit();
      else htmx.trigger(form, "submit");
    } finally {
      pendingUndo = null;
    }
  }
  // The undone evidence is brought into view and marked; the status line says what changed.
  function showUndone(entry) {
    const place = entry.place ? document.getElementById(entry.place) : null;
    if (!place) return;
    const card = place.querySelector(".candidate");
    if (card) setCurrent(card);
    else place.scrollIntoView({ block: "nearest" });
    place.classList.add("just-undone");
    setTimeout(() => place.classList.remove("just-undone"), 1500);
  }
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
    channel.onmessage = (incoming) => {
      const detail = { ...incoming.data, remote: true };
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
      const fields = ["history", "undone", "kind", "document", "chunk", "judgment", "conflict"];
      channel.postMessage(Object.fromEntries(fields.map((name) => [name, detail[name]])));
    },
    { capture: true },
  );

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
    if (form) {
      form.hidden = true;
      askShort(form, null);
    }
    const hint = document.getElementById("selection-hint");
    if (hint) hint.hidden = false;
  }
  // A passage shorter than the project's setting (data-short) is saved only when the same
  // grade is given twice: a mis-drag selects a character or two.
  function askShort(form, grade, length) {
    const line = form.querySelector(".short-confirm");
    if (grade === null) {
      delete form.dataset.shortGrade;
      if (line) line.textContent = "";
      return;
    }
    form.dataset.shortGrade = grade;
    if (line) line.textContent = message("shortPassage", { n: length, grade: grade });
  }
  function confirmShortPassage(event, trigger) {
    const form = event.detail.elt;
    if (form.id !== "passage-form") return true;
    const length = Number(form.elements.end.value) - Number(form.elements.start.value);
    const grade = trigger.submitter ? trigger.submitter.value : "";
    if (!(length < Number(form.dataset.short || 0))) return true;
    if (form.dataset.shortGrade === grade) {
      trigger.assayShortOk = true;
      askShort(form, null);
      return true;
    }
    askShort(form, grade, length);
    event.preventDefault();
    return false;
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
    form.querySelector(".selection-length").textContent = message("selected", {
      n: picked.end - picked.start,
    });
    askShort(form, null);
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
    if (target && target.matches && target.matches(".cand-text .repeat") &&
        (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      toggleRepeat(target);
      return;
    }
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
      if (isGradeKey(key)) {
        // Nothing selected: say what to do instead of doing nothing.
        if (!gradeSelection(key)) setStatus(message("selectFirst"), "pending");
      } else if (key === "[") handled = click("prev-page");
      else if (key === "]") handled = click("next-page");
      else if (key === "u") undo();
      else if (key === "b") handled = click("back-link");
      else if (key === "Escape") {
        window.getSelection().removeAllRanges();
        hideSelection();
      } else handled = false;
    } else {
      if (isGradeKey(key)) handled = grade(key);
      else if (key === "j") move(1);
      else if (key === "k") move(-1);
      else if (key === "e") handled = toggleLong(current());
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

  // ------------------------------------------------------------------ long cards
  // A card's text box holds 14 lines; a longer text says how many more lines it has and
  // opens with the button or "e" (the current card), instead of being cut without a cue.
  function markLongCards() {
    document.querySelectorAll("#labelling .cand-text").forEach((text) => {
      if (text.classList.contains("expanded")) return;
      const next = text.nextElementSibling;
      const button = next && next.matches(".more-lines") ? next : null;
      const lineHeight = parseFloat(getComputedStyle(text).lineHeight) || 20;
      const hidden = Math.ceil((text.scrollHeight - text.clientHeight - 1) / lineHeight);
      if (hidden <= 0) {
        text.classList.remove("clipped");
        if (button) button.remove();
        return;
      }
      text.classList.add("clipped");
      const more = button || document.createElement("button");
      more.type = "button";
      more.className = "more-lines";
      more.dataset.lines = String(hidden);
      more.setAttribute("aria-expanded", "false");
      more.textContent = message("moreLines", { n: hidden });
      if (!button) text.after(more);
    });
  }
  function toggleLong(card) {
    const text = card && card.querySelector(".cand-text");
    const more = text && text.nextElementSibling;
    if (!more || !more.matches(".more-lines")) return false;
    const open = !text.classList.contains("expanded");
    text.classList.toggle("expanded", open);
    text.classList.toggle("clipped", !open);
    more.setAttribute("aria-expanded", String(open));
    more.textContent = open ? message("fewerLines") : message("moreLines", { n: more.dataset.lines });
    if (!open) card.scrollIntoView({ block: "nearest" });
    return true;
  }
  document.addEventListener("click", (event) => {
    const more = event.target.closest && event.target.closest("#labelling .more-lines");
    if (more) toggleLong(more.closest(".candidate"));
    const repeat = event.target.closest && event.target.closest("#labelling .cand-text .repeat");
    // A click on the folded part's name opens or closes it (not a click in its open text).
    if (repeat && !event.target.closest(".repeat-text")) toggleRepeat(repeat);
  });
  // Text an earlier card shows (pieces.repeated_parts), opened in place to read it again.
  function toggleRepeat(repeat) {
    const open = !repeat.classList.contains("open");
    repeat.classList.toggle("open", open);
    repeat.setAttribute("aria-expanded", String(open));
    markLongCards();
  }
  document.addEventListener("htmx:afterSettle", markLongCards);

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
    markLongCards();
    if (root().dataset.screen !== "document") setCurrent(firstToDo(), false);
    const focus = document.querySelector(".doc-page-text .focus");
    if (focus) focus.scrollIntoView({ block: "center" });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
