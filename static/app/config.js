// The table page's settings, from its URL: the scenario shown, its API
// and the poll interval; and how a panel opens.

export const params = new URLSearchParams(location.search);
// The scenario shown: the URL's (?scenario=), else the one chosen last
// (the switcher keeps it in localStorage), else memos.
export const scenarioKey = "cronsheet.scenario";
export const scenario = params.get("scenario") || localStorage.getItem(scenarioKey) || "memos";
export const pollMS = Math.max(250, Number(params.get("poll")) || 2000);
export const api = "/api/v1/scenarios/" + encodeURIComponent(scenario);
// Panels slide over from the right (session.js; a page without it shows
// them in place).
export const panel = window.cronsheetPanel || {
  open: (el, focus) => { el.hidden = false; if (focus) focus.focus(); },
  close: (el) => { el.hidden = true; },
};
