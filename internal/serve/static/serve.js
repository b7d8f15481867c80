// qpslab serve's own script (no inline script runs on its pages; the
// charts are counted by report's charts.js, /static/charts.js): it lets a
// history chart be zoomed by dragging over it, which loads the range of
// points dragged over (from, to in the address: a link to share), and cuts
// the long names in the report's sections as the pages' own are cut (the
// name template function, names.go).
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";

  // svgX is a mouse event's x in the chart's own coordinates.
  function svgX(svg, ev) {
    var r = svg.getBoundingClientRect(), w = parseFloat(svg.dataset.w);
    return (ev.clientX - r.left) * w / r.width;
  }

  // pointAt is the index of the point nearest chart x.
  function pointAt(svg, x) {
    var from = +svg.dataset.from, to = +svg.dataset.to, x0 = parseFloat(svg.dataset.x0), pw = parseFloat(svg.dataset.pw);
    var span = Math.max(to - from - 1, 1);
    var i = Math.round(from + (x - x0) / pw * span);
    return Math.min(Math.max(i, from), to - 1);
  }

  function zoomable(svg) {
    var start = null, sel = null;
    svg.addEventListener("mousedown", function (ev) {
      ev.preventDefault();
      start = svgX(svg, ev);
      sel = document.createElementNS(NS, "rect");
      sel.setAttribute("class", "zoomsel");
      sel.setAttribute("y", "40");
      sel.setAttribute("height", "230");
      sel.setAttribute("x", start);
      sel.setAttribute("width", "0");
      svg.appendChild(sel);
    });
    svg.addEventListener("mousemove", function (ev) {
      if (start === null) return;
      var x = svgX(svg, ev);
      sel.setAttribute("x", Math.min(x, start));
      sel.setAttribute("width", Math.abs(x - start));
    });
    svg.addEventListener("mouseup", function (ev) {
      if (start === null) return;
      var a = pointAt(svg, start), b = pointAt(svg, svgX(svg, ev));
      start = null;
      if (sel) { sel.remove(); sel = null; }
      var lo = Math.min(a, b), hi = Math.max(a, b) + 1;
      if (hi - lo < 2) return; // a click, not a drag
      var u = new URL(svg.dataset.href, window.location.href);
      u.searchParams.set("from", lo);
      u.searchParams.set("to", hi);
      window.location.assign(u.toString());
    });
  }

  // The report's sections (compare, a run's and a host's pages) are the
  // report's own HTML: a word of 60 characters or more in their text (a
  // long name), or one with a bidirectional or other control character,
  // becomes a name as the pages show one: <bdi class="name"> titled with it
  // whole, cut at 120 characters, its control characters written as
  // [U+XXXX].
  var LONG = /[^\s]{60,}|[^\s]*[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069][^\s]*/g;
  function shortName(s) {
    var cps = Array.from(s), out = "";
    for (var i = 0; i < cps.length && i < 120; i++) {
      var c = cps[i].codePointAt(0);
      if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x61c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
        out += "[U+" + ("000" + c.toString(16).toUpperCase()).slice(-4) + "]";
      } else out += cps[i];
    }
    return cps.length > 120 ? out + "\u2026" : out;
  }
  function cutNames(root) {
    var walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, null), texts = [], n;
    while ((n = walk.nextNode())) {
      if (n.parentElement.closest("pre, svg, script, style, bdi.name")) continue;
      LONG.lastIndex = 0;
      if (LONG.test(n.nodeValue)) texts.push(n);
    }
    texts.forEach(function (t) {
      var s = t.nodeValue, frag = document.createDocumentFragment(), last = 0, m;
      LONG.lastIndex = 0;
      while ((m = LONG.exec(s))) {
        frag.appendChild(document.createTextNode(s.slice(last, m.index)));
        var b = document.createElement("bdi");
        b.className = "name";
        b.title = m[0];
        b.textContent = shortName(m[0]);
        frag.appendChild(b);
        last = m.index + m[0].length;
      }
      frag.appendChild(document.createTextNode(s.slice(last)));
      t.parentNode.replaceChild(frag, t);
    });
  }

  function init() {
    var rs = document.querySelectorAll(".report");
    for (var r = 0; r < rs.length; r++) cutNames(rs[r]);
    var hs = document.querySelectorAll("svg.chart.history");
    for (var i = 0; i < hs.length; i++) zoomable(hs[i]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
