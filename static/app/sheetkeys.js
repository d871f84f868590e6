// The table's keys beyond Enter and F2 (editing.js): a printable key on
// the focused cell starts its editor with that key, Delete or Backspace
// clears the cell (saved, and undoable), Home and End go to the row's
// first and last cell, Page Up and Page Down turn the page keeping a cell
// of the same column (and the same place on the page) focused.
import { getJSON, notice } from "../lib/core.js";
import { cellError, colOf, rowOf, withTask } from "./cells.js";
import { api } from "./config.js";
import { openEdit } from "./editing.js";
import { t } from "./i18n.js";
import { st } from "./state.js";
import { remember } from "./undo.js";

// textLike is true for an editor the typed key can start: a text input
// or a textarea (a select or a switch has no text to start).
function textLike(input) {
  return input.tagName === "TEXTAREA" || (input.tagName === "INPUT" && ["", "text", "search", "number"].includes(input.type));
}

// onSheetKey is a KeyTable key handler (after onCellKey): a printable key
// or Delete/Backspace on an editable cell.
export function onSheetKey(e, dt, code, cell, orig) {
  if (st.editing || orig.isComposing || code === 229 || orig.ctrlKey || orig.metaKey || orig.altKey) return;
  const td = cell.node();
  const col = colOf(td);
  if (!col || !col.editable || col.type === "switch") return;
  if (orig.key === "Delete" || orig.key === "Backspace") {
    orig.preventDefault();
    clearCell(td, col);
    return;
  }
  if (!orig.key || orig.key.length !== 1 || orig.key === " ") return;
  openEdit(td);
  const ed = st.editing;
  if (!ed || ed.td !== td) return;
  // The key itself is not taken: the browser types it into the editor,
  // which has the focus now, in place of the old value.
  if (textLike(ed.input)) ed.input.value = "";
  else orig.preventDefault();
}

// clearCell saves the cell td's field as empty (PATCH on the row's
// version); Undo puts the old value back. A refusal (a field the row
// needs) shows beside the cell.
async function clearCell(td, col) {
  const row = rowOf(td).data();
  const cur = row.fields ? row.fields[col.field] : undefined;
  if (cur === undefined || cur === null || cur === "") return;
  const patch = {};
  patch[col.field] = null;
  const r = await getJSON(api + "/rows/" + encodeURIComponent(row.id), {
    method: "PATCH",
    headers: { "Content-Type": "application/json", "If-Match": '"' + row.version + '"' },
    body: JSON.stringify(patch),
  });
  if (!r.ok) { cellError(td, r.body.error); return; }
  const was = {};
  was[col.field] = cur;
  rowOf(td).data(withTask(r.body, row));
  remember([{ id: row.id, fields: was, version: r.body.version }]);
  notice(t("cleared"));
}

// navCols are the indexes (on screen) of the columns the keyboard visits.
function navCols() {
  return st.table.columns(".kt:visible").indexes().toArray().sort((a, b) => a - b);
}

// onNavKey takes Home, End, Page Up and Page Down from KeyTable while a
// cell has the keyboard (a capturing listener of the document: KeyTable
// would go to the page's first or last cell, and lose the focus on a
// page turn).
export function onNavKey(e) {
  if (st.editing || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
  if (!["Home", "End", "PageUp", "PageDown"].includes(e.key)) return;
  if (e.target.closest && e.target.closest("input, select, textarea, button, [contenteditable]")) return;
  const cell = st.table.cell({ focused: true });
  if (!cell.any()) return;
  e.preventDefault();
  e.stopPropagation();
  const at = cell.index();
  if (e.key === "Home" || e.key === "End") {
    const cols = navCols();
    if (cols.length) st.table.cell(at.row, e.key === "Home" ? cols[0] : cols[cols.length - 1]).focus();
    return;
  }
  const info = st.table.page.info();
  const rows = st.table.rows({ page: "current" }).indexes().toArray();
  const off = Math.max(rows.indexOf(at.row), 0);
  const next = info.page + (e.key === "PageDown" ? 1 : -1);
  if (next < 0 || next >= info.pages) {
    st.table.cell(e.key === "PageDown" ? rows[rows.length - 1] : rows[0], at.column).focus();
    return;
  }
  // A poll's draw may come first: focus once the new page is drawn.
  const land = () => {
    if (st.table.page.info().page !== next) { st.table.one("draw", land); return; }
    const now = st.table.rows({ page: "current" }).indexes().toArray();
    if (now.length) st.table.cell(now[Math.min(off, now.length - 1)], at.column).focus();
  };
  st.table.one("draw", land);
  st.table.page(next).draw(false);
}
