package web

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

const (
	// pageSize is how many cards (inbox) or rows (history) one page shows:
	// a page stays small however many questions wait.
	pageSize = 25
	// historyScan bounds how many of each project's newest questions the
	// history reads per view (the store lists newest first up to a limit).
	historyScan = 1000
)

// historyView is the history page: questions that are no longer pending.
type historyView struct {
	Rows     []historyRow
	Filter   historyFilter
	Total    int  // rows matching the filter
	Capped   bool // a project had more questions than historyScan
	Scan     int
	Agents   []string // agents seen, for the filter's suggestions
	Paging   paging
	Statuses []string
}

type historyRow struct {
	Q     *domain.Question
	Title string
	// Texts are what was asked, one line per item, under the title (none
	// when the title is the one item's whole text).
	Texts   []string
	Outcome string // "Answered by maria (Slack)"
	Answer  string // the answers, one line
	Agent   string
	When    string // RFC 3339 of when it ended
}

type historyFilter struct {
	Agent, Run, Status, Who string
}

// paging links the pages of a list.
type paging struct {
	Page, Pages int
	First, Last int // 1-based positions shown
	Total       int // in every page
	Prev, Next  string
}

func makePaging(total, page int, link func(int) string) paging {
	pages := max(1, (total+pageSize-1)/pageSize)
	page = min(max(page, 1), pages)
	p := paging{Page: page, Pages: pages, First: (page-1)*pageSize + 1, Last: min(page*pageSize, total), Total: total}
	if total == 0 {
		p.First = 0
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if page < pages {
		p.Next = link(page + 1)
	}
	return p
}

func pageParam(q url.Values) int {
	n, err := strconv.Atoi(q.Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func (i *Inbox) handleHistory(rq *request) error {
	ctx := rq.r.Context()
	query := rq.r.URL.Query()
	f := historyFilter{Agent: strings.TrimSpace(query.Get("agent")), Run: strings.TrimSpace(query.Get("run")),
		Status: query.Get("status"), Who: strings.TrimSpace(query.Get("who"))}
	switch domain.Status(f.Status) {
	case domain.StatusAnswered, domain.StatusExpired, domain.StatusCancelled:
	default:
		f.Status = ""
	}
	projects, err := i.projects(ctx, rq.viewer)
	if err != nil {
		return err
	}
	hv := &historyView{Filter: f, Scan: historyScan,
		Statuses: []string{string(domain.StatusAnswered), string(domain.StatusExpired), string(domain.StatusCancelled)}}
	agents := map[string]bool{}
	var rows []historyRow
	for _, p := range projects {
		qs, err := i.router.List(ctx, p, "", historyScan)
		if err != nil {
			return err
		}
		if len(qs) >= historyScan {
			hv.Capped = true
		}
		for _, q := range qs {
			if !q.Status.Final() {
				continue
			}
			agent := q.AgentLabel()
			agents[agent] = true
			if !f.matches(q) {
				continue
			}
			title, texts := historyTitle(q, agent)
			rows = append(rows, historyRow{Q: q, Title: title, Texts: texts, Outcome: finalLine(q), Answer: domain.AnswerLine(q), Agent: agent})
		}
	}
	// Newest ending first.
	sort.SliceStable(rows, func(a, b int) bool { return ended(rows[a].Q).After(ended(rows[b].Q)) })
	for a := range agents {
		hv.Agents = append(hv.Agents, a)
	}
	sort.Strings(hv.Agents)
	hv.Total = len(rows)
	hv.Paging = makePaging(len(rows), pageParam(query), func(n int) string {
		v := url.Values{}
		for k, s := range map[string]string{"agent": f.Agent, "run": f.Run, "status": f.Status, "who": f.Who} {
			if s != "" {
				v.Set(k, s)
			}
		}
		v.Set("page", strconv.Itoa(n))
		return "/history?" + v.Encode()
	})
	if hv.Paging.First > 0 {
		hv.Rows = rows[hv.Paging.First-1 : hv.Paging.Last]
	}
	for n := range hv.Rows {
		hv.Rows[n].When = ended(hv.Rows[n].Q).UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	i.render(rq.w, rq.r, "history", pageData{Title: "History", Viewer: rq.viewer, CSRF: rq.viewer.CSRF, History: hv})
	return nil
}

// matches applies the filter: agent (id or name), run (exact id), status,
// and who answered or dismissed (name or id, any case, part of it).
func (f historyFilter) matches(q *domain.Question) bool {
	if f.Status != "" && string(q.Status) != f.Status {
		return false
	}
	if f.Run != "" && q.RunID != f.Run {
		return false
	}
	if f.Agent != "" && !strings.EqualFold(q.AgentID, f.Agent) && !strings.EqualFold(q.AgentName, f.Agent) && !strings.EqualFold(q.AgentLabel(), f.Agent) {
		return false
	}
	if f.Who != "" {
		if q.RespondedBy == nil {
			return false
		}
		w := strings.ToLower(f.Who)
		p := q.RespondedBy
		if !strings.Contains(strings.ToLower(p.Name), w) && !strings.Contains(strings.ToLower(p.ID), w) {
			return false
		}
	}
	return true
}

// ended is when a question left pending.
func ended(q *domain.Question) time.Time {
	if q.RespondedAt != nil {
		return *q.RespondedAt
	}
	if q.Status == domain.StatusExpired {
		return q.ExpiresAt
	}
	return q.UpdatedAt
}

// historyTextLen bounds an item's text in a history row: a row recalls
// the question; its page shows it whole.
const historyTextLen = 200

// historyTitle heads a history row: the items' headers as on the card
// when every item has one, else the first item's text (never "Question
// from <agent>", which says nothing of what was asked). texts are the
// items' texts the title does not already show, one line each.
func historyTitle(q *domain.Question, agent string) (title string, texts []string) {
	headers := len(q.Questions) > 0
	for _, it := range q.Questions {
		texts = append(texts, shortText(oneLine(it.Question), historyTextLen))
		headers = headers && it.Header != ""
	}
	if headers || len(texts) == 0 {
		return cardTitle(q, agent), texts
	}
	return texts[0], texts[1:]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shortText cuts s to n characters, ending it with "…" when cut.
func shortText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
