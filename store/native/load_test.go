package native

import (
	"encoding/json"
	"testing"
)

// A run's lifetime is read at start from the end of its record, as
// saveRun writes it, and from the whole record otherwise.
func TestRunTTLAsWritten(t *testing.T) {
	r := &runrec{ID: "run-1", Agent: "a", Status: "running", Pending: "q1", FPs: fps{"fp", `q1|"t":5}`},
		Qs: []string{"q1"}, Created: 1, Updated: 2, TTL: 1795830556949}
	v, _ := json.Marshal(r)
	if got, ok := runTTL(v); !ok || got != r.TTL {
		t.Fatalf("runTTL(%s) = %d, %v; want %d", v, got, ok, r.TTL)
	}
	if got, ok := runTTL([]byte(`{"t":42,"id":"x"}`)); !ok || got != 42 {
		t.Fatalf("runTTL of another field order = %d, %v; want 42", got, ok)
	}
	if _, ok := runTTL([]byte(`not json`)); ok {
		t.Fatal("runTTL read an unreadable record")
	}
}
