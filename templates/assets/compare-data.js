/* obs compare.html: the page's runs, for compare.js, overlay.js and runs-table.js (loaded before them).

   A site of up to a few thousand runs carries them in the page (#compare-data, a JSON block). A larger
   one keeps the page small: its runs are in data files of 10,000 runs each beside the page
   (compare-data-1.js, ...: each pushes one value onto OBS_DATA, its data gzip + base64, as every obs
   data file), listed by the element with data-compare-src; they load side by side and are joined in
   their order. Either way window.obsCompareData is a promise of the same object: the FieldTable's
   keys, axes and values (from the first file) and every run. */
(function () {
  "use strict";
  var inline = document.getElementById("compare-data");
  if (inline) {
    window.obsCompareData = Promise.resolve(JSON.parse(inline.textContent));
    return;
  }
  var holder = document.querySelector("[data-compare-src]");
  if (!holder) return;

  function inflate(item) {
    var bin = atob(item.gz), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function load(src, part) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = function () {
        var list = self.OBS_DATA || [];
        for (var i = list.length - 1; i >= 0; i--) {
          if (list[i] && list[i].schema === "obs.compare/1" && list[i].part === part) {
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

  var srcs = holder.getAttribute("data-compare-src").split(" ");
  window.obsCompareData = Promise.all(srcs.map(function (src, i) { return load(src, i + 1); })).then(function (parts) {
    var data = parts[0];
    data.runs = [].concat.apply([], parts.map(function (p) { return p.runs; }));
    return data;
  });
  window.obsCompareData.catch(function (err) {
    holder.textContent = "The runs of this page could not be loaded (" + err.message + ").";
    holder.hidden = false;
  });
})();
