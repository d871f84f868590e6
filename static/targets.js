// The targets page: a DataTables table in server-side mode over
// GET /api/v1/targets (keyset paged: Previous / Next), a form that adds a
// target (POST) or edits one (PUT with If-Match), a state switch per row
// and delete with confirmation. A refused save keeps the form as typed and
// shows the server's message beside it, marking the field it names.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t, esc = ui.esc;
  const form = document.getElementById("target-form");
  const kinds = ["http", "exec", "kafka", "builtin"];
  let table, editing = null; // editing: the target being edited, else null
  const confirming = new Set(); // ids of rows asking "delete?"

  // ---- form → body ---------------------------------------------------------
  function field(name) { return form.elements.namedItem(name); }
  function val(name) { return field(name).value.trim(); }
  // num sends an integer as a number; anything else as typed, so the
  // server's message names the field.
  function num(name) {
    const v = val(name);
    if (v === "") return undefined;
    return /^-?\d+$/.test(v) ? Number(v) : v;
  }
  function put(obj, key, v) { if (v !== undefined && v !== "") obj[key] = v; }

  // body builds the JSON the API takes; a problem only the page can see
  // (a header line without a colon) throws {field, message}.
  function body() {
    const kind = val("kind");
    const b = { id: val("id"), kind: kind, state: val("state") };
    put(b, "name", val("name"));
    put(b, "feedback_timeout", num("feedback_timeout"));
    if (kind === "http") {
      const h = { method: val("http.method"), url: val("http.url") };
      const headers = {};
      field("http.headers").value.split("\n").forEach((line, i) => {
        if (!line.trim()) return;
        const at = line.indexOf(":");
        if (at <= 0) throw { field: "http.headers", message: "http.headers: " + t("tg.headers.bad", { n: i + 1 }) };
        headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      });
      if (Object.keys(headers).length) h.headers = headers;
      put(h, "body", field("http.body").value);
      put(h, "timeout", num("http.timeout"));
      b.http = h;
      if (val("probe.interval")) {
        const p = { interval: val("probe.interval"), method: val("probe.method") };
        put(p, "path", val("probe.path"));
        b.probe = p;
      }
    } else if (kind === "exec") {
      b.exec = { command: val("exec.command") };
    } else if (kind === "kafka") {
      const k = { topic: val("kafka.topic") };
      put(k, "key", field("kafka.key").value);
      put(k, "value", field("kafka.value").value);
      b.kafka = k;
    } else if (kind === "builtin") {
      const x = { action: val("builtin.action") };
      const tasks = val("builtin.tasks").split(",").map((s) => s.trim()).filter((s) => s);
      if (tasks.length) x.tasks = tasks;
      const flows = val("builtin.flows").split(",").map((s) => s.trim()).filter((s) => s);
      if (flows.length) x.flows = flows;
      put(x, "keep_age", num("builtin.keep_age"));
      put(x, "keep_count", num("builtin.keep_count"));
      b.builtin = x;
    }
    return b;
  }

  function showKind() {
    const kind = val("kind");
    for (const fs of form.querySelectorAll("fieldset[data-kind]")) fs.hidden = fs.dataset.kind !== kind;
    document.getElementById("kind-none").hidden = kinds.includes(kind);
    preview();
  }
  function preview() {
    let text;
    try { text = JSON.stringify(body(), null, 2); } catch (e) { text = e.message; }
    document.getElementById("target-json").textContent = text;
  }

  function formError(msg, fieldName) {
    document.getElementById("target-error").textContent = msg || "";
    for (const el of form.querySelectorAll(".bad")) el.classList.remove("bad");
    if (!fieldName) return;
    // "http.url" names its input; "http" or "headers.X" the closest one.
    let el = field(fieldName);
    if (!el && fieldName.includes(".")) el = field(fieldName.split(".").slice(0, 2).join("."));
    if (!el) { const fs = form.querySelector('fieldset[data-kind="' + fieldName.split(".")[0] + '"]'); if (fs) el = fs; }
    if (el && el.classList) { el.classList.add("bad"); if (el.focus) el.focus(); }
  }

  // fill puts a target into the form for editing (or clears it).
  function fill(tg) {
    form.reset();
    formError("");
    editing = tg;
    field("id").readOnly = !!tg;
    document.getElementById("form-title").textContent = t(tg ? "tg.edit" : "tg.new");
    document.getElementById("form-id").textContent = tg ? tg.id + " v" + tg.version : "";
    document.getElementById("target-cancel").hidden = !tg;
    if (tg) {
      field("id").value = tg.id;
      field("name").value = tg.name || "";
      field("kind").value = tg.kind;
      field("state").value = tg.state;
      field("feedback_timeout").value = tg.feedback_timeout || "";
      const h = tg.http || {}, e = tg.exec || {}, k = tg.kafka || {}, b = tg.builtin || {};
      if (tg.http) {
        field("http.method").value = h.method;
        field("http.url").value = h.url || "";
        field("http.timeout").value = h.timeout || "";
        field("http.headers").value = Object.entries(h.headers || {}).map(([n, v]) => n + ": " + v).join("\n");
        field("http.body").value = h.body || "";
        const p = tg.probe || {};
        field("probe.interval").value = p.interval || "";
        field("probe.method").value = p.method || "HEAD";
        field("probe.path").value = p.path || "";
      }
      if (tg.exec) field("exec.command").value = e.command || "";
      if (tg.kafka) { field("kafka.topic").value = k.topic || ""; field("kafka.key").value = k.key || ""; field("kafka.value").value = k.value || ""; }
      if (tg.builtin) {
        field("builtin.action").value = b.action;
        field("builtin.tasks").value = (b.tasks || []).join(", ");
        field("builtin.flows").value = (b.flows || []).join(", ");
        field("builtin.keep_age").value = b.keep_age || "";
        field("builtin.keep_count").value = b.keep_count || "";
      }
    }
    showKind();
  }

  async function save(e) {
    e.preventDefault();
    formError("");
    let b;
    try { b = body(); } catch (err) { formError(err.message, err.field); return; }
    const opts = { headers: { "Content-Type": "application/json" }, body: JSON.stringify(b) };
    let url = "/api/v1/targets";
    if (editing) {
      url += "/" + encodeURIComponent(editing.id);
      opts.method = "PUT";
      opts.headers["If-Match"] = '"' + editing.version + '"';
    } else {
      opts.method = "POST";
    }
    const btn = document.getElementById("target-save");
    btn.disabled = true;
    const r = await ui.getJSON(url, opts);
    btn.disabled = false;
    if (!r.ok) { formError(r.body.error, r.body.field); return; }
    ui.notice(t(editing ? "tg.saved" : "tg.created", { id: r.body.id }));
    fill(null);
    table.ajax.reload(null, false);
  }

  // ---- rows ----------------------------------------------------------------
  function rowOf(el) { return table.row(el.closest("tr")); }
  // setState PUTs the row's target with a new state, on its version.
  async function setState(sel) {
    const row = rowOf(sel);
    const tg = row.data();
    const b = Object.assign({}, tg, { state: sel.value });
    delete b.version; delete b.created_at; delete b.updated_at; delete b.health;
    sel.disabled = true;
    const r = await ui.getJSON("/api/v1/targets/" + encodeURIComponent(tg.id), {
      method: "PUT", headers: { "Content-Type": "application/json", "If-Match": '"' + tg.version + '"' }, body: JSON.stringify(b),
    });
    sel.disabled = false;
    if (!r.ok) { sel.value = tg.state; ui.notice(tg.id + ": " + r.body.error, true); return; }
    row.data(r.body);
    ui.notice(t("tg.saved", { id: tg.id }));
  }
  async function answerDelete(btn, yes) {
    const row = rowOf(btn);
    const tg = row.data();
    if (!yes) { confirming.delete(tg.id); row.invalidate("data"); return; }
    btn.disabled = true;
    const r = await ui.getJSON("/api/v1/targets/" + encodeURIComponent(tg.id), { method: "DELETE" });
    confirming.delete(tg.id);
    if (!r.ok && r.status !== 404) { row.invalidate("data"); ui.notice(r.body.error, true); return; }
    if (editing && editing.id === tg.id) fill(null);
    ui.notice(t("tg.deleted", { id: tg.id }));
    table.ajax.reload(null, false);
  }

  function stateCell(data, type, row) {
    if (type !== "display") return data;
    return '<select class="tg-state" aria-label="' + esc(t("of.row", { what: t("tg.state"), row: row.id })) + '">' +
      ["preset", "running", "paused"].map((s) => '<option value="' + s + '"' + (s === data ? " selected" : "") + ">" +
        esc(t("tg.st." + s)) + "</option>").join("") + "</select>";
  }
  function actionsCell(data, type, row) {
    if (type !== "display") return "";
    if (confirming.has(row.id)) {
      return "<span>" + esc(t("tg.del.sure")) + '</span> <button type="button" class="del-yes">' + esc(t("yes")) +
        '</button> <button type="button" class="del-no">' + esc(t("no")) + "</button>";
    }
    const named = (key) => ' aria-label="' + esc(t("of.row", { what: t(key), row: row.id })) + '"';
    return '<button type="button" class="edit"' + named("tg.edit.btn") + ">" + esc(t("tg.edit.btn")) + '</button> ' +
      '<button type="button" class="del"' + named("tg.del") + ">" + esc(t("tg.del")) + "</button>";
  }
  // healthLine is one source's health in words, and whether it fails:
  // "3 failures in a row, last: <error>" or "OK 2 min ago".
  function healthLine(h) {
    if (h.failures_in_a_row > 0) {
      const key = h.failures_in_a_row === 1 ? "tg.h.fail1" : "tg.h.failn";
      return { bad: true, text: t(key, { n: h.failures_in_a_row, error: h.last_error || "" }) };
    }
    if (h.last_success) return { bad: false, text: t("tg.h.ok", { ago: ui.ago(h.last_success) }) };
    return null;
  }
  // healthCell shows a target's health: a dot (green, red, grey) and the
  // deliveries' line, then its probe's when it has one.
  function healthCell(data, type, row) {
    const h = data || {};
    const main = healthLine(h);
    if (type !== "display") return main ? main.text : "";
    const dot = (cls) => '<span class="dot ' + cls + '" aria-hidden="true"></span>';
    const when = main && (main.bad ? h.last_failure : h.last_success);
    let html = main
      ? '<span class="health" title="' + esc(when || "") + '">' + dot(main.bad ? "bad" : "ok") + esc(main.text) + "</span>"
      : '<span class="health">' + dot("none") + esc(t("tg.h.none")) + "</span>";
    if (row.probe) {
      const p = h.probe ? healthLine(h.probe) : null;
      html += '<span class="health probe">' + dot(p ? (p.bad ? "bad" : "ok") : "none") +
        esc(p ? t("tg.h.probe", { what: p.text }) : t("tg.h.probe.none")) + "</span>";
    }
    return html;
  }
  const text = (data, type) => type === "display" ? esc(data) : (data == null ? "" : data);

  // ---- start -------------------------------------------------------------
  function start() {
    ui.setup();
    // Targets are an admin's: any other role reads them.
    const locked = ui.lockPage("admin", { disable: "select.tg-state",
      hide: "#target-form, button.edit, button.del, button.del-yes, button.del-no" });
    const paging = ui.cursorPaging(async (after, limit) => {
      const q = new URLSearchParams({ limit: String(limit) });
      if (after) q.set("after", after);
      const r = await ui.getJSON("/api/v1/targets?" + q);
      return { ok: r.ok, error: r.body.error, data: r.body.targets || [], next: r.body.next_after };
    });
    table = new DataTable("#targets", {
      serverSide: true, processing: false, ajax: paging.ajax, rowId: "id",
      searching: false, ordering: false, info: false, pagingType: "simple",
      pageLength: 25, lengthMenu: [10, 25, 50, 100],
      columns: [
        { data: "id", title: t("tg.id"), render: text },
        { data: "name", title: t("tg.name"), defaultContent: "", render: text },
        { data: "kind", title: t("tg.kind"), render: text },
        { data: "state", title: t("tg.state"), render: stateCell },
        { data: "feedback_timeout", title: t("tg.feedback_timeout"), defaultContent: "0", render: (d, type) => text(d || 0, type) },
        { data: "health", title: t("tg.health"), defaultContent: "", render: healthCell },
        { data: "version", title: t("tg.version"), render: text },
        { data: null, title: "", defaultContent: "", render: actionsCell },
      ],
      language: ui.dtLanguage(),
      // Start-up ends with the first page shown (in Chinese, after the
      // language file).
      initComplete: () => { ui.dtDone(); locked.finally(() => { document.body.dataset.ready = "1"; }); },
    });
    const tbody = document.querySelector("#targets tbody");
    tbody.addEventListener("click", (e) => {
      const el = e.target;
      if (el.matches("button.edit")) { fill(rowOf(el).data()); form.scrollIntoView(); return; }
      if (el.matches("button.del")) { confirming.add(rowOf(el).data().id); rowOf(el).invalidate("data"); return; }
      if (el.matches("button.del-yes, button.del-no")) answerDelete(el, el.matches(".del-yes"));
    });
    tbody.addEventListener("change", (e) => { if (e.target.matches("select.tg-state")) setState(e.target); });
    form.addEventListener("submit", save);
    form.addEventListener("input", preview);
    field("kind").addEventListener("change", showKind);
    document.getElementById("target-cancel").addEventListener("click", () => fill(null));
    fill(null);
    window.cronsheet = { table: table, fill: fill };
  }
  start();
})();
