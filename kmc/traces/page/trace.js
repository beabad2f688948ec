// The trace page's behaviour (kmc/traces/html.py inlines it): select a step with the keyboard
// (arrows, j/k, Home/End), a click or a link (#step=4), highlight it in the diagram and the step table, show its
// whole state with the fields it changed, and filter the fields by a text box.
(function () {
  var sections = Array.prototype.slice.call(document.querySelectorAll('section.trace'));
  var active = null;

  function setup(sec) {
    var data = JSON.parse(sec.querySelector('script.data').textContent);
    var t = { sec: sec, data: data, step: 0, last: data.states.length - 1 };
    var filter = sec.querySelector('input.filter');

    function show(k) {
      var now = data.states[k], before = k > 0 ? data.states[k - 1] : null, rows = [];
      var keys = Object.keys(now);
      if (before) Object.keys(before).forEach(function (key) { if (!(key in now)) keys.push(key); });
      keys.forEach(function (key) {
        var value = key in now ? now[key] : '-', old = before ? (key in before ? before[key] : '-') : value;
        var tr = document.createElement('tr'), kd = document.createElement('td'), vd = document.createElement('td');
        tr.dataset.key = key;
        kd.textContent = key;
        if (old !== value) {
          tr.className = 'chg';
          var was = document.createElement('span');
          was.className = 'was';
          was.textContent = old + ' \u2192 ';
          vd.appendChild(was);
        }
        vd.appendChild(document.createTextNode(value));
        tr.appendChild(kd); tr.appendChild(vd);
        rows.push(tr);
      });
      var body = sec.querySelector('table.state tbody');
      body.textContent = '';
      rows.forEach(function (r) { body.appendChild(r); });
      sec.querySelector('aside.state h2').textContent =
        (k === 0 ? 'State 0: initial' : 'State after step ' + k + ': ' + data.labels[k]);
      applyFilter();
    }

    function go(k) {
      k = Math.max(0, Math.min(t.last, k));
      t.step = k;
      sec.querySelectorAll('.on').forEach(function (e) { e.classList.remove('on'); });
      var row = sec.querySelector('tr[data-step="' + k + '"]');
      var ev = sec.querySelector('g.event[data-step="' + k + '"]');
      if (row) row.classList.add('on');
      if (ev) { ev.classList.add('on'); reveal(ev, sec.querySelector('div.diagram')); }
      sec.querySelectorAll('g.msg').forEach(function (m) {
        if (m.dataset.sent === String(k) || m.dataset.received === String(k)) m.classList.add('on');
      });
      sec.querySelector('span.at').textContent = 'step ' + k + ' of ' + t.last + ': ' + data.labels[k];
      show(k);
      sec.dataset.step = k;
    }

    function applyFilter() {
      var q = filter.value.trim().toLowerCase();
      sec.querySelectorAll('[data-key]').forEach(function (e) {
        var hit = !q || e.textContent.toLowerCase().indexOf(q) >= 0;
        e.classList.toggle('hidden', !hit);
      });
    }

    filter.addEventListener('input', applyFilter);
    sec.querySelectorAll('tr[data-step], g.event').forEach(function (e) {
      e.addEventListener('click', function () { go(Number(e.dataset.step)); });
    });
    sec.querySelector('button.prev').addEventListener('click', function () { go(t.step - 1); });
    sec.querySelector('button.next').addEventListener('click', function () { go(t.step + 1); });
    sec.addEventListener('mousedown', function () { activate(t); });
    t.go = go;
    t.filter = filter;
    go(0);
    return t;
  }

  // scroll the diagram's own pane (never the page) to show a step's notes
  function reveal(el, pane) {
    var r = el.getBoundingClientRect(), p = pane.getBoundingClientRect();
    if (r.top < p.top) pane.scrollTop -= p.top - r.top + 8;
    else if (r.bottom > p.bottom) pane.scrollTop += Math.min(r.bottom - p.bottom + 8, r.top - p.top - 8);
  }

  function activate(t) {
    if (active) active.sec.classList.remove('active');
    active = t;
    t.sec.classList.add('active');
  }

  var traces = sections.map(setup);
  activate(traces[0]);
  // a link to a step: page.html#step=4 (two traces: #step=4,2)
  function follow() {
    var linked = /^#step=([\d,]+)$/.exec(location.hash);
    if (linked) linked[1].split(',').forEach(function (k, i) { if (traces[i]) traces[i].go(Number(k)); });
  }
  follow();
  window.addEventListener('hashchange', follow);
  document.addEventListener('keydown', function (e) {
    if (e.target.tagName === 'INPUT') {
      if (e.key === 'Escape') { e.target.value = ''; e.target.dispatchEvent(new Event('input')); e.target.blur(); }
      return;
    }
    var moves = { ArrowDown: 1, ArrowRight: 1, j: 1, ArrowUp: -1, ArrowLeft: -1, k: -1 };
    if (e.key in moves) active.go(active.step + moves[e.key]);
    else if (e.key === 'Home') active.go(0);
    else if (e.key === 'End') active.go(active.last);
    else if (e.key === '/') active.filter.focus();
    else if (e.key === 'Tab' && traces.length > 1) activate(traces[(traces.indexOf(active) + 1) % traces.length]);
    else return;
    e.preventDefault();
  });
  document.body.dataset.rendered = document.querySelectorAll('g.event').length + ' events, '
    + document.querySelectorAll('tr[data-step]').length + ' rows';
})();
