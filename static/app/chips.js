// The filter chips above the table page's rows.
import { t, tOr } from "./i18n.js";
import { st } from "./state.js";

// Above the table: Errors, Off, Failing, Due within 1 h (one of them at a time)
// and a channel, each with its count; the server filters (filter[state],
// filter[channel]) and counts (counts=1). The counts do not depend on the
// page, the order, the search or the chip pressed, only on the rows, and
// at 100k rows they cost the server far more than a page (a count per
// chip, docs/BENCHMARKS.md): they come with the first page and with the
// polls, not with each draw.
export const chips = { state: "", channel: "", counts: null };
// buildChips puts the chips above the table: the states, then a chip
// per channel.
export function buildChips() {
  const box = document.getElementById("chips");
  box.setAttribute("aria-label", t("chips"));
  const add = (kind, value, label) => {
    const b = document.createElement("button");
    b.type = "button"; b.className = "chip"; b.dataset.kind = kind; b.dataset.value = value; b.dataset.label = label;
    b.setAttribute("aria-pressed", "false");
    b.textContent = label;
    b.addEventListener("click", () => {
      chips[kind] = chips[kind] === value ? "" : value;
      showChips();
      st.table.ajax.reload();
    });
    box.appendChild(b);
  };
  add("state", "error", t("chip.errors"));
  add("state", "off", t("chip.off"));
  add("state", "failing", t("chip.failing"));
  add("state", "due", t("chip.due"));
  const ch = st.cols.find((c) => c.role === "task_type" && c.type === "enum");
  for (const o of (ch && ch.options) || []) add("channel", o, tOr("ch." + o, o));
}
// showChips shows which chips are pressed, with their counts.
export function showChips() {
  const c = chips.counts;
  for (const b of document.querySelectorAll("#chips .chip")) {
    const on = chips[b.dataset.kind] === b.dataset.value;
    b.setAttribute("aria-pressed", on ? "true" : "false");
    b.classList.toggle("on", on);
    let n = null;
    if (c) n = b.dataset.kind === "channel" ? (c.channels || {})[b.dataset.value] : c[{ error: "errors", off: "off", failing: "failing", due: "due" }[b.dataset.value]];
    b.textContent = n == null ? b.dataset.label : t("chip.count", { label: b.dataset.label, n: n });
    if (b.dataset.value === "error" || b.dataset.value === "failing") b.classList.toggle("bad", !!n);
  }
}
// takeCounts keeps the counts a table answer (body) carries, if any.
export function takeCounts(body) {
  if (!body || !body.counts) return;
  chips.counts = body.counts;
  showChips();
}
