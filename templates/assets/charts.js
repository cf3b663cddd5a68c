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
  /* Runs get their colour from their id, the same on every chart and page whatever else is picked:
     Okabe and Ito's colour-blind-safe palette without its yellow (too faint on white). Two runs
     that hash to one colour are told apart by a dashed line (`runStyles`). */
  const RUN_PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"];
  const DASHES = [null, [6, 3], [2, 2], [8, 3, 2, 3]];
  const MUTED = "#5f6b7a";
  const GRID = "#e5e7eb";
  const AXIS = "#9ca3af";
  const STAGE_SHADE = "rgba(226, 232, 240, 0.55)";
  const STAGE_LINE = "#94a3b8";
  const ONSET = "#b91c1c";
  const FAMILY = "Inter, 'DejaVu Sans', system-ui, sans-serif";
  const MINUS = "\u2212";
  const SI = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

  // ------------------------------------------------------------------------------ colours

  /* FNV-1a over the id's UTF-16 code units: a stable 32-bit hash, the same in every browser. */
  function hashOf(text) {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h >>> 0;
  }

  function runColor(id) { return RUN_PALETTE[hashOf(String(id)) % RUN_PALETTE.length]; }

  /* Colour and dash of each id of a list: its own colour; the second id with a colour already
     taken gets a dash, the third another one. */
  function runStyles(ids) {
    const seen = {};
    return ids.map(id => {
      const color = runColor(id);
      const k = seen[color] || 0;
      seen[color] = k + 1;
      return { color, dash: DASHES[k % DASHES.length] };
    });
  }

  /* Colours of the groups of one chart (group by a setting): each its hashed colour, or the next
     one free in the palette when another group has it; dashes only past the palette's size. */
  function groupStyles(keys) {
    const taken = new Set();
    return keys.map((k, i) => {
      if (i >= RUN_PALETTE.length) return { color: RUN_PALETTE[i % RUN_PALETTE.length], dash: DASHES[1 + Math.floor(i / RUN_PALETTE.length) % (DASHES.length - 1)] };
      let at = hashOf(String(k)) % RUN_PALETTE.length;
      while (taken.has(at)) at = (at + 1) % RUN_PALETTE.length;
      taken.add(at);
      return { color: RUN_PALETTE[at], dash: null };
    });
  }

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
  // whole-number tick steps (1, 2, 5 and their powers of ten) for an x axis whose values are all integers
  const WHOLE_INCRS = [];
  for (let p = 1; p <= 1e12; p *= 10) WHOLE_INCRS.push(p, 2 * p, 5 * p);

  function linearLabels(splits, incr) {
    let max = 0;
    for (const v of splits) if (v != null) max = Math.max(max, Math.abs(v));
    if (!(incr > 0)) incr = max || 1;
    if (max >= 1e4) {
      const [div, suffix] = SI.find(p => max >= p[0]) || SI[SI.length - 1];
      const d = decimalsOf(incr / div);
      return splits.map(v => v == null ? "" : v === 0 ? "0" : minus((v / div).toFixed(d)) + suffix);
    }
    if (max > 0 && max < 1e-3) return splits.map(v => v == null ? "" : v === 0 ? "0" : sci(v, incr));
    const d = decimalsOf(incr);
    return splits.map(v => v == null ? "" : minus(grouped(v.toFixed(d))));
  }

  /* v (a multiple of incr) in normalised scientific notation, a mantissa in [1, 10) with the
     decimals incr needs at v's own exponent: 5e−7, 1e−6, 1.5e−6 (never "10e−7"). */
  function sci(v, incr) {
    let e = Math.floor(Math.log10(Math.abs(v)) + 1e-9);
    let m = v / Math.pow(10, e);
    const d = Math.min(15, decimalsOf(incr / Math.pow(10, e)));
    if (Math.abs(Number(m.toFixed(d))) >= 10) { e += 1; m = v / Math.pow(10, e); }
    return minus(String(Number(m.toFixed(d))) + "e" + e);
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

  /* The y range that ignores outliers: the 2nd to the 98th percentile of the points drawn in the
     x range shown (each shown series counts its points), widened by a tenth on each side so the
     bulk of every curve is in view while one spike no longer flattens it. */
  const ROBUST_Q = 0.02;
  function robustRange(u) {
    const xs = u.data[0], lo = u.scales.x.min, hi = u.scales.x.max, all = [];
    for (let s = 1; s < u.series.length; s++) {
      if (!u.series[s].show) continue;
      const ys = u.data[s];
      for (let i = 0; i < xs.length; i++) {
        const v = ys[i];
        if (v != null && Number.isFinite(v) && (lo == null || (xs[i] >= lo && xs[i] <= hi))) all.push(v);
      }
    }
    if (all.length < 5) return null;
    all.sort((a, b) => a - b);
    const q = p => all[Math.min(all.length - 1, Math.max(0, Math.round(p * (all.length - 1))))];
    const a = q(ROBUST_Q), b = q(1 - ROBUST_Q), pad = (b - a) * 0.1;
    return b > a ? [a - pad, b + pad] : null;
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
        this.logBox.addEventListener("change", () => { this.draw(); this.group.notify(); });
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
        const dash = line.dash || undefined;
        series.push({
          show,
          stroke: line.smooth ? alpha(line.color, 0.28) : line.color,
          width: line.width || 1.5,
          dash,
          spanGaps: true,
          points: { show: !!line.points || line.x.length < 3, size: 5, fill: line.color },
        });
        if (line.smooth) series.push({ show, stroke: line.color, width: 1.6, dash, spanGaps: true, points: { show: false } });
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
        // a wall-clock x axis (compare.html) is uPlot's time scale in UTC: ticks on whole minutes,
        // hours and days, written as uPlot writes dates
        tzDate: ts => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
        scales: {
          x: { time: !!this.group.options.xTime },
          y: log ? { distr: 3, log: 10 } : {
            range: (u, lo, hi) => {
              if (m.robust || this.group.options.robust) {
                const r = robustRange(u);
                if (r) [lo, hi] = r;
              }
              if (lo == null || hi == null) return [0, 1];
              for (const h of m.hlines || []) { lo = Math.min(lo, h.y); hi = Math.max(hi, h.y); }
              if (m.ymin != null) lo = Math.min(lo, m.ymin);
              return uPlot.rangeNum(lo, hi, 0.08, true);
            },
          },
        },
        axes: [
          this.group.options.xTime ? Object.assign({}, axis, { space: 90, values: this.group.options.xValues }) :
            Object.assign({}, axis, { space: 70, values: (u, splits, i, space, incr) => linearLabels(splits, incr) },
              // an x that is only ever whole (steps, a rung's number) gets whole ticks: no "1.5" between rungs
              data[0].every(Number.isInteger) ? { incrs: WHOLE_INCRS } : {}),
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
      this.styles = series.map(x => ({ stroke: x.stroke, width: x.width, dash: x.dash }));  // for the SVG export
      this.bandStyles = bands.map(b => ({ series: b.series.slice(), fill: b.fill }));
      this.extremes = [];
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
      const placed = [];  // the labels drawn so far: [x0, x1, level]
      let first = 0;  // stages that ended left of the plot get no label, nor all but the last that began there
      while (first + 1 < stages.length && u.valToPos(stages[first + 1][1], "x", true) <= left) first += 1;
      stages.forEach((st, i) => {
        const x0 = u.valToPos(st[1], "x", true);
        const end = i + 1 < stages.length ? stages[i + 1][1] : st[2];
        const x1 = u.valToPos(end, "x", true);
        if (!top && i % 2 === 1) { ctx.fillStyle = STAGE_SHADE; ctx.fillRect(x0, y0, x1 - x0, height); }
        if (top && i > 0) {
          ctx.strokeStyle = STAGE_LINE; ctx.lineWidth = px; ctx.setLineDash([4 * px, 3 * px]);
          ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x0, y0 + height); ctx.stroke();
        }
        if (top && this.model.stageLabels && i >= first && x0 < left + width) {
          ctx.setLineDash([]);
          ctx.font = (10.5 * px) + "px " + FAMILY;
          ctx.textAlign = "left";
          ctx.textBaseline = "top";
          const tx = Math.max(left, x0) + 4 * px, tw = ctx.measureText(st[0]).width;
          // the lowest of two rows where it overlaps no label drawn before; none free: not drawn
          const level = [0, 1].find(l => !placed.some(p => p[2] === l && tx < p[1] + 6 * px && tx + tw > p[0]));
          if (level !== undefined) {
            label(ctx, st[0], tx, y0 + (3 + 13 * level) * px, MUTED, px);
            placed.push([tx, tx + tw, level]);
          }
        }
      });
      ctx.restore();
    }

    /* Each shown curve's lowest and highest logged point in the x range shown, marked and labelled
       (▼ min, ▲ max), when the group's markers are on. */
    drawExtremes(u) {
      if (!this.group.options.marks) return;
      const ctx = u.ctx, { left, top, width, height } = u.bbox, px = uPlot.pxRatio || 1;
      const lo = u.scales.x.min, hi = u.scales.x.max;
      this.extremes = [];
      ctx.save();
      ctx.beginPath(); ctx.rect(left, top, width, height); ctx.clip();
      ctx.font = (10 * px) + "px " + FAMILY;
      ctx.textAlign = "center";
      const placed = [];  // labels drawn: [x0, x1, y0, y1]
      this.model.lines.forEach((line, i) => {
        if (this.hidden.has(i)) return;
        let a = -1, b = -1;
        for (let j = 0; j < line.x.length; j++) {
          const v = line.y[j];
          if (v == null || !Number.isFinite(v) || line.x[j] < lo || line.x[j] > hi) continue;
          if (a < 0 || v < line.y[a]) a = j;
          if (b < 0 || v > line.y[b]) b = j;
        }
        if (a < 0) return;
        [[a, "min"], [b, "max"]].forEach(([j, kind]) => {
          const x = u.valToPos(line.x[j], "x", true), y = u.valToPos(line.y[j], "y", true);
          if (!Number.isFinite(y)) return;
          const mark = { line: line.label, kind, x: line.x[j], y: line.y[j] };
          this.extremes.push(mark);
          ctx.fillStyle = line.color;
          ctx.beginPath(); ctx.arc(x, y, 3.5 * px, 0, 2 * Math.PI); ctx.fill();
          // the label beside its point, inside the plot: above a maximum unless that leaves the
          // plot, below a minimum likewise; towards the middle near either side
          const text = (kind === "max" ? "▲ " : "▼ ") + num(line.y[j]), tw = ctx.measureText(text).width;
          const above = kind === "max" ? y - 18 * px > top : y + 18 * px > top + height;
          ctx.textBaseline = above ? "bottom" : "top";
          ctx.textAlign = x - tw / 2 < left ? "left" : x + tw / 2 > left + width ? "right" : "center";
          const tx = x + (ctx.textAlign === "left" ? -3 : ctx.textAlign === "right" ? 3 : 0) * px;
          const x0 = ctx.textAlign === "left" ? tx : ctx.textAlign === "right" ? tx - tw : tx - tw / 2;
          // moved away from its point, a line at a time, while it would cover another mark's label
          let ty = y + (above ? -5 : 5) * px;
          const lineH = 12 * px, step = above ? -lineH : lineH;
          const box = t => above ? [t - lineH, t] : [t, t + lineH];
          for (let k = 0; k < 4 && placed.some(p => x0 < p[1] && x0 + tw > p[0] && box(ty)[0] < p[3] && box(ty)[1] > p[2]); k++) ty += step;
          ty = above ? Math.max(ty, top + lineH) : Math.min(ty, top + height - lineH);  // inside the plot
          placed.push([x0, x0 + tw, ...box(ty)]);
          Object.assign(mark, { align: ctx.textAlign, above, dy: (ty - y) / px });  // for the SVG export
          label(ctx, text, tx, ty, line.color, px);
        });
      });
      ctx.restore();
    }

    drawMarks(u) {
      this.drawExtremes(u);
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

  /* A panel's markup, as partials/charts.html's `panel` macro writes it, for groups whose panels
     the script makes (compare.html: one per picked metric). */
  function panelElement(index, model) {
    const root = el("div", "chart-panel" + (model.tall ? " tall" : ""));
    root.setAttribute("data-panel", String(index));
    const head = el("div", "chart-head");
    const log = el("label", "chart-log");
    const box = el("input");
    box.type = "checkbox";
    box.setAttribute("data-log", "");
    log.append(box, document.createTextNode(" log y"));
    head.append(el("span", "chart-title", model.title || ""), el("span", "chart-legend"), log);
    const plot = el("div", "chart-plot");
    plot.tabIndex = 0;
    plot.setAttribute("role", "application");
    plot.setAttribute("aria-roledescription", "chart");
    plot.setAttribute("aria-label", model.desc || ((model.title || "a metric") + " over steps"));
    plot.setAttribute("aria-describedby", "chart-help");
    root.append(head, plot);
    return root;
  }

  // ------------------------------------------------------------------------------- export

  /* PNG, SVG and CSV of a chart group: the code is in chart-export.js, loaded on the first click
     (a page that is only read never pays for it). */
  let exporter = null;
  const exportWaiting = [];
  function exportGroup(group, kind) {
    if (!group.panels.some(p => p.u)) return;
    if (exporter) { exporter(group, kind); return; }
    exportWaiting.push([group, kind]);
    if (exportWaiting.length > 1) return;
    load(HERE + "chart-export.js", () => {
      exporter = window.obsChartExport || null;
      exportWaiting.splice(0).forEach(([g, k]) => { if (exporter) exporter(g, k); });
    }, () => { exportWaiting.length = 0; });
  }

  /* Smoothing is remembered across the site's pages (localStorage; from file:// too). A browser
     that refuses storage simply starts at "off". */
  const SMOOTH_KEY = "obs.smoothing";
  function storedSmoothing() {
    try {
      const v = Number(window.localStorage.getItem(SMOOTH_KEY));
      return v > 0 && v < 1 ? v : 0;
    } catch (e) { return 0; }
  }
  function storeSmoothing(v) {
    try { window.localStorage.setItem(SMOOTH_KEY, String(v)); } catch (e) { /* storage refused */ }
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
      if (this.dead) return;
      this.makePanels();
      this.wireTools();
      this.drawAll();
      this.root.classList.add("ready");
      this.notify();
    }

    /* One panel per model. A group made with `options.panels` (compare.html's small multiples)
       makes its panels' markup itself, one per model; the others draw into the page's. */
    makePanels() {
      if (this.options.panels) {
        this.root.querySelectorAll(".chart-panel").forEach(p => p.remove());
        this.models.forEach((m, i) => this.readout.before(panelElement(i, m)));
      }
      const roots = this.root.querySelectorAll(".chart-panel");
      this.panels = this.models.map((m, i) => new Panel(this, roots[i], m));
    }

    /* New models; `keepRange` keeps the x range shown (a change of smoothing or grouping, not of
       what the x axis is). */
    setModels(models, keepRange) {
      this.models = models;
      if (!this.root.classList.contains("ready")) return;
      if (this.options.panels) {
        for (const p of this.panels) if (p.u) p.u.destroy();
        this.makePanels();
      } else {
        this.panels.forEach((p, i) => {
          p.model = models[i];
          p.hidden.clear();
          if (p.logBox) p.logBox.checked = !!models[i].log;
          p.makeLegend();
        });
      }
      if (!keepRange) {  // a panel redrawn keeps the range its chart shows: not this time
        this.range = null;
        for (const p of this.panels) if (p.u) { p.u.destroy(); p.u = null; }
      }
      this.drawAll();
      this.readout.replaceChildren(el("span", "note", "Point at a curve to read its values."));
    }

    setSmoothing(weight) {
      this.smoothing = weight;
      this.smoothingSet = true;
      const slider = this.root.querySelector("input[data-smooth]"), shown = this.root.querySelector("[data-smooth-value]");
      if (slider) slider.value = String(weight);
      if (shown) shown.textContent = weight > 0 ? weight.toFixed(2) : "off";
    }

    /* Whoever made the group hears of every change of its view (compare.html keeps it in the URL). */
    notify() { if (this.options.onChange && !this.dead) this.options.onChange(this); }

    wireTools() {
      const q = s => this.root.querySelector(s);
      const slider = q("input[data-smooth]"), shown = q("[data-smooth-value]");
      if (slider) {
        // the reader's last smoothing, on every page of the site (unless this group was given one)
        if (!this.smoothingSet) this.setSmoothing(storedSmoothing());
        let pending = false;
        slider.addEventListener("input", () => {
          this.smoothing = Number(slider.value);
          if (shown) shown.textContent = this.smoothing > 0 ? this.smoothing.toFixed(2) : "off";
          storeSmoothing(this.smoothing);
          if (pending) return;
          pending = true;
          requestAnimationFrame(() => { pending = false; this.drawAll(); this.update(); this.notify(); });
        });
      }
      this.root.querySelectorAll("[data-export]").forEach(b =>
        b.addEventListener("click", () => exportGroup(this, b.getAttribute("data-export"))));
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
      this.notify();
    }

    zoomed(source, lo, hi) {
      if (this.syncing) return;
      this.range = [lo, hi];
      this.syncing = true;
      for (const p of this.panels) if (p !== source && p.u) p.u.setScale("x", { min: lo, max: hi });
      this.syncing = false;
      this.notify();
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
      this.range = null;
      this.notify();
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
          items.push({ line, j, panel: this.options.panels && this.panels.length > 1 ? p.model.title : null });
        });
      }
      if (!items.length) return;
      const frag = document.createDocumentFragment();
      const xText = this.options.xText || stepText;
      frag.append(el("span", "ro-step", (this.options.xLabel || "step") + " " + xText(at)));
      for (const { line, j, panel } of items) {
        const item = el("span", "ro-item");
        item.setAttribute("data-series", line.label);
        if (line.run) item.setAttribute("data-run", line.run);
        if (panel) item.setAttribute("data-panel", panel);
        item.setAttribute("data-step", String(line.steps ? line.steps[j] : line.x[j]));
        item.setAttribute("data-x", String(line.x[j]));
        item.setAttribute("data-value", String(line.y[j]));
        const sw = el("span", "swatch");
        sw.style.background = line.color;
        item.append(sw, el("span", "ro-name", panel ? panel + " · " + line.label : line.label), document.createTextNode(" "), el("strong", "ro-value", num(line.y[j])));
        if (line.band) {
          const b = line.band, k = nearest(b.x, line.x[j]);
          if (b.x[k] === line.x[j]) item.append(el("span", "ro-extra", " " + b.label + " [" + num(b.lo[k]) + ", " + num(b.hi[k]) + "]"));
        }
        if (line.smooth) item.append(el("span", "ro-extra", " smoothed " + num(line.smooth[j])));
        if (line.x[j] !== at) item.append(el("span", "ro-extra", " at " + xText(line.x[j])));
        if (line.steps) item.append(el("span", "ro-extra", " (step " + stepText(line.steps[j]) + ")"));
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

  // ------------------------------------------------------------------------ other x axes

  /* The axes the picked runs offer beyond the step: wall time and relative time from a logged
     clock, the epoch, and each counter (tokens, examples seen) by name; a counter obs.yaml declares
     (`x_axes`) is keyed by its axis name, whatever series each run logs it as. */
  function axesOf(runs) {
    const out = [{ value: "step", label: "step" }];
    const kinds = new Set(), counters = new Set();
    runs.forEach(r => Object.keys(r.xaxes || {}).forEach(n => {
      const k = r.xaxes[n].kind;
      if (k === "counter") counters.add(n); else kinds.add(k);
    }));
    if (kinds.has("wall")) out.push({ value: "wall", label: "wall time (UTC)" });
    if (kinds.has("wall") || kinds.has("elapsed")) out.push({ value: "relative", label: "relative time" });
    if (kinds.has("epoch")) out.push({ value: "epoch", label: "epoch" });
    Array.from(counters).sort().forEach(n => out.push({ value: n, label: n }));
    return out;
  }

  /* The series a run maps its steps through for axis `x`, and how its values become x. */
  function axisOf(run, x) {
    const names = Object.keys(run.xaxes || {}).sort();
    const pick = test => { const n = names.find(n => test(run.xaxes[n])); return n ? run.xaxes[n] : null; };
    if (x === "wall") { const a = pick(a => a.kind === "wall"); return a && { a, f: v => a.start + v }; }
    if (x === "relative") { const a = pick(a => a.kind === "elapsed") || pick(a => a.kind === "wall"); return a && { a, f: v => v }; }
    if (x === "epoch") { const a = pick(a => a.kind === "epoch"); return a && { a, f: v => v }; }
    const a = run.xaxes && Object.prototype.hasOwnProperty.call(run.xaxes, x) ? run.xaxes[x] : null;
    return a && a.kind === "counter" ? { a, f: v => v } : null;
  }

  /* A series' points on axis x: each step mapped through the axis series by linear interpolation
     between its logged points; points outside the steps it covers are left out. */
  function mapped(run, entry, x, unit) {
    const xs = xsOf(entry), y = entry.y;
    if (x === "step") return { x: xs, y, steps: null };
    const ax = axisOf(run, x);
    if (!ax) return null;
    const sx = xsOf(ax.a), sv = ax.a.y, out = { x: [], y: [], steps: [] };
    let j = 0;
    for (let i = 0; i < xs.length; i++) {
      const s = xs[i];
      if (s < sx[0] || s > sx[sx.length - 1]) continue;
      while (j + 1 < sx.length && sx[j + 1] < s) j += 1;
      const k = Math.min(j + 1, sx.length - 1);
      const v = sx[k] === sx[j] ? sv[j] : sv[j] + (sv[k] - sv[j]) * (s - sx[j]) / (sx[k] - sx[j]);
      out.x.push(ax.f(sx[j] === s ? sv[j] : v) / unit);
      out.y.push(y[i]);
      out.steps.push(s);
    }
    // an axis that stood still (two steps at one epoch) would give one x two values: the last is kept
    for (let i = out.x.length - 2; i >= 0; i--) {
      if (out.x[i] === out.x[i + 1]) { out.x.splice(i, 1); out.y.splice(i, 1); out.steps.splice(i, 1); }
    }
    return out;
  }

  /* Relative time in the unit its longest run reads best in. */
  function timeUnit(runs) {
    let longest = 0;
    runs.forEach(r => { const ax = axisOf(r, "relative"); if (ax) longest = Math.max(longest, ax.a.y[ax.a.y.length - 1]); });
    return longest >= 3 * 3600 ? [3600, "h"] : longest >= 180 ? [60, "min"] : [1, "s"];
  }

  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function utc(seconds) {
    const d = new Date(seconds * 1000);
    return d.getUTCFullYear() + "-" + pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate()) + " " +
      pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) + ":" + pad2(d.getUTCSeconds());
  }

  /* How a group draws and writes axis x: its label, its CSV header, its read-out, its ticks (a
     wall clock on uPlot's time scale, in UTC), and the unit relative time is divided by. */
  function axisOptions(x, runs) {
    if (x === "wall") {
      return {
        xLabel: "wall time", xCsv: "wall time (seconds since 1970-01-01 UTC)",
        xText: v => utc(v) + " UTC", xTime: true, unit: 1,
        // uPlot's time ticks fall on whole seconds, minutes, hours or days: written to that
        // resolution, ISO style, with the date where it changes (the status line says where it starts)
        xValues: (u, splits, axis, space, incr) => {
          const first = splits.find(v => v != null);
          let day = first == null ? null : utc(first).slice(0, 10);
          return splits.map(v => {
            if (v == null) return "";
            const t = utc(v), d = t.slice(0, 10);
            if (incr >= 86400) return d;
            const time = incr < 60 ? t.slice(11, 19) : t.slice(11, 16);
            const text = d !== day ? d.slice(5) + " " + time : time;
            day = d;
            return text;
          });
        },
      };
    }
    if (x === "relative") {
      const [div, name] = timeUnit(runs);
      return { xLabel: "relative time (" + name + ")", xCsv: "relative time (" + name + ")", unit: div };
    }
    return { xLabel: x, xCsv: x, unit: 1 };
  }

  // ------------------------------------------------------------------------ run pages

  /* A run's series on axis x (a model line's x, y and, off the step axis, the step of each point). */
  function onAxis(run, entry, x, unit) {
    if (x === "step") return { x: xsOf(entry), y: entry.y, steps: null };
    return mapped(run, entry, x, unit) || { x: [], y: [], steps: [] };
  }

  function seriesLine(run, name, color, x, unit) {
    // a series the log holds, else one the build derived from them (a weight × a reward component)
    const s = run.series[name] || (run.derived && run.derived[name]);
    if (!s) return null;
    const at = onAxis(run, s, x || "step", unit || 1);
    return { label: name, x: at.x, y: at.y, steps: at.steps, color, n: s.n };
  }

  function bandOf(run, key, x, unit) {
    const b = run.bands && run.bands[key];
    if (!b) return null;
    if (!x || x === "step") return { x: xsOf(b), lo: b.lo, hi: b.hi };
    const lo = onAxis(run, { x: xsOf(b), y: b.lo }, x, unit), hi = onAxis(run, { x: xsOf(b), y: b.hi }, x, unit);
    return { x: lo.x, lo: lo.y, hi: hi.y };
  }

  /* A step mapped onto axis x (NaN outside the steps the axis series covers): stage spans and
     marked steps follow the curves onto another axis. */
  function stepOnAxis(run, x, unit) {
    if (x === "step") return s => s;
    return s => {
      const m = mapped(run, { x: [s], y: [0] }, x, unit);
      return m && m.x.length ? m.x[0] : NaN;
    };
  }

  function runModel(run, panel, x, unit) {
    const offset = panel.colorOffset || 0;
    const lines = [];
    (panel.lines || []).forEach((name, i) => {
      const line = seriesLine(run, name, PALETTE[(offset + i) % PALETTE.length], x, unit);
      if (line) lines.push(line);
    });
    const bands = [];
    (panel.bands || []).forEach(spec => {
      const b = bandOf(run, spec.key, x, unit);
      const li = lines.findIndex(l => l.label === spec.series);
      if (!b || li < 0) return;
      const band = Object.assign(b, { color: lines[li].color, alpha: spec.faint ? 0.1 : 0.26, line: li, label: spec.label });
      bands.push(band);
      if (!spec.faint) lines[li].band = band;
    });
    const at = stepOnAxis(run, x || "step", unit || 1);
    const vlines = (panel.vlines || []).map(v => Object.assign({}, v, { x: at(v.x) })).filter(v => Number.isFinite(v.x));
    return {
      lines, bands,
      stageLabels: !!panel.stages, hlines: panel.hlines || [], vlines,
      markLabels: panel.markLabels !== false, log: !!panel.log, ymin: panel.ymin == null ? null : panel.ymin,
    };
  }

  /* A run page's view is kept in its link (the query string), so a shared link shows the same:
       x=<axis>            the x axis of every chart (step, wall, relative, epoch or a counter)
       series=<name>       the explorer's series
       zoom.<group>=lo,hi  a chart group's x range (training, reward, explore), in the axis' units
     A value the run does not have is said above the charts, never silently dropped. A page opened
     from a file reads its link but may not rewrite it. */
  function runPage(spec) {
    const first = document.querySelector(".chart-group");
    if (!first) return;
    const params = new URLSearchParams(location.search);
    whenNearOnce(first, () => withData(spec.slug, spec.data, run => {
      if (!run) return;
      const unknown = [];
      const axes = axesOf([run]);
      let x = params.get("x") || "step", lostAxis = false;
      if (!axes.some(a => a.value === x)) {
        unknown.push("the x axis “" + x + "”, which this run does not offer (it is drawn over " + (run.x || "step") + ")");
        x = "step";
        lostAxis = true;
      }
      const zoomOf = name => {
        const key = "zoom." + name;
        if (!params.has(key)) return null;
        if (lostAxis) {  // a range on another axis means nothing on this one
          unknown.push("the range " + params.get(key) + " of the " + name + " charts on that axis (not applied)");
          return null;
        }
        const z = (params.get(key) || "").split(",").map(Number);
        if (z.length === 2 && Number.isFinite(z[0]) && z[1] > z[0]) return z;
        unknown.push("the range “" + params.get(key) + "” for the " + name + " charts, which is not two increasing numbers");
        return null;
      };
      const stagesAt = () => {
        if (!run.stages || !run.stages.length) return null;
        if (x === "step") return run.stages;
        const at = stepOnAxis(run, x, unit);
        const out = run.stages.map(st => [st[0], at(st[1]), at(st[2])]).filter(st => Number.isFinite(st[1]) && Number.isFinite(st[2]));
        return out.length ? out : null;
      };
      let opts = null, unit = 1;
      const setAxis = () => {
        const o = axisOptions(x, [run]);
        unit = o.unit;
        opts = o;
        if (x === "step") { opts.xLabel = run.x || "step"; opts.xCsv = opts.xLabel; }
      };
      setAxis();
      const groups = [];  // { name, group, models() }
      const remember = () => {
        if (location.protocol === "file:") return;  // a file: page may not rewrite its URL
        const p = new URLSearchParams(location.search);
        if (x !== "step") p.set("x", x); else p.delete("x");
        for (const g of groups) {
          const key = "zoom." + g.name, r = g.group.range, [a, b] = g.group.extent();
          const drawn = g.group.panels.some(panel => panel.u);  // a link's range waits for its group to be drawn
          if (r && (!drawn || r[0] > a || r[1] < b)) p.set(key, r.map(v => String(Number(v.toPrecision(8)))).join(","));
          else p.delete(key);
          if (g.series) { const v = g.series(); if (v && v !== spec.explore) p.set("series", v); else p.delete("series"); }
        }
        const q = p.toString().replace(/%2C/g, ",");
        if ((q ? "?" + q : "") === location.search.replace(/%2C/g, ",")) return;
        history.replaceState(null, "", (q ? "?" + q : location.pathname) + location.hash);
      };
      // (the explorer's file name is a getter: copied as one, it names the series picked when saved)
      const options = (name, extra) => Object.defineProperties(
        Object.assign({ stages: stagesAt(), file: run.slug + "-" + name, onChange: remember }, opts),
        Object.getOwnPropertyDescriptors(extra || {}));
      const add = (name, root, models, extra, series) => {
        const group = new Group(root, models(), options(name, extra));
        const z = zoomOf(name);
        if (z) group.range = z;
        groups.push({ name, group, models, extra, series });
        return group;
      };
      Object.keys(spec.groups).forEach(name => {
        const root = document.getElementById("chart-" + name);
        if (!root) return;
        add(name, root, () => spec.groups[name].map((p, i) => {
          const m = runModel(run, p, x, unit);
          if ((name === "reward" || name.startsWith("coupling-")) && i > 0) m.markLabels = false;
          return m;
        }));
      });
      const explore = document.getElementById("chart-explore");
      if (explore) {
        const pick = explore.querySelector("select[data-series]");
        const plot = explore.querySelector(".chart-plot");
        const wanted = params.get("series");
        if (wanted && Array.prototype.some.call(pick.options, o => o.value === wanted)) pick.value = wanted;
        else if (wanted) unknown.push("the series “" + wanted + "”, which this run did not log (the explorer shows " + pick.value + ")");
        const model = () => {
          const line = seriesLine(run, pick.value, PALETTE[0], x, unit);
          plot.setAttribute("aria-label", pick.value + " over " + opts.xLabel);
          return [{ lines: line ? [line] : [], bands: [], hlines: [], vlines: [], stageLabels: true, log: false, ymin: null }];
        };
        const group = add("explore", explore, model, { get file() { return run.slug + "-" + pick.value; } }, () => pick.value);
        pick.addEventListener("change", () => { group.setModels(model()); remember(); });
      }
      if (axes.length > 1) axisPickers(axes, () => x, value => {
        x = value;
        setAxis();
        for (const g of groups) {
          g.group.options = options(g.name, g.extra);
          g.group.stages = g.group.options.stages;
          g.group.range = null;
          g.group.setModels(g.models());
        }
        remember();
      });
      if (unknown.length) {
        const note = el("p", "note warn chart-link", "This link asks for " + unknown.join("; and for ") + ".");
        note.setAttribute("role", "status");
        first.parentNode.insertBefore(note, first);
      }
    }));
  }

  /* One "x axis" picker in each chart group's toolbar of a run page; they move together. */
  function axisPickers(axes, current, changed) {
    const selects = [];
    document.querySelectorAll(".chart-group .chart-tools").forEach(tools => {
      const label = el("label", "chart-x", "x axis ");
      const sel = el("select");
      sel.setAttribute("data-x", "");
      axes.forEach(a => { const o = el("option", null, a.label); o.value = a.value; sel.append(o); });
      sel.value = current();
      label.append(sel);
      tools.prepend(label);
      selects.push(sel);
      sel.addEventListener("change", () => {
        selects.forEach(s => { s.value = sel.value; });
        changed(sel.value);
      });
    });
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
      const group = new Group(root, [model()], { xLabel: spec.xLabel || "step", get file() { return spec.key + "-" + pick.value; } });
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
      else if (fromHash) {  // a link's metric that this page does not have is said, not dropped
        const note = el("p", "note warn chart-link", "This link asks for the metric “" + fromHash +
          "”, which these runs did not log (or logged too little to draw); showing " + pick.value + ".");
        note.setAttribute("role", "status");
        const at = document.querySelector(".metric-pick") || root;
        at.parentNode.insertBefore(note, at);
      }
      show();
    });
  }

  // ------------------------------------------- campaign page: sample efficiency (metric vs data)

  /* Each group's line over the data size or the examples seen, with its t interval over seeds as a
     band, from the page's own JSON block (a handful of points: no data file). */
  function sampleEfficiency() {
    const node = document.getElementById("sample-efficiency-data");
    const root = document.getElementById("chart-sample-efficiency");
    if (!node || !root) return;
    const spec = JSON.parse(node.textContent);
    const lines = [], bands = [];
    spec.lines.forEach((l, i) => {
      const color = PALETTE[i % PALETTE.length];
      const line = { label: l.label, x: l.x, y: l.mean, color, width: 1.7, points: !!l.points };
      if (l.lo) {
        const band = { x: l.x, lo: l.lo, hi: l.hi, color, alpha: 0.22, line: i, label: "95% CI" };
        bands.push(band);
        line.band = band;
      }
      lines.push(line);
    });
    new Group(root, [{ lines, bands, hlines: [], vlines: [], stageLabels: false, log: false, ymin: null }],
      { xLabel: spec.xLabel, file: "sample-efficiency-" + spec.metric });
  }

  // ----------------------------------------------------------------------------- start

  function start() {
    sampleEfficiency();
    const specNode = document.getElementById("chart-spec");
    if (specNode) {
      const spec = JSON.parse(specNode.textContent);
      if (spec.kind === "conditions") conditionsPage(spec);
      else runPage(spec);
    }
  }

  // for tests and the console: the groups, the formatters, and whether a load is under way
  window.obsCharts = {
    groups: Group.all, num, linearLabels, logLabels, ema, loaded, busy: () => inFlight > 0,
    // for compare.html's overlay (overlay.js)
    Group, withData, xsOf, stepText, runColor, runStyles, groupStyles, el, axesOf, mapped, axisOptions, utc,
    // for chart-export.js
    style: { FAMILY, GRID, AXIS, MUTED, STAGE_LINE, ONSET }, uPlot: () => uPlot,
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
