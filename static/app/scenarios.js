// The table page's scenario switcher.
import { params, scenario, scenarioKey } from "./config.js";
import { t, tOr } from "./i18n.js";

// The header's switcher lists the node's scenarios (the columns
// answer's); choosing one loads its table (?scenario=, kept in
// localStorage for the next visit). A node with one scenario shows none.
export function buildScenarios(names) {
  localStorage.setItem(scenarioKey, scenario);
  if (!params.get("scenario") && scenario !== "memos") {
    params.set("scenario", scenario);
    history.replaceState(null, "", "?" + params);
  }
  const sel = document.getElementById("scenario");
  if (names.length < 2) return;
  sel.setAttribute("aria-label", t("scenario"));
  sel.title = t("scenario");
  for (const name of names) {
    const o = document.createElement("option");
    o.value = name;
    o.textContent = tOr("scn." + name, name);
    sel.appendChild(o);
  }
  sel.value = scenario;
  sel.hidden = false;
  sel.addEventListener("change", () => {
    localStorage.setItem(scenarioKey, sel.value);
    params.set("scenario", sel.value);
    location.search = "?" + params;
  });
}
