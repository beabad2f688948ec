"""The explorer's one page: HTML and CSS here, its script in script.py, nothing fetched from
elsewhere. The page starts empty and fills itself from `/api/view`; every text from the model
or a trace is set as text, never as HTML."""

from __future__ import annotations

from kmc.explore.script import SCRIPT

_CSS = """
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { background: #233044; color: #fff; padding: 8px 14px; display: flex; flex-wrap: wrap; gap: 8px 16px;
  align-items: center; }
header h1 { font-size: 15px; margin: 0; font-weight: 600; overflow-wrap: anywhere; }
header .info { color: #c9d3e0; }
header button, header label.button, header a.button { font: inherit; padding: 3px 10px; border-radius: 4px;
  border: 1px solid #8a9bb4; background: #33445e; color: #fff; cursor: pointer; text-decoration: none; }
header button:disabled { opacity: .4; cursor: default; }
#error { display: none; background: #fde8e8; color: #8a1c1c; padding: 6px 14px; border-bottom: 1px solid #f1b5b5; }
#error.shown { display: block; }
#note { color: #c9f0c9; }
main { display: grid; grid-template-columns: minmax(220px, 1.4fr) minmax(300px, 2fr) minmax(300px, 2fr); gap: 12px;
  padding: 12px; align-items: start; }
section { background: #fff; border: 1px solid #d8dde4; border-radius: 6px; padding: 10px; min-width: 0; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #56606d; margin: 0 0 8px; }
ol#path { margin: 0; padding-left: 0; list-style: none; }
ol#path li { padding: 3px 6px; border-radius: 4px; cursor: pointer; overflow-wrap: break-word; }
ol#path li:hover { background: #eef2f7; }
ol#path li.here { background: #dbe7fb; font-weight: 600; }
ol#path li.later { color: #7b8591; }
.badge { display: inline-block; font-size: 11px; padding: 0 5px; border-radius: 8px; margin-left: 4px; }
.fail { background: #f8d3d3; color: #8a1c1c; }
.ok { background: #d5f0d8; color: #1d5a27; }
.report { background: #f3e6c4; color: #6a4b00; }
.ahead { background: #dbe7fb; color: #23406e; }
table { border-collapse: collapse; width: 100%; }
td { border-top: 1px solid #eceff3; padding: 2px 6px; vertical-align: top; overflow-wrap: anywhere; }
td.key { white-space: nowrap; color: #40484f; width: 1%; }
tr.changed td { background: #fff4c2; }
ul#invariants { list-style: none; padding: 0; margin: 0 0 10px; }
ul#invariants li { padding: 1px 0; }
input[type=search], input[type=text] { font: inherit; padding: 3px 6px; width: 100%; margin-bottom: 6px; }
.group h3 { font-size: 13px; margin: 10px 0 4px; color: #233044; }
.choice { border: 1px solid #e1e5ea; border-radius: 5px; padding: 5px 7px; margin-bottom: 6px; }
.choice button { font: inherit; font-weight: 600; background: #eef2f7; border: 1px solid #b9c4d3; border-radius: 4px;
  padding: 2px 8px; cursor: pointer; text-align: left; overflow-wrap: anywhere; max-width: 100%; }
.choice button:hover { background: #dbe7fb; }
.choice ul { margin: 4px 0 0; padding-left: 16px; font-size: 13px; color: #40484f; }
.choice li { overflow-wrap: anywhere; }
.old { color: #8a1c1c; }
.new { color: #1d5a27; }
details { margin-top: 10px; }
#matches { list-style: none; padding: 0; margin: 4px 0 0; }
#matches button { font: inherit; background: none; border: none; color: #23406e; cursor: pointer; text-align: left;
  padding: 1px 0; overflow-wrap: anywhere; }
.help { color: #6b7480; font-size: 12px; }
"""

_BODY = """
<header>
  <h1 id="title">kmc explore</h1>
  <button id="back" title="back one step (left arrow)">&larr; back</button>
  <button id="forward" title="forward one step along the path (right arrow)">forward &rarr;</button>
  <span class="info" id="where"></span>
  <span class="info" id="reached"></span>
  <label class="button" for="load-file" title="load a counterexample (ITF, as kmc check --itf-dir writes)">load
    trace</label>
  <input type="file" id="load-file" accept=".json,application/json" hidden>
  <a class="button" id="download" href="/api/walk.itf.json" download>download walk</a>
  <button id="save" title="write the walk to the file given with --save">save</button>
  <span class="info" id="note"></span>
</header>
<div id="error" role="alert"></div>
<main>
  <section>
    <h2>Path</h2>
    <ol id="path"></ol>
    <h2 style="margin-top:14px">Search reached states</h2>
    <input type="search" id="query" placeholder="field op value">
    <button id="search-go">search</button>
    <div class="help">fields as in the raw table; op: == != &lt; &lt;= &gt; &gt;=; clauses joined by and</div>
    <div id="found"></div>
    <ul id="matches"></ul>
  </section>
  <section>
    <h2 id="state-heading">State</h2>
    <ul id="invariants"></ul>
    <input type="search" id="field-filter" placeholder="filter fields">
    <table id="fields"></table>
    <details><summary>raw fields (the names the search uses)</summary><table id="raw"></table></details>
  </section>
  <section>
    <h2 id="choices-heading">Enabled actions</h2>
    <div id="choices"></div>
  </section>
</main>
"""


def page() -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>kmc explore</title><style>{_CSS}</style></head>\n<body>{_BODY}"
            f"<script>{SCRIPT}</script></body></html>\n")
