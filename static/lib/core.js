// What every page script shares: the kept script errors, the page's
// language and its translator, HTML escaping, JSON requests with errors in
// the page's language (errors.js), the notice line, times relative to now
// and the language switch. Values from the server reach a page through
// esc() or textContent only.

import { words } from "./words.js";

// captureErrors keeps the page's script errors in window.cronsheetErrors,
// for the browser tests' failure reports.
export function captureErrors() {
  const errors = (window.cronsheetErrors = []);
  window.addEventListener("error", (e) => errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => errors.push(String(e.reason && (e.reason.stack || e.reason))));
}

// lang is the page's language, "en" or "zh": the one chosen with the
// switch (kept in localStorage), else the browser's.
export const lang = localStorage.getItem("cronsheet.lang") ||
  ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");

// translator returns t and tOr over dict ({en: {key: text}, zh: …}) and
// the words every page shares (lib/words.js): t(key, vars) is key's text
// in the page's language, else in English, else key itself, with each
// {name} replaced by vars[name]; tOr(key, fallback) is t(key) when a text
// is known for key, else fallback.
export function translator(dict) {
  const look = (l, key) => {
    const own = dict[l] && dict[l][key];
    return own !== undefined ? own : words[l] && words[l][key];
  };
  function t(key, vars) {
    let s = look(lang, key) || look("en", key);
    if (s === undefined) s = key;
    for (const k in vars || {}) s = s.replace("{" + k + "}", vars[k]);
    return s;
  }
  function tOr(key, fallback) {
    const s = t(key);
    return s === key ? fallback : s;
  }
  return { t, tOr };
}

// esc is v as HTML text.
export function esc(v) {
  return String(v == null ? "" : v).replace(/[&<>"']/g, (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// errorText is an error answer's message in the page's language
// (errors.js).
export function errorText(body) { return window.cronsheetErrorText(lang, body); }

// answerBody reads an answer's JSON body (an unreadable one is {}); a
// refusal's error is put in the page's language, the server's English
// kept as errorEN.
export async function answerBody(res) {
  let body = {};
  try { body = await res.json(); } catch (e) { body = {}; }
  if (!res.ok && !body.error) body.error = res.status + " " + res.statusText;
  if (!res.ok) { body.errorEN = body.error; body.error = errorText(body); }
  return body;
}

// getJSON fetches url and resolves to {ok, status, body}.
export async function getJSON(url, opts) {
  const res = await fetch(url, opts);
  const body = await answerBody(res);
  return { ok: res.ok, status: res.status, body: body };
}

// notice writes msg on the page's notice line (#notice), as an error when
// isError.
export function notice(msg, isError) {
  const el = document.getElementById("notice");
  el.textContent = msg || "";
  el.className = isError ? "cell-error" : "";
}

// span is a duration of ms (either sign) in words, rounded to its unit.
export function span(t, ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return t("s", { n: s });
  if (s < 3600) return t("m", { n: Math.round(s / 60) });
  if (s < 86400) return t("h", { n: Math.round(s / 3600) });
  return t("d", { n: Math.round(s / 86400) });
}

// relative is how far the instant iso is from now: "in 5 min", "2 h ago".
export function relative(t, iso) {
  const ms = Date.parse(iso) - Date.now();
  if (Math.abs(ms) < 1000) return t("now");
  return ms > 0 ? t("in", { d: span(t, ms) }) : t("ago", { d: span(t, ms) });
}

// locale is the page's language as a BCP 47 tag, for dates and times
// written in it (Intl, toLocaleString).
export function locale() { return lang === "zh" ? "zh-CN" : "en-US"; }

// exact is the instant iso in the browser's local time, written in the
// page's language, iso beside it.
export function exact(iso) {
  return new Date(iso).toLocaleString(locale()) + " (" + iso + ")";
}

// setupLanguage translates the page's data-i18n (text) and data-i18n-aria
// (aria-label) elements and wires the language switch (#lang), which
// reloads the page in the language chosen.
export function setupLanguage(t) {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-aria]")) el.setAttribute("aria-label", t(el.dataset.i18nAria));
  const sel = document.getElementById("lang");
  sel.value = lang;
  sel.addEventListener("change", () => { localStorage.setItem("cronsheet.lang", sel.value); location.reload(); });
}

// dtLanguage is DataTables' language option: its own strings come from
// its i18n file (npm datatables.net-plugins, copied by `make static`).
export function dtLanguage() {
  return lang === "zh" ? { url: "/assets/vendor/zh.json" } : {};
}

// dtDone translates what DataTables writes in English whatever its
// language file says (the paging's aria-label); call it from
// initComplete.
export function dtDone(t) {
  for (const nav of document.querySelectorAll('nav[aria-label="pagination"]')) nav.setAttribute("aria-label", t("pagination"));
}
