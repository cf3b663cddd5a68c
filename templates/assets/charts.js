/* obs charts: interactive curves drawn with the vendored uPlot (assets/vendor, see PROVENANCE.md).

   Where the numbers come from: a run's series are in its curves.js (a data file that appends one
   JSON value to OBS_DATA: <script src> works from file://, where fetch() of a local file does not),
   a campaign's or arms group's curves likewise; what a page draws is in an inert
   <script type="application/json"> block. Everything a run named (series, runs, conditions) is
   written with textContent or drawn on the canvas, never parsed as markup.

   What a reader can do: hover (or step with the arrow keys) for a read-out of step, value, series
   and run; drag to zoom, double-click / Reset / 0 to reset, +/− to zoom, Shift+arrows or ◀ ▶ to
   pan; log y; EMA smoothing with the raw curve kept faint (TensorBoard's convention); legend buttons
   hide and show a series. Without this script the page keeps its static fallback. */
(function () {
  "use strict";
  let uPlot = window.uPlot;  // loaded with the first chart that comes near the viewport (needLibrary)
  const HERE = document.currentScript ? document.currentScript.src.replace(/[^/]*$/, "") : "";
  const PALETTE = ["#2f5d9e", "#d9822b", "#3f8f5f", "#9b4dca", "#c2410c", "#0f766e", "#be185d", "#4b5563"];
  const MUTED = "#5f6b7a";
  const GRID = "#e5e7eb";
  const AXIS = "#9ca3af";
  const STAGE_SHADE = "rgba(226, 232, 240, 0.55)";
  const STAGE_LINE = "#94a3b8";
  const ONSET = "#b91c1c";
  const FAMILY = "Inter, 'DejaVu Sans', system-ui, sans-serif";
  const MINUS = "\u2212";
  const SI = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

  // ------------------------------------------------------------------------------ numbers

  function minus(text) { return text.replace(/-/g, MINUS); }

  function grouped(text) {
    const parts = text.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return parts.join(".");
  }

  /* A value for a reader, as obs.numbers.num writes it on the pages: four significant digits,
     thousands separators, a real minus sign, ∞ and NaN spelled out. */
  function num(x) {
    if (x === null || x === undefined) return "—";
    if (Number.isNaN(x)) return "NaN";
    if (!Number.isFinite(x)) return x > 0 ? "∞" : MINUS + "∞";
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return minus(grouped(String(x)));
    const a = Math.abs(x);
    if (a < 1e-3 || a >= 1e7) return minus(x.toExponential(3));
    return minus(grouped(String(Number(x.toPrecision(4)))));
  }

  function stepText(x) {
    return Number.isInteger(x) ? minus(grouped(String(x))) : minus(String(Number(x.toPrecision(6))));
  }

  /* The fewest decimals that write `incr` exactly: 0.25 -> 2, 5 -> 0, 2.5e-6 -> 7. */
  function decimalsOf(incr) {
    for (let d = 0; d < 17; d++) {
      const scaled = incr * Math.pow(10, d);
      if (Math.abs(scaled - Math.round(scaled)) <= 1e-6 * Math.max(1, Math.abs(scaled))) return d;
    }
    return 17;
  }

  /* Tick labels of a linear axis. uPlot's splits are multiples of the increment, so writing each
     one to the increment's resolution makes every label exact and distinct: 0.0002, 0.0004 (not
     "2e-04, 2e-04"); 2.5e−6, 5.0e−6; 5k, 10k, 15k; never a label repeated. */
  function linearLabels(splits, incr) {
    let max = 0;
    for (const v of splits) if (v != null) max = Math.max(max, Math.abs(v));
    if (!(incr > 0)) incr = max || 1;
    if (max >= 1e4) {
      const [div, suffix] = SI.find(p => max >= p[0]) || SI[SI.length - 1];
      const d = decimalsOf(incr / div);
      return splits.map(v => v == null ? "" : v === 0 ? "0" : minus((v / div).toFixed(d)) + suffix);
    }
    if (max > 0 && max < 1e-3) {
      const e = Math.floor(Math.log10(incr) + 1e-9);
      const scale = Math.pow(10, e);
      const d = decimalsOf(incr / scale);
      return splits.map(v => v == null ? "" : v === 0 ? "0" : minus((v / scale).toFixed(d) + "e" + e));
    }
    const d = decimalsOf(incr);
    return splits.map(v => v == null ? "" : minus(grouped(v.toFixed(d))));
  }

  function shortNum(v) {
    const a = Math.abs(v);
    if (a >= 1e4) {
      const [div, suffix] = SI.find(p => a >= p[0]) || SI[SI.length - 1];
      return minus(String(Number((v / div).toPrecision(6)))) + suffix;
    }
    if (a > 0 && a < 1e-3) {
      const e = Math.floor(Math.log10(a) + 1e-9);
      return minus(String(Number((v / Math.pow(10, e)).toPrecision(6))) + "e" + e);
    }
    return minus(String(Number(v.toPrecision(6))));
  }

  /* Tick labels of a log axis: the powers of ten (1, 2 and 5 too when the range holds fewer than
     two powers); the other grid lines stay unlabelled. */
  function logLabels(splits) {
    const mantissa = v => v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    const near = (m, k) => Math.abs(m - k) < 1e-6 * k;
    const powers = splits.filter(v => v > 0 && near(mantissa(v), 1)).length;
    return splits.map(v => {
      if (v == null || !(v > 0)) return "";
      const m = mantissa(v);
      const keep = near(m, 1) || (powers < 2 && (near(m, 2) || near(m, 5)));
      return keep ? shortNum(v) : "";
    });
  }

  /* TensorBoard's smoothing: an exponential moving average, debiased so the first points are not
     pulled towards zero. Missing values pass through. */
  function ema(y, weight) {
    const out = new Array(y.length);
    let last = 0, n = 0;
    for (let i = 0; i < y.length; i++) {
      const v = y[i];
      if (v == null || !Number.isFinite(v)) { out[i] = v; continue; }
      last = last * weight + (1 - weight) * v;
      n += 1;
      out[i] = weight === 1 ? last : last / (1 - Math.pow(weight, n));
    }
    return out;
  }

  // ------------------------------------------------------------------------- data files

  const loaded = {};
  const waiting = {};
  const requested = {};

  function accept(data) {
    if (!data || typeof data.slug !== "string") return;
    loaded[data.slug] = data;
    const callbacks = waiting[data.slug] || [];
    delete waiting[data.slug];
    callbacks.forEach(cb => cb(data));
  }
  // OBS_DATA is shared with the page's other data files (the case browser's, the leaderboard's):
  // chart data (a string `slug`) is taken here as it arrives, anything else stays in the list for
  // the script that loaded it.
  const isChartData = data => !!data && typeof data.slug === "string" && /^obs\.(curves|conditions)\//.test(data.schema || "");
  const shared = Array.isArray(window.OBS_DATA) ? window.OBS_DATA : [];
  for (let i = 0; i < shared.length; ) {
    if (isChartData(shared[i])) accept(shared.splice(i, 1)[0]);
    else i += 1;
  }
  shared.push = function () {
    for (const data of arguments) {
      if (isChartData(data)) accept(data);
      else Array.prototype.push.call(shared, data);
    }
    return shared.length;
  };
  window.OBS_DATA = shared;

  /* `cb(data)` once the data of `key` is here (null if its file could not be loaded). With `src`,
     the file is loaded by a <script> element (the page's CSP allows the site's own scripts). */
  let inFlight = 0;  // script loads under way (tests wait for none before they look)

  function load(src, onload, onerror) {
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    inFlight += 1;
    script.onload = () => { inFlight -= 1; if (onload) onload(); };
    script.onerror = () => { inFlight -= 1; if (onerror) onerror(); };
    document.head.appendChild(script);
  }

  function withData(key, src, cb) {
    if (loaded[key]) { cb(loaded[key]); return; }
    (waiting[key] = waiting[key] || []).push(cb);
    if (!src || requested[src]) return;
    requested[src] = true;
    load(src, null, () => {
      const callbacks = waiting[key] || [];
      delete waiting[key];
      callbacks.forEach(f => f(null));
    });
  }

  function xsOf(entry) {
    if (entry._x) return entry._x;
    let x = entry.x;
    if (entry.dx) {
      x = new Array(entry.dx.length);
      let acc = 0;
      for (let i = 0; i < x.length; i++) { acc += entry.dx[i]; x[i] = acc; }
    }
    entry._x = x;
    return x;
  }

  /* Several (x, y...) tables on one sorted x: what uPlot draws. A series has no value (undefined)
     where it logged nothing, and its line is drawn across (sparse eval points stay connected). */
  function join(tables) {
    const all = new Set();
    for (const t of tables) for (const x of t.x) all.add(x);
    const xs = Array.from(all).sort((a, b) => a - b);
    const at = new Map();
    xs.forEach((x, i) => at.set(x, i));
    const out = [xs];
    for (const t of tables) {
      for (const y of t.ys) {
        const col = new Array(xs.length).fill(undefined);
        for (let i = 0; i < t.x.length; i++) col[at.get(t.x[i])] = y[i];
        out.push(col);
      }
    }
    return out;
  }

  function nearest(xs, x) {
    let lo = 0, hi = xs.length - 1;
    if (hi < 0) return -1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid; else hi = mid;
    }
    return Math.abs(xs[lo] - x) <= Math.abs(xs[hi] - x) ? lo : hi;
  }

  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  /* Text on the canvas with a white halo, readable over curves and grid lines. */
  function label(ctx, text, x, y, color, px) {
    ctx.lineJoin = "round";
    ctx.lineWidth = 3 * px;
    ctx.strokeStyle = "rgba(255,255,255,0.9)";
    ctx.strokeText(text, x, y);
    ctx.fillStyle = color;
    ctx.fillText(text, x, y);
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ------------------------------------------------------------------------------- a panel

  /* One chart of a group. `model` says what to draw:
       lines:  [{label, x, y, color, run?, width?}]          one curve each (EMA'd when smoothing)
       bands:  [{x, lo, hi, color, alpha, line, label}]     filled between lo and hi; `line` is
                                                             the index of the line it belongs to
       stages: [[name, start, end]], stageLabels: bool       shaded spans, dashed boundaries
       hlines: [{y, label}], vlines: [{x, label}]            thresholds and onsets
       log: bool, ymin: number|null                          */
  class Panel {
    constructor(group, root, model) {
      this.group = group;
      this.root = root;
      this.plot = root.querySelector(".chart-plot");
      this.legend = root.querySelector(".chart-legend");
      this.logBox = root.querySelector("input[data-log]");
      this.model = model;
      this.hidden = new Set();
      this.u = null;
      if (this.logBox) {
        this.logBox.checked = !!model.log;
        this.logBox.addEventListener("change", () => this.draw());
      }
      this.plot.addEventListener("keydown", e => this.key(e));
      this.plot.addEventListener("focus", () => { this.group.readout.setAttribute("aria-live", "polite"); });
      this.plot.addEventListener("blur", () => { this.group.readout.setAttribute("aria-live", "off"); });
      this.makeLegend();
    }

    canLog() {
      const all = this.model.lines.map(l => l.y).concat(this.model.bands.map(b => b.lo));
      return all.some(ys => ys.some(v => v > 0));
    }

    get log() { return !!(this.logBox && this.logBox.checked && !this.logBox.disabled); }

    makeLegend() {
      if (!this.legend) return;
      this.legend.replaceChildren();
      if (this.model.lines.length < 2 && !this.model.bands.length) return;
      this.model.lines.forEach((line, i) => {
        const b = el("button", "legend-item");
        b.type = "button";
        b.setAttribute("aria-pressed", String(!this.hidden.has(i)));
        b.title = "Show or hide " + line.label;
        const swatch = el("span", "swatch");
        swatch.style.background = line.color;  // CSSOM, allowed by the page's style-src 'self'
        b.append(swatch, document.createTextNode(line.label));
        b.addEventListener("click", () => {
          if (this.hidden.has(i)) this.hidden.delete(i); else this.hidden.add(i);
          b.setAttribute("aria-pressed", String(!this.hidden.has(i)));
          this.draw();
          this.group.update();
        });
        this.legend.append(b);
      });
    }

    /* uPlot's data and series from the model and the group's state (smoothing, log, hidden). */
    build() {
      const m = this.model, log = this.log, smooth = this.group.smoothing;
      const clean = ys => log ? ys.map(v => v > 0 ? v : undefined) : ys;
      const tables = [], series = [{}], bands = [];
      m.bands.forEach(b => {
        const show = !this.hidden.has(b.line);
        tables.push({ x: b.x, ys: [clean(b.lo), clean(b.hi)] });
        const lo = series.length;
        series.push({ show, stroke: "transparent", width: 0, points: { show: false }, spanGaps: true });
        series.push({ show, stroke: "transparent", width: 0, points: { show: false }, spanGaps: true });
        bands.push({ series: [lo + 1, lo], fill: alpha(b.color, b.alpha) });
      });
      m.lines.forEach((line, i) => {
        const show = !this.hidden.has(i);
        line.smooth = smooth > 0 ? ema(line.y, smooth) : null;
        tables.push({ x: line.x, ys: line.smooth ? [clean(line.y), clean(line.smooth)] : [clean(line.y)] });
        series.push({
          show,
          stroke: line.smooth ? alpha(line.color, 0.28) : line.color,
          width: line.width || 1.5,
          spanGaps: true,
          points: { show: line.x.length < 3, size: 5, fill: line.color },
        });
        if (line.smooth) series.push({ show, stroke: line.color, width: 1.6, spanGaps: true, points: { show: false } });
      });
      return { data: join(tables), series, bands };
    }

    extent() {
      let lo = Infinity, hi = -Infinity;
      for (const l of this.model.lines) if (l.x.length) { lo = Math.min(lo, l.x[0]); hi = Math.max(hi, l.x[l.x.length - 1]); }
      for (const b of this.model.bands) if (b.x.length) { lo = Math.min(lo, b.x[0]); hi = Math.max(hi, b.x[b.x.length - 1]); }
      return [lo, hi];
    }

    draw() {
      if (this.logBox) this.logBox.disabled = !this.canLog();  // log y needs a positive value
      const keep = this.u ? [this.u.scales.x.min, this.u.scales.x.max] : this.group.range;
      if (this.u) this.u.destroy();
      this.u = null;
      if (!this.model.lines.length && !this.model.bands.length) return;
      const { data, series, bands } = this.build();
      if (data[0].length === 0) return;
      const width = Math.max(120, this.plot.clientWidth), height = Math.max(60, this.plot.clientHeight);
      const panel = this, m = this.model, log = this.log;
      const font = "11px " + FAMILY;
      const axis = {
        stroke: MUTED, font, size: 30, gap: 4,
        grid: { stroke: GRID, width: 1 }, ticks: { stroke: AXIS, width: 1, size: 4 },
      };
      const opts = {
        width, height,
        legend: { show: false },
        cursor: {
          sync: { key: this.group.syncKey, setSeries: false },
          drag: { x: true, y: false, setScale: true },
          points: { size: 7 },
          focus: { prox: -1 },
        },
        scales: {
          x: { time: false },
          y: log ? { distr: 3, log: 10 } : {
            range: (u, lo, hi) => {
              if (lo == null || hi == null) return [0, 1];
              for (const h of m.hlines || []) { lo = Math.min(lo, h.y); hi = Math.max(hi, h.y); }
              if (m.ymin != null) lo = Math.min(lo, m.ymin);
              return uPlot.rangeNum(lo, hi, 0.08, true);
            },
          },
        },
        axes: [
          Object.assign({}, axis, { space: 70, values: (u, splits, i, space, incr) => linearLabels(splits, incr) }),
          Object.assign({}, axis, {
            space: 28,
            size: (u, values) => panel.axisWidth(u, values),
            values: log ? (u, splits) => logLabels(splits) : (u, splits, i, space, incr) => linearLabels(splits, incr),
          }),
        ],
        series,
        bands,
        hooks: {
          drawClear: [u => panel.drawStages(u, false)],
          draw: [u => { panel.drawStages(u, true); panel.drawMarks(u); }],
          setScale: [(u, key) => { if (key === "x") panel.group.zoomed(panel, u.scales.x.min, u.scales.x.max); }],
          setCursor: [u => panel.group.cursorMoved(panel, u)],
        },
      };
      this.u = new uPlot(opts, data, this.plot);
      if (keep && keep[0] != null && Number.isFinite(keep[0])) {
        this.group.syncing = true;
        this.u.setScale("x", { min: keep[0], max: keep[1] });
        this.group.syncing = false;
      }
    }

    /* The y axis is as wide as its longest label, and every panel of a group takes the widest
       group's width, so their x axes line up. */
    axisWidth(u, values) {
      let w = 0;
      if (values) {
        const ctx = u.ctx;
        ctx.save();
        ctx.font = "11px " + FAMILY;
        for (const v of values) if (v) w = Math.max(w, ctx.measureText(v).width);
        ctx.restore();
      }
      const need = Math.ceil(w / (uPlot.pxRatio || 1)) + 14;
      if (need > this.group.yWidth) {
        this.group.yWidth = need;
        this.group.realign();
      }
      return this.group.yWidth;
    }

    drawStages(u, top) {
      const stages = this.group.stages;
      if (!stages || !stages.length) return;
      const ctx = u.ctx, { left, top: y0, width, height } = u.bbox, px = uPlot.pxRatio || 1;
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, y0, width, height);
      ctx.clip();
      let lastX = null, level = 0;
      stages.forEach((st, i) => {
        const x0 = u.valToPos(st[1], "x", true);
        const end = i + 1 < stages.length ? stages[i + 1][1] : st[2];
        const x1 = u.valToPos(end, "x", true);
        if (!top && i % 2 === 1) { ctx.fillStyle = STAGE_SHADE; ctx.fillRect(x0, y0, x1 - x0, height); }
        if (top && i > 0) {
          ctx.strokeStyle = STAGE_LINE; ctx.lineWidth = px; ctx.setLineDash([4 * px, 3 * px]);
          ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x0, y0 + height); ctx.stroke();
        }
        if (top && this.model.stageLabels) {
          const close = lastX !== null && (x0 - lastX) < 70 * px;
          level = close ? (level + 1) % 2 : 0;
          ctx.setLineDash([]);
          ctx.font = (10.5 * px) + "px " + FAMILY;
          ctx.textAlign = "left";
          ctx.textBaseline = "top";
          label(ctx, st[0], Math.max(left, x0) + 4 * px, y0 + (3 + 13 * level) * px, MUTED, px);
          lastX = x0;
        }
      });
      ctx.restore();
    }

    drawMarks(u) {
      const m = this.model, ctx = u.ctx, { left, top, width, height } = u.bbox, px = uPlot.pxRatio || 1;
      ctx.save();
      ctx.font = (10.5 * px) + "px " + FAMILY;
      for (const h of m.hlines || []) {
        const y = u.valToPos(h.y, "y", true);
        if (!Number.isFinite(y)) continue;
        ctx.strokeStyle = MUTED; ctx.lineWidth = px; ctx.setLineDash([2 * px, 3 * px]);
        ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + width, y); ctx.stroke();
        ctx.setLineDash([]); ctx.textAlign = "left"; ctx.textBaseline = "bottom";
        label(ctx, h.label + " " + num(h.y), left + 4 * px, y - 2 * px, MUTED, px);
      }
      for (const v of m.vlines || []) {
        const x = u.valToPos(v.x, "x", true);
        if (!(x >= left && x <= left + width)) continue;
        ctx.strokeStyle = ONSET; ctx.lineWidth = 1.2 * px; ctx.setLineDash([5 * px, 3 * px]);
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
        if (m.markLabels) {
          const right = x > left + width / 2;
          ctx.setLineDash([]); ctx.textAlign = right ? "right" : "left"; ctx.textBaseline = "top";
          label(ctx, v.label, x + (right ? -4 : 4) * px, top + 3 * px, ONSET, px);
        }
      }
      ctx.restore();
    }

    /* Keyboard: ← → step through the points, Shift+← → pan, + − zoom, 0 / Home / Escape reset. */
    key(e) {
      const u = this.u;
      if (!u) return;
      const k = e.key;
      if ((k === "ArrowLeft" || k === "ArrowRight") && !e.shiftKey) {
        const xs = u.data[0];
        const lo = u.scales.x.min, hi = u.scales.x.max;
        let i = this.group.cursorX == null ? -1 : nearest(xs, this.group.cursorX);
        const dir = k === "ArrowRight" ? 1 : -1;
        if (i < 0 || xs[i] < lo || xs[i] > hi) i = dir > 0 ? xs.findIndex(x => x >= lo) : xs.length - 1 - [...xs].reverse().findIndex(x => x <= hi);
        else i = Math.min(xs.length - 1, Math.max(0, i + dir));
        if (xs[i] > hi || xs[i] < lo) this.group.pan(dir * 0.5);
        this.group.cursorX = xs[i];
        u.setCursor({ left: u.valToPos(xs[i], "x"), top: u.bbox.height / (uPlot.pxRatio || 1) / 2 });
        this.group.showAt(xs[i]);
      } else if (k === "ArrowLeft" || k === "ArrowRight") {
        this.group.pan(k === "ArrowRight" ? 0.2 : -0.2);
      } else if (k === "+" || k === "=") {
        this.group.zoom(0.5);
      } else if (k === "-" || k === "_") {
        this.group.zoom(2);
      } else if (k === "0" || k === "Home" || k === "Escape") {
        this.group.reset();
      } else {
        return;
      }
      e.preventDefault();
    }
  }

  // ------------------------------------------------------------------------------- a group

  /* Panels that share an x axis (zoom and pan move them together, the cursor is synchronised),
     one toolbar and one read-out. */
  class Group {
    constructor(root, models, options) {
      this.root = root;
      this.options = options || {};
      this.stages = this.options.stages || null;
      this.syncKey = "obs-" + (root.id || Math.random());
      this.readout = root.querySelector("[data-readout]");
      this.smoothing = 0;
      this.range = null;
      this.syncing = false;
      this.cursorX = null;
      this.models = models;
      this.panels = [];
      Group.all.push(this);
      whenNear(root, () => this.start());
    }

    /* Drawn when it first comes near the viewport: a page's load does no chart work it does not
       show (a run report's curves sit below the fold). */
    start() {
      const roots = this.root.querySelectorAll(".chart-panel");
      this.panels = this.models.map((m, i) => new Panel(this, roots[i], m));
      this.wireTools();
      this.drawAll();
      this.root.classList.add("ready");
    }

    setModels(models) {
      this.models = models;
      if (!this.root.classList.contains("ready")) return;
      this.panels.forEach((p, i) => {
        p.model = models[i];
        p.hidden.clear();
        if (p.logBox) p.logBox.checked = !!models[i].log;
        p.makeLegend();
      });
      this.range = null;
      this.drawAll();
      this.readout.replaceChildren(el("span", "note", "Point at a curve to read its values."));
    }

    wireTools() {
      const q = s => this.root.querySelector(s);
      const slider = q("input[data-smooth]"), shown = q("[data-smooth-value]");
      if (slider) {
        let pending = false;
        slider.addEventListener("input", () => {
          this.smoothing = Number(slider.value);
          if (shown) shown.textContent = this.smoothing > 0 ? this.smoothing.toFixed(2) : "off";
          if (pending) return;
          pending = true;
          requestAnimationFrame(() => { pending = false; this.drawAll(); this.update(); });
        });
      }
      this.root.querySelectorAll("[data-zoom]").forEach(b =>
        b.addEventListener("click", () => this.zoom(b.getAttribute("data-zoom") === "in" ? 0.5 : 2)));
      this.root.querySelectorAll("[data-pan]").forEach(b =>
        b.addEventListener("click", () => this.pan(0.25 * Number(b.getAttribute("data-pan")))));
      const reset = q("[data-reset]");
      if (reset) reset.addEventListener("click", () => this.reset());
    }

    drawAll() {
      this.yWidth = 30;
      this.panels.forEach(p => p.draw());
    }

    /* A panel needed a wider y axis: the others follow on the next frame. */
    realign() {
      if (this.realigning) return;
      this.realigning = true;
      requestAnimationFrame(() => {
        this.realigning = false;
        for (const p of this.panels) if (p.u) p.u.redraw(false, true);
      });
    }

    extent() {
      let lo = Infinity, hi = -Infinity;
      for (const p of this.panels) { const [a, b] = p.extent(); lo = Math.min(lo, a); hi = Math.max(hi, b); }
      return [lo, hi];
    }

    current() {
      const u = (this.panels.find(p => p.u) || {}).u;
      return u ? [u.scales.x.min, u.scales.x.max] : this.extent();
    }

    setRange(lo, hi) {
      const [a, b] = this.extent();
      if (!(b > a)) return;
      const span = Math.min(hi - lo, b - a);
      if (lo < a) { lo = a; hi = a + span; }
      if (hi > b) { hi = b; lo = b - span; }
      this.range = [lo, hi];
      this.syncing = true;
      for (const p of this.panels) if (p.u) p.u.setScale("x", { min: lo, max: hi });
      this.syncing = false;
    }

    zoomed(source, lo, hi) {
      if (this.syncing) return;
      this.range = [lo, hi];
      this.syncing = true;
      for (const p of this.panels) if (p !== source && p.u) p.u.setScale("x", { min: lo, max: hi });
      this.syncing = false;
    }

    zoom(factor) {
      const [lo, hi] = this.current();
      const c = this.cursorX != null && this.cursorX >= lo && this.cursorX <= hi ? this.cursorX : (lo + hi) / 2;
      const [a, b] = this.extent();
      const span = Math.min(b - a, Math.max((hi - lo) * factor, (b - a) / 1e4));
      this.setRange(c - span * (c - lo) / (hi - lo || 1), c + span * (hi - c) / (hi - lo || 1));
    }

    pan(fraction) {
      const [lo, hi] = this.current();
      const d = (hi - lo) * fraction;
      this.setRange(lo + d, hi + d);
    }

    reset() {
      const [a, b] = this.extent();
      this.range = null;
      if (!(b > a)) return;  /* one point, or none finite: the range was never changed (setRange's guard) */
      this.syncing = true;
      for (const p of this.panels) if (p.u) p.u.setScale("x", { min: a, max: b });
      this.syncing = false;
    }

    cursorMoved(panel, u) {
      if (u.cursor.left == null || u.cursor.left < 0) return;
      const x = u.posToVal(u.cursor.left, "x");
      if (!Number.isFinite(x)) return;
      this.cursorX = x;
      if (this.pending) return;
      this.pending = true;
      requestAnimationFrame(() => { this.pending = false; this.showAt(this.cursorX); });
    }

    update() { if (this.cursorX != null) this.showAt(this.cursorX); }

    /* The read-out at step x: every visible curve's nearest logged point (its own step when it
       differs, e.g. a sparse eval series), and the smoothed value when smoothing is on. */
    showAt(x) {
      const items = [];
      let at = null;
      for (const p of this.panels) {
        p.model.lines.forEach((line, i) => {
          if (p.hidden.has(i) || !line.x.length) return;
          const j = nearest(line.x, x);
          if (at === null || Math.abs(line.x[j] - x) < Math.abs(at - x)) at = line.x[j];
          items.push({ line, j });
        });
      }
      if (!items.length) return;
      const frag = document.createDocumentFragment();
      frag.append(el("span", "ro-step", (this.options.xLabel || "step") + " " + stepText(at)));
      for (const { line, j } of items) {
        const item = el("span", "ro-item");
        item.setAttribute("data-series", line.label);
        if (line.run) item.setAttribute("data-run", line.run);
        item.setAttribute("data-step", String(line.x[j]));
        item.setAttribute("data-value", String(line.y[j]));
        const sw = el("span", "swatch");
        sw.style.background = line.color;
        item.append(sw, el("span", "ro-name", line.label), document.createTextNode(" "), el("strong", "ro-value", num(line.y[j])));
        if (line.band) {
          const b = line.band, k = nearest(b.x, line.x[j]);
          if (b.x[k] === line.x[j]) item.append(el("span", "ro-extra", " " + b.label + " [" + num(b.lo[k]) + ", " + num(b.hi[k]) + "]"));
        }
        if (line.smooth) item.append(el("span", "ro-extra", " smoothed " + num(line.smooth[j])));
        if (line.x[j] !== at) item.append(el("span", "ro-extra", " at " + stepText(line.x[j])));
        frag.append(item);
      }
      this.readout.replaceChildren(frag);
    }
  }
  Group.all = [];

  const near = typeof IntersectionObserver === "function" ? new IntersectionObserver(entries => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      near.unobserve(e.target);
      const start = e.target._obsStart;
      delete e.target._obsStart;
      if (start) start();
    }
  }, { rootMargin: "400px 0px" }) : null;

  function whenNear(el, start) {
    const go = () => needLibrary(start);
    if (!near) { go(); return; }
    el._obsStart = go;
    near.observe(el);
  }

  /* uPlot (50 KB) is loaded only when a chart is about to be drawn: a reader who never scrolls
     to the curves never pays for it, and the page's load does not run it. */
  const libraryWaiting = [];
  function needLibrary(cb) {
    if (uPlot) { cb(); return; }
    libraryWaiting.push(cb);
    if (libraryWaiting.length > 1) return;
    load(HERE + "vendor/uPlot.iife.min.js", () => {
      uPlot = window.uPlot;
      libraryWaiting.splice(0).forEach(f => f());
    });
  }

  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const g of Group.all) for (const p of g.panels) {
        if (p.u) p.u.setSize({ width: Math.max(120, p.plot.clientWidth), height: Math.max(60, p.plot.clientHeight) });
      }
    }, 80);
  });
  if (document.fonts && document.fonts.ready) {
    document.fonts.ready.then(() => { for (const g of Group.all) for (const p of g.panels) if (p.u) p.u.redraw(false, true); });
  }

  // ------------------------------------------------------------------------ run pages

  function seriesLine(run, name, color) {
    const s = run.series[name];
    if (!s) return null;
    return { label: name, x: xsOf(s), y: s.y, color, n: s.n };
  }

  function bandOf(run, key) {
    const b = run.bands && run.bands[key];
    return b ? { x: xsOf(b), lo: b.lo, hi: b.hi } : null;
  }

  function runModel(run, panel) {
    const offset = panel.colorOffset || 0;
    const lines = [];
    (panel.lines || []).forEach((name, i) => {
      const line = seriesLine(run, name, PALETTE[(offset + i) % PALETTE.length]);
      if (line) lines.push(line);
    });
    const bands = [];
    (panel.bands || []).forEach(spec => {
      const b = bandOf(run, spec.key);
      const li = lines.findIndex(l => l.label === spec.series);
      if (!b || li < 0) return;
      const band = Object.assign(b, { color: lines[li].color, alpha: spec.faint ? 0.1 : 0.26, line: li, label: spec.label });
      bands.push(band);
      if (!spec.faint) lines[li].band = band;
    });
    return {
      lines, bands,
      stageLabels: !!panel.stages, hlines: panel.hlines || [], vlines: panel.vlines || [],
      markLabels: panel.markLabels !== false, log: !!panel.log, ymin: panel.ymin == null ? null : panel.ymin,
    };
  }

  function runPage(spec) {
    const first = document.querySelector(".chart-group");
    if (!first) return;
    whenNearOnce(first, () => withData(spec.slug, spec.data, run => {
      if (!run) return;
      const stages = run.stages && run.stages.length ? run.stages : null;
      Object.keys(spec.groups).forEach(name => {
        const root = document.getElementById("chart-" + name);
        if (!root) return;
        const models = spec.groups[name].map((p, i) => {
          const m = runModel(run, p);
          if (name === "reward" && i > 0) m.markLabels = false;
          return m;
        });
        new Group(root, models, { stages, xLabel: run.x });
      });
      const explore = document.getElementById("chart-explore");
      if (explore) {
        const pick = explore.querySelector("select[data-series]");
        const title = explore.querySelector(".chart-plot");
        const model = () => {
          const line = seriesLine(run, pick.value, PALETTE[0]);
          title.setAttribute("aria-label", pick.value + " over " + run.x);
          return { lines: line ? [line] : [], bands: [], hlines: [], vlines: [], stageLabels: true, log: false, ymin: null };
        };
        const group = new Group(explore, [model()], { stages, xLabel: run.x });
        pick.addEventListener("change", () => group.setModels([model()]));
      }
    }));
  }

  /* `start` once any of the page's chart groups comes near the viewport (the data file it needs
     is then loaded; each group still draws only when it is near itself). */
  function whenNearOnce(el, start) {
    let done = false;
    const once = () => { if (!done) { done = true; start(); } };
    if (typeof IntersectionObserver !== "function") { once(); return; }
    const io = new IntersectionObserver(entries => {
      if (entries.some(e => e.isIntersecting)) { io.disconnect(); once(); }
    }, { rootMargin: "800px 0px" });
    document.querySelectorAll(".chart-group").forEach(g => io.observe(g));
  }

  // --------------------------------------------------------------- compare.html: overlay

  const LOSS_FIRST = ["loss", "train_loss", "train/loss", "eval_loss", "reward_mean", "reward"];

  function overlayPage(root) {
    const list = root.querySelector("[data-overlay-runs]");
    const boxes = Array.from(list.querySelectorAll("input[type=checkbox]"));
    const bySlug = {};
    boxes.forEach(b => { bySlug[b.value] = { slug: b.value, id: b.parentElement.textContent.trim() }; });
    const metricSel = root.querySelector("select[data-overlay-metric]");
    const count = root.querySelector("[data-overlay-count]");
    const status = root.querySelector("[data-overlay-status]");
    const filter = root.querySelector("input[data-overlay-filter]");
    const tbody = root.querySelector("table[data-overlay-finals] tbody");
    const groupRoot = root.querySelector(".chart-group");
    const base = root.getAttribute("data-root") || "";
    const params = new URLSearchParams(location.search);
    let wanted = (params.get("runs") || "").split(",").filter(s => bySlug[s]);
    if (!wanted.length) wanted = [document.getElementById("compare-a"), document.getElementById("compare-b")].filter(Boolean).map(s => s.value);
    boxes.forEach(b => { b.checked = !b.disabled && wanted.indexOf(b.value) >= 0; });  // a run without curves has no curves.js
    let metric = params.get("metric") || "";
    let group = null;

    function picked() { return boxes.filter(b => b.checked).map(b => b.value); }

    function remember() {
      if (location.protocol === "file:") return;  // a file: page may not rewrite its URL
      const p = new URLSearchParams(location.search);
      p.set("runs", picked().join(","));
      if (metric) p.set("metric", metric);
      history.replaceState(null, "", "?" + p.toString() + location.hash);
    }

    function render() {
      const slugs = picked();
      count.textContent = String(slugs.length);
      const runs = slugs.map(s => loaded[s]).filter(Boolean);
      const missing = slugs.filter(s => !loaded[s]);
      const names = new Set();
      runs.forEach(r => Object.keys(r.series).forEach(n => names.add(n)));
      const sorted = Array.from(names).sort();
      if (!metric || !names.has(metric)) {
        const shared = sorted.filter(n => runs.every(r => r.series[n]));
        metric = LOSS_FIRST.find(n => shared.indexOf(n) >= 0) || shared[0] || sorted[0] || "";
      }
      metricSel.replaceChildren(...sorted.map(n => {
        const o = el("option", null, n);
        o.value = n;
        o.selected = n === metric;
        return o;
      }));
      metricSel.disabled = !sorted.length;
      const lines = [];
      runs.forEach((r, i) => {
        const line = seriesLine(r, metric, PALETTE[i % PALETTE.length]);
        if (line) { line.label = r.id; line.run = r.slug; line.metric = metric; lines.push(line); }
      });
      const model = { lines, bands: [], hlines: [], vlines: [], stageLabels: false, log: false, ymin: null };
      if (!group) group = new Group(groupRoot, [model], { xLabel: "step" });
      else group.setModels([model]);
      finals(slugs);
      status.textContent = slugs.length < 1 ? "Pick runs to overlay." :
        (lines.length + " of " + slugs.length + " picked runs logged " + (metric || "a metric") +
         (missing.length ? "; " + missing.length + " could not be read" : "") + ".");
    }

    function finals(slugs) {
      const rows = document.createDocumentFragment();
      slugs.forEach((slug, i) => {
        const r = loaded[slug], meta = bySlug[slug];
        const tr = el("tr");
        const th = el("th");
        th.scope = "row";
        const a = el("a", null, meta ? meta.id : slug);
        a.href = base + "runs/" + encodeURIComponent(slug) + "/index.html";
        const sw = el("span", "swatch");
        sw.style.background = PALETTE[i % PALETTE.length];
        th.append(sw, a);
        tr.append(th);
        const s = r && r.series[metric];
        if (!s) {
          const td = el("td", "note", r ? "not logged" : "could not be read");
          td.colSpan = 6;
          tr.append(td);
        } else {
          const xs = xsOf(s), last = xs.length - 1;
          let lo = Infinity, hi = -Infinity;
          for (const v of s.y) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
          const fin = r.finals ? r.finals[metric] : undefined;
          const labels = ["Last step", "Last value", "Final-window mean", "Min", "Max", "Points logged"];  // for a phone's reflowed rows
          [stepText(xs[last]), num(s.y[last]), fin === undefined ? "—" : num(fin), num(lo), num(hi), num(s.n)].forEach((t, k) => {
            const td = el("td", "num", t);
            td.setAttribute("data-label", labels[k]);
            tr.append(td);
          });
        }
        rows.append(tr);
      });
      tbody.replaceChildren(rows);
    }

    function load() {
      const slugs = picked();
      let left = slugs.filter(s => !loaded[s]).length;
      render();
      slugs.forEach(slug => {
        if (loaded[slug]) return;
        withData(slug, base + "runs/" + encodeURIComponent(slug) + "/curves.js", () => {
          left -= 1;
          if (left <= 0) render();
        });
      });
    }

    boxes.forEach(b => b.addEventListener("change", () => { load(); remember(); }));
    metricSel.addEventListener("change", () => { metric = metricSel.value; render(); remember(); });
    if (filter) {
      filter.addEventListener("input", () => {
        const text = filter.value.trim().toLowerCase();
        boxes.forEach(b => {
          const li = b.closest("li");
          li.hidden = !!text && li.textContent.toLowerCase().indexOf(text) < 0;
        });
      });
    }
    const clear = root.querySelector("[data-overlay-clear]");
    if (clear) clear.addEventListener("click", () => { boxes.forEach(b => { b.checked = false; }); load(); remember(); });
    load();
  }

  // ------------------------------------------------- campaign and arms pages: any metric

  function conditionsPage(spec) {
    withData(spec.key, spec.data, data => {
      if (!data) return;
      const root = document.getElementById("chart-conditions");
      const pick = document.querySelector("select[data-metric]");
      if (!root || !pick) return;
      const model = () => {
        const view = data.metrics[pick.value];
        const lines = [], bands = [];
        if (view) {
          view.conditions.forEach((c, i) => {
            const x = c.x, color = PALETTE[i % PALETTE.length];
            const line = { label: c.label, x, y: c.mean, color, width: 1.7 };
            if (c.sd_lo) bands.push({ x, lo: c.sd_lo, hi: c.sd_hi, color, alpha: 0.08, line: i, label: "± sd" });
            if (c.ci_lo) {
              const band = { x, lo: c.ci_lo, hi: c.ci_hi, color, alpha: 0.22, line: i, label: "95% CI" };
              bands.push(band);
              line.band = band;
            }
            lines.push(line);
          });
        }
        root.querySelector(".chart-title").textContent = pick.value;
        return { lines, bands, hlines: [], vlines: [], stageLabels: false, log: false, ymin: null };
      };
      const group = new Group(root, [model()], { xLabel: "step" });
      const show = () => {
        document.querySelectorAll("[data-metric-block]").forEach(b => {
          b.hidden = b.getAttribute("data-metric-block") !== pick.value;
        });
      };
      pick.addEventListener("change", () => {
        group.setModels([model()]);
        show();
        if (location.protocol !== "file:") history.replaceState(null, "", "#metric=" + encodeURIComponent(pick.value));
      });
      const fromHash = decodeURIComponent((location.hash.match(/metric=([^&]+)/) || [])[1] || "");
      if (fromHash && data.metrics[fromHash]) { pick.value = fromHash; group.setModels([model()]); }
      show();
    });
  }

  // ----------------------------------------------------------------------------- start

  function start() {
    const specNode = document.getElementById("chart-spec");
    if (specNode) {
      const spec = JSON.parse(specNode.textContent);
      if (spec.kind === "conditions") conditionsPage(spec);
      else runPage(spec);
    }
    const overlay = document.getElementById("overlay");
    if (overlay) overlayPage(overlay);
  }

  // for tests and the console: the groups, the formatters, and whether a load is under way
  window.obsCharts = { groups: Group.all, num, linearLabels, logLabels, ema, loaded, busy: () => inFlight > 0 };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
