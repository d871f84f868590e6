// Lookups on the table page: the row, column and task of a cell, a cell's
// error, and a row the rows API answered.
import { toOrig } from "./layout.js";
import { st } from "./state.js";

// rowOf is the DataTables row of the cell td.
export function rowOf(td) { return st.table.row(td.closest("tr")); }
// taskIDOf is the task id of the row holding el: its id field, else its id.
export function taskIDOf(el) { return taskIDOfRow(rowOf(el.closest("td")).data()); }
// taskIDOfRow is the task id of row.
export function taskIDOfRow(row) {
  if (row.task && row.task.task_id) return row.task.task_id;
  const idField = st.cols.find((c) => c.type === "id");
  return String((idField && row.fields && row.fields[idField.field]) || row.id);
}
// titleOfRow is how people name row: its title field (the column of role
// title), "" when the scenario maps none or the row has no title.
export function titleOfRow(row) {
  const c = st.cols.find((x) => x.role === "title");
  return String((c && row.fields && row.fields[c.field]) || "");
}
// colOf is the column (of st.cols) of the cell td.
export function colOf(td) { return st.cols[toOrig(st.table.cell(td).index().column)]; }

// cellError writes msg as the error of the cell td ("" clears it).
export function cellError(td, msg) {
  let el = td.querySelector(".cell-error");
  if (!el) { el = document.createElement("span"); el.className = "cell-error"; el.setAttribute("role", "alert"); td.appendChild(el); }
  el.textContent = msg || "";
}

// withTask is a row the rows API answered, with the task the page had
// for it (the rows API does not send it; the next poll refreshes it).
export function withTask(fresh, old) {
  if (old && old.task && !fresh.task) fresh.task = old.task;
  return fresh;
}
