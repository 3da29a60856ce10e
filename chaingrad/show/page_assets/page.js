// The step-by-step page of chaingrad.to_html. It shows what Python computed (the JSON in
// #chaingrad-data: each step's texts, each gradient before and after) and computes nothing
// about derivatives itself: a position on the timeline picks which texts are shown.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("chaingrad-data").textContent);
  const byId = (id) => document.getElementById(id);
  const svg = byId("graph"), box = byId("scroll");
  const naturalWidth = Number(svg.getAttribute("width"));
  const naturalHeight = Number(svg.getAttribute("height"));
  const MIN_ZOOM = 10 / data.fontPx;  // however the view zooms (fit too): text of 10 px or more
  const MAX_ZOOM = 2.5;
  const MARGIN = 10;  // kept free around what the view follows
  // fit: while "fit" is pressed (until it is pressed again, or a zoom by hand), the whole
  // drawing is kept in view if it can be at 10 px text, else it is drawn at 10 px text and
  // the view follows the step; unfit: the zoom to go back to then
  const state = { mode: "correct", forward: false, at: 0, timer: null, zoom: 1, fit: false,
                  unfit: 1 };

  // every element the page changes, found once
  const nodes = {};
  data.ids.forEach((id) => {
    const g = byId(id);
    nodes[id] = { g: g, op: byId(id + "_op"), data: g.querySelector(".data"),
                  grad: g.querySelector(".grad"), badge: g.querySelector(".badge") };
  });
  const edgesInto = {}, edgesOutOf = {};
  document.querySelectorAll("#graph .edge").forEach((edge) => {
    (edgesInto[edge.dataset.to] = edgesInto[edge.dataset.to] || []).push(edge);
    (edgesOutOf[edge.dataset.from] = edgesOutOf[edge.dataset.from] || []).push(edge);
  });

  // ---- the timeline: [start, forward steps], seed, backward steps ----

  function backwardSteps() {
    return state.mode === "naive" ? data.naive.steps : data.steps;
  }

  function timeline() {
    const entries = [];
    if (state.forward) {
      entries.push({ kind: "start" });
      data.forward.forEach((f, i) => entries.push({ kind: "forward", f: f, index: i + 1 }));
    }
    entries.push({ kind: "seed" });
    backwardSteps().forEach((s, i) => entries.push({ kind: "backward", s: s, index: i + 1 }));
    return entries;
  }

  // which data are known and which gradient texts are shown after entries[0..at]
  function shownAt(entries, at) {
    const known = {}, grads = {};
    data.ids.forEach((id) => { known[id] = true; grads[id] = data.nodes[id].start; });
    if (state.forward) data.forward.forEach((f) => { known[f.node] = false; });
    for (let i = 0; i <= at; i++) {
      const e = entries[i];
      if (e.kind === "forward") known[e.f.node] = true;
      if (e.kind === "seed") {
        data.forward.forEach((f) => { known[f.node] = true; });
        grads[data.root] = data.seed;
      }
      if (e.kind === "backward") e.s.updates.forEach((u) => { grads[u.id] = u.grad; });
    }
    return { known: known, grads: grads };
  }

  // ---- showing one position ----

  function render() {
    const entries = timeline(), last = entries.length - 1;
    state.at = Math.max(0, Math.min(state.at, last));
    const e = entries[state.at], shown = shownAt(entries, state.at);
    const marks = {};  // id -> [[class, badge, what a screen reader hears], ...]
    const mark = (id, cls, badge, said) => {
      (marks[id] = marks[id] || []).push([cls, badge, said]);
    };
    let running = null, focus = [];
    if (e.kind === "forward") {
      running = e.f.node;
      mark(running, "running", "computing", "computed in this step");
      e.f.inputs.forEach((id) => mark(id, "input", "input", "an input of this step"));
      focus = [running].concat(e.f.inputs);
    } else if (e.kind === "seed") {
      mark(data.root, "updated", "seed", "seeded: " + data.seedText);
      focus = [data.root];
    } else if (e.kind === "backward") {
      running = e.s.node;
      mark(running, "running", "running _backward", "running its _backward in this step");
      e.s.updates.forEach((u) => {
        if (!marks[u.id]) mark(u.id, "updated", "updated +=", "its grad is updated in this step");
      });
      focus = [running].concat(e.s.updates.map((u) => u.id));
    }
    const finished = state.at === last && e.kind === "backward";
    if (finished && state.mode === "naive") {
      data.naive.differ.forEach((d) => mark(d.id, "differs", d.badge, d.badge));
    }
    data.ids.forEach((id) => {
      const n = nodes[id], info = data.nodes[id], grad = shown.grads[id];
      const own = marks[id] || [];
      n.g.setAttribute("class", "value " + own.map((m) => m[0]).join(" ") +
                       (shown.known[id] ? "" : " unknown"));
      n.g.setAttribute("data-grad", grad[0]);
      n.grad.textContent = grad[1];
      n.data.textContent = shown.known[id] ? info.data : "data ?";
      const differs = own.filter((m) => m[0] === "differs");  // says it all, and briefly
      setBadge(n.badge, (differs.length ? differs : own).map((m) => m[1]).join(" · "));
      n.g.setAttribute("aria-label", info.name + ": " +
        (shown.known[id] ? info.data : "data not computed yet") + ", " + grad[1] +
        own.map((m) => ", " + m[2]).join(""));
      if (n.op) n.op.setAttribute("class", id === running ? "op running" : "op");
    });
    document.querySelectorAll("#graph .edge.active").forEach((x) => x.classList.remove("active"));
    if (running) {
      (edgesInto[running + "_op"] || []).concat(edgesOutOf[running + "_op"] || [])
        .forEach((x) => x.classList.add("active"));
      focus.push(running + "_op");
    }
    renderText(entries, e, finished);
    renderLog(entries);
    const status = byId("status");
    status.setAttribute("data-step", String(state.at));
    status.setAttribute("data-steps", String(last));
    byId("back").disabled = state.at === 0;
    byId("step").disabled = state.at === last;
    byId("goto").max = String(last);
    byId("goto").value = String(state.at);
    byId("play").textContent = state.timer === null ? "play" : "pause";
    byId("fit").setAttribute("aria-pressed", String(state.fit));
    if (state.fit) setZoom(wholeZoom());  // the texts above may have taken room
    follow(focus);  // (a fitted drawing that is whole is in view: nothing to do)
  }

  // a badge starts above its box's left edge, moved left if it would leave the drawing
  function setBadge(badge, text) {
    if (badge.textContent === text) return;
    badge.textContent = text;
    if (!badge.dataset.x) badge.dataset.x = badge.getAttribute("x");
    const x = Number(badge.dataset.x);
    const room = naturalWidth - 2 - (text ? badge.getComputedTextLength() : 0);
    badge.setAttribute("x", String(Math.max(0, Math.min(x, room))));
  }

  function renderText(entries, e, finished) {
    const last = entries.length - 1;
    byId("count").textContent = "step " + state.at + " of " + last;
    const what = byId("what"), formula = byId("formula"), note = byId("note");
    formula.textContent = "";
    note.textContent = "";
    const line = (cls, text) => {
      const div = document.createElement("div");
      div.className = cls;
      div.textContent = text;
      formula.appendChild(div);
      return div;
    };
    const steps = backwardSteps();
    // "step k of N" counts every entry; say which backward step it is when they differ
    const kind = state.mode === "naive" ? "naive call " : state.forward ? "backward " : "";
    if (e.kind === "start") {
      what.textContent = "forward pass: the leaves hold their data; step to compute the rest";
    } else if (e.kind === "forward") {
      what.textContent = "forward " + e.index + " of " + data.forward.length;
      line("update", e.f.text);
    } else if (e.kind === "seed") {
      what.textContent = "seed: " + data.seedText;
      line("update", steps.length ? "press step (\u2192) to run the first _backward"
                                  : "nothing to run: the root is a leaf");
    } else {
      what.textContent = (kind ? kind + e.index + " of " + steps.length + ": " : "") +
        e.s.title + (finished ? "  (done)" : "");
      e.s.updates.forEach((u) => {
        const div = line("update", u.text);
        const change = document.createElement("span");
        change.className = "change";
        change.textContent = u.change;
        div.appendChild(document.createTextNode(" "));
        div.appendChild(change);
      });
    }
    if (finished && state.mode === "naive") {
      note.textContent = data.naive.summary;
      const list = document.createElement("ul");
      data.naive.differ.forEach((d) => {
        const item = document.createElement("li");
        item.textContent = d.text;
        list.appendChild(item);
      });
      if (data.naive.differ.length) note.appendChild(list);
    }
  }

  function renderLog(entries) {
    const log = byId("log");
    log.textContent = "";
    if (!byId("history").open) return;  // built only when shown
    entries.slice(0, state.at + 1).forEach((e, i) => {
      const div = document.createElement("div");
      if (e.kind === "forward") div.textContent = "forward " + e.index + ": " + e.f.text;
      else if (e.kind === "seed") div.textContent = "seed: " + data.seedText;
      else if (e.kind === "start") div.textContent = "start of the forward pass";
      else {
        div.textContent = "step " + e.index + ": " + e.s.title + "\n" + e.s.updates.map(
          (u) => "    " + u.text + "    (" + u.change + ")").join("\n");
      }
      if (i === state.at) div.className = "now";
      log.appendChild(div);
    });
  }

  // ---- keeping what the step is about in view ----

  function union(ids) {
    let r = null;
    ids.forEach((id) => {
      const el = byId(id);
      if (!el) return;
      const b = el.getBoundingClientRect();
      r = r ? { left: Math.min(r.left, b.left), top: Math.min(r.top, b.top),
                right: Math.max(r.right, b.right), bottom: Math.max(r.bottom, b.bottom) }
            : { left: b.left, top: b.top, right: b.right, bottom: b.bottom };
    });
    return r;
  }

  function view() {
    const b = box.getBoundingClientRect();
    return { left: b.left + box.clientLeft, top: b.top + box.clientTop,
             width: box.clientWidth, height: box.clientHeight };
  }

  // the step's nodes in view, zooming out if need be (never below MIN_ZOOM); if they
  // cannot all be seen at once, the running node and its op (``ids[0]`` and the last)
  function follow(ids) {
    if (!ids.length) return;
    let r = union(ids), v = view();
    const room = (rect) => Math.min((v.width - 2 * MARGIN) / (rect.right - rect.left),
                                    (v.height - 2 * MARGIN) / (rect.bottom - rect.top));
    if (room(r) < 1 && state.zoom > MIN_ZOOM) {  // too big for the view: zoom out
      setZoom(state.zoom * room(r));
      r = union(ids);
      v = view();
    }
    const fits = r.right - r.left <= v.width - MARGIN && r.bottom - r.top <= v.height - MARGIN;
    if (!fits) r = union([ids[0], ids[ids.length - 1]]);
    const inside = r.left >= v.left + MARGIN / 2 && r.right <= v.left + v.width - MARGIN / 2 &&
      r.top >= v.top + MARGIN / 2 && r.bottom <= v.top + v.height - MARGIN / 2;
    if (inside) return;
    box.scrollLeft += (r.left + r.right) / 2 - (v.left + v.width / 2);
    box.scrollTop += (r.top + r.bottom) / 2 - (v.top + v.height / 2);
  }

  // zoom to z, keeping the centre of the view where it is; text stays 10 px or more
  function setZoom(z) {
    const v = view();
    const cx = (box.scrollLeft + v.width / 2) / state.zoom;
    const cy = (box.scrollTop + v.height / 2) / state.zoom;
    state.zoom = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, z));
    // whole pixels, rounded up: a browser lays out in fractions of a pixel (Chromium in
    // 64ths), which could draw 10 px text at 9.9999 px
    svg.style.width = Math.ceil(naturalWidth * state.zoom) + "px";
    svg.style.height = Math.ceil(naturalHeight * state.zoom) + "px";
    box.scrollLeft = cx * state.zoom - v.width / 2;
    box.scrollTop = cy * state.zoom - v.height / 2;
    svg.setAttribute("data-zoom", state.zoom.toFixed(4));
  }

  // the zoom at which the view holds the whole drawing (at most 1.5); "fit" asks setZoom
  // for it, which stops at MIN_ZOOM: a graph too big for 10 px text in this window scrolls
  function wholeZoom() {
    // the view's size without scroll bars (which a drawing that fits does not have);
    // its border is as wide on each side
    const width = box.offsetWidth - 2 * box.clientLeft;
    const height = box.offsetHeight - 2 * box.clientTop;
    return Math.min((width - 4) / naturalWidth, (height - 4) / naturalHeight, 1.5);
  }

  // at first: the whole drawing if its text can be 10 px or more there, else its whole
  // width (scrolling down) if that can, else actual size
  function startZoom() {
    const whole = wholeZoom(), wide = (view().width - 4) / naturalWidth;
    if (whole >= MIN_ZOOM) return whole;
    return wide >= MIN_ZOOM ? Math.min(wide, 1) : 1;
  }

  function zoomBy(factor) {  // by hand: the view stays where it is, "fit" ends
    state.fit = false;
    byId("fit").setAttribute("aria-pressed", "false");
    setZoom(state.zoom * factor);
  }

  // ---- controls ----

  function go(at) {
    state.at = at;
    render();
  }

  function stop() {
    if (state.timer !== null) {
      clearInterval(state.timer);
      state.timer = null;
    }
  }

  function play() {
    if (state.timer !== null) {
      stop();
      render();
      return;
    }
    if (state.at >= timeline().length - 1) state.at = 0;
    const ms = (Number(document.body.dataset.interval) || 900) / Number(byId("speed").value);
    state.timer = setInterval(() => {
      if (state.at >= timeline().length - 1) stop();
      else state.at += 1;
      render();
    }, ms);
    render();
  }

  function restartPlay() {  // a new speed takes effect at once
    if (state.timer !== null) { stop(); play(); }
  }

  byId("step").addEventListener("click", () => { stop(); go(state.at + 1); });
  byId("back").addEventListener("click", () => { stop(); go(state.at - 1); });
  byId("reset").addEventListener("click", () => { stop(); go(0); });
  byId("play").addEventListener("click", play);
  byId("speed").addEventListener("change", restartPlay);
  const goTo = () => { stop(); go(Math.round(Number(byId("goto").value)) || 0); };
  byId("go").addEventListener("click", goTo);
  byId("goto").addEventListener("keydown", (ev) => { if (ev.key === "Enter") goTo(); });
  byId("mode").addEventListener("change", () => {
    stop();
    state.mode = byId("mode").value;
    go(0);
  });
  byId("forward").addEventListener("change", () => {
    stop();
    state.forward = byId("forward").checked;
    go(0);
  });
  byId("zoomin").addEventListener("click", () => zoomBy(1.2));
  byId("zoomout").addEventListener("click", () => zoomBy(1 / 1.2));
  byId("fit").addEventListener("click", () => {
    state.fit = !state.fit;
    if (state.fit) state.unfit = state.zoom;
    else setZoom(state.unfit);
    render();
  });
  byId("history").addEventListener("toggle", () => render());  // less room: follow again
  window.addEventListener("resize", () => render());
  // After a click, a control gives the focus back, so that the keys below work at once
  // (a keyboard user's focus stays where it is).
  let pointer = false;
  document.addEventListener("pointerdown", () => { pointer = true; }, true);
  document.querySelectorAll("#controls button, #controls select, #controls input")
    .forEach((el) => {
      const done = () => { if (pointer && el.id !== "goto") el.blur(); pointer = false; };
      el.addEventListener(el.tagName === "BUTTON" ? "click" : "change", done);
    });
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target;
    if (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA") return;
    if (t.tagName === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;  // its own
    const last = timeline().length - 1;
    const keys = {
      ArrowRight: () => { stop(); go(state.at + 1); },
      ArrowLeft: () => { stop(); go(state.at - 1); },
      " ": play,
      Home: () => { stop(); go(0); },
      End: () => { stop(); go(last); },
      "+": () => zoomBy(1.2),
      "=": () => zoomBy(1.2),
      "-": () => zoomBy(1 / 1.2),
    };
    if (!(ev.key in keys)) return;
    ev.preventDefault();
    keys[ev.key]();
  });

  setZoom(startZoom());
  render();
})();
