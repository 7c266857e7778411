/* backchannel: a person's ties drawn with the vendored Cytoscape.js (static/vendor/cytoscape).
   The data is the page's JSON data block; the same ties are listed as text under the drawing,
   so with JavaScript off nothing is lost but the picture. Clicking a node opens its page; each
   node also has a real link over it (keyboard: Tab to it, Enter). */
(function () {
  "use strict";
  var COLOURS = {works_at: "#2a5bd7", left: "#8a94a6", worked_with: "#1f7a4d", knows: "#3b4252",
                 introduced: "#7b3fb5", mentioned_with: "#9aa3b2", met: "#d9822b"};
  var LINES = {left: "dashed", mentioned_with: "dotted"};
  var WORDS = {works_at: "works at", left: "left", worked_with: "worked with", knows: "knows",
               introduced: "introduced", mentioned_with: "mentioned with", met: "you met"};
  var FORCE_MAX_NODES = 60;  // above this the rings alone: the force pass grows with n squared (bench/web_graph.py)

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text) { e.textContent = text; }
    return e;
  }

  function style(small) {
    var s = [
      {selector: "node", style: {"label": "data(label)", "text-wrap": "wrap", "text-max-width": "170px",
        "font-size": 15, "font-family": "system-ui, sans-serif", "color": "#1d2430", "text-valign": "bottom",
        "text-margin-y": 4, "width": 26, "height": 26, "background-color": "#c9d3e6", "border-width": 1,
        "border-color": "#6b7a96", "text-background-color": "#ffffff", "text-background-opacity": 0.8,
        "text-background-padding": 1, "min-zoomed-font-size": 7}},
      {selector: "node.organisation", style: {"shape": "round-rectangle", "background-color": "#e3e8f2", "width": 32}},
      {selector: "node.hop2", style: {"width": 20, "height": 20, "font-size": 13, "color": "#5b6577"}},
      {selector: "node.center", style: {"width": 40, "height": 40, "background-color": "#2a5bd7",
        "border-color": "#173a8f", "font-weight": "bold", "font-size": 17}},
      {selector: "node.owner", style: {"background-color": "#f2a65a", "border-color": "#b35f12", "border-width": 2,
        "color": "#8a4a0e", "font-weight": "bold"}},
      {selector: "node:active, node.hover", style: {"overlay-opacity": 0.12, "border-width": 3}},
      {selector: "edge", style: {"width": 2, "curve-style": "bezier", "line-color": "data(colour)",
        "target-arrow-color": "data(colour)", "opacity": "data(alpha)", "line-style": "data(line)"}},
      {selector: "edge.introduced", style: {"target-arrow-shape": "triangle"}},
      {selector: "edge.works_at, edge.left", style: {"target-arrow-shape": "vee", "arrow-scale": 0.8}},
      {selector: "edge.owners", style: {"width": 4}},
      {selector: "edge.hover", style: {"width": 5, "opacity": 1}}
    ];
    if (small) {
      s.push({selector: "edge", style: {"label": "data(words)", "font-size": 12, "color": "#5b6577",
        "text-rotation": "autorotate", "text-background-color": "#ffffff", "text-background-opacity": 0.85}});
    }
    return s;
  }

  function elements(data) {
    var out = [];
    data.nodes.forEach(function (n) {
      var label = n.name + (n.is_owner ? " (you)" : "") + (n.title ? "\n" + n.title : "");
      out.push({group: "nodes", data: {id: String(n.id), label: label, name: n.name, title: n.title || "",
        kind: n.kind, hop: n.hop, trust: n.trust},
        classes: [n.kind, "hop" + n.hop, n.center ? "center" : "", n.is_owner ? "owner" : ""].join(" ")});
    });
    data.edges.forEach(function (e) {
      out.push({group: "edges", data: {id: e.id, source: String(e.source), target: String(e.target),
        predicate: e.predicate, words: WORDS[e.predicate] || e.predicate, colour: COLOURS[e.predicate] || "#666",
        line: LINES[e.predicate] || "solid", alpha: 0.25 + 0.75 * Math.max(0, Math.min(1, e.trust)),
        trust: e.trust, quote: e.quote || "", speaker: e.speaker || "", said_at: e.said_at || "",
        file_dated: !!e.file_dated, qualifier: e.qualifier || "", count: e.count || 1},
        classes: e.predicate + (e.owners_tie ? " owners" : "")});
    });
    return out;
  }

  function tipText(target) {
    var d = target.data();
    if (target.isNode()) {
      return [d.name + (d.title ? ", " + d.title : ""), d.kind + (d.hop ? ", " + d.hop + " step(s) away" : ""),
              "click to open"];
    }
    var src = target.source().data("name"), dst = target.target().data("name");
    var lines = [src + " " + d.words + " " + dst + (d.qualifier ? " (" + d.qualifier + ")" : "")];
    if (d.quote) { lines.push(d.predicate === "met" ? d.quote : "\u201c" + d.quote + "\u201d"); }
    var said = [];
    if (d.speaker) { said.push("said by " + d.speaker); }
    if (d.said_at) { said.push(d.said_at.slice(0, 10) + (d.file_dated ? " (date from the file)" : "")); }
    said.push("trust " + Number(d.trust).toFixed(2));
    if (d.count > 1) { said.push(d.count + " times"); }
    lines.push(said.join(", "));
    return lines;
  }

  function widen(cy, box) {
    // The container is wide and the layouts come out round: stretch x so the labels get room.
    var bb = cy.nodes().boundingBox(), want = box.clientWidth / Math.max(1, box.clientHeight);
    var have = bb.w / Math.max(1, bb.h), k = Math.min(1.8, want / Math.max(0.1, have));
    if (k > 1.05) {
      var cx = (bb.x1 + bb.x2) / 2;
      cy.nodes().positions(function (n) { var p = n.position(); return {x: cx + (p.x - cx) * k, y: p.y}; });
    }
    cy.fit(undefined, 34);
  }

  function radial(cy, center) {
    // A radial tree, in linear time: the direct ties on a ring, each given an arc in proportion
    // to the ties it brings; those second-step ties on an outer ring inside their parent's arc.
    var pos = {}, c = center.first(), spacing = 46;
    var first = cy.nodes().filter(function (n) { return n.data("hop") === 1; });
    var second = cy.nodes().filter(function (n) { return n.data("hop") >= 2; });
    var kids = {}, placed = {};
    first.forEach(function (n) { kids[n.id()] = []; });
    second.forEach(function (n) {
      var parent = n.neighborhood("node").filter(function (m) { return m.id() in kids; }).first();
      var key = parent.nonempty() ? parent.id() : "";
      (kids[key] = kids[key] || []).push(n);
    });
    var r1 = Math.max(140, first.length * spacing / (2 * Math.PI));
    var r2 = Math.max(r1 + 130, second.length * spacing / (2 * Math.PI));
    var weight = 0;
    first.forEach(function (n) { weight += 1 + kids[n.id()].length; });
    var orphans = kids[""] || [];
    weight += orphans.length;
    var angle = -Math.PI / 2, unit = 2 * Math.PI / Math.max(1, weight);
    if (c.nonempty()) { pos[c.id()] = {x: 0, y: 0}; placed[c.id()] = true; }
    function put(n, r, a) { if (!placed[n.id()]) { pos[n.id()] = {x: r * Math.cos(a), y: r * Math.sin(a)}; placed[n.id()] = true; } }
    first.forEach(function (n) {
      var mine = kids[n.id()], arc = (1 + mine.length) * unit;
      put(n, r1, angle + arc / 2);
      mine.forEach(function (k, i) { put(k, r2, angle + (i + 1) * arc / (mine.length + 1)); });
      angle += arc;
    });
    orphans.forEach(function (k) { put(k, r2, angle + unit / 2); angle += unit; });
    cy.nodes().forEach(function (n, i) { put(n, r2 + 80, i * 2.39996); });  // nothing left unplaced (golden angle)
    return pos;
  }

  function chain(cy, root) {
    // Positions by breadth-first depth from the root: depth along x, the nodes of one depth stacked.
    var depth = {}, columns = [];
    cy.elements().bfs({roots: root, directed: false, visit: function (v, e, u, i, d) {
      depth[v.id()] = d;
      (columns[d] = columns[d] || []).push(v.id());
    }});
    cy.nodes().forEach(function (n) {
      if (!(n.id() in depth)) { depth[n.id()] = columns.length; (columns[columns.length] = []).push(n.id()); }
    });
    var pos = {};
    columns.forEach(function (ids, d) {
      ids.forEach(function (id, i) { pos[id] = {x: d * 230, y: (i - (ids.length - 1) / 2) * 110}; });
    });
    return pos;
  }

  function layout(cy, box, data, forceMaxNodes) {
    // Rings by distance (concentric: linear time), then, for up to forceMaxNodes nodes, a
    // force-directed pass (cose) from those positions: deterministic, no random start.
    var center = cy.nodes(".center"), owner = cy.nodes(".owner");
    if (data.proposal_id) {  // an introduction's path: left to right from the owner, step by step
      cy.layout({name: "preset", positions: chain(cy, owner.nonempty() ? owner : center.first()), fit: true,
        padding: 50}).run();
    } else {
      cy.layout({name: "preset", positions: radial(cy, center), fit: false}).run();
      if (cy.nodes().length <= forceMaxNodes && cy.nodes().length > 3) {
        cy.layout({name: "cose", animate: false, randomize: false, fit: false, numIter: 400,
          nodeRepulsion: function () { return 120000; }, idealEdgeLength: function () { return 80; },
          edgeElasticity: function () { return 80; }, gravity: 0.6, nodeOverlap: 40, componentSpacing: 80}).run();
      }
      widen(cy, box);  // and fit, once
    }
    if (cy.zoom() > 1.3) { cy.zoom(1.3); cy.center(); }
  }

  function draw(box) {
    var block = document.getElementById(box.getAttribute("data-ties"));
    if (!block || typeof cytoscape !== "function") { return; }
    var data = JSON.parse(block.textContent);
    var small = data.nodes.length <= 14;
    var started = performance.now();
    var cy = cytoscape({container: box, elements: elements(data), style: style(small),
      userZoomingEnabled: false, boxSelectionEnabled: false, autoungrabify: false, minZoom: 0.05, maxZoom: 2.5});
    var built = performance.now();
    layout(cy, box, data, FORCE_MAX_NODES);
    var done = performance.now();
    box.setAttribute("data-build-ms", (built - started).toFixed(1));
    box.setAttribute("data-layout-ms", (done - built).toFixed(1));
    box.setAttribute("data-nodes", String(cy.nodes().length));
    var center = cy.nodes(".center");
    if (center.nonempty()) { center.lock(); }

    var tip = el("div", "ties-tip");
    tip.setAttribute("role", "tooltip");
    box.appendChild(tip);
    function showTip(evt) {
      var t = evt.target;
      tip.textContent = "";
      tipText(t).forEach(function (line, i) { tip.appendChild(el("div", i ? "" : "tip-head", line)); });
      var p = t.isNode() ? t.renderedPosition() : t.renderedMidpoint();
      tip.style.left = Math.min(Math.max(4, p.x + 12), box.clientWidth - 280) + "px";
      tip.style.top = Math.max(4, p.y + 12) + "px";
      tip.classList.add("shown");
      t.addClass("hover");
    }
    function hideTip(evt) { tip.classList.remove("shown"); evt.target.removeClass("hover"); }
    cy.on("mouseover", "node, edge", showTip);
    cy.on("mouseout", "node, edge", hideTip);
    cy.on("tap", "node", function (evt) { window.location.assign("/memory/" + evt.target.id()); });
    cy.on("mouseover", "node", function () { box.classList.add("pointing"); });
    cy.on("mouseout", "node", function () { box.classList.remove("pointing"); });

    // A real link over each node: in the DOM, reachable by keyboard, and what the tests find.
    var layer = el("div", "ties-links");
    box.appendChild(layer);
    var links = {};
    cy.nodes().forEach(function (n) {
      var a = el("a", "ties-node" + (n.hasClass("owner") ? " owner" : "") + (n.hasClass("center") ? " center" : ""),
                 n.data("name"));
      a.href = "/memory/" + n.id();
      a.setAttribute("data-id", n.id());
      layer.appendChild(a);
      links[n.id()] = a;
    });
    function place() {
      cy.nodes().forEach(function (n) {
        var p = n.renderedPosition(), a = links[n.id()];
        a.style.left = p.x + "px";
        a.style.top = p.y + "px";
      });
    }
    var queued = false;
    cy.on("render", function () {  // once a frame at most, whatever moved
      if (!queued) { queued = true; window.requestAnimationFrame(function () { queued = false; place(); }); }
    });
    place();
    var list = box.parentNode.querySelector("details.ties-list");
    if (list) { list.removeAttribute("open"); }
    window.backchannelTies.graphs.push({cy: cy, box: box, data: data});
  }

  window.backchannelTies = {graphs: [], layout: layout};  // bench/web_graph.py times `layout` again

  function start() {
    document.documentElement.classList.add("js");
    Array.prototype.forEach.call(document.querySelectorAll(".ties-graph[data-ties]"), draw);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
