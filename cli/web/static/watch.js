// The Watch page: a record, step by step (frames from /api/records/PATH or /api/replay), forward, back, animated.
// The URL says which record and which step: /watch?file=PATH#step=N (or ?game=ID for a game played here).
"use strict";
(function () {
  const {api, serverInfo, drawTable, compact, esc} = window.lama;
  const $ = id => document.getElementById(id);
  let info = null, data = null, step = 0, timer = null, source = null, revealed = false;

  function render() {
    const f = data.frames[step];
    $("table").innerHTML = drawTable(f.table, info.palette, f.table.caption || f.line, compact($("table")));
    $("line").textContent = f.turn ? `Round ${f.round}, turn ${f.turn}: ${f.line}` : f.line;
    $("slider").value = String(step);
    $("where").textContent = `step ${step + 1} of ${data.frames.length}`;
    // the result stays hidden until the replay reaches its end (or the viewer asks for it): no spoiler
    const shown = revealed || step === data.frames.length - 1;
    $("result-table").hidden = !shown;
    $("result-wait").hidden = shown;
    $("back").disabled = $("first").disabled = step === 0;
    $("forward").disabled = $("last").disabled = step === data.frames.length - 1;
    const link = `${location.pathname}${location.search}#step=${step + 1}`;
    $("permalink").href = link;
    $("permalink").hidden = !source;  // an uploaded file stays in this page: no link can bring it back
    if (source) history.replaceState(null, "", link);
  }

  function go(i) {
    if (!data) return;
    step = Math.max(0, Math.min(data.frames.length - 1, i));
    render();
    if (step === data.frames.length - 1) stop();
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    $("play").textContent = "Play";
  }

  function toggle() {
    if (timer) return stop();
    if (step === data.frames.length - 1) go(0);
    $("play").textContent = "Pause";
    timer = setInterval(() => go(step + 1), +$("speed").value);
  }

  function fail(e) {
    stop();
    data = null;
    $("viewer").hidden = true;
    $("result-panel").hidden = true;
    $("error").textContent = e.message;
    const rep = e.data && e.data.replay;
    $("error-json").hidden = !rep;
    if (rep) $("error-json").textContent = "lama-dice replay says: " + JSON.stringify(rep);
  }

  function load(d, title, src, start = 0) {
    stop();
    data = d;
    source = src;
    $("error").textContent = "";
    $("error-json").hidden = true;
    $("viewer").hidden = false;
    $("title").textContent = `${title}: ${d.players} player${d.players === 1 ? "" : "s"}, ${d.rounds} round${d.rounds === 1 ? "" : "s"}`;
    $("about").textContent = d.about || "";
    $("about").hidden = !d.about;
    $("slider").max = String(d.frames.length - 1);
    revealed = false;
    const r = d.result;
    $("result-panel").hidden = false;
    $("result-table").innerHTML = "<thead><tr><th>player</th><th class='num'>total</th></tr></thead><tbody>" +
      d.names.map((n, p) => `<tr><td>${esc(n)}${r.winners.includes(p) && r.game_over ? " (winner)" : ""}</td>` +
        `<td class="num">${r.totals[p]}</td></tr>`).join("") + "</tbody>";
    go(start);
  }

  async function openFile(path, start = 0) {
    try {
      info = info || await serverInfo();
      history.replaceState(null, "", `/watch?file=${encodeURIComponent(path)}`);
      load(await api("GET", `/api/records/${path.split("/").map(encodeURIComponent).join("/")}`), path, path, start);
    } catch (e) { fail(e); }
  }

  async function openUpload(file) {
    try {
      info = info || await serverInfo();
      const text = await file.text();
      history.replaceState(null, "", "/watch");
      load(await api("POST", `/api/replay?name=${encodeURIComponent(file.name)}`, text), file.name, null);
    } catch (e) { fail(e); }
  }

  async function openGame(id, start = 0) {
    try {
      info = info || await serverInfo();
      const r = await fetch(`/api/games/${encodeURIComponent(id)}/record`);
      const text = await r.text();
      if (!r.ok) throw Object.assign(new Error(JSON.parse(text).error), {});
      load(await api("POST", "/api/replay?name=game", text), "Your game", `game=${id}`, start);
    } catch (e) { fail(e); }
  }

  async function listFiles() {
    const d = await api("GET", "/api/records");
    if (!d.folder) {
      $("records-box").innerHTML = `<p class="hint">Start the server with <code>--records DIR</code> to list the records of a folder here.</p>`;
      return;
    }
    $("files").innerHTML = d.files.map(f => `<li><a href="/watch?file=${encodeURIComponent(f)}" data-file="${esc(f)}">${esc(f)}</a></li>`).join("") ||
      "<li>(no .json files)</li>";
    if (d.more) $("files").insertAdjacentHTML("beforeend", `<li>… and ${d.more} more</li>`);
    // files the listing skipped (a name a page cannot carry), each with the server's reason
    $("skipped").innerHTML = d.skipped.length ? `<h2 id="skipped-title">Not listed</h2>` +
      `<ul class="filelist" aria-labelledby="skipped-title">` +
      d.skipped.map(([f, why]) => `<li>${esc(f)}: ${esc(why)}</li>`).join("") + "</ul>" : "";
    $("files").querySelectorAll("a[data-file]").forEach(a => a.addEventListener("click", ev => {
      ev.preventDefault();
      history.replaceState(null, "", "/watch");
      openFile(a.dataset.file);
    }));
  }

  async function setup() {
    $("first").addEventListener("click", () => go(0));
    $("back").addEventListener("click", () => go(step - 1));
    $("forward").addEventListener("click", () => go(step + 1));
    $("last").addEventListener("click", () => go(data.frames.length - 1));
    $("play").addEventListener("click", toggle);
    $("show-result").addEventListener("click", () => { revealed = true; if (data) render(); });
    window.addEventListener("resize", () => { if (data) render(); });
    $("slider").addEventListener("input", () => go(+$("slider").value));
    $("upload").addEventListener("change", () => { if ($("upload").files[0]) openUpload($("upload").files[0]); });
    document.addEventListener("keydown", ev => {
      if (!data || (ev.target && ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName) && ev.target.type !== "range")) return;
      const k = {ArrowRight: () => go(step + 1), ArrowLeft: () => go(step - 1), Home: () => go(0),
        End: () => go(data.frames.length - 1), " ": toggle}[ev.key];
      if (k && !(ev.target.tagName === "BUTTON" && ev.key === " ")) { ev.preventDefault(); k(); }
    });
    info = await serverInfo();
    await listFiles();
    document.body.dataset.ready = "true";
    const q = new URLSearchParams(location.search);
    const m = /step=(\d+)/.exec(location.hash);
    const start = m ? +m[1] - 1 : 0;
    if (q.get("file")) await openFile(q.get("file"), start);
    else if (q.get("game")) await openGame(q.get("game"), start);
  }

  setup().catch(fail);
})();
