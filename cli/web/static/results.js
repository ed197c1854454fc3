// The Results page: per task of the score cards, and per league / evaluate report, a table and a plot of the
// agents ranked with their 95% intervals (data from /api/results).
"use strict";
(function () {
  const {api, esc} = window.lama;
  const $ = id => document.getElementById(id);

  function fmt(v, percent) {
    if (v === null || v === undefined) return "–";
    return percent ? `${(100 * v).toFixed(1)}%` : v.toFixed(3);
  }

  function ticks(lo, hi, most = 6) {
    const span = hi - lo, raw = span / (most - 1), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10, 20].map(m => m * mag).find(s => span / s <= most);
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(+t.toFixed(10));
    return out;
  }

  // A forest plot: one line per agent (best first), the point and its interval.
  function plot(rows, percent, label) {
    const vals = rows.flatMap(r => [r.lo, r.hi, r.value]).filter(v => v !== null && v !== undefined);
    if (!vals.length) return "";
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (percent) { lo = Math.max(0, lo - 0.05); hi = Math.min(1, hi + 0.05); }
    const pad = (hi - lo) * 0.05 || 0.05;
    lo -= pad; hi += pad;
    // drawn 1:1 in the panel's width (a phone's too), so that its 12-13 px labels stay 12-13 px
    const avail = ($("tasks").clientWidth || document.documentElement.clientWidth) - 34;
    const W = Math.round(Math.max(280, Math.min(760, avail))), narrow = W < 480;
    const left = narrow ? 118 : 170, right = 20, top = 10, rowH = 26, H = top + rows.length * rowH + 34;
    const chars = narrow ? 15 : 22;
    const x = v => left + (v - lo) / (hi - lo) * (W - left - right);
    let s = `<svg class="plot" viewBox="0 0 ${W} ${H}" width="${W}" role="img" aria-label="${esc(label)}" font-family="DejaVu Sans, Verdana, sans-serif">`;
    const axisY = top + rows.length * rowH + 4;
    for (const t of ticks(lo, hi, narrow ? 3 : 6)) {
      s += `<line x1="${x(t)}" x2="${x(t)}" y1="${top}" y2="${axisY}" stroke="#e0e0e0"/>` +
        `<text x="${x(t)}" y="${axisY + 16}" font-size="12" text-anchor="middle" fill="#616161">${esc(fmt(t, percent))}</text>`;
    }
    rows.forEach((r, i) => {
      const y = top + i * rowH + rowH / 2;
      s += `<text x="${left - 10}" y="${y + 4}" font-size="13" text-anchor="end" fill="#212121">${esc(r.agent.length > chars ? r.agent.slice(0, chars - 1) + "…" : r.agent)}</text>`;
      if (r.lo !== null && r.hi !== null) {
        s += `<line x1="${x(r.lo)}" x2="${x(r.hi)}" y1="${y}" y2="${y}" stroke="#2e6e4e" stroke-width="3"/>`;
      }
      if (r.value !== null) s += `<circle cx="${x(r.value)}" cy="${y}" r="5" fill="#ff6f00" stroke="#5d4037"/>`;
    });
    return s + "</svg>";
  }

  function table(rows, percent, extra) {
    let h = `<div class="scroll"><table class="data"><thead><tr><th class="num">rank</th><th>agent</th><th class="num">value</th>` +
      `<th class="num">95% interval</th><th class="num">games</th>${extra.map(e => `<th>${esc(e[0])}</th>`).join("")}</tr></thead><tbody>`;
    rows.forEach((r, i) => {
      h += `<tr><td class="num">${i + 1}</td><td>${esc(r.agent)}</td><td class="num">${fmt(r.value, percent)}</td>` +
        `<td class="num">${fmt(r.lo, percent)} – ${fmt(r.hi, percent)}</td><td class="num">${r.games ?? "–"}</td>` +
        extra.map(e => `<td>${esc(e[1](r))}</td>`).join("") + "</tr>";
    });
    return h + "</tbody></table></div>";
  }

  async function setup() {
    const d = await api("GET", "/api/results");
    if (!d.folder) {
      $("intro").innerHTML = "Start the server with <code>--results DIR</code> (a folder of <code>lama-dice score --json</code> " +
        "cards and <code>lama-dice evaluate --json</code> reports) to see them here.";
      return;
    }
    $("intro").textContent = `From ${d.folder}: ${d.tasks.length} task${d.tasks.length === 1 ? "" : "s"} of score cards, ` +
      `${d.reports.length} league / evaluate report${d.reports.length === 1 ? "" : "s"}.`;
    $("tasks").innerHTML = d.tasks.map(t => `<section class="panel"><h2>Task ${esc(t.task)} (${esc(t.suite)}): ` +
      `${esc(t.measure)}${t.lower_is_better ? " (lower is better)" : ""}</h2>` +
      `<p class="hint">${esc(t.about || "")}</p>` + plot(t.rows, t.percent, `${t.task}: agents ranked by ${t.measure} with 95% intervals`) +
      table(t.rows, t.percent, [["file", r => r.file + (r.official ? "" : " (not official)")]]) + "</section>").join("");
    $("reports").innerHTML = d.reports.map(r => `<section class="panel"><h2>${esc(r.file)}: ${r.kind}, ${r.players} players, ${r.games} games</h2>` +
      `<p class="hint">Ranked by ${esc(r.ranked_by)}.</p>` +
      plot(r.rows, true, `${r.file}: agents ranked by ${r.ranked_by.split(",")[0]}: win rates with 95% intervals`) +
      table(r.rows, true, [["points / round", x => x.points_per_round === null ? "–" : x.points_per_round.toFixed(2)],
        ...(r.kind === "league" ? [["rating (μ − 3σ)", x => x.ordinal === null ? "–" : x.ordinal.toFixed(2)]] : [])]) +
      "</section>").join("");
    markScrolling(document);
    window.addEventListener("resize", () => markScrolling(document));
    if (d.skipped.length) {
      $("skipped").innerHTML = `<section class="panel"><h2>Not shown</h2><ul>` +
        d.skipped.map(([f, why]) => `<li>${esc(f)}: ${esc(why)}</li>`).join("") + "</ul></section>";
    }
  }

  setup().catch(e => { $("error").textContent = e.message; });
})();
