// The sign-in page: posts the name and password as JSON to
// /api/v1/login, which sets the session cookie, then goes to the page the
// user came from (a path on this site only).
(function () {
  "use strict";

  const dict = {
    en: {
      "login.title": "Sign in", "login.name": "Name", "login.password": "Password", "login.button": "Sign in",
      "login.wrong": "Wrong name or password.", "login.slow": "Too many failed sign-ins: try again in {s} s.",
      "login.failed": "Sign-in failed: {error}", "login.doc": "cronsheet · sign in", "lang": "Language",
    },
    zh: {
      "login.title": "登录", "login.name": "用户名", "login.password": "密码", "login.button": "登录",
      "login.wrong": "用户名或密码错误。", "login.slow": "失败次数过多，请 {s} 秒后再试。",
      "login.failed": "登录失败：{error}", "login.doc": "cronsheet · 登录", "lang": "语言",
    },
  };
  const lang = localStorage.getItem("cronsheet.lang") ||
    ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  function t(key, vars) {
    let s = (dict[lang] && dict[lang][key]) || dict.en[key] || key;
    for (const k in vars || {}) s = s.replace("{" + k + "}", vars[k]);
    return s;
  }

  // next is where to go after signing in: a path of this site, never
  // another origin ("//host" or "/\host" would leave it).
  function next() {
    const n = new URLSearchParams(location.search).get("next") || "/";
    return /^\/(?![\/\\])/.test(n) ? n : "/";
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    document.title = t("login.doc");
    const sel = document.getElementById("lang");
    sel.value = lang;
    sel.setAttribute("aria-label", t("lang"));
    sel.addEventListener("change", () => { localStorage.setItem("cronsheet.lang", sel.value); location.reload(); });

    const form = document.getElementById("login");
    const out = document.getElementById("login-error");
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      out.textContent = "";
      const body = JSON.stringify({
        name: document.getElementById("login-name").value,
        password: document.getElementById("login-password").value,
      });
      const res = await fetch("/api/v1/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: body });
      if (res.ok) { location.assign(next()); return; }
      if (res.status === 401) { out.textContent = t("login.wrong"); return; }
      if (res.status === 429) { out.textContent = t("login.slow", { s: res.headers.get("Retry-After") || "?" }); return; }
      let msg = res.status + " " + res.statusText;
      try { msg = (await res.json()).error || msg; } catch (err) { /* not JSON */ }
      out.textContent = t("login.failed", { error: msg });
    });
    document.body.dataset.ready = "1";
  });
})();
