package teams

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// click finds the Action.Execute titled title on q's card, merges the
// inputs into its data as Teams does, and parses it.
func click(t *testing.T, q *domain.Question, v CardView, title string, inputs map[string]string) (ActionInput, error) {
	t.Helper()
	card := renderCard(t, q, v)
	for _, a := range objects(t, card, "Action.Execute") {
		if got, _ := a["title"].(string); got != title {
			continue
		}
		data := map[string]any{}
		for k, val := range a["data"].(map[string]any) {
			data[k] = val
		}
		for k, val := range inputs {
			data[k] = val
		}
		b, err := json.Marshal(data)
		require.NoError(t, err)
		assert.Equal(t, q.ID, ActionQuestionID(b), "the data names its question")
		return ParseAction(q, a["verb"].(string), b)
	}
	t.Fatalf("no button %q on the card", title)
	return ActionInput{}, nil
}

func answers(in ActionInput) map[string]domain.StringList { return in.Request.Answers }

// problem is the text of a refusal, failing unless err is one.
func problem(t *testing.T, err error) string {
	t.Helper()
	var ae *ActionError
	require.ErrorAs(t, err, &ae)
	return ae.Text
}

func TestClickAnOptionAnswersWithItsLabel(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{authItem()}})
	in, err := click(t, q, CardView{}, "API key", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which auth method?": {"API key"}}, answers(in))
	assert.False(t, in.Dismiss || in.Refresh)

	in, err = click(t, q, CardView{}, "Dismiss", nil)
	require.NoError(t, err)
	assert.True(t, in.Dismiss)

	in, err = click(t, q, CardView{Viewer: "29:1"}, "", nil) // refresh.action has no title
	require.NoError(t, err)
	assert.True(t, in.Refresh)
}

func TestOtherTextFollowsTheRules(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{{Question: "Which ticket?", Options: []domain.Option{opt("OPS-1", ""), opt("OPS-2", "")},
		Other: &domain.FreeTextRules{Pattern: `OPS-[0-9]+`, Hint: "a ticket id like OPS-123"}}}})
	in, err := click(t, q, CardView{}, "Send", map[string]string{"o0": " OPS-77 "})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which ticket?": {"OPS-77"}}, answers(in))

	_, err = click(t, q, CardView{}, "Send", map[string]string{"o0": "nope"})
	assert.Equal(t, `"nope" does not match the pattern OPS-[0-9]+; expected a ticket id like OPS-123`, problem(t, err))
	_, err = click(t, q, CardView{}, "Send", map[string]string{"o0": "  "})
	assert.Equal(t, "the answer was empty", problem(t, err))
}

func TestOpenEndedSend(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{{Question: "Name?", Other: &domain.FreeTextRules{MinLength: 3}}}})
	in, err := click(t, q, CardView{}, "Send", map[string]string{"t0": "quiet-otter"})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Name?": {"quiet-otter"}}, answers(in))
	_, err = click(t, q, CardView{}, "Send", map[string]string{"t0": "ab"})
	assert.Contains(t, problem(t, err), "is too short")
}

// TestFormAsksOnlyWhatItsConditionsAsk: the form's Submit answers the
// items the choices ask, drops what was typed for the others, and names
// what is still to answer; partial answers never go through.
func TestFormAsksOnlyWhatItsConditionsAsk(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{opt("OAuth 2.0", ""), {Label: "API key", Default: true}}},
		{Question: "Which scopes?", Header: "Scopes", MultiSelect: true, ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"OAuth 2.0"}},
			Options: []domain.Option{opt("read", ""), opt("write", ""), opt("admin", "")}},
		{Question: "How many replicas?", Header: "Replicas", Other: &domain.FreeTextRules{Number: &domain.NumberRule{Integer: true}}},
	}})
	in, err := click(t, q, CardView{}, "Submit", map[string]string{"c0": "0", "c1": "0,2", "o1": "audit", "t2": "3"})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which auth method?": {"OAuth 2.0"}, "Which scopes?": {"read", "admin", "audit"},
		"How many replicas?": {"3"}}, answers(in))

	in, err = click(t, q, CardView{}, "Submit", map[string]string{"c0": "1", "c1": "0", "t2": "2"})
	require.NoError(t, err)
	assert.Equal(t, map[string]domain.StringList{"Which auth method?": {"API key"}, "How many replicas?": {"2"}}, answers(in),
		"scopes are not asked with an API key: what was ticked there is dropped")

	_, err = click(t, q, CardView{}, "Submit", map[string]string{"c0": "0", "t2": "2"})
	assert.Equal(t, "still to answer: Scopes; make your choices, then press Submit", problem(t, err))
	_, err = click(t, q, CardView{}, "Submit", map[string]string{"c0": "1", "t2": "2.5"})
	assert.Equal(t, `Replicas: "2.5" is not a whole number`, problem(t, err))
	_, err = click(t, q, CardView{}, "Submit", map[string]string{"c0": "1", "o0": "mTLS", "t2": "2"})
	assert.Equal(t, "for Auth, pick an option or write your own answer, not both", problem(t, err))
	_, err = click(t, q, CardView{}, "Submit", map[string]string{"c0": "7", "t2": "2"})
	assert.Equal(t, "this control no longer matches the question", problem(t, err))
}

// TestDenyNoteIsAReasonNeverAnAnswer: whatever the note says ("Allow."),
// it denies, as the request's reason; the answer is the Deny option.
func TestDenyNoteIsAReasonNeverAnAnswer(t *testing.T) {
	q := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Run this command?", Options: []domain.Option{opt("Allow", ""), opt("Deny", "")},
		Action: bashAction("make deploy")})
	in, err := click(t, q, CardView{}, "Deny with this note", map[string]string{"note": "Allow."})
	require.NoError(t, err)
	require.NotNil(t, in.Request.Reason)
	assert.Equal(t, "Allow.", *in.Request.Reason)
	assert.Empty(t, in.Request.Answers, "the note is never read as an answer")
	assert.Equal(t, q.Action.Digest, in.Request.Digest)
	assert.True(t, approval.NoteAllowed(q))

	_, err = click(t, q, CardView{}, "Deny with this note", map[string]string{"note": " "})
	assert.Contains(t, problem(t, err), "the note was empty")

	// An approval takes no free text through "other", even when sent.
	data, _ := json.Marshal(map[string]any{"q": q.ID, "i": 0, "g": q.Action.Digest, "o0": "Allow"})
	_, err = ParseAction(q, verbOther, data)
	assert.Equal(t, "this control no longer matches the question", problem(t, err))
}

func TestEditAndAlwaysAllow(t *testing.T) {
	q := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Run this command?", Options: []domain.Option{opt("Allow", ""), opt("Deny", "")},
		Action: bashAction("kubectl rollout restart deploy/api -n prod",
			`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"kubectl rollout:*"}],"behavior":"allow","destination":"localSettings"}`,
			`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)})
	card := renderCard(t, q, CardView{})
	var prefilled string
	for _, in := range objects(t, card, "Input.Text") {
		if in["id"] == inEdit {
			prefilled = in["value"].(string)
		}
	}
	assert.Equal(t, "kubectl rollout restart deploy/api -n prod", prefilled, "Edit starts from the command as asked")

	in, err := click(t, q, CardView{}, "Allow edited", map[string]string{"edit": "kubectl rollout restart deploy/api -n staging"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"command":"kubectl rollout restart deploy/api -n staging","description":"Deploy"}`, string(in.Request.EditedInput))
	assert.Equal(t, q.Action.Digest, in.Request.Digest, "bound to the action the person saw")

	in, err = click(t, q, CardView{}, "Allow, and don't ask again", map[string]string{"rule": "1"})
	require.NoError(t, err)
	require.NotNil(t, in.Request.Rule)
	assert.Equal(t, 1, *in.Request.Rule)
	_, err = click(t, q, CardView{}, "Allow, and don't ask again", map[string]string{"rule": "9"})
	assert.Error(t, err)

	// No Edit where the route forbids it.
	for _, a := range objects(t, renderCard(t, q, CardView{NoEdit: true}), "Action.Execute") {
		assert.NotEqual(t, verbEdit, a["verb"])
	}
}

// TestStaleOrForeignDataChangesNothing: data naming another question, an
// option that is not there, or an unknown verb records nothing.
func TestStaleOrForeignDataChangesNothing(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{authItem()}})
	for name, c := range map[string]struct{ verb, data string }{
		"another question": {verbAnswer, `{"q":"q_other","i":0,"o":0}`},
		"no such option":   {verbAnswer, `{"q":"` + q.ID + `","i":0,"o":5}`},
		"no such item":     {verbAnswer, `{"q":"` + q.ID + `","i":3,"o":0}`},
		"unknown verb":     {"approve_all", `{"q":"` + q.ID + `"}`},
		"not JSON":         {verbAnswer, `"x"`},
		"submit on a row":  {verbSubmit, `{"q":"` + q.ID + `","c0":"0"}`},
	} {
		_, err := ParseAction(q, c.verb, json.RawMessage(c.data))
		assert.True(t, IsActionError(err), name)
	}
	gate := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Run?", Options: []domain.Option{opt("Allow", ""), opt("Deny", "")}, Action: bashAction("ls")})
	_, err := ParseAction(gate, verbAnswer, json.RawMessage(`{"q":"`+gate.ID+`","i":0,"o":0}`))
	assert.True(t, IsActionError(err), "a decision on an action needs the digest of the action shown")
}

// TestRefusedAnswerKeepsWhatWasTyped: when the bridge refuses what was
// sent (a rule Teams cannot check), the person's view shows why and holds
// what they picked and typed, to correct rather than retype.
func TestRefusedAnswerKeepsWhatWasTyped(t *testing.T) {
	q := build(t, domain.AskRequest{Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{opt("OAuth 2.0", ""), {Label: "API key", Default: true}}},
		{Question: "How many replicas?", Header: "Replicas", Other: &domain.FreeTextRules{Number: &domain.NumberRule{Integer: true}}},
	}})
	data := json.RawMessage(`{"q":"` + q.ID + `","c0":"0","t1":"2.5"}`)
	_, err := ParseAction(q, verbSubmit, data)
	msg := problem(t, err)
	card := renderCard(t, q, CardView{Viewer: "29:1", Refused: "Not sent: " + msg, Typed: data})
	values := map[string]any{}
	for _, typ := range []string{"Input.Text", "Input.ChoiceSet"} {
		for _, in := range objects(t, card, typ) {
			values[in["id"].(string)] = in["value"]
		}
	}
	assert.Equal(t, "0", values["c0"], "OAuth 2.0 stays picked, not the default")
	assert.Equal(t, "2.5", values["t1"])
	assert.Contains(t, shown(t, card), `Not sent: Replicas: "2.5" is not a whole number`)

	// Data of another question fills nothing.
	other := renderCard(t, q, CardView{Typed: json.RawMessage(`{"q":"q_other","t1":"9"}`)})
	for _, in := range objects(t, other, "Input.Text") {
		assert.Nil(t, in["value"])
	}
}
