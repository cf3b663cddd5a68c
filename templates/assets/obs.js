/* obs: a little local JavaScript. Every table is complete without it; this only adds sorting and
   filtering. No network, no globals besides `obs` (the helpers cases.js shares), no inline handlers
   (a strict CSP applies). */
(function () {
  "use strict";

  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

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

  // Missing values (""), NaN and infinities sink to the bottom in both directions; numbers compare as
  // numbers, text in natural order ("r2" before "r10"), ignoring case. A cell may name its comparable
  // set (data-group; `groups`, one per key): rows are ranked within their set only.
  function sortKeys(keys, numeric, dir, groups) {
    var order = keys.map(function (k, i) { return i; });
    var nums = numeric ? keys.map(function (k) { return k === "" ? NaN : parseFloat(k); }) : null;
    order.sort(function (i, j) {
      if (groups && groups[i] !== groups[j]) return collator.compare(groups[i], groups[j]);
      var a = keys[i], b = keys[j];
      var ma = a === "" || (numeric && !isFinite(nums[i])), mb = b === "" || (numeric && !isFinite(nums[j]));
      if (ma !== mb) return ma ? 1 : -1;
      if (ma) return i - j;
      var c = numeric ? nums[i] - nums[j] : collator.compare(a, b);
      if (c === 0) return i - j;
      return dir === "ascending" ? c : -c;
    });
    return order;
  }

  // A sortable table that is not the leaderboard: click a header to sort, again to reverse.
  function makeSortable(table, onSort) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      var button = th.querySelector("button.sort");
      if (!button) return;
      button.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        if (onSort) { onSort(index, dir); return; }
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var keys = rows.map(function (r) { return cellValue(r, index); });
        var groups = rows.map(function (r) { return groupOf(r, index); });
        var order = sortKeys(keys, th.getAttribute("data-type") === "number", dir, groups);
        var frag = document.createDocumentFragment();
        order.forEach(function (i) { frag.appendChild(rows[i]); });
        body.appendChild(frag);
      });
    });
  }

  // ---------------------------------------------------------------------------- the leaderboard
  // Filters (text over everything a row shows, tags included; status, verdict, spec, provenance) and
  // the sort are kept in the URL (#runs?q=...&status=...&sort=4&dir=descending&page=2), so a view can
  // be linked and survives a reload. A site with more runs than its page holds (obs.yaml
  // `leaderboard_rows`) lists the newest in the page; the script then loads every run from
  // leaderboard.js and shows them a page at a time, every filter and sort over all of them.

  var PAGE_ROWS = 100;

  // A data file's value: its `gz` (base64 of gzip of JSON) inflated by the browser (obs.render.datafile).
  function inflate(item) {
    if (!item || item.gz === undefined) return Promise.resolve(item ? item.data : undefined);
    var bin = atob(item.gz), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // The data files beside a page (obs.render.datafile: `<prefix><kind>-<page>.js`, each pushing one value onto
  // OBS_DATA), each loaded as a script element, one at a time, and kept: a page opened from disk cannot fetch() them.
  // The case browser and the generations viewer read theirs with this; `schema` and `run` say whose a value is.
  function DataFiles(prefix, schema, run) {
    this.prefix = prefix;
    this.schema = schema;
    this.run = run;
    this.cache = {};
  }
  DataFiles.prototype.load = function (kind, page) {
    var key = kind + "-" + page;
    if (this.cache[key]) return this.cache[key];
    var files = this;
    var promise = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = files.prefix + key + ".js";
      script.onload = function () {
        var list = self.OBS_DATA || [];
        for (var i = list.length - 1; i >= 0; i--) {
          var item = list[i];
          if (item && item.schema === files.schema && item.kind === kind && item.page === page && item.run === files.run) {
            list.splice(i, 1);
            script.remove();
            inflate(item).then(resolve, reject);
            return;
          }
        }
        reject(new Error("no data in " + script.src));
      };
      script.onerror = function () { reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
    this.cache[key] = promise;
    return promise;
  };

  // a count as the pages write it (obs.numbers.num): thousands separated, "100,000"
  function count(n) { return Number(n).toLocaleString("en-US"); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function cssToken(text) {
    return String(text).toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "x";
  }

  function badge(value, extra) {
    if (!value) return el("span", "badge outline", "none");
    return el("span", "badge " + cssToken(value) + (extra ? " " + extra : ""), value);
  }

  function ident(text) {
    var span = el("span", "ident");
    if (String(text).length <= 12) {
      span.textContent = String(text);
      return span;
    }
    String(text).split(/(?<=[._\/:=,|@+\-])(?=[^._\/:=,|@+\-])/).forEach(function (part, i) {
      if (i) span.appendChild(document.createElement("wbr"));
      if (part.length > 24) span.appendChild(el("span", "tok", part));
      else span.appendChild(document.createTextNode(part));
    });
    return span;
  }

  // One run of leaderboard.js as the table row the page template writes (see templates/index.html).
  var HEADLINE_COL = 4; // leaderboard.js `keys`: run, spec, date, status, headline, delta, verdict, gates

  function buildRow(r, spec) {
    var tr = document.createElement("tr");
    var f = r.facets || {};
    Object.keys(f).forEach(function (k) { tr.setAttribute("data-" + k, f[k]); });
    var run = el("td");
    run.setAttribute("data-sort", r.id);
    run.setAttribute("data-label", "Run");
    var pick = el("input", "pick");
    pick.type = "checkbox";
    pick.value = r.slug;
    pick.checked = picked.indexOf(r.slug) >= 0;
    pick.setAttribute("aria-label", "Pick " + r.id + " to overlay its curves");
    run.appendChild(pick);
    var a = el("a");
    a.href = r.href;
    a.appendChild(ident(r.id));
    run.appendChild(a);
    if (r.changed) {
      run.appendChild(document.createTextNode(" "));
      var ch = el("a", "badge " + r.changed[0], r.changed[0]);
      ch.href = r.changed[1];
      ch.title = r.changed[2];
      run.appendChild(ch);
    }
    if (r.title) run.appendChild(el("span", "sub", r.title));
    if (r.tags && r.tags.length) {
      var tags = el("span", "sub tags");
      r.tags.forEach(function (t, i) {
        if (i) tags.appendChild(document.createTextNode(" "));
        tags.appendChild(el("span", "tag", "#" + t));
      });
      run.appendChild(tags);
    }
    tr.appendChild(run);
    var where = el("td");
    where.setAttribute("data-label", "Spec / campaign");
    if (r.spec) {
      if (r.specHref) {
        var sa = el("a");
        sa.href = r.specHref;
        sa.appendChild(ident(r.spec));
        where.appendChild(sa);
      } else where.appendChild(ident(r.spec));
    }
    if (r.campaign) {
      where.appendChild(ident(r.campaign));
      if (r.cond) where.appendChild(el("span", "sub", r.cond));
    }
    tr.appendChild(where);
    var date = el("td");
    date.setAttribute("data-sort", r.date || "");
    date.setAttribute("data-label", "Date");
    date.appendChild(el("span", "date", r.date ? r.date.slice(0, 10) : "—"));
    tr.appendChild(date);
    var status = el("td");
    status.setAttribute("data-label", "Status");
    status.appendChild(badge(r.status));
    tr.appendChild(status);
    var head = el("td", "num");
    head.setAttribute("data-sort", r.headSort === null ? "" : String(r.headSort));
    head.setAttribute("data-label", "Headline");
    head.appendChild(document.createTextNode(r.head));
    if (r.group) head.setAttribute("data-group", r.group);
    if (r.metric) head.appendChild(el("span", "sub")).appendChild(ident(r.metric));
    (r.marks || []).forEach(function (mark) { head.appendChild(el("span", "sub flag", mark)); });
    tr.appendChild(head);
    var delta = el("td", "num");
    delta.setAttribute("data-sort", r.deltaSort === null ? "" : String(r.deltaSort));
    delta.setAttribute("data-label", "Δ vs baseline");
    if (r.delta !== null) {
      var d = el("span", r.dir);
      if (r.outcome) {
        d.setAttribute("data-cmp", "run:" + r.id);
        d.setAttribute("data-outcome", r.outcome);
      }
      if (r.dir !== "flat") d.appendChild(el("span", null, r.dir === "up" ? "▲ " : "▼ ")).setAttribute("aria-hidden", "true");
      d.appendChild(document.createTextNode(r.delta));
      if (r.dir !== "flat") d.appendChild(el("span", "visually-hidden", " (" + r.verdictWords + ")"));
      delta.appendChild(d);
      var line = delta.appendChild(el("span", "sub ci-line"));
      if (r.vs) {
        line.appendChild(el("span", "nw", "vs ")).appendChild(ident(r.vs));
        line.appendChild(document.createTextNode(" "));
      }
      r.ci.split(" · ").forEach(function (part, i, parts) {
        line.appendChild(el("span", "nw", part));
        if (i < parts.length - 1) line.appendChild(document.createTextNode(" · "));
      });
    } else delta.textContent = "—";
    if (r.seedLevel) {
      var sl = r.seedLevel, level = delta.appendChild(el("span", "sub seed-level"));
      level.title = sl.label;
      var link = level.appendChild(el("a", null, "seed level"));
      link.href = sl.href;
      level.appendChild(document.createTextNode(": "));
      if (sl.outcome) {
        level.setAttribute("data-cmp", sl.key);
        level.setAttribute("data-outcome", sl.outcome);
        var outcome = level.appendChild(el("span", sl.dir));
        if (sl.dir !== "flat") outcome.appendChild(el("span", null, sl.dir === "up" ? "▲ " : "▼ ")).setAttribute("aria-hidden", "true");
        outcome.appendChild(document.createTextNode(sl.words));
        level.appendChild(document.createTextNode(" · " + sl.seeds));
      } else level.appendChild(document.createTextNode(sl.text));
    }
    tr.appendChild(delta);
    var verdict = el("td");
    verdict.setAttribute("data-sort", r.verdict || "");
    verdict.setAttribute("data-label", "Verdict");
    verdict.appendChild(r.verdict ? badge(r.verdict) : el("span", "note", "—"));
    if (r.flag) verdict.appendChild(el("span", "sub flag", r.flag));
    else if (r.suggested) verdict.appendChild(el("span", "sub", r.suggested));
    tr.appendChild(verdict);
    if (spec.gates) {
      var gates = el("td", "num gates");
      gates.setAttribute("data-sort", String(r.gatesPassed));
      gates.setAttribute("data-label", "Gates");
      var strip = el("span", "gate-strip");
      (r.gates || []).forEach(function (g) {
        var b = el("span", "badge " + (g[0] === "pass" ? "pass" : g[0] === "fail" ? "fail" : "outline"), g[0] === "pass" ? "✓" : g[0] === "fail" ? "✗" : "–");
        b.setAttribute("role", "img");
        b.setAttribute("aria-label", g[1] + ": " + (g[0] === "pass" ? "passed" : g[0] === "fail" ? "failed" : "not applicable") + " (" + g[2] + ")");
        b.title = g[1] + ": " + g[2];
        strip.appendChild(b);
      });
      gates.appendChild(strip);
      gates.appendChild(el("span", "sub", r.gatesText));
      tr.appendChild(gates);
    }
    return tr;
  }

  function Leaderboard(form, table) {
    this.form = form;
    this.table = table;
    this.body = table.tBodies[0];
    this.count = form.querySelector("[data-count]");
    this.inputs = Array.prototype.slice.call(form.querySelectorAll("input[type=search], select"));
    this.headers = table.tHead ? table.tHead.rows[0].cells : [];
    this.sort = null; // [column, direction]
    this.page = 1;
    this.src = table.getAttribute("data-rows-src");
    this.total = Number(table.getAttribute("data-total") || 0);
    this.items = Array.prototype.map.call(this.body.rows, function (tr) { return { tr: tr }; });
    this.pager = null;
  }

  Leaderboard.prototype.text = function (item) {
    if (item.text === undefined) item.text = (item.data ? item.data.search : item.tr.textContent).toLowerCase();
    return item.text;
  };
  Leaderboard.prototype.facet = function (item, name) {
    if (item.data) return (item.data.facets || {})[name] || "";
    return item.tr.getAttribute("data-" + name) || "";
  };
  Leaderboard.prototype.key = function (item, col) {
    if (item.data) return item.data.keys[col] === null ? "" : String(item.data.keys[col]);
    if (!item.keys) item.keys = {};
    if (!(col in item.keys)) item.keys[col] = cellValue(item.tr, col);
    return item.keys[col];
  };
  Leaderboard.prototype.group = function (item, col) {
    if (item.data) return col === HEADLINE_COL ? item.data.group || "" : "";
    return groupOf(item.tr, col);
  };
  Leaderboard.prototype.row = function (item) {
    if (!item.tr) item.tr = buildRow(item.data, { gates: this.headers.length > 7 });
    return item.tr;
  };

  Leaderboard.prototype.state = function () {
    var params = new URLSearchParams();
    this.inputs.forEach(function (elm) {
      if (!elm.value) return;
      params.set(elm.type === "search" ? "q" : elm.getAttribute("data-facet"), elm.value);
    });
    if (this.sort) {
      params.set("sort", String(this.sort[0]));
      params.set("dir", this.sort[1]);
    }
    if (this.page > 1) params.set("page", String(this.page));
    return params.toString();
  };

  Leaderboard.prototype.remember = function () {
    var text = this.state();
    var hash = text ? "#runs?" + text : "";
    if (hash === location.hash || (!hash && location.hash.indexOf("#runs?") !== 0)) return;
    history.replaceState(null, "", hash || location.pathname + location.search);
  };

  Leaderboard.prototype.restore = function () {
    if (location.hash.indexOf("#runs?") !== 0) return false;
    var params = new URLSearchParams(location.hash.slice(6));
    this.inputs.forEach(function (elm) {
      var value = params.get(elm.type === "search" ? "q" : elm.getAttribute("data-facet")) || "";
      if (elm.tagName === "SELECT" && !Array.prototype.some.call(elm.options, function (o) { return o.value === value; })) value = "";
      elm.value = value;
    });
    var col = params.get("sort"), dir = params.get("dir");
    this.sort = col !== null && this.headers[Number(col)] && this.headers[Number(col)].querySelector("button.sort")
      ? [Number(col), dir === "descending" ? "descending" : "ascending"] : null;
    this.page = Math.max(1, Number(params.get("page")) || 1);
    return true;
  };

  Leaderboard.prototype.apply = function (keepPage) {
    var self_ = this, text = "", facets = [];
    this.inputs.forEach(function (elm) {
      if (elm.type === "search") text = elm.value.trim().toLowerCase();
      else if (elm.value) facets.push([elm.getAttribute("data-facet"), elm.value]);
    });
    var shown = this.items.filter(function (item) {
      if (text && self_.text(item).indexOf(text) === -1) return false;
      for (var i = 0; i < facets.length; i++) if (self_.facet(item, facets[i][0]) !== facets[i][1]) return false;
      return true;
    });
    Array.prototype.forEach.call(this.headers, function (h) { h.removeAttribute("aria-sort"); });
    if (this.sort) {
      var col = this.sort[0], th = this.headers[col];
      th.setAttribute("aria-sort", this.sort[1]);
      var keys = shown.map(function (item) { return self_.key(item, col); });
      var groups = shown.map(function (item) { return self_.group(item, col); });
      var order = sortKeys(keys, th.getAttribute("data-type") === "number", this.sort[1], groups);
      shown = order.map(function (i) { return shown[i]; });
    }
    if (!keepPage) this.page = 1;
    this.render(shown);
    this.remember();
  };

  Leaderboard.prototype.render = function (shown) {
    var self_ = this, paged = !!this.loaded;
    var pages = paged ? Math.max(1, Math.ceil(shown.length / PAGE_ROWS)) : 1;
    if (this.page > pages) this.page = pages;
    var slice = paged ? shown.slice((this.page - 1) * PAGE_ROWS, this.page * PAGE_ROWS) : shown;
    var all = paged ? this.items.length : this.items.length;
    if (paged) {
      var frag = document.createDocumentFragment();
      slice.forEach(function (item) { frag.appendChild(self_.row(item)); });
      this.body.textContent = "";
      this.body.appendChild(frag);
    } else {
      var visible = new Set(shown);
      var frag2 = document.createDocumentFragment();
      shown.forEach(function (item) { item.tr.hidden = false; frag2.appendChild(item.tr); });
      this.items.forEach(function (item) { if (!visible.has(item)) { item.tr.hidden = true; frag2.appendChild(item.tr); } });
      this.body.appendChild(frag2);
    }
    if (this.count) this.count.textContent = count(shown.length) + " of " + count(all) + " runs";
    if (paged) this.renderPager(shown.length, pages);
  };

  Leaderboard.prototype.renderPager = function (n, pages) {
    var self_ = this;
    if (!this.pager) {
      this.pager = el("nav", "pager");
      this.pager.setAttribute("aria-label", "Leaderboard pages");
      this.table.parentNode.parentNode.insertBefore(this.pager, this.table.parentNode.nextSibling);
    }
    this.pager.textContent = "";
    var first = n ? (this.page - 1) * PAGE_ROWS + 1 : 0, last = Math.min(n, this.page * PAGE_ROWS);
    function go(label, page, disabled) {
      var b = el("button", null, label);
      b.type = "button";
      b.disabled = disabled;
      b.addEventListener("click", function () { self_.page = page; self_.apply(true); self_.table.scrollIntoView(); });
      self_.pager.appendChild(b);
    }
    go("← Newer", this.page - 1, this.page <= 1);
    this.pager.appendChild(el("span", "pager-where", "runs " + count(first) + "–" + count(last) + " of " + count(n) + " · page " + count(this.page) + " of " + count(pages)));
    go("Older →", this.page + 1, this.page >= pages);
  };

  // One data file (a script that pushes one value onto OBS_DATA): its value, inflated, once it has run.
  function loadData(src, schema, part) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = function () {
        var list = self.OBS_DATA || [];
        for (var i = list.length - 1; i >= 0; i--) {
          if (list[i] && list[i].schema === schema && (list[i].part || 1) === part) {
            inflate(list.splice(i, 1)[0]).then(resolve, reject);
            return;
          }
        }
        reject(new Error("no runs in " + src));
      };
      script.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(script);
    });
  }

  // A site of very many runs has its leaderboard's data in several files (data-rows-src lists them,
  // 10,000 runs each): they load side by side and are joined in their order.
  Leaderboard.prototype.loadAll = function () {
    var self_ = this, srcs = this.src.split(" ");
    return Promise.all(srcs.map(function (src, i) { return loadData(src, "obs.leaderboard/1", i + 1); })).then(function (parts) {
      return [].concat.apply([], parts);
    }).then(function (runs) {
      // the rows the page already holds are the newest runs, in the data's order: keep their elements
      self_.items = runs.map(function (r, i) {
        var item = { data: r };
        if (i < self_.items.length) item.tr = self_.items[i].tr;
        return item;
      });
      self_.loaded = true;
      var note = self_.form.parentNode.querySelector("[data-partial-note]");
      if (note) note.hidden = true;
    });
  };

  Leaderboard.prototype.start = function () {
    var self_ = this;
    this.inputs.forEach(function (elm) {
      elm.addEventListener("input", function () { self_.apply(); });
      elm.addEventListener("change", function () { self_.apply(); });
    });
    this.form.addEventListener("submit", function (e) { e.preventDefault(); });
    makeSortable(this.table, function (col, dir) { self_.sort = [col, dir]; self_.apply(); });
    window.addEventListener("hashchange", function () { if (self_.restore()) self_.apply(true); });
    var restored = this.restore();
    var ready = function () {
      // on a phone the facets start folded (the first runs then fit on the screen), unless the
      // link set one of them
      var facets = self_.form.querySelector("details.facets");
      if (facets && window.matchMedia && window.matchMedia("(max-width: 560px)").matches &&
          !Array.prototype.some.call(facets.querySelectorAll("select"), function (s) { return !!s.value; })) {
        facets.open = false;
      }
      self_.form.hidden = false;
      self_.apply(restored);
      self_.table.setAttribute("data-ready", "");
    };
    if (this.src) this.loadAll().then(ready, function () { self_.loaded = false; ready(); });
    else ready();
  };

  // The Configuration section: a search over every key and value; groups with a hit are opened.
  function makeRowSearch(form) {
    var box = document.getElementById(form.getAttribute("data-rows"));
    var input = form.querySelector("input");
    var count = form.querySelector("[data-count]");
    if (!box || !input) return;
    var rows = null;
    function apply() {
      if (!rows) {  // the keys are drawn when the reader comes near (`drawLater`), else now
        Array.prototype.forEach.call(box.querySelectorAll("[data-later]"), function (h) { drawLater(h); });
        rows = box.querySelectorAll("tbody tr");
      }
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
  // A box the page marks in its HTML (tabindex="0" data-scroll-focus: wide tables of rates, which
  // scroll on most screens) is a tab stop from the start and loses it once measured not to scroll.
  function markScrollable(everywhere) {
    // Measure every box first, then change attributes: a change between two measurements makes
    // the browser lay the page out again. Boxes in a section not drawn yet (content-visibility:
    // auto) are measured when it is: asking for their size now would make the browser lay each
    // such section out on its own (77 layouts on a run page's load). Except `everywhere`, when a
    // reader starts to move through the page with Tab (below).
    var boxes = [];
    Array.prototype.forEach.call(document.querySelectorAll(".table-wrap, pre.text"), function (el) {
      if (el.checkVisibility && !el.checkVisibility({ contentVisibilityAuto: !everywhere })) return;
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
  // Measured once per change, after the browser has drawn the frame (so the page's layout is done
  // and reading sizes costs no layout of its own), when it has a moment: measuring while the page
  // is still being built forced a layout of the whole page into one task of the load (the longest
  // of a run page's, 0.35-0.45 s with Lighthouse's 4x slower CPU).
  var pending = false;
  var idle = window.requestIdleCallback || function (fn) { return setTimeout(fn, 1); };
  function markSoon() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      idle(function () { pending = false; markScrollable(false); }, { timeout: 1000 });
    });
  }
  // Tab moves focus to the next element that can take it, in the whole page: a box at the top of a
  // section not drawn yet would be passed over, since it becomes a tab stop only once drawn, which
  // focus landing after it in that section causes. So the first Tab (and the first after the layout
  // changed: a resize, the web fonts) measures every box, drawn or not, before the browser moves the
  // focus (keydown comes first): a cost of the page's whole layout (~0.14 s on the demo's run page on
  // a shared 2-core machine), paid only by a reader who uses the keyboard.
  var measuredAll = false;
  function remeasureAll() {
    measuredAll = false;
    markSoon();
  }
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Tab" || measuredAll) return;
    measuredAll = true;
    markScrollable(true);
  }, true);

  // ------------------------------------------------------------------ blocks drawn when they come near
  // A long table or a failure group far down a run page is written inside <noscript> in a
  // <div data-later> (macros.html `later`): a browser without JavaScript shows it where it is; with
  // JavaScript it stays text, out of the page's first style and layout (on the demo's run page ~1,500
  // of its ~3,500 elements, the load's longest task), until it comes within a screen and a half of the
  // window. It is then parsed and put in its place: the page's own markup, the bytes a browser without
  // JavaScript renders, parsed as the HTML parser would have (no run data becomes markup in a script).
  // Every block is drawn at once when the reader goes for the page as a whole: a link into it (a
  // fragment), Tab (focus moves through every element), find in page, printing.
  var laterWatch = null;
  function drawLater(holder, wire) {
    if (!holder.parentNode) return;
    if (laterWatch) laterWatch.unobserve(holder);
    var markup = holder.querySelector("noscript");
    var doc = new DOMParser().parseFromString("<!DOCTYPE html><body>" + (markup ? markup.textContent : ""), "text/html");
    var parent = holder.parentNode, nodes = Array.prototype.slice.call(doc.body.childNodes);
    nodes.forEach(function (n) { parent.insertBefore(document.adoptNode(n), holder); });
    holder.remove();
    nodes.forEach(function (n) {
      if (n.nodeType !== 1) return;
      var tables = n.matches("table") ? [n] : Array.prototype.slice.call(n.querySelectorAll("table"));
      if (wire !== false) tables.forEach(function (t) {  // not when drawn before the page's tables are wired
        if (t.matches("[data-export]")) wireExport(t);
        if (t.matches("table.sortable:not([data-board])")) makeSortable(t);
      });
      n.dispatchEvent(new CustomEvent("obs:drawn", { bubbles: true }));  // cases.js wires its links in it
    });
    markSoon();
  }
  function drawAllLater(wire) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-later]"), function (h) { drawLater(h, wire !== false); });
  }
  function wireLater() {
    var holders = document.querySelectorAll("[data-later]"), held = document.documentElement.hasAttribute("data-obs-hold");
    document.documentElement.removeAttribute("data-obs-hold");
    if (!holders.length) return;
    if (location.hash.length > 1 || typeof IntersectionObserver !== "function") {
      drawAllLater(false);
      var target = null;
      try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (err) { target = null; }
      if (held && target) target.scrollIntoView();  // where the link says, now that everything above it is drawn
      return;
    }
    laterWatch = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) drawLater(e.target); });
    }, { rootMargin: "150% 0px 150% 0px" });
    Array.prototype.forEach.call(holders, function (h) { laterWatch.observe(h); });
    window.addEventListener("hashchange", function () { drawAllLater(); });
    window.addEventListener("beforeprint", function () { drawAllLater(); });
    // a link inside the page: everything drawn before the browser scrolls to where it leads
    document.addEventListener("click", function (e) {
      var a = e.target.closest ? e.target.closest("a[href^='#']") : null;
      if (a) drawAllLater();
    }, true);
    document.addEventListener("keydown", function (e) {
      if (e.key === "Tab" || ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F" || e.key === "g"))) drawAllLater();
    }, true);
  }

  // The leaderboard's pick boxes: the button opens compare.html with the picked runs overlaid. The
  // picks are kept by run (not read off the page): a paged leaderboard shows only some rows at a time
  // and builds the others from leaderboard.js, each with its own box (buildRow).
  var picked = []; // slugs of the runs whose pick box is ticked, in the order they were picked
  function wirePicks(go) {
    function update() {
      var n = picked.length;
      go.disabled = n === 0;
      go.textContent = n ? "Overlay curves of " + n + " picked run" + (n === 1 ? "" : "s") : "Overlay curves of picked runs";
    }
    document.addEventListener("change", function (e) {
      var b = e.target;
      if (!b || !b.classList || !b.classList.contains("pick")) return;
      var i = picked.indexOf(b.value);
      if (b.checked && i < 0) picked.push(b.value);
      else if (!b.checked && i >= 0) picked.splice(i, 1);
      update();
    });
    Array.prototype.forEach.call(document.querySelectorAll("input.pick"), function (b) {
      if (b.checked && picked.indexOf(b.value) < 0) picked.push(b.value);  // kept by the browser on reload
    });
    go.addEventListener("click", function () {
      location.href = go.getAttribute("data-href") + "?runs=" + picked.map(encodeURIComponent).join(",") + "#overlay";
    });
    update();
  }

  // ------------------------------------------------------------------ tables as CSV files
  // A table marked data-export="name" gets a button that saves it as name.csv (a blob: link: no
  // server, works from file://): its header row, then every body row as shown, a cell's exact
  // number (data-value) where it has one. A text a spreadsheet would run as a formula gets a '.

  function csvField(v) {
    var t = String(v);
    if (/^[=+\-@\t\r]/.test(t) && !isFinite(Number(t))) t = "'" + t;
    return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }

  // A cell as data: its exact number (data-value, else a numeric data-sort), else its text, where a
  // number as the page writes it (−1,024.5, 3.000e−04) becomes one a program reads (-1024.5, 3.000e-04).
  function cellCsv(c) {
    if (c.hasAttribute("data-value")) return c.getAttribute("data-value");
    var sort = c.getAttribute("data-sort");
    if (sort !== null && sort !== "" && isFinite(Number(sort))) return sort;
    var text = c.textContent.trim().replace(/\s+/g, " ");
    var plain = text.replace(/\u2212/g, "-").replace(/,/g, "");
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(plain) ? plain : text;
  }

  function tableCsv(table) {
    var rows = [];
    var head = table.tHead ? table.tHead.rows[table.tHead.rows.length - 1] : null;
    if (head) rows.push(Array.prototype.map.call(head.cells, function (c) { return c.textContent.trim().replace(/\s+/g, " "); }));
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (tr) {
        if (tr.hidden) return;
        var row = [];
        Array.prototype.forEach.call(tr.cells, function (c) {
          row.push(cellCsv(c));
          for (var k = 1; k < (c.colSpan || 1); k++) row.push("");
        });
        rows.push(row);
      });
    });
    return rows.map(function (r) { return r.map(csvField).join(","); }).join("\r\n") + "\r\n";
  }

  function wireExport(table) {
    var name = (table.getAttribute("data-export") || "table").replace(/[^A-Za-z0-9._-]+/g, "_");
    var wrap = table.closest(".table-wrap") || table;
    var p = el("p", "table-export");
    var b = el("button", null, "Save as CSV");
    b.type = "button";
    b.setAttribute("data-export-table", name);
    b.addEventListener("click", function () {
      var a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([tableCsv(table)], { type: "text/csv" }));
      a.download = name + ".csv";
      a.hidden = true;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
    });
    p.appendChild(b);
    wrap.parentNode.insertBefore(p, wrap.nextSibling);
  }

  // The run page's jump menu (narrow screens): it slides away while the reader scrolls down and
  // comes back when they scroll up; a picked section closes it; it names the section in view.
  function wireJump(nav) {
    var menu = nav.querySelector("details"), at = nav.querySelector("[data-jump-at]");
    var links = Array.prototype.slice.call(menu.querySelectorAll("a"));
    var holdUntil = 0;
    // a picked section is shown whole: the menu closes and steps aside (scrolling up brings it back),
    // and the focus leaves it, so the next Tab goes on from the section
    Array.prototype.forEach.call(nav.querySelectorAll("a"), function (a) {
      a.addEventListener("click", function () {
        menu.open = false;
        nav.classList.add("away");
        holdUntil = performance.now() + 400;  // the jump is one scroll event (no smooth scrolling): not the reader's
        a.blur();
      });
    });
    menu.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && menu.open) { menu.open = false; menu.querySelector("summary").focus(); }
    });
    var last = window.scrollY, ticking = false;
    window.addEventListener("scroll", function () {
      if (ticking) return;
      ticking = true;
      requestAnimationFrame(function () {
        ticking = false;
        var y = window.scrollY;
        if (performance.now() < holdUntil) { holdUntil = 0; last = y; return; }  // the jump's own scrolling
        if (Math.abs(y - last) < 8) return;
        nav.classList.toggle("away", y > last && y > 200 && !menu.open);
        last = y;
      });
    }, { passive: true });
    if (typeof IntersectionObserver !== "function") return;
    var byId = {};
    links.forEach(function (a) { byId[a.getAttribute("href").slice(1)] = a; });
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!e.isIntersecting || !byId[e.target.id]) return;
        links.forEach(function (a) { a.removeAttribute("aria-current"); });
        byId[e.target.id].setAttribute("aria-current", "true");
        var n = links.indexOf(byId[e.target.id]) + 1;
        at.textContent = n + ". " + byId[e.target.id].textContent;
        menu.classList.add("at");
      });
    }, { rootMargin: "-45% 0px -50% 0px" });
    Object.keys(byId).forEach(function (id) { var s = document.getElementById(id); if (s) seen.observe(s); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    wireLater();
    Array.prototype.forEach.call(document.querySelectorAll("table[data-export]"), wireExport);
    var go = document.querySelector("[data-overlay-go]");
    if (go) wirePicks(go);
    var jump = document.querySelector("nav.jump");
    if (jump) wireJump(jump);
    document.documentElement.setAttribute("data-obs-js", "");
    Array.prototype.forEach.call(document.querySelectorAll("form.filters"), function (form) {
      var table = document.getElementById(form.getAttribute("data-table"));
      if (table) {
        table.setAttribute("data-board", "");
        new Leaderboard(form, table).start();
      }
    });
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable:not([data-board])"), function (t) { makeSortable(t); });
    Array.prototype.forEach.call(document.querySelectorAll("form.config-search"), makeRowSearch);
    markSoon();
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(remeasureAll);
  });
  window.addEventListener("load", markSoon);
  // the page's other scripts (cases.js, generations.js) build elements and read data files with these
  // remeasure: a script that rewrote a table after its data arrived (compare.js) asks for the scroll check again
  window.obs = { el: el, inflate: inflate, DataFiles: DataFiles, drawAllLater: drawAllLater, remeasure: markSoon };
  window.addEventListener("resize", remeasureAll);
  document.addEventListener("toggle", markSoon, true);
  // sections drawn only near the viewport (content-visibility: auto) have no size until then
  document.addEventListener("contentvisibilityautostatechange", markSoon, true);
})();
