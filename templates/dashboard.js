/* vsperf trend dashboard: the index's filters and a series' chart (plotly.js, bundled). */
var vsperfDashboard = (function () {
  "use strict";

  /* Text for plotly's hover labels, which read a few HTML tags: every tag stays text. */
  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function matches(values, wanted) {
    return !wanted || values.split("\n").indexOf(wanted) !== -1;
  }

  /* The index: each select hides the rows whose data-NAME does not hold its value. */
  function index() {
    var selects = document.querySelectorAll("select[data-filter]");
    var rows = document.querySelectorAll("#series tbody tr");
    var shown = document.getElementById("shown");
    function apply() {
      var count = 0;
      rows.forEach(function (row) {
        var ok = true;
        selects.forEach(function (select) {
          ok = ok && matches(row.getAttribute("data-" + select.getAttribute("data-filter")) || "", select.value);
        });
        row.hidden = !ok;
        if (ok) { count += 1; }
      });
      shown.textContent = count + " of " + rows.length + " series";
    }
    selects.forEach(function (select) { select.addEventListener("change", apply); });
    apply();
  }

  function pointShown(point, filters) {
    return (!filters.version || point.versionList.indexOf(filters.version) !== -1) &&
           (!filters.tag || point.tags.indexOf(filters.tag) !== -1);
  }

  function hover(point) {
    return "run " + esc(point.run) + "<br>" + esc(point.date) + " UTC<br>value " + point.value.toLocaleString() +
      (point.versions ? "<br>" + esc(point.versions) : "") +
      (point.tags.length ? "<br>tags: " + esc(point.tags.join(" ")) : "") +
      (point.report ? "<br>(click: the run's report)" : "");
  }

  /* A series page: its points, jumpavg's groups as steps, regressions and progressions marked. */
  function series(chartId, dataId) {
    var data = JSON.parse(document.getElementById(dataId).textContent);
    var chart = document.getElementById(chartId);
    var selects = document.querySelectorAll("select[data-point-filter]");
    var shownText = document.getElementById("shown");

    function traces() {
      var filters = {};
      selects.forEach(function (s) { filters[s.getAttribute("data-point-filter")] = s.value; });
      var runs = {x: [], y: [], customdata: [], hovertext: []};
      data.points.forEach(function (p, i) {
        if (pointShown(p, filters)) {
          runs.x.push(p.date); runs.y.push(p.value); runs.customdata.push(i); runs.hovertext.push(hover(p));
        }
      });
      shownText.textContent = runs.x.length + " of " + data.points.length + " runs shown";
      var steps = {x: [], y: []};
      var marks = {regression: {x: [], y: [], text: []}, progression: {x: [], y: [], text: []}};
      data.groups.forEach(function (g) {
        for (var i = g.start; i < g.end; i += 1) {
          steps.x.push(data.points[i].date); steps.y.push(g.average);
        }
        if (marks[g["class"]]) {
          var first = data.points[g.start];
          marks[g["class"]].x.push(first.date); marks[g["class"]].y.push(first.value);
          marks[g["class"]].text.push(esc(g["class"]) + " from run " + esc(first.run) + "<br>group average " +
                                      g.average.toLocaleString());
        }
      });
      return [
        {name: "runs", meta: "runs", type: "scatter", mode: "lines+markers", x: runs.x, y: runs.y,
         customdata: runs.customdata, hovertext: runs.hovertext, hoverinfo: "text",
         line: {color: "#9db4cf", width: 1}, marker: {color: "#3a6ea5", size: 6}},
        {name: "groups (jumpavg)", meta: "groups", type: "scatter", mode: "lines", x: steps.x, y: steps.y,
         line: {color: "#1f3a5f", width: 2.5, shape: "hv"}, hoverinfo: "skip"},
        {name: "regression", meta: "regression", type: "scatter", mode: "markers", x: marks.regression.x,
         y: marks.regression.y, hovertext: marks.regression.text, hoverinfo: "text",
         marker: {symbol: "triangle-down", size: 15, color: "#d62728", line: {color: "#fff", width: 1}}},
        {name: "progression", meta: "progression", type: "scatter", mode: "markers", x: marks.progression.x,
         y: marks.progression.y, hovertext: marks.progression.text, hoverinfo: "text",
         marker: {symbol: "triangle-up", size: 15, color: "#2ca02c", line: {color: "#fff", width: 1}}}
      ];
    }

    var layout = {
      margin: {l: 80, r: 20, t: 20, b: 50}, hovermode: "closest", showlegend: true,
      legend: {orientation: "h", y: -0.15}, xaxis: {type: "date", title: {text: "run start (UTC)"}},
      yaxis: {title: {text: esc(data.metric) + " (" + esc(data.better) + " is better)"}, rangemode: "normal"}
    };
    var config = {displaylogo: false, responsive: true};
    Plotly.newPlot(chart, traces(), layout, config);
    chart.on("plotly_click", function (event) {
      var point = event.points && event.points[0];
      if (point && point.data.meta === "runs") {
        var link = data.points[point.customdata].report;
        if (link) { window.location.href = link; }
      }
    });
    selects.forEach(function (select) {
      select.addEventListener("change", function () { Plotly.react(chart, traces(), layout, config); });
    });
  }

  return {index: index, series: series};
}());
