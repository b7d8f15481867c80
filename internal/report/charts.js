// qpslab's chart counter, one script for the HTML report (inline) and the
// dashboard (/static/charts.js): it counts the charts the browser really
// drew (laid out with a size and holding at least one data mark with a
// size) into body's data-rendered, of data-charts, for the browser tests.
(function () {
  "use strict";
  function count() {
    var charts = document.querySelectorAll("svg.chart"), n = 0;
    for (var i = 0; i < charts.length; i++) {
      var svg = charts[i], b = svg.getBBox(), r = svg.getBoundingClientRect();
      if (!(b.width > 0 && b.height > 0 && r.width > 0 && r.height > 0)) continue;
      var marks = svg.querySelectorAll("rect.mark, path.mark, polyline.mark, circle.mark");
      for (var j = 0; j < marks.length; j++) {
        var m = marks[j].getBBox(), line = marks[j].tagName === "path" || marks[j].tagName === "polyline";
        if (line ? (m.width > 0 || m.height > 0) : (m.width > 0 && m.height > 0)) { n++; break; }
      }
    }
    document.body.dataset.rendered = n;
    document.body.dataset.charts = charts.length;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", count); else count();
  window.addEventListener("load", count);
})();
