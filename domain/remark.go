package domain

import (
	"strings"
	"time"
)

// Remark is one line every copy of a pending question shows about what
// happened to it elsewhere ("Acknowledged by Ana in the pager at 03:14
// UTC"). It does not answer the question. Text and By come from outside
// (a pager's user name): surfaces escape them like agent text.
type Remark struct {
	// Kind names what the remark is about; a newer remark of the same kind
	// replaces the older one.
	Kind string    `json:"kind"`
	Text string    `json:"text"`
	By   string    `json:"by,omitempty"`
	At   time.Time `json:"at"`
}

// Bounds of a question's remarks: the newest MaxRemarks are kept, each
// text cut to MaxRemarkText characters and its author to MaxRemarkBy.
const (
	MaxRemarks    = 5
	MaxRemarkText = 300
	MaxRemarkBy   = 100
)

// AddRemark returns rs with r added: it replaces a remark of the same
// kind, and the oldest go beyond MaxRemarks. changed is false (rs is
// returned as is) when the same remark is there already, as when a
// sender repeats itself. r's texts are cut to their bounds first.
func AddRemark(rs []Remark, r Remark) (out []Remark, changed bool) {
	r.Kind = Shorten(oneLineRemark(r.Kind), 40)
	r.Text = Shorten(oneLineRemark(r.Text), MaxRemarkText)
	r.By = Shorten(oneLineRemark(r.By), MaxRemarkBy)
	r.At = r.At.UTC()
	for _, o := range rs {
		if o.Kind == r.Kind && o.Text == r.Text && o.By == r.By && o.At.Equal(r.At) {
			return rs, false
		}
	}
	out = make([]Remark, 0, len(rs)+1)
	for _, o := range rs {
		if o.Kind != r.Kind {
			out = append(out, o)
		}
	}
	out = append(out, r)
	if len(out) > MaxRemarks {
		out = out[len(out)-MaxRemarks:]
	}
	return out, true
}

// oneLineRemark keeps a remark on one line: surfaces show each remark as
// a line of its own.
func oneLineRemark(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// GroupHolders is who belongs now to one group of a directory no chat
// platform owns (whoever is on call for a pager's schedule), so a copy can
// mention them. Names come from outside: surfaces escape them.
type GroupHolders struct {
	// Group names the group as people know it ("schedule Primary").
	Group  string
	People []Holder
	// Unknown: the directory could not be read, so who holds the group is
	// not known (and nobody is admitted through it).
	Unknown bool
}

// Holder is one person holding a group: their name in the directory, and
// who they are on chat platforms ("slack:U0123"), none when unknown.
type Holder struct {
	Name string
	Keys []string
}

// HoldersLine is the line under a copy for one group: "<@U0123> you are
// on call for schedule Primary: this question is waiting for you." mention
// writes a holder as the surface mentions them (their escaped name when
// it cannot); text escapes outside text for the surface.
func HoldersLine(h GroupHolders, mention func(Holder) string, text func(string) string) string {
	if text == nil {
		text = func(s string) string { return s }
	}
	group := text(Shorten(oneLineRemark(h.Group), 200))
	switch {
	case h.Unknown:
		return "Who is on call for " + group + " could not be determined: nobody is admitted through it until it can be read again."
	case len(h.People) == 0:
		return "Nobody is on call for " + group + " right now."
	}
	var who []string
	for _, p := range h.People {
		who = append(who, mention(p))
	}
	names := strings.Join(who, ", ")
	if n := len(who); n > 1 {
		names = strings.Join(who[:n-1], ", ") + " and " + who[n-1]
	}
	return names + " — you are on call for " + group + ": this question is waiting for you."
}
