/* obs compare.html: parallel coordinates of the runs table. One vertical axis per column of the
   table (settings, outcomes; the reader picks them with the table's "Columns"), one line per run in
   its colour; the runs the filter drops are drawn faint grey.

   Brushing: drag along a numeric axis to keep the runs inside that range; click the axis without
   dragging to clear it. A brush is the pair of clauses `col >= lo; col <= hi` in the table's filter,
   so the filter box, the table, the scatter, the link (where=) and "Overlay these runs" all follow
   it, and a filter typed by hand shows as a brush. Reordering: drag an axis by its name; the table's
   columns follow (cols= in the link keeps the order).

   From the keyboard, with an axis focused (Tab): Shift+← / Shift+→ move it; ↑ / ↓ move its brush
   (the first press brushes the middle half), + / − narrow or widen it, Delete or Escape clears it.
   What a brush keeps is said in a live status line. Everything from a run is written with
   textContent or as SVG text nodes. */
(function () {
  "use strict";
  const T = window.obsRunsTable, C = window.obsCharts;
  const box = document.querySelector("[data-pcp]");
  if (!T || !C || !box) return;
  const status = document.querySelector("[data-pcp-status]");
  const SVG = "http://www.w3.org/2000/svg";
  const H = 300, TOP = 40, BOTTOM = 26, LABEL = 16;
  const FAINT = "#d5dae1", ACCENT = "#2f5d9e";

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(k => e.setAttribute(k, String(attrs[k])));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --------------------------------------------------------------------------------- axes

  /* An axis per column that any run has a value of: numeric when every value reads as a number
     (log when all are positive and span two decades or more), else its values as evenly spaced
     categories. */
  function axisOf(col) {
    const values = [];
    let numeric = true;
    T.runs.forEach(r => {
      const [text, v] = T.cell(r, col);
      if (text === null) return;
      values.push([text, v]);
      if (v === null) numeric = false;
    });
    if (!values.length) return null;
    if (numeric) {
      const nums = values.map(p => p[1]);
      const lo = Math.min(...nums), hi = Math.max(...nums);
      const log = lo > 0 && hi / lo >= 100;
      const f = log ? Math.log10 : v => v;
      const a = f(lo), b = f(hi);
      const t = v => b > a ? (f(v) - a) / (b - a) : 0.5;
      const inv = u => { const w = a + u * (b - a); return log ? Math.pow(10, w) : w; };
      return { col, numeric: true, lo, hi, log, t, inv };
    }
    const cats = Array.from(new Set(values.map(p => p[0]))).sort((x, y) => {
      const nx = T.asNumber(x), ny = T.asNumber(y);
      return nx !== null && ny !== null ? nx - ny : x.localeCompare(y);
    });
    const t = text => cats.length > 1 ? cats.indexOf(text) / (cats.length - 1) : 0.5;
    return { col, numeric: false, cats, t };
  }

  /* The brush of a numeric axis from the filter's clauses on its column: [lo, hi] or null. */
  function brushOf(axis) {
    if (!axis.numeric) return null;
    let lo = -Infinity, hi = Infinity, any = false;
    T.clauses().forEach(c => {
      if (c.col !== axis.col || c.number === null) return;
      if (c.op === ">=" || c.op === ">") { lo = Math.max(lo, c.number); any = true; }
      if (c.op === "<=" || c.op === "<") { hi = Math.min(hi, c.number); any = true; }
    });
    return any ? [Math.max(lo, axis.lo), Math.min(hi, axis.hi)] : null;
  }

  // ------------------------------------------------------------------------------ drawing

  /* A number in three significant digits, short enough for the room between axes: 6e−4, 0.0539, 4000. */
  function compact(v) {
    const r = Number(v.toPrecision(3)), a = Math.abs(r);
    const text = a !== 0 && (a < 1e-3 || a >= 1e6) ? r.toExponential().replace(/\.?0+e/, "e").replace("e+", "e") : String(r);
    return text.replace(/-/g, "\u2212");
  }

  let axes = [], geo = null, drag = null, focusCol = null;
  const paths = new Map();  // run id -> its path

  function layout(n) {
    const W = Math.max(240, box.clientWidth);
    const pad = Math.min(70, Math.max(26, W / (2 * Math.max(n, 1))));
    const xs = axes.map((_, i) => n > 1 ? pad + i * (W - 2 * pad) / (n - 1) : W / 2);
    return { W, xs, top: TOP, bottom: H - BOTTOM, spacing: n > 1 ? (W - 2 * pad) / (n - 1) : W };
  }

  const yOf = u => geo.bottom - u * (geo.bottom - geo.top);
  const uOf = y => Math.min(1, Math.max(0, (geo.bottom - y) / (geo.bottom - geo.top)));

  /* A column's name cut to the room between axes, its tail kept (`…train.lr`). */
  function short(name, room) {
    const max = Math.max(4, Math.floor(room / 6.4));
    return name.length <= max ? name : "…" + name.slice(name.length - max + 1).replace(/^[._/\-]+/, "");
  }

  function pathOf(run) {
    let d = "", pen = false;
    axes.forEach((a, i) => {
      const [text, v] = T.cell(run, a.col);
      if (text === null) { pen = false; return; }
      const y = yOf(a.numeric ? a.t(v) : a.t(text));
      d += (pen ? "L" : "M") + geo.xs[i].toFixed(1) + " " + y.toFixed(1);
      pen = true;
    });
    return d;
  }

  function draw() {
    axes = T.columns().map(axisOf).filter(Boolean);
    geo = layout(axes.length);
    const root = svg("svg", { viewBox: "0 0 " + geo.W + " " + H, width: geo.W, height: H });
    const keep = focusCol;  // the focused axis is focused again once redrawn (its old node's blur would forget it)
    box.replaceChildren(root);
    focusCol = keep;
    paths.clear();
    if (axes.length < 2) {
      root.append(svg("text", { x: 12, y: H / 2, "font-size": 12, fill: "#5f6b7a" },
        "Pick two columns or more of the table (Columns) to draw them as axes."));
      say(null);
      return;
    }
    const lines = svg("g", { fill: "none" });
    root.append(lines);
    T.runs.forEach(r => {
      const p = svg("path", { d: pathOf(r), "data-run": r.id });
      p.append(svg("title", {}, r.id));
      paths.set(r.id, p);
      lines.append(p);
    });
    recolour();
    axes.forEach((a, i) => root.append(axisGroup(a, i)));
    if (focusCol) {
      const g = root.querySelector('g.pcp-axis[data-col="' + CSS.escape(focusCol) + '"]');
      if (g) g.focus();
    }
  }

  /* Kept runs in their colour above the faint rest. */
  function recolour() {
    const kept = new Set(T.shown().map(r => r.id));
    const parent = paths.size ? paths.values().next().value.parentNode : null;
    T.runs.forEach(r => {
      const p = paths.get(r.id);
      if (!p) return;
      const on = kept.has(r.id);
      p.setAttribute("stroke", on ? C.runColor(r.id) : FAINT);
      p.setAttribute("stroke-width", on ? "1.6" : "1");
      p.setAttribute("stroke-opacity", on ? "0.9" : "0.8");
      p.setAttribute("data-kept", on ? "1" : "0");
      if (on && parent) parent.append(p);  // drawn last: on top
    });
  }

  function axisGroup(a, i) {
    const x = geo.xs[i];
    const g = svg("g", { class: "pcp-axis", "data-col": a.col, tabindex: 0, role: "group" });
    const brush = brushOf(a);
    g.setAttribute("aria-label", "axis " + (i + 1) + " of " + axes.length + ": " + a.col +
      (a.numeric ? ", " + C.num(a.lo) + " to " + C.num(a.hi) + (a.log ? ", log scale" : "") : ", " + a.cats.length + " values") +
      (brush ? "; brushed " + C.num(brush[0]) + " to " + C.num(brush[1]) : ""));
    g.setAttribute("aria-describedby", "pcp-help");
    g.append(svg("rect", { class: "pcp-focus", x: x - 16, y: 4, width: 32, height: H - 8, rx: 4, fill: "none" }));
    g.append(svg("line", { x1: x, y1: geo.top, x2: x, y2: geo.bottom, stroke: "#6b7280", "stroke-width": 1 }));
    const label = short(a.col, geo.spacing), half = label.length * 3.4;  // ~6.8 px a character at 11.5 px
    const lx = Math.min(geo.W - half - 4, Math.max(half + 4, x));  // the first and last names stay inside
    const name = svg("text", { class: "pcp-name", x: lx, y: 14, "text-anchor": "middle", "font-size": 11.5, "font-weight": 600, fill: "#1f2937" },
      label);
    name.append(svg("title", {}, a.col + (a.numeric ? "" : " (not brushable: not a number)") + " — drag to move"));
    g.append(name);
    const last = i === axes.length - 1 && axes.length > 1;  // the last axis' ticks on its left, inside the plot
    const tick = (u, text, dy) => g.append(svg("text", { x: last ? x - 5 : x + 5, y: yOf(u) + dy, "font-size": 10, fill: "#5f6b7a",
      "text-anchor": last ? "end" : "start" }, text));
    // an axis' extremes above and below it, centred and kept inside the plot and the room between axes
    const end = (y, text) => {
      const hw = text.length * 2.9;
      g.append(svg("text", { x: Math.min(geo.W - hw - 2, Math.max(hw + 2, x)), y, "text-anchor": "middle", "font-size": 10, fill: "#5f6b7a" }, text));
    };
    if (a.numeric) {
      const room = Math.floor((geo.spacing - 6) / 5.8);
      const hiText = compact(a.hi) + (a.log && compact(a.hi).length + 4 <= room ? " log" : "");
      end(geo.top - 5, hiText);
      end(geo.bottom + 13, compact(a.lo));
    } else if (a.cats.length <= Math.floor((geo.bottom - geo.top) / 12)) {
      a.cats.forEach(c => tick(a.t(c), short(c, Math.max(40, geo.spacing - 12)), 3.5));
    } else {
      tick(1, short(a.cats[a.cats.length - 1], geo.spacing - 12), -4);
      tick(0, short(a.cats[0], geo.spacing - 12), 12);
    }
    if (brush) {
      const y1 = yOf(a.t(brush[1])), y0 = yOf(a.t(brush[0]));
      g.append(svg("rect", { class: "pcp-brush", x: x - 7, y: Math.min(y0, y1) - 2, width: 14, height: Math.abs(y0 - y1) + 4,
        fill: ACCENT, "fill-opacity": 0.18, stroke: ACCENT, "stroke-width": 1.2, rx: 2 }));
    }
    // what the pointer takes: the name (move the axis), the axis itself (brush it)
    const nameHit = svg("rect", { class: "pcp-move", x: x - Math.min(40, geo.spacing / 2), y: 0, width: Math.min(80, geo.spacing), height: LABEL + 6, fill: "transparent" });
    g.append(nameHit);
    if (a.numeric) g.append(svg("rect", { class: "pcp-hit", x: x - 14, y: geo.top - 6, width: 28, height: geo.bottom - geo.top + 12, fill: "transparent" }));
    g.addEventListener("keydown", e => key(e, a, i));
    g.addEventListener("focus", () => { focusCol = a.col; });
    g.addEventListener("blur", () => { if (focusCol === a.col) focusCol = null; });
    return g;
  }

  // ------------------------------------------------------------------------- brushing

  function setBrush(a, lo, hi, quiet) {
    if (lo === null) T.setRange(a.col, null, null, quiet);
    else T.setRange(a.col, Math.max(a.lo, Math.min(lo, hi)), Math.min(a.hi, Math.max(lo, hi)), quiet);
    say(a);
  }

  function say(a) {
    if (!status) return;
    const n = T.shown().length, all = T.runs.length;
    const b = a ? brushOf(a) : null;
    status.textContent = (a ? a.col + (b ? " from " + C.num(b[0]) + " to " + C.num(b[1]) : ": not brushed") + " · " : "") +
      n + " of " + all + " runs kept" + (n < all ? " (the table, the scatter and “Overlay these runs” follow)" : "") + ".";
  }

  box.addEventListener("pointerdown", e => {
    const g = e.target.closest("g.pcp-axis");
    if (!g || e.button !== 0) return;
    const i = axes.findIndex(a => a.col === g.getAttribute("data-col"));
    if (i < 0) return;
    const pt = local(e);
    if (e.target.classList.contains("pcp-move") || e.target.classList.contains("pcp-name")) {
      drag = { kind: "move", i, x0: pt.x, g };
    } else if (e.target.classList.contains("pcp-hit") || e.target.classList.contains("pcp-brush")) {
      drag = { kind: "brush", i, y0: pt.y, moved: false, g };
    } else return;
    box.setPointerCapture(e.pointerId);
    e.preventDefault();
  });

  box.addEventListener("pointermove", e => {
    if (!drag) return;
    const pt = local(e);
    if (drag.kind === "move") {
      drag.g.setAttribute("transform", "translate(" + (pt.x - drag.x0) + ",0)");
      drag.x = pt.x;
      return;
    }
    if (Math.abs(pt.y - drag.y0) < 3 && !drag.moved) return;
    drag.moved = true;
    const a = axes[drag.i];
    drag.range = [a.inv(uOf(Math.max(pt.y, drag.y0))), a.inv(uOf(Math.min(pt.y, drag.y0)))];
    let r = drag.g.querySelector("rect.pcp-brush");
    if (!r) {
      r = svg("rect", { class: "pcp-brush", x: geo.xs[drag.i] - 7, width: 14, fill: ACCENT, "fill-opacity": 0.18, stroke: ACCENT, "stroke-width": 1.2, rx: 2 });
      drag.g.insertBefore(r, drag.g.querySelector(".pcp-move"));
    }
    const top = Math.max(geo.top, Math.min(pt.y, drag.y0)), bottom = Math.min(geo.bottom, Math.max(pt.y, drag.y0));
    r.setAttribute("y", top - 2);
    r.setAttribute("height", bottom - top + 4);
    if (!drag.pending) {
      drag.pending = true;
      requestAnimationFrame(() => { if (!drag) return; drag.pending = false; setBrush(axes[drag.i], drag.range[0], drag.range[1], true); });
    }
  });

  function end(e) {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (box.hasPointerCapture && e && box.hasPointerCapture(e.pointerId)) box.releasePointerCapture(e.pointerId);
    if (d.kind === "move") {
      if (d.x === undefined) { draw(); return; }
      const order = axes.map(a => a.col), col = order.splice(d.i, 1)[0];
      order.splice(geo.xs.filter((x, j) => j !== d.i && x < d.x).length, 0, col);  // before the first axis right of it
      moveColumns(order, col);
    } else if (!d.moved) setBrush(axes[d.i], null, null);  // a click on the axis clears its brush
    else setBrush(axes[d.i], d.range[0], d.range[1]);
  }
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);

  function local(e) {
    const r = box.getBoundingClientRect();
    return { x: (e.clientX - r.left) * geo.W / r.width, y: (e.clientY - r.top) * H / r.height };
  }

  /* The table's columns in the axes' new order (columns that are not axes keep their places). */
  function moveColumns(order, col) {
    const cols = T.columns(), isAxis = new Set(order);
    let k = 0;
    const next = cols.map(c => isAxis.has(c) ? order[k++] : c);
    focusCol = col;
    T.setColumns(next);
  }

  // ------------------------------------------------------------------------- keyboard

  function key(e, a, i) {
    if (e.shiftKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      const j = i + (e.key === "ArrowLeft" ? -1 : 1);
      if (j < 0 || j >= axes.length) return;
      const order = axes.map(x => x.col);
      order.splice(i, 1);
      order.splice(j, 0, a.col);
      moveColumns(order, a.col);
      if (status) status.textContent = a.col + " moved to axis " + (j + 1) + " of " + axes.length + ".";
      e.preventDefault();
      return;
    }
    if (!a.numeric) return;
    const b = brushOf(a);
    const u = b ? [a.t(b[0]), a.t(b[1])] : null;
    let next = null;
    if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      const d = e.key === "ArrowUp" ? 0.1 : -0.1;
      next = u ? [u[0] + d, u[1] + d] : [0.25, 0.75];
      if (next[1] > 1) next = [1 - (next[1] - next[0]), 1];
      if (next[0] < 0) next = [0, next[1] - next[0]];
    } else if (e.key === "+" || e.key === "=" || e.key === "-" || e.key === "−") {
      const c = u ? (u[0] + u[1]) / 2 : 0.5, half = u ? (u[1] - u[0]) / 2 : 0.5;
      const h = e.key === "-" || e.key === "−" ? Math.min(0.5, half * 1.25 + 0.02) : Math.max(0.01, half * 0.8);
      next = [Math.max(0, c - h), Math.min(1, c + h)];
    } else if (e.key === "Escape" || e.key === "Delete" || e.key === "Backspace") {
      if (!b) return;
      focusCol = a.col;
      setBrush(a, null, null);
      e.preventDefault();
      return;
    } else return;
    focusCol = a.col;
    setBrush(a, a.inv(next[0]), a.inv(next[1]));
    e.preventDefault();
  }

  // ------------------------------------------------------------------------------ wiring

  T.listeners.push(() => { if (drag && drag.kind === "brush") recolour(); else draw(); });
  let resizing = null;
  window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(draw, 100); });
  draw();
  say(null);
})();
