/* obs chart export: a chart group (assets/charts.js) saved as PNG, SVG or CSV, in the browser, with
   no server (a blob: link clicked; from file:// too). Loaded by charts.js on the first click of an
   export button. PNG: the charts as drawn, each under its title and legend, on white. SVG: the same
   drawn again as vectors from uPlot's scales (axes with the page's tick labels, stages, bands,
   curves as drawn, thresholds, min/max marks). CSV: the data drawn, before smoothing, one column per
   curve (and band edge), one row per x. Run and series names are text nodes or CSV fields, never
   markup; a field a spreadsheet would run as a formula gets a leading '. */
(function () {
  "use strict";
  const C = window.obsCharts;
  if (!C) return;
  const { FAMILY, GRID, AXIS, MUTED, STAGE_LINE, ONSET } = C.style;
  const num = C.num;

  /* A file the reader's browser saves: a blob: link clicked (no server, works from file://). */
  function download(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  }

  /* One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A text that a
     spreadsheet would run as a formula (= + − @ first, and not a number) gets a leading ' . */
  function csvField(v) {
    if (v == null) return "";
    let t = String(v);
    if (/^[=+\-@\t\r]/.test(t) && !Number.isFinite(Number(t))) t = "'" + t;
    return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }

  function csvText(rows) { return rows.map(r => r.map(csvField).join(",")).join("\r\n") + "\r\n"; }

  function safeName(text) { return String(text).replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "") || "chart"; }

  /* The group's data as drawn, before smoothing: one column per shown curve (and its band's edges),
     one row per x any of them has; empty where a curve has no point there. */
  function groupCsv(group) {
    const cols = [], xsAll = new Set();
    for (const p of group.panels) {
      const pre = group.panels.length > 1 && p.model.title ? p.model.title + " · " : "";
      p.model.lines.forEach((line, i) => {
        if (p.hidden.has(i)) return;
        cols.push({ name: pre + line.label, x: line.x, y: line.y });
        if (line.steps) cols.push({ name: pre + line.label + " · step", x: line.x, y: line.steps });
        if (line.band) {
          cols.push({ name: pre + line.label + " · " + line.band.label + " low", x: line.band.x, y: line.band.lo });
          cols.push({ name: pre + line.label + " · " + line.band.label + " high", x: line.band.x, y: line.band.hi });
        }
      });
    }
    for (const c of cols) for (const x of c.x) xsAll.add(x);
    const xs = Array.from(xsAll).sort((a, b) => a - b);
    const rows = [[group.options.xCsv || group.options.xLabel || "step", ...cols.map(c => c.name)]];
    const maps = cols.map(c => { const m = new Map(); c.x.forEach((x, i) => m.set(x, c.y[i])); return m; });
    for (const x of xs) rows.push([x, ...maps.map(m => m.has(x) ? m.get(x) : "")]);
    return csvText(rows);
  }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k in attrs) if (attrs[k] != null) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const r1 = v => Math.round(v * 10) / 10;
  const HEAD = 24;  // px above each panel's plot for its title and legend

  /* The group as an SVG drawing: per panel its title and legend, axes with the page's tick labels,
     stages, bands, curves (smoothed ones as drawn), thresholds and the min/max marks. */
  function groupSvg(group) {
    const live = group.panels.filter(p => p.u);
    const width = Math.max(...live.map(p => p.u.width));
    const height = live.reduce((h, p) => h + HEAD + p.u.height, 0);
    const svg = svgEl("svg", { xmlns: SVG_NS, width, height, viewBox: "0 0 " + width + " " + height, "font-family": FAMILY, "font-size": 11 });
    svg.append(svgEl("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
    let top = 0;
    live.forEach((p, k) => {
      const u = p.u, px = (C.uPlot().pxRatio) || 1, g = svgEl("g", { transform: "translate(0," + top + ")" });
      const L = u.bbox.left / px, T = HEAD + u.bbox.top / px, W = u.bbox.width / px, H = u.bbox.height / px;
      let lx = 4;
      g.append(svgEl("text", { x: lx, y: 15, "font-weight": 600, fill: "#111827" }, p.model.title || ""));
      lx += 10 + 7 * (p.model.title || "").length;
      p.model.lines.forEach((line, i) => {
        if (p.hidden.has(i) || p.model.lines.length < 2) return;
        g.append(svgEl("rect", { x: lx, y: 9, width: 14, height: 4, fill: line.color }));
        g.append(svgEl("text", { x: lx + 18, y: 15, fill: "#374151" }, line.label));
        lx += 30 + 6.5 * line.label.length;
      });
      const clipId = "plot-" + k;
      const clip = svgEl("clipPath", { id: clipId });
      clip.append(svgEl("rect", { x: L, y: T, width: W, height: H }));
      g.append(clip);
      const X = v => L + u.valToPos(v, "x"), Y = v => T + u.valToPos(v, "y");
      // axes: grid lines and the tick labels uPlot drew
      u.axes.forEach((ax, a) => {
        const splits = ax._splits || [], values = ax._values || [];
        splits.forEach((v, i) => {
          if (a === 0) {
            const x = r1(X(v));
            g.append(svgEl("line", { x1: x, y1: T, x2: x, y2: T + H, stroke: GRID }));
            g.append(svgEl("text", { x, y: T + H + 14, "text-anchor": "middle", fill: MUTED }, values[i] || ""));
          } else {
            const y = r1(Y(v));
            g.append(svgEl("line", { x1: L, y1: y, x2: L + W, y2: y, stroke: GRID }));
            g.append(svgEl("text", { x: L - 6, y: y + 4, "text-anchor": "end", fill: MUTED }, values[i] || ""));
          }
        });
      });
      const plot = svgEl("g", { "clip-path": "url(#" + clipId + ")" });
      (group.stages || []).forEach((st, i) => {
        const x0 = X(st[1]);
        if (i > 0) plot.append(svgEl("line", { x1: r1(x0), y1: T, x2: r1(x0), y2: T + H, stroke: STAGE_LINE, "stroke-dasharray": "4 3" }));
        if (p.model.stageLabels) plot.append(svgEl("text", { x: r1(Math.max(L, x0) + 4), y: T + 12, fill: MUTED, "font-size": 10.5 }, st[0]));
      });
      const xs = u.data[0];
      (p.bandStyles || []).forEach(b => {
        const [hiS, loS] = b.series;
        if (!u.series[hiS].show) return;
        const up = [], down = [];
        for (let i = 0; i < xs.length; i++) {
          const h = u.data[hiS][i], l = u.data[loS][i];
          if (h == null || l == null) continue;
          up.push(r1(X(xs[i])) + "," + r1(Y(h)));
          down.push(r1(X(xs[i])) + "," + r1(Y(l)));
        }
        if (up.length) plot.append(svgEl("polygon", { points: up.concat(down.reverse()).join(" "), fill: b.fill }));
      });
      (p.styles || []).forEach((st, s) => {
        if (s === 0 || !u.series[s] || !u.series[s].show || st.stroke === "transparent") return;
        let d = "";
        for (let i = 0; i < xs.length; i++) {
          const v = u.data[s][i];
          if (v == null || !Number.isFinite(v)) continue;
          d += (d ? "L" : "M") + r1(X(xs[i])) + "," + r1(Y(v));
        }
        if (d) plot.append(svgEl("path", { d, fill: "none", stroke: st.stroke, "stroke-width": st.width || 1.5,
          "stroke-dasharray": st.dash ? st.dash.join(" ") : null, "stroke-linejoin": "round" }));
      });
      for (const h of p.model.hlines || []) {
        const y = r1(Y(h.y));
        plot.append(svgEl("line", { x1: L, y1: y, x2: L + W, y2: y, stroke: MUTED, "stroke-dasharray": "2 3" }));
        plot.append(svgEl("text", { x: L + 4, y: y - 2, fill: MUTED }, h.label + " " + num(h.y)));
      }
      for (const v of p.model.vlines || []) {
        const x = r1(X(v.x));
        plot.append(svgEl("line", { x1: x, y1: T, x2: x, y2: T + H, stroke: ONSET, "stroke-dasharray": "5 3" }));
        plot.append(svgEl("text", { x: x + 4, y: T + 12, fill: ONSET }, v.label));
      }
      for (const e of p.extremes || []) {
        const line = p.model.lines.find(l => l.label === e.line);
        plot.append(svgEl("circle", { cx: r1(X(e.x)), cy: r1(Y(e.y)), r: 3.5, fill: line ? line.color : MUTED }));
        const anchor = { left: "start", right: "end" }[e.align] || "middle";
        const dx = e.align === "left" ? -3 : e.align === "right" ? 3 : 0;
        plot.append(svgEl("text", { x: r1(X(e.x) + dx), y: r1(Y(e.y) + e.dy + (e.above ? -1 : 9)), "text-anchor": anchor,
          fill: line ? line.color : MUTED, "font-size": 10 }, (e.kind === "max" ? "▲ " : "▼ ") + num(e.y)));
      }
      g.append(plot);
      g.append(svgEl("rect", { x: L, y: T, width: W, height: H, fill: "none", stroke: AXIS }));
      svg.append(g);
      top += HEAD + u.height;
    });
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg) + "\n";
  }

  /* The group as a PNG at the screen's resolution: per panel its title and legend above the chart
     as drawn (uPlot's canvas, axes included), on white. */
  function groupPng(group, done) {
    const live = group.panels.filter(p => p.u), px = (C.uPlot().pxRatio) || 1;
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(...live.map(p => p.u.ctx.canvas.width));
    canvas.height = live.reduce((h, p) => h + HEAD * px + p.u.ctx.canvas.height, 0);
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    let top = 0;
    for (const p of live) {
      ctx.font = "600 " + (12 * px) + "px " + FAMILY;
      ctx.textBaseline = "middle";
      ctx.fillStyle = "#111827";
      const title = p.model.title || "";
      ctx.fillText(title, 4 * px, top + 12 * px);
      let x = 4 * px + ctx.measureText(title).width + 12 * px;
      ctx.font = (11 * px) + "px " + FAMILY;
      p.model.lines.forEach((line, i) => {
        if (p.hidden.has(i) || p.model.lines.length < 2) return;
        ctx.fillStyle = line.color;
        ctx.fillRect(x, top + 10 * px, 14 * px, 4 * px);
        ctx.fillStyle = "#374151";
        ctx.fillText(line.label, x + 18 * px, top + 12 * px);
        x += 30 * px + ctx.measureText(line.label).width;
      });
      top += HEAD * px;
      ctx.drawImage(p.u.ctx.canvas, 0, top);
      top += p.u.ctx.canvas.height;
    }
    canvas.toBlob(done, "image/png");
  }

  function exportGroup(group, kind) {
    if (!group.panels.some(p => p.u)) return;
    const name = safeName(group.options.file || group.root.id || "chart");
    if (kind === "csv") download(new Blob([groupCsv(group)], { type: "text/csv" }), name + ".csv");
    else if (kind === "svg") download(new Blob([groupSvg(group)], { type: "image/svg+xml" }), name + ".svg");
    else groupPng(group, blob => { if (blob) download(blob, name + ".png"); });
  }

  window.obsChartExport = exportGroup;
})();
