// The flows page: the list of flows (GET /api/v1/flows), an editor (steps,
// edges per outcome, start step; POST, or PUT with If-Match), the flow
// drawn as an SVG graph (steps as boxes, edges coloured by outcome), and
// its executions (GET /api/v1/flows/{id}/executions) with the chosen one's
// step outcomes highlighted on the graph. Values from the server reach the
// page through esc() or textContent only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t, esc = ui.esc;
  const SVG = "http://www.w3.org/2000/svg";
  const outcomes = ["success", "failure", "timeout"];
  const form = document.getElementById("flow-form");
  let current = null; // the flow as last loaded or saved, else null
  let shown = null; // the execution shown, else null
  let poll = null;

  function field(name) { return form.elements.namedItem(name); }

  // ---- editor ---------------------------------------------------------------
  let targets = []; // the stored targets (GET /api/v1/targets), for the pickers
  function targetOf(id) { return targets.find((x) => x.id === id); }
  function targetLabel(id) {
    const tg = targetOf(id);
    return tg && tg.name && tg.name !== id ? tg.name + " (" + id + ")" : id;
  }
  function chosen(sel) { return [...sel.selectedOptions].map((o) => o.value).filter((v) => v); }
  // setOptions refills a picker with opts ([value, label]) keeping the
  // values in keep chosen; a kept value no longer offered stays, by its id.
  function setOptions(sel, opts, keep) {
    const values = opts.map((o) => o[0]);
    const all = opts.concat(keep.filter((v) => v && !values.includes(v)).map((v) => [v, v]));
    sel.replaceChildren();
    for (const [v, label] of all) {
      const o = document.createElement("option");
      o.value = v;
      o.textContent = label;
      o.title = v;
      // A name or an id is data, not a word of the page.
      if (v) o.setAttribute("translate", "no");
      o.selected = keep.includes(v);
      sel.appendChild(o);
    }
    if (sel.multiple) sel.size = Math.min(Math.max(all.length, 2), 4);
  }
  function stepIDs() {
    return [...document.querySelectorAll("#steps input.s-id")].map((i) => i.value.trim()).filter((v, i, a) => v && a.indexOf(v) === i);
  }
  function picker(cls, keep) {
    const sel = document.createElement("select");
    sel.multiple = true;
    sel.className = cls;
    sel.dataset.keep = JSON.stringify(keep);
    return sel;
  }

  function stepRow(s) {
    const tr = document.createElement("tr");
    const on = s.on || {};
    const params = Object.entries(s.params || {}).map(([k, v]) => k + "=" + v).join("; ");
    const cells = [
      ["id", s.id || ""], ["targets", s.targets || []], null, ["timeout", s.timeout || ""],
      ["on.success", on.success || []], ["on.failure", on.failure || []], ["on.timeout", on.timeout || []], ["params", params],
    ];
    for (const c of cells) {
      const td = document.createElement("td");
      if (c === null) {
        const sel = document.createElement("select");
        sel.className = "s-result";
        for (const m of ["all", "any"]) {
          const o = document.createElement("option");
          o.value = m;
          o.textContent = t("fl.r." + m);
          sel.appendChild(o);
        }
        sel.value = s.result || "all";
        td.appendChild(sel);
      } else if (Array.isArray(c[1])) {
        const sel = picker("s-" + c[0].replace(".", "-"), c[1]);
        td.appendChild(sel);
        if (c[0] === "targets") {
          setOptions(sel, targets.map((x) => [x.id, targetLabel(x.id)]), c[1]);
          const warn = document.createElement("span");
          warn.className = "s-warn";
          warn.hidden = true;
          td.appendChild(warn);
        }
      } else {
        const inp = document.createElement("input");
        inp.className = "s-" + c[0].replace(".", "-");
        inp.value = c[1];
        td.appendChild(inp);
      }
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const rm = document.createElement("button");
    rm.type = "button";
    rm.className = "s-remove";
    rm.textContent = t("fl.step.remove");
    td.appendChild(rm);
    tr.appendChild(td);
    return tr;
  }

  // refreshPickers refills the next-step pickers and the start step with
  // the step ids the table holds now, keeping what each had chosen (a
  // picker not yet filled keeps the ids its step was loaded with).
  function refreshPickers() {
    const ids = stepIDs();
    const opts = ids.map((id) => [id, id]);
    for (const o of outcomes) {
      for (const sel of document.querySelectorAll("#steps select.s-on-" + o)) {
        const keep = sel.dataset.keep ? JSON.parse(sel.dataset.keep) : chosen(sel);
        delete sel.dataset.keep;
        setOptions(sel, opts, keep);
      }
    }
    const start = field("start");
    const keep = start.dataset.keep !== undefined ? start.dataset.keep : start.value;
    delete start.dataset.keep;
    setOptions(start, [["", t("fl.start.none")]].concat(opts), [keep]);
    start.value = keep;
  }

  // stepWarnings says why a step's targets cannot work: an email or SMS
  // target with no recipient in the step's params (the server refuses
  // that at save), a paused or preset target.
  function stepWarnings(tr) {
    const to = /(^|;)\s*to\s*=\s*[^;\s]/.test(tr.querySelector(".s-params").value);
    const out = [];
    for (const id of chosen(tr.querySelector("select.s-targets"))) {
      const tg = targetOf(id);
      if (!tg) continue;
      if ((tg.kind === "email" || tg.kind === "sms") && !to) out.push(t("fl.warn.to", { target: targetLabel(id), kind: t("tg.k." + tg.kind) }));
      if (tg.state === "paused" || tg.state === "preset") out.push(t("fl.warn." + tg.state, { target: targetLabel(id) }));
    }
    return out;
  }
  function warnSteps() {
    for (const tr of document.querySelectorAll("#steps tr")) {
      const w = tr.querySelector(".s-warn");
      const msgs = stepWarnings(tr);
      w.textContent = msgs.map((m) => "⚠ " + m).join(" ");
      w.hidden = !msgs.length;
      tr.classList.toggle("s-warned", msgs.length > 0);
    }
  }

  async function loadTargets() {
    const r = await ui.getJSON("/api/v1/targets?limit=500");
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    targets = r.body.targets || [];
    for (const sel of document.querySelectorAll("#steps select.s-targets")) {
      setOptions(sel, targets.map((x) => [x.id, targetLabel(x.id)]), JSON.parse(sel.dataset.keep || "[]").concat(chosen(sel)));
    }
    warnSteps();
  }

  // labelSteps names every control of the step table after its column and
  // its row (the step's id, else its position), for screen readers: the
  // inputs have no visible label but the column header.
  const stepFields = ["fl.step", "fl.targets", "fl.result", "fl.timeout", "fl.on.success", "fl.on.failure",
    "fl.on.timeout", "fl.params", "fl.step.remove"];
  function labelSteps() {
    [...document.querySelectorAll("#steps tr")].forEach((tr, i) => {
      const idInput = tr.querySelector(".s-id");
      const step = (idInput && idInput.value.trim()) || String(i + 1);
      [...tr.querySelectorAll("input, select, button")].forEach((el, j) => {
        if (stepFields[j]) el.setAttribute("aria-label", t("fl.step.of", { field: t(stepFields[j]), step: step }));
      });
    });
  }

  function readSteps() {
    const steps = [];
    for (const tr of document.querySelectorAll("#steps tr")) {
      const v = (cls) => tr.querySelector("." + cls).value.trim();
      const s = { id: v("s-id"), targets: chosen(tr.querySelector(".s-targets")), result: tr.querySelector(".s-result").value };
      const timeout = v("s-timeout");
      if (timeout) s.timeout = /^\d+$/.test(timeout) ? Number(timeout) : timeout;
      const on = {};
      for (const o of outcomes) {
        const next = chosen(tr.querySelector(".s-on-" + o));
        if (next.length) on[o] = next;
      }
      if (Object.keys(on).length) s.on = on;
      const params = {};
      for (const pair of v("s-params").split(";")) {
        const at = pair.indexOf("=");
        if (at > 0) params[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
      }
      if (Object.keys(params).length) s.params = params;
      steps.push(s);
    }
    return steps;
  }

  function body() {
    const b = { id: field("id").value.trim(), start: field("start").value.trim(), steps: readSteps() };
    const d = field("description").value.trim();
    if (d) b.description = d;
    const m = field("max_depth").value.trim();
    if (m) b.max_depth = /^\d+$/.test(m) ? Number(m) : m;
    // The flow's own schedule (and its zone): a PUT replaces the flow, so
    // a field the form did not carry would be dropped.
    const sc = field("schedule").value.trim();
    if (sc) b.schedule = sc;
    const tz = field("tz").value.trim();
    if (tz) b.tz = tz;
    return b;
  }

  function fill(f) {
    current = f;
    field("id").value = f ? f.id : "";
    field("id").readOnly = !!f;
    field("start").dataset.keep = f ? f.start || "" : "";
    field("description").value = f ? f.description || "" : "";
    field("max_depth").value = f && f.max_depth ? f.max_depth : "";
    field("schedule").value = f ? f.schedule || "" : "";
    field("tz").value = f ? f.tz || "" : "";
    document.getElementById("flow-title").textContent = t(f ? "fl.edit" : "fl.new");
    document.getElementById("flow-version").textContent = f ? f.id + " v" + f.version : "";
    const tbody = document.getElementById("steps");
    tbody.replaceChildren();
    for (const s of f ? f.steps : [{}]) tbody.appendChild(stepRow(s));
    refreshPickers();
    labelSteps();
    warnSteps();
    document.getElementById("flow-trigger").disabled = !f;
    document.getElementById("flow-delete").disabled = !f;
    document.getElementById("flow-error").textContent = "";
    shown = null;
    draw();
    loadExecutions();
  }

  async function save(e) {
    e.preventDefault();
    const b = body();
    const err = document.getElementById("flow-error");
    err.textContent = "";
    const opts = { method: current ? "PUT" : "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(b) };
    if (current) opts.headers["If-Match"] = '"' + current.version + '"';
    const r = await ui.getJSON(current ? "/api/v1/flows/" + encodeURIComponent(current.id) : "/api/v1/flows", opts);
    if (!r.ok) {
      err.textContent = r.body.error;
      return;
    }
    ui.notice(t("fl.saved", { id: r.body.id }));
    await loadList();
    fill(r.body);
  }

  // ---- list -------------------------------------------------------------------
  async function loadList() {
    const r = await ui.getJSON("/api/v1/flows?limit=500");
    const ul = document.getElementById("flow-list");
    ul.replaceChildren();
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    if (!r.body.flows.length) {
      const li = document.createElement("li");
      li.className = "hint";
      li.textContent = t("fl.none");
      ul.appendChild(li);
    }
    for (const f of r.body.flows) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = "#" + encodeURIComponent(f.id);
      a.dataset.id = f.id;
      a.textContent = f.id;
      li.appendChild(a);
      if (f.state) {
        // idle, or running while an execution of it is unfinished.
        const st = document.createElement("span");
        st.className = "f-state f-" + f.state;
        st.textContent = " " + t("fl.state." + f.state);
        li.appendChild(st);
      }
      ul.appendChild(li);
    }
  }

  async function open(id) {
    const r = await ui.getJSON("/api/v1/flows/" + encodeURIComponent(id));
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    fill(r.body);
  }

  // ---- graph ------------------------------------------------------------------
  // layout places steps in columns by their distance from the start (steps
  // not reached from it come last), one row per step in a column.
  function layout(f) {
    const depth = {};
    const queue = f.start ? [f.start] : [];
    if (f.start) depth[f.start] = 0;
    const byID = {};
    for (const s of f.steps) byID[s.id] = s;
    while (queue.length) {
      const id = queue.shift();
      const s = byID[id];
      if (!s) continue;
      for (const o of outcomes) {
        for (const n of (s.on || {})[o] || []) {
          if (depth[n] === undefined) { depth[n] = depth[id] + 1; queue.push(n); }
        }
      }
    }
    let last = Math.max(-1, ...Object.values(depth)) + 1;
    const rows = {}, pos = {};
    for (const s of f.steps) {
      if (!s.id) continue;
      const c = depth[s.id] === undefined ? last : depth[s.id];
      rows[c] = (rows[c] || 0) + 1;
      pos[s.id] = { x: 20 + c * 190, y: 20 + (rows[c] - 1) * 90 };
    }
    return pos;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function draw() {
    const svg = document.getElementById("flow-graph");
    svg.replaceChildren();
    const f = current ? { start: current.start, steps: current.steps } : { start: field("start").value.trim(), steps: readSteps() };
    const pos = layout(f);
    const defs = el("defs", {});
    for (const o of outcomes) {
      const m = el("marker", { id: "arrow-" + o, viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
      m.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "edge-" + o }));
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    const outcomeOf = {};
    if (shown) for (const sr of shown.step_runs) outcomeOf[sr.step] = sr.outcome || "open";
    let w = 200, h = 100;
    f.steps.forEach((s) => {
      const from = pos[s.id];
      if (!from) return;
      outcomes.forEach((o, k) => {
        for (const n of (s.on || {})[o] || []) {
          const to = pos[n];
          if (!to) continue;
          const x1 = from.x + 140, y1 = from.y + 15 + k * 10, x2 = to.x, y2 = to.y + 15 + k * 10;
          const loop = n === s.id;
          const d = loop ? `M ${from.x + 100} ${from.y + 50} C ${from.x + 140} ${from.y + 90}, ${from.x} ${from.y + 90}, ${from.x + 40} ${from.y + 50}`
            : `M ${x1} ${y1} C ${(x1 + x2) / 2} ${y1}, ${(x1 + x2) / 2} ${y2}, ${x2} ${y2}`;
          svg.appendChild(el("path", { d: d, class: "edge edge-" + o, "data-from": s.id, "data-to": n, "data-outcome": o,
            "marker-end": "url(#arrow-" + o + ")" }));
        }
      });
    });
    f.steps.forEach((s) => {
      const p = pos[s.id];
      if (!p) return;
      const g = el("g", { class: "step" + (outcomeOf[s.id] ? " run-" + outcomeOf[s.id] : "") + (s.id === f.start ? " start" : ""), "data-step": s.id });
      g.appendChild(el("rect", { x: p.x, y: p.y, width: 140, height: 50, rx: 6 }));
      g.appendChild(el("text", { x: p.x + 70, y: p.y + 22, "text-anchor": "middle" }, s.id));
      g.appendChild(el("text", { x: p.x + 70, y: p.y + 40, "text-anchor": "middle", class: "sub" },
        outcomeOf[s.id] ? t("fl.x." + outcomeOf[s.id]) : (s.targets || []).join(", ")));
      svg.appendChild(g);
      w = Math.max(w, p.x + 170);
      h = Math.max(h, p.y + 100);
    });
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
  }

  // ---- executions ---------------------------------------------------------------
  async function loadExecutions() {
    const tbody = document.getElementById("execs");
    if (!current) { tbody.replaceChildren(); showExecution(null); return; }
    const r = await ui.getJSON("/api/v1/flows/" + encodeURIComponent(current.id) + "/executions?limit=50");
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    tbody.replaceChildren();
    if (!r.body.executions.length) {
      const tr = document.createElement("tr");
      tr.innerHTML = '<td colspan="5" class="hint">' + esc(t("fl.nox")) + "</td>";
      tbody.appendChild(tr);
    }
    for (const x of r.body.executions) {
      const tr = document.createElement("tr");
      tr.className = "clickable";
      tr.dataset.id = x.id;
      tr.innerHTML = "<td><code>" + esc(x.id) + '</code></td><td class="x-' + esc(x.state) + '">' + esc(t("fl.x." + x.state)) +
        "</td><td>" + ui.timeHTML(x.started_at) + "</td><td>" + esc(x.step_runs.map((s) => s.step).join(" → ")) + "</td><td>" +
        (x.state === "running" ? '<button type="button" class="x-stop">' + esc(t("fl.x.stop")) + "</button>" : "") + "</td>";
      tbody.appendChild(tr);
    }
    if (shown) {
      const again = r.body.executions.find((x) => x.id === shown.id);
      if (again) showExecution(again);
    }
  }

  function showExecution(x) {
    shown = x;
    const box = document.getElementById("exec-detail");
    box.hidden = !x;
    draw();
    clearTimeout(poll);
    if (!x) return;
    document.getElementById("exec-id").textContent = x.id;
    const st = document.getElementById("exec-state");
    st.textContent = t("fl.x." + x.state);
    st.className = "x-" + x.state;
    document.getElementById("exec-reason").textContent = x.reason || "";
    document.getElementById("exec-result").textContent = x.result || "";
    const tbody = document.getElementById("step-runs");
    tbody.replaceChildren();
    for (const sr of x.step_runs) {
      const tr = document.createElement("tr");
      tr.dataset.step = sr.step;
      tr.innerHTML = "<td>" + esc(sr.index) + "</td><td>" + esc(sr.step) + '</td><td class="run-' + esc(sr.outcome || "open") + '">' +
        esc(sr.outcome ? t("fl.x." + sr.outcome) : "…") + "</td><td>" +
        esc((sr.runs || []).map((r) => r.target + ": " + r.state).join(", ")) + "</td><td>" + esc(sr.output || "") + "</td>";
      tbody.appendChild(tr);
    }
    if (x.state === "running") poll = setTimeout(loadExecutions, 1000);
  }

  async function trigger() {
    const r = await ui.getJSON("/api/v1/flows/" + encodeURIComponent(current.id) + "/trigger", { method: "POST",
      headers: { "Content-Type": "application/json" }, body: "{}" });
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    ui.notice(t("fl.triggered", { id: r.body.id }));
    shown = r.body;
    await loadExecutions();
    showExecution(shown);
  }

  async function stop(id) {
    const r = await ui.getJSON("/api/v1/executions/" + encodeURIComponent(id) + "/stop", { method: "POST" });
    if (!r.ok) { ui.notice(r.body.error, true); return; }
    ui.notice(t("fl.stopped", { id: id }));
    await loadExecutions();
  }

  async function remove() {
    if (!current || !window.confirm(t("fl.delete.sure"))) return;
    const id = current.id;
    const r = await ui.getJSON("/api/v1/flows/" + encodeURIComponent(id), { method: "DELETE" });
    if (!r.ok && r.status !== 204) { ui.notice(r.body.error, true); return; }
    ui.notice(t("fl.deleted", { id: id }));
    await loadList();
    fill(null);
  }

  async function init() {
    ui.setup();
    // A viewer reads a flow in the form; the form's buttons change flows.
    const locked = ui.lockPage("editor", { disable: "#flow-form input, #flow-form select, #flow-form textarea",
      hide: "#flow-new, #flow-form button, button.x-stop" });
    fill(null);
    await Promise.all([loadTargets(), loadList()]);
    document.getElementById("flow-list").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-id]");
      if (!a) return;
      e.preventDefault();
      open(a.dataset.id);
    });
    document.getElementById("flow-new").addEventListener("click", () => fill(null));
    document.getElementById("step-add").addEventListener("click", () => {
      document.getElementById("steps").appendChild(stepRow({}));
      refreshPickers();
      labelSteps();
      warnSteps();
    });
    document.getElementById("steps").addEventListener("click", (e) => {
      if (e.target.matches("button.s-remove")) {
        e.target.closest("tr").remove();
        refreshPickers();
        labelSteps();
        if (!current) draw();
      }
    });
    const edited = (e) => {
      if (e.target.matches("input.s-id")) { refreshPickers(); labelSteps(); }
      if (e.target.matches("input.s-params, select.s-targets")) warnSteps();
      if (!current) draw();
    };
    form.addEventListener("input", edited);
    form.addEventListener("change", (e) => { if (e.target.matches("select")) edited(e); });
    form.addEventListener("submit", save);
    document.getElementById("flow-trigger").addEventListener("click", trigger);
    document.getElementById("flow-delete").addEventListener("click", remove);
    document.getElementById("execs").addEventListener("click", async (e) => {
      const tr = e.target.closest("tr[data-id]");
      if (!tr) return;
      if (e.target.matches("button.x-stop")) { stop(tr.dataset.id); return; }
      const r = await ui.getJSON("/api/v1/executions/" + encodeURIComponent(tr.dataset.id));
      if (r.ok) showExecution(r.body);
    });
    if (location.hash.length > 1) await open(decodeURIComponent(location.hash.slice(1)));
    await locked;
    document.body.dataset.ready = "1";
  }

  init();
})();
