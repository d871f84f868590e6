// The table page's form for a new row.
import { getJSON, notice } from "../lib/core.js";
import { titleOfRow } from "./cells.js";
import { api } from "./config.js";
import { preview } from "./editing.js";
import { optionLabel } from "./editors.js";
import { t } from "./i18n.js";
import { toOrig } from "./layout.js";
import { st } from "./state.js";
import { inZone, validZone, viewerZone, zoneOfText } from "./zones.js";

// fieldInput is the form's control for column c: a list of its options
// (the scenario's default chosen), else a text input.
function fieldInput(c) {
  let input;
  if (c.type === "enum") {
    input = document.createElement("select");
    // The scenario's default is chosen first; without one, an empty
    // choice leaves the field out and the row takes the built-in
    // default.
    const def = st.defaults[c.field];
    const opts = (c.options || []).slice();
    if (def == null || !opts.includes(String(def))) opts.unshift("");
    for (const o of opts) {
      const opt = document.createElement("option");
      opt.value = o; opt.textContent = o === "" ? t("add.default") : optionLabel(c, o);
      input.appendChild(opt);
    }
    input.value = def == null || !opts.includes(String(def)) ? "" : String(def);
  } else {
    input = document.createElement("input");
    input.type = "text";
  }
  input.name = c.field;
  input.placeholder = c.title;
  input.setAttribute("aria-label", c.title);
  return input;
}

// addZone adds the new row's zone to the form (box), from the browser
// (else the scenario's), so its times are never read in a zone nobody
// saw.
function addZone(box) {
  const zones = [viewerZone, st.defaults[st.tzField], st.scenarioZone].filter((z, i, all) => validZone(z) && all.indexOf(z) === i);
  const list = document.createElement("datalist");
  list.id = "add-zones";
  for (const z of zones) { const o = document.createElement("option"); o.value = z; list.appendChild(o); }
  const input = document.createElement("input");
  input.type = "text"; input.name = st.tzField; input.className = "add-tz"; input.setAttribute("list", "add-zones");
  input.placeholder = t("add.tz"); input.setAttribute("aria-label", t("add.tz")); input.title = t("add.tz");
  input.value = input.dataset.default = zones[0] || "";
  box.append(input, list);
}

// addRow is the form's submit: the fields filled (box's) are sent as a
// new row, its schedule checked first.
async function addRow(e, box) {
  e.preventDefault();
  const err = document.getElementById("add-error");
  err.textContent = "";
  const body = {};
  for (const input of box.querySelectorAll("input, select")) {
    if (input.value.trim() !== "") body[input.name] = input.value;
  }
  const when = st.cols.find((c) => c.type === "schedule");
  if (when && body[when.field]) {
    const p = await preview(body[when.field]);
    if (p.body.error) { err.textContent = p.body.error; return; }
  }
  const r = await getJSON(api + "/rows", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  if (!r.ok) { err.textContent = r.body.error; return; }
  for (const input of box.querySelectorAll("input")) input.value = input.dataset.default || "";
  showAddPreview(box);
  notice(t("added", { id: titleOfRow(r.body) || r.body.id }));
  st.table.ajax.reload(() => { if (!showNewRow(r.body.id)) turnToRow(r.body.id); }, false);
}

// showNewRow scrolls the row id into view and flashes it, when the page
// shown holds it; it reports whether it did.
function showNewRow(id) {
  const tr = [...document.querySelectorAll("#rows tbody tr[id]")].find((x) => x.id === String(id));
  if (!tr) return false;
  tr.scrollIntoView({ block: "center" });
  tr.classList.remove("row-new");
  void tr.offsetWidth; // restart the flash
  tr.classList.add("row-new");
  return true;
}

// fireKey is where a row (as the table answers it) sorts by next fire:
// the rows with one by it, then those without.
function fireKey(row) {
  return row && row.next_fire ? [0, Date.parse(row.next_fire)] : [1, 0];
}

// after reports whether key a sorts after key b (ascending).
function after(a, b) { return a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1]; }

// rowAt asks the table endpoint for the one row at offset i of the page
// shown's query (its search, filter and order).
async function rowAt(i) {
  const q = new URLSearchParams(st.lastQuery);
  q.set("start", i); q.set("length", 1); q.delete("counts");
  const r = await getJSON(api + "/table?" + q);
  return r.ok && r.body.data ? r.body.data[0] : null;
}

// findByNextFire is the offset the row id holds in the table sorted by
// next fire (desc: descending), found by halving with one-row pages
// (about 17 at 100k rows): the new row is the last of the rows sharing
// its next fire (rows tie in insertion order). It is -1 when the row
// cannot be read.
async function findByNextFire(id, desc) {
  const own = await getJSON(api + "/rows/" + encodeURIComponent(id));
  if (!own.ok) return -1;
  const key = fireKey(own.body);
  let lo = 0, hi = st.table.page.info().recordsDisplay;
  // Ascending, the row is just before the first row after it; descending,
  // the ties come in reverse, so it is the first row not after it.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const k = fireKey(await rowAt(mid));
    const past = desc ? !after(k, key) : after(k, key);
    if (past) hi = mid; else lo = mid + 1;
  }
  return desc ? lo : lo - 1;
}

// turnToRow turns the table to the page that holds the new row id when
// it is sorted by next fire (the table's default order), then shows it.
// The row's next fire may be set between the reads (a node arms it), so
// the place found is checked and, if the row is not there, sought again.
async function turnToRow(id, tries = 3) {
  const ord = st.table.order()[0];
  const col = ord ? st.cols[toOrig(ord[0])] : null;
  if (!col || col.data !== "next_fire" || !st.lastQuery) return;
  const at = await findByNextFire(id, ord[1] === "desc");
  const found = at >= 0 && (await rowAt(at) || {}).id === id;
  if (!found) {
    if (tries > 1) setTimeout(() => turnToRow(id, tries - 1), 500);
    return;
  }
  st.table.one("draw", () => showNewRow(id));
  st.table.page(Math.floor(at / st.table.page.info().length)).draw(false);
}

let previewTimer = null;
// showAddPreview shows, under the form (box), what the schedule typed
// reads as and its next fires in the form's zone, or why it is refused,
// once typing pauses.
function showAddPreview(box) {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    const out = document.getElementById("add-preview");
    const when = st.cols.find((c) => c.type === "schedule");
    const input = when && box.querySelector(`[name="${when.field}"]`);
    const text = input ? input.value.trim() : "";
    const tz = st.tzField && box.querySelector(`[name="${st.tzField}"]`);
    const zone = zoneOfText(text) || (tz && validZone(tz.value.trim()) ? tz.value.trim() : "");
    if (!text) { out.textContent = ""; out.classList.remove("cell-error"); return; }
    const r = await preview(text, zone);
    if (input.value.trim() !== text) return;
    out.classList.toggle("cell-error", !!r.body.error);
    out.textContent = r.body.error ? r.body.error : "→ " + r.body.canonical + " · " + t("next") +
      r.body.fires.map((f) => inZone(f, zoneOfText(r.body.canonical) || zone)).join(" · ");
  }, 250);
}

// buildAddForm builds the form: an input per editable column shown by
// default (but the switch and the zone), and the zone when the scenario
// has a zone field; the other fields are set in the table.
export function buildAddForm() {
  const box = document.getElementById("add-fields");
  for (const c of st.cols) {
    if (c.editable && !c.hidden && c.type !== "switch" && c.type !== "zone") box.appendChild(fieldInput(c));
  }
  if (st.tzField) addZone(box);
  box.addEventListener("input", () => showAddPreview(box));
  document.getElementById("add-row").addEventListener("submit", (e) => addRow(e, box));
}
