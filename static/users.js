// The users and tokens page (admins): add and delete users, create API
// tokens (the value is shown once) and revoke them. Values reach the page
// through textContent only.
(function () {
  "use strict";
  const ui = window.cronsheetUI;
  const t = ui.t;
  const roles = ["viewer", "editor", "admin"];
  const role = (r) => roles.includes(r) ? t("us.r." + r) : r;

  function cell(tr, text) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    tr.appendChild(td);
    return td;
  }

  // button adds a button to td, named after its row (row) for screen
  // readers.
  function button(td, cls, label, row, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = label;
    b.setAttribute("aria-label", t("of.row", { what: label, row: row }));
    b.addEventListener("click", onClick);
    td.appendChild(b);
  }

  async function send(method, url, body) {
    const opts = { method: method };
    if (body) { opts.headers = { "Content-Type": "application/json" }; opts.body = JSON.stringify(body); }
    const r = await ui.getJSON(url, opts);
    if (!r.ok && r.status !== 204) { ui.notice((r.body.field ? r.body.field + ": " : "") + r.body.error, true); return null; }
    ui.notice("");
    return r;
  }

  async function loadUsers() {
    const r = await send("GET", "/api/v1/users");
    if (!r) return;
    const tb = document.querySelector("#users tbody");
    tb.replaceChildren();
    for (const u of r.body.users) {
      const tr = document.createElement("tr");
      tr.dataset.name = u.name;
      cell(tr, u.name); cell(tr, role(u.role)); cell(tr, u.disabled ? t("us.disabled") : ""); cell(tr, u.created_at);
      button(cell(tr, ""), "del", t("us.delete"), u.name, async () => {
        if (await send("DELETE", "/api/v1/users/" + encodeURIComponent(u.name))) { loadUsers(); loadTokens(); }
      });
      tb.appendChild(tr);
    }
  }

  async function loadTokens() {
    const r = await send("GET", "/api/v1/tokens");
    if (!r) return;
    const tb = document.querySelector("#tokens tbody");
    tb.replaceChildren();
    for (const k of r.body.tokens) {
      const tr = document.createElement("tr");
      tr.dataset.id = k.id;
      cell(tr, k.id); cell(tr, k.user); cell(tr, k.name); cell(tr, role(k.role)); cell(tr, k.created_at);
      cell(tr, k.expires_at && !k.expires_at.startsWith("0001") ? k.expires_at : t("never"));
      button(cell(tr, ""), "del revoke", t("us.revoke"), k.id, async () => {
        if (await send("DELETE", "/api/v1/tokens/" + encodeURIComponent(k.id))) loadTokens();
      });
      tb.appendChild(tr);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    ui.setup();
    for (const sel of document.querySelectorAll("select.roles")) {
      for (const r of roles) { const o = document.createElement("option"); o.value = r; o.textContent = role(r); sel.appendChild(o); }
    }
    const uf = document.getElementById("user-form");
    uf.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = { name: uf.elements.name.value.trim(), role: uf.elements.role.value };
      if (uf.elements.password.value) body.password = uf.elements.password.value;
      if (await send("POST", "/api/v1/users", body)) { uf.reset(); loadUsers(); }
    });
    const tf = document.getElementById("token-form");
    tf.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = { user: tf.elements.user.value.trim(), name: tf.elements.name.value.trim(),
        role: tf.elements.role.value, expires_in: tf.elements.expires_in.value.trim() };
      const r = await send("POST", "/api/v1/tokens", body);
      if (!r) return;
      document.getElementById("new-token-value").textContent = r.body.token;
      document.getElementById("new-token").hidden = false;
      tf.reset();
      loadTokens();
    });
    Promise.all([loadUsers(), loadTokens()]).finally(() => { document.body.dataset.ready = "1"; });
  });
})();
