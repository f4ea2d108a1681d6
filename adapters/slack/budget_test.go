package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longItem is an item as long as the API allows: a 2,000-character question
// and four options with long labels and descriptions.
func longItem(i int, multi bool) domain.Item {
	it := domain.Item{Question: fmt.Sprintf("Q%d ", i+1) + strings.Repeat(fmt.Sprintf("long question %d text ", i+1), 100)[:1990] + fmt.Sprintf(" END%d?", i+1),
		Header: fmt.Sprintf("Part %d", i+1), MultiSelect: multi}
	for j := range 4 {
		it.Options = append(it.Options, domain.Option{
			Label:       fmt.Sprintf("Option %d.%d ", i+1, j+1) + strings.Repeat("label ", 30),
			Description: strings.Repeat(fmt.Sprintf("description %d.%d ", i+1, j+1), 55)})
	}
	return it
}

// Slack refuses a message whose blocks hold more than about 12,000
// characters in all (msg_blocks_too_long). Every message the bridge sends
// — the post and the final update — must stay under that, with the rest
// of the question one click away.
func TestLongQuestionsFitSlacksTotalTextLimit(t *testing.T) {
	cases := map[string]domain.AskRequest{
		"4 long questions": {Questions: []domain.Item{longItem(0, false), longItem(1, true), longItem(2, false), longItem(3, false)}},
		"3 long questions": {Questions: []domain.Item{longItem(0, false), longItem(1, false), longItem(2, true)}},
		"2 long questions and a 3,000-character context": {Questions: []domain.Item{longItem(0, false), longItem(1, false)},
			Context: strings.Repeat("Some **context** for the reader. ", 91)[:2993] + " CTXEND"},
		"1 long question and the longest context": {Questions: []domain.Item{longItem(0, false)},
			Context: strings.Repeat("Context line & more <text>.\n", 290)[:domain.MaxContextLen-7] + " CTXEND"},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			req.RunID, req.AgentID = "run-1", "bot"
			req.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
			q := e.ask(req)
			c := e.copyOn(q, "C1")
			require.Empty(t, c.Error, "the post was refused")
			for _, call := range e.fake.Calls("chat.postMessage") {
				require.Empty(t, call.Error, "chat.postMessage")
			}
			m, _ := e.fake.Message("C1", c.MessageTS)
			assert.LessOrEqual(t, len([]rune(strings.ReplaceAll(m.Texts(), "\n", ""))), maxBlocksText)

			// What was shortened is one click away, in full.
			for i, it := range req.Questions {
				e.click(alice, "C1", c.MessageTS, fmt.Sprintf("%s:%d", actFull, i), nil)
				e.wait("the full question", func() bool { return len(e.fake.Views()) == i+1 })
				v := e.fake.Views()[i]
				assert.True(t, strings.Contains(string(v.View), fmt.Sprintf("END%d?", i+1)), "the end of the question")
				assert.True(t, strings.Contains(string(v.View), it.Options[3].Description[:40]), "the last option's description")
			}
			for _, call := range e.fake.Calls("views.open") {
				require.Empty(t, call.Error, "views.open")
			}
			if req.Context != "" {
				e.click(alice, "C1", c.MessageTS, actFullContext, nil)
				e.wait("the full context", func() bool { return len(e.fake.Views()) == len(req.Questions)+1 })
				views := e.fake.Views()
				assert.True(t, strings.Contains(string(views[len(views)-1].View), " CTXEND"), "the end of the context")
				for _, call := range e.fake.Calls("views.open") {
					require.Empty(t, call.Error, "views.open")
				}
			}

			// The final update, with long free-text answers, is accepted too.
			answers := map[string]domain.StringList{}
			for _, it := range req.Questions {
				answers[it.Question] = domain.StringList{strings.Repeat("my own long answer ", 200)}
			}
			_, err := e.router.Answer(context.Background(), q.ProjectID, q.ID, domain.RespondRequest{Answers: answers},
				domain.Person{Platform: "slack", ID: alice.id, Name: alice.name})
			require.NoError(t, err)
			e.wait("the final update", func() bool { return len(e.fake.Calls("chat.update")) > 0 })
			for _, call := range e.fake.Calls("chat.update") {
				require.Empty(t, call.Error, "chat.update was refused: the copy keeps live buttons")
			}
			m, _ = e.fake.Message("C1", c.MessageTS)
			assert.Contains(t, m.Texts(), "Answered by")
			var blocks []map[string]any
			require.NoError(t, json.Unmarshal(m.Blocks, &blocks))
			for _, b := range blocks {
				assert.NotEqual(t, "actions", b["type"], "no answer controls left on the final copy")
			}
		})
	}
}

// BenchmarkRenderLongestQuestion renders the longest question the API
// accepts (four items, every text at its limit, the longest context): the
// worst case of fitting Slack's total text limit.
func BenchmarkRenderLongestQuestion(b *testing.B) {
	q := &domain.Question{ID: "00000000-0000-8000-aa00-000000000000", AgentName: "bot",
		Context:   strings.Repeat("Some **context** & [a link](https://example.com/x). ", 160)[:domain.MaxContextLen],
		Questions: []domain.Item{longItem(0, false), longItem(1, true), longItem(2, false), longItem(3, false)}}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		blocks, _ := renderQuestion(q, now)
		if blocksText(blocks) > maxBlocksText {
			b.Fatal("over the limit")
		}
	}
}

func BenchmarkRenderShortQuestion(b *testing.B) {
	q := &domain.Question{ID: "00000000-0000-8000-aa00-000000000000", AgentName: "bot",
		Questions: []domain.Item{{Question: "Which auth method?", Options: []domain.Option{{Label: "OAuth 2.0"}, {Label: "API key"}}}}}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		renderQuestion(q, now)
	}
}

// textOver decides as blocksText does, and counts the same total when a
// message is over: its shortcut (JSON no longer than the limit) never lets
// a message over the limit through.
func TestTextOverAgreesWithBlocksText(t *testing.T) {
	item := func(text string) domain.Item {
		return domain.Item{Question: text, Header: "H", Options: []domain.Option{{Label: text[:min(len(text), 70)], Description: text}, {Label: "No"}}}
	}
	texts := map[string]string{
		"ascii":              "Which auth method?",
		"escaped":            strings.Repeat("<a> & \"b\" \\ \n\t\x01 ", 40),
		"astral":             strings.Repeat("🚀𝄞 ", 300),
		"two-byte":           strings.Repeat("éü ", 400),
		"line separators":    strings.Repeat("a\u2028b\u2029 ", 200),
		"invalid UTF-8":      strings.Repeat("x\xff\xfey ", 300),
		"mentions and links": strings.Repeat("@here <!channel> [l](https://example.com/?a=1&b=2) ", 60),
	}
	now := time.Now()
	for name, text := range texts {
		for _, q := range []*domain.Question{
			{ID: "00000000-0000-8000-aa00-000000000000", AgentName: "bot", Questions: []domain.Item{item(text)}},
			{ID: "00000000-0000-8000-aa00-000000000001", AgentName: "bot", Context: text, Questions: []domain.Item{item(text), item(text), item(text)}},
			{ID: "00000000-0000-8000-aa00-000000000002", AgentName: "bot", Questions: []domain.Item{longItem(0, false), longItem(1, true), item(text)}},
		} {
			blocks, _ := renderQuestion(q, now)
			b, err := json.Marshal(blocks)
			require.NoError(t, err)
			n := blocksText(blocks)
			require.LessOrEqual(t, n, len(b), "%s: a unit of text takes at least a byte of JSON", name)
			for _, limit := range []int{0, n - 1, n, n + 1, len(b) - 1, len(b), len(b) + 1, maxBlocksText} {
				total, over := textOver(blocks, limit)
				require.Equal(t, n > limit, over, "%s: limit %d, text %d, JSON %d bytes", name, limit, n, len(b))
				if over {
					require.Equal(t, n, total, name)
				}
			}
		}
	}
}
