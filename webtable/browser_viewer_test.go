package webtable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"cronsheet/config"
)

// editControls are, per page, the controls that change something: for a
// viewer each must be hidden or disabled.
var editControls = map[string]string{
	"/?poll=300": `#add-row, #add-button, #import-csv, #undo, #bulk-activate, #bulk-deactivate, #bulk-delete, ` +
		`#params-run, input.act-switch, select.task-state, button.run-now, button.run-params, button.del`,
	"/targets": `#target-form, #target-save, select.tg-state, button.edit, button.del`,
	"/flows":   `#flow-new, #step-add, #flow-save, #flow-trigger, #flow-delete, #flow-form input, button.s-remove, button.x-stop`,
	"/jobs":    `#job-retry, #job-cancel, #job-block, #job-unblock, #job-backfill, #job-all, .job-sel`,
}

// pageProbe are, per page, elements that must be there for the check to
// mean something (a row's switch, a target's row, a flow's form, a job's
// row).
var pageProbe = map[string]string{
	"/?poll=300": `#rows tbody tr[id] input.act-switch`,
	"/targets":   `#targets tbody tr[id] select.tg-state`,
	"/flows":     `#flow-form input[name="id"]`,
	"/jobs":      `#jobs tbody tr[id] .job-sel`,
}

// enabledEdits is a script listing the controls matching sel that are
// shown and enabled.
func enabledEdits(sel string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(e => e.getClientRects().length > 0 && !e.disabled && `+
		`!e.closest("[hidden]")).map(e => e.id || e.className || e.tagName)`, sel)
}

// TestBrowserViewerReadOnly: with auth required, a viewer's table,
// targets, flows and jobs pages show no enabled control that changes
// anything, say why in one note, send no request the server refuses (no
// 403 anywhere, zero console errors), and a cell neither opens an editor
// nor takes a paste; the Users link is not offered, and the Users page,
// an admin's, answers with a sentence; in English and in Simplified
// Chinese.
func TestBrowserViewerReadOnly(t *testing.T) {
	chromium := needBrowser(t)
	const password = "browser admin password"
	base := startNodeWith(t, func(c *config.Config) {
		c.Auth = config.AuthRequired
		c.AdminPassword = password
	})
	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)

	signInAs(t, ctx, base, "admin signs in", "admin", password, "/targets")
	post := func(path, body string) string {
		return fmt.Sprintf(`fetch(%q, {method: "POST", headers: {"Content-Type": "application/json"}, body: %q}).then(r => r.text().then(b => r.status + " " + b))`, path, body)
	}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/users", `{"name":"vera","role":"viewer","password":"viewer password 123"}`},
		{"/api/v1/scenarios/memos/rows", `{"memo_id":"ro-1","content":"read me","when":"every 1h"}`},
		{"/api/v1/targets", `{"id":"ro-hook","kind":"http","state":"running","http":{"method":"POST","url":"https://hooks.example.com/ro"}}`},
		{"/api/v1/flows", `{"id":"ro-flow","start":"a","steps":[{"id":"a","targets":["ro-hook"]}]}`},
		{"/api/v1/jobs", `{"method":"GET","name":"https://hooks.example.com/later","delay":86400}`},
	} {
		if got := get(t, ctx, "create "+c.path, chromedp.Evaluate[string](post(c.path, c.body), chromedp.EvalAwaitPromise)); !strings.HasPrefix(got, "201 ") {
			t.Fatalf("POST %s: %s, want 201", c.path, got)
		}
	}
	run(t, ctx, "admin signs out", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`fetch("/api/v1/logout", {method: "POST"})`, chromedp.EvalAwaitPromise))
	signInAs(t, ctx, base, "the viewer signs in", "vera", "viewer password 123", "/status")
	console.take() // the sign-in page's own probe of /api/v1/me (401)

	for _, lang := range []struct{ code, accept, note, forbidden string }{
		{"en", "en-US", "You can view; editing needs the {role} role.", "This page needs the admin role; you are signed in as vera (viewer)."},
		{"zh", "zh-CN", "你可以查看；编辑需要{role}角色。", "此页面需要管理员角色；你当前以 vera（查看者）登录。"},
	} {
		run(t, ctx, lang.code+": language", 20*time.Second,
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)))
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders,
			network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang.accept}}); err != nil {
			t.Fatalf("%s: Accept-Language: %v", lang.code, err)
		}
		for _, page := range []string{"/?poll=300", "/targets", "/flows#ro-flow", "/jobs?state=pending"} {
			key := strings.TrimSuffix(strings.TrimSuffix(page, "#ro-flow"), "?state=pending")
			role := map[bool]string{true: "admin", false: "editor"}[key == "/targets"]
			roleWord := map[string]map[string]string{"en": {"admin": "admin", "editor": "editor"}, "zh": {"admin": "管理员", "editor": "编辑者"}}
			note := strings.Replace(lang.note, "{role}", roleWord[lang.code][role], 1)
			step := lang.code + ": " + key
			run(t, ctx, step+": open", 30*time.Second, chromedp.Navigate(base+page),
				chromedp.WaitVisible(css(`body[data-ready="1"]`)),
				waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, pageProbe[key])),
				waitJS(fmt.Sprintf(`(n => n.length === 1 && !n[0].hidden && n[0].textContent === %q)`+
					`(document.querySelectorAll(".readonly-note"))`, note)))
			if left := get(t, ctx, step+": edit controls", chromedp.Evaluate[[]string](enabledEdits(editControls[key]))); len(left) > 0 {
				t.Errorf("%s: enabled edit controls for a viewer: %v", step, left)
			}
		}
		// The table's cells: a click and Enter open no editor, a paste
		// changes nothing.
		run(t, ctx, lang.code+": the table's cells", 30*time.Second, chromedp.Navigate(base+"/?poll=300"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`!!document.querySelector("#rows tbody tr[id]")`),
			// Users is not offered to a viewer.
			waitJS(`document.querySelector('nav a[href="/users"]').hidden`),
			jsClick(`#rows tbody tr[id] td:nth-child(2)`),
			chromedp.Evaluate[chromedp.Void](`(() => { const d = new DataTransfer(); d.setData("text/plain", "pasted");
				document.dispatchEvent(new ClipboardEvent("paste", {clipboardData: d, bubbles: true})); })()`),
		)
		if ed := get(t, ctx, lang.code+": no editor", chromedp.Evaluate[string](
			`(cronsheet.editing() ? "editing " : "") + document.querySelectorAll("#rows td.editable, #rows td.editing").length + " " + `+
				`document.getElementById("notice").textContent`)); ed != "0 " {
			t.Errorf("%s: the viewer's table: %q, want no editor, no editable cell, no notice", lang.code, ed)
		}
		if errs := console.take(); len(errs) > 0 {
			t.Errorf("%s: console or network errors on the viewer's pages:\n%s", lang.code, strings.Join(errs, "\n"))
		}
		// Users is an admin's page: a sentence, not JSON.
		run(t, ctx, lang.code+": the users page", 30*time.Second, chromedp.Navigate(base+"/users"),
			waitJS(fmt.Sprintf(`(document.getElementById("forbidden") || {}).textContent === %q`, lang.forbidden)))
		for _, e := range console.take() {
			if !strings.Contains(e, "/users") || !strings.Contains(e, "403") { // the page's own answer
				t.Errorf("%s: console error on the forbidden page: %s", lang.code, e)
			}
		}
	}
}
