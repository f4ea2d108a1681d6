package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// Edit before approve: "Edit…" opens a modal with the action's arguments
// (a Bash command as text, anything else as pretty JSON); submitting it
// allows the edited action through the Router (edited_input, with the
// digest of the action the person saw).

// editText is what the edit modal holds for a: the command of a
// Bash-like action, else the arguments as pretty JSON.
func editText(a *domain.Action) (text string, command bool) {
	if cmd, _, ok := actiontext.SplitCommand(a.Tool, a.Input); ok {
		return cmd, true
	}
	if p := actiontext.Pretty(a.Input); utf8.RuneCountInString(p) <= maxTextInputLength {
		return p, false
	}
	return string(a.Input), false // compact, when indenting would not fit the text box
}

// openEditor answers "Edit…" with the edit modal, or says why not.
func (a *Adapter) openEditor(ctx context.Context, x *exchange, q *domain.Question, who domain.Person) {
	if !a.gate(ctx, x, q, who) {
		return
	}
	o := a.opts(q)
	if !canEdit(q, o) {
		x.reply(ctx, ephemeral("This approval cannot be edited (allow_edit: false); allow or deny it as asked."))
		return
	}
	text, command := editText(q.Action)
	if n := utf8.RuneCountInString(text); n > maxTextInputLength {
		where := "with `askbridge questions answer " + q.ID + " --edit '<JSON>'`"
		if o.PublicURL != "" {
			where = "on its page: " + o.fullAction(q)
		}
		x.reply(ctx, ephemeral(fmt.Sprintf("These arguments are %d characters, too long to edit in Discord (a text box holds %d); edit them %s. Nothing was recorded.", n, maxTextInputLength, where)))
		return
	}
	label, ph := "Arguments (JSON)", "The tool's arguments as a JSON object"
	if command {
		label, ph = "Command", "The command to run instead"
	}
	x.reply(ctx, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{
			CustomID: editSaveID(q),
			Title:    domain.Shorten("Edit, then allow: "+q.Action.Tool, maxModalTitle),
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.TextInput{CustomID: textInputID, Label: label, Style: discordgo.TextInputParagraph,
					Placeholder: ph, Value: text, Required: true, MinLength: 1, MaxLength: maxTextInputLength},
			}}},
		},
	})
}

// editSubmitted allows the action with the edited arguments. seen is the
// digest prefix of the action the modal was opened on.
func (a *Adapter) editSubmitted(ctx context.Context, x *exchange, q *domain.Question, who domain.Person, seen string) {
	if !a.gate(ctx, x, q, who) {
		return
	}
	if !canEdit(q, a.opts(q)) {
		x.reply(ctx, ephemeral("This approval cannot be edited (allow_edit: false); nothing was recorded."))
		return
	}
	if shortDigest(q.Action.Digest) != seen {
		x.reply(ctx, ephemeral(words.ActionChanged().Text))
		return
	}
	text := x.in.text()
	if text == "" {
		x.reply(ctx, ephemeral("The edit was empty; nothing was recorded."))
		return
	}
	var input json.RawMessage
	if _, command := editText(q.Action); command {
		in, err := actiontext.ReplaceCommand(q.Action.Input, text)
		if err != nil {
			a.failed(ctx, x, err)
			return
		}
		input = in
	} else {
		if msg := jsonProblem(text); msg != "" {
			x.reply(ctx, ephemeral(msg+"; nothing was recorded. Press Edit… again and fix it."+yourText(text)))
			return
		}
		input = json.RawMessage(text)
	}
	a.respond(ctx, x, q, who, domain.RespondRequest{EditedInput: input, Digest: q.Action.Digest})
}

// jsonProblem says in plain words why text is not a JSON object of
// arguments, or "".
func jsonProblem(text string) string {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf("The arguments are not valid JSON (the problem is near character %d)", se.Offset)
		}
		return "The arguments are not valid JSON"
	}
	if _, ok := v.(map[string]any); !ok {
		return `The arguments must be a JSON object, such as {"command": "ls"}`
	}
	return ""
}

// yourText gives the person back what they typed (a modal does not keep
// it), when it fits an ephemeral message.
func yourText(text string) string {
	s := "\nWhat you typed:\n```json\n" + fence(text) + "\n```"
	if utf8.RuneCountInString(s) > maxContent-400 || strings.Contains(text, "\x00") {
		return ""
	}
	return s
}
