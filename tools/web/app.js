// quadnav viewer: the library compiled to WebAssembly (quadnav.js/.wasm, built
// by tools/web.sh from the same C sources as the native tool) driven from
// this page. Units are placed and stepped by the C sim harness (tools/sim.c
// through tools/session.c); this file only draws, handles input and times.
//
// Modes are a table (MODES) over the C session's mode enum (tools/session.h).
// crowd: units with bodies (qn_crowd through tools/crowd_scene.c, placed and
// stepped as `quadnav sim --crowd`), drawn as discs at their radius over the
// quad field.
'use strict';

const MODES = [
  { name: 'quad', id: 0, grid: false },
  { name: 'grid8', id: 1, grid: true },
  { name: 'gridvec', id: 2, grid: true },
  { name: 'crowd', id: 3, grid: false, crowd: true },
];
const BUNDLED = [
  'levels/town.json', 'levels/maze.json', 'levels/field.json',
  'maps/arena.map', 'maps/Berlin_0_256.map', 'maps/lak303d.map', 'maps/Boston_0_512.map',
];
const ERR_BYTES = 512;
const DEFAULT_RADIUS = 0.25; // as `quadnav sim`
const DEFAULT_STEP = 0.2;
// The sim times the samples of one step in this many (as one batch): reading
// the browser's clock is slow (once per sample, it tripled the step time
// with 5,000 units).
const CLOCK_EVERY = 32;

const $ = (id) => document.getElementById(id);
const now = () => performance.now();
const yieldNow = () => new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = r; c.port2.postMessage(0); });

// ---- the WebAssembly module ------------------------------------------------

class Wasm {
  constructor(M) {
    this.M = M;
    this.err = M._malloc(ERR_BYTES);
  }
  f32(ptr, n) { return new Float32Array(this.M.HEAPF32.buffer, ptr, n); }
  f64(ptr, n) { return new Float64Array(this.M.HEAPF64.buffer, ptr, n); }
  u8(ptr, n) { return new Uint8Array(this.M.HEAPU8.buffer, ptr, n); }
  // Copies a JS string into the heap; returns [ptr, byte length].
  str(s) {
    const n = this.M.lengthBytesUTF8(s);
    const p = this.M._malloc(n + 1);
    this.M.stringToUTF8(s, p, n + 1);
    return [p, n];
  }
  // The last error as {status, path, line, column, message}.
  error() {
    const t = this.M.UTF8ToString(this.err).split('|');
    return { status: t[0], path: t[1], line: +t[2], column: +t[3], message: t.slice(4).join('|') };
  }
  load(text) {
    const [p, n] = this.str(text);
    const s = this.M._qnw_load(p, n, this.err);
    this.M._free(p);
    if (!s) throw this.error();
    return s;
  }
  validate(text) {
    const [p, n] = this.str(text);
    const st = this.M._qnw_validate(p, n, this.err);
    this.M._free(p);
    return { ok: st === 0, ...this.error() };
  }
}

// A growable scratch array in the wasm heap.
class Scratch {
  constructor(w) { this.w = w; this.ptr = 0; this.bytes = 0; }
  get(bytes) {
    if (bytes > this.bytes) {
      if (this.ptr) this.w.M._free(this.ptr);
      this.bytes = Math.max(bytes, 64);
      this.ptr = this.w.M._malloc(this.bytes);
    }
    return this.ptr;
  }
}

// ---- one view: a session, its instance, its run, its canvas ----------------

class View {
  constructor(app, canvas, mode) {
    this.app = app; this.w = app.wasm; this.M = app.wasm.M;
    this.canvas = canvas; this.mode = mode;
    this.s = 0; this.bg = null; this.bgKey = '';
    this.scr = { a: new Scratch(this.w), b: new Scratch(this.w), c: new Scratch(this.w) };
    this.units = null; this.ustate = null;
    this.m = { build_us: NaN, repair_us: NaN };
  }
  free() { if (this.s) this.M._qnw_free(this.s); this.s = 0; }
  load(text) {
    this.free();
    this.s = this.w.load(text);
    this.isMap = !!this.M._qnw_is_map(this.s);
    this.readGeometry();
  }
  readGeometry() {
    const M = this.M, s = this.s, n = M._qnw_quad_count(s), np = M._qnw_portal_count(s);
    const pq = this.scr.a.get(32 * n + 8), pc = this.scr.b.get(4 * n + 8), pb = this.scr.c.get(n + 8);
    M._qnw_quads(s, pq, pc, pb);
    this.quads = Float32Array.from(this.w.f32(pq, 8 * n));
    this.qcost = Float32Array.from(this.w.f32(pc, n));
    this.qblocked = Uint8Array.from(this.w.u8(pb, n));
    const pp = this.scr.a.get(16 * np + 8);
    M._qnw_portals(s, pp);
    this.portals = Float32Array.from(this.w.f32(pp, 4 * np));
    this.grid = null;
    if (this.mode.grid || this.isMap) this.readGrid();
    this.bgKey = '';
  }
  readGrid() {
    const M = this.M, p = this.scr.a.get(32);
    if (!M._qnw_grid_info(this.s, p, this.w.err)) throw this.w.error();
    const g = this.w.f32(p, 5);
    const grid = { w: g[0], h: g[1], cs: g[2], ox: g[3], oy: g[4] };
    grid.costs = Uint8Array.from(this.w.u8(M._qnw_grid_costs(this.s), grid.w * grid.h));
    this.grid = grid;
  }
  bounds() {
    if (this.grid) { const g = this.grid; return [g.ox, g.oy, g.ox + g.w * g.cs, g.oy + g.h * g.cs]; }
    let b = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i < this.quads.length; i += 2) {
      b[0] = Math.min(b[0], this.quads[i]); b[1] = Math.min(b[1], this.quads[i + 1]);
      b[2] = Math.max(b[2], this.quads[i]); b[3] = Math.max(b[3], this.quads[i + 1]);
    }
    return b;
  }
  // Builds the instance for goal (timed in C); throws the library's error.
  setGoal(goal) {
    this.goal = null; this.fcost = null; this.units = null; this.n = 0;
    const us = this.M._qnw_set_goal(this.s, this.mode.id, goal[0], goal[1], DEFAULT_RADIUS, this.w.err);
    this.bgKey = '';
    if (us < 0) throw this.w.error();
    this.goal = goal;
    this.m.build_us = us;
    this.readField();
  }
  readField() {
    const M = this.M, s = this.s;
    if (this.grid) this.grid.costs = Uint8Array.from(this.w.u8(M._qnw_grid_costs(s), this.grid.w * this.grid.h));
    this.bgKey = '';
    if (!this.goal) return;
    if (!this.mode.grid) {
      const n = this.qcost.length, pc = this.scr.b.get(4 * n + 8), pe = this.scr.c.get(8 * n + 8);
      M._qnw_quad_field(s, pc, pe);
      this.fcost = Float32Array.from(this.w.f32(pc, n));
      this.fexit = Float32Array.from(this.w.f32(pe, 2 * n));
    } else {
      const n = this.grid.w * this.grid.h, pc = this.scr.b.get(4 * n + 8), pv = this.scr.c.get(8 * n + 8);
      M._qnw_grid_field(s, this.mode.id, pc, pv);
      this.fcost = Float32Array.from(this.w.f32(pc, n));
      this.fvec = Float32Array.from(this.w.f32(pv, 2 * n));
    }
    let mx = 0;
    for (const c of this.fcost) if (isFinite(c) && c > mx) mx = c;
    this.fmax = mx || 1;
  }
  start(units, seed) {
    const b = BigInt.asUintN(64, BigInt(seed));
    const st = this.M._qnw_start(this.s, units, Number(b & 0xffffffffn), Number(b >> 32n), DEFAULT_STEP, CLOCK_EVERY);
    if (st !== 0) {
      throw { status: 'status ' + st, message: this.mode.crowd
        ? 'the level cannot hold that many units apart (see the console)' : 'no reachable start position?' };
    }
    this.n = units;
    this.done = false;
    this.m.step_ms = []; this.m.frame_ms = [];
    this.readUnits();
  }
  step(k) {
    const t0 = now();
    const took = this.M._qnw_step(this.s, k);
    this.m.step_ms.push(now() - t0);
    if (took < k) this.done = true;
    this.readUnits();
    return took;
  }
  readUnits() {
    if (this.mode.crowd) return this.readCrowd();
    const n = this.n, px = this.scr.a.get(8 * n + 8), ps = this.scr.b.get(n + 8);
    this.M._qnw_units(this.s, px, ps);
    this.units = this.w.f32(px, 2 * n);
    this.ustate = this.w.u8(ps, n);
  }
  readCrowd() {
    const n = this.n, px = this.scr.a.get(8 * n + 8), pr = this.scr.b.get(4 * n + 8), ps = this.scr.c.get(n + 8);
    const k = this.M._qnw_crowd_units(this.s, px, pr, ps, n);
    // Copies: the result's scratch and a growing heap would change views.
    this.units = Float32Array.from(this.w.f32(px, 2 * k));
    this.uradius = Float32Array.from(this.w.f32(pr, k));
    this.ustate = Uint8Array.from(this.w.u8(ps, k));
  }
  crowdResult() {
    const p = this.scr.c.get(64);
    if (!this.M._qnw_crowd_result(this.s, p)) return null;
    const r = this.w.f64(p, 8);
    const mean = (a) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
    const pct = (a, p) => (a.length ? a.slice().sort((x, y) => x - y)[Math.max(0, Math.ceil(p * a.length) - 1)] : 0);
    return {
      mode: this.mode.name, units: r[0], arrived: r[1], stuck: r[2], wall_contacts: r[3],
      overlap_pairs: r[4], max_overlap: r[5], steps: r[6], step_us_mean: r[7],
      build_us: this.m.build_us, frames: this.m.frame_ms.length,
      frame_ms_mean: mean(this.m.frame_ms), frame_ms_p95: pct(this.m.frame_ms, 0.95),
      frame_ms_max: pct(this.m.frame_ms, 1), step_ms_mean: mean(this.m.step_ms),
    };
  }
  result() {
    if (this.mode.crowd) return this.crowdResult();
    const p = this.scr.c.get(80);
    if (!this.M._qnw_result(this.s, p)) return null;
    const r = this.w.f64(p, 10);
    const mean = (a) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
    const pct = (a, p) => (a.length ? a.slice().sort((x, y) => x - y)[Math.max(0, Math.ceil(p * a.length) - 1)] : 0);
    return {
      mode: this.mode.name, units: r[0], arrived: r[1], wall_contacts: r[3], stuck: r[2],
      stretch_mean: r[6], stretch_p95: r[7], steps: r[8], samples: r[4],
      sample_ns: r[4] ? (r[5] * 1e9) / r[4] : 0, escapes: r[9],
      build_us: this.m.build_us, frames: this.m.frame_ms.length,
      // Whole steps timed from the page (long intervals, so the coarse
      // browser clock is accurate): sample plus move per unit.
      unit_step_ns: r[4] ? (this.m.step_ms.reduce((x, y) => x + y, 0) * 1e6) / r[4] : 0,
      frame_ms_mean: mean(this.m.frame_ms), frame_ms_p95: pct(this.m.frame_ms, 0.95),
      frame_ms_max: pct(this.m.frame_ms, 1), step_ms_mean: mean(this.m.step_ms),
    };
  }
  // Run-time changes at world point p: a quad in quad mode, cells in grid modes.
  change(p, block, brush) {
    let us;
    if (!this.mode.grid) {
      const q = this.M._qnw_locate(this.s, p[0], p[1]);
      if (q < 0) return;
      us = this.M._qnw_block_quad(this.s, q, block ? 1 : 0, this.w.err);
      if (us >= 0) this.qblocked[q] = block ? 1 : 0;
    } else {
      const g = this.grid, cx = Math.floor((p[0] - g.ox) / g.cs), cy = Math.floor((p[1] - g.oy) / g.cs);
      const h = Math.floor(brush / 2);
      const x0 = Math.max(0, cx - h), y0 = Math.max(0, cy - h);
      const x1 = Math.min(g.w, x0 + brush), y1 = Math.min(g.h, y0 + brush);
      if (x0 >= x1 || y0 >= y1) return;
      us = this.M._qnw_stamp(this.s, x0, y0, x1, y1, block ? 255 : 1, this.w.err);
    }
    if (us < 0) throw this.w.error();
    this.m.repair_us = us;
    this.readField();
  }
}

// ---- drawing ------------------------------------------------------------------

function shade(t) { // 0 near the goal .. 1 far: teal to amber
  t = Math.max(0, Math.min(1, t));
  const r = Math.round(40 + 200 * t), g = Math.round(150 + 40 * (1 - Math.abs(t - 0.5) * 2) - 40 * t);
  const b = Math.round(170 * (1 - t) + 40);
  return [r, g, b];
}

class Draw {
  constructor(app) { this.app = app; }
  toScreen(cam, x, y) { return [(x - cam.x) * cam.s, (y - cam.y) * cam.s]; }
  background(v, cam, ctx, W, H, opts) {
    ctx.fillStyle = '#111';
    ctx.fillRect(0, 0, W, H);
    const field = opts.layer !== 'plain' && v.fcost;
    if (v.mode.grid) this.gridLayer(v, cam, ctx, W, H, field, opts);
    else this.quadLayer(v, cam, ctx, W, H, field, opts);
  }
  gridImage(v, field) {
    const g = v.grid, img = new ImageData(g.w, g.h), d = img.data;
    for (let i = 0; i < g.w * g.h; i++) {
      let c;
      if (g.costs[i] === 255) c = [10, 10, 12];
      else if (!field) c = g.costs[i] > 1 ? [120, 100, 70] : [70, 74, 82];
      else if (!isFinite(v.fcost[i])) c = [45, 45, 50];
      else c = shade(v.fcost[i] / v.fmax);
      d[4 * i] = c[0]; d[4 * i + 1] = c[1]; d[4 * i + 2] = c[2]; d[4 * i + 3] = 255;
    }
    const cv = document.createElement('canvas');
    cv.width = g.w; cv.height = g.h;
    cv.getContext('2d').putImageData(img, 0, 0);
    return cv;
  }
  gridLayer(v, cam, ctx, W, H, field, opts) {
    const g = v.grid, img = this.gridImage(v, field);
    const [sx, sy] = this.toScreen(cam, g.ox, g.oy);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, sx, sy, g.w * g.cs * cam.s, g.h * g.cs * cam.s);
    const px = g.cs * cam.s;
    if (opts.layer !== 'cost' || !v.fvec || px < 7) return;
    ctx.strokeStyle = 'rgba(255,255,255,0.55)';
    ctx.beginPath();
    const x0 = Math.max(0, Math.floor((cam.x - g.ox) / g.cs)), y0 = Math.max(0, Math.floor((cam.y - g.oy) / g.cs));
    const x1 = Math.min(g.w, x0 + Math.ceil(W / px) + 2), y1 = Math.min(g.h, y0 + Math.ceil(H / px) + 2);
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
      const i = y * g.w + x, vx = v.fvec[2 * i], vy = v.fvec[2 * i + 1];
      if (!vx && !vy) continue;
      const [cx, cy] = this.toScreen(cam, g.ox + (x + 0.5) * g.cs, g.oy + (y + 0.5) * g.cs);
      this.arrow(ctx, cx - vx * px * 0.3, cy - vy * px * 0.3, cx + vx * px * 0.35, cy + vy * px * 0.35);
    }
    ctx.stroke();
  }
  quadLayer(v, cam, ctx, W, H, field, opts) {
    const q = v.quads, n = v.qcost.length;
    for (let i = 0; i < n; i++) {
      let c;
      if (v.qblocked[i]) c = 'rgb(120,30,30)';
      else if (field && !isFinite(v.fcost[i])) c = 'rgb(45,45,50)';
      else if (field) { const s = shade(v.fcost[i] / v.fmax); c = `rgb(${s[0]},${s[1]},${s[2]})`; }
      else c = v.qcost[i] > 1 ? 'rgb(120,100,70)' : 'rgb(70,74,82)';
      ctx.fillStyle = c;
      ctx.beginPath();
      for (let k = 0; k < 4; k++) {
        const [x, y] = this.toScreen(cam, q[8 * i + 2 * k], q[8 * i + 2 * k + 1]);
        if (k) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      }
      ctx.closePath();
      ctx.fill();
      // Many small quads (a map's decomposition): outlines in their own colour hide seams.
      ctx.strokeStyle = n < 4000 || cam.s > 4 ? 'rgba(0,0,0,0.45)' : c;
      ctx.stroke();
    }
    if (opts.portals && (n < 4000 || cam.s > 4)) {
      ctx.strokeStyle = 'rgba(140,230,255,0.9)';
      ctx.lineWidth = cam.s > 3 ? 2 : 1;
      ctx.beginPath();
      for (let i = 0; i < v.portals.length; i += 4) {
        const [a, b] = this.toScreen(cam, v.portals[i], v.portals[i + 1]);
        const [c, d] = this.toScreen(cam, v.portals[i + 2], v.portals[i + 3]);
        ctx.moveTo(a, b); ctx.lineTo(c, d);
      }
      ctx.stroke();
      ctx.lineWidth = 1;
    }
    if (opts.layer === 'cost' && v.fexit && (n < 3000 || cam.s > 6)) this.exitArrows(v, cam, ctx);
  }
  exitArrows(v, cam, ctx) {
    const q = v.quads;
    ctx.strokeStyle = 'rgba(255,255,255,0.7)';
    ctx.beginPath();
    for (let i = 0; i < v.qcost.length; i++) {
      const ex = v.fexit[2 * i], ey = v.fexit[2 * i + 1];
      if (!isFinite(ex)) continue;
      let cx = 0, cy = 0;
      for (let k = 0; k < 4; k++) { cx += q[8 * i + 2 * k] / 4; cy += q[8 * i + 2 * k + 1] / 4; }
      const [a, b] = this.toScreen(cam, cx, cy), [c, d] = this.toScreen(cam, ex, ey);
      this.arrow(ctx, a, b, a + (c - a) * 0.8, b + (d - b) * 0.8);
    }
    ctx.stroke();
  }
  arrow(ctx, a, b, c, d) {
    const dx = c - a, dy = d - b, l = Math.hypot(dx, dy) || 1, h = Math.min(5, l * 0.35);
    ctx.moveTo(a, b); ctx.lineTo(c, d);
    ctx.moveTo(c, d); ctx.lineTo(c - (dx / l) * h - (dy / l) * h * 0.5, d - (dy / l) * h + (dx / l) * h * 0.5);
    ctx.moveTo(c, d); ctx.lineTo(c - (dx / l) * h + (dy / l) * h * 0.5, d - (dy / l) * h - (dx / l) * h * 0.5);
  }
  frame(v, cam, opts) {
    const cv = v.canvas, W = cv.width, H = cv.height, ctx = cv.getContext('2d');
    const key = [cam.x, cam.y, cam.s, W, H, opts.layer, opts.portals, v.fcost && v.fcost.length, v.mode.name].join();
    if (!v.bg || v.bgKey !== key) {
      v.bg = v.bg || document.createElement('canvas');
      v.bg.width = W; v.bg.height = H;
      this.background(v, cam, v.bg.getContext('2d'), W, H, opts);
      v.bgKey = key;
    }
    ctx.drawImage(v.bg, 0, 0);
    this.unitsLayer(v, cam, ctx);
    this.goalMark(v, cam, ctx);
    ctx.fillStyle = '#fff';
    ctx.font = '12px system-ui';
    ctx.fillText(v.mode.name, 8, 16);
  }
  unitsLayer(v, cam, ctx) {
    if (!v.units) return;
    if (v.mode.crowd) return this.discs(v, cam, ctx);
    const r = Math.max(1.2, DEFAULT_RADIUS * cam.s), d = 2 * r;
    ctx.fillStyle = '#ffe14d';
    for (let i = 0; i < v.n; i++) {
      if (v.ustate[i] !== 1) continue;
      ctx.fillRect((v.units[2 * i] - cam.x) * cam.s - r, (v.units[2 * i + 1] - cam.y) * cam.s - r, d, d);
    }
    ctx.fillStyle = '#ff4d4d';
    for (let i = 0; i < v.n; i++) {
      if (v.ustate[i] !== 3) continue;
      ctx.fillRect((v.units[2 * i] - cam.x) * cam.s - r, (v.units[2 * i + 1] - cam.y) * cam.s - r, d, d);
    }
  }
  // Crowd mode: every unit a disc at its radius (walking yellow, arrived grey).
  discs(v, cam, ctx) {
    for (const [st, colour] of [[2, '#9a9a9a'], [1, '#ffe14d']]) {
      ctx.fillStyle = colour;
      ctx.beginPath();
      for (let i = 0; i < v.ustate.length; i++) {
        if (v.ustate[i] !== st) continue;
        const x = (v.units[2 * i] - cam.x) * cam.s, y = (v.units[2 * i + 1] - cam.y) * cam.s;
        const r = Math.max(1, v.uradius[i] * cam.s);
        ctx.moveTo(x + r, y);
        ctx.arc(x, y, r, 0, 2 * Math.PI);
      }
      ctx.fill();
    }
  }
  goalMark(v, cam, ctx) {
    if (!v.goal) return;
    const [x, y] = this.toScreen(cam, v.goal[0], v.goal[1]);
    ctx.strokeStyle = '#fff'; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.arc(x, y, 7, 0, 2 * Math.PI); ctx.stroke();
    ctx.lineWidth = 1;
  }
}

// ---- the page -------------------------------------------------------------------

class App {
  constructor(wasm) {
    this.wasm = wasm; this.draw = new Draw(this);
    this.views = []; this.text = null; this.name = '';
    this.cam = { x: 0, y: 0, s: 4 };
    this.running = true; this.params = new URLSearchParams(location.search);
    this.editor = new Editor(this);
  }
  status(msg, error) { const s = $('status'); s.textContent = msg; s.className = error ? 'error' : ''; }
  opts() { return { layer: $('layer').value, portals: $('portals').checked }; }
  modeByName(n) { return MODES.find((m) => m.name === n) || MODES[0]; }

  async init() {
    $('version').textContent = this.wasm.M.UTF8ToString(this.wasm.M._qnw_version());
    const list = window.QN_BUNDLED ? Object.keys(window.QN_BUNDLED) : BUNDLED;
    for (const b of list) $('bundled').add(new Option(b, b));
    for (const m of MODES) { $('mode').add(new Option(m.name, m.name)); $('mode2').add(new Option(m.name, m.name)); }
    $('mode2').value = 'grid8';
    const p = this.params;
    if (p.get('mode')) $('mode').value = this.modeByName(p.get('mode')).name;
    if (p.get('side')) { $('side').checked = true; $('mode2').value = this.modeByName(p.get('side')).name; }
    if (p.get('units')) $('units').value = p.get('units');
    if (p.get('seed')) $('seed').value = p.get('seed');
    this.wire();
    const src = p.get('level') || p.get('map') || 'levels/town.json';
    if (list.includes(src)) $('bundled').value = src;
    try {
      await this.open(src, await this.fetchText(src));
    } catch (e) {
      this.fail(e);
      return;
    }
    if (p.get('auto') === '1') this.autoRun();
    else this.loop();
  }
  async fetchText(url) {
    if (window.QN_BUNDLED && url in window.QN_BUNDLED) return window.QN_BUNDLED[url];
    if (location.protocol === 'file:') {
      throw { status: 'file', message: `${url}: a page opened from disk has only the bundled levels ` +
        'and the file picker (bash tools/web.sh serve serves everything)' };
    }
    const r = await fetch(url);
    if (!r.ok) throw { status: 'fetch', message: `${url}: HTTP ${r.status}` };
    return r.text();
  }
  fail(e) {
    const msg = e && e.message !== undefined ? `${e.status || 'error'}: ${e.message}` : String(e);
    this.status(msg, true);
    $('results').textContent = JSON.stringify({ error: msg });
  }
  // Loads text into one view per shown mode and fits the camera.
  async open(name, text) {
    this.text = text; this.name = name;
    const sel = $('bundled');
    if (![...sel.options].some((o) => o.value === name)) sel.add(new Option(name + ' (opened)', name));
    sel.value = name;
    for (const v of this.views) v.free();
    this.views = [];
    $('views').innerHTML = '';
    const modes = [this.modeByName($('mode').value)];
    if ($('side').checked) modes.push(this.modeByName($('mode2').value));
    for (const m of modes) {
      const cv = document.createElement('canvas');
      $('views').appendChild(cv);
      const v = new View(this, cv, m);
      this.views.push(v);
      v.load(text);
    }
    this.resize();
    this.fit();
    const goal = this.initialGoal();
    if (goal) this.setGoal(goal);
    else this.status(`${name}: click to set a goal`);
  }
  initialGoal() {
    const g = this.params.get('goal');
    if (g && !this.goalUsed) { this.goalUsed = true; return g.split(',').map(Number); }
    if (this.goal) return this.goal;
    const v = this.views[0], M = this.wasm.M;
    if (M._qnw_goal_count(v.s) > 0) {
      const p = this.wasm.M._malloc(8);
      M._qnw_goal(v.s, 0, p);
      const at = Array.from(this.wasm.f32(p, 2));
      M._free(p);
      return at;
    }
    return null;
  }
  setGoal(goal) {
    this.goal = goal;
    try {
      for (const v of this.views) v.setGoal(goal);
      this.spawn();
      this.status(`${this.name}: goal ${goal[0]},${goal[1]}; built in ` +
        this.views.map((v) => `${v.m.build_us.toFixed(0)} us (${v.mode.name})`).join(', '));
    } catch (e) { this.fail(e); }
  }
  spawn() {
    const units = Math.max(1, Math.min(100000, parseInt($('units').value, 10) || 1000));
    for (const v of this.views) v.start(units, $('seed').value.trim() || '1');
    this.frames = 0; this.resultsShown = false;
    $('results').textContent = '';
  }
  resize() {
    for (const v of this.views) {
      const r = v.canvas.getBoundingClientRect();
      v.canvas.width = Math.max(100, Math.floor(r.width)); v.canvas.height = Math.max(100, Math.floor(r.height));
      v.bgKey = '';
    }
  }
  fit() {
    const v = this.views[0]; if (!v) return;
    const b = v.bounds(), W = v.canvas.width, H = v.canvas.height;
    const s = Math.min(W / (b[2] - b[0]), H / (b[3] - b[1])) * 0.95;
    this.cam = { s, x: b[0] - (W / s - (b[2] - b[0])) / 2, y: b[1] - (H / s - (b[3] - b[1])) / 2 };
  }
  // One frame: step every view, then draw; times both.
  frame(steps) {
    const t0 = now();
    let any = false;
    for (const v of this.views) if (v.units && !v.done) { v.step(steps); any = true; }
    this.render();
    const ms = now() - t0;
    if (any) { for (const v of this.views) v.m.frame_ms.push(ms); this.frames++; }
    return any;
  }
  render() {
    for (const v of this.views) this.draw.frame(v, this.cam, this.opts());
    if (this.editor.on) this.editor.drawOver();
  }
  metrics() {
    const rows = [['', ...this.views.map((v) => v.mode.name)]];
    const rs = this.views.map((v) => v.result() || {});
    const f = (k, d) => rows.push([k, ...rs.map((r) => (r[k] === undefined ? '' : (+r[k]).toFixed(d)))]);
    const walking = this.views.map((v) => (v.ustate ? v.ustate.reduce((n, x) => n + (x === 1), 0) : 0));
    rs.forEach((r, i) => { if (r.stuck !== undefined) r.stuck -= walking[i]; });
    f('units', 0); f('arrived', 0);
    rows.push(['walking', ...walking]);
    f('wall_contacts', 0); f('stuck', 0);
    f('stretch_mean', 4); f('stretch_p95', 4); f('overlap_pairs', 0); f('max_overlap', 4); f('steps', 0); f('unit_step_ns', 1); f('sample_ns', 1);
    f('build_us', 0); f('step_us_mean', 1); f('step_ms_mean', 3); f('frame_ms_mean', 3);
    rows.push(['repair_us', ...this.views.map((v) => (isNaN(v.m.repair_us) ? '' : v.m.repair_us.toFixed(0)))]);
    rows.push(['clock step (ms)', ...this.views.map(() => (self.crossOriginIsolated ? '0.005' : '0.1'))]);
    if (this.rafMs && this.rafMs.length) {
      const r = this.rafMs.slice(-60), ms = r.reduce((a, b) => a + b, 0) / r.length;
      rows.push(['fps (last 60 frames)', ...this.views.map(() => (1000 / ms).toFixed(1))]);
    }
    $('metrics').innerHTML = '<table class="metrics">' +
      rows.map((r, i) => '<tr>' + r.map((c) => (i ? `<td>${c}</td>` : `<th>${c}</th>`)).join('') + '</tr>').join('') + '</table>';
  }
  lost(v) { return v.ustate ? v.ustate.reduce((n, x) => n + (x === 3), 0) : 0; }
  showResults() {
    const rs = this.views.map((v) => v.result());
    const r0 = rs[0];
    const keys = this.views[0].mode.crowd
      ? ['units', 'arrived', 'stuck', 'wall_contacts', 'overlap_pairs', 'max_overlap', 'steps', 'frame_ms_mean']
      : ['units', 'arrived', 'wall_contacts', 'stuck', 'stretch_mean', 'stretch_p95', 'steps', 'frame_ms_mean'];
    const out = {};
    for (const k of keys) out[k] = r0[k];
    Object.assign(out, { mode: r0.mode, level: this.name, goal: this.goal, seed: $('seed').value.trim(),
      frames: r0.frames, frame_ms_p95: r0.frame_ms_p95, frame_ms_max: r0.frame_ms_max,
      step_ms_mean: r0.step_ms_mean, unit_step_ns: r0.unit_step_ns, walking: r0.units - r0.arrived - this.lost(this.views[0]), sample_ns: r0.sample_ns, build_us: r0.build_us });
    if (r0.step_us_mean !== undefined) out.step_us_mean = r0.step_us_mean;
    if (rs.length > 1) out.side = rs[1];
    $('results').textContent = JSON.stringify(out);
    this.resultsShown = true;
  }
  loop() {
    this.rafMs = [];
    let last = 0;
    const tick = (t) => {
      if (last) this.rafMs.push(t - last);
      last = t;
      if (this.running && this.views.some((v) => v.units && !v.done)) {
        this.frame(Math.max(1, parseInt($('speed').value, 10) || 1));
        if (this.frames % 10 === 0) this.metrics();
      } else {
        this.render();
      }
      if (this.views.length && this.views.every((v) => v.done) && !this.resultsShown) { this.metrics(); this.showResults(); }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }
  // auto=1: no interaction, not tied to requestAnimationFrame.
  async autoRun() {
    const limit = parseInt(this.params.get('frames') || '1000000', 10);
    while (this.frames < limit && this.frame(1)) {
      if (this.frames % 50 === 0) this.metrics();
      await yieldNow();
    }
    this.metrics();
    this.showResults();
  }
  worldAt(v, ev) {
    const r = v.canvas.getBoundingClientRect();
    return [this.cam.x + (ev.clientX - r.left) / this.cam.s, this.cam.y + (ev.clientY - r.top) / this.cam.s];
  }
  tool() { return document.querySelector('input[name=tool]:checked').value; }
  click(v, p, dragging) {
    if (this.editor.on) return this.editor.click(p, dragging);
    const t = this.tool();
    if (t === 'goal') { if (!dragging) this.setGoal([+p[0].toFixed(3), +p[1].toFixed(3)]); return; }
    try {
      const brush = parseInt($('brush').value, 10) || 1;
      for (const w of this.views) w.change(p, t === 'block', brush);
      this.status(`repaired: ` + this.views.map((w) => `${w.m.repair_us.toFixed(0)} us (${w.mode.name})`).join(', '));
    } catch (e) { this.fail(e); }
  }
  // Painting: every cell along the pointer's way since the last event.
  paint(drag, p) {
    const a = drag.last || drag.start, g = drag.v.grid, cs = g ? g.cs : 1;
    const n = Math.max(1, Math.ceil(Math.hypot(p[0] - a[0], p[1] - a[1]) / (0.5 * cs)));
    let prev = '';
    for (let i = 1; i <= n; i++) {
      const q = [a[0] + ((p[0] - a[0]) * i) / n, a[1] + ((p[1] - a[1]) * i) / n];
      const key = Math.floor(q[0] / cs) + ',' + Math.floor(q[1] / cs);
      if (key !== prev) this.click(drag.v, q, true);
      prev = key;
    }
    drag.last = p;
  }
  wire() {
    this.opened = {};
    $('bundled').onchange = async () => {
      const u = $('bundled').value;
      this.goal = null;
      try { await this.open(u, this.opened[u] || await this.fetchText(u)); } catch (e) { this.fail(e); }
    };
    $('file').onchange = async () => {
      const f = $('file').files[0]; if (!f) return;
      this.goal = null;
      try { const t = await f.text(); this.opened[f.name] = t; await this.open(f.name, t); } catch (e) { this.fail(e); }
    };
    const reopen = async () => { try { await this.open(this.name, this.text); } catch (e) { this.fail(e); } };
    $('mode').onchange = reopen; $('mode2').onchange = reopen; $('side').onchange = reopen;
    $('spawn').onclick = () => { try { this.spawn(); } catch (e) { this.fail(e); } };
    $('play').onclick = () => { this.running = !this.running; $('play').textContent = this.running ? 'pause' : 'play'; };
    $('stepbtn').onclick = () => {
      this.frame(Math.max(1, parseInt($('speed').value, 10) || 1));
      this.metrics();
      if (this.views.every((v) => v.done)) this.showResults();
    };
    $('fit').onclick = () => this.fit();
    $('edit').onclick = () => this.editor.open();
    window.onresize = () => this.resize();
    $('views').addEventListener('contextmenu', (e) => e.preventDefault());
    $('views').addEventListener('wheel', (e) => {
      const v = this.views.find((x) => x.canvas === e.target); if (!v) return;
      e.preventDefault();
      const p = this.worldAt(v, e), k = Math.exp(-e.deltaY * 0.0015);
      this.cam.s *= k;
      this.cam.x = p[0] - (p[0] - this.cam.x) / k; this.cam.y = p[1] - (p[1] - this.cam.y) / k;
    }, { passive: false });
    let drag = null;
    $('views').addEventListener('mousedown', (e) => {
      const v = this.views.find((x) => x.canvas === e.target); if (!v) return;
      const pan = e.button !== 0 || e.shiftKey;
      drag = { v, pan, x: e.clientX, y: e.clientY, moved: false, start: this.worldAt(v, e) };
      if (!pan && this.editor.on) this.editor.down(drag.start);
    });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3) drag.moved = true;
      if (drag.pan) {
        this.cam.x -= (e.clientX - drag.x) / this.cam.s; this.cam.y -= (e.clientY - drag.y) / this.cam.s;
        drag.x = e.clientX; drag.y = e.clientY;
      } else if (this.editor.on) this.editor.move(this.worldAt(drag.v, e));
      else if (drag.moved && this.tool() !== 'goal') this.paint(drag, this.worldAt(drag.v, e));
    });
    window.addEventListener('mouseup', (e) => {
      if (!drag) return;
      const d = drag; drag = null;
      if (d.pan) return;
      const p = this.worldAt(d.v, e);
      if (this.editor.on) this.editor.up(p);
      else if (!d.moved || this.tool() !== 'goal') this.click(d.v, p, false);
    });
  }
}

// ---- the level editor ------------------------------------------------------------
// Edits a plain level object (format 1): rectangles ("rect"), quads over
// vertices ("v"), costs, named goals and spawns; checked by the library's own
// loader (qn_level_load_mem) compiled into the module.

class Editor {
  constructor(app) {
    this.app = app; this.on = false; this.pts = []; this.hl = -1;
    this.level = { format: 1, name: 'edited', vertices: [], quads: [], goals: [], spawns: [] };
    $('enew').onclick = () => { this.level = { format: 1, name: 'edited', vertices: [], quads: [], goals: [], spawns: [] }; this.msg(''); };
    $('efrom').onclick = () => this.fromCurrent();
    $('evalidate').onclick = () => this.validate();
    $('esave').onclick = () => this.save();
    $('erun').onclick = () => this.run();
    $('eclose').onclick = () => this.close();
  }
  tool() { return document.querySelector('input[name=etool]:checked').value; }
  snap(p) { const s = parseFloat($('esnap').value) || 1; return [Math.round(p[0] / s) * s, Math.round(p[1] / s) * s]; }
  msg(t, error) { $('emsg').textContent = t; $('emsg').className = error ? 'error' : ''; }
  open() { this.on = true; $('editor').hidden = false; this.app.status('editor: draw on the canvas'); }
  close() { this.on = false; $('editor').hidden = true; this.pts = []; }
  fromCurrent() {
    if (this.app.name.endsWith('.json') && this.app.text) {
      try { this.level = JSON.parse(this.app.text); this.level.vertices = this.level.vertices || []; this.level.goals = this.level.goals || []; this.level.spawns = this.level.spawns || []; this.msg('copied ' + this.app.name); } catch (e) { this.msg(String(e), true); }
    } else this.msg('only a level JSON can be edited (not a map)', true);
  }
  json() {
    const l = Object.assign({}, this.level);
    if (!l.vertices.length) delete l.vertices;
    if (!l.goals.length) delete l.goals;
    if (!l.spawns.length) delete l.spawns;
    return JSON.stringify(l, null, 1);
  }
  corners(q) {
    if (q.rect) { const [a, b, c, d] = q.rect; return [[a, b], [c, b], [c, d], [a, d]]; }
    return q.v.map((i) => this.level.vertices[i]);
  }
  quadAt(p) {
    for (let i = this.level.quads.length - 1; i >= 0; i--) {
      const k = this.corners(this.level.quads[i]);
      let inside = true;
      for (let j = 0; j < 4 && inside; j++) {
        const a = k[j], b = k[(j + 1) % 4];
        const c = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        if (j === 0) this.sign = Math.sign(c) || 1;
        else if (Math.sign(c) * this.sign < 0) inside = false;
      }
      if (inside) return i;
    }
    return -1;
  }
  down(p) { this.start = this.snap(p); this.cur = this.start; }
  move(p) { this.cur = this.snap(p); }
  up(p) {
    const t = this.tool(), a = this.start, b = this.snap(p);
    if (t === 'rect' && a && a[0] !== b[0] && a[1] !== b[1]) {
      this.level.quads.push({ rect: [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])] });
      this.msg(`${this.level.quads.length} quads`);
    } else this.click(p, false);
    this.start = null;
  }
  nextName(list, base) {
    const n = $('ename').value.trim();
    if (n) return n;
    let i = list.length + 1;
    while (list.some((g) => g.name === base + i)) i++;
    return base + i;
  }
  click(p, dragging) {
    if (dragging) return;
    const t = this.tool(), L = this.level, s = this.snap(p);
    if (t === 'quad') {
      this.pts.push(s);
      if (this.pts.length === 4) {
        let area = 0;
        for (let j = 0; j < 4; j++) { const a = this.pts[j], b = this.pts[(j + 1) % 4]; area += a[0] * b[1] - b[0] * a[1]; }
        if (area < 0) this.pts.reverse(); // the loader wants positive (shoelace) area
        const base = L.vertices.length;
        L.vertices.push(...this.pts);
        L.quads.push({ v: [base, base + 1, base + 2, base + 3] });
        this.pts = [];
        this.msg(`${L.quads.length} quads`);
      }
    } else if (t === 'delete' || t === 'cost') {
      const i = this.quadAt(p);
      if (i < 0) return;
      if (t === 'delete') L.quads.splice(i, 1);
      else L.quads[i].cost = Math.max(1, parseFloat($('ecost').value) || 1);
      this.msg(t === 'delete' ? `deleted quad ${i}` : `quad ${i} cost ${L.quads[i].cost}`);
    } else if (t === 'goal') L.goals.push({ name: this.nextName(L.goals, 'goal'), at: s });
    else if (t === 'spawn') L.spawns.push({ name: this.nextName(L.spawns, 'spawn'), at: s });
  }
  // The library's loader on the current JSON; its message shown at the element.
  validate() {
    const r = this.app.wasm.validate(this.json());
    const m = /quads\[(\d+)\]/.exec(r.path || r.message);
    this.hl = r.ok || !m ? -1 : +m[1];
    this.hlMsg = r.message;
    this.msg(r.ok ? `valid: ${r.message}` : `${r.status}: ${r.message}`, !r.ok);
    return r;
  }
  save() {
    const r = this.validate();
    const blob = new Blob([this.json()], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = (this.level.name || 'level') + '.json';
    document.body.appendChild(a); a.click(); a.remove();
    if (r.ok) this.msg(`saved ${a.download} (valid: ${r.message})`);
  }
  async run() {
    if (!this.validate().ok) return;
    this.app.goal = null;
    this.close();
    const t = this.json();
    this.app.opened['edited.json'] = t;
    try { await this.app.open('edited.json', t); } catch (e) { this.app.fail(e); }
  }
  drawOver() {
    const app = this.app, v = app.views[0]; if (!v) return;
    const ctx = v.canvas.getContext('2d'), cam = app.cam, S = (p) => app.draw.toScreen(cam, p[0], p[1]);
    ctx.fillStyle = 'rgba(0,0,0,0.55)'; ctx.fillRect(0, 0, v.canvas.width, v.canvas.height);
    this.level.quads.forEach((q, i) => {
      const k = this.corners(q).map(S);
      ctx.beginPath(); k.forEach((p, j) => (j ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1]))); ctx.closePath();
      ctx.fillStyle = i === this.hl ? 'rgba(255,60,60,0.6)' : q.cost > 1 ? 'rgba(200,160,90,0.6)' : 'rgba(110,160,230,0.5)';
      ctx.fill(); ctx.strokeStyle = '#cde'; ctx.stroke();
      ctx.fillStyle = '#fff'; ctx.font = '11px system-ui';
      const c = k.reduce((a, p) => [a[0] + p[0] / 4, a[1] + p[1] / 4], [0, 0]);
      ctx.fillText(String(i) + (q.cost > 1 ? ` x${q.cost}` : ''), c[0] - 6, c[1] + 4);
      if (i === this.hl) { ctx.fillStyle = '#f88'; ctx.fillText(this.hlMsg, c[0] - 6, c[1] + 18); }
    });
    for (const [list, col] of [[this.level.goals, '#7f7'], [this.level.spawns, '#f7f']]) for (const g of list) {
      const [x, y] = S(g.at); ctx.fillStyle = col; ctx.fillRect(x - 4, y - 4, 8, 8); ctx.fillText(g.name, x + 6, y + 4);
    }
    ctx.fillStyle = '#ff0';
    for (const p of this.pts) { const [x, y] = S(p); ctx.fillRect(x - 3, y - 3, 6, 6); }
    if (this.start && this.cur && this.tool() === 'rect') {
      const [a, b] = S(this.start), [c, d] = S(this.cur);
      ctx.strokeStyle = '#ff0'; ctx.strokeRect(Math.min(a, c), Math.min(b, d), Math.abs(c - a), Math.abs(d - b));
    }
  }
}

createQuadnav().then((M) => {
  const app = new App(new Wasm(M));
  window.qnApp = app; // for tests and the console
  app.init();
}).catch((e) => {
  $('status').textContent = 'could not start the WebAssembly module: ' + e +
    (location.protocol === 'file:' ? ' (serve the folder: bash tools/web.sh serve)' : '');
  $('status').className = 'error';
});
