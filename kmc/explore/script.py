"""The explorer page's script: it asks the JSON endpoints (kmc/explore/server.py) and draws
what they answer. Text from the model or a trace goes in as text nodes, never as HTML.

A URL fragment drives the page as a person would, for tests and links:
`#query=con_leader==2&click=init-0|forward|label:fence_broker(broker=b2)` types the query and
clicks, in order and each after the previous answer, the elements with those ids (or, with
`label:`, the action button with that label); then the body gets `data-done="yes"`, or the
error bar says which element was missing.
"""

SCRIPT = r"""
"use strict";
const $ = (id) => document.getElementById(id);
let view = null;
let busy = Promise.resolve();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(path, body) {
  const init = body === undefined ? {} :
    {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  const answer = await fetch(path, init);
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error || answer.statusText);
  return data;
}

function showError(message) {
  $("error").textContent = message;
  $("error").classList.toggle("shown", message !== "");
}

async function act(path, body) {
  try {
    view = await api(path, body);
    showError("");
    render();
  } catch (e) {
    showError(e.message);
  }
}

function move(path, body) { busy = act(path, body); return busy; }

function badges(fails) {
  return fails.map((name) => el("span", {class: "badge fail", text: name + " violated"}));
}

function render() {
  $("title").textContent = view.title;
  document.title = "kmc explore: " + view.title;
  $("back").disabled = view.cursor < 0;
  $("forward").disabled = view.cursor >= view.path.length - 1;
  $("where").textContent = view.cursor < 0 ? "choose an initial state"
    : `step ${view.cursor} of ${view.path.length - 1}` + (view.loaded ? ` (loaded ${view.loaded})` : "");
  $("reached").textContent = `${view.reached} states reached`;
  renderPath();
  renderState();
  renderChoices();
}

function renderPath() {
  const list = $("path");
  list.replaceChildren();
  view.path.forEach((step, k) => {
    const cls = k === view.cursor ? "here" : (k > view.cursor ? "later" : "");
    list.append(el("li", {id: `step-${k}`, class: cls, onclick: () => move("/api/goto", {index: k})},
      `${k}. ${step.label}`, ...badges(step.fails)));
  });
}

function renderState() {
  const state = view.state;
  $("state-heading").textContent = state === null ? "State" : `State ${view.cursor}`;
  const invariants = $("invariants");
  invariants.replaceChildren();
  const fields = $("fields");
  fields.replaceChildren();
  const raw = $("raw");
  raw.replaceChildren();
  if (state === null) return;
  for (const inv of view.invariants) {
    const failed = state.fails.includes(inv.name);
    const cls = failed ? (inv.report ? "report" : "fail") : "ok";
    const word = failed ? (inv.report ? "fails (report)" : "violated") : "holds";
    invariants.append(el("li", {id: `inv-${inv.name}`, class: failed ? "failed" : "held", title: inv.doc},
      inv.name, el("span", {class: `badge ${cls}`, text: word})));
  }
  for (const f of state.fields) {
    fields.append(el("tr", {class: f.changed ? "changed field" : "field", "data-key": f.key},
      el("td", {class: "key", text: f.key}), el("td", {text: f.value})));
  }
  $("query").placeholder = `field op value, e.g. ${state.raw[0][0]} == ${state.raw[0][1]}`;
  for (const [name, value] of state.raw) {
    raw.append(el("tr", {}, el("td", {class: "key", text: name}), el("td", {text: String(value)})));
  }
  filterFields();
}

function filterFields() {
  const text = $("field-filter").value.toLowerCase();
  for (const row of $("fields").querySelectorAll("tr")) {
    row.hidden = text !== "" && !row.dataset.key.toLowerCase().includes(text);
  }
}

function renderChoices() {
  const box = $("choices");
  box.replaceChildren();
  const initial = view.cursor < 0;
  $("choices-heading").textContent = initial ? `Initial states (${view.choices.length})`
    : `Enabled actions (${view.choices.length})`;
  if (!initial && view.choices.length === 0) box.append(el("p", {text: "none: a deadlock, or the model's bounds"}));
  const groups = new Map();
  view.choices.forEach((c, k) => {
    if (!groups.has(c.action)) {
      const group = el("div", {class: "group"}, el("h3", {text: c.action}));
      groups.set(c.action, group);
      box.append(group);
    }
    const go = initial ? () => move("/api/init", {index: c.init}) : () => move("/api/choose", {instance: c.instance});
    const button = el("button", {id: `choice-${k}`, "data-label": c.label, onclick: go, text: c.label});
    const changes = el("ul", {}, ...c.changes.map((d) => el("li", {},
      `${d.key}: `, el("span", {class: "old", text: d.old}), " \u2192 ", el("span", {class: "new", text: d.new}))));
    const marks = c.ahead ? [el("span", {class: "badge ahead", text: "next on the path"})] : [];
    groups.get(c.action).append(el("div", {class: "choice"}, button, ...marks, ...badges(c.fails), changes));
  });
}

async function search() {
  try {
    const found = await api("/api/search", {query: $("query").value});
    showError("");
    $("found").textContent = `${found.total} of ${found.reached} reached states match` +
      (found.total > found.matches.length ? ` (the first ${found.matches.length} shown)` : "");
    $("matches").replaceChildren(...found.matches.map((m, k) => el("li", {},
      el("button", {id: `match-${k}`, class: "match", onclick: () => move("/api/jump", {match: m.match}),
        text: `${m.steps} steps, last ${m.last}`}))));
  } catch (e) {
    showError(e.message);
  }
}

async function load(file) {
  await move("/api/load", {name: file.name, text: await file.text()});
}

async function save() {
  try {
    const saved = await api("/api/save", {});
    showError("");
    $("note").textContent = `saved to ${saved.saved}`;
  } catch (e) {
    showError(e.message);
  }
}

async function drive(fragment) {
  const params = new URLSearchParams(fragment);
  if (params.has("query")) $("query").value = params.get("query");
  for (const token of (params.get("click") || "").split("|").filter(Boolean)) {
    const target = token.startsWith("label:")
      ? document.querySelector(`button[data-label="${CSS.escape(token.slice(6))}"]`) : $(token);
    if (target === null) { showError(`no element ${token} to click`); return; }
    target.click();
    await busy;
  }
  document.body.dataset.done = "yes";
}

$("back").addEventListener("click", () => move("/api/back", {}));
$("forward").addEventListener("click", () => move("/api/forward", {}));
$("search-go").addEventListener("click", () => { busy = search(); });
$("query").addEventListener("keydown", (e) => { if (e.key === "Enter") busy = search(); });
$("field-filter").addEventListener("input", filterFields);
$("load-file").addEventListener("change", (e) => { if (e.target.files.length) busy = load(e.target.files[0]); });
$("save").addEventListener("click", () => { busy = save(); });
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT") return;
  if (e.key === "ArrowLeft" && !$("back").disabled) move("/api/back", {});
  if (e.key === "ArrowRight" && !$("forward").disabled) move("/api/forward", {});
});
act("/api/view").then(() => drive(location.hash.slice(1)));
"""
