// The table as SVG: the layout, faces and colours of the rgb_array picture (lama_env/picture.py),
// drawn from the JSON of lama_dice.cli.web.state.table_state and the palette of lama_env.picture.palette.
"use strict";

const FACES = ["L", "1", "2", "3", "4", "5", "6"];
const WIDTH = 640, HEADER_H = 40, TABLE_H = 88, ROW_H = 100, FOOTER_H = 32;
const PIPS = {1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]], 4: [[0, 0], [0, 2], [2, 0], [2, 2]],
  5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]], 6: [[0, 0], [0, 2], [1, 0], [1, 2], [2, 0], [2, 2]]};
const TAG_COLOR = {"winner": "winner", "went out": "accent", "bust": "bust", "to act": "accent"};

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function mix(hex, other, t) {
  const a = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
  const b = [1, 3, 5].map(i => parseInt(other.slice(i, i + 2), 16));
  return "#" + a.map((x, i) => Math.round(x + (b[i] - x) * t).toString(16).padStart(2, "0")).join("");
}

function text(x, y, s, size, fill, opts = {}) {
  const anchor = opts.align === "center" ? "middle" : opts.align === "right" ? "end" : "start";
  const weight = opts.bold === false ? "normal" : "bold";
  return `<text x="${x}" y="${y}" font-size="${size}" font-weight="${weight}" fill="${fill}" ` +
    `text-anchor="${anchor}" dominant-baseline="${opts.baseline || "hanging"}">${esc(s)}</text>`;
}

// A card of `face`: style "card", "glow" (outlined), "faded" (a quit player's) or "slot" (an empty place).
function card(pal, face, style, bg, x, y, w, h) {
  let [fill, ink] = pal.faces[face];
  let border = mix(fill, "#000000", 0.25);
  if (style === "faded") {
    fill = mix(fill, bg, 0.6); ink = mix(ink, bg, 0.6); border = mix(border, bg, 0.6);
  } else if (style === "slot") {
    fill = bg; ink = mix(bg, "#000000", 0.14); border = ink;
  }
  let out = "";
  if (style === "glow") {
    out += `<rect x="${x - 3}" y="${y - 3}" width="${w + 6}" height="${h + 6}" rx="9" fill="${pal.glow}"/>`;
  }
  out += `<rect x="${x + 1}" y="${y + 1}" width="${w - 2}" height="${h - 2}" rx="6" fill="${fill}" ` +
    `stroke="${border}" stroke-width="2"/>`;
  out += text(x + w / 2, y + h / 2 + 1, FACES[face], Math.round(h * 0.62), ink, {align: "center", baseline: "central"});
  return out;
}

function die(pal, face, x, y, size) {
  const bg = pal.table;
  if (face === null || face === undefined) {
    return `<rect x="${x + 1}" y="${y + 1}" width="${size - 2}" height="${size - 2}" rx="8" fill="none" ` +
      `stroke="${mix(bg, "#ffffff", 0.3)}" stroke-width="2"/>`;
  }
  const llama = face === 0;
  let out = `<rect x="${x + 1}" y="${y + 1}" width="${size - 2}" height="${size - 2}" rx="8" ` +
    `fill="${llama ? pal.faces[0][0] : "#fafafa"}" stroke="#3c3c3c" stroke-width="2"/>`;
  if (llama) {
    out += text(x + size / 2, y + size / 2 + 1, "L", Math.round(size * 0.62), pal.faces[0][1],
      {align: "center", baseline: "central"});
  } else {
    const r = size * 0.09;
    for (const [row, col] of PIPS[face]) {
      out += `<circle cx="${x + size * (0.27 + 0.23 * col)}" cy="${y + size * (0.27 + 0.23 * row)}" r="${r}" fill="#212121"/>`;
    }
  }
  return out;
}

function cardsWords(counts) {
  const out = [];
  counts.forEach((k, f) => { for (let i = 0; i < k; i++) out.push(FACES[f]); });
  return out.length ? out.join(" ") : "no cards";
}

// A one-paragraph description of the table for screen readers (the SVG's title).
function describeTable(t) {
  const row = t.row.map((k, f) => k ? FACES[f] : null).filter(x => x !== null);
  let s = `Round ${t.round}. ${t.status}. Llama row: ${row.length ? row.join(" ") : "empty"}.`;
  if (t.dice) s += ` Dice: ${t.dice.map(f => FACES[f]).join(" ")}.`;
  for (const seat of t.seats) {
    s += ` ${seat.name}: ${cardsWords(seat.display)}, ${seat.points} points this round, total ${seat.total}` +
      (seat.tag ? `, ${seat.tag}` : "") + ".";
  }
  return s;
}

function fit(s, n) {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

// The header's "start: NAME" in `n` characters: the whole name, else its seat ("P5"), never cut mid-word.
function startLine(name, n) {
  const whole = `start: ${name}`;
  return whole.length <= n ? whole : fit(`start: ${name.split(" ")[0]}`, n);
}

// The band of seat `p` (opened as a <g>, closed by the caller): its background (the acting seat's, with a bar and
// an arrow at `arrow` = [x0, x1, top, middle, bottom]; a quit seat's faded), the line under it; and its colours.
function seatBand(pal, t, p, y, w, h, over, arrow) {
  const acting = !over && p === t.current;
  const faded = t.seats[p].quit && !over;
  const bg = acting ? pal.acting : faded ? pal.quit : pal.row;
  let svg = `<g class="seat" data-seat="${p}"><rect y="${y}" width="${w}" height="${h}" fill="${bg}"/>` +
    `<rect y="${y + h - 1}" width="${w}" height="1" fill="${mix(bg, "#000000", 0.15)}"/>`;
  if (acting) {
    const [x0, x1, top, mid, bottom] = arrow;
    svg += `<rect y="${y}" width="5" height="${h - 1}" fill="${pal.accent}"/>` +
      `<polygon points="${x0},${y + top} ${x1},${y + mid} ${x0},${y + bottom}" fill="${pal.accent}"/>`;
  }
  return {svg, bg, faded};
}

// Words of `s` in lines of at most `n` characters (at most `max` lines, the last one cut with "…").
function wrap(s, n, max) {
  const lines = [];
  let cur = "";
  for (const w of String(s).split(/\s+/)) {
    if (cur && (cur + " " + w).length > n) { lines.push(cur); cur = w; } else cur = cur ? cur + " " + w : w;
  }
  if (cur) lines.push(cur);
  if (lines.length > max) lines.splice(max - 1, lines.length, fit(lines.slice(max - 1).join(" "), n));
  return lines.map(l => fit(l, n));
}

// Whether a table drawn into `el` should use the narrow layout (a phone): the wide one would shrink its text
// below 12 px.
function compact(el) {
  const w = (el && el.clientWidth) || document.documentElement.clientWidth;
  return w < 560;
}

// The table for a narrow screen (a phone): 350 units wide, so that drawn 1:1 or larger no text is under 12 px.
// The same facts as the wide table: status and start player in the header, the llama row, the dice and the
// turn, then one block per seat (name, tag, points, total, the display), then the caption (two lines).
function drawCompact(t, pal, caption) {
  const W = 350, HEAD = 50, TAB = 128, ROW = 104, FOOT = 44, n = t.seats.length;
  const H = HEAD + TAB + ROW * n + FOOT;
  const over = t.phase === "round_end" || t.phase === "game_over";
  let s = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" class="table-svg" ` +
    `data-layout="compact" font-family="DejaVu Sans, Verdana, sans-serif"><title>${esc(describeTable(t))}</title>`;
  s += `<rect width="${W}" height="${HEAD}" fill="${pal.header}"/>`;
  s += text(10, 6, `Round ${t.round}`, 16, pal.header_text);
  s += text(W - 10, 8, startLine(t.seats[t.start_player].name, 30), 13, pal.header_dim, {bold: false, align: "right"});
  s += text(10, 28, fit(t.status, 32), 15, pal.header_text);
  const ty = HEAD;
  s += `<rect y="${ty}" width="${W}" height="${TAB}" fill="${pal.table}"/>`;
  s += text(10, ty + 6, "llama row", 13, pal.table_text);
  for (let f = 0; f < 7; f++) {
    const style = t.row[f] ? (t.takeable.includes(f) ? "glow" : "card") : "slot";
    s += card(pal, f, style, pal.table, 10 + f * 36 + 3, ty + 26, 30, 40);
  }
  s += text(W - 34, ty + 6, over ? "turns" : "turn", 13, pal.table_text, {align: "center"});
  s += text(W - 34, ty + 30, String(t.turn ?? t.turns_in_round), 22, pal.header_text, {align: "center"});
  s += text(10, ty + 84, "dice", 13, pal.table_text);
  for (let i = 0; i < 3; i++) s += die(pal, t.dice ? t.dice[i] : null, 60 + i * 48, ty + 74, 42);
  t.seats.forEach((seat, p) => {
    const y = HEAD + TAB + p * ROW;
    const band = seatBand(pal, t, p, y, W, ROW, over, [9, 19, 8, 15, 22]);
    const {bg, faded} = band;
    s += band.svg;
    s += text(24, y + 6, fit(seat.name, 19), 15, pal.text);
    if (seat.tag) s += text(24, y + 26, seat.tag, 13, pal[TAG_COLOR[seat.tag] || "dim"]);
    s += text(262, y + 4, "points", 12, pal.dim, {bold: false, align: "center"});
    s += text(318, y + 4, "total", 12, pal.dim, {bold: false, align: "center"});
    s += text(262, y + 19, String(seat.points), 20, pal.text, {align: "center"});
    s += text(318, y + 19, String(seat.total), 20, pal.text, {align: "center"});
    for (let f = 0; f < 7; f++) {
      const k = seat.display[f];
      const x = 22 + f * 46;
      const style = !k ? "slot" : seat.glow.includes(f) ? "glow" : faded ? "faded" : "card";
      s += card(pal, f, style, bg, x + 2, y + 44, 36, 42);
      if (k) s += text(x + 20, y + 88, `\u00d7${k}`, 12, faded ? pal.dim : pal.text, {align: "center"});
    }
    s += "</g>";
  });
  s += `<rect y="${H - FOOT}" width="${W}" height="${FOOT}" fill="${pal.header}"/>`;
  const cap = caption || t.caption;
  if (cap) wrap(cap, 44, 2).forEach((l, i) => { s += text(10, H - FOOT + 5 + i * 18, l, 13, pal.header_text, {bold: false}); });
  return s + "</svg>";
}

// The whole table as an SVG string (scales to any width: viewBox in the picture's pixels); `caption` for the
// bottom line (default: the last-player note), as the picture's caption; `narrow` for the phone layout
// (drawCompact).
function drawTable(t, pal, caption, narrow = false) {
  if (narrow) return drawCompact(t, pal, caption);
  const n = t.seats.length;
  const H = HEADER_H + TABLE_H + ROW_H * n + FOOTER_H;
  const over = t.phase === "round_end" || t.phase === "game_over";
  let s = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${H}" role="img" class="table-svg" ` +
    `font-family="DejaVu Sans, Verdana, sans-serif"><title>${esc(describeTable(t))}</title>`;
  // header
  s += `<rect width="${WIDTH}" height="${HEADER_H}" fill="${pal.header}"/>`;
  s += text(12, 9, `Round ${t.round}`, 20, pal.header_text);
  s += text(128, 11, fit(t.status, 36), 17, pal.header_text);
  s += text(WIDTH - 12, 14, startLine(t.seats[t.start_player].name, 26), 13, pal.header_dim,
    {bold: false, align: "right"});
  // the table: llama row, dice, turn count
  const ty = HEADER_H;
  s += `<rect y="${ty}" width="${WIDTH}" height="${TABLE_H}" fill="${pal.table}"/>`;
  s += text(14, ty + 8, "llama row", 13, pal.table_text) + text(330, ty + 8, "dice", 13, pal.table_text) +
    text(586, ty + 8, over ? "turns" : "turn", 13, pal.table_text, {align: "center"});
  for (let f = 0; f < 7; f++) {
    const style = t.row[f] ? (t.takeable.includes(f) ? "glow" : "card") : "slot";
    s += card(pal, f, style, pal.table, 14 + f * 38 + 3, ty + 30 + 3, 30, 42);
  }
  for (let i = 0; i < 3; i++) s += die(pal, t.dice ? t.dice[i] : null, 330 + i * 56, ty + 30, 46);
  s += text(586, ty + 36, String(t.turn ?? t.turns_in_round), 26, pal.header_text, {align: "center"});
  // one row per seat
  t.seats.forEach((seat, p) => {
    const y = HEADER_H + TABLE_H + p * ROW_H;
    const band = seatBand(pal, t, p, y, WIDTH, ROW_H, over, [10, 24, 27, 36, 45]);
    const {bg, faded} = band;
    s += band.svg;
    const size = seat.name.length > 15 ? 14 : 17;
    s += text(30, y + 33 - size, fit(seat.name, 20), size, pal.text);
    if (seat.tag) s += text(30, y + 46, seat.tag, 14, pal[TAG_COLOR[seat.tag] || "dim"]);
    for (let f = 0; f < 7; f++) {
      const k = seat.display[f];
      const x = 184 + f * 47;
      const style = !k ? "slot" : seat.glow.includes(f) ? "glow" : faded ? "faded" : "card";
      s += card(pal, f, style, bg, x + 3, y + 6 + 3, 38, 54);
      if (k) s += text(x + 22, y + 70, `\u00d7${k}`, 14, faded ? pal.dim : pal.text, {align: "center"});
    }
    s += text(560, y + 14, "points", 12, pal.dim, {bold: false, align: "center"});
    s += text(612, y + 14, "total", 12, pal.dim, {bold: false, align: "center"});
    s += text(560, y + 38, String(seat.points), 26, pal.text, {align: "center"});
    s += text(612, y + 38, String(seat.total), 26, pal.text, {align: "center"}) + "</g>";
  });
  // caption
  s += `<rect y="${H - FOOTER_H}" width="${WIDTH}" height="${FOOTER_H}" fill="${pal.header}"/>`;
  const cap = caption || t.caption;
  if (cap) s += text(12, H - FOOTER_H + 8, fit(cap, 84), 14, pal.header_text, {bold: false});
  return s + "</svg>";
}

// Shared page helpers: JSON requests that turn an error answer into one line.
async function api(method, url, body) {
  const opts = {method, headers: {}};
  if (body !== undefined) {
    opts.headers["Content-Type"] = typeof body === "string" ? "text/plain" : "application/json";
    opts.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const r = await fetch(url, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) {
    const err = new Error((data && data.error) || `${r.status} ${r.statusText}`);
    err.data = data;
    err.status = r.status;
    throw err;
  }
  return data;
}

let INFO = null;
async function serverInfo() {
  if (!INFO) INFO = await api("GET", "/api/info");
  return INFO;
}

window.lama = {FACES, drawTable, describeTable, compact, api, serverInfo, esc};

// Mark every table wrapper (.scroll) under `root` that is wider than its card: a note above it says that it
// scrolls sideways, and style.css shades the edge with more columns behind it.  Called again on a resize.
function markScrolling(root) {
  root.querySelectorAll(".scroll").forEach(el => {
    const over = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle("overflows", over);
    const note = el.previousElementSibling && el.previousElementSibling.classList.contains("scroll-note")
      ? el.previousElementSibling : null;
    if (over && !note) {
      el.insertAdjacentHTML("beforebegin",
        '<p class="scroll-note">Wider than the screen: swipe the table sideways for its other columns →</p>');
    } else if (!over && note) {
      note.remove();
    }
  });
}
