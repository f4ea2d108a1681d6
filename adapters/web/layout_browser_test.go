package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// layoutFixture asks the shapes the inbox shows: buttons with a
// recommended option, a 3-item card, an open-ended one, an approval, and a
// context with inline code the Claude Code hook writes.
func layoutFixture(e *env) (buttons, items, approvalQ *domain.Question) {
	buttons = e.ask("ops", domain.AskRequest{RunID: "deploy-7f3c", AgentID: "deploy-bot", AgentName: "Deploy bot", Header: "Deploy",
		Question: "Deploy api v2.14.0 to production?", Timeout: dur(12 * time.Minute),
		Context: "Rollback plan: `kubectl rollout undo deploy/api`.\n- command: ```rm -rf build/ && make```",
		Options: []domain.Option{{Label: "Deploy now", Description: "Roll out to 100%", Recommended: true}, {Label: "Hold", Description: "Keep the canary"}}})
	items = e.ask("web", domain.AskRequest{RunID: "migration-2291-long-run-name", AgentID: "schema-agent", AgentName: "Schema agent", Timeout: dur(3 * time.Hour),
		Questions: []domain.Item{
			{Question: "Which tables should the migration backfill now?", Header: "Backfill", MultiSelect: true,
				Options: []domain.Option{{Label: "orders", Recommended: true}, {Label: "invoices"}, {Label: "audit_log"}}},
			{Question: "Which region first?", Header: "Region", Options: []domain.Option{{Label: "eu-west", Recommended: true}, {Label: "us-east"}}},
			{Question: "Anything the on-call should know?", Header: "Notes"}}})
	approvalQ = e.ask("ops", hookApproval("sess-layout"))
	return
}

// TestBrowserLayoutOnAPhone measures the inbox on a 390 px phone: every
// control is at least 44 px tall and wide, the page has room above the
// heading and below the last card, and no metadata line starts with a
// stray separator.
func TestBrowserLayoutOnAPhone(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	layoutFixture(e)
	run(t, ctx, 20*time.Second,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	small := value(t, ctx, chromedp.Evaluate[[]string](`(function () {
		var out = [];
		document.querySelectorAll("main a, main button, main input, main textarea, main summary, header a, header button").forEach(function (el) {
			if (!el.checkVisibility()) return;
			var target = el;
			if (el.type === "radio" || el.type === "checkbox") target = el.closest("label") || el;
			if (el.tagName === "A" && el.closest("p, li, dd")) return; // links inside sentences are exempt
			var r = target.getBoundingClientRect();
			if (r.height < 44 || r.width < 44) out.push((el.getAttribute("name") || el.className || el.tagName) + " " + (el.textContent || el.value || "").trim().slice(0, 20) + " " + Math.round(r.width) + "x" + Math.round(r.height));
		});
		return out;
	})()`))
	if len(small) > 0 {
		t.Errorf("%d controls smaller than 44 px on a phone: %v", len(small), small)
	}
	gap := value(t, ctx, chromedp.Evaluate[[2]float64](`(function () {
		var h = document.querySelector("header.top").getBoundingClientRect().bottom;
		var h1 = document.querySelector("main h1").getBoundingClientRect().top;
		var cards = document.querySelectorAll("#cards article.card");
		var last = cards[cards.length - 1].getBoundingClientRect().bottom + window.scrollY;
		return [h1 - h, document.documentElement.scrollHeight - last];
	})()`))
	if gap[0] < 16 || gap[1] < 16 {
		t.Errorf("no room around the content: %v px below the header, %v px below the last card", gap[0], gap[1])
	}
	stray := value(t, ctx, chromedp.Evaluate[[]string](`(function () {
		var out = [];
		document.querySelectorAll(".card-meta").forEach(function (m) {
			var left = m.getBoundingClientRect().left;
			Array.prototype.forEach.call(m.children, function (c) {
				var dot = getComputedStyle(c, "::before").content.indexOf("·") >= 0;
				if (dot && c.getBoundingClientRect().left - left < 4) out.push(c.textContent.trim());
			});
		});
		return out;
	})()`))
	if len(stray) > 0 {
		t.Errorf("metadata lines start with a stray separator: %v", stray)
	}
}

// TestBrowserCardPresentation: a recommended option does not look chosen;
// a card of several items is not titled with its first item's header;
// inline code (also the hook's ```…```) is code; times are local with UTC
// on hover; the countdown moves every second.
func TestBrowserCardPresentation(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	buttons, items, _ := layoutFixture(e)
	run(t, ctx, 20*time.Second,
		timezone("America/New_York"),
		chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	bg := func(sel string) string {
		return value(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(`+jsString(sel)+`)).backgroundColor`))
	}
	// Buttons: the recommended one is not filled like a pick.
	if rec, plain := bg(card(buttons.ID)+` button[value="o0"]`), bg(card(buttons.ID)+` button[value="o1"]`); rec != plain {
		t.Errorf("the recommended option is filled (%s) unlike the others (%s): it looks chosen", rec, plain)
	}
	// Radio choices: pick the non-recommended one; the two must differ.
	run(t, ctx, 5*time.Second, chromedp.Click(chromedp.CSS(card(items.ID)+` input[name="a1"][value="o1"]`)))
	recommended, chosen := card(items.ID)+` label.choice:has(input[name="a1"][value="o0"])`, card(items.ID)+` label.choice:has(input[name="a1"][value="o1"])`
	if r, c := bg(recommended), bg(chosen); r == c {
		t.Errorf("recommended and selected options look the same (%s)", r)
	}
	if r, p := bg(recommended), bg(card(items.ID)+` label.choice:has(input[name="a0"][value="o1"])`); r != p {
		t.Errorf("the unselected recommended option is tinted (%s vs %s)", r, p)
	}
	title := value(t, ctx, chromedp.Text(chromedp.CSS(card(items.ID)+` .card-title`)))
	if title == "Backfill" {
		t.Errorf("a 3-item card is titled with its first item's header %q", title)
	}
	codes := value(t, ctx, chromedp.Evaluate[[]string](`Array.prototype.map.call(document.querySelectorAll("`+card(buttons.ID)+` .context code"), function (c) { return c.textContent })`))
	ctxText := value(t, ctx, chromedp.Text(chromedp.CSS(card(buttons.ID)+` .context`)))
	if strings.Contains(ctxText, "`") || len(codes) != 2 || codes[1] != "rm -rf build/ && make" {
		t.Errorf("inline code not rendered: %q, code spans %q", ctxText, codes)
	}
	// Times: local (New York) with UTC on hover.
	deadline := value(t, ctx, chromedp.AttributeValue(chromedp.CSS(card(buttons.ID)+` time.deadline`), "title")).Value
	if !strings.Contains(deadline, "UTC") || !strings.Contains(deadline, "EST") && !strings.Contains(deadline, "EDT") && !strings.Contains(deadline, "GMT-5") {
		t.Errorf("deadline hover %q: want local time with UTC", deadline)
	}
	// The countdown moves every second.
	first := value(t, ctx, chromedp.Text(chromedp.CSS(card(buttons.ID)+` time.deadline`)))
	time.Sleep(2200 * time.Millisecond)
	second := value(t, ctx, chromedp.Text(chromedp.CSS(card(buttons.ID)+` time.deadline`)))
	if first == second {
		t.Errorf("the countdown did not move in 2 s: %q", first)
	}
}

// timezone makes the page's local time that of zone.
func timezone(zone string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone})
		return chromedp.Void{}, err
	}
}
