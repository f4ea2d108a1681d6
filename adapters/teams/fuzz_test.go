package teams

import (
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// FuzzMessages: whatever a validly signed request carries, the messaging
// endpoint answers 200, 400 or 401 and never panics.
func FuzzMessages(f *testing.F) {
	e := newEnv(f, nil)
	q := e.ask(f, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	token := e.F.Token(faketeamsTokenOptions())
	for _, seed := range []string{
		`{"type":"invoke","name":"adaptiveCard/action","serviceUrl":"` + e.F.ServiceURL() + `","channelId":"msteams","value":{"action":{"type":"Action.Execute","verb":"answer","data":{"q":"` + q.ID + `","i":0,"o":1}}}}`,
		`{"type":"installationUpdate","serviceUrl":"` + e.F.ServiceURL() + `","channelId":"msteams","conversation":{"id":"19:x@thread.tacv2"},"channelData":{"team":{"id":"19:x@thread.tacv2","name":"T"}}}`,
		`{"type":"invoke","serviceUrl":"` + e.F.ServiceURL() + `","value":[]}`,
		`[]`, `{}`, `{"type":"invoke","name":"adaptiveCard/action","serviceUrl":"` + e.F.ServiceURL() + `","channelId":"msteams","value":{"action":{"type":"Action.Execute","verb":"submit","data":"x"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		st := postRaw(t, e.Endpoint, token, body)
		if st != http.StatusOK && st != http.StatusBadRequest && st != http.StatusUnauthorized {
			t.Errorf("answered %d", st)
		}
	})
}
