// A task's runs on the table page: Run now (with one-off params or
// without) and the drawer that lists the task's runs.
import { getJSON, notice } from "../lib/core.js";
import { showExplain } from "../lib/explain.js";
import { taskIDOfRow, titleOfRow } from "./cells.js";
import { panel } from "./config.js";
import { t, tOr } from "./i18n.js";
import { st } from "./state.js";
import { inZone, zoneOf } from "./zones.js";

// Older runs come with the API's cursor (`next`); a server without run
// queries pages by slot (`before`) instead.
// Its instants are shown in the zone of the row whose runs they are.
export const drawer = { taskID: "", cursor: "", before: "", zone: "" };
// zoneOfTask is the zone of the row whose task is taskID.
function zoneOfTask(taskID) {
  const row = rowOfTask(taskID);
  return row ? zoneOf(row) : st.scenarioZone;
}
// rowOfTask is the table's row of taskID, or undefined.
function rowOfTask(taskID) {
  return st.table && st.table.rows().data().toArray().find((x) => taskIDOfRow(x) === taskID);
}
// nameOfTask is how the page names taskID: its row's title, else the id.
function nameOfTask(taskID) {
  const row = rowOfTask(taskID);
  return (row && titleOfRow(row)) || taskID;
}
// showTask writes taskID's name into el, the id on hover.
function showTask(el, taskID) {
  el.textContent = nameOfTask(taskID);
  el.title = taskID;
}
// runCell appends a cell of v (as text) to tr.
function runCell(tr, v) {
  const td = document.createElement("td");
  td.textContent = v == null ? "" : String(v);
  tr.appendChild(td);
  return td;
}

// runTime appends a cell of the instant iso, in the drawer's zone.
function runTime(tr, iso) {
  const td = runCell(tr, iso ? inZone(iso, drawer.zone) : "");
  if (iso) { td.title = iso; td.className = "run-time"; }
}

// runLine is the drawer's line of run, its target linking to the run.
function runLine(run) {
  const tr = document.createElement("tr");
  tr.className = "run-" + run.state;
  runTime(tr, run.slot); runCell(tr, run.trigger_type); runCell(tr, tOr("rn.s." + run.state, run.state)); runCell(tr, run.attempt);
  runTime(tr, run.fired_at); runTime(tr, run.finished_at); runCell(tr, run.error); runCell(tr, run.output);
  const link = document.createElement("a");
  link.href = "/runs?" + new URLSearchParams({ task_id: run.task_id, trigger_id: run.trigger_id });
  link.textContent = run.target || "→";
  link.className = "run-link";
  const td = document.createElement("td"); td.appendChild(link); tr.appendChild(td);
  const why = document.createElement("button");
  why.type = "button"; why.className = "why"; why.textContent = t("why"); why.title = t("why.hint");
  why.setAttribute("aria-label", t("of.row", { what: t("why"), row: run.trigger_id }));
  why.addEventListener("click", () => showExplain(run.task_id, run.slot));
  const wtd = document.createElement("td"); wtd.appendChild(why); tr.appendChild(wtd);
  return tr;
}

// showRuns opens the drawer on the runs of taskID, or (more) adds the
// older ones.
export async function showRuns(taskID, more) {
  if (!more) {
    Object.assign(drawer, { taskID: taskID, cursor: "", before: "", zone: zoneOfTask(taskID) });
    document.querySelector("#runs tbody").replaceChildren();
  }
  const q = new URLSearchParams({ task_id: drawer.taskID, limit: "20" });
  if (drawer.cursor) q.set("cursor", drawer.cursor);
  else if (drawer.before) q.set("before", drawer.before);
  const r = await getJSON("/api/v1/runs?" + q);
  const box = document.getElementById("drawer");
  panel.open(box, document.getElementById("drawer-close"));
  showTask(document.getElementById("drawer-task"), drawer.taskID);
  document.getElementById("drawer-all").href = "/runs?" + new URLSearchParams({ task_id: drawer.taskID });
  if (!r.ok) { notice(r.body.error, true); return; }
  const tb = document.querySelector("#runs tbody");
  for (const run of r.body.runs) tb.appendChild(runLine(run));
  if (!more && r.body.runs.length === 0) {
    const tr = document.createElement("tr"); runCell(tr, t("runs.none")); tb.appendChild(tr);
  }
  const last = r.body.runs[r.body.runs.length - 1];
  drawer.cursor = r.body.next || "";
  drawer.before = !drawer.cursor && last ? last.slot : "";
  document.getElementById("runs-older").hidden = !drawer.cursor && r.body.runs.length < 20;
}

// The row's task fires once, now, optionally with one-off params; the
// drawer then shows its runs. The answer has one run per target: all of
// them rejected is a 409 with the reasons.
export async function runNow(button, taskID, params) {
  if (button) button.disabled = true;
  const opts = { method: "POST" };
  if (params) {
    opts.headers = { "Content-Type": "application/json" };
    opts.body = JSON.stringify({ params: params });
  }
  const r = await getJSON("/api/v1/tasks/" + encodeURIComponent(taskID) + "/trigger", opts);
  if (button) button.disabled = false;
  if (!r.ok) { notice(r.body.error, true); return r; }
  const runs = r.body.runs || [];
  const refused = runs.filter((x) => x.state === "rejected");
  let msg = t("run.ok", { id: nameOfTask(taskID) });
  if (refused.length) {
    msg += " " + t("run.rejected", { n: refused.length, total: runs.length,
      why: refused.map((x) => x.target + ": " + x.error).join("; ") });
  }
  notice(msg, false);
  showRuns(taskID, false);
  return r;
}

// Run now with params: a small key = value editor, for the task paramsBox
// names.
const paramsBox = { taskID: "" };
// paramLine adds a line to the params editor; it returns its key input.
export function paramLine(key, value) {
  const li = document.createElement("li");
  const k = document.createElement("input");
  k.className = "param-key"; k.placeholder = t("params.key"); k.setAttribute("aria-label", t("params.key")); k.value = key || "";
  const eq = document.createElement("span"); eq.textContent = " = ";
  const v = document.createElement("input");
  v.className = "param-value"; v.placeholder = t("params.value"); v.setAttribute("aria-label", t("params.value")); v.value = value || "";
  const rm = document.createElement("button");
  rm.type = "button"; rm.className = "param-remove"; rm.textContent = "✕"; rm.setAttribute("aria-label", t("params.remove"));
  rm.addEventListener("click", () => li.remove());
  li.append(k, eq, v, rm);
  document.getElementById("params-list").appendChild(li);
  return k;
}
// openParams opens the params editor for taskID.
export function openParams(taskID) {
  paramsBox.taskID = taskID;
  showTask(document.getElementById("params-task"), taskID);
  document.getElementById("params-error").textContent = "";
  document.getElementById("params-list").replaceChildren();
  const first = paramLine("", "");
  panel.open(document.getElementById("params"), first);
}
// readParams collects the editor's lines; a value without a key is an
// error (returned as a string); empty lines are skipped.
function readParams() {
  const out = {};
  let n = 0;
  for (const li of document.querySelectorAll("#params-list li")) {
    n++;
    const k = li.querySelector(".param-key").value.trim();
    const v = li.querySelector(".param-value").value;
    if (!k && !v) continue;
    if (!k) return t("params.nokey", { n: n });
    out[k] = v;
  }
  return out;
}
// runWithParams is the params editor's submit: Run now with its params.
export async function runWithParams(e) {
  e.preventDefault();
  const err = document.getElementById("params-error");
  err.textContent = "";
  const params = readParams();
  if (typeof params === "string") { err.textContent = params; return; }
  const r = await runNow(document.getElementById("params-run"), paramsBox.taskID, params);
  if (!r.ok) { err.textContent = r.body.error; return; }
  panel.close(document.getElementById("params"));
}
