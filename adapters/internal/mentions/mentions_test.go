package mentions

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFit(t *testing.T) {
	var ms []string
	for i := range 50 {
		ms = append(ms, fmt.Sprintf("<@%d>", 1000+i)) // 7 characters each
	}
	n := utf8.RuneCountInString
	for _, tc := range []struct {
		max       int
		shown     int
		wantStart string
	}{
		{1000, 50, "<@1000> <@1001>"},
		{60, 4, "<@1000> <@1001> <@1002> <@1003> and 46 more Still waiting."},
		{20, 0, "Still waiting."},
	} {
		text, shown := Fit(ms, "Still waiting.", tc.max, n)
		if shown != tc.shown || !strings.HasPrefix(text, tc.wantStart) || n(text) > max(tc.max, n("Still waiting.")) {
			t.Errorf("max %d: got %q (%d shown), want %d shown starting %q", tc.max, text, shown, tc.shown, tc.wantStart)
		}
		if !strings.HasSuffix(text, "Still waiting.") {
			t.Errorf("max %d: the sentence was lost: %q", tc.max, text)
		}
	}
}
