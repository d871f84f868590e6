// The cell editors of the table page, one per column type: a list of
// the options (enum), a number input (number), the zone picker (zone), a
// datetime-local input (datetime), a list of the targets by name
// (targets), key=value lines (params), else a text input. Each reads
// back the value the rows API is sent; the server checks it.
import { getJSON } from "../lib/core.js";
import { t, tOr } from "./i18n.js";
import { ofRow } from "./render.js";
import { st } from "./state.js";
import { validZone, viewerZone } from "./zones.js";

// optionLabel is how an enum column's option reads in the page's
// language: a channel by its word, another option by its role's word.
export function optionLabel(col, o) {
  if (o === "") return "";
  return col.role === "task_type" ? tOr("ch." + o, o) : tOr("opt." + col.role + "." + o, o);
}

// asText is a stored value as the text an input holds.
function asText(v) {
  if (v == null) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// enumEditor is a list of col's options, with the value kept when it is
// not one of them (the server says why it is refused).
function enumEditor(col, cur) {
  const input = document.createElement("select");
  const opts = [""].concat(col.options || []);
  if (cur !== "" && !opts.includes(cur)) opts.push(cur);
  for (const o of opts) {
    const opt = document.createElement("option");
    opt.value = o; opt.textContent = optionLabel(col, o);
    input.appendChild(opt);
  }
  input.value = cur;
  return { input: input, nodes: [input], read: () => input.value };
}

// numberEditor is a number input; what it reads is sent as a number.
function numberEditor(cur) {
  const input = document.createElement("input");
  input.type = "number"; input.min = "0"; input.step = "1"; input.inputMode = "numeric";
  input.value = cur;
  return {
    input: input, nodes: [input],
    read: () => {
      const v = input.value.trim();
      return v !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
    },
  };
}

// zoneEditor is a text input offering the zones the browser knows, the
// viewer's and the scenario's first (the add form's zone picker).
function zoneEditor(cur) {
  const list = document.createElement("datalist");
  list.id = "cell-zones";
  let all = [];
  try { all = Intl.supportedValuesOf("timeZone"); } catch (e) { all = []; }
  const zones = [viewerZone, st.scenarioZone, "UTC"].concat(all).filter((z, i, a) => validZone(z) && a.indexOf(z) === i);
  for (const z of zones) { const o = document.createElement("option"); o.value = z; list.appendChild(o); }
  const input = document.createElement("input");
  input.type = "text"; input.setAttribute("list", list.id); input.placeholder = t("add.tz");
  input.value = cur;
  return { input: input, nodes: [input, list], read: () => input.value.trim() };
}

// datetimeEditor is a datetime-local input for a wall time the row
// holds as "2006-01-02 15:04[:05]"; a time written with its offset
// (RFC 3339) is edited as text, so the offset is not lost.
function datetimeEditor(cur) {
  const wall = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(:\d{2})?)$/.exec(cur);
  const input = document.createElement("input");
  if (cur !== "" && !wall) {
    input.type = "text"; input.value = cur;
    return { input: input, nodes: [input], read: () => input.value.trim() };
  }
  input.type = "datetime-local"; input.step = wall && wall[3] ? "1" : "60";
  input.value = wall ? wall[1] + "T" + wall[2] : "";
  return { input: input, nodes: [input], read: () => input.value.replace("T", " ") };
}

// idsOf are the target ids a targets field holds (comma-separated text,
// or a list).
function idsOf(v) {
  const parts = Array.isArray(v) ? v.map(String) : asText(v).split(/[,，\s]+/);
  return parts.map((s) => s.trim()).filter((s, i, a) => s !== "" && a.indexOf(s) === i);
}

// targetsEditor lists the targets by name (GET /api/v1/targets), those
// the row names chosen; it reads as their ids, comma-separated, in the
// row's order, then the list's.
function targetsEditor(cur) {
  const input = document.createElement("select");
  input.multiple = true; input.size = 4;
  const chosen = idsOf(cur);
  const fill = (targets) => {
    const keep = input.options.length ? [...input.selectedOptions].map((o) => o.value) : chosen;
    const ids = targets.map((x) => x.id);
    const opts = targets.map((x) => ({ id: x.id, label: x.name && x.name !== x.id ? x.name + " (" + x.id + ")" : x.id }))
      .concat(keep.filter((id) => !ids.includes(id)).map((id) => ({ id: id, label: id })));
    input.replaceChildren();
    for (const o of opts) {
      const opt = document.createElement("option");
      opt.value = o.id; opt.textContent = o.label; opt.selected = keep.includes(o.id);
      input.appendChild(opt);
    }
    input.size = Math.min(Math.max(opts.length, 2), 6);
  };
  fill([]);
  getJSON("/api/v1/targets").then((r) => {
    if (r.ok) { fill(r.body.targets || []); input.dataset.loaded = "1"; }
  });
  const hint = document.createElement("span");
  hint.className = "preview"; hint.textContent = t("ed.targets");
  // The ids the row named keep their order; those added follow.
  const read = () => {
    const ids = [...input.selectedOptions].map((o) => o.value);
    return chosen.filter((id) => ids.includes(id)).concat(ids.filter((id) => !chosen.includes(id))).join(", ");
  };
  return { input: input, nodes: [input, hint], read: read };
}

// paramLines are a params value as key=value lines (a JSON object's
// text is kept as it is: the server reads it).
function paramLines(v) {
  if (v && typeof v === "object") return Object.entries(v).map(([k, x]) => k + "=" + x).join("\n");
  const s = asText(v).trim();
  if (s.startsWith("{")) return s;
  return s.split(/[;\n\r]+/).map((p) => p.trim()).filter((p) => p !== "").join("\n");
}

// paramsEditor edits params as key=value lines (Shift+Enter starts a
// new line); it reads as "k=v; k2=v2", which the server accepts.
function paramsEditor(cur) {
  const input = document.createElement("textarea");
  input.rows = 3; input.placeholder = t("ed.params");
  input.value = paramLines(cur);
  return {
    input: input, nodes: [input],
    read: () => {
      const s = input.value.trim();
      if (s.startsWith("{")) return s;
      return s.split(/[;\n\r]+/).map((p) => p.trim()).filter((p) => p !== "").join("; ");
    },
  };
}

// editorOf is the editor of col for row: {input: the control that takes
// the keyboard, nodes: what the cell shows, read: the value to send,
// "" for none}.
export function editorOf(col, row) {
  const raw = row.fields ? row.fields[col.field] : undefined;
  const cur = asText(raw);
  let ed;
  switch (col.type) {
    case "enum": ed = enumEditor(col, cur); break;
    case "number": ed = numberEditor(cur); break;
    case "zone": ed = zoneEditor(cur); break;
    case "datetime": ed = datetimeEditor(cur); break;
    case "targets": ed = targetsEditor(raw); break;
    case "params": ed = paramsEditor(raw); break;
    default: {
      const input = document.createElement("input");
      input.type = "text"; input.value = cur;
      ed = { input: input, nodes: [input], read: () => input.value };
    }
  }
  ed.input.classList.add("cell-input");
  ed.input.setAttribute("aria-label", ofRow(col.title, row));
  return ed;
}
