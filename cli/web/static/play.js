// The Play page: set up a game, draw the table, offer the choices the server lists, show what happened.
"use strict";
(function () {
  const {api, serverInfo, drawTable, compact, esc} = window.lama;
  const $ = id => document.getElementById(id);
  // paused: the state whose round_end the page shows (rounds flow on: the next round is dealt already, shown on a click)
  let info = null, state = null, busy = false, paused = null;

  // The opponent picker: the shipped networks, the heuristics (threshold and points take a number), the server's
  // own offers, and "other spec" (free text). The spec sent is built from the picks: threshold:0.2, points:10.
  const ARG = {threshold: {min: 0, max: 1, step: 0.05, value: 0.2,
                           label: "T, a number 0–1: quit when the chance that a roll matches nothing is at least T"},
               points: {min: 0, max: 99, step: 1, value: 10,
                        label: "K, a whole number: keep rolling while your round points exceed K"}};
  const OTHER = "other";

  function helpOf(name) {
    const usage = Object.keys(info.agents.help).find(u => u.split(/[:[]/)[0] === name);
    return usage ? `${usage}: ${info.agents.help[usage]}` : "";
  }

  function pickerHtml(p, chosen) {
    const opt = (v, text) => `<option value="${esc(v)}"${v === chosen ? " selected" : ""}>${esc(text)}</option>`;
    const group = (label, items) => items.length ? `<optgroup label="${esc(label)}">${items.join("")}</optgroup>` : "";
    return `<select id="opp-${p}" class="agent-pick" data-seat="${p}">` +
      group("Trained networks (shipped)", info.agents.shipped.map(s => opt(s, s))) +
      group("Heuristics and exact agents", info.agents.builtin.map(n => opt(n, ARG[n] ? `${n}: …` : n))) +
      group("Offered by this server", info.agents.trusted.map(s => opt(s, s))) +
      opt(OTHER, "other spec…") + "</select>";
  }

  function pickerDetails(p) {
    const name = $(`opp-${p}`).value, arg = ARG[name];
    $(`opp-${p}-arg-box`).hidden = !arg;
    if (arg) {
      const a = $(`opp-${p}-arg`);
      Object.assign(a, {min: arg.min, max: arg.max, step: arg.step});
      if (a.dataset.for !== name) { a.value = arg.value; a.dataset.for = name; }
      $(`opp-${p}-arg-label`).textContent = arg.label;
    }
    $(`opp-${p}-other-box`).hidden = name !== OTHER;
    $(`opp-${p}-help`).textContent = name === OTHER ? "Any agent spec this server offers (see the list below)."
      : name.startsWith("ppo:") ? "A policy network trained with lama-dice and shipped with it." : helpOf(name);
  }

  function specOf(p) {
    const name = $(`opp-${p}`).value;
    if (name === OTHER) return $(`opp-${p}-other`).value.trim();
    return ARG[name] ? `${name}:${$(`opp-${p}-arg`).value.trim()}` : name;
  }

  function opponentFields() {
    const n = +$("players").value, seat = +$("seat").value, box = $("opponent-fields");
    const old = [...box.querySelectorAll("select.agent-pick")].map(s => +s.dataset.seat)
      .map(p => [$(`opp-${p}`).value, $(`opp-${p}-arg`).value, $(`opp-${p}-other`).value]);
    box.innerHTML = "";
    let k = 0;
    for (let p = 0; p < n; p++) {
      if (p === seat) continue;
      const [chosen, arg, other] = old[k] || [info.default_opponent, "", ""];
      box.insertAdjacentHTML("beforeend", `<div class="opponent"><label for="opp-${p}">Seat ${p}: opponent</label>` +
        pickerHtml(p, chosen) +
        `<div id="opp-${p}-arg-box" class="arg" hidden><label id="opp-${p}-arg-label" for="opp-${p}-arg"></label>` +
        `<input type="number" id="opp-${p}-arg" inputmode="decimal"></div>` +
        `<div id="opp-${p}-other-box" hidden><label for="opp-${p}-other">Seat ${p}: agent spec</label>` +
        `<input type="text" id="opp-${p}-other" list="agent-specs" autocomplete="off" spellcheck="false" ` +
        `placeholder="e.g. lookahead:points" value="${esc(other)}"></div>` +
        `<p class="hint" id="opp-${p}-help"></p></div>`);
      if (arg) { $(`opp-${p}-arg`).value = arg; $(`opp-${p}-arg`).dataset.for = chosen; }
      $(`opp-${p}`).addEventListener("change", () => pickerDetails(p));
      pickerDetails(p);
      k++;
    }
    if (n === 1) box.innerHTML = `<p class="hint">Solo game: no opponents (the solo variant of the rules).</p>`;
  }

  function seatOptions() {
    const n = +$("players").value, seat = Math.min(+$("seat").value || 0, n - 1);
    $("seat").innerHTML = [...Array(n).keys()].map(p => `<option value="${p}">${p}</option>`).join("");
    $("seat").value = String(seat);
    opponentFields();
  }

  async function setup() {
    info = await serverInfo();
    $("players").innerHTML = [1, 2, 3, 4, 5, 6].map(n => `<option value="${n}">${n}</option>`).join("");
    $("players").value = "2";
    $("agent-specs").innerHTML = [...info.agents.shipped, ...info.agents.trusted, ...info.agents.builtin]
      .map(s => `<option value="${esc(s)}"></option>`).join("");
    $("agent-hint").textContent = "Offered here: the shipped networks " + info.agents.shipped.join(", ") +
      "; built-in " + info.agents.builtin.map(n => n === "threshold" ? "threshold:T (T a number 0–1)"
        : n === "points" ? "points:K (K a whole number)" : n).join(", ") +
      (info.agents.trusted.length ? "; offered by this server " + info.agents.trusted.join(", ") : "") +
      ". A spec with an argument, such as lookahead:points, goes under \u201cother spec\u201d.";
    $("players").addEventListener("change", seatOptions);
    $("seat").addEventListener("change", opponentFields);
    seatOptions();
    $("setup-form").addEventListener("submit", start);
    $("again").addEventListener("click", () => { $("game").hidden = true; $("setup").hidden = false; $("start").focus(); });
    document.addEventListener("keydown", onKey);
    window.addEventListener("resize", () => { if (state && !$("game").hidden) drawIt(); });
  }

  async function start(ev) {
    ev.preventDefault();
    $("setup-error").textContent = "";
    const body = {players: +$("players").value, seat: +$("seat").value,
      opponents: [...$("opponent-fields").querySelectorAll("select.agent-pick")].map(s => specOf(+s.dataset.seat))};
    if ($("seed").value !== "") body.seed = +$("seed").value;
    if (!body.opponents.length) delete body.opponents;
    $("start").disabled = true;
    try {
      show(await api("POST", "/api/games", body));
      $("setup").hidden = true;
      $("game").hidden = false;
      drawIt();  // now that the table has its width
      focusFirst();
    } catch (e) {
      $("setup-error").textContent = e.message;
    } finally {
      $("start").disabled = false;
    }
  }

  function show(s) {
    state = s;
    paused = s.round_end ? s : null;  // a round ended since your last move: its end first
    const t = paused ? s.round_end.table : s.table;
    const events = paused ? s.round_end.events : s.events;
    drawIt();
    $("status").textContent = t.status + (t.caption ? ` — ${t.caption}` : "");
    $("odds").textContent = s.odds && !paused ? s.odds.text : "";
    $("events").innerHTML = events.map(e => `<li>${esc(e)}</li>`).join("") || "<li>(nothing yet)</li>";
    $("act-error").textContent = "";
    const box = $("choices");
    box.innerHTML = "";
    roundTable(s);
    resultPanel(s);
    if (paused) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Next round";
      b.dataset.key = "n";
      b.addEventListener("click", toNextDeal);
      box.appendChild(b);
      return;
    }
    s.choices.forEach((c, i) => {
      const key = c.action === 0 ? "r" : c.action === 1 ? "q" : i < 9 ? String(i + 1) : "";
      const row = document.createElement("div");
      row.className = "choice";
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = c.label;
      b.dataset.action = c.action;
      if (key) b.dataset.key = key;
      b.addEventListener("click", () => act(c.action));
      row.insertAdjacentHTML("beforeend", `<span class="key" aria-hidden="true">${key}</span>`);
      row.appendChild(b);
      if (c.outcome) {
        const o = document.createElement("span");
        o.className = "outcome";
        o.id = `outcome-${i}`;
        o.textContent = "→ " + c.outcome;
        b.setAttribute("aria-describedby", o.id);
        row.appendChild(o);
      }
      box.appendChild(row);
    });
    if (!s.choices.length) box.innerHTML = s.game_over ? "<p>The game is over.</p>" : "";
  }

  function drawIt() {
    const t = paused ? paused.round_end.table : state.table;
    const events = paused ? paused.round_end.events : state.events;
    $("table").innerHTML = drawTable(t, info.palette, t.caption || events[events.length - 1], compact($("table")));
  }

  function roundTable(s) {
    $("round").hidden = !s.last_round;
    if (!s.last_round) return;
    const r = s.last_round;
    $("round-table").innerHTML = "<thead><tr><th>player</th><th class='num'>points</th><th class='num'>total</th></tr></thead><tbody>" +
      s.names.map((n, p) => `<tr><td>${esc(n)}</td><td class="num">+${r.points[p]}</td><td class="num">${r.totals[p]}</td></tr>`).join("") +
      "</tbody>";
  }

  function resultPanel(s) {
    $("result").hidden = !s.game_over;
    $("move").hidden = s.game_over;
    if (!s.game_over) return;
    const r = s.result;
    const who = r.winners.map(w => s.names[w]).join(" and ");
    $("result-line").textContent = s.names.length === 1
      ? `Final total: ${r.totals[0]} points after ${r.rounds} rounds.`
      : `${who} ${r.winners.length > 1 ? "share the win" : who === "You" ? "win" : "wins"} after ${r.rounds} rounds.`;
    $("result-table").innerHTML = "<thead><tr><th class='num'>place</th><th>player</th><th class='num'>total</th></tr></thead><tbody>" +
      r.standings.map(x => `<tr><td class="num">${x.place}</td><td>${esc(x.name)}</td><td class="num">${x.total}</td></tr>`).join("") +
      "</tbody>";
    $("download").href = `/api/games/${encodeURIComponent(s.id)}/record?download=true`;
    $("download").setAttribute("download", `lama-dice-game-${s.id.slice(0, 8)}.json`);
    $("watch-link").href = `/watch?game=${encodeURIComponent(s.id)}`;
  }

  function focusFirst() {
    const b = $("choices").querySelector("button") || $("download");
    if (b && !$("game").hidden) b.focus();
  }

  async function send(url, body) {
    if (busy) return;
    busy = true;
    $("choices").querySelectorAll("button").forEach(b => { b.disabled = true; });
    try {
      show(await api("POST", url, body));
      focusFirst();
    } catch (e) {
      $("act-error").textContent = e.message;
      try { show(await api("GET", `/api/games/${encodeURIComponent(state.id)}`)); } catch (e2) { /* keep the message */ }
      $("act-error").textContent = e.message;
    } finally {
      busy = false;
    }
  }

  function act(action) {
    return send(`/api/games/${encodeURIComponent(state.id)}/act`, {action, seq: state.seq});
  }

  // On from a round's end to the next round's table (dealt already: nothing to ask the server).
  function toNextDeal() {
    show({...state, round_end: null, last_round: state.game_over ? state.last_round : null});
    focusFirst();
  }

  function onKey(ev) {
    if (!state || $("game").hidden || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target && ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName)) return;
    const b = $("choices").querySelector(`button[data-key="${CSS.escape(ev.key.toLowerCase())}"]`);
    if (b && !b.disabled) {
      ev.preventDefault();
      b.click();
    }
  }

  setup().catch(e => { $("setup-error").textContent = e.message; });
})();
