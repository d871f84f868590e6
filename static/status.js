// The status page: GET /api/v1/status every 2 s (?poll=ms overrides) —
// the store's health, armed and pending counts, the next due jobs, the
// running, failed and dead job ids, the flow-control queues and the last
// run errors. A job id opens GET /api/v1/jobs/:id as JSON in the detail
// panel (the open job lives in the URL: /status?job=). Values from the
// server reach the page through textContent (or esc() inside timeHTML).
// Beside it, charts of fires, failures and lag p99 over time and a
// timeline of the next 24 hours' fires (GET /api/v1/stats/…, every 30 s).
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t;
  const params = new URLSearchParams(location.search);
  const pollMS = Math.max(250, Number(params.get("poll")) || 2000);
  let last = "", shown = ""; // last: the status rendered; shown: the job in the detail

  const byId = (id) => document.getElementById(id);
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text != null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(tbody, cells) {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement("td");
      if (c instanceof Node) td.appendChild(c); else td.textContent = c == null ? "" : String(c);
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
    return tr;
  }
  function noneRow(tbody, cols) {
    const td = el("td", t("st.none"), "hint");
    td.colSpan = cols;
    const tr = document.createElement("tr");
    tr.appendChild(td);
    tbody.appendChild(tr);
  }
  function timeEl(iso) {
    const span = document.createElement("span");
    span.innerHTML = ui.timeHTML(iso); // escapes
    return span;
  }
  function jobLink(id) {
    const a = el("a", id, "job-link");
    a.href = "/api/v1/jobs/" + encodeURIComponent(id);
    a.dataset.job = id;
    return a;
  }
  // pick reads a field spelled either as Go's default (InFlight) or in
  // snake_case (in_flight).
  const pick = (o, go, snake) => (o[go] !== undefined ? o[go] : o[snake]);

  // ---- render ------------------------------------------------------------
  function renderSummary(st) {
    byId("st-node").textContent = st.node || "—";
    const store = byId("st-store");
    store.replaceChildren();
    const s = st.store || {};
    store.append(el("span", s.driver || "?"), " ",
      el("span", s.ok ? t("st.ok") : t("st.down"), s.ok ? "last-ok" : "last-bad"));
    if (s.error) store.append(" ", el("span", s.error, "last-bad store-error"));
    byId("st-armed").textContent = st.armed == null ? "—" : String(st.armed);
    byId("st-pending").textContent = st.pending_jobs == null ? "—" : String(st.pending_jobs);
  }
  function renderNextDue(list) {
    const tb = byId("next-due").tBodies[0];
    tb.replaceChildren();
    for (const n of list || []) row(tb, [jobLink(n.id), timeEl(n.due_at)]);
    if (!(list || []).length) noneRow(tb, 2);
  }
  function renderIDs(name, ids) {
    const ul = byId(name);
    ul.replaceChildren();
    ids = ids || [];
    byId(name + "-count").textContent = "(" + ids.length + ")";
    for (const id of ids) { const li = document.createElement("li"); li.appendChild(jobLink(id)); ul.appendChild(li); }
    if (!ids.length) ul.appendChild(el("li", t("st.none"), "hint"));
  }
  function renderQueues(q) {
    q = q || {};
    const groups = pick(q, "Groups", "groups") || {}, hosts = pick(q, "Hosts", "hosts") || {};
    const gb = byId("groups").tBodies[0], hb = byId("hosts").tBodies[0];
    gb.replaceChildren();
    hb.replaceChildren();
    for (const name of Object.keys(groups).sort()) {
      const g = groups[name] || {};
      const limit = pick(g, "Limit", "limit");
      row(gb, [name, pick(g, "InFlight", "in_flight") || 0, pick(g, "Waiting", "waiting") || 0,
        limit ? limit : t("st.unlimited")]).dataset.group = name;
    }
    for (const name of Object.keys(hosts).sort()) row(hb, [name, pick(hosts[name] || {}, "Waiting", "waiting") || 0]);
    if (!Object.keys(groups).length) noneRow(gb, 4);
    if (!Object.keys(hosts).length) noneRow(hb, 2);
  }
  function renderErrors(list) {
    const tb = byId("last-errors").tBodies[0];
    tb.replaceChildren();
    for (const e of list || []) {
      const trig = el("a", e.trigger_id);
      trig.href = "/runs?trigger_id=" + encodeURIComponent(e.trigger_id || "");
      const msg = String(e.error || "");
      const err = el("span", msg.length > 120 ? msg.slice(0, 120) + "…" : msg);
      err.title = msg;
      const name = el("span", e.task_title || e.task_id, "task-name"); // the title, the id on hover
      name.title = e.task_id;
      row(tb, [timeEl(e.at), name, trig, el("span", ui.stateName(e.state), "last-bad"), err]);
    }
    if (!(list || []).length) noneRow(tb, 5);
  }
  function render(st) {
    renderSummary(st);
    renderNextDue(st.next_due);
    for (const name of ["running", "failed", "dead"]) renderIDs(name, st[name]);
    renderQueues(st.queues);
    renderErrors(st.last_errors);
  }
  // refreshTimes updates the relative times in place (the status did not
  // change, so nothing else is redrawn under the pointer).
  function refreshTimes() {
    for (const tm of document.querySelectorAll("#status-page time[datetime], #last-errors time[datetime]")) {
      const tmp = document.createElement("span");
      tmp.innerHTML = ui.timeHTML(tm.getAttribute("datetime"));
      tm.textContent = tmp.textContent;
    }
  }

  // ---- polling -----------------------------------------------------------
  async function load() {
    let r;
    try {
      r = await ui.getJSON("/api/v1/status");
    } catch (e) {
      ui.notice(t("st.unreachable", { error: String(e.message || e) }), true);
      return;
    }
    const st = r.body;
    if (!st || !st.store) { ui.notice(r.body.error || String(r.status), true); return; } // 503 keeps its body
    const text = JSON.stringify(st);
    if (text !== last) { render(st); last = text; } else refreshTimes();
    ui.notice(t("st.updated", { time: new Date().toLocaleTimeString(ui.locale()), s: pollMS / 1000 }));
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  }
  async function tick() {
    if (!document.hidden) await load();
    setTimeout(tick, pollMS);
  }

  // ---- charts: fires, failures and lag p99 over time ----------------------
  // GET /api/v1/stats/fires for the chosen window, every 30 s (?stats_poll=ms
  // overrides), drawn with uPlot (vendor/uPlot.iife.min.js).
  const statsPollMS = Math.max(1000, Number(params.get("stats_poll")) || 30000);
  let firesPlot = null, lagPlot = null;
  const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
  function windowLabel(v) {
    const n = parseInt(v, 10);
    return v.endsWith("d") ? t("d", { n: n }) : t("h", { n: n });
  }
  function chartWidth(el) { return Math.max(280, Math.min(900, (el.parentElement.clientWidth || 600) - 8)); }
  function axes() {
    const stroke = cssVar("--fg"), grid = { stroke: cssVar("--line"), width: 1 };
    return [{ stroke: stroke, grid: grid, ticks: grid }, { stroke: stroke, grid: grid, ticks: grid }];
  }
  function drawCharts(st) {
    const xs = [], fires = [], fails = [], lag = [];
    for (const b of st.buckets || []) {
      xs.push(Date.parse(b.start) / 1000);
      fires.push(b.fires);
      fails.push(b.failures);
      lag.push(b.fires ? b.lag_p99_ms : null);
    }
    const fEl = byId("fires-chart"), lEl = byId("lag-chart");
    if (firesPlot) firesPlot.destroy();
    if (lagPlot) lagPlot.destroy();
    firesPlot = new uPlot({
      width: chartWidth(fEl), height: 180, axes: axes(),
      series: [{ label: t("st.time") },
        { label: t("st.fires"), stroke: cssVar("--accent"), fill: cssVar("--accent-bg"), width: 2 },
        { label: t("st.failures"), stroke: cssVar("--bad"), width: 2 }],
    }, [xs, fires, fails], fEl);
    lagPlot = new uPlot({
      width: chartWidth(lEl), height: 140, axes: axes(),
      series: [{ label: t("st.time") }, { label: t("st.lag"), stroke: cssVar("--warn"), width: 2, spanGaps: false }],
    }, [xs, lag], lEl);
    let nf = 0, nx = 0;
    for (let i = 0; i < fires.length; i++) { nf += fires[i]; nx += fails[i]; }
    const totals = byId("stats-totals");
    totals.textContent = t("st.totals", { fires: nf, failures: nx, window: windowLabel(byId("stats-window").value) }) +
      (st.truncated ? " " + t("st.truncated") : "");
    totals.dataset.fires = String(nf);
    totals.dataset.failures = String(nx);
  }
  let statsAnswer = null;
  async function loadStats() {
    const opt = byId("stats-window").selectedOptions[0];
    const q = "window=" + encodeURIComponent(opt.value) + "&bucket=" + encodeURIComponent(opt.dataset.bucket);
    let r;
    try {
      r = await ui.getJSON("/api/v1/stats/fires?" + q);
    } catch (e) {
      ui.notice(t("st.unreachable", { error: String(e.message || e) }), true);
      return;
    }
    if (!r.ok) { ui.notice(r.body.error || String(r.status), true); return; }
    statsAnswer = r.body;
    drawCharts(r.body);
    document.body.dataset.stats = String(Number(document.body.dataset.stats || 0) + 1);
  }

  // ---- timeline: the next 24 hours of fires, by hour ----------------------
  // GET /api/v1/stats/upcoming (at most 500 fires), one line per hour that
  // has fires, each fire a link to its task's runs.
  async function loadTimeline() {
    let r;
    try {
      r = await ui.getJSON("/api/v1/stats/upcoming?within=24h");
    } catch (e) {
      ui.notice(t("st.unreachable", { error: String(e.message || e) }), true);
      return;
    }
    if (!r.ok) { ui.notice(r.body.error || String(r.status), true); return; }
    const list = byId("timeline");
    list.replaceChildren();
    const fires = r.body.fires || [];
    byId("timeline-count").textContent = "(" + fires.length + ")" + (r.body.more ? " " + t("st.tl.limit", { n: fires.length }) : "");
    const hours = new Map(); // hour start (ms) → fires
    for (const f of fires) {
      const d = new Date(f.next_fire);
      d.setMinutes(0, 0, 0);
      const k = d.getTime();
      if (!hours.has(k)) hours.set(k, []);
      hours.get(k).push(f);
    }
    const most = Math.max(1, ...[...hours.values()].map((l) => l.length));
    for (const [k, l] of hours) {
      const li = el("li");
      li.dataset.hour = new Date(k).toISOString();
      const when = el("time", new Date(k).toLocaleString(ui.locale(), { weekday: "short", hour: "2-digit", minute: "2-digit" }), "tl-hour");
      when.setAttribute("datetime", new Date(k).toISOString());
      const bar = el("span", null, "tl-bar");
      bar.style.width = Math.max(4, Math.round((l.length / most) * 120)) + "px";
      bar.title = t("st.tl.hour", { n: l.length });
      const items = el("span", null, "tl-items");
      for (const f of l.slice(0, 8)) {
        const a = el("a", f.task_title || f.row_id || f.task_id, "tl-item");
        a.href = "/runs?task_id=" + encodeURIComponent(f.task_id);
        a.dataset.task = f.task_id;
        a.title = new Date(f.next_fire).toLocaleString(ui.locale()) + " · " + f.task_id;
        items.append(a, " ");
      }
      if (l.length > 8) items.append(el("span", t("st.tl.more", { n: l.length - 8 }), "hint"));
      li.append(when, " ", bar, " ", el("span", String(l.length), "tl-n"), " ", items);
      list.appendChild(li);
    }
    if (!fires.length) list.appendChild(el("li", t("st.tl.none"), "hint"));
    document.body.dataset.timeline = String(Number(document.body.dataset.timeline || 0) + 1);
  }
  async function statsTick() {
    if (!document.hidden) await Promise.all([loadStats(), loadTimeline()]);
    setTimeout(statsTick, statsPollMS);
  }

  // ---- job detail --------------------------------------------------------
  function syncURL() {
    const q = new URLSearchParams(location.search);
    if (shown) q.set("job", shown); else q.delete("job");
    history.replaceState(null, "", "/status" + (q.toString() ? "?" + q : ""));
  }
  async function showJob(id) {
    shown = id;
    syncURL();
    byId("job-detail").hidden = false;
    byId("job-id").textContent = id;
    const pre = byId("job-json");
    let r;
    try {
      r = await ui.getJSON("/api/v1/jobs/" + encodeURIComponent(id));
    } catch (e) {
      r = { ok: false, body: { error: String(e.message || e) } };
    }
    if (shown !== id) return; // another job was opened meanwhile
    pre.className = r.ok ? "" : "cell-error";
    pre.textContent = r.ok ? JSON.stringify(r.body, null, 2) : r.body.error;
    pre.dataset.job = id;
  }

  // ---- start -------------------------------------------------------------
  function start() {
    ui.setup();
    document.querySelector("main").addEventListener("click", (e) => {
      const a = e.target.closest("a.job-link");
      if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return; // new tab: the raw JSON
      e.preventDefault();
      showJob(a.dataset.job);
    });
    byId("job-refresh").addEventListener("click", () => { if (shown) showJob(shown); });
    byId("job-close").addEventListener("click", () => {
      byId("job-detail").hidden = true;
      shown = "";
      syncURL();
    });
    if (params.get("job")) showJob(params.get("job"));
    for (const o of byId("stats-window").options) o.textContent = windowLabel(o.value);
    byId("stats-window").addEventListener("change", loadStats);
    window.cronsheet = { load: load, showJob: showJob, loadStats: loadStats, loadTimeline: loadTimeline,
      stats: () => statsAnswer };
    document.body.dataset.ready = "1";
    tick();
    statsTick();
  }
  start();
})();
