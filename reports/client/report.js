/* The report page's own script: draws each chart with vega (expressions run by vega's
   interpreter, so the CSP needs no unsafe-eval) and makes tables sortable. A chart that fails
   becomes an error card for that chart only. No network, no storage. */
(function () {
  'use strict';

  function chartError(figure, label, err) {
    var canvas = figure.querySelector('.chart-canvas');
    var card = document.createElement('div');
    card.className = 'error-card';
    var title = document.createElement('strong');
    title.textContent = 'This chart could not be drawn: ' + label;
    var msg = document.createElement('p');
    msg.className = 'error-message';
    msg.textContent = String((err && err.message) || err);
    card.appendChild(title);
    card.appendChild(msg);
    canvas.replaceChildren(card);
    figure.setAttribute('data-state', 'error');
  }

  /* Time zones for a chart whose axis is in UTC instants and whose labels are in the report's zone
     (the 5-hour blocks'): `zoneOffset(t, zone)` is the zone's offset from UTC at instant t in ms, read
     as the terminal reads it (format/days.ts zoneOffsetMs: Intl's longOffset); `zoneTicks(domain,
     zone, count)` about `count` instants within the domain where the zone's clocks read round
     times (hours, days, months), as vega picks them on a wall clock; a time the clocks skip becomes
     the instant they jump to. No string is evaluated: these are functions the expressions call. */
  var offsetFormats = {};
  function zoneOffset(t, zone) {
    if (!zone || zone === 'UTC' || !isFinite(t)) return 0;
    var f = offsetFormats[zone] || (offsetFormats[zone] = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }));
    var name = 'GMT';
    f.formatToParts(new Date(t)).forEach(function (p) { if (p.type === 'timeZoneName') name = p.value; });
    var m = /^GMT([+-])(\d\d):(\d\d)(?::(\d\d))?$/.exec(name);
    return m ? (m[1] === '-' ? -1 : 1) * ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] || 0)) * 1000 : 0;
  }
  function zoneTicks(domain, zone, count) {
    // a time scale's domain is of Dates: as numbers, or `+` would join them as text
    var lo = +domain[0], hi = +domain[domain.length - 1];
    if (!isFinite(lo) || !isFinite(hi)) return [];
    var wall = vega.scale('utc')().domain([lo + zoneOffset(lo, zone), hi + zoneOffset(hi, zone)]).ticks(Math.max(1, Math.round(count)));
    var out = [];
    wall.forEach(function (w) {
      var ms = +w;
      // the instant whose wall clock is ms: the offset there, found from a first guess
      var t = ms - zoneOffset(ms - zoneOffset(ms, zone), zone);
      if (t >= lo && t <= hi && out.indexOf(t) < 0) out.push(t);
    });
    return out;
  }

  function drawChart(figure, chart, spec) {
    var errors = [];
    var level = 0;
    var logger = {
      level: function (l) { if (arguments.length) { level = l; return logger; } return level; },
      error: function () { errors.push(Array.prototype.join.call(arguments, ' ')); return logger; },
      warn: function () { if (level >= vega.Warn) console.warn.apply(console, arguments); return logger; },
      info: function () { return logger; },
      debug: function () { return logger; }
    };
    try {
      var runtime = vega.parse(spec, null, { ast: true });
      var view = new vega.View(runtime, { expr: vegaInterpreter, logger: logger, renderer: 'svg' });
      view.initialize(figure.querySelector('.chart-canvas'));
      view.hover();
      Object.keys(chart.data).forEach(function (name) { view.data(name, chart.data[name]); });
      // a chart's settings that are no data (the blocks' zone): signals its spec declares
      Object.keys(chart.signals || {}).forEach(function (name) { view.signal(name, chart.signals[name]); });
      view.runAsync().then(function () {
        if (errors.length) chartError(figure, chart.label, errors.join('; '));
        else {
          // the numbers stay a click away; open they were the page without a chart
          var table = figure.querySelector('details.chart-data');
          if (table) table.removeAttribute('open');
          figure.setAttribute('data-state', 'ok');
        }
      }, function (err) { chartError(figure, chart.label, err); });
    } catch (err) {
      chartError(figure, chart.label, err);
    }
  }

  function drawCharts() {
    vega.expressionFunction('zoneOffset', zoneOffset);
    vega.expressionFunction('zoneTicks', zoneTicks);
    var payload;
    try {
      payload = JSON.parse(document.getElementById('cachelens-charts').textContent);
    } catch (err) {
      document.querySelectorAll('figure.chart').forEach(function (f) { chartError(f, 'chart data', err); });
      return;
    }
    var byId = {};
    payload.charts.forEach(function (c) { byId[c.id] = c; });
    document.querySelectorAll('figure.chart[data-chart]').forEach(function (figure) {
      var chart = byId[figure.getAttribute('data-chart')];
      if (!chart) { chartError(figure, 'unknown chart', 'no data for this chart'); return; }
      var spec = payload.specs[chart.spec];
      if (!spec) { chartError(figure, chart.label, 'no spec named ' + chart.spec); return; }
      drawChart(figure, chart, spec);
    });
  }

  function cellValue(td) {
    var raw = td ? td.getAttribute('data-sort') : null;
    if (raw !== null && raw !== '') {
      var n = Number(raw);
      return isNaN(n) ? raw : n;
    }
    return td ? td.textContent : '';
  }

  function sortBy(table, th, col) {
    var dir = th.getAttribute('aria-sort') === 'descending' ? 'ascending' : 'descending';
    table.querySelectorAll('th[aria-sort]').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]);
      var y = cellValue(b.cells[col]);
      if (typeof x === 'number' && typeof y === 'number') return sign * (x - y);
      // a cell without a number (unknown, n/a) in a column of numbers goes last either way
      if (typeof x === 'number') return -1;
      if (typeof y === 'number') return 1;
      return sign * String(x).localeCompare(String(y));
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }

  function sortableTables() {
    document.querySelectorAll('table.sortable').forEach(function (table) {
      table.querySelectorAll('thead th').forEach(function (th, col) {
        // the header's text becomes a button only here: without this script it would do nothing
        var button = document.createElement('button');
        button.type = 'button';
        while (th.firstChild) button.appendChild(th.firstChild);
        th.appendChild(button);
        button.addEventListener('click', function () { sortBy(table, th, col); });
      });
    });
  }

  sortableTables();
  if (typeof vega === 'undefined' || typeof vegaInterpreter === 'undefined') {
    document.querySelectorAll('figure.chart').forEach(function (f) { chartError(f, 'charts', 'the vega runtime did not load'); });
  } else {
    drawCharts();
  }
})();
