package webtable_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
	"cronsheet/mapping"
)

// emailScenario is the memos scenario with email as its default channel.
func emailScenario(cfg *config.Config) {
	mc := mapping.MemosConfig()
	mc.Defaults["channel"] = "email"
	cfg.Scenarios = []mapping.Config{mc}
}

// TestBrowserAddRowDefaults adds a row through the page's form on a
// scenario whose default channel is email, leaving the channel as the form
// offers it: the form starts from the scenario's default, so the row's
// task mails (its outbox message is of the email channel), not through
// the outbox channel whatever the scenario says.
func TestBrowserAddRowDefaults(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, emailScenario)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)

	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
	)
	if got := get(t, ctx, "read the form's channel", chromedp.Evaluate[string](
		`document.querySelector('#add-fields select[name="channel"]').value`)); got != "email" {
		t.Fatalf("the form's channel starts as %q, want the scenario's default email", got)
	}
	run(t, ctx, "add a row", 20*time.Second,
		chromedp.SendKeys(css(`#add-fields input[name="title"]`), "mail me"),
		chromedp.SendKeys(css(`#add-fields input[name="content"]`), "from the form"),
		chromedp.SendKeys(css(`#add-fields input[name="when"]`), "every 1h"),
		chromedp.SendKeys(css(`#add-fields input[name="to"]`), "ops@example.com"),
		chromedp.Click(css(`#add-button`)),
		waitJS(`cronsheet.table.rows().data().toArray().some(r => r.fields.title === "mail me")`),
	)
	id := get(t, ctx, "read the new row's id", chromedp.Evaluate[string](
		`cronsheet.table.rows().data().toArray().find(r => r.fields.title === "mail me").id`))
	var row struct {
		Fields map[string]any `json:"fields"`
	}
	getDoc(t, base+"/api/v1/scenarios/memos/rows/"+id, &row)
	if ch := row.Fields["channel"]; ch != nil && ch != "email" {
		t.Fatalf("the row was stored with channel %v, want email (or none: the default)", ch)
	}
	waitSynced(t, base, id)
	postJSON(t, base, "/api/v1/tasks/"+id+"/trigger", `{}`, 202)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var outbox struct {
			Messages []struct {
				TaskID  string `json:"task_id"`
				Channel string `json:"channel"`
			} `json:"messages"`
		}
		getDoc(t, base+"/api/v1/outbox", &outbox)
		if len(outbox.Messages) > 0 {
			m := outbox.Messages[0]
			if m.TaskID != id || m.Channel != "email" {
				t.Fatalf("the row's message: task %s, channel %q; want %s by email", m.TaskID, m.Channel, id)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the triggered row left no message within 20s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}

// TestBrowserAddFormPreview types schedules into the add form: the form
// shows what each reads as and its next fires while typing (a Chinese
// phrase included), a typo's error with its guess, in English and in
// Simplified Chinese, without a console error.
func TestBrowserAddFormPreview(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	const when = `#add-fields input[name="when"]`
	clear := chromedp.Evaluate[chromedp.Void](`document.querySelector('` + when + `').value = ""`)
	typeWhen := func(step, text, wantJS string) {
		run(t, ctx, step, 20*time.Second,
			clear,
			chromedp.SendKeys(css(when), text),
			waitJS(wantJS),
		)
	}
	preview := `(document.getElementById("add-preview").textContent || "")`
	isError := `document.getElementById("add-preview").classList.contains("cell-error")`

	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
	)
	typeWhen("a Chinese phrase", "每周一 10点",
		preview+`.startsWith("→ weekly mon 10:00 · next: ") && !`+isError)
	typeWhen("a typo", "weekly mnday 9:00",
		preview+`.includes('did you mean "monday"?') && `+isError)

	run(t, ctx, "switch to Chinese", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "zh")`),
		chromedp.Navigate(base+"/"),
		waitJS(`document.documentElement.lang === "zh-CN"`),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
	)
	typeWhen("a phrase in Chinese", "工作日 9:00",
		preview+`.startsWith("→ weekdays 09:00 · 接下来：") && !`+isError)
	run(t, ctx, "clear the schedule", 10*time.Second,
		clear,
		chromedp.SendKeys(css(when), " "),
		waitJS(preview+` === ""`),
	)
	for _, e := range console.takeButPreviews() {
		t.Errorf("console error: %q", e)
	}
}
