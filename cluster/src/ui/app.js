// flotilla's cluster dashboard: machines, units and their states, live from
// the server's event stream (/ui/events: a snapshot, then deltas), a unit's
// file (from the fleet API) and its recent log lines (from its machine,
// /ui/logs/UNIT?machine=ID). The unit list draws only the rows in view, so
// 10,000 units scroll as smoothly as 10.
"use strict";

const ROW = 28; // px, as --row in app.css
const machines = new Map(); // id -> {id, ip, metadata, units, total, reserved}
const units = new Map(); // name -> {name, desired, current, machine, global, hash, states, unscheduled}
let shown = []; // the filtered, sorted names
let selected = null; // the unit shown in detail
let machineFilter = null;
let drawQueued = false;

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

function stateClass(s) {
  return s ? "st-" + s : "";
}

function activeOf(u) {
  if (!u.states.length) return "";
  if (u.global) {
    const active = u.states.filter((s) => s.active === "active").length;
    return active + "/" + u.states.length + " active";
  }
  const s = u.states.find((s) => s.machine === u.machine) || u.states[0];
  return s.active + (s.sub ? " (" + s.sub + ")" : "");
}

// ---- the event stream ----

function connect() {
  const es = new EventSource("events");
  es.addEventListener("snapshot", (ev) => {
    const snap = JSON.parse(ev.data);
    machines.clear();
    units.clear();
    for (const m of snap.machines) machines.set(m.id, m);
    for (const u of snap.units) units.set(u.name, u);
    setStatus(true);
    refilter();
  });
  es.addEventListener("delta", (ev) => {
    const d = JSON.parse(ev.data);
    for (const m of d.machines) machines.set(m.id, m);
    for (const id of d.machinesGone) machines.delete(id);
    for (const u of d.units) units.set(u.name, u);
    for (const n of d.unitsGone) units.delete(n);
    refilter();
  });
  es.onopen = () => setStatus(true);
  es.onerror = () => setStatus(false); // EventSource reconnects by itself
}

function setStatus(live) {
  const s = $("status");
  s.textContent = live ? "live" : "reconnecting…";
  s.className = "status " + (live ? "live" : "connecting");
}

// ---- machines ----

function drawMachines() {
  const body = $("machines").tBodies[0];
  body.replaceChildren();
  const ids = [...machines.keys()].sort();
  for (const id of ids) {
    const m = machines.get(id);
    const md = Object.entries(m.metadata || {})
      .sort()
      .map(([k, v]) => k + "=" + v)
      .join(", ");
    const tr = el(
      "tr",
      { "data-id": id, title: "Show the units of " + id },
      el("td", { title: id }, id.length > 12 ? id.slice(0, 8) + "…" : id),
      el("td", {}, m.ip || "-"),
      el("td", {}, md || "-"),
      el("td", { class: "num" }, String(m.units)),
      el("td", { class: "num reserved" }, reservedText(m)),
      el("td", { class: "num free" }, freeText(m)),
    );
    if (machineFilter === id) tr.classList.add("selected");
    tr.onclick = () => {
      machineFilter = machineFilter === id ? null : id;
      refilter();
    };
    body.append(tr);
  }
  $("machine-count").textContent = "(" + ids.length + ")";
}

// ---- resources: memory in MiB, cores in hundredths ----

function cores(h) {
  return (h / 100).toFixed(2);
}

function share(part, whole) {
  return whole > 0 ? Math.round((100 * part) / whole) + "%" : "-";
}

// What its units reserve, as shares of what they may: "25% mem · 50% cpu".
function reservedText(m) {
  if (!m.total) return "-";
  const r = m.reserved || { memory: 0, cores: 0 };
  return share(r.memory, m.total.memory) + " mem · " + share(r.cores, m.total.cores) + " cpu";
}

// What is left: "3072 MiB · 2.50 cores".
function freeText(m) {
  if (!m.total) return "-";
  const r = m.reserved || { memory: 0, cores: 0 };
  const mem = Math.max(0, m.total.memory - r.memory);
  const cpu = Math.max(0, m.total.cores - r.cores);
  return mem + " MiB · " + cores(cpu) + " cores";
}

// ---- units: filter and virtual scrolling ----

function matches(u, words) {
  const hay = [u.name, u.desired, u.current || "", u.machine || "", u.global ? "global" : "", u.unscheduled ? "unscheduled" : "", activeOf(u)]
    .join(" ")
    .toLowerCase();
  return words.every((w) => hay.includes(w));
}

function refilter() {
  const words = $("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
  shown = [];
  for (const u of units.values()) {
    if (machineFilter && u.machine !== machineFilter && !u.states.some((s) => s.machine === machineFilter)) continue;
    if (words.length && !matches(u, words)) continue;
    shown.push(u.name);
  }
  shown.sort();
  queueDraw();
}

function queueDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    drawMachines();
    drawUnits();
    drawSummary();
    if (selected) drawDetail(false);
  });
}

function drawSummary() {
  let launched = 0, failed = 0;
  for (const u of units.values()) {
    if (u.current === "launched") launched++;
    if (u.states.some((s) => s.active === "failed")) failed++;
  }
  $("summary").textContent =
    machines.size + " machines · " + units.size + " units · " + launched + " launched · " + failed + " failed";
  $("unit-count").textContent =
    "(" + shown.length + (shown.length !== units.size ? " of " + units.size : "") + ")";
}

function drawUnits() {
  const view = $("units");
  const spacer = $("units-spacer");
  spacer.style.height = shown.length * ROW + "px";
  const first = Math.max(0, Math.floor(view.scrollTop / ROW) - 10);
  const last = Math.min(shown.length, Math.ceil((view.scrollTop + view.clientHeight) / ROW) + 10);
  const rows = [];
  for (let i = first; i < last; i++) {
    const u = units.get(shown[i]);
    if (!u) continue;
    const act = activeOf(u);
    const row = el(
      "div",
      { class: "row unit-row", "data-name": u.name },
      el("span", { title: u.name }, u.name),
      el("span", { class: stateClass(u.desired) }, u.desired),
      el("span", { class: stateClass(u.current) }, u.global ? "global" : u.current || "-"),
      u.unscheduled && !u.machine
        ? el("span", { class: "unscheduled", title: u.unscheduled }, "unscheduled")
        : el("span", { title: u.machine || "" }, u.global ? "every match" : u.machine || "-"),
      el("span", { class: stateClass(act.split(" ")[0]) }, act || "-"),
    );
    row.style.top = i * ROW + "px";
    if (u.name === selected) row.classList.add("selected");
    row.onclick = () => select(u.name);
    rows.push(row);
  }
  spacer.replaceChildren(...rows);
}

// ---- one unit ----

function select(name) {
  selected = name;
  $("detail").hidden = false;
  drawDetail(true);
  drawUnits();
  $("detail").scrollIntoView({ block: "start" });
}

function drawDetail(fresh) {
  const u = units.get(selected);
  $("detail-name").textContent = selected + (u ? "" : " (gone)");
  const facts = $("detail-facts");
  facts.replaceChildren();
  if (!u) return;
  const fact = (k, v) => facts.append(el("dt", {}, k), el("dd", {}, v));
  fact("desired", u.desired);
  fact("current", u.global ? "global (no single machine)" : u.current || "inactive");
  fact("machine", u.global ? "every matching machine" : u.machine || "not scheduled");
  if (u.unscheduled) fact("unscheduled", u.unscheduled);
  fact("hash", u.hash);
  const body = $("detail-states").tBodies[0];
  body.replaceChildren(
    ...u.states.map((s) =>
      el(
        "tr",
        {},
        el("td", {}, s.machine),
        el("td", {}, s.load),
        el("td", { class: stateClass(s.active) }, s.active),
        el("td", {}, s.sub),
      ),
    ),
  );
  const sel = $("log-machine");
  const choices = u.global ? u.states.map((s) => s.machine) : u.machine ? [u.machine] : [];
  const before = sel.value;
  if (fresh || [...sel.options].map((o) => o.value).join() !== choices.join()) {
    sel.replaceChildren(...choices.map((m) => el("option", { value: m }, m)));
    if (choices.includes(before) && !fresh) sel.value = before;
  }
  if (fresh) {
    loadFile(selected);
    loadLogs();
  }
}

async function loadFile(name) {
  const pre = $("unit-file");
  pre.textContent = "…";
  try {
    const r = await fetch("../fleet/v1/units/" + encodeURIComponent(name));
    const u = await r.json();
    if (!r.ok) throw new Error(u.error ? u.error.message : "HTTP " + r.status);
    if (selected !== name) return;
    // fleet's canonical form: sections in first-seen order.
    const sections = new Map();
    for (const o of u.options || []) {
      if (!sections.has(o.section)) sections.set(o.section, []);
      sections.get(o.section).push(o.name + "=" + o.value);
    }
    pre.textContent = [...sections].map(([s, lines]) => "[" + s + "]\n" + lines.join("\n")).join("\n\n");
  } catch (e) {
    pre.textContent = "cannot read the unit file: " + e.message;
  }
}

async function loadLogs() {
  const name = selected;
  const machine = $("log-machine").value;
  const pre = $("logs");
  if (!machine) {
    pre.textContent = "not running anywhere";
    return;
  }
  pre.textContent = "asking " + machine + "…";
  try {
    const r = await fetch(
      "logs/" + encodeURIComponent(name) + "?machine=" + encodeURIComponent(machine) + "&lines=100",
    );
    const body = await r.json();
    if (selected !== name) return;
    if (!r.ok) throw new Error(body.error ? body.error.message : "HTTP " + r.status);
    pre.replaceChildren(
      ...body.lines.map((l) => el("div", { class: l.stream }, (l.time ? l.time + " " : "") + l.line)),
    );
    if (!body.lines.length) pre.textContent = "(no output yet)";
    pre.scrollTop = pre.scrollHeight;
  } catch (e) {
    pre.replaceChildren(el("span", { class: "error" }, e.message));
  }
}

// ---- wiring ----

$("filter").addEventListener("input", refilter);
$("clear-filter").onclick = () => {
  $("filter").value = "";
  machineFilter = null;
  refilter();
};
$("units").addEventListener("scroll", () => drawUnits(), { passive: true });
$("log-refresh").onclick = loadLogs;
$("log-machine").onchange = loadLogs;
window.addEventListener("resize", () => drawUnits());
// The stream opens once the page has loaded (a stream open while the page
// loads keeps some browsers, and their drivers, waiting for it to end).
if (document.readyState === "complete") connect();
else window.addEventListener("load", connect);
