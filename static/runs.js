// The runs page: the fire ledger as a DataTables table in server-side mode
// over GET /api/v1/runs, newest first, paged with the API's cursor
// (Previous / Next), filtered by task, target and state. Clicking a run
// opens its detail (GET /api/v1/runs/:trigger_id) with every feedback
// report; while the run is unfinished the detail reads it again every
// liveEvery (slower while the tab is hidden), so its state, attempts,
// output and feedback follow the delivery. The filters and the open run
// live in the URL (/runs?title=&task_id=&target=&state=&trigger_id=). A
// run names its task by title (task_title), the id on hover.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t, esc = ui.esc;
  const panel = window.cronsheetPanel; // session.js: slide-over panels
  const states = ["pending", "running", "accepted", "done", "failed", "dead", "rejected", "timeout", "cancelled", "skipped"];
  const filters = document.getElementById("run-filters");
  let table, paging, shown = ""; // shown: the trigger id in the detail
  let live = 0; // the timer that reads the open run again while it is unfinished
  const liveEvery = 2000, liveHidden = 10000; // ms
  const unfinished = /^(pending|running|failed|accepted)$/;

  const filterNames = ["title", "task_id", "target", "state"];
  function filterValues() {
    const f = {};
    for (const name of filterNames) {
      const v = filters.elements.namedItem(name).value.trim();
      if (v) f[name] = v;
    }
    return f;
  }
  function syncURL() {
    const q = new URLSearchParams(filterValues());
    if (shown) q.set("trigger_id", shown);
    history.replaceState(null, "", "/runs" + (q.toString() ? "?" + q : ""));
  }

  const text = (data, type) => type === "display" ? esc(data) : (data == null ? "" : data);
  const time = (data, type) => type === "display" ? ui.timeHTML(data) : (data || "");
  function stateCell(data, type) {
    if (type !== "display") return data;
    const cls = /^(done|accepted)$/.test(data) ? "last-ok" : /^(dead|rejected|timeout|failed)$/.test(data) ? "last-bad" : "";
    return '<span class="' + cls + '" data-state="' + esc(data) + '">' + esc(ui.stateName(data)) + "</span>";
  }
  function errorCell(data, type) {
    if (type !== "display") return data || "";
    const s = String(data || "");
    return '<span title="' + esc(s) + '">' + esc(s.length > 80 ? s.slice(0, 80) + "…" : s) + "</span>";
  }

  // taskCell names a run's task by its title, the id on hover; a task
  // without a title shows its id.
  function taskCell(data, type, run) {
    if (type !== "display") return run.task_title || data;
    return '<span class="task-name" title="' + esc(data) + '">' + esc(run.task_title || data) + "</span>";
  }

  // whyCell is a run's Why? button: why its task fired or not at its slot.
  function whyCell(data, type, run) {
    return type !== "display" ? "" :
      '<button type="button" class="why" aria-label="' + esc(t("of.row", { what: t("why"), row: run.trigger_id })) +
      '" title="' + esc(t("why.hint")) + '">' + esc(t("why")) + "</button>";
  }

  // ---- detail --------------------------------------------------------------
  function dt(dl, label, value, html) {
    if (value == null || value === "") return;
    const a = document.createElement("dt"); a.textContent = label;
    const b = document.createElement("dd");
    if (html) b.innerHTML = html; else b.textContent = String(value);
    dl.append(a, b);
  }
  async function showRun(id) {
    clearTimeout(live);
    const r = await ui.getJSON("/api/v1/runs/" + encodeURIComponent(id));
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    const run = r.body;
    shown = run.trigger_id;
    syncURL();
    panel.open(document.getElementById("run-detail"), document.getElementById("detail-close"),
      () => { shown = ""; clearTimeout(live); syncURL(); });
    const liveNote = document.getElementById("detail-live");
    liveNote.hidden = !unfinished.test(run.state);
    liveNote.textContent = liveNote.hidden ? "" : t("rn.live", { s: liveEvery / 1000 });
    if (!liveNote.hidden) {
      live = setTimeout(() => { if (shown === run.trigger_id) showRun(run.trigger_id); },
        document.hidden ? liveHidden : liveEvery);
    }
    document.getElementById("detail-title").textContent = run.task_title || "";
    document.getElementById("detail-id").textContent = run.trigger_id;
    const dl = document.getElementById("detail-fields");
    dl.replaceChildren();
    dt(dl, t("rn.id"), run.trigger_id);
    dt(dl, t("rn.task"), run.task_id, taskCell(run.task_id, "display", run));
    dt(dl, t("rn.target"), run.target);
    dt(dl, t("rn.trigger"), run.trigger_type);
    dt(dl, t("rn.state"), run.state, stateCell(run.state, "display"));
    dt(dl, t("rn.attempt"), run.attempt);
    dt(dl, t("rn.slot"), run.slot, ui.timeHTML(run.slot));
    dt(dl, t("rn.fired"), run.fired_at, ui.timeHTML(run.fired_at));
    dt(dl, t("rn.finished"), run.finished_at, ui.timeHTML(run.finished_at));
    dt(dl, t("rn.deadline"), run.deadline, ui.timeHTML(run.deadline));
    dt(dl, t("rn.node"), run.node);
    if (run.params) dt(dl, t("rn.params"), Object.entries(run.params).map(([k, v]) => k + "=" + v).join("\n"));
    dt(dl, t("rn.error"), run.error);
    dt(dl, t("rn.output"), run.output);
    const tb = document.querySelector("#feedback tbody");
    tb.replaceChildren();
    for (const f of run.feedback || []) {
      const tr = document.createElement("tr");
      tr.className = f.progress ? "fb-progress" : "fb-final";
      const cells = [null, f.status, f.progress ? t("rn.progress") : t("rn.final"), f.message, f.output];
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        if (i === 0) td.innerHTML = ui.timeHTML(f.at); else td.textContent = v == null ? "" : String(v);
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    }
    if (!(run.feedback || []).length) {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      td.colSpan = 5; td.textContent = t("rn.nofeedback");
      tr.appendChild(td); tb.appendChild(tr);
    }
  }

  // ---- start -------------------------------------------------------------
  function start() {
    ui.setup();
    const sel = filters.elements.namedItem("state");
    for (const s of states) { const o = document.createElement("option"); o.value = s; o.textContent = ui.stateName(s); sel.appendChild(o); }
    const params = new URLSearchParams(location.search);
    for (const name of filterNames) filters.elements.namedItem(name).value = params.get(name) || "";

    paging = ui.cursorPaging(async (cursor, limit) => {
      const q = new URLSearchParams(filterValues());
      q.set("limit", String(limit));
      if (cursor) q.set("cursor", cursor);
      const r = await ui.getJSON("/api/v1/runs?" + q);
      return { ok: r.ok, error: r.body.error, data: r.body.runs || [], next: r.body.next };
    });
    table = new DataTable("#runs-table", {
      serverSide: true, processing: false, ajax: paging.ajax, rowId: "trigger_id",
      searching: false, ordering: false, info: false, pagingType: "simple",
      pageLength: 25, lengthMenu: [10, 25, 50, 100, 500],
      columns: [
        { data: "fired_at", title: t("rn.fired"), render: time },
        { data: "task_id", title: t("rn.task"), render: taskCell },
        { data: "target", title: t("rn.target"), render: text },
        { data: "trigger_type", title: t("rn.trigger"), render: text },
        { data: "state", title: t("rn.state"), render: stateCell },
        { data: "attempt", title: t("rn.attempt"), render: text },
        { data: "slot", title: t("rn.slot"), render: time },
        { data: "finished_at", title: t("rn.finished"), defaultContent: "", render: time },
        { data: "error", title: t("rn.error"), defaultContent: "", render: errorCell },
        { data: null, title: t("why"), orderable: false, render: whyCell },
      ],
      createdRow: (tr) => tr.classList.add("clickable"),
      language: ui.dtLanguage(),
      // Start-up ends with the first page shown (in Chinese, after the
      // language file).
      initComplete: () => { ui.dtDone(); document.body.dataset.ready = "1"; },
    });
    document.querySelector("#runs-table tbody").addEventListener("click", (e) => {
      const tr = e.target.closest("tr");
      if (e.target.matches("button.why")) {
        const run = table.row(tr).data();
        ui.explain(run.task_id, run.slot); // the dialog, not the run's detail
        return;
      }
      const run = tr && table.row(tr).data();
      if (run && run.trigger_id) showRun(run.trigger_id);
    });
    const apply = () => { paging.reset(); syncURL(); ui.notice(""); table.page(0); table.ajax.reload(); };
    filters.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
    document.getElementById("filter-clear").addEventListener("click", () => { filters.reset(); apply(); });
    document.getElementById("runs-refresh").addEventListener("click", () => table.ajax.reload(null, false));
    document.getElementById("detail-refresh").addEventListener("click", () => { if (shown) showRun(shown); });
    document.getElementById("detail-close").addEventListener("click", () => {
      panel.close(document.getElementById("run-detail")); // its onClose forgets the run
    });
    if (params.get("trigger_id")) showRun(params.get("trigger_id"));
    window.cronsheet = { table: table, showRun: showRun };
  }
  start();
})();
