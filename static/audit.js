// The audit page: who changed what, newest first, from GET /api/v1/audit,
// filtered by kind (a scenario's rows, targets, task states, jobs, users,
// tokens), id, who and action, paged by "older records". Values reach the
// page through textContent only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t;
  const kinds = ["memos", "@target", "@task", "@job", "@run", "@user", "@token", "@settings"];
  let before = 0;

  function kindName(k) {
    return k.startsWith("@") ? t("au.k." + k) : t("au.rows", { s: k });
  }

  function cell(tr, text) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    tr.appendChild(td);
    return td;
  }

  // value shows a field's value in its own terms: text as it is, other
  // values as JSON.
  function value(v) {
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  // change shows what a record changed, from the API's field-by-field
  // changes: "field: old → new", a field added or removed with "not set"
  // on its absent side (never "undefined"). A record with values but no
  // changes (a state change, a token) shows its values.
  function change(r) {
    if (r.changes && r.changes.length && r.old && r.new) {
      return r.changes.map((c) => c.field + ": " + (c.added ? t("au.unset") : value(c.old)) +
        " → " + (c.removed ? t("au.unset") : value(c.new))).join("; ");
    }
    if (!r.new && !r.old) return "";
    return JSON.stringify(r.new || r.old);
  }

  async function load(append) {
    const form = document.getElementById("audit-filters");
    const q = new URLSearchParams();
    for (const name of ["kind", "id", "who", "action"]) {
      const v = form.elements[name].value.trim();
      if (v) q.set(name, v);
    }
    q.set("limit", "50");
    if (append && before) q.set("before", String(before));
    const r = await ui.getJSON("/api/v1/audit?" + q);
    const tb = document.querySelector("#audit tbody");
    if (!append) tb.replaceChildren();
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    ui.notice(r.body.records.length || append ? "" : t("au.none"));
    for (const rec of r.body.records) {
      const tr = document.createElement("tr");
      const at = cell(tr, "");
      at.innerHTML = ui.timeHTML(rec.at);
      cell(tr, rec.who); cell(tr, kindName(rec.scenario));
      const what = cell(tr, rec.title || rec.row_id); // the title, the id on hover
      what.className = "task-name"; what.title = rec.row_id;
      cell(tr, rec.action);
      cell(tr, change(rec)).className = "audit-change";
      tb.appendChild(tr);
    }
    before = r.body.next_before || 0;
    document.getElementById("audit-older").hidden = !before;
  }

  document.addEventListener("DOMContentLoaded", () => {
    ui.setup();
    const sel = document.getElementById("audit-kind");
    for (const k of kinds) {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = kindName(k);
      sel.appendChild(o);
    }
    const form = document.getElementById("audit-filters");
    form.addEventListener("submit", (e) => { e.preventDefault(); load(false); });
    document.getElementById("audit-clear").addEventListener("click", () => { form.reset(); load(false); });
    document.getElementById("audit-older").addEventListener("click", () => load(true));
    load(false).finally(() => { document.body.dataset.ready = "1"; });
  });
})();
