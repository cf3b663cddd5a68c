/* obs compare.html: the runs table. Every run with the columns a reader picks (settings, spec, arm,
   condition, seed, status, final-window means, probe rates), filtered by clauses such as
   `config.train.lr > 1e-4; final loss < 0.5`, sorted by any column, grouped by one (each group led
   by its size and the mean of each numeric column), kept in the URL (cols=, where=, sort=,
   rows_by=) and handed to the overlay above ("Overlay these runs").

   The data is the page's own block (#compare-data: every run's settings as the site shows them,
   its final values and rates). Numbers are compared as numbers (3.000e−04 is 0.0003); a clause
   that names no column or uses no known operator is said, not ignored. Text is written with
   textContent. */
(function () {
  "use strict";
  const root = document.getElementById("runs-table");
  if (!root || !window.obsCompareData) return;
  window.obsCompareData.then(start);

  function start(data) {
    const table = root.querySelector("table[data-runs-table]");
    const whereBox = root.querySelector("input[data-runs-where]");
    const colList = root.querySelector("[data-runs-columns]");
    const colCount = root.querySelector("[data-runs-col-count]");
    const colFilter = root.querySelector("input[data-runs-col-filter]");
    const status = root.querySelector("[data-runs-status]");
    const problem = root.querySelector("[data-runs-problem]");
    const overlayButton = root.querySelector("[data-runs-overlay]");
    const sortSel = root.querySelector("select[data-runs-sort]");  // the order where the header is hidden (a phone)
    const groupSel = root.querySelector("select[data-runs-group]");
    const MINUS = "\u2212";
    const count = (n) => Number(n).toLocaleString("en-US");  // as the pages write counts: "100,000"

    function el(tag, cls, text) {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    }

    // ------------------------------------------------------------------------------ columns

    const PLAIN = ["spec", "arm", "condition", "seed", "status"];
    const finals = new Set(), rates = new Set();
    data.runs.forEach(r => {
      Object.keys(r.finals || {}).forEach(k => finals.add(k));
      Object.keys(r.rates || {}).forEach(k => rates.add(k));
    });
    const COLUMNS = PLAIN.filter(k => data.runs.some(r => r[k] != null))
      .concat(data.keys)
      .concat(Array.from(finals).sort().map(k => "final " + k))
      .concat(Array.from(rates).sort().map(k => "rate " + k));

    /* A run's cell of a column: [text as shown, number or null]. */
    function cell(run, col) {
      let text = null, value = null;
      if (PLAIN.indexOf(col) >= 0) {
        if (run[col] != null) text = String(run[col]);
      } else if (col.startsWith("final ") && !data.keys.includes(col)) {
        value = (run.finals || {})[col.slice(6)];
        if (value === undefined) value = null;
      } else if (col.startsWith("rate ") && !data.keys.includes(col)) {
        value = (run.rates || {})[col.slice(5)];
        if (value === undefined) value = null;
      } else {
        const k = data.keys.indexOf(col);
        if (k >= 0 && run.cells[k] !== -1) text = data.values[k][run.cells[k]];
      }
      if (value !== null) return [window.obsCharts ? window.obsCharts.num(value) : String(value), value];
      if (text === null) return [null, null];
      return [text, asNumber(text)];
    }

    /* "3.000e−04", "1,024", "12%" as numbers; anything else null. */
    function asNumber(text) {
      const t = String(text).replace(new RegExp(MINUS, "g"), "-").replace(/,/g, "").trim();
      if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?%?$/i.test(t)) return null;
      const v = parseFloat(t);
      return t.endsWith("%") ? v / 100 : v;
    }

    /* Settings that differ between runs first (they are what a reader sorts and filters by). */
    function varies(col) {
      const seen = new Set(data.runs.map(r => cell(r, col)[0]));
      return seen.size > 1;
    }

    // -------------------------------------------------------------------------------- filter

    const OPS = [">=", "<=", "!=", ">", "<", "=", "~"];

    /* Clauses of the filter text: {col, op, value} or {word}; what cannot be read is in `bad`. */
    function parse(text) {
      const clauses = [], bad = [];
      text.split(/;|\band\b/i).map(s => s.trim()).filter(Boolean).forEach(part => {
        let found = null;
        for (const op of OPS) {
          const i = part.indexOf(op);
          if (i > 0 && (found === null || i < found.i || (i === found.i && op.length > found.op.length))) found = { i, op };
        }
        if (!found) {
          if (/\s/.test(part)) bad.push("“" + part + "” has no operator (> >= < <= = != ~)");
          else clauses.push({ word: part.toLowerCase() });
          return;
        }
        const col = part.slice(0, found.i).trim(), value = part.slice(found.i + found.op.length).trim();
        const name = COLUMNS.find(c => c === col) || COLUMNS.find(c => c.toLowerCase() === col.toLowerCase());
        if (!name) { bad.push("“" + col + "” is not a column"); return; }
        const number = asNumber(value);
        if ([">", ">=", "<", "<="].indexOf(found.op) >= 0 && number === null) {
          bad.push("“" + value + "” is not a number (in “" + part + "”)");
          return;
        }
        clauses.push({ col: name, op: found.op, value, number });
      });
      return { clauses, bad };
    }

    function keeps(run, c) {
      if (c.word) return run.id.toLowerCase().indexOf(c.word) >= 0;
      const [text, v] = cell(run, c.col);
      if (c.op === "~") return text !== null && text.toLowerCase().indexOf(c.value.toLowerCase()) >= 0;
      if (c.op === "=" || c.op === "!=") {
        const same = text !== null && (c.number !== null && v !== null ? v === c.number : text === c.value);
        return c.op === "=" ? same : !same;
      }
      if (v === null) return false;
      return c.op === ">" ? v > c.number : c.op === ">=" ? v >= c.number : c.op === "<" ? v < c.number : v <= c.number;
    }

    // --------------------------------------------------------------------- state and the URL

    const params = new URLSearchParams(location.search);
    const said = [];
    let cols = (params.get("cols") || "").split(",").map(s => s.trim()).filter(Boolean);
    cols.filter(c => COLUMNS.indexOf(c) < 0).forEach(c => said.push("column “" + c + "” is not here"));
    cols = cols.filter(c => COLUMNS.indexOf(c) >= 0);
    if (!params.has("cols")) {
      const first = ["spec"].filter(c => COLUMNS.indexOf(c) >= 0);
      // the settings that differ between runs and that most runs set
      const setBy = k => data.runs.filter(r => cell(r, k)[0] !== null).length;
      const settings = data.keys.filter(k => k.startsWith("config.") && varies(k))
        .sort((a, b) => setBy(b) - setBy(a) || (a < b ? -1 : 1)).slice(0, 3);
      const fin = ["final loss", "final eval_loss"].filter(c => COLUMNS.indexOf(c) >= 0).slice(0, 1);
      cols = first.concat(settings, fin);
    }
    let sort = params.get("sort") || "";
    const sortCol = sort.replace(/^-/, "");
    if (sort && sortCol !== "run" && COLUMNS.indexOf(sortCol) < 0) { said.push("sort column “" + sortCol + "” is not here"); sort = ""; }
    whereBox.value = params.get("where") || "";
    let rowsBy = params.get("rows_by") || "";
    if (rowsBy && COLUMNS.indexOf(rowsBy) < 0) { said.push("group column “" + rowsBy + "” is not here"); rowsBy = ""; }

    function remember() {
      if (location.protocol === "file:") return;  // a file: page may not rewrite its URL
      const p = new URLSearchParams(location.search);
      p.set("cols", cols.join(","));
      if (whereBox.value.trim()) p.set("where", whereBox.value.trim()); else p.delete("where");
      if (sort) p.set("sort", sort); else p.delete("sort");
      if (rowsBy) p.set("rows_by", rowsBy); else p.delete("rows_by");
      p.set("sx", scatter.x.value);
      p.set("sy", scatter.y.value);
      if (scatter.logx.checked) p.set("slogx", "1"); else p.delete("slogx");
      if (scatter.logy.checked) p.set("slogy", "1"); else p.delete("slogy");
      history.replaceState(null, "", "?" + p.toString().replace(/%2C/g, ",") + location.hash);
    }

    // -------------------------------------------------------------------------------- drawing

    function fillColumns() {
      const text = colFilter.value.trim().toLowerCase();
      colList.replaceChildren(...COLUMNS.map(c => {
        const li = el("li"), label = el("label"), box = el("input");
        box.type = "checkbox";
        box.value = c;
        box.checked = cols.indexOf(c) >= 0;
        label.append(box, el("span", null, c));
        li.append(label);
        li.hidden = !!text && c.toLowerCase().indexOf(text) < 0;
        return li;
      }));
      colCount.textContent = String(cols.length);
    }

    let shown = [];
    const ROWS_PAGE = 200;
    let rowsPage = 0, pager = null;

    /* Under the table when the runs shown take more than one page. */
    function pagerOf(pages, from, to) {
      if (pages <= 1) { if (pager) pager.hidden = true; return; }
      if (!pager) {
        pager = el("nav", "pager");
        pager.setAttribute("aria-label", "Pages of the runs table");
        table.parentNode.parentNode.insertBefore(pager, table.parentNode.nextSibling);
      }
      pager.hidden = false;
      const go = (label, page, off) => {
        const b = el("button", null, label);
        b.type = "button";
        b.disabled = off;
        b.addEventListener("click", () => { rowsPage = page; render(); });
        return b;
      };
      pager.replaceChildren(go("← Previous", rowsPage - 1, rowsPage === 0),
        el("span", "pager-where", "runs " + count(from + 1) + "–" + count(to) + " of " + count(shown.length) + " · page " + count(rowsPage + 1) + " of " + count(pages)),
        go("Next →", rowsPage + 1, rowsPage >= pages - 1));
    }

    function render() {
      const { clauses, bad } = parse(whereBox.value);
      const notes = said.concat(bad);
      problem.textContent = notes.length ? "Not applied: " + notes.join("; ") + "." : "";
      problem.hidden = !notes.length;
      shown = data.runs.filter(r => clauses.every(c => keeps(r, c)));
      if (sort) {
        const col = sort.replace(/^-/, ""), dir = sort.startsWith("-") ? -1 : 1;
        const key = r => col === "run" ? [r.id, null] : cell(r, col);
        shown.sort((a, b) => {
          const [ta, va] = key(a), [tb, vb] = key(b);
          if (ta === null || tb === null) return ta === tb ? 0 : ta === null ? 1 : -1;  // empty cells last
          if (va !== null && vb !== null) return (va - vb) * dir || a.id.localeCompare(b.id);
          return ta.localeCompare(tb) * dir || a.id.localeCompare(b.id);
        });
      }
      // the header row is made here: an empty <tr> in the page is invalid HTML (a row group needs cells)
      const head = table.tHead.rows[0] || table.tHead.insertRow();
      head.replaceChildren(...["run"].concat(cols).map(c => {
        const th = el("th");
        th.scope = "col";
        const b = el("button", "sort", c);
        b.type = "button";
        b.setAttribute("data-col", c);
        th.append(b);
        if (sort === c) th.setAttribute("aria-sort", "ascending");
        else if (sort === "-" + c) th.setAttribute("aria-sort", "descending");
        if (c !== "run" && data.runs.some(r => cell(r, c)[1] !== null)) th.className = "num";
        return th;
      }));
      const orders = [["", "as listed"]];
      ["run"].concat(cols).forEach(c => { orders.push([c, c + " ↑"], ["-" + c, c + " ↓"]); });
      sortSel.replaceChildren(...orders.map(([v, t]) => { const o = el("option", null, t); o.value = v; return o; }));
      sortSel.value = sort;
      const groupable = COLUMNS.filter(c => !/^(final|rate) /.test(c) || data.keys.indexOf(c) >= 0);
      groupSel.replaceChildren(...[["", "none"]].concat(groupable.map(c => [c, c])).map(([v, t]) => {
        const o = el("option", null, t); o.value = v; return o;
      }));
      groupSel.value = rowsBy;
      const rows = document.createDocumentFragment();
      const runRow = r => {
        const tr = el("tr");
        const th = el("th");
        th.scope = "row";
        th.setAttribute("data-label", "run");
        const a = el("a", null, r.id);
        a.href = "runs/" + encodeURIComponent(r.slug) + "/index.html";
        th.append(a);
        tr.append(th);
        cols.forEach(c => {
          const [text, v] = cell(r, c);
          const td = el("td", v !== null ? "num" : "kv", text === null ? "—" : text);
          td.setAttribute("data-label", c);
          if (v !== null) td.setAttribute("data-value", String(v));
          else if (text === null) td.setAttribute("data-value", "");
          tr.append(td);
        });
        return tr;
      };
      /* ROWS_PAGE runs a page: a site of 100,000 runs is never 100,000 rows in the document. A group's
         lead row (its size and means over all its runs) heads each page its runs are on. */
      const pages = Math.max(1, Math.ceil(shown.length / ROWS_PAGE));
      rowsPage = Math.min(Math.max(0, rowsPage), pages - 1);
      const from = rowsPage * ROWS_PAGE, to = from + ROWS_PAGE;
      if (!rowsBy) shown.slice(from, to).forEach(r => rows.append(runRow(r)));
      else {
        let at = 0;
        groupsOf(shown).forEach(([value, members]) => {
          const mine = members.slice(Math.max(0, from - at), Math.max(0, to - at));
          at += members.length;
          if (!mine.length) return;
          rows.append(groupRow(value, members));
          mine.forEach(r => rows.append(runRow(r)));
        });
      }
      table.tBodies[0].replaceChildren(rows);
      pagerOf(pages, from, Math.min(to, shown.length));
      api.listeners.forEach(f => f());
      const sc = scatter.box ? drawScatter() : { drawn: 0, left: 0 };
      status.textContent = count(shown.length) + " of " + count(data.runs.length) + " runs" + (clauses.length ? " match the filter" : "") + "." +
        (sc.left ? " The scatter leaves out " + sc.left + " without a value of both its columns." : "");
      overlayButton.textContent = "Overlay these " + count(shown.length) + " runs";
      overlayButton.disabled = !shown.length;
    }

    /* The rows shown, by their value of the grouping column (numbers in numeric order, "not set" last),
       each group keeping the order the rows had. */
    function groupsOf(list) {
      const by = new Map();
      list.forEach(r => {
        const [text] = cell(r, rowsBy), key = text === null ? "not set" : text;
        if (!by.has(key)) by.set(key, []);
        by.get(key).push(r);
      });
      return Array.from(by.entries()).sort((a, b) => {
        if (a[0] === "not set" || b[0] === "not set") return a[0] === b[0] ? 0 : a[0] === "not set" ? 1 : -1;
        const x = asNumber(a[0]), y = asNumber(b[0]);
        return x !== null && y !== null ? x - y : a[0].localeCompare(b[0]);
      });
    }

    /* A group's lead row: the value and its number of runs, then each numeric column's mean over the
       group's runs that have a value (n said when some have none). */
    function groupRow(value, members) {
      const tr = el("tr", "group-row");
      const th = el("th", null, rowsBy + " = " + value + " · " + members.length + (members.length === 1 ? " run" : " runs"));
      th.scope = "rowgroup";
      th.setAttribute("data-label", "group");
      tr.append(th);
      cols.forEach(c => {
        const values = members.map(r => cell(r, c)[1]).filter(v => v !== null);
        let td;
        if (!values.length || c === rowsBy) td = el("td", "note", "");
        else {
          const mean = values.reduce((a, b) => a + b, 0) / values.length;
          const shownMean = window.obsCharts ? window.obsCharts.num(mean) : String(mean);
          td = el("td", "num", "mean " + shownMean + (values.length < members.length ? " (n=" + values.length + ")" : ""));
          td.setAttribute("data-value", String(mean));
        }
        td.setAttribute("data-label", c);
        tr.append(td);
      });
      return tr;
    }

    // ------------------------------------------------------------------------------ scatter

    const scatter = {
      x: root.querySelector("select[data-scatter-x]"), y: root.querySelector("select[data-scatter-y]"),
      logx: root.querySelector("input[data-scatter-logx]"), logy: root.querySelector("input[data-scatter-logy]"),
      box: root.querySelector("[data-scatter]"), readout: root.querySelector("[data-scatter-readout]"),
    };
    const SVG = "http://www.w3.org/2000/svg";
    function svg(tag, attrs, text) {
      const e = document.createElementNS(SVG, tag);
      Object.keys(attrs).forEach(k => e.setAttribute(k, String(attrs[k])));
      if (text !== undefined) e.textContent = text;
      return e;
    }

    /* Ticks of [lo, hi]: multiples of 1, 2 or 5 × 10^k, about five; on a log axis the powers of ten. */
    function ticks(lo, hi, log) {
      if (log) {
        const out = [];
        for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(Math.pow(10, e));
        return { at: out.filter(v => v >= lo * 0.999 && v <= hi * 1.001), incr: null };
      }
      const raw = (hi - lo) / 5 || 1, mag = Math.pow(10, Math.floor(Math.log10(raw)));
      const incr = [1, 2, 5, 10].map(m => m * mag).find(v => v >= raw) || 10 * mag;
      const at = [];
      for (let v = Math.ceil(lo / incr) * incr; v <= hi + incr * 1e-9; v += incr) at.push(Math.abs(v) < incr * 1e-9 ? 0 : v);
      return { at, incr };
    }

    function drawScatter() {
      const C = window.obsCharts;
      const cx = scatter.x.value, cy = scatter.y.value;
      const logx = scatter.logx.checked, logy = scatter.logy.checked;
      const pts = [];
      let left = 0;
      shown.forEach(r => {
        const x = cell(r, cx)[1], y = cell(r, cy)[1];
        if (x === null || y === null || (logx && !(x > 0)) || (logy && !(y > 0))) { left += 1; return; }
        pts.push({ r, x, y });
      });
      const W = Math.max(200, scatter.box.clientWidth), H = Math.max(120, scatter.box.clientHeight);
      const m = { l: 64, r: 14, t: 12, b: 34 };
      const root_ = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H });
      scatter.box.replaceChildren(root_);
      scatter.box.setAttribute("aria-label", "Scatter of " + cy + " against " + cx + ": " + pts.length + " runs");
      scatter.readout.replaceChildren(el("span", "note", pts.length ? "Point at a run to read its values." :
        "No run in the table has both " + cx + " and " + cy + (logx || logy ? " (above zero, for a log axis)" : "") + "."));
      if (!pts.length) return { drawn: 0, left };
      const range = (vals, log) => {
        let lo = Math.min(...vals), hi = Math.max(...vals);
        if (log) { lo = Math.log10(lo); hi = Math.log10(hi); }
        const pad = (hi - lo) * 0.06 || Math.abs(hi) * 0.1 || 1;
        return [lo - pad, hi + pad];
      };
      const [x0, x1] = range(pts.map(p => p.x), logx), [y0, y1] = range(pts.map(p => p.y), logy);
      const X = v => m.l + ((logx ? Math.log10(v) : v) - x0) / (x1 - x0) * (W - m.l - m.r);
      const Y = v => H - m.b - ((logy ? Math.log10(v) : v) - y0) / (y1 - y0) * (H - m.t - m.b);
      const axis = (lo, hi, log, horizontal) => {
        const t = ticks(log ? Math.pow(10, lo) : lo, log ? Math.pow(10, hi) : hi, log);
        const labels = log ? C.logLabels(t.at) : C.linearLabels(t.at, t.incr);
        t.at.forEach((v, i) => {
          if (horizontal) {
            const x = X(v);
            root_.append(svg("line", { x1: x, y1: m.t, x2: x, y2: H - m.b, stroke: "#e5e7eb" }));
            root_.append(svg("text", { x, y: H - m.b + 16, "text-anchor": "middle", "font-size": 11, fill: "#5f6b7a" }, labels[i]));
          } else {
            const y = Y(v);
            root_.append(svg("line", { x1: m.l, y1: y, x2: W - m.r, y2: y, stroke: "#e5e7eb" }));
            root_.append(svg("text", { x: m.l - 6, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#5f6b7a" }, labels[i]));
          }
        });
      };
      axis(x0, x1, logx, true);
      axis(y0, y1, logy, false);
      root_.append(svg("text", { x: W - m.r, y: H - 4, "text-anchor": "end", "font-size": 11, fill: "#374151" }, cx));
      root_.append(svg("text", { x: m.l + 4, y: m.t + 10, "font-size": 11, fill: "#374151" }, cy));
      pts.forEach(p => {
        const dot = svg("circle", { cx: X(p.x), cy: Y(p.y), r: 5, fill: C.runColor(p.r.id), "fill-opacity": 0.85, tabindex: 0,
          "data-run": p.r.id, "data-x": p.x, "data-y": p.y });
        dot.append(svg("title", {}, p.r.id));
        const show = () => {
          const line = el("span", "ro-item");
          const sw = el("span", "swatch");
          sw.style.background = C.runColor(p.r.id);
          line.append(sw, el("strong", null, p.r.id), document.createTextNode("\u00a0· " + cx + " " + C.num(p.x) + " · " + cy + " " + C.num(p.y)));
          scatter.readout.replaceChildren(line);
        };
        dot.addEventListener("mouseenter", show);
        dot.addEventListener("focus", show);
        root_.append(dot);
      });
      return { drawn: pts.length, left };
    }

    function fillScatter() {
      const numeric = COLUMNS.filter(c => data.runs.some(r => cell(r, c)[1] !== null));
      [[scatter.x, scatterState.x], [scatter.y, scatterState.y]].forEach(([sel, want]) => {
        sel.replaceChildren(...numeric.map(c => { const o = el("option", null, c); o.value = c; return o; }));
        if (want && numeric.indexOf(want) >= 0) sel.value = want;
      });
      if (!scatterState.x) scatter.x.value = numeric.find(c => c.startsWith("config.") && varies(c)) || numeric[0] || "";
      if (!scatterState.y) scatter.y.value = numeric.find(c => c.startsWith("final ")) || numeric[1] || "";
      scatter.logx.checked = scatterState.logx;
      scatter.logy.checked = scatterState.logy;
    }
    const scatterState = { x: params.get("sx") || "", y: params.get("sy") || "", logx: params.get("slogx") === "1", logy: params.get("slogy") === "1" };
    ["x", "y"].forEach(k => {
      if (scatterState[k] && COLUMNS.indexOf(scatterState[k]) < 0) { said.push("scatter column “" + scatterState[k] + "” is not here"); scatterState[k] = ""; }
    });

    function changed() { rowsPage = 0; render(); remember(); }

    table.tHead.addEventListener("click", e => {
      const b = e.target.closest("button[data-col]");
      if (!b) return;
      const c = b.getAttribute("data-col");
      sort = sort === c ? "-" + c : c;
      changed();
    });
    sortSel.addEventListener("change", () => { sort = sortSel.value; changed(); });
    groupSel.addEventListener("change", () => { rowsBy = groupSel.value; changed(); });
    let timer = null;
    whereBox.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(changed, 200); });
    colList.addEventListener("change", () => {
      cols = Array.from(colList.querySelectorAll("input:checked")).map(b => b.value);
      colCount.textContent = String(cols.length);
      changed();
    });
    colFilter.addEventListener("input", fillColumns);
    /* The overlay's pick boxes set to the runs shown (those that logged curves), then its charts
       are redrawn as after a reader's own pick. */
    overlayButton.addEventListener("click", () => {
      if (window.obsOverlayPick) {  // a paged pick list (a site of very many runs): the overlay picks them
        window.obsOverlayPick(shown.map(r => r.slug));
        const overlay = document.getElementById("overlay");
        if (overlay) overlay.scrollIntoView({ block: "start" });
        return;
      }
      const want = new Set(shown.map(r => r.slug));
      const boxes = Array.from(document.querySelectorAll("[data-overlay-runs] input[type=checkbox]"));
      let last = null;
      boxes.forEach(b => {
        const on = !b.disabled && want.has(b.value);
        if (b.checked !== on) { b.checked = on; last = b; }
      });
      if (last) last.dispatchEvent(new Event("change"));
      const overlay = document.getElementById("overlay");
      if (overlay) overlay.scrollIntoView({ block: "start" });
    });
    [scatter.x, scatter.y, scatter.logx, scatter.logy].forEach(c => c.addEventListener("change", changed));
    let resizing = null;
    window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(drawScatter, 100); });
    /* For the parallel coordinates (runs-pcp.js): the runs, their cells, the columns shown and the runs
       the filter keeps; a brush is a pair of clauses in the filter (`col >= lo; col <= hi`), so the
       filter box, the link and the table all say what a brush keeps. */
    const api = {
      runs: data.runs, cell, asNumber, listeners: [],
      columns: () => cols.slice(),
      shown: () => shown.slice(),
      clauses: () => parse(whereBox.value).clauses,
      /* Columns in a new order (the axes dragged or moved with the keyboard). */
      setColumns(next) { cols = next.slice(); fillColumns(); changed(); },
      /* The filter's clauses on `col` replaced by lo <= col <= hi (none: the column's range unfiltered). */
      setRange(col, lo, hi, quiet) {
        const kept = whereBox.value.split(/;|\band\b/i).map(x => x.trim()).filter(Boolean).filter(part => {
          const one = parse(part).clauses[0];
          return !(one && one.col === col && (one.op === ">=" || one.op === "<=" || one.op === ">" || one.op === "<"));
        });
        if (lo !== null) kept.push(col + " >= " + fmt(lo), col + " <= " + fmt(hi));
        whereBox.value = kept.join("; ");
        if (quiet) render(); else changed();
      },
      remember,
    };
    /* A bound as typed in the filter: 6 significant digits, exact enough for a brush's edge. */
    function fmt(v) { return String(Number(v.toPrecision(6))); }
    window.obsRunsTable = api;
    fillColumns();
    fillScatter();
    render();
  }
})();
