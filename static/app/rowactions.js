// A row's own actions on the table page: its switch, its delete, its
// task's state; and the page's CSV export and import.
import { getJSON, notice } from "../lib/core.js";
import { cellError, colOf, rowOf, taskIDOfRow, withTask } from "./cells.js";
import { api } from "./config.js";
import { t } from "./i18n.js";
import { settle } from "./polling.js";
import { showBulk, unselect } from "./selection.js";
import { busy, confirming, st } from "./state.js";

// toggleActive saves a row's switch (input); refused, it flips back.
export async function toggleActive(input) {
  const td = input.closest("td");
  const row = rowOf(td).data();
  const col = colOf(td);
  const patch = {};
  patch[col.field] = input.checked ? 1 : 0;
  busy.add(row.id);
  const r = await getJSON(api + "/rows/" + encodeURIComponent(row.id), {
    method: "PATCH",
    headers: { "Content-Type": "application/json", "If-Match": '"' + row.version + '"' },
    body: JSON.stringify(patch),
  });
  busy.delete(row.id);
  if (!r.ok) { input.checked = !input.checked; cellError(td, r.body.error); return; }
  rowOf(td).data(withTask(r.body, row));
}

// Deleting asks first: the row's action cell shows Yes/No (rendered from
// confirming, so a refresh of the row keeps the question on screen).
export function askDelete(btn) {
  const row = rowOf(btn.closest("td")).data();
  confirming.add(row.id);
  rowOf(btn.closest("td")).invalidate("data");
}
// answerDelete takes the answer to a row's delete question: yes deletes.
export function answerDelete(btn, yes) {
  const td = btn.closest("td");
  const row = rowOf(td).data();
  if (!yes) {
    confirming.delete(row.id);
    rowOf(td).invalidate("data");
    settle();
    return;
  }
  btn.disabled = true;
  getJSON(api + "/rows/" + encodeURIComponent(row.id), { method: "DELETE" }).then((r) => {
    confirming.delete(row.id);
    if (r.ok || r.status === 404) { unselect(row.id); showBulk(); }
    if (!r.ok && r.status !== 404) { rowOf(td).invalidate("data"); cellError(td, r.body.error); settle(); return; }
    st.pendingDraw = null; // the reload below supersedes it
    notice(t("deleted", { id: row.id }));
    st.table.ajax.reload(null, false);
  });
}

// exportURL is the CSV backup of the rows the current view finds (its
// search and order): every field of each row, whatever columns it shows.
export function exportURL() {
  const q = new URLSearchParams(st.lastQuery);
  q.delete("start"); q.delete("length"); q.delete("draw");
  return api + "/table.csv?" + q;
}

// setTaskState saves the state chosen (sel) of a row's task.
export async function setTaskState(sel) {
  const td = sel.closest("td");
  const row = rowOf(td).data();
  const id = taskIDOfRow(row);
  const was = row.task && row.task.state;
  sel.disabled = true;
  busy.add(row.id);
  const r = await getJSON("/api/v1/tasks/" + encodeURIComponent(id) + "/state", {
    method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ state: sel.value }),
  });
  busy.delete(row.id);
  sel.disabled = false;
  if (!r.ok) { sel.value = was || ""; cellError(td, r.body.error); return; }
  const cur = rowOf(td).data();
  if (cur.task) cur.task = Object.assign({}, cur.task, { state: r.body.state });
  notice(t("state.ok", { id: id, state: t("state." + r.body.state) }));
  rowOf(td).invalidate("data");
}

// importCSV sends file to the import endpoint; refused, each line's
// error is listed.
export async function importCSV(file) {
  const list = document.getElementById("import-errors");
  list.replaceChildren();
  list.hidden = true;
  const r = await getJSON(api + "/import", { method: "POST", headers: { "Content-Type": "text/csv" }, body: file });
  if (r.ok) {
    notice(t("imported", { n: r.body.imported }));
    st.table.ajax.reload(null, false);
    return;
  }
  notice(r.body.error, true);
  for (const e of r.body.lines || []) {
    const li = document.createElement("li");
    li.textContent = t("import.line", { line: e.line }) + (e.field ? " (" + e.field + ")" : "") + ": " + e.error;
    list.appendChild(li);
  }
  list.hidden = list.children.length === 0;
}
