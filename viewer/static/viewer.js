// The episode viewer's page: plays episodes through the server's API and draws recorded episodes
// (evaluation/recording.py's format) on canvases. Addresses: #rec=PATH[&cmp=PATH] a replay (and a
// second policy's on the same episode), #folder=PATH a folder's table of episodes.
"use strict";

const COLORS = {
  free: [232, 228, 214], blocked: [52, 58, 64], obstacle: [196, 64, 64],
  chest: [242, 181, 15], chestTaken: [150, 140, 120], buff: [40, 190, 220], buffCooling: [120, 160, 170],
  start: [46, 160, 67], end: [214, 48, 49], hero: [30, 70, 230], trail: [240, 120, 30], flash: [200, 40, 200],
  reference: [20, 150, 150], referenceHero: [0, 110, 110], other: [150, 90, 0], otherHero: [20, 20, 20],
  monsters: [[220, 40, 40], [150, 40, 180]], monsterTrail: [[240, 170, 170], [205, 170, 225]], view: [100, 130, 255],
};
// Screen direction (right, down) of each compass name: North is up in every game's picture.
const COMPASS = { E: [1, 0], NE: [1, -1], N: [0, -1], NW: [-1, -1], W: [-1, 0], SW: [-1, 1], S: [0, 1], SE: [1, 1] };
const MAP_PX = 640;
const PLANE_HIGH = [20, 50, 170], PLANE_LOW = [200, 30, 30];  // a plane's 1 and -1; 0 is white

const $ = (id) => document.getElementById(id);
const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
const state = { a: null, b: null, ref: null, t: 0, timer: null, gridCache: null };

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(path, options) {
  const response = await fetch(path, options);
  let body;
  try { body = await response.json(); } catch (e) { throw new Error(`${path}: the server answered ${response.status} without JSON`); }
  if (!response.ok) throw new Error(body.error || `${path}: ${response.status}`);
  return body;
}

// --- the forms ---------------------------------------------------------------------------------------

async function loadChoices() {
  const choices = await api("/api/choices");
  const preset = $("preset");
  for (const [game, info] of Object.entries(choices.games)) {
    const group = document.createElement("optgroup");
    group.label = info.title || game;
    for (const name of info.presets) group.appendChild(new Option(name, name));
    preset.appendChild(group);
  }
  const run = $("run");
  for (const r of choices.runs) run.appendChild(new Option(`${r.run} (${r.checkpoints.length})`, r.path));
  run.onchange = () => {
    const found = choices.runs.find((r) => r.path === run.value);
    const pick = $("run-ckpt");
    pick.innerHTML = "";
    pick.appendChild(new Option("newest", ""));
    for (const c of (found ? found.checkpoints.slice().reverse() : [])) pick.appendChild(new Option(`step ${c.id}`, c.path));
    $("ckpt").value = run.value;
  };
  $("run-ckpt").onchange = () => { $("ckpt").value = $("run-ckpt").value || $("run").value; };
  if (choices.folder && !location.hash) location.hash = `folder=${encodeURIComponent(choices.folder)}`;
}

function playFields(ckpt) {
  const fields = { agent: $("agent").value, policy: $("policy").value, seed: $("seed").value };
  const optional = { ckpt, package: $("package").value, preset: $("preset").value, usr_conf: $("usr-conf").value,
                     config: $("config").value, map_seed: $("map-seed").value };
  for (const [key, value] of Object.entries(optional)) if (value && value.trim()) fields[key] = value.trim();
  return fields;
}

async function play(event) {
  event.preventDefault();
  showError("");
  $("busy").hidden = false;
  $("play-button").disabled = true;
  try {
    const first = await api("/api/play", { method: "POST", body: JSON.stringify(playFields($("ckpt").value)) });
    let hash = `rec=${encodeURIComponent(first.recording)}`;
    const second = $("ckpt2").value.trim();
    if (second) {
      const other = await api("/api/play", { method: "POST", body: JSON.stringify({ ...playFields(second), agent: "ckpt" }) });
      hash += `&cmp=${encodeURIComponent(other.recording)}`;
    }
    location.hash = hash;
  } catch (e) {
    showError(e.message);
  } finally {
    $("busy").hidden = true;
    $("play-button").disabled = false;
  }
}

// --- addresses -----------------------------------------------------------------------------------------

function hashParams() {
  const params = {};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const at = part.indexOf("=");
    if (at > 0) params[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
  }
  return params;
}

async function route() {
  const params = hashParams();
  stopPlaying();
  try {
    if (params.folder) await openFolder(params.folder);
    else if (params.rec) await openReplay(params.rec, params.cmp);
  } catch (e) {
    showError(e.message);
  }
}

// --- a folder of recordings ---------------------------------------------------------------------------------

const fmt = (v, digits = 1) => (v === null || v === undefined ? "-" : Number(v).toFixed(digits));

async function openFolder(path) {
  const body = await api(`/api/folder?path=${encodeURIComponent(path)}`);
  showError("");
  $("folder").value = body.folder;
  $("episode-view").hidden = true;
  $("folder-view").hidden = false;
  $("folder-title").textContent = `${body.folder}: ${body.episodes.length} recorded episodes`;
  const tbody = $("episodes").querySelector("tbody");
  tbody.innerHTML = "";
  for (const row of body.episodes) {
    const tr = document.createElement("tr");
    const file = `${body.folder}/${row.file}`;
    tr.dataset.file = file;
    tr.dataset.score = row.score;
    const cells = [row.policy, row.episode, row.seed, fmt(row.score), fmt(row.reference_score), fmt(row.ratio, 3),
                   row.outcome, `${row.chests}/${row.chests_available}`, row.steps];
    const pick = document.createElement("td");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.onclick = (e) => e.stopPropagation();
    pick.appendChild(box);
    tr.appendChild(pick);
    for (const value of cells) {
      const td = document.createElement("td");
      td.textContent = value;
      tr.appendChild(td);
    }
    tr.onclick = () => { location.hash = `rec=${encodeURIComponent(file)}`; };
    tbody.appendChild(tr);
  }
}

function compareTicked() {
  const ticked = [...$("episodes").querySelectorAll("tbody tr")].filter((tr) => tr.querySelector("input").checked);
  if (ticked.length !== 2) { showError("tick exactly two rows to compare them"); return; }
  location.hash = `rec=${encodeURIComponent(ticked[0].dataset.file)}&cmp=${encodeURIComponent(ticked[1].dataset.file)}`;
}

// --- one episode -------------------------------------------------------------------------------------------------

async function openReplay(path, other) {
  const a = await api(`/api/recording?path=${encodeURIComponent(path)}`);
  const b = other ? await api(`/api/recording?path=${encodeURIComponent(other)}`) : null;
  showError("");
  state.a = a;
  state.b = b;
  state.ref = a.header.policy.kind === "reference" ? null : a.reference;
  state.gridCache = null;
  $("folder-view").hidden = true;
  $("episode-view").hidden = false;
  const h = a.header;
  const ep = h.episode;
  $("title").textContent = `${h.game}: ${h.policy.name} on ${ep.label || "custom"}, seed ${ep.seed}` +
    (b ? `  vs  ${b.header.policy.name}` : "");
  const lines = [describeResult(h.policy.name, h.result)];
  if (state.ref) lines.push(describeResult("reference", state.ref.header.result));
  if (b) {
    lines.push(describeResult(b.header.policy.name, b.header.result));
    if (JSON.stringify(b.header.episode.usr_conf) !== JSON.stringify(ep.usr_conf) || b.header.episode.seed !== ep.seed)
      lines.push("<span class=warn>the two recordings did not play the same episode</span>");
  }
  $("summary").innerHTML = lines.join("<br>");
  const last = Math.max(a.steps.length, b ? b.steps.length : 0) - 1;
  $("scrub").max = last;
  makeEventButtons();
  makeLegend();
  setStep(0);
}

function describeResult(name, r) {
  return `<b>${escapeHtml(name)}</b>: score ${fmt(r.total_score)}, ${escapeHtml(r.outcome)}, chests ${r.chests}/${r.chests_available}, ` +
    `${r.steps} steps, flashes ${r.flash_count}, buffs ${r.buff_count}`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function makeEventButtons() {
  const kinds = [];
  for (const step of state.a.steps) for (const e of step.events || []) if (!kinds.includes(e)) kinds.push(e);
  const box = $("event-buttons");
  box.innerHTML = kinds.length ? "next:" : "";
  for (const kind of kinds) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = kind;
    button.dataset.event = kind;
    button.onclick = () => {
      const steps = state.a.steps;
      for (let t = state.t + 1; t < steps.length; t++) if ((steps[t].events || []).includes(kind)) { setStep(t); return; }
    };
    box.appendChild(button);
  }
}

function makeLegend() {
  const items = [["hero", COLORS.hero], ["trail", COLORS.trail], ["flash", COLORS.flash], ["chest", COLORS.chest],
                 ["buff", COLORS.buff], ["start", COLORS.start], ["end", COLORS.end]];
  if (state.ref) items.push(["reference", COLORS.reference]);
  if (state.b) items.push([state.b.header.policy.name, COLORS.other]);
  if (state.a.steps.some((s) => (s.monsters || []).length)) items.push(["monsters", COLORS.monsters[0]]);
  $("legend").innerHTML = items.map(([name, c]) => `<span><i style="background:${rgb(c)}"></i>${escapeHtml(name)}</span>`).join("");
}

const stepAt = (rec, t) => rec.steps[Math.min(t, rec.steps.length - 1)];

function setStep(t) {
  const last = Number($("scrub").max);
  state.t = Math.max(0, Math.min(last, t));
  $("scrub").value = state.t;
  const s = stepAt(state.a, state.t);
  $("status").textContent = `state ${state.t} / ${state.a.steps.length - 1}`;
  drawMap();
  drawView(s);
  fillStats();
  fillDistribution($("dist"), state.a, s);
  fillDistribution($("dist2"), state.b, state.b ? stepAt(state.b, state.t) : null);
  fillTerms();
  drawPlanes(s);
}

// --- the map ---------------------------------------------------------------------------------------------------------

function geometry(world) {
  const rows = world.rows.length, cols = world.rows[0].length;
  const scale = Math.max(1, Math.floor(MAP_PX / Math.max(rows, cols)));
  const y = (z) => (world.z_up ? rows - 1 - z : z);
  return { rows, cols, scale, x0: (x) => x * scale, y0: (z) => y(z) * scale };
}

function gridImage(world, g) {
  if (state.gridCache) return state.gridCache;
  const canvas = document.createElement("canvas");
  canvas.width = g.cols * g.scale;
  canvas.height = g.rows * g.scale;
  const ctx = canvas.getContext("2d");
  const colour = { "#": COLORS.blocked, ".": COLORS.free, x: COLORS.obstacle };
  world.rows.forEach((row, z) => {
    for (let x = 0; x < row.length; x++) {
      ctx.fillStyle = rgb(colour[row[x]] || COLORS.blocked);
      ctx.fillRect(g.x0(x), g.y0(z), g.scale, g.scale);
    }
  });
  state.gridCache = canvas;
  return canvas;
}

function cellBox(ctx, g, cell, colour, grow = 0) {
  ctx.fillStyle = rgb(colour);
  ctx.fillRect(g.x0(cell[0]) - grow, g.y0(cell[1]) - grow, g.scale + 2 * grow, g.scale + 2 * grow);
}

function trail(ctx, g, rec, t, colour, inset) {
  ctx.fillStyle = rgb(colour);
  const size = Math.max(1, g.scale - 2 * inset);
  for (let i = 0; i <= Math.min(t, rec.steps.length - 1); i++) {
    const h = rec.steps[i].hero;
    ctx.fillRect(g.x0(h[0]) + inset, g.y0(h[1]) + inset, size, size);
  }
}

function flashes(ctx, g, rec, t) {
  ctx.strokeStyle = rgb(COLORS.flash);
  ctx.lineWidth = 2;
  for (let i = 1; i <= Math.min(t, rec.steps.length - 1); i++) {
    if (!(rec.steps[i].events || []).includes("flash")) continue;
    const a = rec.steps[i - 1].hero, b = rec.steps[i].hero, half = g.scale / 2;
    ctx.beginPath();
    ctx.moveTo(g.x0(a[0]) + half, g.y0(a[1]) + half);
    ctx.lineTo(g.x0(b[0]) + half, g.y0(b[1]) + half);
    ctx.stroke();
  }
}

function drawMap() {
  const a = state.a, world = a.header.world, g = geometry(world), t = state.t, s = stepAt(a, t);
  const canvas = $("map");
  canvas.width = g.cols * g.scale;
  canvas.height = g.rows * g.scale;
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(gridImage(world, g), 0, 0);
  if (state.ref) trail(ctx, g, state.ref, t, COLORS.reference, 1);
  if (state.b) trail(ctx, g, state.b, t, COLORS.other, 1);
  trail(ctx, g, a, t, COLORS.trail, 1);
  // the monsters' trails, then the items, the fixed points, the view box and everyone's cell
  for (let i = 0; i <= Math.min(t, a.steps.length - 1); i++) {
    (a.steps[i].monsters || []).forEach((m, k) => {
      ctx.fillStyle = rgb(COLORS.monsterTrail[k % 2]);
      ctx.fillRect(g.x0(m[0]) + 1, g.y0(m[1]) + 1, Math.max(1, g.scale - 2), Math.max(1, g.scale - 2));
    });
  }
  flashes(ctx, g, a, t);
  if (state.b) flashes(ctx, g, state.b, t);
  (world.chests || []).forEach((cell, i) => {
    if (s.chests[i]) cellBox(ctx, g, cell, COLORS.chest, 1);
    else { ctx.strokeStyle = rgb(COLORS.chestTaken); ctx.lineWidth = 1; ctx.strokeRect(g.x0(cell[0]) - 0.5, g.y0(cell[1]) - 0.5, g.scale + 1, g.scale + 1); }
  });
  (world.buffs || []).forEach((cell, i) => cellBox(ctx, g, cell, s.buffs[i] ? COLORS.buff : COLORS.buffCooling, 1));
  if (world.start) cellBox(ctx, g, world.start, COLORS.start, 1);
  if (world.end) cellBox(ctx, g, world.end, COLORS.end, 1);
  const r = world.view_radius;
  ctx.strokeStyle = rgb(COLORS.view);
  ctx.lineWidth = 1;
  const corner = [s.hero[0] - r, world.z_up ? s.hero[1] + r : s.hero[1] - r];
  ctx.strokeRect(g.x0(corner[0]) + 0.5, g.y0(corner[1]) + 0.5, (2 * r + 1) * g.scale - 1, (2 * r + 1) * g.scale - 1);
  (s.monsters || []).forEach((m, k) => cellBox(ctx, g, m, COLORS.monsters[k % 2], 1));
  if (state.ref) cellBox(ctx, g, stepAt(state.ref, t).hero, COLORS.referenceHero, 1);
  if (state.b) cellBox(ctx, g, stepAt(state.b, t).hero, COLORS.otherHero, 2);
  cellBox(ctx, g, s.hero, COLORS.hero, 2);
}

// --- the view window ------------------------------------------------------------------------------------------------------

function drawView(s) {
  const world = state.a.header.world, r = world.view_radius, side = 2 * r + 1;
  const canvas = $("view");
  const scale = Math.max(2, Math.floor(231 / side));
  canvas.width = canvas.height = side * scale;
  const ctx = canvas.getContext("2d");
  const rows = world.rows.length, cols = world.rows[0].length;
  // screen column i, row j of the window: cell (hero x - r + i, hero z -/+ (r - j))
  const cellAt = (i, j) => [s.hero[0] - r + i, world.z_up ? s.hero[1] + r - j : s.hero[1] - r + j];
  const colour = { "#": COLORS.blocked, ".": COLORS.free, x: COLORS.obstacle };
  const put = (cell, c) => {
    const i = cell[0] - s.hero[0] + r, j = world.z_up ? s.hero[1] + r - cell[1] : cell[1] - s.hero[1] + r;
    if (i >= 0 && i < side && j >= 0 && j < side) { ctx.fillStyle = rgb(c); ctx.fillRect(i * scale, j * scale, scale, scale); }
  };
  for (let j = 0; j < side; j++) for (let i = 0; i < side; i++) {
    const [x, z] = cellAt(i, j);
    const inside = x >= 0 && x < cols && z >= 0 && z < rows;
    ctx.fillStyle = rgb(inside ? colour[world.rows[z][x]] || COLORS.blocked : [0, 0, 0]);
    ctx.fillRect(i * scale, j * scale, scale, scale);
  }
  (world.chests || []).forEach((cell, i) => { if (s.chests[i]) put(cell, COLORS.chest); });
  (world.buffs || []).forEach((cell, i) => { if (s.buffs[i]) put(cell, COLORS.buff); });
  if (world.end) put(world.end, COLORS.end);
  (s.monsters || []).forEach((m, k) => put(m, COLORS.monsters[k % 2]));
  put(s.hero, COLORS.hero);
  if (s.action === undefined) return;
  const name = state.a.header.actions[s.action] || "";
  const flash = name.startsWith("flash");
  const dir = COMPASS[name.replace("flash ", "")];
  if (!dir) return;
  const centre = (r + 0.5) * scale, length = (flash ? r : 2) * scale, norm = Math.hypot(dir[0], dir[1]);
  ctx.strokeStyle = rgb(flash ? COLORS.flash : COLORS.end);
  ctx.lineWidth = Math.max(2, scale / 3);
  ctx.beginPath();
  ctx.moveTo(centre, centre);
  ctx.lineTo(centre + (length * dir[0]) / norm, centre + (length * dir[1]) / norm);
  ctx.stroke();
}

// --- numbers -----------------------------------------------------------------------------------------------------------------

function fillStats() {
  const recs = [[state.a.header.policy.name, state.a]];
  if (state.b) recs.push([state.b.header.policy.name, state.b]);
  if (state.ref) recs.push(["reference", state.ref]);
  const rows = [["", ...recs.map(([name]) => name)]];
  const cell = (fn) => recs.map(([, rec]) => fn(stepAt(rec, state.t), rec));
  const actionName = (s, rec) => (s.action === undefined ? "(end)" : rec.header.actions[s.action] || String(s.action));
  rows.push(["score", ...cell((s) => fmt(s.score))]);
  rows.push(["hero", ...cell((s) => `${s.hero[0]}, ${s.hero[1]}`)]);
  rows.push(["action", ...cell(actionName)]);
  rows.push(["probability", ...cell((s) => (s.probs && s.action !== undefined ? fmt(s.probs[s.action], 3) : "-"))]);
  rows.push(["value", ...cell((s) => (s.value === undefined ? "-" : fmt(s.value, 3)))]);
  rows.push(["reward", ...cell((s) => (s.reward === undefined ? "-" : fmt(s.reward, 4)))]);
  rows.push(["events", ...cell((s) => (s.events || []).join(", ") || "-")]);
  rows.push(["chests left", ...cell((s) => String(s.chests.filter(Boolean).length))]);
  if (state.a.steps.some((s) => (s.monsters || []).length)) rows.push(["monsters", ...cell((s) => (s.monsters || []).map((m) => m.join(",")).join("  ") || "-")]);
  const table = $("stats");
  table.innerHTML = "";
  rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    tr.dataset.row = row[0] || "policy";
    row.forEach((value, k) => {
      const td = document.createElement(i === 0 || k === 0 ? "th" : "td");
      td.textContent = value;
      tr.appendChild(td);
    });
    table.appendChild(tr);
  });
}

function fillDistribution(box, rec, s) {
  box.innerHTML = "";
  if (!rec || !s) return;
  if (!s.probs) {
    box.textContent = s.action === undefined ? "" : `${rec.header.policy.name}: this policy exposes no action distribution`;
    box.style.height = "auto";
    return;
  }
  box.style.height = "";
  box.title = rec.header.policy.name;
  s.probs.forEach((p, i) => {
    const bar = document.createElement("div");
    bar.className = "bar" + (i === s.action ? " chosen" : "");
    bar.dataset.action = i;
    bar.dataset.prob = p;
    bar.title = `${rec.header.actions[i]}: ${p}`;
    const fill = document.createElement("div");
    fill.className = "fill";
    fill.style.height = `${Math.round(p * 60)}px`;
    const label = document.createElement("small");
    label.textContent = (rec.header.actions[i] || String(i)).replace("flash ", "F");
    bar.appendChild(fill);
    bar.appendChild(label);
    box.appendChild(bar);
  });
}

function fillTerms() {
  const table = $("terms");
  table.innerHTML = "";
  const names = state.a.header.terms || [];
  if (!names.length) { table.innerHTML = "<tr><td>this game declares no reward terms</td></tr>"; return; }
  const sums = {};
  let total = 0;
  for (let i = 1; i <= Math.min(state.t, state.a.steps.length - 1); i++) {
    const s = state.a.steps[i];
    total += s.reward || 0;
    for (const [k, v] of Object.entries(s.terms || {})) sums[k] = (sums[k] || 0) + v;
  }
  const s = stepAt(state.a, state.t);
  const head = document.createElement("tr");
  head.innerHTML = "<th>term</th><th>this step</th><th>sum so far</th>";
  table.appendChild(head);
  const rows = names.map((name) => [name, (s.terms || {})[name], sums[name] || 0]);
  rows.push(["reward", s.reward, total]);
  for (const [name, value, sum] of rows) {
    const tr = document.createElement("tr");
    tr.dataset.term = name;
    tr.innerHTML = `<td>${escapeHtml(name)}</td><td class="num">${fmt(value, 4)}</td><td class="num">${fmt(sum, 3)}</td>`;
    table.appendChild(tr);
  }
}

// --- feature planes -------------------------------------------------------------------------------------------------------------

function decodePlane(runs, size) {
  const out = new Float32Array(size);
  let at = 0;
  for (let i = 0; i < runs.length; i += 2) {
    out.fill(runs[i] / 100, at, at + runs[i + 1]);
    at += runs[i + 1];
  }
  return out;
}

function drawPlanes(s) {
  const box = $("planes");
  box.innerHTML = "";
  const info = state.a.header.planes;
  if (!info) { box.textContent = "this policy exposes no feature planes"; return; }
  if (!s.planes) { box.textContent = "no decision at the last state"; return; }
  const [rows, cols] = info.shape, zoom = Math.max(2, Math.floor(126 / Math.max(rows, cols)));
  s.planes.forEach((runs, k) => {
    const values = decodePlane(runs, rows * cols);
    const figure = document.createElement("figure");
    const canvas = document.createElement("canvas");
    canvas.width = cols * zoom;
    canvas.height = rows * zoom;
    canvas.dataset.plane = info.names[k];
    const ctx = canvas.getContext("2d");
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) {
      const v = values[i * cols + j], w = Math.min(1, Math.abs(v)), tint = v < 0 ? PLANE_LOW : PLANE_HIGH;
      ctx.fillStyle = rgb(tint.map((c) => Math.round(255 + (c - 255) * w)));
      const row = state.a.header.world.z_up ? rows - 1 - i : i;  // rows are z, as the map's
      ctx.fillRect(j * zoom, row * zoom, zoom, zoom);
    }
    const caption = document.createElement("figcaption");
    caption.textContent = info.names[k];
    figure.appendChild(canvas);
    figure.appendChild(caption);
    box.appendChild(figure);
  });
}

// --- playing ------------------------------------------------------------------------------------------------------------------------

function stopPlaying() {
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
  $("toggle").textContent = "play";
}

function togglePlaying() {
  if (state.timer) { stopPlaying(); return; }
  $("toggle").textContent = "pause";
  state.timer = setInterval(() => {
    if (state.t >= Number($("scrub").max)) { stopPlaying(); return; }
    setStep(state.t + 1);
  }, Number($("speed").value));
}

function init() {
  $("play-form").addEventListener("submit", play);
  $("folder-form").addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `folder=${encodeURIComponent($("folder").value.trim())}`;
  });
  $("compare-button").onclick = compareTicked;
  $("scrub").addEventListener("input", () => setStep(Number($("scrub").value)));
  $("first").onclick = () => setStep(0);
  $("prev").onclick = () => setStep(state.t - 1);
  $("next").onclick = () => setStep(state.t + 1);
  $("last").onclick = () => setStep(Number($("scrub").max));
  $("toggle").onclick = togglePlaying;
  $("speed").onchange = () => { if (state.timer) { stopPlaying(); togglePlaying(); } };
  document.addEventListener("keydown", (e) => {
    if (!state.a || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") setStep(state.t + 1);
    else if (e.key === "ArrowLeft") setStep(state.t - 1);
    else if (e.key === " ") { e.preventDefault(); togglePlaying(); }
  });
  window.addEventListener("hashchange", route);
  loadChoices().catch((e) => showError(e.message)).then(route);
}

init();
