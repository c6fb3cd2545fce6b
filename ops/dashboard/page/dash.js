// The rewind dashboard: keeps the last points of every series from the
// event stream and draws them on canvases. No dependencies.
"use strict";
const KEEP = 240; // points per series (60 s at 4 per second)
const COLORS = ["#5dade2", "#58d68d", "#f5b041", "#ec7063", "#af7ac5", "#48c9b0", "#f4d03f", "#dc7633", "#85929e", "#a3e4d7"];
const series = { tick: new Map(), rtt: new Map(), bw: new Map(), rb: new Map(), ping: new Map() };
let last = null, updates = 0, lastAt = 0;

function push(group, name, v) {
  let s = series[group].get(name);
  if (!s) { s = []; series[group].set(name, s); }
  s.push(v);
  if (s.length > KEEP) s.shift();
}

// Series whose source is gone stop growing; pad them with gaps so the
// time axis stays aligned.
function pad(group, names) {
  for (const [n, s] of series[group]) {
    if (!names.has(n)) { s.push(null); if (s.length > KEEP) s.shift(); }
  }
}

function update(v) {
  const names = { tick: new Set(), rtt: new Set(), bw: new Set(), rb: new Set(), ping: new Set() };
  const dt = last ? (v.unix_ms - last.unix_ms) / 1000 : 0;
  if (v.server) {
    const s = v.server;
    push("tick", "last", s.last_tick_ms); names.tick.add("last");
    push("tick", "p99", s.tick_p99_ms); names.tick.add("p99");
    for (const c of s.clients) {
      const n = "client " + c.id;
      push("rtt", n, c.rtt_ms); names.rtt.add(n);
      push("bw", n, c.out_per_sec); names.bw.add(n);
    }
  }
  const rate = (name, now, prev) => {
    if (dt > 0 && prev !== undefined) { push("rb", name, Math.max(0, (now - prev) / dt)); names.rb.add(name); }
  };
  for (const p of v.predicts) {
    const prev = last && last.predicts.find(q => q.name === p.name);
    rate(p.name, p.rollbacks, prev ? prev.rollbacks : undefined);
  }
  for (const s of v.sessions) {
    const prev = last && last.sessions.find(q => q.name === s.name);
    rate(s.name, s.rollbacks, prev ? prev.rollbacks : undefined);
    for (const p of s.peers) {
      const n = s.name + " → " + p.handle;
      push("ping", n, p.ping_ms); names.ping.add(n);
    }
  }
  for (const g in names) pad(g, names[g]);
  last = v;
  updates++;
  lastAt = Date.now();
  document.body.dataset.updates = String(updates);
  render(v);
}

function render(v) {
  document.getElementById("title").textContent = v.title;
  const s = v.server;
  document.getElementById("status").textContent = s
    ? `tick ${s.tick} · ${s.clients.length} clients · tick p50 ${s.tick_p50_ms.toFixed(2)} ms p99 ${s.tick_p99_ms.toFixed(2)} ms`
    : `${v.sessions.length} sessions`;
  document.getElementById("status").className = "";
  if (s) {
    const sum = o => Object.values(o).reduce((a, b) => a + b, 0);
    document.getElementById("totals").textContent =
      `out ${fmtBytes(sum(s.out))} · in ${fmtBytes(sum(s.in))} · resyncs ${s.resyncs.Full + s.resyncs.Partial + s.resyncs.RNG}` +
      ` · desyncs ${s.desyncs} · violations ${s.violations} · late inputs ${s.late_inputs}`;
    table(s.clients);
    reports(s.reports);
  }
  plot("tick", { lines: [16.67, 8.33] });
  plot("rtt", {});
  plot("bw", { fmt: fmtBytes });
  plot("rb", {});
  plot("ping", {});
  for (const id of ["sec-tick", "sec-rtt", "sec-bw", "sec-clients", "sec-reports"]) document.getElementById(id).hidden = !s;
  document.getElementById("sec-rb").hidden = series.rb.size === 0 && v.predicts.length + v.sessions.length === 0;
  document.getElementById("sec-ping").hidden = v.sessions.length === 0;
}

function fmtBytes(b) {
  if (b >= 1e9) return (b / 1e9).toFixed(2) + " GB";
  if (b >= 1e6) return (b / 1e6).toFixed(2) + " MB";
  if (b >= 1e3) return (b / 1e3).toFixed(1) + " kB";
  return Math.round(b) + " B";
}

function table(clients) {
  const rows = clients.map(c => `<tr><td>client ${c.id}</td><td>${c.rtt_ms.toFixed(1)}</td><td>${fmtBytes(c.out_per_sec)}/s</td>` +
    `<td>${fmtBytes(c.in_per_sec)}/s</td><td>${c.entities}</td><td>${c.acked_tick}</td><td>${c.resyncs}</td><td>${c.desyncs}</td>` +
    `<td>${c.violations}</td><td>${c.late_inputs}</td></tr>`);
  document.getElementById("clients").innerHTML =
    "<tr><th>client</th><th>rtt ms</th><th>out</th><th>in</th><th>entities</th><th>acked tick</th><th>resyncs</th><th>desyncs</th><th>violations</th><th>late inputs</th></tr>" +
    rows.join("");
}

function esc(s) { return String(s).replace(/[&<>"]/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }

function reports(rs) {
  const ul = document.getElementById("reports");
  if (!rs.length) { ul.innerHTML = "<li>none</li>"; return; }
  ul.innerHTML = rs.slice().reverse().map(r => `<li class="${r.kind}">${esc(r.at)} ${r.kind}${r.resync ? " (" + esc(r.resync) + ")" : ""}` +
    ` client ${r.client} tick ${r.tick}${r.types && r.types.length ? " types " + esc(r.types.join(", ")) : ""}: ${esc(r.reason)}</li>`).join("");
}

function plot(group, opt) {
  const cv = document.getElementById("plot-" + group);
  const w = cv.clientWidth, h = cv.clientHeight, dpr = window.devicePixelRatio || 1;
  if (cv.width !== w * dpr || cv.height !== h * dpr) { cv.width = w * dpr; cv.height = h * dpr; }
  const g = cv.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const left = 54, bottom = h - 16, top = 6, right = w - 6;
  let max = 0, span = 40; // the x axis spans at least 10 s, at most KEEP points
  for (const s of series[group].values()) {
    span = Math.max(span, s.length);
    for (const v of s) if (v !== null && v > max) max = v;
  }
  for (const l of opt.lines || []) if (l > max && max > l * 0.3) max = l;
  max = max > 0 ? max * 1.1 : 1;
  const fmt = opt.fmt || (x => x >= 100 ? x.toFixed(0) : x.toFixed(1));
  g.font = "11px system-ui, sans-serif";
  g.fillStyle = "#7f8c9a"; g.strokeStyle = "#2a313c"; g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = bottom - (bottom - top) * i / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    g.fillText(fmt(max * i / 4), 4, y + 4);
  }
  g.fillText("last " + Math.round(span / 4) + " s", left, h - 3);
  for (const l of opt.lines || []) {
    if (l > max) continue;
    const y = bottom - (bottom - top) * l / max;
    g.strokeStyle = "#6b3b3b"; g.setLineDash([4, 4]);
    g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    g.setLineDash([]);
  }
  const legend = [];
  let i = 0;
  for (const [name, s] of series[group]) {
    const color = COLORS[i++ % COLORS.length];
    legend.push(`<span><i style="background:${color}"></i>${esc(name)}</span>`);
    g.strokeStyle = color; g.lineWidth = 1.5;
    g.beginPath();
    let pen = false;
    s.forEach((v, k) => {
      if (v === null) { pen = false; return; }
      const x = left + (right - left) * (k + span - s.length) / (span - 1);
      const y = bottom - (bottom - top) * v / max;
      if (pen) g.lineTo(x, y); else g.moveTo(x, y);
      pen = true;
    });
    g.stroke();
  }
  document.getElementById("legend-" + group).innerHTML = legend.join("");
}

function connect() {
  const es = new EventSource("events");
  es.onmessage = e => update(JSON.parse(e.data));
  es.onerror = () => { document.getElementById("status").textContent = "disconnected (the match may have ended); retrying…"; document.getElementById("status").className = "stale"; };
}
connect();
