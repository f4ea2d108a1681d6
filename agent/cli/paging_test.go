package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuestionsListEveryPageOrOne: list shows every question whatever the
// server's page size, and says how many; --limit shows one page and the
// command that shows the next, which reaches the rest.
func TestQuestionsListEveryPageOrOne(t *testing.T) {
	api := fakeapi.New(t, "")
	api.MaxPage = 2
	var reqs []*domain.AskRequest
	for i := range 5 {
		reqs = append(reqs, &domain.AskRequest{RunID: fmt.Sprintf("r%d", i), Question: fmt.Sprintf("Deploy %d?", i)})
	}
	asked := seed(t, api, reqs...)

	r := runCLI(t.Context(), api, false, "questions", "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 6, "a heading and every question")
	assert.Contains(t, lines[1], "Deploy 0?")
	assert.Contains(t, lines[5], "Deploy 4?")
	assert.Equal(t, "5 pending questions in project ops, oldest first\n", r.stderr)

	r = runCLI(t.Context(), api, false, "questions", "list", "--limit", "3")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 3, "a heading and the server's page of 2")
	m := regexp.MustCompile(`^2 pending questions on this page; more follow: askbridge questions list --limit 3 --cursor (\S+)\n$`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	var seen []string
	for cursor := m[1]; ; {
		r = runCLI(t.Context(), api, false, "questions", "list", "--limit", "3", "--cursor", cursor, "--json")
		require.Equal(t, ExitOK, r.code, r.stderr)
		var page struct {
			Questions  []domain.Question `json:"questions"`
			NextCursor string            `json:"next_cursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
		for _, q := range page.Questions {
			seen = append(seen, q.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, []string{asked[2].ID, asked[3].ID, asked[4].ID}, seen, "the next pages hold the rest")

	r = runCLI(t.Context(), api, false, "questions", "list", "--all", "--limit", "10")
	assert.Equal(t, "2 questions on this page; more follow: askbridge questions list --all --limit 10 --cursor from-2\n", r.stderr)
	r = runCLI(t.Context(), api, false, "questions", "list", "--status", "answered")
	assert.Equal(t, "no answered questions in project ops\n", r.stderr)
	for _, bad := range [][]string{{"--limit", "0", "--cursor", "x"}, {"--limit", "1001"}, {"--cursor", "x"}} {
		r = runCLI(t.Context(), api, false, append([]string{"questions", "list"}, bad...)...)
		assert.Equal(t, ExitUsage, r.code, bad)
		assert.Contains(t, r.stderr, "--limit takes a number from 1 to 1000", bad)
	}
}
