// The answer judging screens: one answer at a time, or several answers to one query side
// by side (a column each). Keys move between items (nuggets, citations, uncited
// sentences, the answer's grade) and judge the current one; h/← and l/→ move between
// columns. Each save carries the version the page showed and an action id (undo names
// it) and goes to its own answer's save URL; a 409 shows what is saved now.
(function () {
  "use strict";
  const screen = document.getElementById("answer-screen");
  if (!screen) return;
  const parts = Array.from(screen.querySelectorAll(".answer-column"));
  // One column per answer: its element (with its save and undo URLs) and its items.
  const columns = (parts.length ? parts : [screen]).map((element) => ({
    element: element,
    items: Array.from(element.querySelectorAll("tr.item")),
  }));
  const status = document.getElementById("answer-status");
  const csrf = screen.querySelector("input[name=csrfmiddlewaretoken]").value;
  const done = [];  // {action, column} saved, newest last
  let column = 0;
  let current = 0;
  let counter = 0;

  function say(text, ok) {
    status.textContent = text;
    status.className = ok ? "ok" : "error";
  }

  function focus(index, at) {
    if (at !== undefined) column = Math.max(0, Math.min(columns.length - 1, at));
    const items = columns[column].items;
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, index));
    columns.forEach((c, ci) => {
      c.element.classList.toggle("current-column", parts.length > 0 && ci === column);
      c.items.forEach((row, i) => row.classList.toggle("current", ci === column && i === current));
    });
    items[current].focus({ preventScroll: true });
    items[current].scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  function show(row, value, version) {
    row.dataset.value = value === null || value === undefined ? "" : String(value);
    if (version) row.dataset.version = version;
    row.querySelectorAll("button.choice").forEach((button) => {
      const on = button.dataset.value === row.dataset.value;
      button.classList.toggle("chosen", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    });
  }

  function rowFor(c, aspect, target) {
    return columns[c].items.find(
      (row) => row.dataset.aspect === aspect && (row.dataset.target || "") === String(target || "")
    );
  }

  async function post(url, fields) {
    const body = new URLSearchParams(fields);
    const response = await fetch(url, {
      method: "POST",
      headers: { "X-CSRFToken": csrf, "X-Requested-With": "fetch" },
      body: body,
      credentials: "same-origin",
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    return { ok: response.ok, status: response.status, data: data };
  }

  async function judge(c, row, value) {
    const action = `a${Date.now().toString(36)}${(counter++).toString(36)}`;
    const answer = await post(columns[c].element.dataset.saveUrl, {
      aspect: row.dataset.aspect,
      target: row.dataset.target,
      value: String(value),
      version: row.dataset.version,
      action: action,
    }).catch(() => null);
    if (!answer) return say(screen.dataset.failed, false);
    if (answer.ok) {
      show(row, answer.data.value, answer.data.version);
      done.push({ action: action, column: c });
      say(answer.data.saved, true);
      const index = columns[c].items.indexOf(row);
      if (c === column && index === current) focus(current + 1);
    } else {
      if (answer.status === 409) show(row, answer.data.value, answer.data.version);
      say(answer.data.error || screen.dataset.failed, false);
    }
  }

  async function undo() {
    const last = done.pop();
    if (!last) return say(screen.dataset.nothingToUndo, false);
    const c = last.column;
    const answer = await post(columns[c].element.dataset.undoUrl, { action: last.action })
      .catch(() => null);
    if (!answer) return say(screen.dataset.failed, false);
    const row = rowFor(c, answer.data.aspect, answer.data.target);
    if (answer.ok) {
      if (row) {
        show(row, answer.data.value, answer.data.version);
        focus(columns[c].items.indexOf(row), c);
      }
      say(answer.data.saved, true);
    } else {
      say(answer.data.error || screen.dataset.failed, false);
      if (answer.status === 409) location.reload();
    }
  }

  columns.forEach((c, ci) => {
    c.items.forEach((row, index) => {
      row.addEventListener("click", () => focus(index, ci));
      row.querySelectorAll("button.choice").forEach((button) => {
        button.addEventListener("click", (event) => {
          event.stopPropagation();
          focus(index, ci);
          judge(ci, row, button.dataset.value);
        });
      });
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") return;
    const key = event.key;
    if (key === "j" || key === "ArrowDown") { focus(current + 1); event.preventDefault(); return; }
    if (key === "k" || key === "ArrowUp") { focus(current - 1); event.preventDefault(); return; }
    if (parts.length && (key === "h" || key === "ArrowLeft")) {
      focus(current, column - 1); event.preventDefault(); return;
    }
    if (parts.length && (key === "l" || key === "ArrowRight")) {
      focus(current, column + 1); event.preventDefault(); return;
    }
    if (key === "u") { undo(); event.preventDefault(); return; }
    if (key === "]") { location.href = screen.dataset.nextUrl; event.preventDefault(); return; }
    const items = columns[column].items;
    if (["1", "2", "3", "4"].includes(key)) {
      const crag = items.find((row) => row.dataset.aspect === "crag");
      const button = crag && crag.querySelector(`button.choice[data-key="${key}"]`);
      if (button) {
        focus(items.indexOf(crag));
        judge(column, crag, button.dataset.value);
        event.preventDefault();
      }
      return;
    }
    const row = items[current];
    const button = row && row.querySelector(`button.choice[data-key="${key}"]`);
    if (button) { judge(column, row, button.dataset.value); event.preventDefault(); }
  });

  focus(0, 0);
})();
