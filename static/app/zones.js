// Times on the table page: a row's instants in the row's zone, named,
// never guessed, and how far they are from now.
import { esc, exact, relative as relativeIn } from "../lib/core.js";
import { lang, t } from "./i18n.js";
import { st } from "./state.js";

// relative is how far the instant iso is from now, in the page's language.
function relative(iso) { return relativeIn(t, iso); }

// refreshTimes rewrites every relative time on the page.
export function refreshTimes() {
  for (const el of document.querySelectorAll(".rel[data-at]")) el.textContent = relative(el.dataset.at);
}
// A row's times are shown in the row's zone, named, never guessed: the
// zone its schedule names ("… tz Asia/Shanghai"), else its zone field,
// else the scenario's. The viewer's own time is written beside them
// when it reads differently. A time not of today is shown with its date.
export const viewerZone = (() => {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return ""; }
})();
// validZone tells whether z names a zone the browser knows.
export function validZone(z) {
  if (!z) return false;
  try { new Intl.DateTimeFormat("en", { timeZone: z }); return true; } catch (e) { return false; }
}
// zoneOfText is the zone a schedule names ("… tz Asia/Shanghai"), or "".
export function zoneOfText(text) {
  const m = /\btz\s+(\S+)\s*$/i.exec(String(text || ""));
  return m && validZone(m[1]) ? m[1] : "";
}
// rowZone is the zone a row's schedule is read in when it names none.
export function rowZone(row) {
  const z = st.tzField && row.fields ? String(row.fields[st.tzField] || "").trim() : "";
  return validZone(z) ? z : st.scenarioZone;
}
// zoneOf is the zone row's times are shown in.
export function zoneOf(row) {
  const when = st.cols && st.cols.find((c) => c.type === "schedule");
  return (when && row.fields && zoneOfText(row.fields[when.field])) || rowZone(row);
}
// inZone is an instant as a wall time of zone with the zone's short
// name: "14:05 UTC" on the zone's today, "2026-12-01 14:05 GMT+8" else.
export function inZone(iso, zone) {
  const at = new Date(iso);
  const fmt = (d) => {
    const p = {};
    for (const x of new Intl.DateTimeFormat(lang === "zh" ? "zh-CN" : "en-GB", {
      timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short",
    }).formatToParts(d)) p[x.type] = x.value;
    return p;
  };
  const p = fmt(at), today = fmt(new Date());
  const day = p.year + "-" + p.month + "-" + p.day;
  const time = p.hour + ":" + p.minute + " " + p.timeZoneName;
  return day === today.year + "-" + today.month + "-" + today.day ? time : day + " " + time;
}
// timeCell is a row's instant: in the row's zone, the viewer's time
// beside it when that reads differently, and how far it is from now.
export function timeCell(iso, row) {
  const zone = zoneOf(row);
  const shown = inZone(iso, zone);
  let html = '<time datetime="' + esc(iso) + '" data-zone="' + esc(zone) + '" title="' + esc(exact(iso) + " · " + zone) + '">' + esc(shown) + "</time>";
  if (viewerZone && viewerZone !== zone) {
    const local = inZone(iso, viewerZone);
    if (local !== shown) html += ' <span class="tz-local" title="' + esc(viewerZone) + '">' + esc(t("tz.local", { t: local })) + "</span>";
  }
  return html + ' <span class="rel" data-at="' + esc(iso) + '">' + esc(relative(iso)) + "</span>";
}
