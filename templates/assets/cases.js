/* obs: the case browser of a run page. Every probe case, filterable by split, family, outcome,
   failure class, pattern and flip against the baseline, searchable by text, with its outcome here
   and in the baseline side by side.

   Data: the page embeds a small description (<script type="application/json" id="case-spec">); the
   cases are in data files beside the page (cases-rows-<k>.js, cases-text-<k>.js), each appending one
   JSON value to OBS_DATA. They are loaded with <script src> (allowed by the page's policy, and
   possible from file:// where fetch() is not), one at a time and only as far as the current filter
   needs: a million cases are read a few thousand at a time. Everything from a run is put into the
   page with textContent, never as markup. The filter lives in the URL (#cases?group=2&q=...). */
(function () {
  "use strict";

  var SHOW = 20; // cases added per "show more"
  var SCHEMA = "obs.cases/1";

  // shared with obs.js, which the page runs first (both deferred, obs.js earlier in the document)
  if (!window.obs) return;
  var el = window.obs.el, inflate = window.obs.inflate;

  function fmt(n) {
    return Number(n).toLocaleString("en-US");
  }

  // ------------------------------------------------------------------------------ data files

  // the data files' loader is obs.js's, shared with the generations viewer
  function Loader(spec) {
    return new window.obs.DataFiles(spec.prefix, SCHEMA, spec.run);
  }

  // --------------------------------------------------------------------------------- filters

  var FIELDS = ["q", "outcome", "split", "family", "group", "flip", "check", "pattern", "id"];

  function readForm(form) {
    var f = {};
    FIELDS.forEach(function (name) {
      var input = form.elements[name];
      f[name] = input ? String(input.value).trim() : "";
    });
    f.q = f.q.toLowerCase();
    return f;
  }

  function writeForm(form, values) {
    FIELDS.forEach(function (name) {
      var input = form.elements[name];
      if (!input) return;
      var value = values[name] || "";
      if (input.tagName === "SELECT") {
        var ok = Array.prototype.some.call(input.options, function (o) { return o.value === value; });
        if (!ok) value = name === "check" ? input.value : "";
      }
      input.value = value;
    });
  }

  // A link names a split, family or failure class by its name (#cases?split=test), never by its
  // place in the list, which moves when a later build adds one; the form's options are positions.
  var NAMED = { split: "splits", family: "families", group: "groups" };
  var WORDS = { split: "split", family: "family", group: "failure class", outcome: "outcome", flip: "comparison", check: "check" };

  function namesOf(spec, field) {
    var list = spec[NAMED[field]] || [];
    return list.map(function (v) { return field === "group" ? v.key : String(v); });
  }

  // the option value of a name (group options count from 1), or null
  function valueOfName(spec, field, name) {
    var i = namesOf(spec, field).indexOf(name);
    return i < 0 ? null : String(field === "group" ? i + 1 : i);
  }

  function nameOfValue(spec, field, value) {
    var names = namesOf(spec, field), i = Number(value) - (field === "group" ? 1 : 0);
    return names[i] !== undefined ? names[i] : value;
  }

  // `text` of a link (split=test&q=x) as the form's values, and what in it this run does not have
  function linkValues(spec, form, text) {
    var params = new URLSearchParams(text);
    var out = {}, unknown = [];
    FIELDS.forEach(function (name) {
      if (!params.has(name)) return;
      var value = params.get(name);
      if (NAMED[name] && value) {
        var v = valueOfName(spec, name, value);
        if (v === null) { unknown.push(WORDS[name] + " “" + value + "”"); return; }
        value = v;
      }
      var input = form.elements[name];
      if (input && input.tagName === "SELECT" && value &&
          !Array.prototype.some.call(input.options, function (o) { return o.value === value; })) {
        unknown.push(WORDS[name] + " “" + value + "”");
        return;
      }
      out[name] = value;
    });
    params.forEach(function (v, k) { if (FIELDS.indexOf(k) < 0) unknown.push("filter “" + k + "”"); });
    return { values: out, unknown: unknown };
  }

  function hashValues(spec, form) {
    var hash = location.hash;
    if (hash.indexOf("#cases?") !== 0) return null;
    return linkValues(spec, form, hash.slice(7));
  }

  function toHash(spec, form) {
    var params = new URLSearchParams();
    FIELDS.forEach(function (name) {
      var input = form.elements[name];
      if (!input || !input.value) return;
      if (name === "check" && !form.elements.flip.value) return;
      params.set(name, NAMED[name] ? nameOfValue(spec, name, input.value) : input.value);
    });
    var text = params.toString();
    return text ? "#cases?" + text : "#cases";
  }

  // ---------------------------------------------------------------------------------- browser

  function Browser(root, spec) {
    this.root = root;
    this.spec = spec;
    this.loader = new Loader(spec);
    this.form = root.querySelector("form.case-filters");
    this.status = root.querySelector(".case-status");
    this.list = root.querySelector(".case-list");
    this.more = root.querySelector("[data-more]");
    this.negative = {};
    var self_ = this;
    spec.negative.forEach(function (c) { self_.negative[c] = true; });
    this.rows = []; // rows files loaded so far, in order
    this.texts = {}; // text page -> its records
    this.run = 0;
  }

  Browser.prototype.passes = function (code, check) {
    if (code === "1") return !this.negative[check];
    if (code === "0") return !!this.negative[check];
    return null;
  };

  Browser.prototype.text = function (index) {
    var page = Math.floor(index / this.spec.textRowsPerFile) + 1;
    var records = this.texts[page];
    return records ? records[index % this.spec.textRowsPerFile] : undefined;
  };

  Browser.prototype.loadTexts = function (first, last) {
    var spec = this.spec, self_ = this, pages = [];
    for (var p = Math.floor(first / spec.textRowsPerFile) + 1; p <= Math.floor((last - 1) / spec.textRowsPerFile) + 1; p++) {
      if (!this.texts[p]) pages.push(p);
    }
    return pages.reduce(function (chain, page) {
      return chain.then(function () {
        return self_.loader.load("text", page).then(function (data) { self_.texts[page] = data; });
      });
    }, Promise.resolve());
  };

  Browser.prototype.matches = function (row, index, f) {
    var spec = this.spec;
    if (f.id && row[0] !== f.id) return false;
    if (f.outcome === "failing" && row[3] < 0) return false;
    if (f.outcome === "passing" && row[3] >= 0) return false;
    if (f.split !== "" && row[1] !== Number(f.split)) return false;
    if (f.family !== "" && row[2] !== Number(f.family)) return false;
    if (f.group !== "" && row[3] !== Number(f.group) - 1) return false;
    if (f.pattern !== "" && row[4] !== Number(f.pattern)) return false;
    if (f.flip) {
      if (f.flip === "new") {
        if (row[6] !== null) return false;
      } else {
        if (row[6] === null) return false;
        var ci = spec.checks.indexOf(f.check);
        var here = this.passes(row[5].charAt(ci), f.check), base = this.passes(row[6].charAt(ci), f.check);
        if (here === null || base === null) return false;
        if (f.flip === "broke" && !(base && !here)) return false;
        if (f.flip === "fixed" && !(!base && here)) return false;
        if (f.flip === "same" && here !== base) return false;
      }
    }
    if (f.q) {
      var hay = [row[0], spec.splits[row[1]], spec.families[row[2]]];
      if (row[3] >= 0) hay.push(spec.groups[row[3]].key);
      if (row[4] >= 0 && spec.patterns[row[4]]) hay.push(spec.patterns[row[4]].text);
      var t = this.text(index);
      if (t && t !== 0) hay.push(t[0], t[1], t[2] === 1 ? "" : t[2], t[3]);
      var found = hay.some(function (h) { return h && String(h).toLowerCase().indexOf(f.q) !== -1; });
      if (!found) return false;
    }
    return true;
  };

  // Read rows files from where the last scan stopped until `want` cases match (or all are read).
  Browser.prototype.scan = function (want, run) {
    var self_ = this, spec = this.spec;
    if (run !== this.run) return Promise.resolve();
    if (this.found.length >= want || this.scanned >= spec.rowFiles) return Promise.resolve();
    var page = this.scanned + 1;
    return this.loader.load("rows", page).then(function (rows) {
      var first = (page - 1) * spec.rowsPerFile;
      return (self_.filter.q ? self_.loadTexts(first, first + rows.length) : Promise.resolve()).then(function () {
        if (run !== self_.run) return;
        for (var i = 0; i < rows.length; i++) {
          if (self_.matches(rows[i], first + i, self_.filter)) self_.found.push([first + i, rows[i]]);
        }
        self_.scanned = page;
        self_.report();
        return self_.scan(want, run);
      });
    });
  };

  Browser.prototype.apply = function (values) {
    this.started = true;
    if (this.watch) this.watch.disconnect();
    if (values) writeForm(this.form, values);
    this.filter = readForm(this.form);
    this.found = [];
    this.scanned = 0;
    this.shown = SHOW;
    this.run += 1;
    this.list.textContent = "";
    this.pinned();
    var run = this.run, self_ = this;
    this.status.textContent = "Loading cases…";
    this.root.setAttribute("aria-busy", "true");  // until this filter's cases are listed
    return this.scan(this.shown + 1, run).then(function () {
      if (run !== self_.run) return;
      self_.render();
      self_.root.setAttribute("data-ready", "");
      self_.root.removeAttribute("aria-busy");
    }, function (err) {
      self_.status.textContent = "The case data could not be loaded (" + err.message + "). The groups above still list the failing cases.";
      self_.root.setAttribute("data-ready", "");
      self_.root.removeAttribute("aria-busy");
    });
  };

  Browser.prototype.showMore = function () {
    var self_ = this, run = this.run;
    this.shown += SHOW;
    this.more.disabled = true;
    this.root.setAttribute("aria-busy", "true");
    this.scan(this.shown + 1, run).then(function () {
      if (run !== self_.run) return;
      self_.render();
      self_.root.removeAttribute("aria-busy");
    }, function (err) {
      if (run !== self_.run) return;
      self_.status.textContent = "More cases could not be loaded (" + err.message + ").";
      self_.root.removeAttribute("aria-busy");
    });
  };

  // Filters set by a link (a pattern, one case id) have no control of their own: say so, and offer
  // to drop them.
  Browser.prototype.pinned = function () {
    var box = this.root.querySelector(".case-pinned"), f = this.filter, spec = this.spec, self_ = this;
    if (!box) {
      box = el("p", "case-pinned");
      this.status.parentNode.insertBefore(box, this.status);
    }
    box.textContent = "";
    var parts = [];
    if (f.pattern !== "" && spec.patterns[Number(f.pattern)]) {
      var p = spec.patterns[Number(f.pattern)];
      parts.push(["pattern", "Only the pattern “" + (p.text || "no text") + "” of " + spec.groups[p.group].key]);
    }
    if (f.id) parts.push(["id", "Only case " + f.id]);
    box.hidden = !parts.length;
    parts.forEach(function (part) {
      box.appendChild(el("span", null, part[1] + " "));
      var clear = el("button", "linkish", "show all");
      clear.type = "button";
      clear.addEventListener("click", function () {
        self_.form.elements[part[0]].value = "";
        history.replaceState(null, "", toHash(self_.spec, self_.form));
        self_.apply();
      });
      box.appendChild(clear);
    });
  };

  Browser.prototype.report = function () {
    var spec = this.spec, n = this.found.length, all = this.scanned >= spec.rowFiles;
    var shown = Math.min(n, this.shown);
    var text;
    if (all) {
      text = n === 0 ? "No case matches." : "Showing " + fmt(shown) + " of " + fmt(n) + " matching case" + (n === 1 ? "" : "s") + " (of " + fmt(spec.n) + ").";
    } else {
      var read = Math.min(spec.n, this.scanned * spec.rowsPerFile);
      text = "Showing " + fmt(shown) + " of " + fmt(n) + (n > shown ? "+" : "") + " matching cases so far (searched " + fmt(read) + " of " + fmt(spec.n) + ").";
    }
    this.status.textContent = text;
  };

  Browser.prototype.render = function () {
    var have = this.list.children.length, upto = Math.min(this.found.length, this.shown);
    for (var i = have; i < upto; i++) this.list.appendChild(this.item(this.found[i][0], this.found[i][1]));
    this.report();
    var more = this.found.length > this.shown || (this.scanned < this.spec.rowFiles);
    this.more.hidden = !more;
    this.more.disabled = false;
    this.more.textContent = this.found.length > this.shown ? "Show " + SHOW + " more cases" : "Search further";
  };

  // One side's outcome: each failed check and each check that changed against the other side named,
  // the checks that simply passed counted in one chip. A check is passed when it is true, or false
  // for a check where lower is better (truncated): the chip then reads "not truncated".
  Browser.prototype.chips = function (code, other) {
    var spec = this.spec, box = el("span", "chips"), self_ = this, passed = [];
    function name(check, ok) { return self_.negative[check] && ok ? "not " + check : check; }
    spec.checks.forEach(function (check, k) {
      var ok = self_.passes(code.charAt(k), check);
      if (ok === null) return;
      var was = other ? self_.passes(other.charAt(k), check) : null;
      var changed = was !== null && was !== ok;
      if (ok && !changed) {
        passed.push(name(check, ok));
        return;
      }
      var chip = el("span", "chip " + (ok ? "pass" : "fail") + (changed ? " changed" : ""));
      chip.appendChild(el("span", "mark", ok ? "✓ " : "✗ ")).setAttribute("aria-hidden", "true");
      chip.appendChild(document.createTextNode(name(check, ok)));
      chip.appendChild(el("span", "visually-hidden", ok ? " passed" : " failed"));
      if (changed) chip.appendChild(el("span", "chip-was", ok ? " (was ✗)" : " (was ✓)"));
      box.appendChild(chip);
    });
    if (passed.length) {
      var all = passed.length === spec.checks.length;
      var chip = el("span", "chip pass");
      chip.appendChild(el("span", "mark", "✓ ")).setAttribute("aria-hidden", "true");
      chip.appendChild(document.createTextNode(all ? "all " + passed.length + " checks" : passed.length === 1 ? passed[0] : passed.length + " more passed"));
      chip.title = "passed: " + passed.join(", ");
      if (!all && passed.length > 1) chip.appendChild(el("span", "visually-hidden", ": " + passed.join(", ")));
      box.appendChild(chip);
    }
    return box;
  };

  Browser.prototype.item = function (index, row) {
    var spec = this.spec, self_ = this;
    var item = el("div", "case-item" + (row[3] >= 0 ? " failing" : ""));
    item.setAttribute("role", "listitem");
    var head = el("div", "ci-head");
    var toggle = el("button", "ci-toggle");
    toggle.type = "button";
    toggle.setAttribute("aria-expanded", "false");
    toggle.appendChild(el("span", "cid", row[0]));
    head.appendChild(toggle);
    var meta = [];
    if (row[1] >= 0) meta.push(spec.splits[row[1]]);
    if (row[2] >= 0) meta.push(spec.families[row[2]]);
    if (meta.length) head.appendChild(el("span", "ci-meta", meta.join(" · ")));
    if (row[3] >= 0) head.appendChild(el("span", "badge fail", spec.groups[row[3]].key));
    item.appendChild(head);
    var here = el("div", "ci-side");
    here.appendChild(el("span", "ci-label", spec.baseline ? "This run" : "Outcome"));
    here.appendChild(this.chips(row[5], spec.baseline ? row[6] : null));
    item.appendChild(here);
    if (spec.baseline) {
      var base = el("div", "ci-side");
      base.appendChild(el("span", "ci-label", "Baseline"));
      if (row[6] === null) base.appendChild(el("span", "note", "not in the baseline"));
      else base.appendChild(this.chips(row[6], null));
      item.appendChild(base);
    }
    if (row[4] >= 0 && spec.patterns[row[4]] && spec.patterns[row[4]].text) {
      item.appendChild(el("p", "ci-pattern", spec.patterns[row[4]].text));
    }
    var detail = el("div", "ci-detail");
    detail.hidden = true;
    item.appendChild(detail);
    toggle.addEventListener("click", function () {
      var open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", open ? "false" : "true");
      detail.hidden = open;
      if (!open && !detail.hasChildNodes()) self_.fillDetail(detail, index, row);
    });
    return item;
  };

  function textBlock(label, text, cut) {
    var box = el("div", "ci-text");
    box.appendChild(el("div", "field-label", label));
    if (text === null || text === undefined) {
      box.appendChild(el("p", "note", "not recorded"));
      return box;
    }
    var lines = String(text).split("\n");
    var pre = el("pre", "text", lines.length > 30 ? lines.slice(0, 30).join("\n") : text);
    box.appendChild(pre);
    if (lines.length > 30) {
      var all = el("button", "linkish", "show all " + fmt(lines.length) + " lines");
      all.type = "button";
      all.addEventListener("click", function () { pre.textContent = text; all.remove(); });
      box.appendChild(all);
    }
    if (cut) box.appendChild(el("p", "note", "The first " + fmt(cut) + " characters; the rest is in the probe file."));
    return box;
  }

  Browser.prototype.fillDetail = function (detail, index, row) {
    var self_ = this, spec = this.spec;
    detail.appendChild(el("p", "note", "Loading…"));
    this.loadTexts(index, index + 1).then(function () {
      detail.textContent = "";
      var t = self_.text(index);
      if (!t) {
        detail.appendChild(el("p", "note", "No prompt, expected or actual text was recorded for this case."));
        return;
      }
      var cut = t[6] || [];
      function capped(name) { return cut.indexOf(name) !== -1 ? spec.textCap : 0; }
      var grid = el("div", "ci-texts");
      if (row[7]) grid.appendChild(el("p", "note wide", spec.source + ", line " + row[7]));
      if (t[0] !== null) grid.appendChild(textBlock("Prompt", t[0], capped("prompt"))).className += " wide";
      grid.appendChild(textBlock("Expected", t[1], capped("expected")));
      grid.appendChild(textBlock("Actual", t[2] === 1 ? t[1] : t[2], capped("actual")));
      if (t[2] === 1) grid.lastChild.appendChild(el("p", "note", "the same as expected"));
      if (t[3]) {
        var note = el("div", "ci-text wide");
        note.appendChild(el("div", "field-label", "Note"));
        note.appendChild(el("p", null, t[3]));
        grid.appendChild(note);
      }
      if (t[4] && t[4].length) {
        var other = el("div", "ci-text wide");
        other.appendChild(el("div", "field-label", "Other fields"));
        t[4].forEach(function (kv) { other.appendChild(el("div", "kv", kv[0] + " = " + kv[1])); });
        grid.appendChild(other);
      }
      if (t[5]) {
        var render = el("div", "ci-text wide");
        render.appendChild(el("div", "field-label", "Render"));
        render.appendChild(el("p", "kv", t[5]));
        grid.appendChild(render);
      }
      detail.appendChild(grid);
    }, function (err) {
      detail.textContent = "";
      detail.appendChild(el("p", "note", "The texts could not be loaded (" + err.message + ")."));
    });
  };

  // The browser is wired at once (its form, the links into it, the hash) and filled only when it is
  // needed: when it nears the viewport, when the URL's hash leads into it, or when a link, a filter
  // or a hash change asks for cases. Its first fill (loading the rows file, listing the first cases)
  // is one of the longest tasks of a run page's load, and most readers open the page at its top.
  Browser.prototype.begin = function () {
    if (this.started) return;
    if (this.watch) this.watch.disconnect();
    if (!this.fromHash(true)) this.apply();
  };

  // whether the URL's hash is the browser (#cases, #cases?<filter>) or something inside it
  Browser.prototype.leadsHere = function () {
    var hash = location.hash.slice(1), target = null;
    if (hash === "cases" || hash.indexOf("cases?") === 0) return true;
    try { target = hash ? document.getElementById(decodeURIComponent(hash)) : null; } catch (err) { target = null; }
    return !!target && this.root.contains(target);
  };

  Browser.prototype.start = function () {
    var self_ = this, form = this.form, spec = this.spec, timer = null;
    this.started = false;
    form.hidden = false;
    var nojs = this.root.querySelector(".case-nojs");
    if (nojs) nojs.hidden = true;
    var linkNote = el("p", "note warn case-link");
    linkNote.setAttribute("role", "status");
    linkNote.hidden = true;
    this.status.parentNode.insertBefore(linkNote, this.status);
    function changed() {
      linkNote.hidden = true;
      history.replaceState(null, "", toHash(spec, form));
      self_.apply();
    }
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    Array.prototype.forEach.call(form.elements, function (input) {
      if (input.type === "search") {
        input.addEventListener("input", function () {
          clearTimeout(timer);
          timer = setTimeout(changed, 200);
        });
      } else {
        input.addEventListener("change", changed);
      }
    });
    this.more.addEventListener("click", function () { self_.showMore(); });
    function fromHash(scroll) {
      var link = hashValues(spec, form);
      if (!link) return false;
      linkNote.textContent = link.unknown.length ?
        "This link asks for " + link.unknown.join(", ") + ", which this run's cases do not have; that part of it is not applied." : "";
      linkNote.hidden = !link.unknown.length;
      var done = self_.apply(link.values);
      if (scroll) {
        // the browser's heading at the top of the window (focus alone scrolls it just into view), once
        // the first cases are in: scrolled there first, the list filling in would move what is in view
        self_.root.focus({ preventScroll: true });
        done.then(function () { self_.root.scrollIntoView({ block: "start" }); });
      }
      return true;
    }
    this.fromHash = fromHash;
    window.addEventListener("hashchange", function () { if (!fromHash(true) && self_.leadsHere()) self_.begin(); });
    // links into the browser (a group, a pattern, one case) carry their filter in data-cases and lead
    // to the browser's heading without the script; with it they become #cases?<filter>, so they can be
    // copied or opened in a new tab, and a plain click applies the filter even when the hash is already
    // that one (no hashchange then)
    function linksIn(root) {
      Array.prototype.forEach.call(root.querySelectorAll("a[data-cases]"), function (link) {
        var params = new URLSearchParams(link.getAttribute("data-cases"));
        Object.keys(NAMED).forEach(function (k) { if (params.has(k)) params.set(k, nameOfValue(spec, k, params.get(k))); });
        link.setAttribute("href", "#cases?" + params.toString());
      });
    }
    linksIn(document);
    // a failure group drawn when the reader comes near it (obs.js `drawLater`)
    document.addEventListener("obs:drawn", function (e) { linksIn(e.target); });
    document.addEventListener("click", function (e) {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      var link = e.target.closest ? e.target.closest("a[data-cases]") : null;
      if (!link) return;
      e.preventDefault();
      history.pushState(null, "", link.getAttribute("href"));
      fromHash(true);
    });
    if (this.leadsHere() || typeof IntersectionObserver !== "function") {
      this.begin();
      return;
    }
    // a screen ahead of the reader, so the first cases are listed by the time the browser is in view
    this.watch = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) self_.begin();
    }, { rootMargin: "100% 0px 100% 0px" });
    this.watch.observe(this.root);
  };

  // ------------------------------------------------------------- two systems, item by item
  // A campaign's `paired:` systems: every item with A's and B's outcome, from the pair's data file
  // (paired-<k>.js beside the page), filtered by agreement ("where they disagree" first) and by id.

  function loadItems(spec) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = spec.file;
      script.onload = function () {
        var list = self.OBS_DATA || [];
        for (var i = list.length - 1; i >= 0; i--) {
          if (list[i] && list[i].schema === "obs.paired/1" && list[i].key === spec.key) {
            inflate(list.splice(i, 1)[0]).then(resolve, reject);
            script.remove();
            return;
          }
        }
        reject(new Error("no items in " + script.src));
      };
      script.onerror = function () { reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
  }

  function outcomeCell(label, value) {
    var td = el("td");
    td.setAttribute("data-label", label);
    if (value === null) {
      td.appendChild(el("span", "note", "not in this file"));
      return td;
    }
    var chip = el("span", "chip " + (value ? "pass" : "fail"));
    chip.appendChild(el("span", null, value ? "✓ " : "✗ ")).setAttribute("aria-hidden", "true");
    chip.appendChild(document.createTextNode(value ? "right" : "wrong"));
    td.appendChild(chip);
    return td;
  }

  function PairedView(root, spec) {
    this.root = root;
    this.spec = spec;
    this.form = root.querySelector("form.paired-filters");
    this.status = root.querySelector(".case-status");
    this.table = root.querySelector("table.paired-items");
    this.body = this.table.tBodies[0];
    this.more = root.querySelector("[data-more]");
    this.items = [];
  }

  PairedView.prototype.keep = function (row, q, agree) {
    if (q && String(row[0]).toLowerCase().indexOf(q) === -1) return false;
    var a = row[1], b = row[2], paired = a !== null && b !== null;
    switch (agree) {
      case "differ": return paired && a !== b;
      case "onlyA": return paired && a === 1 && b === 0;
      case "onlyB": return paired && a === 0 && b === 1;
      case "both": return paired && a === 1 && b === 1;
      case "neither": return paired && a === 0 && b === 0;
      case "unpaired": return !paired;
      default: return true;
    }
  };

  PairedView.prototype.apply = function () {
    var q = this.form.elements.q.value.trim().toLowerCase(), agree = this.form.elements.agree.value, self_ = this;
    this.found = this.items.filter(function (row) { return self_.keep(row, q, agree); });
    this.shown = 0;
    this.body.textContent = "";
    this.render(SHOW * 2);
  };

  PairedView.prototype.render = function (more) {
    var spec = this.spec, upto = Math.min(this.found.length, this.shown + more), frag = document.createDocumentFragment();
    for (var i = this.shown; i < upto; i++) {
      var row = this.found[i], tr = document.createElement("tr");
      var id = el("th", null, row[0]);
      id.scope = "row";
      tr.appendChild(id);
      tr.appendChild(outcomeCell("A · " + spec.labelA, row[1]));
      tr.appendChild(outcomeCell("B · " + spec.labelB, row[2]));
      frag.appendChild(tr);
    }
    this.body.appendChild(frag);
    this.shown = upto;
    this.table.hidden = this.found.length === 0;
    this.status.textContent = this.found.length
      ? "Showing " + fmt(this.shown) + " of " + fmt(this.found.length) + " item" + (this.found.length === 1 ? "" : "s") + " (of " + fmt(spec.n) + ")."
      : "No item matches.";
    this.more.hidden = this.shown >= this.found.length;
  };

  PairedView.prototype.start = function () {
    var self_ = this, timer = null;
    loadItems(this.spec).then(function (items) {
      self_.items = items;
      self_.form.hidden = false;
      var nojs = self_.root.querySelector(".case-nojs");
      if (nojs) nojs.hidden = true;
      self_.form.addEventListener("submit", function (e) { e.preventDefault(); });
      self_.form.elements.q.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(function () { self_.apply(); }, 150);
      });
      self_.form.elements.agree.addEventListener("change", function () { self_.apply(); });
      self_.more.addEventListener("click", function () { self_.render(SHOW * 5); });
      self_.apply();
      self_.root.setAttribute("data-ready", "");
    }, function (err) {
      self_.status.textContent = "The items could not be loaded (" + err.message + ").";
      self_.root.setAttribute("data-ready", "");
    });
  };

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-paired-view]"), function (root) {
      var data = root.querySelector("script.paired-spec");
      var spec;
      try {
        spec = JSON.parse(data.textContent);
      } catch (e) {
        return;
      }
      if (spec && spec.schema === "obs.paired/1") new PairedView(root, spec).start();
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.querySelector("[data-case-browser]");
    var data = document.getElementById("case-spec");
    if (!root || !data) return;
    var spec;
    try {
      spec = JSON.parse(data.textContent);
    } catch (e) {
      return;
    }
    if (!spec || spec.schema !== SCHEMA) return;
    new Browser(root, spec).start();
  });
})();
