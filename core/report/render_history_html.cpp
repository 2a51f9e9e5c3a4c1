// The history page (history.hpp, docs/history.md): one static HTML file that draws from the
// HistoryPage's JSON, embedded in it, with Chart.js loaded from a file beside it. Nothing is
// fetched: the page works from the file system, and a browser blocks reading other files from a
// file:// page anyway. Every text of the data reaches the page through textContent or a
// percent-encoded link, never as markup, so a shape label or run directory cannot inject any.
//
// Charts are made when their box scrolls near the view (IntersectionObserver): a page of 200
// shapes would otherwise draw 200 canvases before showing anything. `?all=1` draws every chart
// at once (what tests use, so lazy drawing cannot hide a chart that fails), `?q=TEXT` pre-fills
// the filter. The page says when it is done in its body's data attributes: data-shapes (charts it
// has), data-charts (charts drawn so far), data-ready-ms (performance.now() when the first charts
// were drawn) and data-errors (messages in #errors, which collects window errors and
// console.error calls).
#include <algorithm>
#include <cctype>

#include "report/history.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

constexpr const char* kHistoryPageHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="abharness history">
<title>abharness history</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 2em 2em; color: #222; }
h1 { font-size: 1.4em; margin: 0.8em 0 0.2em; }
h2 { font-size: 1.05em; margin: 0 0 0.2em; }
h2 .label, h2 .timing { font-weight: normal; color: #666; margin-left: 0.6em; }
#errors { color: #b00; white-space: pre-wrap; margin: 0; }
#errors:empty { display: none; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.15em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.runs-box { max-height: 22em; overflow: auto; }
.bar { position: sticky; top: 0; background: #fff; padding: 0.5em 0; z-index: 1;
       border-bottom: 1px solid #ddd; }
#filter { width: 28em; font: inherit; padding: 0.2em 0.4em; }
#shown { color: #666; margin-left: 1em; }
section.shape { margin: 1.2em 0; }
.latest { color: #444; margin: 0 0 0.3em; font-size: 0.92em; }
.chart-box { position: relative; height: 260px; max-width: 1200px; }
.faster { color: #1a7f37; } .slower { color: #c62828; } .failed { color: #c62828; }
.ambiguous, .unstable { color: #b26a00; }
</style>
</head>
<body data-charts="0" data-errors="0">
<pre id="errors"></pre>
<script>
// First, before anything that can fail: every window error (a script that does not load
// included: its error event reaches the window only while capturing) and console.error call is
// written into #errors, which tests read from the rendered DOM.
(function () {
  const box = document.getElementById('errors');
  let count = 0;
  function note(text) {
    box.textContent += text + '\n';
    document.body.dataset.errors = String(++count);
  }
  window.addEventListener('error', function (e) {
    if (e.target && e.target !== window && e.target.src)
      note('cannot load ' + e.target.src + ': is it beside index.html?');
    else
      note('error: ' + e.message + ' (' + e.filename + ':' + e.lineno + ')');
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    note('unhandled rejection: ' + e.reason);
  });
  const original = console.error;
  console.error = function () {
    note('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    original.apply(console, arguments);
  };
  window.abhNote = note;
})();
</script>
)HTML";

constexpr const char* kHistoryPageBody = R"HTML(<header>
<h1 id="title">Kernel history</h1>
<p id="summary"></p>
<ul id="notes"></ul>
<div class="runs-box"><table id="runs"><thead><tr>
<th>#</th><th>planned (UTC)</th><th>candidate</th><th>baseline</th><th>machine</th>
<th>geomean speedup</th><th>interval</th><th>verdict</th><th>report</th>
</tr></thead><tbody></tbody></table></div>
</header>
<div class="bar"><input id="filter" type="search" placeholder="filter shapes: part of an id or label"
 aria-label="filter shapes"><span id="shown"></span></div>
<main id="shapes"></main>
)HTML";

constexpr const char* kHistoryPageScript = R"HTML(<script>
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('history-data').textContent);
  const params = new URLSearchParams(location.search);
  const body = document.body;
  const runs = data.runs, shapes = data.shapes;
  body.dataset.shapes = String(shapes.length);
  if (typeof Chart === 'undefined') {
    window.abhNote('Chart.js is not loaded: chart.min.js must be beside index.html ' +
                   '(abharness history copies it there)');
    return;
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function ns(v) {
    if (v === null || v === undefined) return '–';
    if (v >= 1e6) return (v / 1e6).toPrecision(4) + ' ms';
    if (v >= 1e3) return (v / 1e3).toPrecision(4) + ' µs';
    return v.toPrecision(4) + ' ns';
  }
  function times(v) { return v === null || v === undefined ? '–' : v.toFixed(3) + '×'; }
  function interval(ci) { return ci ? '[' + ci.lo.toFixed(3) + ', ' + ci.hi.toFixed(3) + ']' : '–'; }
  function when(iso) { return iso.replace('T', ' ').replace(/\.\d+/, '').replace('Z', ''); }
  // A relative path as a URL: each segment percent-encoded, so '#', '?' or '%' in a run
  // directory's name stay part of the path.
  function link(path) { return path.split('/').map(encodeURIComponent).join('/'); }

  // The header: what was measured, over which runs, and how to read the charts.
  const repos = Array.from(new Set(runs.map(r => r.repo + ' (' + r.plugin_target + ')')));
  document.getElementById('title').textContent = 'Kernel history: ' + repos.join(', ');
  document.title = 'abharness history: ' + repos.join(', ');
  const conf = Math.round(data.stats.confidence * 1000) / 10;
  document.getElementById('summary').textContent =
      runs.length + ' run(s), planned ' + when(runs[0].created_at) + ' to ' +
      when(runs[runs.length - 1].created_at) + ' UTC; ' + shapes.length + ' shape(s), one chart ' +
      'each. Each run is its own interleaved A/B/A measurement: its speedup is baseline time / ' +
      'candidate time within that run (> 1: candidate faster), the band its ' + conf + ' % ' +
      'confidence interval. Machine and time differ between runs, so a step from one run to the ' +
      'next is not itself a measured speedup. x axis: the candidate commit (-dirty: a working ' +
      'tree with changes over it) and when its run was planned.';
  const notes = document.getElementById('notes');
  for (const n of data.notes) notes.appendChild(el('li', n));

  const tbody = document.querySelector('#runs tbody');
  runs.forEach(function (r, i) {
    const tr = document.createElement('tr');
    tr.appendChild(el('td', String(i + 1), 'num'));
    tr.appendChild(el('td', when(r.created_at)));
    tr.appendChild(el('td', r.commit_label + ' — ' + r.candidate));
    tr.appendChild(el('td', r.baseline));
    tr.appendChild(el('td', r.machines.join('; ')));
    tr.appendChild(el('td', times(r.geomean), 'num'));
    tr.appendChild(el('td', interval(r.geomean_ci), 'num'));
    tr.appendChild(el('td', r.geomean_verdict || '–', r.geomean_verdict || ''));
    const cell = el('td');
    if (r.report_link) {
      const a = el('a', r.run_id);
      a.href = link(r.report_link);
      a.title = r.run_dir;
      cell.appendChild(a);
    } else {
      cell.textContent = r.run_id + ' (no report file in ' + r.run_dir + ')';
    }
    tr.appendChild(cell);
    tbody.appendChild(tr);
  });

  // One section per shape; its chart is made when the section comes near the view.
  const labels = runs.map(r => [r.commit_label, when(r.created_at).slice(0, 16)]);
  const verdictColour = {faster: '#1a7f37', slower: '#c62828', same: '#555',
                         ambiguous: '#b26a00', unstable: '#b26a00', failed: '#c62828'};
  const main = document.getElementById('shapes');
  const sections = shapes.map(function (s, i) {
    const sec = el('section', null, 'shape');
    sec.id = 'shape-' + i;
    const h = el('h2');
    h.appendChild(el('code', s.shape));
    if (s.label) h.appendChild(el('span', s.label, 'label'));
    h.appendChild(el('span', s.timing, 'timing'));
    sec.appendChild(h);
    const last = s.points[s.points.length - 1];
    const latest = el('p', null, 'latest');
    if (last) {
      latest.appendChild(document.createTextNode('latest (' + runs[last.run].commit_label + '): '));
      latest.appendChild(el('span', last.verdict, last.verdict));
      latest.appendChild(document.createTextNode(last.verdict === 'failed' ? ' — ' + last.failure :
          ', speedup ' + times(last.speedup) + ' ' + interval(last.ci) + ', baseline ' +
          ns(last.baseline_ns) + ', candidate ' + ns(last.candidate_ns)));
    }
    sec.appendChild(latest);
    const box = el('div', null, 'chart-box');
    box.dataset.index = String(i);
    sec.appendChild(box);
    main.appendChild(sec);
    return {sec: sec, box: box, key: (s.shape + ' ' + s.label).toLowerCase(), drawn: false};
  });

  let drawn = 0;
  function draw(i) {
    const s = shapes[i], part = sections[i];
    if (part.drawn) return;
    part.drawn = true;
    const canvas = document.createElement('canvas');
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', 'speedup and times of ' + s.shape + ' over the runs');
    part.box.appendChild(canvas);
    const at = new Array(runs.length).fill(null);
    for (const p of s.points) at[p.run] = p;
    const series = f => at.map(p => (p ? f(p) : null));
    const pointColour = at.map(p => (p ? verdictColour[p.verdict] : '#555'));
    const datasets = [
        // The interval: a band between its ends, and each end marked with a dash, which shows
        // it for a run whose neighbours did not measure the shape (a band needs two points).
        {label: 'ci-lo', data: series(p => (p.ci ? p.ci.lo : null)), yAxisID: 'speedup',
         borderWidth: 0, pointStyle: 'dash', pointRadius: 5, pointBorderWidth: 1.5,
         pointBorderColor: 'rgba(31, 119, 180, 0.6)', pointHitRadius: 0, fill: false,
         spanGaps: true},
        {label: conf + ' % interval', data: series(p => (p.ci ? p.ci.hi : null)),
         yAxisID: 'speedup', borderWidth: 0, pointStyle: 'dash', pointRadius: 5,
         pointBorderWidth: 1.5, pointBorderColor: 'rgba(31, 119, 180, 0.6)', pointHitRadius: 0,
         fill: '-1', backgroundColor: 'rgba(31, 119, 180, 0.18)',
         borderColor: 'rgba(31, 119, 180, 0.18)', spanGaps: true},
        {label: 'speedup', data: series(p => p.speedup), yAxisID: 'speedup',
         borderColor: '#1f77b4', backgroundColor: '#1f77b4', pointBackgroundColor: pointColour,
         pointBorderColor: pointColour, pointRadius: 3.5, spanGaps: true},
        {label: 'baseline time', data: series(p => p.baseline_ns), yAxisID: 'time',
         borderColor: '#888', backgroundColor: '#888', borderDash: [5, 4], pointRadius: 2,
         borderWidth: 1.5, spanGaps: true},
        {label: 'candidate time', data: series(p => p.candidate_ns), yAxisID: 'time',
         borderColor: '#ff7f0e', backgroundColor: '#ff7f0e', pointRadius: 2, borderWidth: 1.5,
         spanGaps: true}];
    // A run where the shape failed has no speedup: a cross at 1 says so (the tooltip says why).
    if (s.points.some(p => p.verdict === 'failed'))
      datasets.push({label: 'failed (no speedup)',
                     data: series(p => (p.verdict === 'failed' ? 1 : null)), yAxisID: 'speedup',
                     showLine: false, pointStyle: 'crossRot', pointRadius: 7, pointBorderWidth: 2,
                     borderColor: '#c62828', backgroundColor: '#c62828'});
    new Chart(canvas, {
      type: 'line',
      data: {labels: labels, datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, normalized: true,
        interaction: {mode: 'index', intersect: false},
        plugins: {
          legend: {labels: {boxWidth: 14, filter: item => item.text !== 'ci-lo'}},
          tooltip: {
            filter: item => /^(speedup|failed)| time$/.test(item.dataset.label),
            callbacks: {
              title: items => {
                const r = runs[items[0].dataIndex];
                return r.commit_label + ' · ' + when(r.created_at) + ' UTC · ' + r.run_id;
              },
              label: item => (/^failed/.test(item.dataset.label) ? item.dataset.label :
                  item.dataset.label + ': ' +
                  (item.dataset.yAxisID === 'time' ? ns(item.raw) : times(item.raw))),
              afterBody: items => {
                const i = items.length ? items[0].dataIndex : -1, p = i >= 0 ? at[i] : null;
                if (!p) return ['not measured in this run'];
                const lines = ['verdict: ' + p.verdict, 'interval: ' + interval(p.ci)];
                if (p.failure) lines.push('failure: ' + p.failure);
                return lines.concat(runs[i].machines.map(m => 'machine: ' + m));
              }}}},
        scales: {
          x: {ticks: {autoSkip: true, maxRotation: 0}},
          speedup: {type: 'linear', position: 'left', grace: '5%',
                    title: {display: true, text: 'speedup (×, > 1: candidate faster)'}},
          time: {type: 'linear', position: 'right', grid: {drawOnChartArea: false},
                 title: {display: true, text: 'time per iteration'},
                 ticks: {callback: v => ns(v)}}}}
    });
    body.dataset.charts = String(++drawn);
  }
  function ready() {
    if (!body.dataset.readyMs) body.dataset.readyMs = performance.now().toFixed(1);
  }

  // The filter: a case-insensitive part of a shape's id or label.
  const filter = document.getElementById('filter'), shown = document.getElementById('shown');
  function apply() {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    for (const part of sections) {
      part.sec.hidden = q !== '' && !part.key.includes(q);
      if (!part.sec.hidden) ++n;
    }
    shown.textContent = n + ' of ' + sections.length + ' shape(s)';
  }
  filter.addEventListener('input', apply);
  filter.value = params.get('q') || '';
  apply();

  if (params.get('all') === '1' || !('IntersectionObserver' in window)) {
    sections.forEach((part, i) => draw(i));
    ready();
  } else {
    const seen = new IntersectionObserver(function (entries) {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        seen.unobserve(e.target);
        draw(Number(e.target.dataset.index));
      }
      ready();
    }, {rootMargin: '600px 0px'});
    for (const part of sections) seen.observe(part.box);
  }
})();
</script>
</body>
</html>
)HTML";

// The page's data as a <script type="application/json"> body: '<' only occurs inside JSON
// strings, where \u003c reads the same, so no "</script>" or "<!--" in a label ends or bends the
// element.
std::string history_script_json(const HistoryPage& h) {
  const std::string text = to_json(h).dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string render_history_html(const HistoryPage& h, const std::string& chart_js) {
  // The name is written into the page as it is: keep it a plain file name beside the page.
  if (chart_js.empty() || std::any_of(chart_js.begin(), chart_js.end(), [](char c) {
        return !(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_');
      }))
    throw Error("history page: Chart.js file name '" + chart_js +
                "' must be a plain file name (letters, digits, '.', '-', '_')");
  if (h.runs.empty()) throw Error("history page: no runs to show");
  std::string page = kHistoryPageHead;
  page += "<script src=\"" + chart_js + "\"></script>\n";
  page += kHistoryPageBody;
  page += "<script type=\"application/json\" id=\"history-data\">";
  page += history_script_json(h);
  page += "</script>\n";
  page += kHistoryPageScript;
  return page;
}

}  // namespace abh
