// Assay nugget panel: a passage selected in a card or in the document view becomes the
// evidence of a new nugget ("m") or is linked to a nugget ("l"). Every action is also a
// plain form; the server checks the selected characters against the document's text.
(function () {
  "use strict";
  // The panel comes with the document view's text, which htmx swaps on a page turn:
  // the script then arrives again and must not listen twice.
  if (window.assayNuggets) return;
  window.assayNuggets = true;

  const panel = () => document.getElementById("nugget-panel");
  let picked = null; // {document, start, end, text} of the last selection

  function codePoints(text) {
    return window.assayLabel ? window.assayLabel.codePoints(text) : Array.from(text).length;
  }

  // Offsets of the selection inside a card's text: the card's text is the document's
  // characters [data-start, data-end), so the offset is data-start plus the code points
  // before the boundary.
  function cardOffsets(container, range) {
    const clipped = range.cloneRange();
    if (!container.contains(clipped.startContainer)) clipped.setStart(container, 0);
    if (!container.contains(clipped.endContainer)) {
      clipped.setEnd(container, container.childNodes.length);
    }
    const before = document.createRange();
    before.setStart(container, 0);
    before.setEnd(clipped.startContainer, clipped.startOffset);
    const base = Number(container.dataset.start);
    const start = base + codePoints(before.toString());
    const text = clipped.toString();
    const end = start + codePoints(text);
    if (!(end > start)) return null;
    return { document: container.dataset.document, start: start, end: end, text: text };
  }

  function selectionNow() {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    // A drag that began in a card's text and ran past it keeps to that card's text.
    const node = range.startContainer;
    const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    const card = element && element.closest ? element.closest(".cand-text[data-document]") : null;
    if (card) return cardOffsets(card, range);
    const page = document.getElementById("doc-page-text");
    if (page && range.intersectsNode(page) && window.assayLabel) {
      const found = window.assayLabel.selectionOffsets(page);
      const toolbar = document.querySelector(".doc-toolbar[data-document]");
      if (found && toolbar) return { document: toolbar.dataset.document, ...found };
    }
    return null;
  }

  function fill() {
    const box = document.getElementById("nugget-selection");
    if (!box) return;
    if (!picked) {
      box.hidden = true;
      const hint = document.getElementById("nugget-hint");
      if (hint) hint.hidden = false;
      return;
    }
    ["nugget-new-form", "nugget-link-form"].forEach((id) => {
      const form = document.getElementById(id);
      if (!form) return;
      form.elements.document.value = picked.document;
      form.elements.start.value = picked.start;
      form.elements.end.value = picked.end;
      form.elements.selected.value = picked.text;
    });
    const preview = picked.text.length > 200 ? picked.text.slice(0, 199) + "…" : picked.text;
    box.querySelector(".nugget-selection-text").textContent = preview;
    const area = document.getElementById("nugget-new-text");
    if (area && (!area.value || area.dataset.prefilled === area.value)) {
      area.value = picked.text.trim().slice(0, 300);
      area.dataset.prefilled = area.value;
    }
    box.hidden = false;
    const hint = document.getElementById("nugget-hint");
    if (hint) hint.hidden = true;
  }

  function capture(event) {
    const p = panel();
    if (!p || !p.dataset.mayEdit) return;
    if (event && event.target.closest && event.target.closest("#nugget-panel")) return;
    const found = selectionNow();
    if (found) {
      picked = found;
      fill();
    }
  }
  document.addEventListener("mouseup", (event) => setTimeout(() => capture(event), 0));
  document.addEventListener("keyup", (event) => {
    if (event.shiftKey) capture(event);
  });

  function typing(target) {
    return Boolean(target && target.closest && target.closest("input, textarea, select"));
  }
  document.addEventListener("keydown", (event) => {
    const p = panel();
    if (!p || !p.dataset.mayEdit) return;
    const target = event.target;
    if (target && target.closest && target.closest("#nugget-panel")) {
      const form = target.form;
      if (event.key === "Enter" && form && (event.ctrlKey || event.metaKey || target.tagName === "SELECT")) {
        event.preventDefault();
        form.requestSubmit();
      } else if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || typing(target)) return;
    if (event.key !== "m" && event.key !== "l") return;
    const found = selectionNow();
    if (found) picked = found;
    if (!picked) return;
    fill();
    const field = document.getElementById(event.key === "m" ? "nugget-new-text" : "nugget-link-select");
    if (!field) return;
    event.preventDefault();
    event.stopPropagation();
    field.scrollIntoView({ block: "nearest" });
    field.focus();
    if (field.select && event.key === "m") field.select();
  });

  document.addEventListener("htmx:afterSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "nugget-panel") return;
    const saved = document.getElementById("nugget-message");
    if (saved) {
      picked = null; // the passage went into a nugget
      const status = document.getElementById("save-status");
      const p = panel();
      if (status && p) {
        status.textContent = p.dataset.saved || "";
        status.className = "save-status floating ok";
      }
    }
    fill();
  });
})();
