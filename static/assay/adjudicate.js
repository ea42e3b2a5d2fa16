// Adjudication queue keyboard: j/k move between items, 0-3 set the final grade of the
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
    else if (/^[0-3]$/.test(event.key)) {
      const button = all[current].querySelector(`button[name=grade][value="${event.key}"]`);
      if (button) { button.click(); event.preventDefault(); }
    }
  });
  document.addEventListener("htmx:afterSwap", () => {
    const status = document.getElementById("save-status");
    if (status) { status.textContent = "Saved"; status.className = "save-status"; }
    focusItem(current + 1);
  });
  document.addEventListener("DOMContentLoaded", () => focusItem(0));
})();
