/* obs: the reward chart of a learning key's page, drawn with the vendored uPlot from the page's JSON
   block (<script type="application/json">: data, never code). Each dot is one session in time order;
   the baseline and recent windows are shaded and their means drawn as lines, as in the static SVG
   this replaces. Text is written with textContent only. */
(function () {
  "use strict";
  const MINUS = "\u2212";
  function fmt(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "\u2014";
    const text = Math.abs(v) >= 1000 ? v.toLocaleString("en-US", { maximumFractionDigits: 0 }) : String(Number(v.toPrecision(4)));
    return text.replace("-", MINUS);
  }
  function windowSeries(data, win) {
    return data.x.map((x) => (win && x >= win.from && x <= win.to ? win.mean : null));
  }
  function draw(box) {
    const block = document.getElementById(box.getAttribute("data-learning-chart"));
    if (!block || !window.uPlot) return;
    const data = JSON.parse(block.textContent);
    const readout = box.parentNode.querySelector("[data-learning-readout]");
    const shades = [["baseline", data.baseline, "rgba(95,107,122,0.13)"], ["recent", data.recent, "rgba(245,200,90,0.30)"]];
    const opts = {
      width: Math.max(200, box.clientWidth),
      height: Math.max(120, box.clientHeight - 8),
      legend: { show: false },
      cursor: { points: { size: 7 } },
      scales: { x: { time: false } },
      axes: [
        { label: "session (time order)", size: 40, labelSize: 16, font: "11px sans-serif", labelFont: "11px sans-serif" },
        { label: "reward", size: 48, labelSize: 16, font: "11px sans-serif", labelFont: "11px sans-serif", values: (u, splits) => splits.map(fmt) },
      ],
      series: [
        { label: "session" },
        { label: "reward", stroke: "rgba(47,93,158,0.45)", width: 1, points: { show: true, size: 4, fill: "#2f5d9e", stroke: "#2f5d9e" } },
        { label: "baseline mean", stroke: "#5f6b7a", width: 2, points: { show: false } },
        { label: "recent mean", stroke: "#925f00", width: 2, points: { show: false } },
      ],
      hooks: {
        drawClear: [(u) => {
          const ctx = u.ctx;
          for (const [, win, color] of shades) {
            if (!win) continue;
            const x0 = u.valToPos(win.from - 0.5, "x", true), x1 = u.valToPos(win.to + 0.5, "x", true);
            const left = Math.max(u.bbox.left, x0), right = Math.min(u.bbox.left + u.bbox.width, x1);
            ctx.fillStyle = color;
            ctx.fillRect(left, u.bbox.top, Math.max(0, right - left), u.bbox.height);
          }
        }],
        setCursor: [(u) => {
          const i = u.cursor.idx;
          if (!readout || i === null || i === undefined) return;
          const at = data.at[i] ? " \u00b7 " + data.at[i] : "";
          readout.textContent = "session " + data.x[i] + " (" + data.ids[i] + ")" + at + ": reward " + fmt(data.y[i]);
        }],
      },
    };
    box.textContent = "";
    const plot = new window.uPlot(opts, [data.x, data.y, windowSeries(data, data.baseline), windowSeries(data, data.recent)], box);
    let timer = null;
    window.addEventListener("resize", () => {
      clearTimeout(timer);
      timer = setTimeout(() => plot.setSize({ width: Math.max(200, box.clientWidth), height: Math.max(120, box.clientHeight - 8) }), 80);
    });
  }
  function start() { document.querySelectorAll("[data-learning-chart]").forEach(draw); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
