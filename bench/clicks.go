package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store/storetest"
)

// clickSurface is one surface's click path for (f): where its questions
// are posted, and the platform's signed request that answers one. A
// surface is added by appending to clickSurfaces: its settings, a
// target, and the signed request.
type clickSurface struct {
	name string
	// setup adds the surface to s (its fake platform started) and returns
	// what stops the fake.
	setup func(s *app.Settings) (stop func(), err error)
	// target is where questions are posted; nil: the inbox shows them.
	target func(i int) *domain.Target
	// click returns the request that answers q "Yes" as the platform (or
	// the person's browser) sends it, signed at the time it is sent.
	click func(r *replica, q *domain.Question) (func() *http.Request, error)
	// client sends the clicks (nil: a plain client).
	client func(r *replica) (*http.Client, error)
}

// clickSurfaces: one entry per surface. Teams' is added by clickteams.go
// (after Telegram's), so a bench program without that file (SAME_BENCH=1
// against a build before Teams, see scripts/bench-compare.sh) still builds.
var clickSurfaces = []clickSurface{slackClicks(), discordClicks(), telegramClicks(), emailClicks(), inboxClicks()}

// clickOnly narrows (f) to some surfaces (their names, comma-separated,
// any case); empty runs every one. Every surface is still set up, as in
// a full run.
var clickOnly = flag.String("click-surfaces", "", "comma-separated surfaces of the click to resume (f), e.g. \"email,Telegram\" (default: all)")

// clickRates are the click rates of (f), clicks per second.
var clickRates = flag.String("click-rates", "10,200", "comma-separated click rates of the click to resume (f)")

const clickOperatorToken = "bench-operator-token-0123456789abcdef"

// benchClicks: (f) click to resume per surface, on one replica (built by
// app.New as `askbridge serve` builds it, the embedded store in a data
// directory, every surface on): from the platform's signed request
// arriving to the waiting agent's response written (a long-poll parked on
// the question), p50/p99 at 10 and 200 clicks/s; beside it the click's
// own HTTP round trip and the floor: the same request, byte for byte, to
// a bare handler at the same rate.
func benchClicks(o opts) error {
	dir, err := os.MkdirTemp("", "askbridge-clicks")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	// Every question also resumes its run by webhook (the run paused
	// before the click): the receiver notes when each arrives.
	hooks := newReceipts()
	receiver, err := serve(hooks)
	if err != nil {
		return err
	}
	defer receiver.Close()
	s := app.Settings{Addr: addr, PublicURL: "http://" + addr, DataDir: dir, ConnsPerIP: 100000, WebhookSecret: "bench-webhook-secret",
		WebhookAllow: []string{strings.TrimPrefix(receiver.URL, "http://")},
		Operators:    []api.Operator{{ID: "alice", Projects: []string{"clicks"}, Token: clickOperatorToken}}}
	for _, cs := range clickSurfaces {
		stop, err := cs.setup(&s)
		if err != nil {
			return fmt.Errorf("%s: %w", cs.name, err)
		}
		defer stop()
	}
	r, err := startReplica(s)
	if err != nil {
		return err
	}
	defer r.Close()
	bare, err := serve(bareHandler)
	if err != nil {
		return err
	}
	defer bare.Close()
	var rates []int
	for _, f := range strings.Split(*clickRates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-click-rates: %q is not a number of clicks per second", f)
		}
		rates = append(rates, n)
	}
	for _, cs := range clickSurfaces {
		if *clickOnly != "" && !slices.ContainsFunc(strings.Split(*clickOnly, ","), func(n string) bool { return strings.EqualFold(strings.TrimSpace(n), cs.name) }) {
			continue
		}
		for _, rate := range rates {
			if err := clickRound(r, bare, receiver.URL, hooks, cs, rate, o.clickSecs); err != nil {
				// One surface's refusal (a 429 under load, say) is a
				// figure too; the others still run.
				fmt.Printf("(f) click to resume, %-8s %3d clicks/s: failed: %v\n", cs.name, rate, err)
			}
		}
	}
	fmt.Println()
	return nil
}

func clickRound(r *replica, bare *server, receiver string, hooks *receipts, cs clickSurface, rate, secs int) error {
	ctx := context.Background()
	n := rate * secs
	qs := make([]*domain.Question, n)
	sends := make([]func() *http.Request, n)
	for i := range n {
		run := fmt.Sprintf("click-%s-%d-%d", cs.name, rate, i)
		req := &domain.AskRequest{RunID: run, AgentID: "bot", Question: "Ship " + run + "?",
			Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Resume: &domain.ResumeRequest{URL: receiver + "/resume"}}
		if cs.target != nil {
			req.Targets = []domain.Target{*cs.target(i)}
		}
		res, err := r.router.Ask(ctx, "clicks", req, "")
		if err != nil {
			return err
		}
		qs[i] = res.Question
		if _, err := r.app.Store().PauseRun(ctx, "clicks", run, "bot", time.Now()); err != nil {
			return err
		}
		// A copy may still be on its way to the platform.
		for t0 := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			q := res.Question
			if cs.target != nil {
				if q, err = r.router.Question(ctx, "clicks", q.ID); err != nil {
					return err
				}
			}
			if sends[i], err = cs.click(r, q); err == nil {
				break
			} else if time.Since(t0) > 10*time.Second {
				return err
			}
		}
	}
	c := client(512)
	if cs.client != nil {
		var err error
		if c, err = cs.client(r); err != nil {
			return err
		}
	}
	addr := strings.TrimPrefix(r.web.URL, "http://")
	conns := make([]net.Conn, n)
	defer func() {
		for _, cn := range conns {
			if cn != nil {
				cn.Close()
			}
		}
	}()
	for i, q := range qs {
		cn, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		conns[i] = cn
		fmt.Fprintf(cn, "GET /api/projects/clicks/agent-questions/%s/wait?timeout=120s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", q.ID, addr, clickOperatorToken)
	}
	time.Sleep(time.Second) // parked
	acks := make([]time.Duration, n)
	bodies := make([][]byte, n)
	ls, _, err := openLoop(rate, time.Duration(secs)*time.Second, func(i int) (time.Duration, error) {
		got := make(chan error, 1)
		var woken time.Time
		go func() {
			conns[i].SetReadDeadline(time.Now().Add(60 * time.Second))
			buf := make([]byte, 8192)
			k, err := conns[i].Read(buf)
			woken = time.Now()
			if err == nil && (!strings.HasPrefix(string(buf[:k]), "HTTP/1.1 200") || !strings.Contains(string(buf[:k]), `"answered"`)) {
				err = fmt.Errorf("the waiter got %q", buf[:min(k, 200)])
			}
			got <- err
		}()
		req := sends[i]()
		if req == nil {
			return 0, fmt.Errorf("could not build click %d", i)
		}
		bodies[i], _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(bodies[i]))
		t := time.Now()
		hooks.expect(qs[i].ID, t)
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		acks[i] = time.Since(t)
		if res.StatusCode >= 400 {
			return 0, fmt.Errorf("the click was answered %d: %.300s", res.StatusCode, b)
		}
		if err := <-got; err != nil {
			return 0, err
		}
		return woken.Sub(t), nil
	})
	if err != nil {
		hooks.take() // the refused clicks' webhooks are not the next round's
		return err
	}
	storetest.WaitFor(ctx, 30*time.Second, hooks.all)
	hl, missing := hooks.take()
	// The floor: each click's request, byte for byte, to a bare handler.
	bc := client(512)
	fl, _, err := openLoop(rate, time.Duration(secs)*time.Second, func(i int) (time.Duration, error) {
		t := time.Now()
		res, err := bc.Post(bare.URL, "application/x-www-form-urlencoded", bytes.NewReader(bodies[i]))
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(t), nil
	})
	if err != nil {
		return err
	}
	p, a, f, h := percentiles(ls), percentiles(acks), percentiles(fl), percentiles(hl)
	fmt.Printf("(f) click to resume, %-8s %3d clicks/s (%d): to the agent's response p50 %s p99 %s; to the resume webhook p50 %s p99 %s (%d missing); the click's round trip p50 %s p99 %s; floor (the same request to a bare handler) p50 %s p99 %s\n",
		cs.name, rate, n, ms(p.p50), ms(p.p99), ms(h.p50), ms(h.p99), missing, ms(a.p50), ms(a.p99), ms(f.p50), ms(f.p99))
	return nil
}

// slackClicks: a signed block_actions payload on the posted message's
// button, as Slack sends it.
func slackClicks() clickSurface {
	chans := []string{"C1", "C2", "C3", "C4"}
	var fake *fakeslack.Server
	return clickSurface{
		name: "Slack",
		setup: func(s *app.Settings) (func(), error) {
			fake = fakeslack.New(chans...)
			s.Slack = slack.Config{BotToken: fake.BotToken, SigningSecret: signingSecret, APIURL: fake.APIURL()}
			return fake.Close, nil
		},
		target: func(i int) *domain.Target { return &domain.Target{Platform: "slack", Channel: chans[i%len(chans)]} },
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			var ch, ts string
			for _, t := range q.Targets {
				ch, ts = t.Channel, t.MessageTS
			}
			m, ok := fake.Message(ch, ts)
			if !ok {
				return nil, fmt.Errorf("question %s was not posted", q.ID)
			}
			actionID, blockID, value := findButton(m.Blocks, "Yes")
			if actionID == "" {
				return nil, fmt.Errorf("no Yes button in %s", m.Blocks)
			}
			p := map[string]any{"type": "block_actions", "trigger_id": fake.Trigger(),
				"user":      map[string]any{"id": "U1", "username": "alice", "name": "alice"},
				"container": map[string]any{"type": "message", "channel_id": ch, "message_ts": ts},
				"channel":   map[string]any{"id": ch},
				"actions":   []any{map[string]any{"action_id": actionID, "block_id": blockID, "type": "button", "value": value, "action_ts": "1.1"}}}
			b, _ := json.Marshal(p)
			body := []byte(url.Values{"payload": {string(b)}}.Encode())
			return func() *http.Request {
				req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/slack/interactions", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				ts, sig := slack.Sign(signingSecret, time.Now(), body)
				req.Header.Set("X-Slack-Request-Timestamp", ts)
				req.Header.Set("X-Slack-Signature", sig)
				return req
			}, nil
		},
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// inboxClicks: the card's form posted from a signed-in browser (session
// cookie, CSRF token), as the inbox page sends it.
func inboxClicks() clickSurface {
	var csrf string
	return clickSurface{
		name:  "inbox",
		setup: func(*app.Settings) (func(), error) { return func() {}, nil },
		client: func(r *replica) (*http.Client, error) {
			jar, _ := cookiejar.New(nil)
			c := client(512)
			c.Jar = jar
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			tok, err := pageCSRF(c, r.web.URL+"/login")
			if err != nil {
				return nil, err
			}
			req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/login",
				strings.NewReader(url.Values{"csrf": {tok}, "token": {clickOperatorToken}, "next": {"/"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", r.web.URL)
			res, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				return nil, fmt.Errorf("signing in: %d %.300s", res.StatusCode, b)
			}
			if csrf, err = pageCSRF(c, r.web.URL+"/"); err != nil {
				return nil, fmt.Errorf("signing in: %w", err)
			}
			return c, nil
		},
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			return func() *http.Request {
				body := url.Values{"a0": {"o0"}, "csrf": {csrf}, "return": {"question"}}.Encode()
				req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/questions/"+q.ID+"/answer", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", r.web.URL)
				return req
			}, nil
		},
	}
}

func pageCSRF(c *http.Client, u string) (string, error) {
	res, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := csrfField.FindSubmatch(b)
	if m == nil {
		return "", errors.New("no csrf token on " + u)
	}
	return string(m[1]), nil
}
