package store

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// A question is two keys (see scripts.go): the hash q:<id> holds what
// changes (status, result, votes, …) in short fields, so Redis keeps it in
// its compact listpack encoding, and the string d:<id> holds what does not:
// one line of compact JSON (docV2) followed by one line per posted copy
// (storedCopy), at most one line "N" + the remarks (remarks.go) and, once
// the question is final, a line "R" + the result.
// encoding/json never writes a raw newline, so lines split cleanly. Field
// names are short because every byte is paid for once per question
// (BENCHMARKS.md (d)).

// docV2 is the immutable part of a question record. It begins with its
// creation time, `{"c":<ns>,`, which the scripts read when they turn a run
// stub into its hash (runKey in scripts.go); records written before that
// begin `{"v":2,` and read the same.
type docV2 struct {
	C  int64                   `json:"c"`           // created, Unix ns
	V  int                     `json:"v,omitempty"` // 2 in records written before c came first
	A  string                  `json:"a"`           // agent id
	N  string                  `json:"n,omitempty"`
	K  string                  `json:"k,omitempty"` // kind, omitted for "question"
	Q  []itemV2                `json:"q"`
	X  string                  `json:"x,omitempty"` // context
	T  []storedCopy            `json:"t,omitempty"` // requested targets
	R  *domain.Responders      `json:"r,omitempty"`
	E  int64                   `json:"e"` // expires, ns after created
	Rs *domain.Resume          `json:"rs,omitempty"`
	Ro string                  `json:"ro,omitempty"`
	I  string                  `json:"i,omitempty"` // idempotency key
	Rb string                  `json:"rb,omitempty"`
	Ap int                     `json:"ap,omitempty"`
	Ot *domain.OnTimeout       `json:"ot,omitempty"`
	Es []domain.EscalationStep `json:"es,omitempty"`
	Ac *domain.Action          `json:"ac,omitempty"` // an approval's action
	Xi *domain.Image           `json:"xi,omitempty"` // context image
	Hi []domain.PastAnswer     `json:"hi,omitempty"` // earlier answers shown
	Tp string                  `json:"tp,omitempty"` // W3C traceparent of the ask
	Ts string                  `json:"ts,omitempty"` // W3C tracestate of the ask
}

type itemV2 struct {
	Q string                `json:"q"`
	H string                `json:"h,omitempty"`
	M bool                  `json:"m,omitempty"`
	O []optionV2            `json:"o"` // null and [] both kept
	S *domain.ShowIf        `json:"s,omitempty"`
	F *domain.FreeTextRules `json:"f,omitempty"` // rules for free text
	I *domain.Image         `json:"i,omitempty"`
}

type optionV2 struct {
	L string        `json:"l"`
	D string        `json:"d,omitempty"`
	V string        `json:"v,omitempty"` // omitted when it equals the label
	R bool          `json:"r,omitempty"`
	X bool          `json:"x,omitempty"` // veto
	F bool          `json:"f,omitempty"` // default
	I *domain.Image `json:"i,omitempty"`
}

// storedCopy is a target or a posted copy; Key() of its target names it.
type storedCopy struct {
	P string            `json:"p"`
	C string            `json:"c"`
	T string            `json:"t,omitempty"`
	M string            `json:"m,omitempty"`
	U string            `json:"u,omitempty"`
	R map[string]string `json:"r,omitempty"`
	E string            `json:"e,omitempty"`
}

func toStored(t domain.Target) storedCopy {
	return storedCopy{P: t.Platform, C: t.Channel, T: t.ThreadTS, M: t.MessageTS, U: t.URL, R: t.Refs, E: t.Error}
}

func (c storedCopy) target() domain.Target {
	return domain.Target{Platform: c.P, Channel: c.C, ThreadTS: c.T, MessageTS: c.M, URL: c.U, Refs: c.R, Error: c.E}
}

// copyLine is a copy's line in d:<id>.
func copyLine(t domain.Target) string {
	b := marshal(toStored(t))
	return string(b)
}

// encodeDoc is the first line of d:<id>.
func encodeDoc(q *domain.Question) string {
	d := docV2{A: q.AgentID, N: q.AgentName, K: q.Kind, X: q.Context, C: q.CreatedAt.UnixNano(), E: int64(q.ExpiresAt.Sub(q.CreatedAt)),
		Rs: q.Resume, Ro: q.Route, I: q.IdempotencyKey, Rb: q.RequestedBy, Ap: q.ApprovalsRequired, Ot: q.OnTimeout, Es: q.Escalation, Ac: q.Action, Xi: q.ContextImage, Hi: q.History,
		Tp: q.TraceParent, Ts: q.TraceState}
	if d.K == domain.KindQuestion {
		d.K = ""
	}
	if !q.Responders.Empty() || q.Responders.ExcludeRequester {
		r := q.Responders
		d.R = &r
	}
	d.Q = make([]itemV2, len(q.Questions))
	for i, it := range q.Questions {
		d.Q[i] = itemV2{Q: it.Question, H: it.Header, M: it.MultiSelect, S: it.ShowIf, F: it.Other, I: it.Image}
		if it.Options != nil {
			d.Q[i].O = make([]optionV2, len(it.Options))
		}
		for j, o := range it.Options {
			v := o.Value
			if v == o.Label {
				v = ""
			}
			d.Q[i].O[j] = optionV2{L: o.Label, D: o.Description, V: v, R: o.Recommended, X: o.Veto, F: o.Default, I: o.Image}
		}
	}
	for _, t := range q.Targets {
		d.T = append(d.T, toStored(t))
	}
	b := marshal(d)
	return string(b)
}

// decodeDoc fills q from the first line of d:<id>, in this layout or the
// one before it (docLegacy).
func decodeDoc(q *domain.Question, line string) error {
	if !strings.HasPrefix(line, `{"c":`) && !strings.HasPrefix(line, `{"v":2,`) {
		return decodeLegacyDoc(q, line)
	}
	var d docV2
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		return err
	}
	q.AgentID, q.AgentName, q.Kind, q.Context = d.A, d.N, d.K, d.X
	if q.Kind == "" {
		q.Kind = domain.KindQuestion
	}
	if d.R != nil {
		q.Responders = *d.R
	}
	q.CreatedAt = time.Unix(0, d.C).UTC()
	q.ExpiresAt = q.CreatedAt.Add(time.Duration(d.E))
	q.Resume, q.Route, q.IdempotencyKey, q.RequestedBy = d.Rs, d.Ro, d.I, d.Rb
	q.ApprovalsRequired, q.OnTimeout, q.Escalation, q.Action = d.Ap, d.Ot, d.Es, d.Ac
	q.ContextImage, q.History = d.Xi, d.Hi
	q.TraceParent, q.TraceState = d.Tp, d.Ts
	q.Questions = make([]domain.Item, len(d.Q))
	for i, it := range d.Q {
		q.Questions[i] = domain.Item{Question: it.Q, Header: it.H, MultiSelect: it.M, ShowIf: it.S, Other: it.F, Image: it.I}
		if it.O != nil {
			q.Questions[i].Options = make([]domain.Option, len(it.O))
		}
		for j, o := range it.O {
			v := o.V
			if v == "" {
				v = o.L
			}
			q.Questions[i].Options[j] = domain.Option{Label: o.L, Description: o.D, Value: v, Recommended: o.R, Veto: o.X, Default: o.F, Image: o.I}
		}
	}
	for _, t := range d.T {
		q.Targets = append(q.Targets, t.target())
	}
	return nil
}

// docLegacy is the immutable part as the first layout stored it.
type docLegacy struct {
	AgentID           string                  `json:"agent_id"`
	AgentName         string                  `json:"agent_name,omitempty"`
	Kind              string                  `json:"kind"`
	Questions         []domain.Item           `json:"questions"`
	Context           string                  `json:"context,omitempty"`
	Targets           []domain.Target         `json:"targets,omitempty"`
	Responders        domain.Responders       `json:"responders"`
	CreatedAt         time.Time               `json:"created_at"`
	ExpiresAt         time.Time               `json:"expires_at"`
	Resume            *domain.Resume          `json:"resume,omitempty"`
	Route             string                  `json:"route,omitempty"`
	IdempotencyKey    string                  `json:"idempotency_key,omitempty"`
	RequestedBy       string                  `json:"requested_by,omitempty"`
	ApprovalsRequired int                     `json:"approvals_required,omitempty"`
	OnTimeout         *domain.OnTimeout       `json:"on_timeout,omitempty"`
	Escalation        []domain.EscalationStep `json:"escalation,omitempty"`
}

func decodeLegacyDoc(q *domain.Question, line string) error {
	var d docLegacy
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		return err
	}
	q.AgentID, q.AgentName, q.Kind, q.Questions, q.Context = d.AgentID, d.AgentName, d.Kind, d.Questions, d.Context
	q.Targets, q.Responders, q.CreatedAt, q.ExpiresAt = d.Targets, d.Responders, d.CreatedAt, d.ExpiresAt
	q.Resume, q.Route, q.IdempotencyKey, q.RequestedBy = d.Resume, d.Route, d.IdempotencyKey, d.RequestedBy
	q.ApprovalsRequired, q.OnTimeout, q.Escalation = d.ApprovalsRequired, d.OnTimeout, d.Escalation
	return nil
}

// result is what a transition adds to the record.
type result struct {
	Answers      map[string]string   `json:"answers,omitempty"`
	Selections   map[string][]string `json:"selections,omitempty"`
	Response     string              `json:"response,omitempty"`
	RespondedBy  *domain.Person      `json:"responded_by,omitempty"`
	RespondedAt  *time.Time          `json:"responded_at,omitempty"`
	CancelReason string              `json:"cancel_reason,omitempty"`
	CancelNote   string              `json:"cancel_note,omitempty"`
	Defaulted    bool                `json:"defaulted,omitempty"`
	Skipped      []domain.Skipped    `json:"sk,omitempty"`
	// An approval's decision, edited action and chosen rule.
	Decision     *domain.Decision     `json:"dc,omitempty"`
	EditedAction *domain.EditedAction `json:"ed,omitempty"`
	AppliedRule  *int                 `json:"ar,omitempty"`
	// The note an approval was denied with, exactly as typed.
	Reason string `json:"rs,omitempty"`
}

// setApproval copies an approval's decision from the answer.
func (r *result) setApproval(a *domain.Answer) {
	r.Decision, r.EditedAction, r.AppliedRule = a.Decision, a.Edited, a.AppliedRule
	r.Reason = a.Reason
}

// decode builds a question from its hash and its d:<id> string. It
// returns the question's sequence number in its project too (creation
// order).
func decode(project, id string, h map[string]string, d string) (*domain.Question, int64, error) {
	q := &domain.Question{ID: id, ProjectID: project}
	docLine, copies, _ := strings.Cut(d, "\n")
	if err := decodeDoc(q, docLine); err != nil {
		return nil, 0, fmt.Errorf("store: corrupt question record: %w", err)
	}
	q.RunID, q.Status, q.Fingerprint = h["run"], domain.Status(h["status"]), unpackHex(h["fp"])
	q.Read, q.ResumedRunID, q.BatchID = h["read"] == "1", h["resumed_run_id"], h["b"]
	seq, _ := strconv.ParseInt(h["seq"], 10, 64)
	q.EscalationLevel, _ = strconv.Atoi(h["esc_level"])
	for i := 0; i < q.EscalationLevel && i < len(q.Escalation); i++ {
		if r := q.Escalation[i].Responders; r != nil {
			q.Responders = q.Responders.Merge(*r)
		}
	}
	// A question nothing has changed since it was asked has no updated_at.
	q.UpdatedAt = q.CreatedAt
	if u, ok := h["updated_at"]; ok {
		q.UpdatedAt = parseStamp(u)
	}
	// After the immutable part, d:<id> holds a line per posted copy and,
	// once final, a line "R<json>" with the result. Records of the earlier
	// layout keep them as hash fields: copy:<target key> and result.
	var posted []storedCopy
	var legacy []string
	for k := range h {
		if strings.HasPrefix(k, "copy:") {
			legacy = append(legacy, k)
		}
	}
	sort.Strings(legacy)
	for _, k := range legacy {
		var c storedCopy
		if json.Unmarshal([]byte(h[k]), &c) == nil {
			posted = append(posted, c)
		}
	}
	r := h["result"]
	for line := range strings.SplitSeq(copies, "\n") {
		if rest, ok := strings.CutPrefix(line, "R"); ok {
			r = rest
			continue
		}
		if strings.HasPrefix(line, "N") {
			q.Remarks = decodeRemarks(line)
			continue
		}
		var c storedCopy
		if json.Unmarshal([]byte(line), &c) == nil {
			posted = append(posted, c)
		}
	}
	if r != "" {
		var res result
		if err := json.Unmarshal([]byte(r), &res); err == nil {
			q.Answers, q.Selections, q.Response = res.Answers, res.Selections, res.Response
			q.RespondedBy, q.RespondedAt, q.CancelReason = res.RespondedBy, res.RespondedAt, res.CancelReason
			q.Defaulted, q.CancelNote, q.Skipped = res.Defaulted, res.CancelNote, res.Skipped
			q.Decision, q.EditedAction, q.AppliedRule = res.Decision, res.EditedAction, res.AppliedRule
			q.Reason = res.Reason
		}
	}
	q.FreeText = domain.FreeTextItems(q.Questions, q.Selections)
	decodeVotes(q, h)
	// Posted copies replace their target; copies on new targets are added.
	for _, c := range posted {
		t := c.target()
		replaced := false
		for i := range q.Targets {
			if q.Targets[i].Key() == t.Key() {
				q.Targets[i] = t
				replaced = true
			}
		}
		if !replaced {
			q.Targets = append(q.Targets, t)
		}
	}
	if q.Targets == nil {
		q.Targets = []domain.Target{}
	}
	return q, seq, nil
}

// decodeVotes reads the votes of an approval, in voting order (a changed
// vote counts from when it changed).
func decodeVotes(q *domain.Question, h map[string]string) {
	order := map[string]int{}
	for k, v := range h {
		if person, ok := strings.CutPrefix(k, "vote:"); ok {
			var vt domain.Vote
			if json.Unmarshal([]byte(v), &vt) == nil {
				order[vt.By.Platform+":"+vt.By.ID], _ = strconv.Atoi(h["vorder:"+person])
				q.Votes = append(q.Votes, vt)
			}
		}
	}
	sort.Slice(q.Votes, func(i, j int) bool {
		return order[q.Votes[i].By.Platform+":"+q.Votes[i].By.ID] < order[q.Votes[j].By.Platform+":"+q.Votes[j].By.ID]
	})
}
