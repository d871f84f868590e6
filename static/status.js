// The status page: GET /api/v1/status every 2 s (?poll=ms overrides) —
// the store's health, armed and pending counts, the next due jobs, the
// running, failed and dead job ids, the flow-control queues and the last
// run errors. A job id opens GET /api/v1/jobs/:id as JSON in the detail
// panel (the open job lives in the URL: /status?job=). Values from the
// server reach the page through textContent (or esc() inside timeHTML).
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
      row(tb, [timeEl(e.at), e.task_id, trig, el("span", e.state, "last-bad"), err]);
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
    ui.notice(t("st.updated", { time: new Date().toLocaleTimeString(), s: pollMS / 1000 }));
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  }
  async function tick() {
    if (!document.hidden) await load();
    setTimeout(tick, pollMS);
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
    window.cronsheet = { load: load, showJob: showJob };
    document.body.dataset.ready = "1";
    tick();
  }
  start();
})();
