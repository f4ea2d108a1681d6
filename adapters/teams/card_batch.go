package teams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// A batch of approvals (the calls of one run asked together, domain.Batch)
// is one card: a heading, a section per call — its question, its action
// as a single approval shows it, and its own Allow / Deny / Deny with
// note… / Edit…, or its outcome once decided — and a last row with Allow
// all N / Deny all N / Deny all with note…. A call's controls are those of
// its own card (same verbs and data, ParseAction), with input ids of its
// own. A batch whose sections do not fit shows one line per call instead,
// says so, and links the batch's page of the web inbox.

// Verbs of a batch card's last row (ParseBatchAction).
const (
	verbAllowAll    = "allow_all"
	verbDenyAll     = "deny_all"
	verbDenyAllNote = "deny_all_note"
	inAllNote       = "all_note"
)

// IsBatchVerb reports whether verb is one of a batch card's Allow all /
// Deny all controls, whose data names a batch (BatchActionID), not a
// question.
func IsBatchVerb(verb string) bool {
	return verb == verbAllowAll || verb == verbDenyAll || verb == verbDenyAllNote
}

// BatchCard renders batch b as one Adaptive Card, within Teams' limits.
func BatchCard(b *domain.Batch, v CardView) (json.RawMessage, error) {
	if b == nil || len(b.Questions) == 0 {
		return nil, fmt.Errorf("a batch card needs a batch with at least one call")
	}
	var out json.RawMessage
	n := len(b.Questions)
	for _, l := range levels {
		var err error
		if out, err = encodeCard(batchCard(b, v, l, 0, n)); err != nil || len(out) <= maxCardBytes {
			return out, err
		}
	}
	// One line per call, shorter until the card fits.
	last := levels[len(levels)-1]
	for _, per := range []int{300, 160, 80, 40} {
		var err error
		if out, err = encodeCard(batchCard(b, v, last, per, n)); err != nil || len(out) <= maxCardBytes {
			return out, err
		}
	}
	// Hundreds of calls: as many lines as fit, then how many more (every
	// one is on the batch's page; Allow all still decides them all).
	for lines := n * maxCardBytes / max(len(out), 1); lines > 0; lines = lines * 9 / 10 {
		var err error
		if out, err = encodeCard(batchCard(b, v, last, 40, lines)); err != nil || len(out) <= maxCardBytes {
			return out, err
		}
	}
	return out, nil
}

// batchCard is b's card at level l, or with compact > 0 the layout of
// one line per call of at most compact characters, for the first lines
// calls.
func batchCard(b *domain.Batch, v CardView, l limits, compact, lines int) el {
	var body []el
	if v.Refused != "" {
		body = append(body, el{"type": "Container", "style": "attention", "items": []el{runs(run(v.Refused, el{"weight": "bolder"}))}})
	}
	body = append(body, batchHeading(b)...)
	if compact > 0 {
		body = append(body, compactCalls(b, v, compact, lines)...)
	} else {
		budget := l.code / max(len(b.Questions), 1)
		for i, q := range b.Questions {
			body = append(body, callSection(q, i, v, limits{context: l.context, question: l.question, code: budget, edit: min(l.edit, budget)}))
		}
	}
	body = append(body, batchBar(b, compact > 0)...)
	card := el{"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"version": cardVersion, "fallbackText": inert(batchFallback(b)), "body": body}
	if v.Viewer != "" && b.Pending > 0 {
		card["refresh"] = el{"action": execute(VerbRefresh, "", el{"b": b.ID}), "userIds": []string{v.Viewer}}
	}
	return card
}

func batchHeading(b *domain.Batch) []el {
	q := b.Questions[0]
	n := len(b.Questions)
	title := fmt.Sprintf("%d approvals needed", n)
	if b.Pending == 0 {
		title = fmt.Sprintf("%d approvals", n)
	}
	agent, _ := clip(oneLine(q.AgentLabel()), 200)
	meta := []el{run(agent, el{"weight": "bolder"})}
	if q.RunID != "" {
		id, _ := clip(q.RunID, 200)
		meta = append(meta, run(" · run "), run(id, el{"fontType": "monospace"}))
	}
	meta = append(meta, run(fmt.Sprintf(" · %d of %d decided", n-b.Pending, n)))
	out := []el{{"type": "TextBlock", "text": title, "size": "large", "weight": "bolder", "wrap": true}, runs(meta...)}
	if exp := earliestDeadline(b); !exp.IsZero() && b.Pending > 0 {
		at := exp.UTC().Format(time.RFC3339)
		out = append(out, el{"type": "TextBlock", "text": "The first expires {{DATE(" + at + ", SHORT)}} at {{TIME(" + at + ")}}",
			"isSubtle": true, "size": "small", "spacing": "none", "wrap": true})
	}
	return out
}

func earliestDeadline(b *domain.Batch) time.Time {
	var t time.Time
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending && (t.IsZero() || q.ExpiresAt.Before(t)) {
			t = q.ExpiresAt
		}
	}
	return t
}

func batchFallback(b *domain.Batch) string {
	var parts []string
	for _, q := range b.Questions {
		parts = append(parts, q.Questions[0].Question)
	}
	s, _ := clip(oneLine(fmt.Sprintf("%s asks for %d approvals: %s", b.Questions[0].AgentLabel(), len(b.Questions), strings.Join(parts, " / "))), 300)
	return s
}

// callSection is call i: its question, its action within l, and its
// controls while pending, else its outcome.
func callSection(q *domain.Question, i int, v CardView, l limits) el {
	r := &cardRender{q: q, v: v, l: l, sfx: "_" + strconv.Itoa(i)}
	it := q.Questions[0]
	items := []el{runs(run(fmt.Sprintf("%d. ", i+1), el{"weight": "bolder"}), run(r.short("question text", oneLine(it.Question), l.question), el{"weight": "bolder"}))}
	if q.Status == domain.StatusPending {
		items = append(items, r.whoMayAnswer()...)
	}
	items = append(items, r.actionBlocks()...)
	if q.Status != domain.StatusPending {
		items = append(items, r.outcome())
	} else if approval.Is(q) {
		items = append(items, r.callControls()...)
	} else {
		// Not an Allow / Deny call: it is answered on its own card.
		items = append(items, runs(run("Answer this call on its own card or in the web inbox.", el{"isSubtle": true})))
	}
	if len(r.cut) > 0 {
		items = append(items, runs(run("Not all shown here: "+strings.Join(dedupe(r.cut), "; ")+".", el{"isSubtle": true})))
	}
	return el{"type": "Container", "separator": true, "spacing": "medium", "items": items}
}

// callControls are a pending call's controls, as its own card has them:
// its options by tone, Deny with note…, and Edit… where allowed.
func (r *cardRender) callControls() []el {
	q := r.q
	it := q.Questions[0]
	tones := approval.Tones(q)
	var row []el
	for j, o := range it.Options {
		b := execute(verbAnswer, label(o.Label, buttonLen), r.data(el{"i": 0, "o": j}))
		b["associatedInputs"] = "None"
		switch tones[j] {
		case approval.Allow:
			b["style"] = "positive"
		case approval.Deny:
			b["style"] = "destructive"
		}
		row = append(row, b)
	}
	if approval.NoteAllowed(q) {
		row = append(row, showCard("Deny with note…",
			r.textInput(0, inNote+r.sfx, "Why are you denying it? The agent reads this note.", true),
			actionSet(styled(execute(verbDenyNote, "Deny with this note", r.data(el{"i": 0})), "destructive"))))
	}
	if q.Action != nil && q.ApprovalsRequired < 2 && domain.EditAllowed(q, r.v.NoEdit) {
		row = append(row, r.editCard())
	}
	return []el{actionSet(row[:min(len(row), maxActions)]...)}
}

// compactCalls is the layout of a batch too big for a section per call: a
// line saying so, with the batch page's link, then one line per call (the
// first limit calls, then how many more).
func compactCalls(b *domain.Batch, v CardView, per, limit int) []el {
	note := fmt.Sprintf("%d calls are more than one Teams card shows with buttons for each. ", len(b.Questions))
	out := []el{}
	if base := strings.TrimRight(v.PublicURL, "/"); base != "" {
		note += "Read and decide each call on the batch's page, or all at once below."
		out = append(out, el{"type": "Container", "style": "warning", "items": []el{runs(run(note))}},
			actionSet(el{"type": "Action.OpenUrl", "title": "Open the batch's page", "url": base + "/batches/" + url.PathEscape(b.ID)}))
	} else {
		note += "Read and decide each call in the web inbox (/batches/" + b.ID + "), or all at once below."
		out = append(out, el{"type": "Container", "style": "warning", "items": []el{runs(run(note))}})
	}
	var lines []el
	for i, q := range b.Questions[:min(limit, len(b.Questions))] {
		what := q.Questions[0].Question
		if q.Action != nil {
			if args, _ := actiontext.Arguments(q.Action); args != "" {
				what = q.Action.Tool + ": " + args
			}
		}
		state := "waiting"
		if q.Status != domain.StatusPending {
			state, _ = clip(outcomeLine(q), 200)
		}
		w, _ := clip(oneLine(what), per)
		if i > 0 {
			lines = append(lines, run("\n"))
		}
		lines = append(lines, run(fmt.Sprintf("%d. ", i+1), el{"weight": "bolder"}), run(w, el{"fontType": "monospace"}), run(" — "+state))
	}
	if more := len(b.Questions) - limit; more > 0 {
		lines = append(lines, run("\n"), run(fmt.Sprintf("…and %d more calls: every one is on the batch's page.", more), el{"italic": true}))
	}
	return append(out, runs(lines...))
}

// batchBar is the row of Allow all N / Deny all N / Deny all with note…,
// while a call is pending. Its data lists the pending calls the card
// shows, or byCount (a card of one line per call, where hundreds of ids
// would not fit) how many calls it shows, the first ones of the batch on
// the card: either way a call that joins the batch later is not decided by
// a click on an older card.
func batchBar(b *domain.Batch, byCount bool) []el {
	if b.Pending == 0 {
		return nil
	}
	var shown []string
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending {
			shown = append(shown, q.ID)
		}
	}
	data := func() el {
		if byCount {
			return el{"b": b.ID, "n": len(b.Questions)}
		}
		return el{"b": b.ID, "qs": shown}
	}
	allow := styled(execute(verbAllowAll, fmt.Sprintf("Allow all %d", b.Pending), data()), "positive")
	allow["associatedInputs"] = "None"
	deny := styled(execute(verbDenyAll, fmt.Sprintf("Deny all %d", b.Pending), data()), "destructive")
	deny["associatedInputs"] = "None"
	note := showCard("Deny all with note…",
		el{"type": "Input.Text", "id": inAllNote, "label": "Why are you denying them? The agent reads this note.",
			"isMultiline": true, "isRequired": true, "maxLength": domain.MaxAnswerLen, "errorMessage": "Write something first, or close this."},
		actionSet(styled(execute(verbDenyAllNote, fmt.Sprintf("Deny all %d with this note", b.Pending), data()), "destructive")))
	return []el{{"type": "Container", "separator": true, "items": []el{actionSet(allow, deny, note)}}}
}

// BatchActionID is the id of the batch a batch control's data names, ""
// when it names none.
func BatchActionID(data json.RawMessage) string {
	var d struct {
		B string `json:"b"`
	}
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	return d.B
}

// ParseBatchAction turns a batch card's Allow all / Deny all (verb +
// data) into the decision of b's calls the card showed. A note is the
// denial's reason, exactly as typed. Its errors are *ActionError.
func ParseBatchAction(b *domain.Batch, verb string, data json.RawMessage) (domain.BatchRespondRequest, error) {
	var d struct {
		B    string   `json:"b"`
		Qs   []string `json:"qs"`
		N    int      `json:"n"`
		Note *string  `json:"all_note"`
	}
	if b == nil || json.Unmarshal(data, &d) != nil || d.B != b.ID {
		return domain.BatchRespondRequest{}, errStale
	}
	if len(d.Qs) == 0 && d.N > 0 {
		// A card of one line per call: the pending ones of the first N.
		for _, q := range b.Questions[:min(d.N, len(b.Questions))] {
			if q.Status == domain.StatusPending {
				d.Qs = append(d.Qs, q.ID)
			}
		}
	}
	if len(d.Qs) == 0 {
		return domain.BatchRespondRequest{}, errStale
	}
	in := map[string]bool{}
	for _, q := range b.Questions {
		in[q.ID] = true
	}
	for _, id := range d.Qs {
		if !in[id] {
			return domain.BatchRespondRequest{}, errStale
		}
	}
	req := domain.BatchRespondRequest{Questions: d.Qs}
	switch verb {
	case verbAllowAll:
		req.Decision = domain.DecideAllow
	case verbDenyAll:
		req.Decision = domain.DecideDeny
	case verbDenyAllNote:
		if d.Note == nil || strings.TrimSpace(*d.Note) == "" {
			return domain.BatchRespondRequest{}, refuse("the note was empty: write why you deny them, or press Deny all")
		}
		req.Decision, req.Reason = domain.DecideDeny, d.Note
	default:
		return domain.BatchRespondRequest{}, errStale
	}
	return req, nil
}
