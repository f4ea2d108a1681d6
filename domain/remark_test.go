package domain

import (
	"strings"
	"testing"
	"time"
)

func TestAddRemarkReplacesItsKindAndKeepsTheNewest(t *testing.T) {
	at := time.Date(2026, 3, 1, 3, 14, 0, 0, time.UTC)
	ack := Remark{Kind: "page.acknowledged", Text: "Acknowledged by\nAna   in the pager", By: "Ana", At: at}
	rs, changed := AddRemark(nil, ack)
	if !changed || len(rs) != 1 || rs[0].Text != "Acknowledged by Ana in the pager" {
		t.Fatalf("first remark: %v %+v", changed, rs)
	}
	if again, changed := AddRemark(rs, ack); changed || len(again) != 1 {
		t.Fatalf("a repeat changed the remarks: %+v", again)
	}
	bob := Remark{Kind: "page.acknowledged", Text: "Acknowledged by Bob", By: "Bob", At: at.Add(time.Minute)}
	rs, _ = AddRemark(rs, bob)
	if len(rs) != 1 || rs[0].By != "Bob" {
		t.Fatalf("a newer remark of the same kind replaces the older: %+v", rs)
	}
	for i := range MaxRemarks + 2 {
		rs, _ = AddRemark(rs, Remark{Kind: string(rune('a' + i)), Text: strings.Repeat("x", 2*MaxRemarkText), At: at})
	}
	if len(rs) != MaxRemarks || rs[0].Kind != "c" || len([]rune(rs[0].Text)) != MaxRemarkText {
		t.Fatalf("the newest %d kept, texts cut: %d, first %q (%d)", MaxRemarks, len(rs), rs[0].Kind, len([]rune(rs[0].Text)))
	}
}

func TestHoldersLine(t *testing.T) {
	mention := func(h Holder) string { return "@" + h.Name }
	upper := strings.ToUpper
	for _, tc := range []struct {
		h    GroupHolders
		want string
	}{
		{GroupHolders{Group: "schedule Primary", People: []Holder{{Name: "ana"}}},
			"@ana — you are on call for SCHEDULE PRIMARY: this question is waiting for you."},
		{GroupHolders{Group: "schedule Primary", People: []Holder{{Name: "ana"}, {Name: "bo"}, {Name: "cy"}}},
			"@ana, @bo and @cy — you are on call for SCHEDULE PRIMARY: this question is waiting for you."},
		{GroupHolders{Group: "schedule Primary"}, "Nobody is on call for SCHEDULE PRIMARY right now."},
		{GroupHolders{Group: "schedule P1", Unknown: true},
			"Who is on call for SCHEDULE P1 could not be determined: nobody is admitted through it until it can be read again."},
	} {
		if got := HoldersLine(tc.h, mention, upper); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
