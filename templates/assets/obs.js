/* obs: a little local JavaScript. Every table is complete without it; this only adds sorting and
   filtering. No network, no globals besides `obs`, no inline handlers (a strict CSP applies). */
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var raw = cell.getAttribute("data-sort");
    return raw !== null ? raw : cell.textContent.trim();
  }

  function groupOf(row, index) {
    var cell = row.cells[index];
    return (cell && cell.getAttribute("data-group")) || "";
  }

  function compare(a, b, numeric) {
    if (numeric) {
      var x = parseFloat(a), y = parseFloat(b);
      var xn = isNaN(x), yn = isNaN(y);
      if (xn && yn) return 0;
      if (xn) return 1;   // missing values always sink to the bottom
      if (yn) return -1;
      return x - y;
    }
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function makeSortable(table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      var button = th.querySelector("button.sort");
      if (!button) return;
      button.addEventListener("click", function () {
        var current = th.getAttribute("aria-sort");
        var dir = current === "ascending" ? "descending" : "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var numeric = th.getAttribute("data-type") === "number";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          // a cell may name its comparable set (data-group): rows are ranked within their set only
          var g1 = groupOf(r1, index), g2 = groupOf(r2, index);
          if (g1 !== g2) return g1.localeCompare(g2, undefined, { numeric: true, sensitivity: "base" });
          var v1 = cellValue(r1, index), v2 = cellValue(r2, index);
          // missing, NaN and infinite values sink to the bottom in both directions
          var missing1 = v1 === "" || (numeric && !isFinite(parseFloat(v1)));
          var missing2 = v2 === "" || (numeric && !isFinite(parseFloat(v2)));
          if (missing1 !== missing2) return missing1 ? 1 : -1;
          if (missing1) return 0;
          var c = compare(v1, v2, numeric);
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  function makeFilterable(form) {
    var table = document.getElementById(form.getAttribute("data-table"));
    if (!table) return;
    var count = form.querySelector("[data-count]");
    var inputs = form.querySelectorAll("input, select");
    function apply() {
      var text = "";
      var facets = [];
      Array.prototype.forEach.call(inputs, function (el) {
        if (el.type === "search") text = el.value.trim().toLowerCase();
        else if (el.value) facets.push([el.getAttribute("data-facet"), el.value]);
      });
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var ok = !text || row.textContent.toLowerCase().indexOf(text) !== -1;
        facets.forEach(function (f) {
          if (ok && (row.getAttribute("data-" + f[0]) || "") !== f[1]) ok = false;
        });
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      if (count) count.textContent = shown + " of " + table.tBodies[0].rows.length + " runs";
    }
    Array.prototype.forEach.call(inputs, function (el) {
      el.addEventListener("input", apply);
      el.addEventListener("change", apply);
    });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.hidden = false;
    apply();
  }

  // The Configuration section: a search over every key and value; groups with a hit are opened.
  function makeRowSearch(form) {
    var box = document.getElementById(form.getAttribute("data-rows"));
    var input = form.querySelector("input");
    var count = form.querySelector("[data-count]");
    if (!box || !input) return;
    var rows = box.querySelectorAll("tbody tr");
    function apply() {
      var text = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var ok = !text || row.textContent.toLowerCase().indexOf(text) !== -1;
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      Array.prototype.forEach.call(box.querySelectorAll("details"), function (d) {
        var hits = d.querySelectorAll("tbody tr:not([hidden])").length;
        if (text) d.open = hits > 0;
      });
      if (count) count.textContent = text ? shown + " of " + rows.length + " keys" : "";
    }
    input.addEventListener("input", apply);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.hidden = false;
  }

  // A box that scrolls (a wide table, a long model output) must be reachable from the keyboard, or
  // its hidden part cannot be read without a mouse. Only boxes that really scroll get a tab stop,
  // and the check is redone when the layout can change (fonts, images, resize, <details> opened).
  function markScrollable() {
    // Measure every box first, then change attributes: a change between two measurements makes
    // the browser lay the page out again. Boxes in a section not drawn yet (content-visibility:
    // auto) are measured when it is: asking for their size now would make the browser lay each
    // such section out on its own (77 layouts on a run page's load).
    var boxes = [];
    Array.prototype.forEach.call(document.querySelectorAll(".table-wrap, pre.text"), function (el) {
      if (el.checkVisibility && !el.checkVisibility({ contentVisibilityAuto: true })) return;
      boxes.push([el, el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1]);
    });
    boxes.forEach(function (box) {
      var el = box[0], scrolls = box[1];
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.setAttribute("data-scroll-focus", "");
      } else if (!scrolls && el.hasAttribute("data-scroll-focus")) {
        el.removeAttribute("tabindex");
        el.removeAttribute("data-scroll-focus");
      }
    });
  }
  var pending = false;
  function markSoon() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; markScrollable(); });
  }

  // The leaderboard's pick boxes: the button opens compare.html with the picked runs overlaid.
  function wirePicks(go) {
    var boxes = document.querySelectorAll("input.pick");
    function picked() {
      return Array.prototype.filter.call(boxes, function (b) { return b.checked; })
        .map(function (b) { return encodeURIComponent(b.value); });
    }
    function update() {
      var n = picked().length;
      go.disabled = n === 0;
      go.textContent = n ? "Overlay curves of " + n + " picked run" + (n === 1 ? "" : "s") : "Overlay curves of picked runs";
    }
    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", update); });
    go.addEventListener("click", function () {
      location.href = go.getAttribute("data-href") + "?runs=" + picked().join(",") + "#overlay";
    });
    update();
  }

  document.addEventListener("DOMContentLoaded", function () {
    var go = document.querySelector("[data-overlay-go]");
    if (go) wirePicks(go);
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
    Array.prototype.forEach.call(document.querySelectorAll("form.filters"), makeFilterable);
    Array.prototype.forEach.call(document.querySelectorAll("form.config-search"), makeRowSearch);
    markScrollable();
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(markSoon);
  });
  window.addEventListener("load", markScrollable);
  window.addEventListener("resize", markSoon);
  document.addEventListener("toggle", markSoon, true);
  // sections drawn only near the viewport (content-visibility: auto) have no size until then
  document.addEventListener("contentvisibilityautostatechange", markSoon, true);
})();
