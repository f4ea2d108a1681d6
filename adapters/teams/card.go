package teams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// A question is posted to Teams as one Adaptive Card (schema 1.5, what
// Teams renders) with Universal Actions: every control is an
// Action.Execute whose verb and data name the question, the item and the
// option, so a click alone finds its question on any replica (ParseAction
// reads it back). The card holds the whole question when it fits Teams'
// limits; otherwise its texts are shortened, the card says what was left
// out and links the question page of the web inbox, and a question that
// cannot fit even then says so (tooBigCard).

// Limits Teams puts on a card.
const (
	// maxCardBytes is the most a card's JSON may take: Teams refuses a
	// message over about 28 KB, card and activity together
	// (https://learn.microsoft.com/microsoftteams/platform/bots/how-to/format-your-bot-messages);
	// 2 KB are kept for the activity around the card.
	maxCardBytes = 26 << 10
	// maxActions is the most buttons one ActionSet shows in Teams (its
	// host config, actions.maxActions); the card never needs more.
	maxActions = 6
	// cardVersion is the Adaptive Card schema version Teams renders.
	cardVersion = "1.5"
	// buttonLen is the most of a label a button shows; the whole label
	// is in the option list above the buttons.
	buttonLen = 60
)

// Verbs of the card's Action.Execute controls.
const (
	VerbRefresh  = "refresh"   // refresh.action: the card as it is now, for one person
	verbAnswer   = "answer"    // a single-select option's button
	verbOther    = "other"     // free text instead of the options (one item)
	verbText     = "text"      // the answer of an open-ended item (one item)
	verbSubmit   = "submit"    // the form: every item's inputs at once
	verbDenyNote = "deny_note" // Deny with note…
	verbEdit     = "edit"      // Allow edited
	verbRule     = "rule"      // Allow, and don't ask again (a suggestion)
	verbDismiss  = "dismiss"   // Dismiss
)

// Input ids of the card (ParseAction reads them).
const (
	inChoice = "c"    // c<item>: the options picked (indices, comma-separated)
	inOwn    = "o"    // o<item>: free text instead of / beside the options
	inText   = "t"    // t<item>: an open-ended item's answer
	inNote   = "note" // the note of a denial
	inEdit   = "edit" // the edited command or arguments
	inRule   = "rule" // the chosen "always allow" suggestion (index)
)

// CardView says whose view a card is rendered for and its state.
type CardView struct {
	// PublicURL is the bridge's public address; the card links the
	// question page of its web inbox when something is left out.
	PublicURL string
	// Viewer is the one person this view is for, by their Teams user id
	// as activities name them (from.id, "29:…", the MRI refresh.userIds
	// takes; not the Entra object id); "" renders the card everyone sees.
	// A person's view of a pending question carries refresh.userIds with
	// that id, so Teams keeps it theirs and asks for it again (verb
	// VerbRefresh).
	Viewer string
	// Refused is a notice only Viewer sees, above the card: why what they
	// did changed nothing (they may not answer, their answer was not
	// valid). The controls stay, so they can put right what they typed.
	Refused string
	// NoEdit says the question's route does not let people edit an
	// action's arguments: no Edit control.
	NoEdit bool
	// Typed is the data of the Action.Execute the view answers (Teams
	// merges the card's inputs into it): what the person picked and typed
	// fills the inputs again, so a refused answer is corrected, not
	// retyped. Empty for a new card.
	Typed json.RawMessage
}

// el is one object of a card's JSON.
type el = map[string]any

// QuestionCard renders q (pending or final) as an Adaptive Card (JSON) with
// Action.Execute verbs, within Teams' limits.
func QuestionCard(q *domain.Question, v CardView) (json.RawMessage, error) {
	if q == nil || len(q.Questions) == 0 {
		return nil, fmt.Errorf("a card needs a question with at least one item")
	}
	var typed map[string]string
	if len(v.Typed) > 0 {
		if d, err := decodeData(v.Typed); err == nil && d.Q == q.ID {
			typed = d.Inputs
		}
	}
	for _, l := range levels {
		r := &cardRender{q: q, v: v, l: l, typed: typed}
		b, err := encodeCard(r.card())
		if err != nil {
			return nil, err
		}
		if len(b) <= maxCardBytes {
			return b, nil
		}
	}
	return encodeCard(tooBigCard(q, v))
}

// encodeCard is the card's JSON, without HTML escapes (they only cost bytes).
func encodeCard(card el) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(card); err != nil {
		return nil, fmt.Errorf("encoding the card: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// limits are how much of each text a card shows, in runes.
type limits struct {
	context, question, option, code, edit int
	// images is how many bytes of picture addresses and alt texts the
	// card holds (-1: all); pictures that do not fit are left out, the
	// question's own first.
	images int
}

// levels are tried in turn until the card fits: the first shows every
// text whole (the domain's own maxima), the later ones shorten them.
var levels = []limits{
	{context: domain.MaxContextLen, question: domain.MaxQuestionLen, option: domain.MaxDescriptionLen, code: 16000, edit: 8000, images: -1},
	{context: 3000, question: 1000, option: 300, code: 8000, edit: 4000, images: 16000},
	{context: 1200, question: 500, option: 120, code: 4000, edit: 2000, images: 12000},
	{context: 400, question: 250, option: 0, code: 1500, edit: 0, images: 8000},
}

// cardRender builds one card at one level of limits.
type cardRender struct {
	q   *domain.Question
	v   CardView
	l   limits
	cut []string // what this card shows only in part
	img int      // bytes of pictures shown so far
	// sfx ends the ids of the note and edit inputs, so the calls of a
	// batch card each have their own (data "s" names it).
	sfx string
	// typed holds the inputs' values the person sent (CardView.Typed).
	typed map[string]string
}

// short is s within n runes, noting what was shortened.
func (r *cardRender) short(what, s string, n int) string {
	c, cut := clip(s, n)
	if cut {
		r.cut = append(r.cut, what+" shortened")
	}
	return c
}

func (r *cardRender) pending() bool {
	return r.q.Status == domain.StatusPending
}

// interactive reports whether the view has controls: a pending question.
func (r *cardRender) interactive() bool { return r.pending() }

func (r *cardRender) card() el {
	q := r.q
	var body []el
	if r.v.Refused != "" {
		body = append(body, el{"type": "Container", "style": "attention", "items": []el{
			runs(run(r.v.Refused, el{"weight": "bolder"})),
		}})
	}
	body = append(body, r.heading()...)
	items := r.items()
	if r.pending() {
		body = append(body, items...)
	} else {
		body = append(body, items...)
		body = append(body, r.outcome())
	}
	if len(r.cut) > 0 {
		body = append(body, r.leftOut()...)
	}
	card := el{
		"type":         "AdaptiveCard",
		"$schema":      "http://adaptivecards.io/schemas/adaptive-card.json",
		"version":      cardVersion,
		"fallbackText": r.fallback(),
		"body":         body,
	}
	if r.v.Viewer != "" && r.pending() {
		card["refresh"] = el{
			"action":  execute(VerbRefresh, "", el{"q": q.ID}),
			"userIds": []string{r.v.Viewer},
		}
	}
	return card
}

// fallback is what a client that cannot show the card (and a
// notification) shows: one line, plain.
func (r *cardRender) fallback() string {
	q := r.q
	var b strings.Builder
	b.WriteString(q.AgentLabel() + " asks: ")
	for i, it := range q.Questions {
		if i > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(it.Question)
	}
	s, _ := clip(oneLine(b.String()), 300)
	if line := outcomeLine(q); line != "" {
		s, _ = clip(oneLine(line), 300)
	}
	return inert(s)
}

// title is the card's first line.
func title(q *domain.Question) string {
	switch {
	case q.Kind == domain.KindApproval:
		return "Approval needed"
	case len(q.Questions) == 1 && q.Questions[0].Header != "":
		return q.Questions[0].Header
	}
	return "Question from " + q.AgentLabel()
}

// heading is the title, the line naming agent, run and deadline, then on a
// pending copy who may answer and the remarks, the context and its picture,
// and the history of past answers.
func (r *cardRender) heading() []el {
	q := r.q
	t, _ := clip(oneLine(title(q)), 200)
	out := []el{runs(run(t, el{"size": "large", "weight": "bolder"}))}
	meta := []el{run(r.short("agent name", oneLine(q.AgentLabel()), 200), el{"weight": "bolder"})}
	if q.RunID != "" {
		meta = append(meta, run(" · run "), run(r.short("run id", q.RunID, 200), el{"fontType": "monospace"}))
	}
	out = append(out, runs(meta...))
	if r.pending() && !q.ExpiresAt.IsZero() {
		// Our words only: Teams writes the date in the reader's time zone.
		at := q.ExpiresAt.UTC().Format(time.RFC3339)
		out = append(out, el{"type": "TextBlock", "text": "Expires {{DATE(" + at + ", SHORT)}} at {{TIME(" + at + ")}}",
			"isSubtle": true, "size": "small", "spacing": "none", "wrap": true})
	}
	if r.pending() {
		out = append(out, r.whoMayAnswer()...)
		for _, rm := range q.Remarks {
			out = append(out, runs(run("📟 "+rm.Text, el{"isSubtle": true})))
		}
	}
	if strings.TrimSpace(q.Context) != "" {
		out = append(out, runs(run(r.short("context", q.Context, r.l.context))))
	}
	if img := q.ContextImage; img != nil {
		out = append(out, r.image(img, "the context's picture")...)
	}
	if r.pending() {
		if h := domain.HistoryText(q.History, time.Now()); h != "" {
			out = append(out, runs(run("🕘 "+r.short("history", h, 1000), el{"isSubtle": true})))
		}
	}
	return out
}

// whoMayAnswer says how many approvals a gate needs and how the votes
// stand, and who may answer. Names are plain text: an updated card must
// not notify anyone; reminders do that.
func (r *cardRender) whoMayAnswer() []el {
	q := r.q
	var out []el
	if q.ApprovalsRequired > 1 {
		line := fmt.Sprintf("Needs %d approvals from different people · ", q.ApprovalsRequired)
		if tally := domain.TallyLine(q); tally != "" {
			line += tally
		} else {
			line += "no votes yet"
		}
		out = append(out, runs(run(line, el{"weight": "bolder"})))
	}
	if !q.Responders.Empty() {
		who := domain.DescribeResponders(q.Responders)
		if q.Responders.ExcludeRequester && q.RequestedBy != "" {
			who += " (not " + q.RequestedBy + ", who asked for it)"
		}
		out = append(out, runs(run("Who may answer: "+r.short("responders", who, 1000), el{"isSubtle": true})))
	}
	return out
}

// image is a picture with its alt text, when this level shows pictures.
func (r *cardRender) image(img *domain.Image, what string) []el {
	alt, _ := clip(img.Alt, domain.MaxImageAltLen)
	n := len(img.URL) + len(alt)
	if r.l.images >= 0 && r.img+n > r.l.images {
		r.cut = append(r.cut, what+" left out")
		return nil
	}
	r.img += n
	return []el{{"type": "Image", "url": img.URL, "altText": inert(alt), "size": "large"}}
}

// leftOut says what the card shows only in part, and where to see it all.
func (r *cardRender) leftOut() []el {
	line := "Not all shown here: " + strings.Join(dedupe(r.cut), "; ") + "."
	out := []el{{"type": "Container", "style": "warning", "items": []el{runs(run(line))}}}
	if u := pageURL(r.q, r.v); u != "" {
		out = append(out, actionSet(el{"type": "Action.OpenUrl", "title": "Open the question page", "url": u}))
	} else {
		out = append(out, runs(run("See all of it in the web inbox, or with: askbridge questions show "+r.q.ID, el{"isSubtle": true})))
	}
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// pageURL is the question page of the web inbox, "" without a public URL.
func pageURL(q *domain.Question, v CardView) string {
	base := strings.TrimRight(v.PublicURL, "/")
	if base == "" {
		return ""
	}
	return base + "/questions/" + url.PathEscape(q.ID)
}

// tooBigCard is the card of a question that does not fit in Teams even
// with its texts shortened: it says so and links the question page.
func tooBigCard(q *domain.Question, v CardView) el {
	t, _ := clip(oneLine(title(q)), 200)
	body := []el{
		runs(run(t, el{"size": "large", "weight": "bolder"})),
		runs(run(oneLine(q.AgentLabel()), el{"weight": "bolder"})),
		{"type": "TextBlock", "wrap": true, "text": fmt.Sprintf(
			"This question is too large to show in a Teams card (a card holds about %d KB).", maxCardBytes>>10)},
	}
	if line := outcomeLine(q); line != "" {
		body = append(body, runs(run(line, el{"weight": "bolder"})))
	}
	if u := pageURL(q, v); u != "" {
		body = append(body, runs(run("Answer it on the question page of the web inbox.")),
			actionSet(el{"type": "Action.OpenUrl", "title": "Open the question page", "url": u}))
	} else {
		body = append(body, runs(run("Answer it in the web inbox, or with: askbridge questions show "+q.ID)))
	}
	return el{"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"version": cardVersion, "fallbackText": inert(t), "body": body}
}

// runs is a RichTextBlock: text shown as it is, never as Markdown.
func runs(inlines ...el) el {
	return el{"type": "RichTextBlock", "inlines": inlines}
}

// run is one TextRun of text from anywhere, with style properties.
func run(s string, style ...el) el {
	r := el{"type": "TextRun", "text": plain(s)}
	for _, st := range style {
		for k, v := range st {
			r[k] = v
		}
	}
	return r
}

// execute is an Action.Execute control (title "" for refresh's action).
func execute(verb, title string, data el) el {
	a := el{"type": "Action.Execute", "verb": verb, "data": data}
	if title != "" {
		a["title"] = title
	}
	return a
}

func actionSet(actions ...el) el {
	return el{"type": "ActionSet", "actions": actions}
}
