// Batches of cells on the table page: saving one (POST …/rows/batch),
// showing its refusals, and the page's undo.
import { getJSON, notice } from "../lib/core.js";
import { cellError, withTask } from "./cells.js";
import { api } from "./config.js";
import { t } from "./i18n.js";
import { toCur } from "./layout.js";
import { st } from "./state.js";

// A paste of tab-separated text (from a spreadsheet) fills the range
// that starts at the focused cell, and is saved as one batch (POST
// …/rows/batch): every row valid, all are saved; one refused, none is,
// and each refused cell shows why. Undo (Ctrl+Z, or the Undo button)
// takes back the page's own last edit or paste by saving the old values
// again through the same endpoint, each row on the version its edit
// saved (passed on by the undos since), so an undo never overwrites
// someone else's later edit and the audit trail records it. A refused
// undo (a one-shot time now in the past, a row someone else changed) is
// dropped: the notice says why and that the cells keep their values, and
// those cells show no error — their values are valid, only the old ones
// are not.
// [{rows: [{id, fields: {field: old value or null}, version: the row's version once edited}]}], newest last
const undoStack = [];
const maxUndo = 50;
// remember puts an edit's old values (rows) on the undo stack.
export function remember(rows) {
  undoStack.push({ rows: rows });
  if (undoStack.length > maxUndo) undoStack.shift();
  document.getElementById("undo").disabled = false;
}
// sendBatch POSTs edits ([{id, version, fields}]) and, saved, puts the
// answered rows on the page; it returns the answer.
export async function sendBatch(edits) {
  const r = await getJSON(api + "/rows/batch", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rows: edits }),
  });
  if (r.ok) {
    for (const fresh of r.body.rows) {
      const row = st.table.row("#" + CSS.escape(fresh.id));
      if (row.any()) row.data(withTask(fresh, row.data()));
    }
  }
  return r;
}
// cellOf is the td of row id's field on this page, if shown.
function cellOf(id, field) {
  const row = st.table.row("#" + CSS.escape(id));
  const i = st.cols.findIndex((c) => c.field === field);
  if (!row.any() || i < 0) return null;
  return st.table.cell(row.index(), toCur(i)).node();
}
// showRefusals writes each refused row's reason in its cell: the field's
// when the answer names it, else the row's first pasted cell.
export function showRefusals(body, first) {
  for (const x of body.rows || []) {
    const td = cellOf(x.id, x.field) || cellOf(x.id, first[x.id]);
    if (td) cellError(td, x.error);
  }
  notice(body.error, true);
}
// undoRefused says why an undo of rows could not be saved, and clears
// the errors the cells of those rows show.
function undoRefused(rows, body) {
  for (const x of rows) {
    for (const field of Object.keys(x.fields)) {
      const td = cellOf(x.id, field);
      if (td) cellError(td, "");
    }
  }
  const why = (body.rows || []).map((x) => x.error);
  notice(t("undo.refused", { why: why.length ? why.join("; ") : body.error }), true);
}
// undo takes back the newest edit on the undo stack.
export async function undo() {
  const last = undoStack.pop();
  document.getElementById("undo").disabled = undoStack.length === 0;
  if (!last) { notice(t("undo.none")); return; }
  const edits = last.rows.map((x) => ({ id: x.id, version: x.version, fields: x.fields }));
  const r = await sendBatch(edits);
  if (!r.ok) { undoRefused(last.rows, r.body); return; }
  // The row is now as the newest earlier edit of it left it, at a new
  // version: that edit's undo is based on this one.
  for (const fresh of r.body.rows) {
    const earlier = undoStack.findLast((u) => u.rows.some((x) => x.id === fresh.id));
    if (earlier) for (const x of earlier.rows) if (x.id === fresh.id) x.version = fresh.version;
  }
  notice(t("undo.done", { n: last.rows.reduce((n, x) => n + Object.keys(x.fields).length, 0) }));
}
