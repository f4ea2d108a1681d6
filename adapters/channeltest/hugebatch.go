package channeltest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// HugeBatch is a batch of n pending Bash calls as the Router hands it to
// a surface (lifecycle.BatchChannel), for tests of how a surface renders
// a batch far past its limits: every call's command is command i with a
// long tail.
func HugeBatch(n int, now time.Time) *domain.Batch {
	qs := make([]*domain.Question, n)
	for i := range qs {
		cmd := fmt.Sprintf("rm -rf build%d %s", i+1, strings.Repeat("x", 60))
		in, _ := json.Marshal(map[string]string{"command": cmd})
		qs[i] = &domain.Question{ID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i+1), ProjectID: "ops", RunID: "run-1", AgentID: "deploy-bot",
			Kind: domain.KindApproval, Status: domain.StatusPending, BatchID: "c0000000-0000-4000-8000-000000000001",
			CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Questions: []domain.Item{{Question: "Run " + cmd + "?", Options: NoteApproval(true).Options}},
			Action:    &domain.Action{Tool: "Bash", Input: in}}
	}
	return domain.NewBatch(qs[0].ID, qs)
}
