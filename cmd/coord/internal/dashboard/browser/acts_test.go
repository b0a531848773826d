package browser_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Hostile text for every field an action displays: titles, reasons,
// review notes, log messages. Each would run script, add an element or
// make a link if it reached the page as markup.
const (
	xssScript = `<script>alert('t')</script>`
	xssAttr   = `"><img src=x onerror=alert(2)>`
	xssLink   = `javascript:alert(3)`
	xssSVG    = `'><svg onload=alert(5)>`
)

// TestBrowserActs: a person acts from the page in a real browser
// (headless Chromium). Each action is a click on the button beside its
// task, a reason typed into the dialog where the command needs one, a
// click on the dialog's button; the state changes without a reload (the
// live stream carries it), the log names the dashboard's user, and the
// old holder of a requeued task is fenced. Every text an action shows is
// hostile markup: no dialog ever opens, no element is injected, the text
// shows as text. Screenshots: the page with its buttons, the requeue
// dialog, the page after the requeue, a task's page.
func TestBrowserActs(t *testing.T) {
	if findBrowser() == "" {
		t.Skip("skipped: no chromium (looked for chromium, chromium-browser, google-chrome, chromium-headless-shell on PATH)")
	}
	f := newFixture(t, dashboard.Options{Token: token, User: "pat", DoctorEvery: time.Minute}, true,
		`"review_gate": true, "stale_after": "15m", "sweep_on_claim": false`, "",
		&coord.Task{ID: "2.1", Title: "Parse the config " + xssScript, Priority: coord.High},
		&coord.Task{ID: "2.2", Title: "Retry with backoff " + xssAttr},
		&coord.Task{ID: "2.3", Title: xssLink},
		&coord.Task{ID: "2.4", Title: "Document the flags " + xssSVG},
		&coord.Task{ID: "2.5", Title: "Release notes"},
		&coord.Task{ID: "2.6", Title: "Cache the downloads", Deps: []string{"2.1"}},
	)
	ref := func(a string, task *coord.Task) app.TaskRef {
		return app.TaskRef{Agent: coord.Agent{ID: a}, TaskID: task.ID, Epoch: task.Epoch}
	}
	for _, id := range []string{"bob", "frank"} {
		if _, err := f.s.Register(f.ctx, app.RegisterRequest{Agent: id}); err != nil {
			t.Fatal(err)
		}
	}
	alice := f.claim("alice", "2.1")
	if _, err := f.s.Progress(f.ctx, ref("alice", alice), 30, ""); err != nil {
		t.Fatal(err)
	}
	// erin claimed 2.2 and went silent 25 minutes ago: stale, an alert.
	erin := f.claim("erin", "2.2")
	old := time.Now().Add(-25 * time.Minute)
	if err := os.Chtimes(filepath.Join(f.dir, "heartbeat", "erin.beat"), old, old); err != nil {
		t.Fatal(err)
	}
	carol := f.claim("carol", "2.3")
	if _, err := f.s.Block(f.ctx, ref("carol", carol), "needs the key "+xssAttr); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"2.4", "2.5"} {
		task := f.claim("dora", id)
		if _, err := f.s.Release(f.ctx, ref("dora", task), "done"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.Msg(f.ctx, "dora", "look "+xssScript+xssSVG); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t)
	// Any JavaScript dialog (alert, confirm, prompt) is counted and
	// dismissed: none may open.
	var dialogs atomic.Int32
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opened {
			if err != nil {
				return
			}
			dialogs.Add(1)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	// clean fails the test if any hostile text became markup or ran.
	clean := func(where string) {
		t.Helper()
		if n := dialogs.Load(); n > 0 {
			t.Fatalf("%s: %d JavaScript dialogs opened: a text ran as script", where, n)
		}
		bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(function () {
			var out = [];
			document.querySelectorAll('script').forEach(function (s) {
				if (!/\/static\/(app|acts)\.js$/.test(s.src)) { out.push('script ' + s.outerHTML.slice(0, 80)); }
			});
			document.querySelectorAll('img, svg:not(.plot), iframe, object, embed').forEach(function (e) { out.push(e.tagName + ' ' + e.outerHTML.slice(0, 80)); });
			document.querySelectorAll('*').forEach(function (e) {
				for (var i = 0; i < e.attributes.length; i++) {
					var a = e.attributes[i];
					if (/^on/i.test(a.name)) { out.push('handler ' + a.name + ' on ' + e.tagName); }
					if ((a.name === 'href' || a.name === 'src' || a.name === 'action') && /^\s*javascript:/i.test(a.value)) { out.push('javascript: link on ' + e.tagName); }
				}
			});
			return out;
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) > 0 {
			t.Fatalf("%s: injected markup: %q", where, bad)
		}
	}
	// click clicks the first button matching sel inside the panel: in one
	// step in the page, as the panels are swapped whole on every change.
	click := func(sel string) {
		t.Helper()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function () { var b = document.querySelector('`+sel+`'); if (!b) { return false; } b.click(); return true; })()`))
		if err != nil || !ok {
			t.Fatalf("no button %s on the page (%v)", sel, err)
		}
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#act"))); err != nil {
			t.Fatalf("the dialog of %s did not open: %v", sel, err)
		}
	}
	// fill types into the dialog's fields and clicks its button.
	fill := func(to, reason string) {
		t.Helper()
		var acts []chromedp.Action[chromedp.Void]
		if to != "" {
			acts = append(acts, chromedp.SendKeys(chromedp.CSS("#act-to"), to))
		}
		if reason != "" {
			acts = append(acts, chromedp.SendKeys(chromedp.CSS("#act-reason"), reason))
		}
		acts = append(acts, chromedp.Click(chromedp.CSS("#act-go")), chromedp.WaitNotVisible(chromedp.CSS("#act")))
		if err := chromedp.Do(ctx, acts...); err != nil {
			msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('act-err').textContent`))
			t.Fatalf("the dialog did not close after its button (it says %q): %v", msg, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		p := filepath.Join(artifacts(t), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	noReload := func(what string) {
		t.Helper()
		if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.coordNoReload === 1`)); err != nil || !same {
			t.Fatalf("the page was reloaded to show %s (%v)", what, err)
		}
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.url("/?token="+token)),
		chromedp.Poll[chromedp.Void](`document.getElementById('conn').classList.contains('live') && document.body.dataset.seq !== undefined`, chromedp.WithPollingTimeout(bound)),
		chromedp.Evaluate[chromedp.Void](`window.coordNoReload = 1`),
	); err != nil {
		t.Fatalf("the page did not load and go live: %v", err)
	}
	pollText(t, ctx, "p-alerts", `s.indexOf('agent erin is stale') >= 0 && s.indexOf('requeue 2.2') >= 0`, "erin's stale alert with its buttons")
	pollText(t, ctx, "p-agents", `s.indexOf(`+jsq("Parse the config "+xssScript)+`) >= 0 && s.indexOf('silent 25m of 15m') >= 0`, "the agents' cards, titles as text, silence against stale_after")
	pollText(t, ctx, "p-blocked", `s.indexOf(`+jsq("needs the key "+xssAttr)+`) >= 0`, "the blocked reason as text")
	clean("the page as loaded")
	shot("dashboard-actions.png")

	// Requeue the stale agent's task from its alert.
	click(`#p-alerts button[data-act="requeue"][data-task="2.2"]`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#act-reason"), "erin is silent "+xssAttr)); err != nil {
		t.Fatal(err)
	}
	shot("dashboard-requeue-dialog.png")
	fill("", "")
	pollText(t, ctx, "act-status", `s.indexOf('requeued 2.2 (taken from erin') === 0`, "the requeue's result")
	pollText(t, ctx, "p-log", `s.indexOf(`+jsq("pat requeued task 2.2 from erin (epoch 2): erin is silent "+xssAttr)+`) >= 0`, "the requeue in the log, by pat")
	pollText(t, ctx, "p-alerts", `s.indexOf('agent erin is stale') < 0`, "erin's alert gone")
	noReload("the requeue")
	if got := taskOf(t, f, "2.2"); got.Status != coord.Unclaimed || got.ClaimedBy != "" {
		t.Fatalf("2.2 after the requeue: %+v", got)
	}
	if _, err := f.s.Release(f.ctx, ref("erin", erin), "late"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("erin's release after the requeue: %v, want lost", err)
	}
	clean("after the requeue")
	shot("dashboard-requeued.png")

	// Reassign alice's task to bob from alice's card.
	click(`#p-agents button[data-act="assign"][data-held="1"][data-task="2.1"]`)
	fill("bob", "bob knows the parser "+xssSVG)
	pollText(t, ctx, "p-agents", `s.indexOf('inbox: 1 waiting (2.1)') >= 0`, "2.1 in bob's inbox")
	pollText(t, ctx, "p-log", `s.indexOf('pat assigned task 2.1 to bob: bob knows the parser') >= 0`, "the reassignment in the log, by pat")
	if got := taskOf(t, f, "2.1"); got.AssignedTo != "bob" || got.ClaimedBy != "" {
		t.Fatalf("2.1 after the reassignment: %+v", got)
	}

	// Unblock carol's task from the blocked panel: back in the pool,
	// carol first.
	click(`#p-blocked button[data-act="unblock"][data-task="2.3"]`)
	fill("", "the key is in the vault")
	pollText(t, ctx, "p-blocked", `s.indexOf('Nothing is blocked') >= 0`, "the blocked list empty")
	pollText(t, ctx, "p-log", `s.indexOf('pat unblocked task 2.3: back in the pool, carol first: the key is in the vault') >= 0`, "the unblock in the log, by pat")

	// Reject one review, with hostile notes, and approve the other.
	click(`#p-review button[data-act="reject"][data-task="2.4"]`)
	fill("", "tests missing "+xssScript)
	pollText(t, ctx, "p-log", `s.indexOf(`+jsq("pat rejected task 2.4: tests missing "+xssScript)+`) >= 0`, "the rejection in the log, by pat")
	pollText(t, ctx, "p-agents", `s.indexOf(`+jsq("reviewer said: tests missing "+xssScript)+`) >= 0`, "the review notes on dora's card")
	click(`#p-review button[data-act="approve"][data-task="2.5"]`)
	fill("", "")
	pollText(t, ctx, "p-review", `s.indexOf('Nothing waits for review') >= 0`, "the review backlog empty")
	pollText(t, ctx, "p-log", `s.indexOf('pat approved task 2.5 as its human reviewer') >= 0`, "the approval in the log, by pat")
	noReload("the actions")
	clean("after every action")

	// A refusal shows in the dialog, as text, and changes nothing.
	click(`#p-queue button[data-act="assign"][data-task="2.2"]`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#act-to"), "ghost"), chromedp.Click(chromedp.CSS("#act-go"))); err != nil {
		t.Fatal(err)
	}
	pollText(t, ctx, "act-err", `s.indexOf('agent ghost is not registered') === 0`, "the refusal in the dialog")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#act-cancel")), chromedp.WaitNotVisible(chromedp.CSS("#act"))); err != nil {
		t.Fatal(err)
	}
	if got := taskOf(t, f, "2.2"); got.AssignedTo != "" {
		t.Fatalf("a refused assignment changed 2.2: %+v", got)
	}

	// The task page: opened from its link, acted on (it reloads).
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.url("/task?id=2.4&token="+token)),
		chromedp.WaitVisible(chromedp.CSS(".taskpage")),
	); err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.textContent`))
	if err != nil || !strings.Contains(body, "Document the flags "+xssSVG) || !strings.Contains(body, "reviewer said (1 rejected since the claim): tests missing "+xssScript) || !strings.Contains(body, "pat rejected task 2.4") {
		t.Fatalf("the task page: %v\n%s", err, clip(body))
	}
	clean("the task page")
	shot("dashboard-task.png")
	click(`button[data-act="requeue"][data-task="2.4"]`)
	fill("", "dora left")
	// The page reloads itself: a poll that runs across the reload loses
	// its document and is started again on the new one.
	deadline := time.Now().Add(bound)
	for {
		err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.readyState === 'complete' && document.querySelector('.taskpage .badge').textContent === 'unclaimed'`,
			chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("the task page did not show 2.4 requeued: %v", err)
		}
	}
	clean("the task page after the requeue")
	if log := f.logText(); !strings.Contains(log, "pat ▶ requeued task 2.4 from dora (epoch 4): dora left") {
		t.Fatalf("the log lacks the task page's requeue:\n%s", log)
	}
}

func taskOf(t *testing.T, f *fixture, id string) *coord.Task {
	t.Helper()
	list, err := f.s.Tasks(context.Background(), app.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("no task %s", id)
	return nil
}

// jsq is s as a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
