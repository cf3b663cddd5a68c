/* obs compare.html: the config diff of any two runs, computed from the page's own data.
   The data block holds a FieldTable: per key its distinct values (as the site shows them) and, per
   run, an index into them (-1: not set). Two runs differ on a key exactly when their indices do.
   Everything is written with textContent: values come from run configs and are never markup. */
(function () {
  "use strict";
  var pick = document.getElementById("compare-pick");
  if (!window.obsCompareData || !pick) return;
  window.obsCompareData.then(start);

  function start(data) {
    var bySlug = {}, byId = {};
    data.runs.forEach(function (r) { bySlug[r.slug] = r; byId[r.id] = r; });
    var selA = document.getElementById("compare-a");
    var selB = document.getElementById("compare-b");
    // a site of very many runs picks each run by typing its id (a search box), not from a list of every run
    var typed = selA.tagName === "INPUT";
    function runOf(input) { return bySlug[input.value] || (typed ? byId[input.value] : undefined); }
    var body = document.querySelector("#compare-table tbody");

    function cell(tag, cls, text, note, label) {
      var el = document.createElement(tag);
      if (cls) el.className = cls;
      if (label) el.setAttribute("data-label", label);  // the row's label on a phone, where the table reflows
      if (tag === "th") el.scope = "row";
      if (note) {
        var span = document.createElement("span");
        span.className = "note";
        span.textContent = note;
        el.appendChild(span);
      } else {
        el.textContent = text;
      }
      return el;
    }

    function runLink(run) {
      var a = document.createElement("a");
      a.href = "runs/" + encodeURIComponent(run.slug) + "/index.html";
      a.textContent = run.id;
      return a;
    }

    function render(remember) {
      var a = runOf(selA), b = runOf(selB);
      if (typed) {
        [selA, selB].forEach(function (input) {
          input.setCustomValidity(runOf(input) ? "" : "no run of this site has this id");
        });
      }
      if (!a || !b) {
        document.getElementById("compare-status").textContent = "No run of this site has the id “" + (a ? selB : selA).value + "”.";
        return;
      }
      var rows = document.createDocumentFragment(), differ = 0, same = 0;
      data.keys.forEach(function (key, k) {
        var x = a.cells[k], y = b.cells[k];
        if (x === y) { if (x !== -1) same += 1; return; }
        differ += 1;
        var tr = document.createElement("tr");
        tr.appendChild(cell("th", "kv", key));
        tr.appendChild(cell("td", "axis", data.axes[k], data.axes[k] ? null : "unassigned", "Axis"));
        tr.appendChild(cell("td", "kv", x === -1 ? "" : data.values[k][x], x === -1 ? "not set" : null, "Reference"));
        tr.appendChild(cell("td", "kv changed", y === -1 ? "" : data.values[k][y], y === -1 ? "not set" : null, "Compared"));
        rows.appendChild(tr);
      });
      body.replaceChildren(rows);
      if (window.obs && window.obs.remeasure) window.obs.remeasure();  // a wider table may now scroll
      document.getElementById("compare-status").textContent =
        "Keys that differ: " + differ + " · the same: " + same;
      document.getElementById("compare-a-id").textContent = a.id;
      document.getElementById("compare-b-id").textContent = b.id;
      var title = document.getElementById("compare-title");
      title.replaceChildren(runLink(a), document.createTextNode(" → "), runLink(b));
      if (remember && location.protocol !== "file:") {  // a link to the pair; file: pages may not rewrite their URL
        var query = new URLSearchParams(location.search);  // keeps the overlay's runs and metric
        query.set("a", a.slug);
        query.set("b", b.slug);
        history.replaceState(null, "", "?" + query.toString() + location.hash);
      }
    }

    var params = new URLSearchParams(location.search);
    var unknown = [];
    [[selA, params.get("a")], [selB, params.get("b")]].forEach(function (pair) {
      if (pair[1] && bySlug[pair[1]]) pair[0].value = typed ? bySlug[pair[1]].id : pair[1];
      else if (pair[1]) unknown.push("“" + pair[1] + "”");
    });
    if (unknown.length) {  // a run in the link that this site does not have is said, not dropped
      var note = document.createElement("p");
      note.className = "note warn";
      note.setAttribute("role", "status");
      note.setAttribute("data-compare-link", "");
      note.textContent = "This link names " + unknown.join(" and ") + ", not a run of this site; showing the pair below instead.";
      pick.parentNode.insertBefore(note, pick);
    }
    function pickedByReader() { render(true); }
    selA.addEventListener("change", pickedByReader);
    selB.addEventListener("change", pickedByReader);
    document.getElementById("compare-swap").addEventListener("click", function () {
      var v = selA.value;
      selA.value = selB.value;
      selB.value = v;
      render(true);
    });
    pick.hidden = false;
    render(false);
  }
})();
