/* obs: the generations viewer of a run page. Every completion a run sampled while it trained (an
   emergence log's generations.jsonl), filtered by step range and reward, searched by text, and two
   steps side by side.

   Data: the page embeds a small description (<script type="application/json" id="gen-spec">); the
   generations are in data files beside the page (gens-rows-<k>.js: step, reward, line; gens-text-<k>.js:
   prompt, completion), loaded with obs.js's DataFiles, the case browser's loader. The rows files are
   small (100,000 generations are five of them) and read whole; text files are read only as far as a
   search or the shown generations need. Everything from a run is put into the page with textContent,
   never as markup. The filter lives in the URL (#generations-viewer?from=100&q=...). */
(function () {
  "use strict";

  var SHOW = 10; // generations added per "show more"
  var SIDE = 5; // generations per step in the side-by-side
  var SCHEMA = "obs.generations/1";
  var FIELDS = ["q", "from", "to", "rmin", "rmax"];
  var HASH = "#generations-viewer";

  if (!window.obs) return;
  var el = window.obs.el;

  function fmt(n) {
    if (n === null || n === undefined) return "—";
    if (Number.isInteger(n)) return n.toLocaleString("en-US");
    return Number(n.toPrecision(4)).toString();
  }

  function number(text) {
    if (text === "") return null;
    var v = Number(text);
    return isFinite(v) ? v : null;
  }

  function Viewer(root, spec) {
    this.root = root;
    this.spec = spec;
    this.files = new window.obs.DataFiles(spec.prefix, SCHEMA, spec.run);
    this.form = root.querySelector("form.gen-filters");
    this.status = root.querySelector(".gen-status");
    this.list = root.querySelector(".gen-list");
    this.more = root.querySelector("[data-more]");
    this.compare = root.querySelector(".gen-compare");
    this.pick = root.querySelector("form.gen-pick");
    this.rows = null;
    this.texts = {};
    this.run = 0;
  }

  // every rows file, once: [step, reward, line] per generation
  Viewer.prototype.loadRows = function () {
    var self_ = this, pages = [];
    if (this.rowsPromise) return this.rowsPromise;
    for (var p = 1; p <= this.spec.rowFiles; p++) pages.push(this.files.load("rows", p));
    this.rowsPromise = Promise.all(pages).then(function (parts) {
      self_.rows = [].concat.apply([], parts);
      return self_.rows;
    });
    return this.rowsPromise;
  };

  Viewer.prototype.text = function (i) {
    var per = this.spec.textRowsPerFile, records = this.texts[Math.floor(i / per) + 1];
    return records ? records[i % per] : undefined;
  };

  Viewer.prototype.loadText = function (i) {
    var page = Math.floor(i / this.spec.textRowsPerFile) + 1, self_ = this;
    if (this.texts[page]) return Promise.resolve();
    return this.files.load("text", page).then(function (data) { self_.texts[page] = data; });
  };

  Viewer.prototype.readFilter = function () {
    var f = {}, form = this.form;
    FIELDS.forEach(function (name) { f[name] = String(form.elements[name].value).trim(); });
    return { q: f.q.toLowerCase(), from: number(f.from), to: number(f.to), rmin: number(f.rmin), rmax: number(f.rmax) };
  };

  Viewer.prototype.numeric = function (row, f, step) {
    var s = row[0], r = row[1];
    if (step !== undefined) { if (s !== step) return false; }
    else {
      if (f.from !== null && (s === null || s < f.from)) return false;
      if (f.to !== null && (s === null || s > f.to)) return false;
    }
    if (f.rmin !== null && (r === null || r < f.rmin)) return false;
    if (f.rmax !== null && (r === null || r > f.rmax)) return false;
    return true;
  };

  Viewer.prototype.textMatches = function (i, q) {
    if (!q) return true;
    var t = this.text(i);
    return !!t && (String(t[0]).toLowerCase().indexOf(q) !== -1 || String(t[1]).toLowerCase().indexOf(q) !== -1);
  };

  // The text files of generations `indices`, in order.
  Viewer.prototype.loadTexts = function (indices) {
    var self_ = this;
    return indices.reduce(function (chain, i) {
      return chain.then(function () { return self_.loadText(i); });
    }, Promise.resolve());
  };

  // A search over `candidates` (indices) from `state.pos` on, until `want` match; text files read in order.
  // Without a text to search every candidate matches: only the texts of the first `want` are read.
  Viewer.prototype.collect = function (state, want, q, run) {
    var self_ = this;
    if (!q) {
      state.found = state.candidates;
      state.pos = state.candidates.length;
      return this.loadTexts(state.found.slice(0, want));
    }
    function next() {
      if (run !== self_.run) return Promise.resolve();
      while (state.found.length < want && state.pos < state.candidates.length) {
        var i = state.candidates[state.pos];
        if (self_.text(i) === undefined) return self_.loadText(i).then(next);
        if (self_.textMatches(i, q)) state.found.push(i);
        state.pos += 1;
      }
      return Promise.resolve();
    }
    return next();
  };

  Viewer.prototype.apply = function (fromHash) {
    var self_ = this, run = ++this.run, f = this.readFilter();
    if (!fromHash) history.replaceState(null, "", this.hash());
    this.filter = f;
    this.list.textContent = "";
    this.status.textContent = "Loading generations…";
    this.root.setAttribute("aria-busy", "true");
    return this.loadRows().then(function (rows) {
      var candidates = [];
      for (var i = 0; i < rows.length; i++) if (self_.numeric(rows[i], f)) candidates.push(i);
      self_.state = { candidates: candidates, pos: 0, found: [] };
      self_.shown = SHOW;
      return self_.collect(self_.state, SHOW + 1, f.q, run).then(function () {
        if (run !== self_.run) return;
        self_.render();
        self_.sides(run);
      });
    }).then(function () {
      self_.root.setAttribute("data-ready", "");
      self_.root.removeAttribute("aria-busy");
    }, function (err) {
      self_.status.textContent = "The generations could not be loaded (" + err.message + ").";
      self_.root.setAttribute("data-ready", "");
      self_.root.removeAttribute("aria-busy");
    });
  };

  Viewer.prototype.showMore = function () {
    var self_ = this, run = this.run;
    this.shown += SHOW;
    this.more.disabled = true;
    var st = this.state;
    this.collect(st, this.shown + 1, this.filter.q, run).then(function () {
      return self_.loadTexts(st.found.slice(0, self_.shown));
    }).then(function () {
      if (run === self_.run) self_.render();
    });
  };

  Viewer.prototype.render = function () {
    var st = this.state, upto = Math.min(st.found.length, this.shown);
    for (var k = this.list.children.length; k < upto; k++) this.list.appendChild(this.item(st.found[k]));
    var all = st.pos >= st.candidates.length, n = st.found.length, total = this.spec.n;
    var text;
    if (all) text = n === 0 ? "No generation matches." : "Showing " + fmt(upto) + " of " + fmt(n) + " matching generation" + (n === 1 ? "" : "s") + " (of " + fmt(total) + ").";
    else text = "Showing " + fmt(upto) + " of " + fmt(n) + (n > upto ? "+" : "") + " matching generations so far (searched " + fmt(st.pos) + " of " + fmt(st.candidates.length) + " in the step and reward range).";
    this.status.textContent = text;
    this.more.hidden = !(n > this.shown || !all);
    this.more.disabled = false;
  };

  Viewer.prototype.item = function (i) {
    var row = this.rows[i], t = this.text(i) || ["", ""];
    var box = el("div", "gen");  // an <article> may not be a listitem (axe: aria-allowed-role)
    box.setAttribute("role", "listitem");
    var head = el("header", "gen-head");
    head.appendChild(el("span", "gen-step", "step " + fmt(row[0])));
    head.appendChild(el("span", "gen-reward" + (row[1] === null ? "" : row[1] > 0 ? " pos" : " zero"), "reward " + fmt(row[1])));
    head.appendChild(el("span", "note", "line " + fmt(row[2])));
    box.appendChild(head);
    var prompt = el("details", "gen-prompt");
    prompt.appendChild(el("summary", null, "Prompt" + (t[0] ? " (" + fmt(t[0].length) + " characters)" : ": none")));
    prompt.appendChild(el("pre", "text", t[0]));
    box.appendChild(prompt);
    box.appendChild(el("div", "field-label", "Completion"));
    box.appendChild(el("pre", "text gen-completion", t[1] || "(empty)"));
    return box;
  };

  // ------------------------------------------------------------------------------ side by side

  Viewer.prototype.setupPick = function () {
    var steps = this.spec.steps, pick = this.pick, self_ = this;
    if (steps.length < 2) return;
    ["a", "b"].forEach(function (name, k) {
      var select = pick.elements[name];
      steps.forEach(function (s) {
        var o = el("option", null, fmt(s));
        o.value = String(s);
        select.appendChild(o);
      });
      select.value = String(k === 0 ? steps[0] : steps[steps.length - 1]);
      select.addEventListener("change", function () { self_.sides(self_.run); });
    });
    this.compare.hidden = false;
  };

  Viewer.prototype.sides = function (run) {
    if (this.compare.hidden || !this.rows) return;
    var self_ = this, f = this.filter;
    ["a", "b"].forEach(function (name) {
      var step = Number(self_.pick.elements[name].value), box = self_.root.querySelector('[data-side="' + name + '"]');
      var all = [], rewards = [], candidates = [];
      self_.rows.forEach(function (row, i) {
        if (row[0] !== step) return;
        all.push(i);
        if (row[1] !== null) rewards.push(row[1]);
        if (self_.numeric(row, f, step)) candidates.push(i);
      });
      var mean = rewards.length ? rewards.reduce(function (a, b) { return a + b; }, 0) / rewards.length : null;
      var state = { candidates: candidates, pos: 0, found: [] };
      self_.collect(state, SIDE, f.q, run).then(function () {
        if (run !== self_.run) return;
        box.textContent = "";
        box.appendChild(el("h4", null, "Step " + fmt(step)));
        var shown = state.found.slice(0, SIDE);
        box.appendChild(el("p", "note", fmt(all.length) + " generation" + (all.length === 1 ? "" : "s") +
          (mean === null ? ", none with a reward" : ", mean reward " + fmt(mean) + " over " + fmt(rewards.length)) +
          "; " + (shown.length ? "the first " + fmt(shown.length) + " matching the filters" : "none matches the filters") + "."));
        var list = el("div", "gen-side-list");  // the items in a list of their own, below the step's heading
        list.setAttribute("role", "list");
        list.setAttribute("aria-label", "Generations of step " + fmt(step));
        shown.forEach(function (i) { list.appendChild(self_.item(i)); });
        box.appendChild(list);
      });
    });
  };

  // ------------------------------------------------------------------------------ the URL

  Viewer.prototype.hash = function () {
    var params = new URLSearchParams(), form = this.form;
    FIELDS.forEach(function (name) {
      var v = String(form.elements[name].value).trim();
      if (v) params.set(name, v);
    });
    var text = params.toString();
    return text ? HASH + "?" + text : HASH;
  };

  Viewer.prototype.fromHash = function () {
    if (location.hash.indexOf(HASH + "?") !== 0) return false;
    var params = new URLSearchParams(location.hash.slice(HASH.length + 1)), form = this.form;
    FIELDS.forEach(function (name) { form.elements[name].value = params.get(name) || ""; });
    return true;
  };

  Viewer.prototype.start = function () {
    var self_ = this, timer = null;
    this.form.hidden = false;
    var nojs = this.root.querySelector(".gen-nojs");
    if (nojs) nojs.hidden = true;
    this.form.addEventListener("submit", function (e) { e.preventDefault(); self_.apply(); });
    this.form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { self_.apply(); }, 200);
    });
    this.more.addEventListener("click", function () { self_.showMore(); });
    var linked = this.fromHash();
    this.setupPick();
    this.apply(true).then(function () { if (linked) self_.root.scrollIntoView(); });
  };

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.querySelector("[data-gen-viewer]"), data = document.getElementById("gen-spec");
    if (!root || !data) return;
    var spec;
    try { spec = JSON.parse(data.textContent); } catch (e) { return; }
    if (!spec || spec.schema !== SCHEMA) return;
    new Viewer(root, spec).start();
  });
})();
