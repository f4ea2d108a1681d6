package email

import (
	"bytes"
	htmltemplate "html/template"
	"net/url"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/askbridge/askbridge/domain"
)

var (
	batchText = texttemplate.Must(texttemplate.New("").ParseFS(templateFS, "templates/batch.txt"))
	batchHTML = htmltemplate.Must(htmltemplate.New("").Funcs(htmltemplate.FuncMap{"lines": lines}).ParseFS(templateFS, "templates/batch.html"))
)

// batchView is what a batch's mail shows to one recipient.
type batchView struct {
	Title     string
	Intro     string
	Calls     []callView
	Pending   int
	AllowAll  string // the Allow all link (empty on the outcome mail)
	DenyAll   string
	Deadline  string
	BatchPage string // the batch's page of the web inbox
	Cut       bool
	Hint      string
	Footer    string
}

// callView is one call of a batch's mail: its question and action as its
// own mail shows them, its Allow / Deny links while pending, else its
// outcome.
type callView struct {
	N       int
	Q       *mailView
	Outcome string
}

// buildBatchView renders the calls of b mailed to j.To; link signs the
// recipient's links (nil on the outcome mail).
func buildBatchView(b *domain.Batch, calls []*domain.Question, j job, base string, now time.Time, link func(*domain.Question, int) (string, error), hosts []string) (*batchView, error) {
	q0 := calls[0]
	agent := q0.AgentName
	if agent == "" {
		agent = q0.AgentID
	}
	agent = domain.Shorten(agent, 80)
	v := &batchView{Title: domain.Shorten("Approvals needed: "+agent+"'s tool calls of run "+q0.RunID, maxSubjectRunes), BatchPage: batchPage(base, b.ID)}
	for i, q := range calls {
		var l linkFunc
		if link != nil && q.Status == domain.StatusPending {
			l = func(choice int) (string, error) { return link(q, choice) }
		}
		mv, err := buildView(q, kindPost, j.To, questionPage(base, q.ID), nil, now, l, hosts)
		if err != nil {
			return nil, err
		}
		v.Cut = v.Cut || mv.Cut
		cv := callView{N: i + 1, Q: mv}
		if q.Status != domain.StatusPending {
			cv.Outcome = outcome(q)
		} else {
			v.Pending++
		}
		v.Calls = append(v.Calls, cv)
	}
	switch {
	case j.Kind == kindBatchFinal:
		v.Intro = "Every call of this batch is decided — nothing more to do."
	default:
		v.Intro = agent + " asks for your approval of " + plural(len(calls), "tool call") + " made together:"
		if dl := latestDeadline(calls); !dl.IsZero() {
			v.Deadline = "Answer within " + domain.HumanDuration(dl.Sub(now)) + " (by " + dl.UTC().Format("Mon 2 Jan 15:04 MST") + ")."
		}
		if link != nil && v.Pending > 0 {
			var err error
			if v.AllowAll, err = link(q0, AllowAllChoice); err != nil {
				return nil, err
			}
			if v.DenyAll, err = link(q0, DenyAllChoice); err != nil {
				return nil, err
			}
			v.Hint = "Opening a link shows a page where you confirm; nothing is decided until you press the button on that page. Allow all and Deny all decide only the calls of this mail still waiting, each as its own answer."
		}
	}
	v.Footer = "Sent by askbridge to " + j.To + " because an agent asked for approvals."
	return v, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// renderBatch returns the text and HTML parts of v.
func renderBatch(v *batchView) (text, html string, err error) {
	var tb, hb bytes.Buffer
	if err := batchText.ExecuteTemplate(&tb, "batch.txt", v); err != nil {
		return "", "", err
	}
	if err := batchHTML.ExecuteTemplate(&hb, "batch.html", v); err != nil {
		return "", "", err
	}
	return tb.String(), hb.String(), nil
}

// batchPage is the web inbox's page of batch id under base.
func batchPage(base, id string) string {
	return strings.TrimRight(base, "/") + "/batches/" + url.PathEscape(id)
}
