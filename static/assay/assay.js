// Assay: small progressive enhancements; every page works without this file.

// What scripts write comes from the catalogue, in the page's language: the JSON island
// the page carries (annotator/templatetags/script_messages.py). A message with a count is
// {"one", "other"}, chosen by values.n; %(name)s placeholders are filled from values.
window.assayMessage = (function () {
  let catalogue = null;
  return function (key, values) {
    if (catalogue === null) {
      const island = document.getElementById("assay-messages");
      try {
        catalogue = island ? JSON.parse(island.textContent) : {};
      } catch (error) {
        catalogue = {};
      }
    }
    let text = catalogue[key];
    if (text === undefined) return "";
    values = values || {};
    if (typeof text === "object") text = Number(values.n) === 1 ? text.one : text.other;
    return text.replace(/%\((\w+)\)s/g, (whole, name) => (name in values ? String(values[name]) : whole));
  };
})();

// The grade scale, as the digits that grade ("0", "1", …): <body data-grades>, written by
// the server from numerics.grades, the one place that knows the scale.
window.assayGrades = function () {
  const scale = document.body.dataset.grades || "";
  return scale ? scale.split(" ") : [];
};

// Why a write failed, from its answer: the status, and a short plain-text reason if any.
window.assayFailure = function (xhr) {
  let detail = String(xhr.status);
  const type = xhr.getResponseHeader("Content-Type") || "";
  if (type.indexOf("text/plain") === 0 && xhr.responseText.length < 300) {
    detail += ": " + xhr.responseText;
  }
  return assayMessage("notSaved", { detail: detail });
};

// A failed write is reported where it was made: inside the nearest [data-error-here]
// (a drill-down's item), else in the page's status line. The labelling screens report
// their own (label.js).
function showWriteError(elt, text) {
  if (elt && elt.closest && elt.closest("#labelling")) return;
  const holder = elt && elt.closest ? elt.closest("[data-error-here]") : null;
  if (holder) {
    let line = holder.querySelector(".grade-error");
    if (!line) {
      line = document.createElement("p");
      line.className = "grade-error error";
      line.setAttribute("role", "alert");
      holder.appendChild(line);
    }
    line.textContent = text;
    return;
  }
  const status = document.getElementById("save-status");
  if (status) {
    status.textContent = text;
    status.className = "save-status floating error";
  }
}
document.addEventListener("htmx:responseError", (event) => {
  showWriteError(event.detail.elt, assayFailure(event.detail.xhr));
});
document.addEventListener("htmx:sendError", (event) => {
  showWriteError(event.detail.elt, assayMessage("offline"));
});

// Forms marked data-swap-errors show a 400 answer (the form again, with its errors and
// what was typed) in place of themselves instead of a bare "Not saved" line.
document.addEventListener("htmx:beforeSwap", (event) => {
  const elt = event.detail.elt;
  if (event.detail.xhr.status !== 400 || !elt || !elt.closest) return;
  if (!elt.closest("[data-swap-errors]")) return;
  event.detail.shouldSwap = true;
  event.detail.isError = false;
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

// The Content-Security-Policy allows no inline handlers: forms and controls say what they
// want in data attributes. data-autosubmit: a change submits the control's form;
// data-confirm: the form asks before it is sent.
document.addEventListener("change", (event) => {
  const control = event.target;
  if (control.matches && control.matches("[data-autosubmit]") && control.form) control.form.submit();
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// A form with a data-kind-switch control (the import page's kind) shows only the parts
// whose data-kinds list the chosen value; parts without data-kinds are for every kind.
// Without this script every field shows, and the server ignores those of other kinds.
function showKindParts(select) {
  if (!select.form) return;
  select.form.querySelectorAll("[data-kinds]").forEach((part) => {
    part.hidden = part.dataset.kinds !== "" && !part.dataset.kinds.split(" ").includes(select.value);
  });
}
document.addEventListener("change", (event) => {
  if (event.target.matches && event.target.matches("[data-kind-switch]")) showKindParts(event.target);
});
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-kind-switch]").forEach(showKindParts);
});

// Regions that refresh themselves after a label change. htmx's event filters
// (labels-changed[...]) are evaluated code, which the policy forbids, so each region
// states its conditions as data attributes and gets a "labels-refresh" event when the
// change concerns it: data-refresh-document / -chunk / -kind must equal the event's
// detail; data-refresh-not-own skips the region whose own form saved; data-refresh-card
// ("present" / "absent") asks whether the changed chunk is a candidate card on screen;
// data-refresh-span-or-chunk takes span labels (passage, page, document) and only its own
// chunk's labels, so a grade on one card does not refresh its neighbours.
document.addEventListener("labels-changed", (event) => {
  const detail = event.detail || {};
  const source = event.target;
  document.querySelectorAll("[data-refresh]").forEach((region) => {
    const want = region.dataset;
    if (want.refreshDocument && String(detail.document) !== want.refreshDocument) return;
    if (want.refreshChunk && String(detail.chunk) !== want.refreshChunk) return;
    if (want.refreshKind && detail.kind !== want.refreshKind) return;
    if (
      want.refreshSpanOrChunk &&
      detail.kind === "chunk" &&
      String(detail.chunk) !== want.refreshSpanOrChunk
    )
      return;
    if ("refreshNotOwn" in want && source instanceof Node && region.contains(source)) return;
    if (want.refreshCard) {
      const present = !!document.getElementById("cand-" + detail.chunk);
      if (present !== (want.refreshCard === "present")) return;
    }
    htmx.trigger(region, "labels-refresh");
  });
});

// Chart PNG downloads (a[data-png]): the server's SVG drawn on a canvas at twice its size.
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a[data-png]");
  if (!link) return;
  event.preventDefault();
  // The image loads from the chart's own (same-origin) URL: the CSP allows no data: or
  // blob: images, and a same-origin SVG leaves the canvas exportable.
  const image = new Image();
  image.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = image.width * 2;
    canvas.height = image.height * 2;
    const context = canvas.getContext("2d");
    context.scale(2, 2);
    context.drawImage(image, 0, 0);
    canvas.toBlob((blob) => {
      const anchor = document.createElement("a");
      anchor.href = URL.createObjectURL(blob);
      anchor.download = link.dataset.png;
      anchor.click();
      setTimeout(() => URL.revokeObjectURL(anchor.href), 1000);
    }, "image/png");
  };
  image.src = link.href;
});

// Regions that refresh themselves (data-refresh-pause: the dashboard's figures) leave alone
// what a person is reading: no refresh while text in them is selected or the pointer is on
// their table (a number being copied stays selected), and an answer that changes nothing
// is not swapped in. #refresh-state says when updates wait.
(function () {
  function holds(region) {
    if (region.querySelector("table:hover")) return true;
    const selection = window.getSelection();
    return Boolean(
      selection && !selection.isCollapsed && selection.rangeCount &&
      selection.getRangeAt(0).intersectsNode(region),
    );
  }
  function sayPaused(region, paused) {
    const line = document.getElementById("refresh-state");
    if (line && line.dataset.for === region.id) {
      line.textContent = paused ? assayMessage("refreshPaused") : "";
    }
  }
  document.addEventListener("htmx:beforeRequest", (event) => {
    const region = event.detail.elt;
    if (!region.matches || !region.matches("[data-refresh-pause]")) return;
    const paused = holds(region);
    sayPaused(region, paused);
    if (paused) event.preventDefault();
  });
  document.addEventListener("htmx:beforeSwap", (event) => {
    const region = event.detail.target;
    if (!region || !region.matches || !region.matches("[data-refresh-pause]")) return;
    if (holds(region)) {
      event.detail.shouldSwap = false; // selected or pointed at while the answer came
      sayPaused(region, true);
      return;
    }
    const fresh = document.createElement("div");
    fresh.innerHTML = event.detail.serverResponse;
    if (fresh.innerHTML.trim() === region.innerHTML.trim()) event.detail.shouldSwap = false;
  });
  document.addEventListener("selectionchange", () => {
    document.querySelectorAll("[data-refresh-pause]").forEach((region) => {
      if (!holds(region)) sayPaused(region, false);
    });
  });
  document.addEventListener("mouseout", (event) => {
    const region = event.target.closest && event.target.closest("[data-refresh-pause]");
    if (region && !holds(region)) sayPaused(region, false);
  });
})();
