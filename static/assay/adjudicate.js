// Adjudication queue keyboard: j/k move between items, a grade's digit (the scale is
// <body data-grades>, from numerics.grades) sets the final grade of the
// focused item (with the reason typed in its field), r jumps to the reason field.
(function () {
  function items() { return Array.from(document.querySelectorAll("[data-item]")); }
  let current = 0;
  function focusItem(index) {
    const all = items();
    if (!all.length) return;
    current = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((el, i) => el.classList.toggle("focused", i === current));
    all[current].focus({ preventScroll: true });
    all[current].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest("input, textarea, select");
    if (typing) {
      if (event.key === "Escape") { event.target.blur(); focusItem(current); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const all = items();
    if (!all.length) return;
    if (event.key === "j") { focusItem(current + 1); event.preventDefault(); }
    else if (event.key === "k") { focusItem(current - 1); event.preventDefault(); }
    else if (event.key === "r") { all[current].querySelector("input.reason").focus(); event.preventDefault(); }
    else if (window.assayGrades().includes(event.key)) {
      const button = all[current].querySelector(`button[name=grade][value="${event.key}"]`);
      if (button) { button.click(); event.preventDefault(); }
    }
  });
  // "Saved" only when a grade was saved (a 2xx answer to an item's form), then on to the
  // next item; any other swap (the filters, the next page) starts again at the first item.
  document.addEventListener("htmx:afterSwap", (event) => {
    const config = event.detail.requestConfig || {};
    const saved = config.verb === "post" && event.detail.successful !== false &&
      config.elt && config.elt.matches && config.elt.matches(".adjudicate-form");
    const status = document.getElementById("save-status");
    if (!saved) {
      if (status) { status.textContent = ""; status.className = "save-status floating"; }
      focusItem(0);
      return;
    }
    if (status) { status.textContent = assayMessage("saved"); status.className = "save-status floating ok"; }
    focusItem(current + 1);
  });
  document.addEventListener("DOMContentLoaded", () => focusItem(0));
})();
