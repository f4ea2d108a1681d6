package fakeslack

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits Slack enforces on Block Kit (https://docs.slack.dev/reference/block-kit). A violation makes the
// whole call fail with "invalid_blocks", as Slack does.
const (
	maxBlocksMessage = 50
	maxBlocksModal   = 100
	maxID            = 255
	maxActions       = 25
	maxButtonText    = 75
	maxButtonValue   = 2000
	maxOptionText    = 75
	maxOptionDesc    = 75
	maxOptionValue   = 150
	maxChoiceOptions = 10
	maxSelectOptions = 100
	maxPlaceholder   = 150
	maxSectionText   = 3000
	maxFields        = 10
	maxFieldText     = 2000
	maxHeaderText    = 150
	maxContextElems  = 10
	maxInputLabel    = 2000
	maxInputLength   = 3000
	maxConfirmTitle  = 100
	maxConfirmText   = 300
	maxConfirmButton = 30
	maxModalTitle    = 24
	maxModalButton   = 24
	maxPrivateMeta   = 3000
	maxCallbackID    = 255
	maxMessageText   = 40000
	maxImageURL      = 3000 // image blocks and elements: image_url
	maxImageAlt      = 2000 // alt_text
	maxImageTitle    = 2000
	maxInputHint     = 2000
	// maxBlocksText is the undocumented ceiling on the text of all blocks
	// of one message: Slack answers msg_blocks_too_long above about 12,000
	// characters (slackapi/bolt-js#2509, #2867). The fake
	// applies it to modals too, which is stricter than confirmed.
	maxBlocksText = 12000
)

type obj = map[string]any

type checker struct {
	problems []string
}

func (c *checker) bad(path, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("[ERROR] "+format+" [json-pointer:%s]", append(args, path)...))
}

func str(o obj, k string) (string, bool) {
	v, ok := o[k]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func n(s string) int { return utf8.RuneCountInString(s) }

// text checks a text object: its type, non-empty text and length.
func (c *checker) text(path string, v any, max int, plainOnly bool) {
	o, ok := v.(obj)
	if !ok {
		c.bad(path, "must be a text object")
		return
	}
	typ, _ := str(o, "type")
	if typ != "plain_text" && typ != "mrkdwn" {
		c.bad(path+"/type", "must be plain_text or mrkdwn")
	}
	if plainOnly && typ != "plain_text" {
		c.bad(path+"/type", "must be plain_text")
	}
	t, _ := str(o, "text")
	switch {
	case n(t) == 0:
		c.bad(path+"/text", "must be more than 0 characters")
	case n(t) > max:
		c.bad(path+"/text", "must be less than %d characters", max+1)
	}
}

func (c *checker) maxLen(path string, o obj, k string, max int) {
	if s, ok := str(o, k); ok && n(s) > max {
		c.bad(path+"/"+k, "must be less than %d characters", max+1)
	}
}

func (c *checker) confirm(path string, v any) {
	o, ok := v.(obj)
	if !ok {
		c.bad(path, "must be a confirm object")
		return
	}
	c.text(path+"/title", o["title"], maxConfirmTitle, true)
	c.text(path+"/text", o["text"], maxConfirmText, false)
	c.text(path+"/confirm", o["confirm"], maxConfirmButton, true)
	c.text(path+"/deny", o["deny"], maxConfirmButton, true)
}

func (c *checker) options(path string, v any, max int) {
	opts, _ := v.([]any)
	if len(opts) == 0 {
		c.bad(path, "must provide at least 1 option")
	}
	if len(opts) > max {
		c.bad(path, "must provide at most %d items", max)
	}
	for i, ov := range opts {
		p := fmt.Sprintf("%s/%d", path, i)
		o, ok := ov.(obj)
		if !ok {
			c.bad(p, "must be an option object")
			continue
		}
		c.text(p+"/text", o["text"], maxOptionText, false)
		if d, ok := o["description"]; ok {
			c.text(p+"/description", d, maxOptionDesc, false)
		}
		val, _ := str(o, "value")
		if n(val) == 0 || n(val) > maxOptionValue {
			c.bad(p+"/value", "must be 1 to %d characters", maxOptionValue)
		}
	}
}

// element checks one interactive element; where is the block type.
func (c *checker) element(path string, v any, where string, actionIDs map[string]bool) {
	o, ok := v.(obj)
	if !ok {
		c.bad(path, "must be an element object")
		return
	}
	typ, _ := str(o, "type")
	if id, ok := str(o, "action_id"); ok {
		if n(id) > maxID {
			c.bad(path+"/action_id", "must be less than %d characters", maxID+1)
		}
		if actionIDs[id] {
			c.bad(path+"/action_id", "action_id %q is already used in this block", id)
		}
		actionIDs[id] = true
	}
	if cf, ok := o["confirm"]; ok {
		c.confirm(path+"/confirm", cf)
	}
	switch typ {
	case "button":
		c.text(path+"/text", o["text"], maxButtonText, true)
		c.maxLen(path, o, "value", maxButtonValue)
		if s, ok := str(o, "style"); ok && s != "primary" && s != "danger" {
			c.bad(path+"/style", "must be primary or danger")
		}
	case "checkboxes", "radio_buttons":
		c.options(path+"/options", o["options"], maxChoiceOptions)
		c.initial(path, o, typ == "checkboxes")
	case "static_select":
		c.options(path+"/options", o["options"], maxSelectOptions)
		c.initial(path, o, false)
		c.text(path+"/placeholder", o["placeholder"], maxPlaceholder, true)
	case "multi_static_select":
		if where == "actions" {
			c.bad(path+"/type", "multi_static_select is not allowed in actions blocks")
		}
		c.options(path+"/options", o["options"], maxSelectOptions)
		c.text(path+"/placeholder", o["placeholder"], maxPlaceholder, true)
	case "plain_text_input":
		if where != "input" {
			c.bad(path+"/type", "plain_text_input only works in input blocks")
		}
		if p, ok := o["placeholder"]; ok {
			c.text(path+"/placeholder", p, maxPlaceholder, true)
		}
		if ml, ok := o["max_length"].(float64); ok && (ml < 1 || ml > maxInputLength) {
			c.bad(path+"/max_length", "must be between 1 and %d", maxInputLength)
		}
		if ml, ok := o["min_length"].(float64); ok && (ml < 0 || ml > maxInputLength) {
			c.bad(path+"/min_length", "must be between 0 and %d", maxInputLength)
		}
	case "image":
		if where != "section" && where != "context" {
			c.bad(path+"/type", "image elements only work in section accessories and context blocks")
		}
		c.image(path, o)
	case "overflow", "datepicker", "timepicker", "users_select", "conversations_select", "channels_select":
	default:
		c.bad(path+"/type", "unknown or unsupported element type %q", typ)
	}
}

// blocks checks a message's or modal's blocks; surface is "message" or "modal".
func (c *checker) blocks(path string, v any, surface string) {
	blocks, ok := v.([]any)
	if !ok {
		c.bad(path, "must be an array")
		return
	}
	max := maxBlocksMessage
	if surface == "modal" {
		max = maxBlocksModal
	}
	if len(blocks) > max {
		c.bad(path, "must provide at most %d items", max)
	}
	ids := map[string]bool{}
	for i, bv := range blocks {
		p := fmt.Sprintf("%s/%d", path, i)
		b, ok := bv.(obj)
		if !ok {
			c.bad(p, "must be a block object")
			continue
		}
		if id, ok := str(b, "block_id"); ok {
			if n(id) > maxID {
				c.bad(p+"/block_id", "must be less than %d characters", maxID+1)
			}
			if ids[id] {
				c.bad(p+"/block_id", "duplicate block_id %q", id)
			}
			ids[id] = true
		}
		typ, _ := str(b, "type")
		actionIDs := map[string]bool{}
		switch typ {
		case "header":
			c.text(p+"/text", b["text"], maxHeaderText, true)
		case "section":
			_, hasText := b["text"]
			fields, _ := b["fields"].([]any)
			if !hasText && len(fields) == 0 {
				c.bad(p, "must have text or fields")
			}
			if hasText {
				c.text(p+"/text", b["text"], maxSectionText, false)
			}
			if len(fields) > maxFields {
				c.bad(p+"/fields", "must provide at most %d items", maxFields)
			}
			for j, f := range fields {
				c.text(fmt.Sprintf("%s/fields/%d", p, j), f, maxFieldText, false)
			}
			if acc, ok := b["accessory"]; ok {
				c.element(p+"/accessory", acc, "section", actionIDs)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > maxContextElems {
				c.bad(p+"/elements", "must provide 1 to %d items", maxContextElems)
			}
			for j, e := range els {
				if eo, ok := e.(obj); ok && eo["type"] == "image" {
					c.image(fmt.Sprintf("%s/elements/%d", p, j), eo)
					continue
				}
				c.text(fmt.Sprintf("%s/elements/%d", p, j), e, maxSectionText, false)
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > maxActions {
				c.bad(p+"/elements", "must provide 1 to %d items", maxActions)
			}
			for j, e := range els {
				c.element(fmt.Sprintf("%s/elements/%d", p, j), e, "actions", actionIDs)
			}
		case "image":
			c.image(p, b)
			if t, ok := b["title"]; ok {
				c.text(p+"/title", t, maxImageTitle, true)
			}
		case "input":
			c.text(p+"/label", b["label"], maxInputLabel, true)
			if h, ok := b["hint"]; ok {
				c.text(p+"/hint", h, maxInputHint, true)
			}
			c.element(p+"/element", b["element"], "input", actionIDs)
		case "divider":
		default:
			c.bad(p+"/type", "unknown or unsupported block type %q", typ)
		}
	}
}

// view checks a modal view.
func (c *checker) view(v any) {
	o, ok := v.(obj)
	if !ok {
		c.bad("/view", "must be a view object")
		return
	}
	if t, _ := str(o, "type"); t != "modal" {
		c.bad("/view/type", "must be modal")
	}
	c.text("/view/title", o["title"], maxModalTitle, true)
	hasInput := false
	if bs, ok := o["blocks"].([]any); ok {
		for _, b := range bs {
			if bo, ok := b.(obj); ok && bo["type"] == "input" {
				hasInput = true
			}
		}
	}
	if s, ok := o["submit"]; ok {
		c.text("/view/submit", s, maxModalButton, true)
	} else if hasInput {
		c.bad("/view/submit", "is required when the view has input blocks")
	}
	if cl, ok := o["close"]; ok {
		c.text("/view/close", cl, maxModalButton, true)
	}
	c.maxLen("/view", o, "private_metadata", maxPrivateMeta)
	c.maxLen("/view", o, "callback_id", maxCallbackID)
	c.blocks("/view/blocks", o["blocks"], "modal")
}

// blocksText is the text Slack counts against maxBlocksText: every "text"
// string anywhere in the blocks — text objects of sections, fields,
// headers, context elements, buttons, options and their descriptions,
// placeholders, labels, confirm dialogs, and rich text elements.
func blocksText(v any) int {
	total := 0
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok {
				if k == "text" {
					total += n(s)
				}
				continue
			}
			total += blocksText(c)
		}
	case []any:
		for _, c := range x {
			total += blocksText(c)
		}
	}
	return total
}

// image checks an image block or element: an image_url (Slack fetches it
// itself; it must be http(s)) and alt text, both required, within limits.
func (c *checker) image(path string, o obj) {
	u, _ := str(o, "image_url")
	switch {
	case n(u) == 0:
		c.bad(path+"/image_url", "must be more than 0 characters")
	case n(u) > maxImageURL:
		c.bad(path+"/image_url", "must be less than %d characters", maxImageURL+1)
	case !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://"):
		c.bad(path+"/image_url", "must be a valid http or https URL")
	}
	alt, _ := str(o, "alt_text")
	switch {
	case n(alt) == 0:
		c.bad(path+"/alt_text", "must be more than 0 characters")
	case n(alt) > maxImageAlt:
		c.bad(path+"/alt_text", "must be less than %d characters", maxImageAlt+1)
	}
}

// initial checks initial_option(s): each must be exactly one of the
// element's options (Slack refuses the call otherwise).
func (c *checker) initial(path string, o obj, multi bool) {
	var given []any
	key := "initial_option"
	if multi {
		key = "initial_options"
		given, _ = o[key].([]any)
	} else if v, ok := o[key]; ok {
		given = []any{v}
	}
	opts, _ := o["options"].([]any)
	for i, g := range given {
		gv, _ := g.(obj)
		val, _ := str(gv, "value")
		found := false
		for _, ov := range opts {
			if oo, ok := ov.(obj); ok && oo["value"] == val {
				found = true
			}
		}
		if !found {
			c.bad(fmt.Sprintf("%s/%s/%d", path, key, i), "must be one of the options")
		}
	}
}
