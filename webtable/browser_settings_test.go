package webtable_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"cronsheet/config"
)

// signInAs signs the browser in as name through the sign-in page, landing
// on next.
func signInAs(t *testing.T, ctx context.Context, base, step, name, password, next string) {
	t.Helper()
	run(t, ctx, step, 30*time.Second, chromedp.Navigate(base+"/login?next="+next),
		chromedp.WaitVisible(css(`#login-name`)),
		chromedp.SendKeys(css(`#login-name`), name),
		chromedp.SendKeys(css(`#login-password`), password+kb.Enter))
	waitAcross(t, ctx, step+": back at "+next, fmt.Sprintf(`location.pathname === %q && !!document.getElementById("auth-user")`, next))
}

// TestBrowserSettings: with auth required, an admin changes the live
// settings on the Settings page (the API then holds them), and a viewer
// sees the same values with every control disabled and a note saying
// why, in English and in Simplified Chinese, without a console error.
func TestBrowserSettings(t *testing.T) {
	chromium := needBrowser(t)
	const password = "browser admin password"
	base := startNodeWith(t, func(c *config.Config) {
		c.Auth = config.AuthRequired
		c.AdminPassword = password
	})
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for i, lang := range []struct{ code, saved, readonly, nav string }{
		{"en", "Saved: version", "Only an admin can change the settings", "Settings"},
		{"zh", "已保存：版本", "只有管理员可以修改设置", "设置"},
	} {
		run(t, ctx, lang.code+": language", 20*time.Second, chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)))
		signInAs(t, ctx, base, lang.code+": admin signs in", "admin", password, "/settings")
		viewer := "vera-" + lang.code
		rate := fmt.Sprint(7 + i)
		run(t, ctx, lang.code+": the admin edits the settings", 30*time.Second,
			waitJS(`document.getElementById("version").textContent !== ""`),
			waitJS(fmt.Sprintf(`document.querySelector('a[href="/settings"]').textContent === %q`, lang.nav)),
			chromedp.SetValue(css(`#settings-form input[name="host_rate"]`), rate),
			chromedp.SetValue(css(`#settings-form textarea[name="hosts"]`), "api.example.com 5 2"),
			chromedp.SetValue(css(`#settings-form textarea[name="deny"]`), "10.0.0.0/8"),
			chromedp.SetValue(css(`#settings-form textarea[name="cc_groups"]`), "billing 4"),
			chromedp.Click(css(`#settings-save`)),
			waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.startsWith(%q)`, lang.saved)),
		)
		// The viewer is created and its answer awaited here: a sign-in sent
		// before the creation's answer races the password hash (a loaded CI
		// answered the login 401 while the creation was still hashing).
		created := get(t, ctx, lang.code+": create the viewer", chromedp.Evaluate[int](fmt.Sprintf(`fetch("/api/v1/users", {method: "POST", headers: {"Content-Type": "application/json"},
				body: JSON.stringify({name: %q, role: "viewer", password: "viewer password 123"})}).then(r => r.status)`, viewer),
			chromedp.EvalAwaitPromise))
		if created != 201 {
			t.Fatalf("%s: creating the viewer answered %d, want 201", lang.code, created)
		}
		stored := get(t, ctx, lang.code+": read the stored settings", chromedp.Evaluate[string](
			`fetch("/api/v1/settings").then(r => r.json()).then(s => [s.host_rate, s.hosts["api.example.com"].rate, s.deny.join(","), s.cc_groups.billing, s.updated_by].join("|"))`,
			chromedp.EvalAwaitPromise))
		if want := rate + "|5|10.0.0.0/8|4|admin"; stored != want {
			t.Errorf("%s: stored settings %q, want %q", lang.code, stored, want)
		}
		run(t, ctx, lang.code+": sign out", 20*time.Second,
			chromedp.Evaluate[chromedp.Void](`fetch("/api/v1/logout", {method: "POST"})`, chromedp.EvalAwaitPromise))
		signInAs(t, ctx, base, lang.code+": the viewer signs in", viewer, "viewer password 123", "/settings")
		run(t, ctx, lang.code+": the viewer reads, controls disabled", 30*time.Second,
			waitJS(fmt.Sprintf(`document.querySelector('#settings-form input[name="host_rate"]').value === %q`, rate)),
			waitJS(fmt.Sprintf(`!document.getElementById("readonly").hidden && document.getElementById("readonly").textContent.startsWith(%q)`, lang.readonly)),
			waitJS(`[...document.querySelectorAll("#settings-form input, #settings-form textarea, #settings-form button")].every(e => e.disabled)`),
			waitJS(`document.querySelector('#settings-form textarea[name="cc_groups"]').value === "billing 4"`),
		)
		run(t, ctx, lang.code+": sign out the viewer", 20*time.Second,
			chromedp.Evaluate[chromedp.Void](`fetch("/api/v1/logout", {method: "POST"})`, chromedp.EvalAwaitPromise))
		if errs := console.take(); len(errs) > 0 {
			t.Errorf("%s: console errors:\n%s", lang.code, strings.Join(errs, "\n"))
		}
	}
}
