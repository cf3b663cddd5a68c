/* obs compare.html: the curves of any runs, as small multiples (one chart per picked metric).

   Drawn with charts.js (window.obsCharts: its chart groups, data loading and colours). Each run's
   curves come from its curves.js, loaded as a script (fetch() of a local file is refused from
   file://). What a reader can set, all kept in the page's URL so a link shows the same view:
     runs=a,b        the picked runs (page slugs)         metrics=loss,grad_norm  one chart each
     x=step|wall|relative|epoch|<counter>                 the x axis (a counter: tokens or examples seen)
     group=<key>     one mean curve per value of a config key, band=sd|ci its band
     smooth=0.6      EMA weight     zoom=lo,hi   x range     log=m1,m2   charts with log y
     robust=1        y range ignores outliers               marks=1     min/max of each curve marked
   A value in a link this site does not have is said above the charts, never silently dropped; the
   first drawing waits for the picked runs' data, so a link's metric is not replaced by a default.
   Everything from a run is written with textContent. */
(function () {
  "use strict";
  const C = window.obsCharts;
  const root = document.getElementById("overlay");
  if (!C || !root) return;
  const el = C.el;

  const LOSS_FIRST = ["loss", "train_loss", "train/loss", "eval_loss", "reward_mean", "reward"];
  const MAX_GRID = 600;  // points of a group's mean curve
  const BAND_LABEL = { sd: "± sd", ci: "95% CI" };

  /* Student's t 0.975 quantile for 1..30 degrees of freedom (scipy.stats.t.ppf(0.975, df)); above 30
     the Cornish–Fisher expansion around the normal quantile (error below 1e-6 there). */
  const T975 = [NaN, 12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
    2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830, 2.160368656,
    2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
    2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553, 2.055529439, 2.051830516,
    2.048407142, 2.045229642, 2.042272456];
  function t975(df) {
    if (df < T975.length) return T975[df];
    const z = 1.959963984540054, z2 = z * z;
    return z + (z2 * z + z) / (4 * df) + (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / (96 * df * df) +
      (3 * z2 * z2 * z2 * z + 19 * z2 * z2 * z + 17 * z2 * z - 15 * z) / (384 * df * df * df);
  }

  // ------------------------------------------------------------------------------ the page

  (window.obsCompareData || Promise.resolve(null)).then(start);

  function start(config) {
    config = config || { keys: [], values: [], runs: [] };
    const list = root.querySelector("[data-overlay-runs]");
    /* A site of very many runs lists no box per run in the page: the list is made here from the page's
       data, the picked runs first, then the runs the filter matches, PICK_PAGE at a time. */
    const pagedList = list.hasAttribute("data-paged");
    const PICK_PAGE = 50, MAX_PICKS = 100;
    const pickSet = new Set();
    let listPage = 0;
    const boxes = Array.from(list.querySelectorAll("input[type=checkbox]"));
    const runMeta = {};
    boxes.forEach(b => { runMeta[b.value] = { slug: b.value, id: b.getAttribute("data-id") || b.value }; });
    if (pagedList) config.runs.forEach(r => { runMeta[r.slug] = { slug: r.slug, id: r.id, nocurves: r.curves === false }; });
    const metricList = root.querySelector("[data-overlay-metrics]");
    const metricCount = root.querySelector("[data-overlay-metric-count]");
    const count = root.querySelector("[data-overlay-count]");
    const status = root.querySelector("[data-overlay-status]");
    const linkNote = root.querySelector("[data-overlay-link]");
    const filter = root.querySelector("input[data-overlay-filter]");
    const xSel = root.querySelector("select[data-overlay-x]");
    const groupSel = root.querySelector("select[data-overlay-group]");
    const bandSel = root.querySelector("select[data-overlay-band]");
    const robustBox = root.querySelector("input[data-overlay-robust]");
    const marksBox = root.querySelector("input[data-overlay-marks]");
    const tbody = root.querySelector("table[data-overlay-finals] tbody");
    const groupRoot = root.querySelector(".chart-group");
    const base = root.getAttribute("data-root") || "";
    const configBySlug = {};
    config.runs.forEach(r => { configBySlug[r.slug] = r; });

    // ----------------------------------------------------------------------- state and the URL

    const params = new URLSearchParams(location.search);
    const unknown = [];  // what the link asked for that this site or these runs do not have
    const list_ = name => (params.get(name) || "").split(",").map(s => s.trim()).filter(Boolean);
    const linkRuns = list_("runs");
    linkRuns.filter(s => !runMeta[s]).forEach(s => unknown.push("run “" + s + "” is not on this site"));
    let wanted = linkRuns.filter(s => runMeta[s]);
    if (!params.has("runs")) {
      wanted = [document.getElementById("compare-a"), document.getElementById("compare-b")].filter(Boolean).map(s => s.value);
      if (pagedList) wanted = wanted.map(v => runMeta[v] ? v : (config.runs.find(r => r.id === v) || {}).slug).filter(Boolean);
    }
    if (pagedList) wanted.forEach(s => {
      if (runMeta[s].nocurves) unknown.push("run “" + runMeta[s].id + "” logged no curves");
      else pickSet.add(s);
    });
    boxes.forEach(b => {
      b.checked = wanted.indexOf(b.value) >= 0;
      if (b.checked && b.disabled) unknown.push("run “" + runMeta[b.value].id + "” logged no curves");
      if (b.disabled) b.checked = false;
    });
    const state = {
      metrics: params.has("metrics") ? list_("metrics") : list_("metric"),
      x: params.get("x") || "step",
      group: params.get("group") || "",
      band: params.get("band") || "ci",
      smooth: Number(params.get("smooth")) || 0,
      zoom: list_("zoom").map(Number),
      log: list_("log"),
      robust: params.get("robust") === "1",
      marks: params.get("marks") === "1",
    };
    if (!(state.smooth >= 0 && state.smooth < 1)) { unknown.push("smoothing “" + params.get("smooth") + "” is not between 0 and 0.99"); state.smooth = 0; }
    if (!BAND_LABEL[state.band]) { unknown.push("band “" + state.band + "” is neither sd nor ci"); state.band = "ci"; }
    if (state.zoom.length !== 2 || !(state.zoom[1] > state.zoom[0])) {
      if (params.has("zoom")) unknown.push("zoom “" + params.get("zoom") + "” is not two increasing numbers");
      state.zoom = null;
    }
    let linkChecked = false;  // the link's metrics, axis and key are checked once the runs' data is here
    let group = null;

    function picked() {
      if (pagedList) return config.runs.filter(r => pickSet.has(r.slug)).map(r => r.slug);
      return boxes.filter(b => b.checked).map(b => b.value);
    }

    /* The paged list: the picked runs (boxes ticked), then a page of the runs the filter matches. */
    function renderList() {
      const text = filter ? filter.value.trim().toLowerCase() : "";
      const rest = config.runs.filter(r => !pickSet.has(r.slug) &&
        (!text || (r.id + " " + (r.spec || "")).toLowerCase().indexOf(text) >= 0));
      const pages = Math.max(1, Math.ceil(rest.length / PICK_PAGE));
      listPage = Math.min(Math.max(0, listPage), pages - 1);
      const item = r => {
        const li = el("li"), label = el("label"), box = el("input");
        box.type = "checkbox";
        box.value = r.slug;
        box.checked = pickSet.has(r.slug);
        box.disabled = r.curves === false;
        box.setAttribute("data-id", r.id);
        label.append(box, el("span", null, r.id + (r.curves === false ? " (no logged curves)" : "")));
        li.append(label);
        return li;
      };
      const items = config.runs.filter(r => pickSet.has(r.slug)).map(item);
      const where = el("li", "spec", rest.length + (text ? " runs match" : " runs") +
        (rest.length > PICK_PAGE ? " · " + (listPage * PICK_PAGE + 1) + "–" + Math.min(rest.length, (listPage + 1) * PICK_PAGE) : ""));
      items.push(where);
      rest.slice(listPage * PICK_PAGE, (listPage + 1) * PICK_PAGE).forEach(r => items.push(item(r)));
      if (pages > 1) {
        const nav = el("li", "pager");
        const go = (label, page, off) => {
          const b = el("button", null, label);
          b.type = "button";
          b.disabled = off;
          b.addEventListener("click", () => { listPage = page; renderList(); });
          nav.append(b);
        };
        go("← Previous", listPage - 1, listPage === 0);
        nav.append(el("span", "pager-where", "page " + (listPage + 1) + " of " + pages));
        go("Next →", listPage + 1, listPage >= pages - 1);
        items.push(nav);
      }
      list.replaceChildren(...items);
    }

    /* Pick exactly these runs (the runs table's "Overlay these runs"), at most MAX_PICKS of them. */
    function pickOnly(slugs) {
      pickSet.clear();
      const usable = slugs.filter(s => runMeta[s] && !runMeta[s].nocurves);
      usable.slice(0, MAX_PICKS).forEach(s => pickSet.add(s));
      if (usable.length > MAX_PICKS) {
        linkNote.textContent = "Overlaying the first " + MAX_PICKS + " of the " + usable.length + " runs with curves (one data file each).";
        linkNote.hidden = false;
      }
      renderList();
      load(true);
    }

    function remember() {
      if (location.protocol === "file:") return;  // a file: page may not rewrite its URL
      const p = new URLSearchParams(location.search);
      p.delete("metric");
      p.set("runs", picked().join(","));
      const set = (k, v, dflt) => { if (v && v !== dflt) p.set(k, v); else p.delete(k); };
      set("metrics", state.metrics.join(","));
      set("x", state.x, "step");
      set("group", state.group);
      set("band", state.group ? state.band : "", "ci");
      set("smooth", state.smooth > 0 ? String(state.smooth) : "");
      set("zoom", state.zoom ? state.zoom.map(v => String(Number(v.toPrecision(8)))).join(",") : "");
      set("log", state.log.filter(m => state.metrics.indexOf(m) >= 0).join(","));
      set("robust", state.robust ? "1" : "");
      set("marks", state.marks ? "1" : "");
      history.replaceState(null, "", "?" + p.toString().replace(/%2C/g, ",") + location.hash);
    }

    // --------------------------------------------------------------------------- x axes
    // (charts.js: the axes a run offers and a series mapped onto one, the same as on a run page)

    const axesOf = C.axesOf, mapped = C.mapped, utc = C.utc;
    const axisOptions = runs => C.axisOptions(state.x, runs);

    // --------------------------------------------------------------------------- grouping

    const PSEUDO = ["spec", "arm", "condition", "seed"];  // what a run's entry carries beside its config
    function configValue(slug, key) {
      const r = configBySlug[slug];
      if (PSEUDO.indexOf(key) >= 0) return r && r[key] != null ? String(r[key]) : "not set";
      const k = config.keys.indexOf(key);
      if (!r || k < 0 || r.cells[k] === -1) return "not set";
      return config.values[k][r.cells[k]];
    }

    /* Runs of one group on one grid: every x any of them logged within the span all of them cover
       (at most MAX_GRID, evenly thinned), each run linearly interpolated there; the mean, the sample
       sd and the 95% t interval of the mean at each grid point. */
    function groupCurve(series) {
      const lo = Math.max(...series.map(s => s.x[0])), hi = Math.min(...series.map(s => s.x[s.x.length - 1]));
      if (!(hi >= lo)) return null;
      const all = new Set();
      series.forEach(s => s.x.forEach(x => { if (x >= lo && x <= hi) all.add(x); }));
      let grid = Array.from(all).sort((a, b) => a - b);
      if (grid.length > MAX_GRID) {
        const step = (grid.length - 1) / (MAX_GRID - 1);
        grid = Array.from({ length: MAX_GRID }, (_, i) => grid[Math.round(i * step)]);
      }
      const at = series.map(s => {
        let j = 0;
        return grid.map(x => {
          while (j + 1 < s.x.length && s.x[j + 1] <= x) j += 1;
          if (s.x[j] === x || j + 1 >= s.x.length) return s.y[j];
          return s.y[j] + (s.y[j + 1] - s.y[j]) * (x - s.x[j]) / (s.x[j + 1] - s.x[j]);
        });
      });
      const n = series.length, mean = [], sd = [];
      grid.forEach((_, i) => {
        let sum = 0;
        for (const a of at) sum += a[i];
        const m = sum / n;
        let ss = 0;
        for (const a of at) ss += (a[i] - m) * (a[i] - m);
        mean.push(m);
        sd.push(n > 1 ? Math.sqrt(ss / (n - 1)) : NaN);
      });
      return { x: grid, mean, sd, n };
    }

    // ------------------------------------------------------------------------------ drawing

    function loadedRuns(slugs) { return slugs.map(s => C.loaded[s]).filter(Boolean); }

    function metricNames(runs) {
      const names = new Set();
      runs.forEach(r => Object.keys(r.series).forEach(n => names.add(n)));
      return Array.from(names).sort();
    }

    function fillMetrics(names) {
      const chosen = new Set(state.metrics);
      metricList.replaceChildren(...names.map(n => {
        const li = el("li"), label = el("label"), box = el("input");
        box.type = "checkbox";
        box.value = n;
        box.checked = chosen.has(n);
        label.append(box, el("span", null, n));
        li.append(label);
        return li;
      }));
      metricCount.textContent = state.metrics.length ? state.metrics.join(", ") : "none";
    }

    function fillAxes(runs) {
      const axes = axesOf(runs);
      xSel.replaceChildren(...axes.map(a => { const o = el("option", null, a.label); o.value = a.value; return o; }));
      xSel.value = state.x;
    }

    function fillKeys(slugs) {
      const keys = PSEUDO.concat(config.keys).filter(k => {
        const seen = new Set(slugs.map(s => configValue(s, k)));
        return seen.size > 1 || k === state.group;
      });
      const none = el("option", null, "none");
      none.value = "";
      groupSel.replaceChildren(none, ...keys.map(k => { const o = el("option", null, k); o.value = k; return o; }));
      groupSel.value = state.group;
      bandSel.value = state.band;
      bandSel.disabled = !state.group;
    }

    /* Checks the link's metrics, axis and key against what the picked runs have (once, when their
       data is first here), and says what it could not use. */
    function checkLink(runs) {
      if (linkChecked) return;
      linkChecked = true;
      const names = new Set(metricNames(runs));
      const missing = state.metrics.filter(m => !names.has(m));
      missing.forEach(m => unknown.push("metric “" + m + "” is not logged by any picked run"));
      state.metrics = state.metrics.filter(m => names.has(m));
      if (!axesOf(runs).some(a => a.value === state.x)) {
        unknown.push("x axis “" + state.x + "” is not logged by any picked run; drawn over steps");
        state.x = "step";
      }
      if (state.group && PSEUDO.indexOf(state.group) < 0 && config.keys.indexOf(state.group) < 0) {
        unknown.push("group key “" + state.group + "” is set by no run; one curve per run");
        state.group = "";
      }
      if (unknown.length) {
        linkNote.textContent = "This link asked for what is not here: " + unknown.join("; ") + ".";
        linkNote.hidden = false;
      }
    }

    function defaultMetric(runs) {
      const sorted = metricNames(runs);
      const shared = sorted.filter(n => runs.every(r => r.series[n]));
      return LOSS_FIRST.find(n => shared.indexOf(n) >= 0) || shared[0] || sorted[0];
    }

    function models(runs) {
      const opts = axisOptions(runs), unit = opts.unit;
      const styles = C.runStyles(runs.map(r => r.id));
      const out = [], notes = [];
      state.metrics.forEach(metric => {
        const lines = [], bands = [];
        const series = [];  // [run, mapped]
        runs.forEach((r, i) => {
          const entry = r.series[metric];
          if (!entry) return;
          const m = mapped(r, entry, state.x, unit);
          if (!m || !m.x.length) return;
          series.push([r, m, styles[i]]);
        });
        if (!state.group) {
          series.forEach(([r, m, st]) => lines.push({
            label: r.id, run: r.slug, metric, x: m.x, y: m.y, steps: m.steps, color: st.color, dash: st.dash,
          }));
        } else {
          const byValue = new Map();
          series.forEach(([r, m]) => {
            const v = configValue(r.slug, state.group);
            if (!byValue.has(v)) byValue.set(v, []);
            byValue.get(v).push(m);
          });
          const values = Array.from(byValue.keys()).sort();
          const gstyles = C.groupStyles(values.map(v => state.group + "=" + v));
          values.forEach((v, gi) => {
            const g = groupCurve(byValue.get(v));
            if (!g) { notes.push(state.group + "=" + v + " (" + metric + "): its runs share no span of x"); return; }
            const color = gstyles[gi].color;
            const line = { label: state.group + "=" + v + " · n=" + g.n, x: g.x, y: g.mean, color, dash: gstyles[gi].dash, width: 1.8, group: v, n: g.n };
            if (g.n > 1) {
              const half = state.band === "sd" ? g.sd : g.sd.map(s => t975(g.n - 1) * s / Math.sqrt(g.n));
              const band = { x: g.x, lo: g.mean.map((m, i) => m - half[i]), hi: g.mean.map((m, i) => m + half[i]),
                color, alpha: 0.18, line: lines.length, label: BAND_LABEL[state.band] };
              bands.push(band);
              line.band = band;
            }
            lines.push(line);
          });
        }
        out.push({
          title: metric, desc: metric + " of each picked run over " + opts.xLabel, tall: state.metrics.length === 1,
          lines, bands, hlines: [], vlines: [], stageLabels: false, log: state.log.indexOf(metric) >= 0, ymin: null,
        });
      });
      return { models: out, opts, notes, drawn: out.map(m => m.lines.length) };
    }

    function render() {
      const slugs = picked();
      count.textContent = String(slugs.length);
      const runs = loadedRuns(slugs);
      const failed = slugs.filter(s => C.loaded[s] === undefined);
      checkLink(runs);
      const names = metricNames(runs);
      if (!state.metrics.length) { const d = defaultMetric(runs); if (d) state.metrics = [d]; }
      fillMetrics(names);
      fillAxes(runs);
      if (!axesOf(runs).some(a => a.value === state.x)) { state.x = "step"; xSel.value = "step"; }
      fillKeys(slugs);
      robustBox.checked = state.robust;
      marksBox.checked = state.marks;
      const built = models(runs);
      const options = Object.assign({ panels: true, robust: state.robust, marks: state.marks, onChange: viewChanged,
        file: "compare-" + state.metrics.join("-") }, built.opts);
      if (!group) {
        group = new C.Group(groupRoot, built.models, options);
        if (state.zoom) group.range = state.zoom.slice();
        if (params.has("smooth")) group.setSmoothing(state.smooth);  // else the reader's last smoothing
      } else {
        group.options = options;  // whole: what one x axis set (a time scale, a formatter) goes with it
        group.setModels(built.models, true);
      }
      finals(slugs);
      const what = state.group ? "grouped by " + state.group + " (mean and " + BAND_LABEL[state.band] + " of each group's runs)" : "";
      status.textContent = slugs.length < 1 ? "Pick runs to overlay." :
        (state.metrics.map((m, i) => built.drawn[i] + (state.group ? (built.drawn[i] === 1 ? " group" : " groups") : " of " + slugs.length + " picked runs") + " drew " + m).join("; ") +
         (state.x !== "step" ? " over " + built.opts.xLabel : "") + (state.x === "wall" ? wallStart(built.models) : "") +
         (what ? "; " + what : "") +
         (failed.length ? "; " + failed.length + " could not be read" : "") +
         (built.notes.length ? "; " + built.notes.join("; ") : "") + ".");
    }

    function wallStart(models) {
      let lo = Infinity;
      models.forEach(m => m.lines.forEach(l => { if (l.x.length) lo = Math.min(lo, l.x[0]); }));
      return Number.isFinite(lo) ? " (UTC, from " + utc(lo) + ")" : "";
    }

    /* A change the chart group made itself (zoom, smoothing, log y): kept in the URL. */
    function viewChanged(g) {
      if (!ready) return;
      const before = JSON.stringify([state.smooth, state.zoom, state.log]);
      state.smooth = g.smoothing;
      const [a, b] = g.extent();
      state.zoom = g.range && (g.range[0] > a || g.range[1] < b) ? g.range.slice() : null;
      state.log = g.panels.filter(p => p.log).map(p => p.model.title);
      if (JSON.stringify([state.smooth, state.zoom, state.log]) !== before) remember();
    }
    let ready = false;  // the first drawing is done: from then on, changes are the reader's

    function finals(slugs) {
      const rows = document.createDocumentFragment();
      const styles = C.runStyles(slugs.map(s => (runMeta[s] || { id: s }).id));
      slugs.forEach((slug, i) => {
        const r = C.loaded[slug], meta = runMeta[slug];
        state.metrics.forEach(metric => {
          const tr = el("tr");
          const th = el("th");
          th.scope = "row";
          const a = el("a", null, meta ? meta.id : slug);
          a.href = base + "runs/" + encodeURIComponent(slug) + "/index.html";
          const sw = el("span", "swatch");
          sw.style.background = styles[i].color;
          th.append(sw, a);
          tr.append(th);
          const mt = el("td", "kv", metric);
          mt.setAttribute("data-label", "Metric");
          tr.append(mt);
          const s = r && r.series[metric];
          if (!s) {
            const td = el("td", "note", r ? "not logged" : "could not be read");
            td.colSpan = 6;
            tr.append(td);
          } else {
            const xs = C.xsOf(s), last = xs.length - 1;
            let lo = Infinity, hi = -Infinity;
            for (const v of s.y) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
            const fin = r.finals ? r.finals[metric] : undefined;
            const labels = ["Last step", "Last value", "Final-window mean", "Min", "Max", "Points logged"];  // for a phone's reflowed rows
            const raw = [xs[last], s.y[last], fin, lo, hi, s.n];
            [C.stepText(xs[last]), C.num(s.y[last]), fin === undefined ? "—" : C.num(fin), C.num(lo), C.num(hi), C.num(s.n)].forEach((t, k) => {
              const td = el("td", "num", t);
              td.setAttribute("data-label", labels[k]);
              if (raw[k] !== undefined) td.setAttribute("data-value", String(raw[k]));  // exact, for the CSV export
              tr.append(td);
            });
          }
          rows.append(tr);
        });
      });
      tbody.replaceChildren(rows);
    }

    /* Loads the picked runs' data files; draws once every one has answered (loaded or failed). */
    function load(byReader) {
      const slugs = picked();
      const left = slugs.filter(s => !C.loaded[s]);
      let waiting = left.length;
      const done = () => {
        render();
        if (byReader) remember();
        ready = true;
      };
      if (!waiting) { done(); return; }
      status.textContent = "Loading the picked runs' curves…";
      left.forEach(slug => {
        C.withData(slug, base + "runs/" + encodeURIComponent(slug) + "/curves.js", () => {
          waiting -= 1;
          if (waiting === 0) done();
        });
      });
    }

    function changed() { render(); remember(); }

    boxes.forEach(b => b.addEventListener("change", () => load(true)));
    if (pagedList) {
      list.addEventListener("change", e => {
        const box = e.target;
        if (!box || box.type !== "checkbox") return;
        if (box.checked) pickSet.add(box.value); else pickSet.delete(box.value);
        renderList();
        load(true);
      });
      window.obsOverlayPick = pickOnly;
    }
    metricList.addEventListener("change", () => {
      state.metrics = Array.from(metricList.querySelectorAll("input:checked")).map(b => b.value);
      changed();
    });
    xSel.addEventListener("change", () => { state.x = xSel.value; state.zoom = null; if (group) group.range = null; changed(); });
    groupSel.addEventListener("change", () => { state.group = groupSel.value; changed(); });
    bandSel.addEventListener("change", () => { state.band = bandSel.value; changed(); });
    robustBox.addEventListener("change", () => { state.robust = robustBox.checked; changed(); });
    marksBox.addEventListener("change", () => { state.marks = marksBox.checked; changed(); });
    if (filter && pagedList) filter.addEventListener("input", () => { listPage = 0; renderList(); });
    else if (filter) {
      filter.addEventListener("input", () => {
        const text = filter.value.trim().toLowerCase();
        boxes.forEach(b => {
          const li = b.closest("li");
          li.hidden = !!text && li.textContent.toLowerCase().indexOf(text) < 0;
        });
      });
    }
    const clear = root.querySelector("[data-overlay-clear]");
    if (clear) clear.addEventListener("click", () => { boxes.forEach(b => { b.checked = false; }); pickSet.clear(); if (pagedList) renderList(); load(true); });
    window.obsOverlay = { t975, state };
    if (pagedList) renderList();
    load(false);
  }
})();
