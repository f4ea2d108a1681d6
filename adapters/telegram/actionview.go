package telegram

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
)

// actionHTML writes the approval's action: the tool, the command in a pre
// block, other arguments as JSON, a diff; cut to budget with a line saying
// how much is shown and where the rest is. Never cut silently.
func actionHTML(d *doc, q *domain.Question, o renderOpts, budget int) {
	a := q.Action
	d.text("Tool: ")
	d.tagged("<code>", "</code>", a.Tool)
	type section struct{ lang, label, text string }
	var secs []section
	if cmd, rest, ok := actiontext.SplitCommand(a.Tool, a.Input); ok && a.Diff == "" {
		secs = append(secs, section{"bash", "command", cmd})
		if len(rest) > 0 {
			b, _ := json.Marshal(rest)
			secs = append(secs, section{"json", "other arguments", actiontext.Pretty(b)})
		}
	} else if a.Diff != "" {
		if args := actiontext.WithoutDiffed(a.Tool, a.Input); string(args) != "{}" {
			secs = append(secs, section{"json", "arguments", actiontext.Pretty(args)})
		}
		secs = append(secs, section{"diff", "diff", strings.TrimRight(a.Diff, "\n")})
	} else {
		secs = append(secs, section{"json", "arguments", actiontext.Pretty(a.Input)})
	}
	where := o.page(q)
	if where == "" {
		where = "askbridge questions show " + q.ID
	}
	left := budget - d.n
	for i, s := range secs {
		reserve := 0
		for _, r := range secs[i+1:] {
			reserve += min(units(r.text), 200) + 160
		}
		d.text("\n")
		open, close := `<pre><code class="language-`+s.lang+`">`, "</code></pre>"
		if n := units(s.text); n <= left-reserve {
			d.tagged(open, close, s.text)
			left -= n + 1
			continue
		}
		cut := actiontext.HeadLines
		if s.lang == "diff" {
			cut = actiontext.CutDiff
		}
		shownText, shown, total := cut(s.text, max(left-reserve-160, 0))
		if shown > 0 {
			d.tagged(open, close, shownText)
			d.text("\n")
		}
		d.text(fmt.Sprintf("%s: %d lines, %d shown — full action: %s", s.label, total, shown, where))
		left = budget - d.n
	}
}
