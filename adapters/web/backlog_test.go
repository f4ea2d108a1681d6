package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
)

// backlogStores are the stores a large backlog is tested on: Redis and
// the embedded (native) store.
var backlogStores = map[string]func(t *testing.T) lifecycle.Store{
	"redis": func(t *testing.T) lifecycle.Store {
		st, err := store.Open(context.Background(), store.Options{URL: storetest.Redis(t).URL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
	"native": func(t *testing.T) lifecycle.Store {
		st, err := native.Open(native.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
}

var cardIDRe = regexp.MustCompile(`<article class="card[^"]*"[^>]* id="q-([0-9a-f-]+)"`)

// TestInboxPagesThroughEveryPendingQuestion: with 10,000 pending
// questions the inbox counts them all, its first card is the nearest
// deadline, its last page holds the latest one, and the live stream
// reports every one of them (the count the page keeps up to date).
func TestInboxPagesThroughEveryPendingQuestion(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10,000 questions")
	}
	for name, open := range backlogStores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			qs := storetest.FillPending(t, st, "ops", 10000)
			e := newEnv(t, envOptions{store: st})
			c := e.client()

			first := c.getPage("/")
			if first.status != http.StatusOK {
				t.Fatalf("inbox: %d", first.status)
			}
			count := regexp.MustCompile(`id="count"[^>]*>([^<]*)<`).FindStringSubmatch(first.body)
			shown := regexp.MustCompile(`Showing [^<]*`).FindString(first.body)
			t.Logf("heading %q, %q", count[1], shown)
			if !strings.Contains(first.body, "10000 questions are waiting") {
				t.Errorf("the heading does not count every pending question: %q", count[1])
			}
			if want := "Showing 1–25 (page 1 of 400)"; shown != want {
				t.Errorf("range %q, want %q", shown, want)
			}
			cards := cardIDRe.FindAllStringSubmatch(first.body, -1)
			if len(cards) != pageSize || cards[0][1] != qs[0].ID {
				t.Errorf("page 1: %d cards, the first is not the nearest deadline", len(cards))
			}
			for k, m := range cards {
				if m[1] != qs[k].ID {
					t.Errorf("page 1, card %d: not in deadline order", k+1)
					break
				}
			}
			last := c.getPage("/?page=400").body
			lastCards := cardIDRe.FindAllStringSubmatch(last, -1)
			if len(lastCards) != pageSize || lastCards[pageSize-1][1] != qs[len(qs)-1].ID {
				t.Errorf("page 400: %d cards, the last is not the latest deadline", len(lastCards))
			}
			sync := firstSync(t, c, e, "")
			t.Logf("live stream sync at %d pending: %d bytes, count %d, %d questions", len(qs), sync.bytes, sync.Count, len(sync.Questions))
			if sync.Count != len(qs) {
				t.Errorf("the live stream counts %d pending questions, want %d", sync.Count, len(qs))
			}
			// Only the page shown travels (the inbox's first page), not
			// every pending question: ~1.5 MB at 10,000 before.
			if len(sync.Questions) != pageSize || sync.Questions[0].ID != qs[0].ID || sync.bytes > 16<<10 {
				t.Errorf("the sync event holds %d questions in %d bytes, want the first page of %d (nearest deadline %s first) in under 16 KB",
					len(sync.Questions), sync.bytes, pageSize, qs[0].ID)
			}
			if last := firstSync(t, c, e, "?page=400"); len(last.Questions) != pageSize || last.Questions[pageSize-1].ID != qs[len(qs)-1].ID {
				t.Errorf("the stream of page 400 does not hold that page's questions")
			}
			if one := firstSync(t, c, e, "?question="+qs[5000].ID); !slices.ContainsFunc(one.Questions, func(s syncEntry) bool { return s.ID == qs[5000].ID }) {
				t.Errorf("the stream of a question's page does not say that question is pending")
			}
		})
	}
}

// syncEvent is the first event of the live stream, and its size.
type syncEvent struct {
	Count     int         `json:"count"`
	Questions []syncEntry `json:"questions"`
	bytes     int
}

// firstSync opens the live stream (query: the page's own parameters) and
// returns its first event (sync).
func firstSync(t *testing.T, c *client, e *env, query string) syncEvent {
	t.Helper()
	u, _ := url.Parse(e.srv.URL + "/inbox/events" + query)
	req, _ := http.NewRequest("GET", u.String(), nil)
	for _, ck := range c.hc.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 64<<20)
	typ := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			typ = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok && typ == "sync" {
			var d syncEvent
			if err := json.Unmarshal([]byte(v), &d); err != nil {
				t.Fatal(err)
			}
			d.bytes = len(v)
			return d
		}
	}
	t.Fatal(fmt.Sprint("no sync event: ", sc.Err()))
	return syncEvent{}
}
