package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func adaptiveReq(t *testing.T) domain.AskRequest {
	req := authQuestion()
	req.Targets, req.Questions = req.Targets[:1], nil
	require.NoError(t, json.Unmarshal([]byte(`{"context":"Pick how it signs in.","context_image":{"url":"https://img.example/arch.png","alt":"the architecture"},
	 "questions":[
	 {"question":"Which auth?","header":"Auth","options":[{"label":"API key","image":{"url":"https://img.example/k.png","alt":"a key"}},{"label":"OAuth","default":true}]},
	 {"question":"Ticket?","header":"Ticket","options":[],"show_if":{"item":0,"any_of":["API key"]},"image":{"url":"https://img.example/t.png","alt":"a ticket"},
	  "other":{"pattern":"OPS-[0-9]+","max_length":12,"hint":"a ticket id like OPS-123"}},
	 {"question":"Scopes?","header":"Scopes","multiSelect":true,"options":[{"label":"read","default":true},{"label":"write"}],"show_if":{"item":0,"none_of":["API key"]}}]}`), &req))
	return req
}

// A question that adapts, on Slack: the defaults are pre-selected, only
// the items their condition shows are asked, and the message is updated
// when a choice changes that; pictures are image blocks with alt text,
// and the fake's Block Kit validator accepts every block (else the post
// would fail).
func TestSlackConditionalItemsDefaultsAndPictures(t *testing.T) {
	e := newEnv(t)
	q := e.ask(adaptiveReq(t))
	ts := e.copyOn(q, "C1").MessageTS
	m, _ := e.fake.Message("C1", ts)
	blocks := string(m.Blocks)
	assert.Contains(t, blocks, `"initial_option":{"text":{"type":"plain_text","text":"OAuth"`, "the default is pre-selected")
	assert.Contains(t, blocks, `"initial_options":[{"text":{"type":"plain_text","text":"read"`)
	assert.Contains(t, blocks, "Scopes", "shown: OAuth does not hide it")
	assert.NotContains(t, blocks, "Ticket?", "hidden until API key is chosen")
	assert.Contains(t, blocks, `"image_url":"https://img.example/k.png","alt_text":"a key"`)
	assert.Contains(t, blocks, `"image_url":"https://img.example/arch.png","alt_text":"the architecture"`)

	// Choosing API key updates the message: Ticket? is asked, Scopes? not.
	b0, r0 := e.element("C1", ts, actPick+":0")
	pick := map[string]any{b0: map[string]any{r0["action_id"].(string): map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "0"}}}}
	payload := e.clickPayload(alice, "C1", ts, actPick+":0", pick)
	e.interact(payload)
	e.wait("message updated", func() bool {
		m, _ := e.fake.Message("C1", ts)
		return strings.Contains(string(m.Blocks), "Ticket?")
	})
	m, _ = e.fake.Message("C1", ts)
	assert.NotContains(t, string(m.Blocks), "Scopes?")
	assert.Contains(t, string(m.Blocks), `"initial_option":{"text":{"type":"plain_text","text":"API key"`, "the choice stays selected")
	assert.Contains(t, string(m.Blocks), "a ticket id like OPS-123", "the rules are shown")
	assert.Contains(t, string(m.Blocks), `"image_url":"https://img.example/t.png","alt_text":"a ticket"`)
}

// The modal refuses free text against the item's rules on the field
// (response_action: errors) with the hint, keeps the modal open, and
// records nothing; a valid answer then goes through, the hidden item
// listed in skipped.
func TestSlackModalRefusesTextAgainstTheRules(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Questions = []domain.Item{{Question: "Which ticket?", Header: "Ticket",
		Other: &domain.FreeTextRules{Pattern: `OPS-\d+`, MaxLength: 12, Hint: "a ticket id like OPS-123"}}}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	e.click(alice, "C1", ts, "Answer…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	view := string(e.fake.Views()[0].View)
	assert.Contains(t, view, `"hint":{"emoji":true,"text":"Expected: a ticket id like OPS-123`)
	assert.Contains(t, view, `"max_length":12`)

	rec := e.submitView(alice, "ops twelve")
	var resp struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	assert.Equal(t, "errors", resp.Action)
	assert.Contains(t, resp.Errors[modalBlock], "expected a ticket id like OPS-123")
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, domain.StatusPending, e.get(q).Status, "nothing recorded")

	e.submitView(alice, "OPS-12")
	assert.Equal(t, "OPS-12", e.final(q).Answers["Which ticket?"])
}

// Submit sends only the items shown; a hidden one is skipped, not missing.
func TestSlackSubmitSkipsHiddenItems(t *testing.T) {
	e := newEnv(t)
	q := e.ask(adaptiveReq(t))
	ts := e.copyOn(q, "C1").MessageTS
	b0, r0 := e.element("C1", ts, actPick+":0")
	b2, r2 := e.element("C1", ts, actPick+":2")
	state := map[string]any{
		b0: map[string]any{r0["action_id"].(string): map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "1"}}},
		b2: map[string]any{r2["action_id"].(string): map[string]any{"type": "checkboxes", "selected_options": []any{map[string]any{"value": "1"}}}},
	}
	e.click(bob, "C1", ts, "Submit", state)
	got := e.final(q)
	assert.Equal(t, map[string]string{"Which auth?": "OAuth", "Scopes?": "write"}, got.Answers)
	require.Len(t, got.Skipped, 1)
	assert.Equal(t, "Ticket?", got.Skipped[0].Question)
}
