/* obs: preload the four web fonts every page uses, so text is drawn once in its own font instead of
   swapping from a fallback and moving everything below it (obs.css: font-display: block). A font
   preload is a CORS request, which Chromium refuses from file://, so it is made only over http(s);
   from disk the fonts arrive at once anyway. Runs before the stylesheet, from a file (strict CSP). */
(function () {
  "use strict";
  // A link into a run page (a fragment): the page stays invisible until obs.js has drawn the blocks it
  // draws only near the window (`drawLater`), so it opens where the link says and nothing moves after
  // (obs.css shows it after 2 s whatever happens).
  if (location.hash.length > 1) document.documentElement.setAttribute("data-obs-hold", "");
  if (location.protocol !== "http:" && location.protocol !== "https:") return;
  var script = document.currentScript;
  if (!script || !script.src) return;
  var base = script.src.replace(/[^\/]*$/, "fonts/");
  ["inter-latin-400-normal", "inter-latin-600-normal", "inter-latin-700-normal",
   "jetbrains-mono-latin-400-normal"].forEach(function (name) {
    var link = document.createElement("link");
    link.rel = "preload";
    link.as = "font";
    link.type = "font/woff2";
    link.crossOrigin = "anonymous";
    link.href = base + name + ".woff2";
    document.head.appendChild(link);
  });
})();
