"""The fixed parts of the page that ``chaingrad.to_html`` writes: its CSS, its script
(the step/reset/play controls) and the HTML around them. Kept apart so that ``html.py``
holds only what depends on the graph."""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 16px; color: #222; }
#controls button { font-size: 15px; padding: 4px 14px; margin-right: 6px; }
#status { font-family: monospace; margin: 10px 0; }
#scroll { overflow: auto; max-height: 75vh; border: 1px solid #ddd; }
#scroll.fit svg { width: 100%; height: auto; }
#graph text { font-family: monospace; font-size: 12px; text-anchor: middle; }
.value rect { fill: #fff; stroke: #444; }
.value line { stroke: #444; }
.op ellipse { fill: #eef; stroke: #446; }
.edge { fill: none; stroke: #888; stroke-width: 1.2; }
.value.current rect, .op.current ellipse { fill: #ffd666; stroke: #c77700; stroke-width: 2; }
.value.updated rect { fill: #d6f5d6; stroke: #2a8a2a; stroke-width: 2; }
.edge.active { stroke: #c77700; stroke-width: 2.2; }
#log { font-family: monospace; font-size: 13px; white-space: pre; }
#log .now { background: #fff3c4; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("chaingrad-data").textContent);
  var steps = data.steps, done = 0, timer = null, grads = {};
  var byId = function (id) { return document.getElementById(id); };
  function fmt(x) {
    var a = Math.abs(x);
    if (x === 0 || (a >= 1e-4 && a < 1e6)) return x.toFixed(4);
    return x.toExponential(4).replace(/e([+-])(\d)$/, "e$10$2");
  }
  // scroll the graph's box (not the page, so the buttons stay put) to bring el in sight;
  // centred, the node whose _backward runs and its inputs are seen together
  function reveal(el, centre) {
    var box = byId("scroll"), b = box.getBoundingClientRect(), r = el.getBoundingClientRect();
    if (centre) box.scrollLeft += (r.left + r.right - b.left - b.right) / 2;
    else if (r.right > b.right) box.scrollLeft += r.right - b.right + 8;
    if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom + 8;
    else if (r.top < b.top) box.scrollTop -= b.top - r.top + 8;
  }
  function show() {
    data.ids.forEach(function (id) {
      var g = byId(id), x = grads[id];
      g.setAttribute("data-grad", String(x));
      g.querySelector(".grad").textContent = typeof x === "string" ? x : "grad " + fmt(x);
    });
    document.querySelectorAll(".current, .updated, .active").forEach(function (e) {
      e.classList.remove("current", "updated", "active");
    });
    var status = byId("status"), log = byId("log");
    status.setAttribute("data-step", String(done));
    log.textContent = "";
    if (done === 0) {
      status.textContent = "seed: " + byId(data.root).getAttribute("data-name") +
        ".grad = " + (data.seed || fmt(1)) + "; press step to run the first _backward";
      byId(data.root).classList.add("updated");
      reveal(byId(data.root), false);
    } else {
      var s = steps[done - 1];
      byId(s.node).classList.add("current");
      byId(s.node + "_op").classList.add("current");
      s.updates.forEach(function (u) { byId(u.id).classList.add("updated"); });
      document.querySelectorAll('.edge[data-to="' + s.node + '_op"]').forEach(function (e) {
        e.classList.add("active");
      });
      status.textContent = s.title + (done === steps.length ? "  (done)" : "");
      reveal(byId(s.node + "_op"), true);
    }
    steps.slice(0, done).forEach(function (s, i) {
      var div = document.createElement("div");
      div.textContent = s.title + "\n" + s.updates.map(function (u) {
        return "    " + u.text + "    (" + u.change + ")";
      }).join("\n");
      if (i === done - 1) div.className = "now";
      log.appendChild(div);
    });
    byId("step").disabled = done === steps.length;
    byId("play").textContent = timer === null ? "play" : "pause";
  }
  function step() {
    if (done >= steps.length) return false;
    steps[done].updates.forEach(function (u) { grads[u.id] = u.after; });
    done += 1;
    show();
    return true;
  }
  function stop() { if (timer !== null) { clearInterval(timer); timer = null; } }
  function reset() {
    stop();
    done = 0;
    data.ids.forEach(function (id) { grads[id] = data.start ? data.start[id] : 0; });
    if (!data.start) grads[data.root] = 1;
    show();
  }
  function play() {
    if (timer !== null) { stop(); show(); return; }
    if (done >= steps.length) reset();
    var ms = Number(document.body.getAttribute("data-interval")) || 700;
    timer = setInterval(function () {
      if (!step() || done >= steps.length) { stop(); show(); }
    }, ms);
    show();
  }
  byId("step").addEventListener("click", function () { stop(); step(); });
  byId("reset").addEventListener("click", reset);
  byId("play").addEventListener("click", play);
  byId("fit").addEventListener("click", function () {  // the whole graph in the window
    var fit = byId("scroll").classList.toggle("fit");
    byId("fit").textContent = fit ? "actual size" : "fit to width";
  });
  reset();
})();
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{style}</style>
</head>
<body data-interval="700">
<h2>{title}</h2>
<p>Each step runs one node's <code>_backward</code>, in reverse topological order: the node
(yellow) adds <code>out.grad &times; local derivative</code> into its inputs' gradients
(green) with <code>+=</code>.</p>
<div id="controls"><button id="step">step</button><button id="reset">reset</button><button
id="play">play</button><button id="fit">fit to width</button></div>
<div id="status" data-step="0" data-steps="{nsteps}"></div>
<div id="scroll">{svg}</div>
<div id="log"></div>
<script type="application/json" id="chaingrad-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
