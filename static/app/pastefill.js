// Paste and fill on the table page: a paste of tab-separated cells from
// the focused cell, and AutoFill's fill down, each saved as one batch
// (undo.js) that Undo takes back.
import { notice } from "../lib/core.js";
import { cancelEdit } from "./editing.js";
import { t } from "./i18n.js";
import { shownCols, toOrig } from "./layout.js";
import { busy, st } from "./state.js";
import { remember, sendBatch, showRefusals } from "./undo.js";

// parseTSV reads the clipboard's text as rows of cells: lines by CR/LF
// (a last empty line dropped), cells by tab, a cell in double quotes
// unquoted ("" is one quote).
function parseTSV(text) {
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => l.split("\t").map((v) => /^".*"$/s.test(v) ? v.slice(1, -1).replace(/""/g, '"') : v));
}
// pasteAt saves the cells of text (tab-separated) into the range that
// starts at the cell td, as one batch; a range that does not fit the
// page's rows or its editable columns is refused whole.
async function pasteAt(td, text) {
  const grid = parseTSV(text);
  const start = st.table.cell(td).index();
  const pageRows = st.table.rows({ page: "current" }).indexes().toArray();
  const at = pageRows.indexOf(start.row);
  if (at + grid.length > pageRows.length) { notice(t("paste.fit", { n: at + grid.length - pageRows.length }), true); return; }
  // The range's columns are the shown ones, in their order on screen.
  const shown = shownCols();
  const from = shown.indexOf(toOrig(start.column));
  const width = Math.max(...grid.map((l) => l.length));
  if (from < 0 || from + width > shown.length) { notice(t("paste.wide"), true); return; }
  const range = shown.slice(from, from + width).map((i) => st.cols[i]);
  for (const c of range) {
    if (!c.editable) { notice(t("paste.col", { col: c.title }), true); return; }
  }
  const edits = [], old = [], first = {};
  grid.forEach((line, i) => {
    const row = st.table.row(pageRows[at + i]).data();
    const fields = {}, was = {};
    line.forEach((v, j) => {
      const c = range[j];
      fields[c.field] = v === "" ? null : v;
      const cur = row.fields ? row.fields[c.field] : undefined;
      was[c.field] = cur === undefined ? null : cur;
    });
    first[row.id] = range[0].field;
    edits.push({ id: row.id, version: row.version, fields: fields });
    old.push({ id: row.id, fields: was });
  });
  applyBatch(edits, old, first, t("paste.done", { n: grid.reduce((n, l) => n + l.length, 0) }));
}
// applyBatch saves edits as one batch; saved, old (the values before)
// is what Undo restores and done is the notice; refused, each row's
// reason is shown in its cell (the field's, else first[id]'s).
async function applyBatch(edits, old, first, done) {
  for (const e of edits) busy.add(e.id);
  const r = await sendBatch(edits);
  for (const e of edits) busy.delete(e.id);
  if (!r.ok) { showRefusals(r.body, first); return; }
  const saved = new Map(r.body.rows.map((x) => [x.id, x.version]));
  remember(old.map((x) => Object.assign({}, x, { version: saved.get(x.id) || 0 })));
  notice(done);
}
// onAutoFill saves what AutoFill's drag handle filled (its "autoFill"
// event; AutoFill itself changes nothing, update: false) as one batch,
// as a paste is: fill down copies the first cell's value into the cells
// dragged over.
export function onAutoFill(e, dt, cells) {
  const edits = [], old = [], first = {};
  let n = 0;
  for (const line of cells) {
    const row = st.table.row(line[0].index.row).data();
    const fields = {}, was = {};
    for (const c of line) {
      const col = st.cols[toOrig(c.index.column)];
      if (!col || !col.editable || col.type === "switch") continue;
      const cur = row.fields ? row.fields[col.field] : undefined;
      const v = c.set == null ? "" : String(c.set);
      if (v === (cur == null ? "" : String(cur))) continue;
      fields[col.field] = v === "" ? null : v;
      was[col.field] = cur === undefined ? null : cur;
      if (!first[row.id]) first[row.id] = col.field;
      n++;
    }
    if (Object.keys(fields).length) {
      edits.push({ id: row.id, version: row.version, fields: fields });
      old.push({ id: row.id, fields: was });
    }
  }
  if (edits.length) applyBatch(edits, old, first, t("fill.done", { n: n }));
}
// onPaste is the document's paste: a range pasted outside a control, or
// into the cell editor, goes into the table from that cell.
export function onPaste(e) {
  if (st.readOnly) return;
  const text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
  if (!text) return;
  let td = null;
  if (st.editing && e.target === st.editing.input) {
    // One value pastes into the editor; a range replaces the edit.
    if (!/[\t\n]/.test(text.replace(/\r?\n$/, ""))) return;
    td = st.editing.td;
    cancelEdit();
  } else if (e.target.closest && e.target.closest("input, select, textarea, [contenteditable]")) {
    return;
  } else {
    const cell = st.table.cell({ focused: true });
    if (!cell.any()) return;
    td = cell.node();
  }
  e.preventDefault();
  pasteAt(td, text);
}
