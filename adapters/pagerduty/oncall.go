package pagerduty

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// OnCall is one entry of GET /oncalls: a person on call for an escalation
// policy's level, through a schedule or directly.
type OnCall struct {
	User             User      `json:"user"`
	Schedule         *Ref      `json:"schedule"`
	EscalationPolicy *Ref      `json:"escalation_policy"`
	EscalationLevel  int       `json:"escalation_level"`
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
}

// User is a PagerDuty user as /oncalls returns it with include[]=users.
type User struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Summary string `json:"summary"`
}

// Ref is a reference to a schedule or escalation policy.
type Ref struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

// DisplayName is the user's name for people.
func (u User) DisplayName() string {
	if u.Name != "" {
		return u.Name
	}
	if u.Summary != "" {
		return u.Summary
	}
	return u.ID
}

// pageLimit is how many on-call entries one request asks for (PagerDuty's
// maximum for offset pagination), and maxPages how many pages are read
// before giving up on an account that returns more.
const (
	pageLimit = 100
	maxPages  = 20
)

// OnCallFilter says whose on-calls to list: PagerDuty's schedule_ids[] or
// escalation_policy_ids[] (one of them; PagerDuty combines the two as one
// filter, so the reader asks for each separately).
type OnCallFilter struct {
	Schedules []string
	Policies  []string
}

// OnCalls lists who is on call now for f (GET {api_url}/oncalls with
// include[]=users, every page). A failure is an *Error; an account without
// an API token is an *Error too, so callers fail closed.
func (c *Client) OnCalls(ctx context.Context, f OnCallFilter) ([]OnCall, error) {
	if c.token == "" {
		return nil, &Error{Op: "oncalls", Reason: "no API token; set pagerduty.api_token_file", perm: true}
	}
	var out []OnCall
	for page := 0; page < maxPages; page++ {
		q := url.Values{}
		for _, id := range f.Schedules {
			q.Add("schedule_ids[]", id)
		}
		for _, id := range f.Policies {
			q.Add("escalation_policy_ids[]", id)
		}
		q.Add("include[]", "users")
		q.Set("limit", strconv.Itoa(pageLimit))
		q.Set("offset", strconv.Itoa(page*pageLimit))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.apiURL+"/oncalls?"+q.Encode(), nil)
		if err != nil {
			return nil, &Error{Op: "oncalls", Reason: "the api_url setting is not a usable URL", perm: true}
		}
		req.Header.Set("Accept", "application/vnd.pagerduty+json;version=2")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Token token="+c.token)
		req.Header.Set("User-Agent", c.userAgent)
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, &Error{Op: "oncalls", Reason: transportReason(err)}
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			return nil, &Error{Op: "oncalls", Reason: transportReason(err)}
		}
		if resp.StatusCode != http.StatusOK {
			return nil, classify("oncalls", resp, body)
		}
		var b struct {
			OnCalls []OnCall `json:"oncalls"`
			More    bool     `json:"more"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, &Error{Op: "oncalls", Status: resp.StatusCode, Reason: fmt.Sprintf("unreadable answer: %v", err)}
		}
		out = append(out, b.OnCalls...)
		if !b.More || len(b.OnCalls) == 0 {
			return out, nil
		}
	}
	return out, nil
}
