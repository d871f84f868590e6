// The table page's columns: their order and which are shown, kept per
// scenario; and the floating header's accessibility.
import { scenario } from "./config.js";
import { t } from "./i18n.js";
import { st } from "./state.js";

// Columns can be dragged by their header to another place (ColReorder)
// and shown or hidden (the Columns list); both are kept in localStorage
// per scenario, by the columns' data keys, so a changed column model
// drops a stale order instead of misplacing columns. cols keeps the
// server's order: toOrig and toCur translate a column's index on screen
// (DataTables' current index) to its index in cols and back.
const layoutKey = "cronsheet.columns." + scenario;
// toOrig is the index in cols of the column shown at i.
export function toOrig(i) { return st.table && st.table.colReorder ? st.table.colReorder.transpose(i, "toOriginal") : i; }
// toCur is the index on screen of the column at i in cols.
export function toCur(i) { return st.table && st.table.colReorder ? st.table.colReorder.transpose(i, "fromOriginal") : i; }
// shownCols are the indexes in cols of the data columns shown, in their
// order on screen.
export function shownCols() {
  return st.table.columns(":visible").indexes().toArray().sort((a, b) => a - b).map(toOrig).filter((i) => i < st.cols.length);
}
// loadLayout is the layout kept: {order: DataTables' column order, or
// null when none fits the columns, hidden: the keys of those hidden}.
// A column the layout kept does not know (none kept, or a column new
// since) takes the server's default: the less used ones start hidden.
export function loadLayout() {
  let s = null;
  try { s = JSON.parse(localStorage.getItem(layoutKey) || "null"); } catch (e) { s = null; }
  const known = s && Array.isArray(s.order) ? s.order : [];
  const hidden = (s && Array.isArray(s.hidden) ? s.hidden.filter((k) => st.layoutKeys.includes(k)) : [])
    .concat(defaultHidden().filter((k) => !known.includes(k)));
  const fits = s && Array.isArray(s.order) && s.order.length === st.layoutKeys.length && st.layoutKeys.every((k) => s.order.includes(k));
  return { order: fits ? s.order.map((k) => st.layoutKeys.indexOf(k)) : null, hidden: hidden };
}
// defaultHidden are the keys of the columns hidden until a user shows
// them (the server's hidden flag).
function defaultHidden() { return st.cols.filter((c) => c.hidden).map((c) => c.data); }
// saveLayout keeps the columns' order and those hidden.
export function saveLayout() {
  const order = st.table.colReorder.order().map((i) => st.layoutKeys[i]);
  const hidden = st.cols.filter((c, i) => !st.table.column(toCur(i)).visible()).map((c) => c.data);
  localStorage.setItem(layoutKey, JSON.stringify({ order: order, hidden: hidden }));
}
// buildColumnList builds the Columns list (hidden unticked) and its
// reset.
export function buildColumnList(hidden) {
  const list = document.getElementById("colvis-list");
  list.setAttribute("aria-label", t("cols.list"));
  st.cols.forEach((c, i) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox"; box.checked = !hidden.includes(c.data); box.dataset.col = String(i);
    box.addEventListener("change", () => { st.table.column(toCur(i)).visible(box.checked); saveLayout(); });
    label.append(box, " " + c.title);
    list.appendChild(label);
  });
  document.getElementById("colvis-reset").addEventListener("click", () => {
    st.table.colReorder.reset();
    st.table.columns().visible(true);
    const off = defaultHidden();
    st.cols.forEach((c, i) => { if (off.includes(c.data)) st.table.column(toCur(i)).visible(false); });
    for (const box of list.querySelectorAll("input")) box.checked = !off.includes(st.cols[Number(box.dataset.col)].data);
    localStorage.removeItem(layoutKey);
  });
}

// floatingHeader fixes what FixedHeader leaves to assistive technology
// while its header floats: the floating copy holds the real header (its
// sort buttons and the select-all box), yet it is marked aria-hidden;
// the stand-in left in the table is not. So the floating header is
// exposed and the stand-in is hidden and taken out of the tab order.
export function floatingHeader() {
  const floating = document.querySelector("table.fixedHeader-floating");
  if (!floating) return;
  floating.removeAttribute("aria-hidden");
  const standIn = document.querySelector("#rows > thead");
  if (!standIn) return;
  standIn.setAttribute("aria-hidden", "true");
  for (const el of standIn.querySelectorAll("[tabindex], input, button")) el.setAttribute("tabindex", "-1");
}

// freezeColumns gives app.css the width of the table's first column
// (--freeze-1), where the second frozen column starts.
export function freezeColumns() {
  const first = document.querySelector("#rows > thead > tr > :first-child");
  if (first) document.documentElement.style.setProperty("--freeze-1", first.getBoundingClientRect().width + "px");
}
