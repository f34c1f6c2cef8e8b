// track-gen explore: the page. It sends changes to the server (one request at a time, the
// latest value of a control wins), draws the geometry the server sends on one canvas, and
// shows a refused value's error text next to the control that sent it.
"use strict";

const $ = (id) => document.getElementById(id);
const canvas = $("grid");
let state = null; // GET /api/state
let batch = null; // the last batch drawn
let draws = 0;
let lastRoundTrip = null; // ms from a control's change to the answer, the last one
const queue = []; // [{key, path, body, ctl}]
let busy = false;

// ------------------------------------------------------------------ requests
async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
  if (!r.ok) {
    const err = new Error(data.error || `HTTP ${r.status}`);
    err.status = r.status;
    throw err;
  }
  return data;
}

function send(key, path, body, ctl) {
  const i = queue.findIndex((q) => q.key === key);
  if (i >= 0) queue.splice(i, 1); // only the latest value of a control
  queue.push({ key, path, body, ctl });
  pump();
}

async function pump() {
  if (busy || queue.length === 0) return;
  busy = true;
  const job = queue.shift();
  setStatus("working…");
  const t0 = performance.now();
  try {
    const out = await api(job.path, job.body);
    showError(job.ctl, "");
    if (out.state) applyState(out.state);
    draw(out, performance.now() - t0);
    setStatus("ready");
  } catch (e) {
    showError(job.ctl, e.message);
    setStatus(e.status ? "ready (last change refused)" : "server unreachable");
  } finally {
    busy = false;
    document.body.dataset.busy = queue.length ? "1" : "0";
    if (queue.length) pump();
  }
}

function setStatus(text) {
  $("status").textContent = text;
  if (busy) document.body.dataset.busy = "1";
}

function showError(ctl, text) {
  if (!ctl) ctl = document.querySelector('[data-ctl="next"]');
  const err = ctl.querySelector(".err");
  if (err) err.textContent = text;
  ctl.querySelectorAll("input[type=text], select").forEach((el) => el.classList.toggle("bad", !!text));
}

// A typed value: a number when it reads as one, true/false, null for "none"/empty where
// allowed, else the raw text (the server answers with the library's own message).
function parseValue(text, kind) {
  const t = String(text).trim();
  if (kind === "bool") {
    if (/^(true|1|yes|on)$/i.test(t)) return true;
    if (/^(false|0|no|off)$/i.test(t)) return false;
    return t;
  }
  if (kind === "choice" || kind === "name") return t;
  if (/^(none|null)$/i.test(t)) return null;
  if (t !== "" && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) {
    return Number(t);
  }
  return t;
}

// ------------------------------------------------------------------ controls
function fillSelect(sel, items, value) {
  const have = Array.from(sel.options).map((o) => o.value).join("\n");
  if (have !== items.join("\n")) {
    sel.innerHTML = "";
    for (const it of items) {
      const o = document.createElement("option");
      o.value = it;
      o.textContent = it;
      sel.appendChild(o);
    }
  }
  sel.value = value;
}

function setIfIdle(el, value) {
  if (document.activeElement !== el) el.value = value;
}

function ctlOf(el) { return el.closest(".ctl"); }

function applyState(s) {
  state = s;
  fillSelect($("family"), s.families, s.family);
  fillSelect($("sampler"), s.samplers, s.generator);
  fillSelect($("z-profile"), s.z_profiles, s.z_profile);
  setIfIdle($("num-envs"), s.num_envs);
  setIfIdle($("seed"), s.seed);
  $("half-width-row").hidden = s.half_width === null;
  if (s.half_width !== null) setIfIdle($("half-width"), s.half_width);
  renderParams(s.params);
  renderStatic(s.static);
}

function fmt(v) {
  if (v === null || v === undefined) return "";
  // a numeric field may hold one of its named choices (cpu_threads "auto"): shown as text
  if (typeof v !== "number") return String(v);
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
}

function renderParams(params) {
  const box = $("params");
  const sig = params.map((p) => p.name).join(",");
  if (box.dataset.sig !== sig) {
    box.dataset.sig = sig;
    box.innerHTML = "";
    let stage = null;
    for (const p of params) {
      if (p.stage !== stage) {
        stage = p.stage;
        const h = document.createElement("h3");
        h.textContent = stage;
        box.appendChild(h);
      }
      box.appendChild(paramControl(p));
    }
  }
  for (const p of params) updateParam(p);
}

function paramControl(p) {
  const div = document.createElement("div");
  div.className = "ctl param";
  div.dataset.ctl = "param:" + p.name;
  div.dataset.name = p.name;
  const short = p.name.slice(p.stage.length + 1);
  div.innerHTML = `
    <label class="name"></label> <span class="hint unit"></span>
    <div class="row">
      <input type="range">
      <input type="text" class="num" inputmode="decimal">
      <label class="hint"><input type="checkbox" class="rand"> random</label>
    </div>
    <div class="row rng" hidden>
      from <input type="text" class="lo" inputmode="decimal">
      to <input type="text" class="hi" inputmode="decimal">
    </div>
    <div class="hint range"></div>
    <div class="err"></div>`;
  div.querySelector("label.name").textContent = short;
  div.querySelector("label.name").title = p.doc;
  div.querySelector(".unit").textContent = p.unit;
  const slider = div.querySelector("input[type=range]");
  const num = div.querySelector(".num");
  const rand = div.querySelector(".rand");
  const lo = div.querySelector(".lo");
  const hi = div.querySelector(".hi");
  slider.addEventListener("input", () => {
    num.value = fmt(Number(slider.value));
    send("param:" + p.name, "/api/generate", { params: { [p.name]: Number(slider.value) } }, div);
  });
  num.addEventListener("change", () => {
    send("param:" + p.name, "/api/generate", { params: { [p.name]: parseValue(num.value) } }, div);
  });
  const sendRange = () => {
    const body = { randomize: { [p.name]: rand.checked ? [parseValue(lo.value), parseValue(hi.value)] : null } };
    send("param:" + p.name, "/api/generate", body, div);
  };
  rand.addEventListener("change", () => {
    if (rand.checked && lo.value === "") {
      const cur = (state.params.find((q) => q.name === p.name) || p);
      lo.value = fmt(cur.slider[0] + 0.25 * (cur.slider[1] - cur.slider[0]));
      hi.value = fmt(cur.slider[0] + 0.75 * (cur.slider[1] - cur.slider[0]));
    }
    sendRange();
  });
  lo.addEventListener("change", sendRange);
  hi.addEventListener("change", sendRange);
  return div;
}

function updateParam(p) {
  const div = document.querySelector(`.param[data-name="${CSS.escape(p.name)}"]`);
  if (!div) return;
  const slider = div.querySelector("input[type=range]");
  slider.min = p.slider[0];
  slider.max = p.slider[1];
  slider.step = (p.slider[1] - p.slider[0]) / 1000 || "any";
  setIfIdle(slider, p.value);
  setIfIdle(div.querySelector(".num"), fmt(p.value));
  div.querySelector(".range").textContent = `${p.range} (default ${fmt(p.default)})`;
  const randomized = p.randomize !== null;
  div.querySelector(".rand").checked = randomized;
  div.querySelector(".rng").hidden = !randomized;
  slider.disabled = randomized;
  div.querySelector(".num").disabled = randomized;
  if (randomized) {
    setIfIdle(div.querySelector(".lo"), fmt(p.randomize[0]));
    setIfIdle(div.querySelector(".hi"), fmt(p.randomize[1]));
  }
}

function renderStatic(fields) {
  const box = $("static");
  const sig = fields.map((f) => f.field).join(",");
  if (box.dataset.sig !== sig) {
    box.dataset.sig = sig;
    box.innerHTML = "";
    let section = null;
    for (const f of fields) {
      if (f.section !== section) {
        section = f.section;
        const h = document.createElement("h3");
        h.textContent = section;
        box.appendChild(h);
      }
      box.appendChild(staticControl(f));
    }
  }
  for (const f of fields) {
    const el = box.querySelector(`[data-field="${CSS.escape(f.field)}"]`);
    if (!el) continue;
    if (f.kind === "bool") el.checked = !!f.value;
    else setIfIdle(el, f.value === null ? "none" : (f.kind === "choice" ? f.value : fmt(f.value)));
  }
}

function staticControl(f) {
  const div = document.createElement("div");
  div.className = "ctl";
  div.dataset.ctl = "static:" + f.field;
  const label = document.createElement("label");
  label.textContent = f.field;
  label.title = f.doc;
  div.appendChild(label);
  let el;
  if (f.kind === "choice") {
    el = document.createElement("select");
    fillSelect(el, f.choices, f.value);
  } else if (f.kind === "bool") {
    el = document.createElement("input");
    el.type = "checkbox";
  } else {
    el = document.createElement("input");
    el.type = "text";
  }
  el.dataset.field = f.field;
  div.appendChild(el);
  const hint = document.createElement("div");
  hint.className = "hint";
  hint.textContent = `${f.range}${f.unit ? " " + f.unit : ""} (default ${f.default === null ? "none" : f.default})`;
  div.appendChild(hint);
  const err = document.createElement("div");
  err.className = "err";
  div.appendChild(err);
  el.addEventListener("change", () => {
    const v = f.kind === "bool" ? el.checked : parseValue(el.value, f.kind);
    send("static:" + f.field, "/api/generate", { config: { [f.field]: v } }, div);
  });
  return div;
}

function wireStatic() {
  const on = (id, key, make) => {
    const el = $(id);
    el.addEventListener("change", () => send(key, "/api/generate", make(el.value), ctlOf(el)));
  };
  on("family", "family", (v) => ({ family: v }));
  on("sampler", "sampler", (v) => ({ config: { generator: v } }));
  on("num-envs", "num-envs", (v) => ({ config: { num_envs: parseValue(v, "int") } }));
  on("seed", "seed", (v) => ({ seed: parseValue(v, "int") }));
  on("half-width", "half-width", (v) => ({ config: { half_width: parseValue(v, "float") } }));
  on("z-profile", "z-profile", (v) => ({ config: { z_profile: v } }));
  $("next-all").addEventListener("click", () => send("next", "/api/next", {}, ctlOf($("next-all"))));
  canvas.addEventListener("click", (ev) => {
    const env = envAt(ev);
    if (env !== null) send("next:" + env, "/api/next", { env }, ctlOf($("next-all")));
  });
  window.addEventListener("resize", () => { if (batch) draw(batch, null); });
  $("export-py").addEventListener("click", () => exportText("python"));
  $("export-json").addEventListener("click", () => exportText("json"));
  $("export-png").addEventListener("click", exportPng);
}

// ------------------------------------------------------------------ export
function download(name, href) {
  const a = document.createElement("a");
  a.href = href;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
}

async function exportText(kind) {
  const ctl = ctlOf($("export-py"));
  try {
    const out = await api("/api/export");
    const text = kind === "python" ? out.python : JSON.stringify(out.json, null, 2) + "\n";
    const pre = $("export-text");
    pre.hidden = false;
    pre.textContent = text;
    pre.dataset.kind = kind;
    const type = kind === "python" ? "text/x-python" : "application/json";
    const url = URL.createObjectURL(new Blob([text], { type }));
    download(out.name + (kind === "python" ? ".py" : ".json"), url);
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    showError(ctl, "");
  } catch (e) {
    showError(ctl, e.message);
  }
}

function exportPng() {
  const name = state ? `track_gen_${state.family}_${state.generator}` : "track_gen";
  download(name.replace(/[^\w.-]/g, "_") + ".png", canvas.toDataURL("image/png"));
}

// ------------------------------------------------------------------ drawing
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(t) {
  t = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(t), VIRIDIS.length - 2);
  const f = t - i;
  const c = VIRIDIS[i].map((a, k) => Math.round(a + f * (VIRIDIS[i + 1][k] - a)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

const TITLE_H = 16;
let layout = null; // {cols, cell}

function envAt(ev) {
  if (!layout || !batch) return null;
  const r = canvas.getBoundingClientRect();
  const col = Math.floor((ev.clientX - r.left) / layout.cell);
  const row = Math.floor((ev.clientY - r.top) / layout.cell);
  const e = row * layout.cols + col;
  return col >= 0 && col < layout.cols && e >= 0 && e < batch.courses.length ? e : null;
}

function points(flat) {
  const out = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push(flat[i] === null || flat[i + 1] === null ? null : [flat[i], flat[i + 1]]);
  return out;
}

function heightRange(b) {
  let lo = Infinity, hi = -Infinity;
  for (const c of b.courses) {
    if (!c.valid || !c.z) continue;
    for (const z of c.z) if (z !== null) { lo = Math.min(lo, z); hi = Math.max(hi, z); }
  }
  return hi > lo ? [lo, hi] : null;
}

function draw(b, roundTripMs) {
  batch = b;
  const E = b.courses.length;
  const cols = Math.max(1, Math.ceil(Math.sqrt(E)));
  const rows = Math.ceil(E / cols);
  const avail = Math.max(240, $("view").clientWidth - 20);
  const cell = Math.max(90, Math.min(260, Math.floor(avail / cols)));
  layout = { cols, cell };
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = cols * cell + "px";
  canvas.style.height = rows * cell + "px";
  canvas.width = Math.round(cols * cell * dpr);
  canvas.height = Math.round(rows * cell * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, cols * cell, rows * cell);
  const zr = heightRange(b);
  let drawn = 0;
  b.courses.forEach((c, k) => {
    const x0 = (k % cols) * cell, y0 = Math.floor(k / cols) * cell;
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, y0, cell, cell);
    ctx.clip();
    ctx.strokeStyle = "#e0e0e0";
    ctx.lineWidth = 1;
    ctx.strokeRect(x0 + 0.5, y0 + 0.5, cell - 1, cell - 1);
    if (b.family === "gates") drawGates(ctx, c, x0, y0, cell, zr);
    else drawTrack(ctx, c, x0, y0, cell, zr);
    ctx.restore();
    drawn += 1;
  });
  canvas.dataset.drawn = String(drawn);
  const bad = b.courses.filter((c) => !c.valid).map((c) => `env ${c.env}: ${failText(c)}`);
  $("summary").textContent = bad.length ? "invalid: " + bad.join(", ") : "every env valid";
  $("summary").classList.toggle("bad-envs", bad.length > 0);
  const pct = (100 * b.yield).toFixed(1);
  $("yield").textContent = `yield ${pct}% (${b.valid}/${b.num_envs} valid)`;
  const ms = b.ms || {};
  let text = `generate ${(ms.generate_ms || 0).toFixed(1)} ms`;
  if (ms.build_ms) text += `, rebuild ${ms.build_ms.toFixed(1)} ms`;
  if (roundTripMs !== null && roundTripMs !== undefined) lastRoundTrip = roundTripMs;
  if (lastRoundTrip !== null) text += `, round trip ${lastRoundTrip.toFixed(0)} ms`;
  $("ms").textContent = text;
  $("legend").textContent = zr ? `height ${zr[0].toFixed(3)} (purple) .. ${zr[1].toFixed(3)} (yellow)` : "";
  draws += 1;
  document.body.dataset.draws = String(draws);
}

function fitter(lists, x0, y0, cell) {
  let xmin = Infinity, xmax = -Infinity, ymin = Infinity, ymax = -Infinity;
  for (const l of lists) for (const p of l) if (p) {
    xmin = Math.min(xmin, p[0]); xmax = Math.max(xmax, p[0]);
    ymin = Math.min(ymin, p[1]); ymax = Math.max(ymax, p[1]);
  }
  if (!(xmax >= xmin)) return null;
  const pad = 8, w = cell - 2 * pad, h = cell - TITLE_H - 2 * pad;
  const s = Math.min(w / Math.max(xmax - xmin, 1e-9), h / Math.max(ymax - ymin, 1e-9));
  const cx = (xmin + xmax) / 2, cy = (ymin + ymax) / 2;
  const ox = x0 + cell / 2, oy = y0 + TITLE_H + pad + h / 2;
  return (p) => [ox + (p[0] - cx) * s, oy - (p[1] - cy) * s];
}

function loopPath(ctx, pts, f) {
  let first = true;
  for (const p of pts) {
    if (!p) continue;
    const q = f(p);
    if (first) { ctx.moveTo(q[0], q[1]); first = false; } else ctx.lineTo(q[0], q[1]);
  }
  if (!first) ctx.closePath();
}

function title(ctx, c, x0, y0, text) {
  ctx.fillStyle = c.valid ? "#000000" : "#c00000";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "top";
  ctx.fillText(text, x0 + 4, y0 + 3);
}

function failText(c) {
  if (c.fail.length) return c.fail.join("|");
  return c.epoch < 0 ? "not built" : "invalid";
}

function drawTrack(ctx, c, x0, y0, cell, zr) {
  const center = points(c.center), outer = points(c.outer), inner = points(c.inner);
  const ok = c.valid;
  const label = ok
    ? `env ${c.env} (L=${c.length === null ? "?" : c.length.toFixed(2)}) e${c.epoch}`
    : `env ${c.env}: ${failText(c)}`;
  title(ctx, c, x0, y0, label);
  const f = fitter([outer, inner], x0, y0, cell);
  if (!f || center.length === 0) {
    ctx.fillStyle = "#707070";
    ctx.fillText("no beads", x0 + cell / 2 - 22, y0 + cell / 2);
    return;
  }
  const edge = ok ? "#303030" : "#c00000";
  if (ok && zr && c.z) {
    const n = outer.length;
    for (let i = 0; i < n; i++) {
      const j = (i + 1) % n;
      const quad = [inner[i], outer[i], outer[j], inner[j]];
      if (quad.some((p) => !p) || c.z[i] === null || c.z[j] === null) continue;
      const t = ((c.z[i] + c.z[j]) / 2 - zr[0]) / (zr[1] - zr[0]);
      ctx.beginPath();
      loopPath(ctx, quad, f);
      ctx.fillStyle = viridis(t);
      ctx.strokeStyle = ctx.fillStyle;
      ctx.lineWidth = 0.5;
      ctx.fill();
      ctx.stroke();
    }
  } else {
    ctx.beginPath();
    loopPath(ctx, outer, f);
    loopPath(ctx, inner, f);
    ctx.fillStyle = ok ? "#b8b8b8" : "#f4b4b4";
    ctx.fill("evenodd");
  }
  ctx.lineWidth = 1;
  ctx.strokeStyle = edge;
  for (const ring of [outer, inner]) {
    ctx.beginPath();
    loopPath(ctx, ring, f);
    ctx.stroke();
  }
  ctx.setLineDash([3, 3]);
  ctx.strokeStyle = ok ? "#ffffff" : edge;
  ctx.beginPath();
  loopPath(ctx, center, f);
  ctx.stroke();
  ctx.setLineDash([]);
}

function drawGates(ctx, c, x0, y0, cell, zr) {
  const pos = points(c.position), left = points(c.left), right = points(c.right);
  const fwd = points(c.forward);
  const ok = c.valid;
  const label = ok ? `env ${c.env} (${c.count} gates) e${c.epoch}` : `env ${c.env}: ${failText(c)}`;
  title(ctx, c, x0, y0, label);
  const f = fitter([pos, left, right], x0, y0, cell);
  if (!f || pos.length === 0) {
    ctx.fillStyle = "#707070";
    ctx.fillText("no gates", x0 + cell / 2 - 22, y0 + cell / 2);
    return;
  }
  const edge = ok ? "#1f4e9a" : "#c00000";
  ctx.setLineDash([3, 3]);
  ctx.strokeStyle = ok ? "#9e9e9e" : "#e08080";
  ctx.lineWidth = 1;
  ctx.beginPath();
  loopPath(ctx, pos, f);
  ctx.stroke();
  ctx.setLineDash([]);
  // the arrow's length in track units: a fifth of the course's spread
  const scale = (() => {
    const a = f([0, 0]), b2 = f([1, 0]);
    return Math.abs(b2[0] - a[0]) || 1;
  })();
  pos.forEach((p, i) => {
    if (!p) return;
    const color = ok && zr && c.z && c.z[i] !== null ? viridis((c.z[i] - zr[0]) / (zr[1] - zr[0])) : edge;
    const q = f(p);
    const l = left[i], r = right[i];
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    if (i === 0) { // the start gate: a ring around it
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.arc(q[0], q[1], 7, 0, 2 * Math.PI);
      ctx.stroke();
    }
    if (l && r && (l[0] !== r[0] || l[1] !== r[1])) {
      const a = f(l), b2 = f(r);
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.moveTo(a[0], a[1]);
      ctx.lineTo(b2[0], b2[1]);
      ctx.stroke();
    } else {
      ctx.beginPath();
      ctx.arc(q[0], q[1], 3, 0, 2 * Math.PI);
      ctx.fill();
    }
    const d = fwd[i];
    if (d) {
      const len = 10 / scale;
      const tip = f([p[0] + d[0] * len, p[1] + d[1] * len]);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(q[0], q[1]);
      ctx.lineTo(tip[0], tip[1]);
      ctx.stroke();
    }
  });
}

// ------------------------------------------------------------------ start
async function start() {
  wireStatic();
  setStatus("loading…");
  try {
    applyState(await api("/api/state"));
    draw(await api("/api/batch"), null);
    setStatus("ready");
  } catch (e) {
    setStatus("server unreachable: " + e.message);
  }
}

start();
