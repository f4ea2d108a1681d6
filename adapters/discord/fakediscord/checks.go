package fakediscord

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

var mentionRE = regexp.MustCompile(`<@(&?)(\d+)>|@(everyone|here)`)

// pings works out whom a new message notifies: mentions in its content
// that allowed_mentions lets through (parse lists types; roles and users
// list ids).
func pings(content string, p *Payload) []string {
	var out []string
	am := p.AllowedMentions
	for _, m := range mentionRE.FindAllStringSubmatch(content, -1) {
		switch {
		case m[3] != "":
			if am == nil || slices.Contains(am.Parse, "everyone") {
				out = append(out, "everyone")
			}
		case m[1] == "&":
			if am == nil || slices.Contains(am.Parse, "roles") || slices.Contains(am.Roles, m[2]) {
				out = append(out, "role:"+m[2])
			}
		default:
			if am == nil || slices.Contains(am.Parse, "users") || slices.Contains(am.Users, m[2]) {
				out = append(out, "user:"+m[2])
			}
		}
	}
	return out
}

// Deref returns *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func applyPayload(m *Message, p *Payload) {
	if p.AllowedMentions != nil {
		m.AllowedRoles, m.AllowedUsers = p.AllowedMentions.Roles, p.AllowedMentions.Users
	}
	if p.Content != nil {
		m.Content = *p.Content
	}
	if p.Embeds != nil {
		m.Embeds = *p.Embeds
	}
	if p.Components != nil {
		m.Components = *p.Components
	}
}

// checkMessage enforces Discord's limits on a message body.
func (f *Server) checkMessage(w http.ResponseWriter, op string, p *Payload) bool {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if p.AllowedMentions == nil || len(p.AllowedMentions.Parse) != 0 {
		bad("allowed_mentions must be present with an empty parse list (no mass mentions)")
	} else if len(p.AllowedMentions.Roles) > 100 || len(p.AllowedMentions.Users) > 100 {
		bad("allowed_mentions lists at most 100 roles and 100 users")
	}
	if p.Content != nil && utf8.RuneCountInString(*p.Content) > 2000 {
		bad("content longer than 2000")
	}
	if p.AllowedMentions != nil && p.Content != nil {
		// Not a Discord rule, but a sign of a cut message: allowing a
		// mention the content does not show.
		for _, id := range p.AllowedMentions.Roles {
			if !strings.Contains(*p.Content, "<@&"+id+">") {
				bad("allowed_mentions.roles lists %s, which the content does not mention", id)
			}
		}
		for _, id := range p.AllowedMentions.Users {
			if !strings.Contains(*p.Content, "<@"+id+">") && !strings.Contains(*p.Content, "<@!"+id+">") {
				bad("allowed_mentions.users lists %s, which the content does not mention", id)
			}
		}
	}
	if p.Embeds != nil {
		if len(*p.Embeds) > 10 {
			bad("more than 10 embeds")
		}
		// Discord counts the 6000 characters over all embeds of a message.
		all := 0
		for _, e := range *p.Embeds {
			total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
			if utf8.RuneCountInString(e.Title) > 256 {
				bad("embed title longer than 256")
			}
			if utf8.RuneCountInString(e.Description) > 4096 {
				bad("embed description longer than 4096")
			}
			if len(e.Fields) > 25 {
				bad("more than 25 embed fields")
			}
			for _, fl := range e.Fields {
				n, v := utf8.RuneCountInString(fl.Name), utf8.RuneCountInString(fl.Value)
				if n == 0 || n > 256 || v == 0 || v > 1024 {
					bad("embed field name %d / value %d characters (1-256 / 1-1024)", n, v)
				}
				total += n + v
			}
			for _, m := range []*EmbedMedia{e.Image, e.Thumbnail} {
				if m != nil && !strings.HasPrefix(m.URL, "https://") && !strings.HasPrefix(m.URL, "http://") && !strings.HasPrefix(m.URL, "attachment://") {
					bad("embed image url %q is not http(s) or attachment://", m.URL)
				}
			}
			if e.Footer != nil {
				if utf8.RuneCountInString(e.Footer.Text) > 2048 {
					bad("footer longer than 2048")
				}
				total += utf8.RuneCountInString(e.Footer.Text)
			}
			if total > 6000 {
				bad("embed total %d characters, more than 6000", total)
			}
			all += total
		}
		if all > 6000 && len(*p.Embeds) > 1 {
			bad("embeds total %d characters, more than 6000", all)
		}
	}
	if p.Components != nil {
		probs = append(probs, checkComponents(*p.Components)...)
	}
	if len(probs) > 0 {
		f.violation(w, "%s: %s", op, strings.Join(probs, "; "))
		return false
	}
	return true
}

func checkComponents(rows []Component) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if len(rows) > 5 {
		bad("%d action rows, at most 5", len(rows))
	}
	ids := map[string]bool{}
	for _, row := range rows {
		if row.Type != 1 {
			bad("top-level component of type %d, want action rows", row.Type)
			continue
		}
		buttons, selects := 0, 0
		for _, c := range row.Components {
			if n := len(c.CustomID); n < 1 || n > 100 {
				bad("custom_id of %d characters (1-100)", n)
			}
			if ids[c.CustomID] {
				bad("custom_id %q not unique", c.CustomID)
			}
			ids[c.CustomID] = true
			switch c.Type {
			case 2:
				buttons++
				if n := utf8.RuneCountInString(c.Label); n > 80 {
					bad("button label of %d characters, at most 80", n)
				}
				if c.Style < 1 || c.Style > 4 {
					bad("button style %d needs 1-4 with a custom_id", c.Style)
				}
			case 3:
				selects++
				if n := len(c.Options); n < 1 || n > 25 {
					bad("select with %d options (1-25)", n)
				}
				vals := map[string]bool{}
				for _, o := range c.Options {
					if utf8.RuneCountInString(o.Label) > 100 || utf8.RuneCountInString(o.Value) > 100 || utf8.RuneCountInString(o.Description) > 100 {
						bad("select option label/value/description longer than 100")
					}
					if o.Label == "" || o.Value == "" || vals[o.Value] {
						bad("select option needs a label and a unique value")
					}
					vals[o.Value] = true
				}
				minV := 1
				if c.MinValues != nil {
					minV = *c.MinValues
				}
				maxV := c.MaxValues
				if maxV == 0 {
					maxV = 1
				}
				if minV < 0 || minV > 25 || maxV < 1 || maxV > 25 || minV > maxV || maxV > len(c.Options) {
					bad("select min_values %d / max_values %d invalid for %d options", minV, maxV, len(c.Options))
				}
				if utf8.RuneCountInString(c.Placeholder) > 150 {
					bad("placeholder longer than 150")
				}
			default:
				bad("component type %d not allowed in a message row", c.Type)
			}
		}
		if (selects > 0 && (selects != 1 || buttons != 0)) || buttons > 5 || buttons+selects == 0 {
			bad("an action row holds 1-5 buttons or exactly one select (got %d buttons, %d selects)", buttons, selects)
		}
	}
	return probs
}

func checkModal(p *Payload) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if n := utf8.RuneCountInString(p.Title); n < 1 || n > 45 {
		bad("modal title of %d characters (1-45)", n)
	}
	if n := len(p.CustomID); n < 1 || n > 100 {
		bad("modal custom_id of %d characters", n)
	}
	if p.Components == nil || len(*p.Components) < 1 || len(*p.Components) > 5 {
		bad("modal needs 1-5 components")
		return probs
	}
	for _, row := range *p.Components {
		if row.Type != 1 || len(row.Components) != 1 || row.Components[0].Type != 4 {
			bad("modal rows hold exactly one text input")
			continue
		}
		ti := row.Components[0]
		if n := utf8.RuneCountInString(ti.Label); n < 1 || n > 45 {
			bad("text input label of %d characters (1-45)", n)
		}
		if ti.Style != 1 && ti.Style != 2 {
			bad("text input style %d", ti.Style)
		}
		if ti.MaxLength > 4000 || ti.MinLength > ti.MaxLength || utf8.RuneCountInString(ti.Value) > 4000 {
			bad("text input lengths invalid")
		}
		if utf8.RuneCountInString(ti.Placeholder) > 100 {
			bad("text input placeholder longer than 100")
		}
	}
	return probs
}
