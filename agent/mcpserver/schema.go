package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/google/jsonschema-go/jsonschema"
)

// Item is one question of an ask_user call.
type Item struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
	// Optional enhancements (docs/openapi.yaml): a condition on an earlier
	// answer, rules for free text, a picture.
	ShowIf *domain.ShowIf        `json:"show_if,omitempty"`
	Other  *domain.FreeTextRules `json:"other,omitempty"`
	Image  *domain.Image         `json:"image,omitempty"`
}

// Option is one choice of an item.
type Option struct {
	Label       string        `json:"label"`
	Description string        `json:"description,omitempty"`
	Default     bool          `json:"default,omitempty"`
	Image       *domain.Image `json:"image,omitempty"`
}

// Input is the ask_user input: Claude Code's AskUserQuestion shape.
type Input struct {
	Questions []Item `json:"questions"`
}

// Statuses of a call's result (Output.Status).
const (
	StatusAnswered  = "answered"  // someone answered
	StatusExpired   = "expired"   // nobody answered in time
	StatusCancelled = "cancelled" // dismissed, withdrawn or replaced
	StatusPending   = "pending"   // asked, but waiting failed; the question is still open
	StatusInvalid   = "invalid"   // the input broke a rule; nothing was sent
	StatusNotSent   = "not_sent"  // the bridge refused or could not be reached
)

// Statuses lists every Output.Status.
var Statuses = []string{StatusAnswered, StatusExpired, StatusCancelled, StatusPending, StatusInvalid, StatusNotSent}

// Output is the structured result of ask_user.
type Output struct {
	Status string `json:"status"`
	// Answers maps each question to the chosen label(s), joined with ", ",
	// or the person's own words.
	Answers map[string]string `json:"answers"`
	// Selections are the same as lists.
	Selections map[string][]string `json:"selections"`
	QuestionID string              `json:"question_id,omitempty"`
	// Problems lists what to fix when Status is invalid.
	Problems []string `json:"problems,omitempty"`
}

func intp(n int) *int { return &n }

func floatp(f float64) *float64 { return &f }

// imageSchema is a picture: an https URL and its alt text.
func imageSchema(of string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Description: "A picture shown with " + of + ": an https URL (no data: URLs) and alt text describing it. Surfaces show it or link to it; the bridge never fetches it.",
		Properties: map[string]*jsonschema.Schema{
			"url": {Type: "string", MinLength: intp(9), MaxLength: intp(domain.MaxImageURLLen), Pattern: "^https://"},
			"alt": {Type: "string", MinLength: intp(1), MaxLength: intp(domain.MaxImageAltLen)},
		},
		Required:             []string{"url", "alt"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// InputSchema is the JSON schema of the ask_user input.
func InputSchema() *jsonschema.Schema {
	option := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"label": {Type: "string", MinLength: intp(1), MaxLength: intp(domain.MaxLabelLen),
				Description: "The text of the choice the person clicks, 1-5 words. Never \"Other\"."},
			"description": {Type: "string", MaxLength: intp(domain.MaxDescriptionLen),
				Description: "What choosing this option means or implies."},
			"default": {Type: "boolean",
				Description: "Optional: pre-selected for the person (one per single-select question). Unlike recommended, it is what is chosen unless the person changes it."},
			"image": imageSchema("this option"),
		},
		Required: []string{"label", "description"},
	}
	item := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"question": {Type: "string", MinLength: intp(1), MaxLength: intp(domain.MaxQuestionLen),
				Description: "The complete question, ending with a question mark. Include the context the person needs to answer it without reading your conversation."},
			"header": {Type: "string", MinLength: intp(1), MaxLength: intp(domain.MaxHeaderLen),
				Description: "A very short label shown as a chip, at most 12 characters (e.g. \"Auth method\", \"Deploy\")."},
			"options": {Type: "array", Items: option, MinItems: intp(domain.MinOptions), MaxItems: intp(domain.MaxOptions),
				Description: "2-4 choices; omit for an open-ended question answered in free text. Do not include an \"Other\" option; it is added automatically."},
			"multiSelect": {Type: "boolean",
				Description: "true lets the person choose several options; answers are then joined with \", \"."},
			"show_if": {Type: "object",
				Description: "Optional: ask this question only when the answer to an earlier question (with options) is one of any_of, or none of none_of. A question not asked is absent from answers.",
				Properties: map[string]*jsonschema.Schema{
					"item":    {Type: "integer", Minimum: floatp(0), Description: "Index of the earlier question (0 is the first)."},
					"any_of":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "Labels of that question's options that show this one."},
					"none_of": {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "Labels of that question's options that hide this one."},
				},
				Required:             []string{"item"},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
			"other": {Type: "object",
				Description: "Optional rules for the person's own words (the free-text answer); an answer breaking them is refused with the hint, and the person tries again.",
				Properties: map[string]*jsonschema.Schema{
					"pattern":    {Type: "string", MaxLength: intp(domain.MaxPatternLen), Description: "RE2 regular expression the whole answer must match, e.g. OPS-[0-9]+."},
					"min_length": {Type: "integer", Minimum: floatp(0)},
					"max_length": {Type: "integer", Minimum: floatp(1), Maximum: floatp(domain.MaxAnswerLen)},
					"number": {Type: "object", Description: "The answer must be a number.",
						Properties:           map[string]*jsonschema.Schema{"min": {Type: "number"}, "max": {Type: "number"}, "integer": {Type: "boolean"}},
						AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
					"hint": {Type: "string", MaxLength: intp(domain.MaxHintLen), Description: "What to type, e.g. \"a ticket id like OPS-123\"."},
				},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
			"image": imageSchema("this question"),
		},
		Required: []string{"question", "header"},
	}
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"questions": {Type: "array", Items: item, MinItems: intp(1), MaxItems: intp(domain.MaxItems),
				Description: "1-4 questions asked together; the person answers all of them at once."},
		},
		Required:             []string{"questions"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// OutputSchema is the JSON schema of the ask_user structured result. Every
// property has one type, so hosts that accept only portable schemas take it.
func OutputSchema() *jsonschema.Schema {
	statuses := make([]any, len(Statuses))
	for i, s := range Statuses {
		statuses[i] = s
	}
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"status": {Type: "string", Enum: statuses,
				Description: "answered; expired or cancelled (no answer: continue without it); pending (waiting failed, the question is still open); invalid (fix the problems and call again); not_sent."},
			"answers": {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"},
				Description: "Each question's text mapped to the chosen label(s), joined with \", \", or the person's own words."},
			"selections": {Type: "object",
				AdditionalProperties: &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
				Description:          "The same as answers, as lists: one element per chosen label or free text."},
			"question_id": {Type: "string", Description: "The askbridge question id."},
			"problems": {Type: "array", Items: &jsonschema.Schema{Type: "string"},
				Description: "What to fix before calling again (status invalid)."},
		},
		Required: []string{"status", "answers", "selections"},
	}
}

// decodeInput reads the call's arguments and checks them against the tool's
// rules, returning every problem, each naming the question by index.
func decodeInput(raw json.RawMessage) (Input, []string) {
	var in Input
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return in, []string{"questions: required (1-4 questions)"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, []string{decodeProblem(err)}
	}
	var ps []string
	items := make([]domain.Item, len(in.Questions))
	for i, it := range in.Questions {
		f := fmt.Sprintf("questions[%d]", i)
		if strings.TrimSpace(it.Header) == "" {
			ps = append(ps, f+".header: required, at most 12 characters")
		}
		items[i] = it.domainItem()
	}
	for _, d := range domain.ValidateItems(domain.NormalizeItems(items)) {
		ps = append(ps, d.Field+": "+d.Problem)
	}
	return in, ps
}

func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "arguments"
		}
		want := map[string]string{"string": "a string", "bool": "true or false", "[]mcpserver.Item": "an array of questions",
			"[]mcpserver.Option": "an array of options", "mcpserver.Input": "an object with questions", "mcpserver.Item": "a question object",
			"mcpserver.Option": "an option object"}[te.Type.String()]
		if want == "" {
			want = "another type"
		}
		return fmt.Sprintf("%s: must be %s, got %s", field, want, te.Value)
	case errors.As(err, &se):
		return "arguments: not valid JSON"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`) + ": unknown field; allowed: questions[].question, header, options[].label, options[].description, options[].default, options[].image, multiSelect, show_if, other, image"
	}
	return "arguments: not valid"
}

// domainItem is the item as the bridge asks it.
func (it Item) domainItem() domain.Item {
	item := domain.Item{Question: it.Question, Header: it.Header, MultiSelect: it.MultiSelect, ShowIf: it.ShowIf, Other: it.Other, Image: it.Image}
	for _, o := range it.Options {
		item.Options = append(item.Options, domain.Option{Label: o.Label, Description: o.Description, Default: o.Default, Image: o.Image})
	}
	return item
}
