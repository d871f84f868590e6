// What the signed-in principal may change, asked once per page
// (GET /api/v1/me), and a page's read-only mode for a role below the one
// its changes need: the edit controls are disabled or hidden as the page
// draws them, so the page never sends a change the server would refuse,
// and one note says why.

import { getJSON } from "./core.js";

const rank = { viewer: 1, editor: 2, admin: 3 };
let asked = null;

// myRole resolves to the signed-in principal's role: "" when the server
// does not say, and "admin" when it has no sign-in at all (no
// /api/v1/me: a server without the guard enforces no role, so the page
// locks nothing).
export function myRole() {
  if (!asked) asked = getJSON("/api/v1/me").then((r) => r.status === 404 ? "admin" : (r.ok && r.body.role) || "");
  return asked;
}

// allows reports whether role may do what the role need may.
export function allows(role, need) { return (rank[role] || 0) >= (rank[need] || 0); }

// lock disables every element under root matching sel.disable and hides
// every one matching sel.hide. It changes only what differs, so that the
// observer of lockPage does not wake itself.
function lock(root, sel) {
  if (sel.disable) for (const el of root.querySelectorAll(sel.disable)) if (!el.disabled) el.disabled = true;
  if (sel.hide) for (const el of root.querySelectorAll(sel.hide)) if (!el.hidden) el.hidden = true;
}

// showNote writes the note saying why the page is read-only above the
// page's main (#readonly-note), outside any layout main has.
function showNote(t, need) {
  let note = document.getElementById("readonly-note");
  if (!note) {
    note = document.createElement("p");
    note.id = "readonly-note";
    note.className = "readonly-note";
    note.setAttribute("role", "note");
    const main = document.querySelector("main");
    if (main) main.before(note); else document.body.prepend(note);
  }
  note.textContent = t("ro.note", { role: t("ro.role." + need) });
  note.hidden = false;
}

// lockPage puts the page in read-only mode when the principal's role is
// below need ("editor" or "admin"): the elements matching sel.disable
// (selectors) are disabled and those matching sel.hide hidden, now and
// whenever the page draws or re-enables one; <html> gets data-readonly.
// It resolves to true when the page is read-only.
export async function lockPage(t, need, sel) {
  if (allows(await myRole(), need)) return false;
  document.documentElement.dataset.readonly = "1";
  showNote(t, need);
  lock(document, sel);
  new MutationObserver(() => lock(document, sel)).observe(document.body,
    { childList: true, subtree: true, attributes: true, attributeFilter: ["disabled", "hidden"] });
  return true;
}
