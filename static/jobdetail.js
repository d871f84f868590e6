// A job's detail on the jobs page (GET /api/v1/jobs/:id): its payload
// (method, name or callback, params, header names only: their values are
// write-only), schedule, key and concurrency group, result, state history
// (its transitions), its runs (each linked to its detail on the Runs
// page) and the actions its state allows (cancel, block, unblock, retry);
// cancel and block ask first, in the panel. Values reach the page through
// textContent (or esc(), for times) only.
import { jobStateName, jobT as t } from "./jobwords.js";

// What each action applies to: the states whose jobs it can change.
const allowed = {
  cancel: ["pending", "blocked", "failed"],
  block: ["pending", "failed"],
  unblock: ["blocked"],
  retry: ["dead", "cancelled"],
};
// The actions that ask "are you sure?" first.
const asks = new Set(["cancel", "block"]);

// retryBody is the backfill request that retries jobs (views as read):
// each names the run it retries, its newest as shown, so that a retry
// sent twice (two clicks, two tabs) re-runs it once; the server refuses
// it when that run is no longer the job's newest (README, backfill).
export function retryBody(jobs) {
  const runs = {};
  for (const j of jobs) if (j.run && j.run.trigger_id) runs[j.id] = j.run.trigger_id;
  return { ids: jobs.map((j) => j.id), runs: runs };
}

// jobDetail wires the panel; onChange runs after an action changed a job,
// onShown(id) when the panel shows a job ("" when it closes).
export function jobDetail(onChange, onShown) {
  const ui = window.cronsheetUI, panel = window.cronsheetPanel;
  const el = (id) => document.getElementById(id);
  let shown = null, asking = "";

  function field(dl, label, value, html) {
    if (value == null || value === "" || (Array.isArray(value) && !value.length)) return;
    const a = document.createElement("dt"); a.textContent = label;
    const b = document.createElement("dd");
    if (html) b.innerHTML = html; else b.textContent = String(value);
    dl.append(a, b);
  }
  function row(tb, cells) {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement("td");
      if (c instanceof Node) td.appendChild(c);
      else if (c && c.html !== undefined) td.innerHTML = c.html;
      else td.textContent = c == null ? "" : String(c);
      tr.appendChild(td);
    }
    tb.appendChild(tr);
    return tr;
  }
  function empty(tb, text, span) {
    const tr = document.createElement("tr"), td = document.createElement("td");
    td.colSpan = span; td.textContent = text; tr.appendChild(td); tb.appendChild(tr);
  }

  function fill(j) {
    el("jd-id").textContent = j.id;
    const pay = el("jd-payload"); pay.replaceChildren();
    field(pay, t("jd.id"), j.id);
    field(pay, t("jd.method"), j.method);
    field(pay, t("jd.name"), j.name);
    field(pay, t("jd.params"), j.params);
    field(pay, t("jd.headers"), Object.keys(j.headers || {}).sort().map((h) => h + ": ***").join("\n"));
    field(pay, t("jd.key"), j.key);
    field(pay, t("jd.cc"), j.cc);
    field(pay, t("jd.cclimit"), j.cc_limit);
    const sch = el("jd-schedule"); sch.replaceChildren();
    field(sch, t("jd.state"), j.state, '<span data-state="' + ui.esc(j.state) + '">' + ui.esc(jobStateName(j.state)) + "</span>");
    field(sch, t("jd.due"), j.due_at, ui.timeHTML(j.due_at));
    field(sch, t("jd.cron"), j.cron);
    field(sch, t("jd.next"), j.next_fire, ui.timeHTML(j.next_fire));
    field(sch, t("jd.retries"), j.max_retries);
    field(sch, t("jd.ttl"), j.ttl || "");
    field(sch, t("jd.attempts"), j.attempts);
    field(sch, t("jd.created"), j.created_at, ui.timeHTML(j.created_at));
    field(sch, t("jd.replaced"), j.replaced_by);
    const res = el("jd-result"); res.replaceChildren();
    field(res, t("jd.result"), j.result);
    field(res, t("jd.error"), j.error);
    if (!j.result && !j.error) field(res, t("jd.result"), t("jd.noresult"));

    const ev = el("jd-events").tBodies[0]; ev.replaceChildren();
    for (const e of j.events || []) {
      row(ev, [{ html: ui.timeHTML(e.at) }, jobStateName(e.state), e.attempt || "", e.trigger_id || "", e.reason || ""]);
    }
    if (!(j.events || []).length) empty(ev, t("jd.noevents"), 5);
    const rn = el("jd-runs").tBodies[0]; rn.replaceChildren();
    for (const r of j.runs || []) {
      const a = document.createElement("a");
      a.href = "/runs?trigger_id=" + encodeURIComponent(r.trigger_id);
      a.textContent = r.trigger_id;
      a.setAttribute("aria-label", t("jd.run.open", { id: r.trigger_id }));
      row(rn, [a, ui.stateName(r.state), r.attempt, { html: ui.timeHTML(r.fired_at) },
        { html: r.finished_at ? ui.timeHTML(r.finished_at) : "" }, r.error || "", r.output || ""]).dataset.trigger = r.trigger_id;
    }
    if (!(j.runs || []).length) empty(rn, t("jd.noruns"), 7);
    for (const [a, st] of Object.entries(allowed)) el("jd-" + a).hidden = !st.includes(j.state);
  }

  async function show(id) {
    const r = await ui.getJSON("/api/v1/jobs/" + encodeURIComponent(id));
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    shown = r.body;
    ask("");
    fill(shown);
    panel.open(el("job-detail"), el("jd-close"), () => { shown = null; ask(""); onShown(""); });
    onShown(shown.id);
  }

  function ask(action) {
    asking = action;
    el("jd-confirm").hidden = !action;
    el("jd-sure").textContent = action ? t("jd.sure.one." + action) : "";
    if (action) el("jd-no").focus();
  }

  async function act(action) {
    const id = shown.id, url = "/api/v1/jobs/" + encodeURIComponent(id);
    const opts = { method: "POST" };
    let r;
    if (action === "cancel") r = await ui.getJSON(url, { method: "DELETE" });
    else if (action === "retry") {
      r = await ui.getJSON("/api/v1/jobs/backfill", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(retryBody([shown])) });
      const why = r.ok && r.body.refused && r.body.refused[id];
      if (why) r = { ok: false, body: { error: why } };
    } else r = await ui.getJSON(url + "/" + action, opts);
    ask("");
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    ui.notice(t("jd.done", { action: t("jb." + action) }));
    await show(id);
    await onChange();
  }

  for (const a of Object.keys(allowed)) {
    el("jd-" + a).addEventListener("click", () => { if (asks.has(a)) ask(a); else act(a); });
  }
  el("jd-yes").addEventListener("click", () => { if (asking && shown) act(asking); });
  el("jd-no").addEventListener("click", () => ask(""));
  el("jd-refresh").addEventListener("click", () => { if (shown) show(shown.id); });
  el("jd-close").addEventListener("click", () => panel.close(el("job-detail")));
  return { show };
}
