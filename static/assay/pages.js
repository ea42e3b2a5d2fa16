// Pages as they look: a passage selected in the text is outlined on the page image.
(function () {
  "use strict";
  let asked = "";
  function clear() {
    const layer = document.getElementById("page-selection");
    if (layer) layer.replaceChildren();
    asked = "";
  }
  function draw(layer, pages, number) {
    layer.replaceChildren();
    pages
      .filter((found) => found.page === number)
      .forEach((found) =>
        found.boxes.forEach(([left, top, right, bottom]) => {
          const box = document.createElement("div");
          box.className = "box";
          box.style.left = 100 * left + "%";
          box.style.top = 100 * top + "%";
          box.style.width = 100 * (right - left) + "%";
          box.style.height = 100 * (bottom - top) + "%";
          layer.appendChild(box);
        }),
      );
  }
  function follow() {
    const figure = document.getElementById("page-picture");
    const form = document.getElementById("passage-form");
    const layer = document.getElementById("page-selection");
    if (!figure || !layer) return;
    if (!form || form.hidden || !form.elements.start.value) {
      clear();
      return;
    }
    const start = form.elements.start.value;
    const end = form.elements.end.value;
    const key = start + "-" + end;
    if (key === asked) return;
    asked = key;
    const url = figure.dataset.boxesUrl + "?start=" + start + "&end=" + end;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : { pages: [] }))
      .then((data) => {
        if (asked === key) draw(layer, data.pages, Number(figure.dataset.page));
      })
      .catch(clear);
  }
  // label.js fills the passage form on mouseup/keyup; look just after it.
  document.addEventListener("mouseup", () => setTimeout(follow, 20));
  document.addEventListener("keyup", () => setTimeout(follow, 20));
  document.addEventListener("htmx:afterSwap", () => (asked = ""));
  // Saved evidence arrives as data-box="left top width height" (percent): the policy
  // forbids style attributes, so the boxes are placed here.
  function place(root) {
    root.querySelectorAll("[data-box]").forEach((box) => {
      const [left, top, width, height] = box.dataset.box.split(" ");
      box.style.left = left + "%";
      box.style.top = top + "%";
      box.style.width = width + "%";
      box.style.height = height + "%";
    });
  }
  document.addEventListener("DOMContentLoaded", () => place(document));
  document.addEventListener("htmx:load", (event) => place(event.target));
})();
