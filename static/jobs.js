// The jobs page: a tab per job state with its count (GET /api/v1/jobs?state=…),
// the jobs of the chosen state, narrowed by a search over their name
// (callback) and key (q), bulk actions on the ticked ones through the
// jobs API: retry (a backfill of those ids), cancel, block, unblock;
// backfill of the state's newest jobs (dead or cancelled); and the dead
// letters as JSON lines. Cancel, block and backfill ask first. A job's id
// opens its detail (jobdetail.js). The state, search and open job live in
// the URL (/jobs?state=&q=&job=). Values reach the page through
// textContent (or esc(), for times) only.
import { jobDetail, retryBody } from "./jobdetail.js";
import { jobStateName, jobT, translateJobWords } from "./jobwords.js";

(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = jobT;

  // The states GET /api/v1/jobs lists, in the order a job meets them.
  const states = ["pending", "blocked", "running", "backfilling", "failed", "done", "dead", "cancelled"];
  // countLimit is the most jobs a tab counts; past it the tab says "1000+".
  const countLimit = 1000;
  // What each action applies to: the states whose jobs it can change.
  const actions = {
    retry: ["dead", "cancelled"], // a backfill of the ticked ids
    cancel: ["pending", "blocked", "failed"],
    block: ["pending", "failed"],
    unblock: ["blocked"],
    backfill: ["dead", "cancelled"],
  };
  // The actions that ask "are you sure?" first.
  const asks = new Set(["cancel", "block", "backfill"]);
  const start = new URLSearchParams(location.search);
  const page = { state: start.get("state") || "dead", q: (start.get("q") || "").trim(), job: start.get("job") || "", cursor: "", jobs: [] };
  if (!states.includes(page.state)) page.state = "dead";
  const selected = new Set();
  let detail = null; // jobDetail(…), once the page is set up
  let asking = null; // the action waiting for Yes: {name, run}

  function syncURL() {
    const q = new URLSearchParams({ state: page.state });
    if (page.q) q.set("q", page.q);
    if (page.job) q.set("job", page.job);
    history.replaceState(null, "", "/jobs?" + q);
  }

  function cell(tr, text) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    tr.appendChild(td);
    return td;
  }

  function buildTabs() {
    const box = document.getElementById("job-tabs");
    for (const s of states) {
      const b = document.createElement("button");
      b.type = "button"; b.setAttribute("role", "tab"); b.id = "tab-" + s; b.dataset.state = s;
      b.dataset.label = jobStateName(s);
      b.textContent = b.dataset.label;
      b.addEventListener("click", () => choose(s));
      box.appendChild(b);
    }
  }
  function showTabs() {
    for (const b of document.querySelectorAll("#job-tabs [role=tab]")) {
      const on = b.dataset.state === page.state;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.classList.toggle("on", on);
    }
    for (const [a, st] of Object.entries(actions)) {
      document.getElementById("job-" + a).hidden = !st.includes(page.state);
    }
    document.getElementById("job-export").hidden = page.state !== "dead";
  }

  // Answers can come back out of order (a slow store): each list and each
  // count shows only the answer to its latest request.
  let loads = 0;
  const counts = {};

  // count counts a state's jobs, up to countLimit.
  async function count(s) {
    const seq = (counts[s] = (counts[s] || 0) + 1);
    const q = new URLSearchParams({ state: s, limit: String(countLimit) });
    if (page.q) q.set("q", page.q);
    const r = await ui.getJSON("/api/v1/jobs?" + q);
    if (seq !== counts[s]) return; // a later count of s answers instead
    const b = document.getElementById("tab-" + s);
    if (!r.ok) { b.textContent = b.dataset.label; return; }
    const n = (r.body.jobs || []).length;
    b.dataset.count = String(n);
    b.textContent = t("jb.tab", { label: b.dataset.label, n: r.body.next ? n + "+" : n });
  }
  function countAll() { return Promise.all(states.map(count)); }

  async function load(more) {
    const seq = ++loads;
    const q = new URLSearchParams({ state: page.state, limit: "50" });
    if (page.q) q.set("q", page.q);
    if (more && page.cursor) q.set("cursor", page.cursor);
    const r = await ui.getJSON("/api/v1/jobs?" + q);
    if (seq !== loads) return; // another tab or a refresh was asked for since
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    const tb = document.querySelector("#jobs tbody");
    if (!more) { tb.replaceChildren(); page.jobs = []; }
    for (const j of r.body.jobs || []) {
      page.jobs.push(j);
      const tr = document.createElement("tr");
      tr.id = j.id;
      const box = document.createElement("input");
      box.type = "checkbox"; box.className = "job-sel"; box.setAttribute("aria-label", t("of.row", { what: t("jb.select"), row: j.id }));
      box.checked = selected.has(j.id);
      box.addEventListener("change", () => { if (box.checked) selected.add(j.id); else selected.delete(j.id); showCount(); });
      const td = document.createElement("td"); td.appendChild(box); tr.appendChild(td);
      const idCell = cell(tr, "");
      const a = document.createElement("a");
      a.href = "/jobs?" + new URLSearchParams({ state: page.state, job: j.id }); a.textContent = j.id;
      a.className = "job-open"; a.setAttribute("aria-label", t("jd.open", { id: j.id }));
      a.addEventListener("click", (e) => { e.preventDefault(); detail.show(j.id); });
      idCell.appendChild(a);
      cell(tr, j.method); cell(tr, j.name); cell(tr, jobStateName(j.state)); cell(tr, j.attempts);
      cell(tr, "").innerHTML = ui.timeHTML(j.next_fire || j.due_at || "");
      cell(tr, "").innerHTML = ui.timeHTML(j.created_at || "");
      cell(tr, j.error).className = "job-error";
      tb.appendChild(tr);
    }
    page.cursor = r.body.next || "";
    document.getElementById("job-more").hidden = !page.cursor;
    if (!more && !page.jobs.length) {
      const tr = document.createElement("tr");
      cell(tr, page.q ? t("jd.nomatch", { q: page.q }) : t("jb.none")).colSpan = 9; tb.appendChild(tr);
    }
    showCount();
  }

  function showCount() {
    for (const id of Array.from(selected)) if (!page.jobs.some((j) => j.id === id)) selected.delete(id);
    document.getElementById("job-count").textContent = t("jb.selected", { n: selected.size });
    for (const a of ["retry", "cancel", "block", "unblock"]) document.getElementById("job-" + a).disabled = selected.size === 0;
    if (asking && asking.name !== "backfill" && selected.size === 0) confirmAsk(null);
    const all = document.getElementById("job-all");
    all.checked = page.jobs.length > 0 && page.jobs.every((j) => selected.has(j.id));
  }

  async function choose(s) {
    page.state = s; page.cursor = "";
    selected.clear();
    confirmAsk(null);
    syncURL();
    showTabs();
    ui.notice("");
    await load(false);
  }

  // each runs fn on every selected job, one request each, and reports.
  async function each(name, fn) {
    const ids = Array.from(selected);
    const failed = [];
    for (const id of ids) {
      const r = await fn(id);
      if (!r.ok) failed.push(id + ": " + r.body.error);
    }
    ui.notice(t("jb.done", { action: t("jb." + name), ok: ids.length - failed.length, failed: failed.length }) +
      (failed.length ? " " + failed.slice(0, 5).join("; ") : ""), failed.length > 0);
    await refresh();
  }
  function post(url, body) {
    const opts = { method: "POST" };
    if (body) { opts.headers = { "Content-Type": "application/json" }; opts.body = JSON.stringify(body); }
    return ui.getJSON(url, opts);
  }
  async function backfill(body, name) {
    const r = await post("/api/v1/jobs/backfill", body);
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    const refused = Object.entries(r.body.refused || {});
    ui.notice(t("jb.done", { action: t("jb." + name), ok: (r.body.accepted || []).length, failed: refused.length }) +
      (refused.length ? " " + refused.slice(0, 5).map(([id, why]) => id + ": " + why).join("; ") : ""), refused.length > 0);
    await refresh();
  }
  async function refresh() {
    selected.clear();
    confirmAsk(null);
    await Promise.all([load(false), countAll()]);
  }

  // confirmAsk shows the question for action (null: hides it); Yes runs
  // action.run.
  function confirmAsk(action) {
    asking = action;
    document.getElementById("job-confirm").hidden = !action;
    if (!action) return;
    document.getElementById("job-sure").textContent = action.name === "backfill"
      ? t("jd.sure.backfill", { state: jobStateName(page.state) }) : t("jd.sure." + action.name, { n: selected.size });
    document.getElementById("job-no").focus();
  }

  // search lists the jobs whose name or key holds the search box's words.
  async function search(q) {
    page.q = q.trim(); page.cursor = "";
    document.getElementById("job-q").value = page.q;
    selected.clear();
    confirmAsk(null);
    syncURL();
    ui.notice("");
    await Promise.all([load(false), countAll()]);
  }

  document.addEventListener("DOMContentLoaded", async () => {
    ui.setup();
    translateJobWords();
    // The boxes choose jobs for the actions, which change jobs.
    const locked = ui.lockPage("editor", {
      hide: "#job-retry, #job-cancel, #job-block, #job-unblock, #job-backfill, #job-count, #job-all, .job-sel, #jd-actions, #job-confirm" });
    buildTabs();
    showTabs();
    detail = jobDetail(refresh, (id) => { page.job = id; syncURL(); });
    document.getElementById("job-q").value = page.q;
    document.getElementById("job-search").addEventListener("submit", (e) => { e.preventDefault(); search(document.getElementById("job-q").value); });
    document.getElementById("job-q-clear").addEventListener("click", () => search(""));
    const job = (id) => "/api/v1/jobs/" + encodeURIComponent(id);
    const wire = (name, run) => document.getElementById("job-" + name).addEventListener("click", () => {
      if (asks.has(name)) confirmAsk({ name: name, run: run }); else run();
    });
    wire("retry", () => backfill(retryBody(page.jobs.filter((j) => selected.has(j.id))), "retry"));
    wire("cancel", () => each("cancel", (id) => ui.getJSON(job(id), { method: "DELETE" })));
    wire("block", () => each("block", (id) => post(job(id) + "/block")));
    wire("unblock", () => each("unblock", (id) => post(job(id) + "/unblock")));
    wire("backfill", () => backfill({ state: page.state }, "backfill"));
    document.getElementById("job-yes").addEventListener("click", () => { const a = asking; confirmAsk(null); if (a) a.run(); });
    document.getElementById("job-no").addEventListener("click", () => confirmAsk(null));
    document.getElementById("job-refresh").addEventListener("click", refresh);
    document.getElementById("job-more").addEventListener("click", () => load(true));
    document.getElementById("job-all").addEventListener("change", (e) => {
      for (const j of page.jobs) { if (e.target.checked) selected.add(j.id); else selected.delete(j.id); }
      for (const el of document.querySelectorAll("#jobs .job-sel")) el.checked = e.target.checked;
      showCount();
    });
    await Promise.all([load(false), countAll(), locked]);
    if (page.job) await detail.show(page.job);
    document.body.dataset.ready = "1";
  });
})();
