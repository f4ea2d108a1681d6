package teams

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/domain"
)

// batchOf is a batch of n Bash approvals of one run; decide may settle
// some of them.
func batchOf(t testing.TB, n int, cmd func(i int) string, decide func(i int, q *domain.Question) *domain.Question) *domain.Batch {
	t.Helper()
	var qs []*domain.Question
	for i := range n {
		q := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: fmt.Sprintf("Run call %d?", i+1),
			Options: []domain.Option{opt("Allow", ""), opt("Deny", "")}, Action: bashAction(cmd(i))})
		q.ID = fmt.Sprintf("q_call%02d", i)
		q.BatchID = "q_call00"
		if decide != nil {
			q = decide(i, q)
		}
		qs = append(qs, q)
	}
	return domain.NewBatch("q_call00", qs)
}

func goldenBatches(t testing.TB) map[string]*domain.Batch {
	cmd := func(i int) string { return fmt.Sprintf("kubectl scale deploy/api-%d --replicas=%d", i, i+2) }
	return map[string]*domain.Batch{
		"batch-pending": batchOf(t, 3, cmd, nil),
		"batch-mixed": batchOf(t, 3, cmd, func(i int, q *domain.Question) *domain.Question {
			switch i {
			case 0:
				a := answered(q, map[string]string{q.Questions[0].Question: "Allow"})
				a.Decision = &domain.Decision{Behavior: domain.BehaviorAllow, Input: q.Action.Input}
				return a
			case 1:
				d := answered(q, map[string]string{q.Questions[0].Question: "Deny"})
				d.Reason = "not this one"
				return d
			}
			return q
		}),
		"batch-decided": batchOf(t, 2, cmd, func(i int, q *domain.Question) *domain.Question {
			return answered(q, map[string]string{q.Questions[0].Question: "Allow"})
		}),
		"batch-ten-long": batchOf(t, 10, func(i int) string { return long(fmt.Sprintf("psql -c 'call %d'", i), 3000) }, nil),
		"batch-largest":  batchOf(t, domain.MaxBatchApprovals, func(i int) string { return long(fmt.Sprintf("psql -c 'call %d'", i), 20000) }, nil),
	}
}

// TestBatchCardsFitTeams: every batch card is within Teams' card size and
// button rows; a pending batch has Allow all N / Deny all N for the calls
// it shows, a decided one no controls; a batch too large for a section per
// call says so and links the batch's page.
func TestBatchCardsFitTeams(t *testing.T) {
	var sizes []string
	for name, b := range goldenBatches(t) {
		card, err := BatchCard(b, CardView{PublicURL: "https://bridge.example.com"})
		require.NoError(t, err)
		sizes = append(sizes, fmt.Sprintf("%s (%d calls): %d bytes", name, len(b.Questions), len(card)))
		assert.LessOrEqual(t, len(card), maxCardBytes, name)
		for _, set := range objects(t, card, "ActionSet") {
			assert.LessOrEqual(t, len(set["actions"].([]any)), maxActions, name)
		}
		text := shown(t, card)
		var titles []string
		for _, a := range objects(t, card, "Action.Execute") {
			titles = append(titles, a["title"].(string))
		}
		if b.Pending == 0 {
			assert.Empty(t, titles, name)
			continue
		}
		assert.Contains(t, titles, fmt.Sprintf("Allow all %d", b.Pending), name)
		assert.Contains(t, titles, fmt.Sprintf("Deny all %d", b.Pending), name)
		for i := range b.Questions {
			assert.Contains(t, text, fmt.Sprintf("%d. ", i+1), name)
		}
		if name == "batch-ten-long" {
			allows := 0
			for _, title := range titles {
				if title == "Allow" {
					allows++
				}
			}
			assert.Equal(t, 10, allows, "ten calls keep their own Allow")
		}
		if name == "batch-largest" {
			assert.Contains(t, text, "50 calls are more than one Teams card shows with buttons for each")
			assert.Contains(t, string(card), "https://bridge.example.com/batches/q_call00")
		}
	}
	t.Logf("batch card sizes:\n%s", strings.Join(sizes, "\n"))
	mixed := shown(t, mustBatchCard(t, goldenBatches(t)["batch-mixed"]))
	assert.Contains(t, mixed, "Allowed as asked by Alice Martin")
	assert.Contains(t, mixed, "Denied with a note by Alice Martin: not this one")
	assert.Contains(t, mixed, "2 of 3 decided")
}

func mustBatchCard(t *testing.T, b *domain.Batch) json.RawMessage {
	card, err := BatchCard(b, CardView{})
	require.NoError(t, err)
	return card
}

// clickBatch presses the control titled title on b's card with inputs.
func clickBatch(t *testing.T, b *domain.Batch, title string, inputs map[string]string) (verb string, data json.RawMessage) {
	t.Helper()
	for _, a := range objects(t, mustBatchCard(t, b), "Action.Execute") {
		if a["title"] != title {
			continue
		}
		d := a["data"].(map[string]any)
		for k, v := range inputs {
			d[k] = v
		}
		data, err := json.Marshal(d)
		require.NoError(t, err)
		return a["verb"].(string), data
	}
	t.Fatalf("no control %q on the batch card", title)
	return "", nil
}

// TestBatchAllowAllDecidesTheCallsShown: Allow all and Deny all decide the
// pending calls the card showed, a note denies as the reason, and a call's
// own controls answer that call alone.
func TestBatchAllowAllDecidesTheCallsShown(t *testing.T) {
	b := goldenBatches(t)["batch-mixed"]
	verb, data := clickBatch(t, b, "Allow all 1", nil)
	require.True(t, IsBatchVerb(verb))
	assert.Equal(t, b.ID, BatchActionID(data))
	req, err := ParseBatchAction(b, verb, data)
	require.NoError(t, err)
	assert.Equal(t, domain.BatchRespondRequest{Decision: domain.DecideAllow, Questions: []string{"q_call02"}}, req)

	verb, data = clickBatch(t, b, "Deny all 1 with this note", map[string]string{inAllNote: "Allow."})
	req, err = ParseBatchAction(b, verb, data)
	require.NoError(t, err)
	assert.Equal(t, domain.DecideDeny, req.Decision)
	require.NotNil(t, req.Reason)
	assert.Equal(t, "Allow.", *req.Reason, "the note is the reason, never an answer")
	require.NoError(t, req.Validate())

	_, err = ParseBatchAction(b, verb, json.RawMessage(`{"b":"q_call00","qs":["q_call02"],"all_note":" "}`))
	assert.Contains(t, problem(t, err), "the note was empty")
	_, err = ParseBatchAction(b, verbAllowAll, json.RawMessage(`{"b":"q_call00","qs":["q_elsewhere"]}`))
	assert.True(t, IsActionError(err), "a call not in the batch")
	_, err = ParseBatchAction(b, verbAllowAll, json.RawMessage(`{"b":"q_other","qs":["q_call02"]}`))
	assert.True(t, IsActionError(err), "another batch")

	// The pending call's own Deny with note: its input is its own.
	verb, data = clickBatch(t, b, "Deny with this note", map[string]string{"note_2": "wrong replica count"})
	assert.Equal(t, "q_call02", ActionQuestionID(data))
	in, err := ParseAction(b.Questions[2], verb, data)
	require.NoError(t, err)
	require.NotNil(t, in.Request.Reason)
	assert.Equal(t, "wrong replica count", *in.Request.Reason)
	assert.Equal(t, b.Questions[2].Action.Digest, in.Request.Digest)
}
