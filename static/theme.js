// Shared by every page: the colour theme. Bootstrap reads data-bs-theme on
// <html> ("light" or "dark") and DataTables' stylesheet reads html.dark.
// The theme chosen with the header's toggle is kept in localStorage
// (cronsheet.theme); until one is chosen the page follows the system's
// prefers-color-scheme. Loaded in <head>, so a page paints in its theme.
(function () {
  "use strict";

  const key = "cronsheet.theme";
  const words = {
    en: { dark: "Dark mode", light: "Light mode" },
    zh: { dark: "深色模式", light: "浅色模式" },
  };
  const mq = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  // chosen is the theme kept, or "" when none was chosen.
  function chosen() {
    const v = localStorage.getItem(key);
    return v === "dark" || v === "light" ? v : "";
  }
  // current is the theme the page shows.
  function current() { return chosen() || (mq && mq.matches ? "dark" : "light"); }

  function apply() {
    const theme = current();
    const html = document.documentElement;
    html.setAttribute("data-bs-theme", theme);
    html.classList.toggle("dark", theme === "dark");
    const btn = document.getElementById("theme-toggle");
    if (btn) label(btn, theme);
  }

  // label names the toggle after what it switches to, in the page's
  // language (the table page's language switch keeps cronsheet.lang).
  function label(btn, theme) {
    const lang = (localStorage.getItem("cronsheet.lang") ||
      ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en")) === "zh" ? "zh" : "en";
    const next = theme === "dark" ? "light" : "dark";
    btn.textContent = theme === "dark" ? "☀" : "☾";
    btn.setAttribute("aria-label", words[lang][next]);
    btn.title = words[lang][next];
    btn.setAttribute("aria-pressed", theme === "dark" ? "true" : "false");
  }

  // addToggle puts the toggle in the page's header, before the language
  // switch when there is one.
  function addToggle() {
    const header = document.querySelector("header");
    if (!header || document.getElementById("theme-toggle")) return;
    const btn = document.createElement("button");
    btn.type = "button";
    btn.id = "theme-toggle";
    btn.className = "btn btn-sm btn-outline-secondary";
    btn.addEventListener("click", () => {
      localStorage.setItem(key, current() === "dark" ? "light" : "dark");
      apply();
    });
    const lang = document.getElementById("lang");
    if (lang && lang.parentElement === header) header.insertBefore(btn, lang);
    else header.appendChild(btn);
    label(btn, current());
  }

  apply();
  if (mq) mq.addEventListener("change", apply);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", addToggle);
  else addToggle();
})();
