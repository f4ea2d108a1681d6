package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walkthroughBlocks returns the ```sh blocks of the README's section "Five
// minutes with curl and the CLI", in order.
func walkthroughBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	const title = "## Five minutes with curl and the CLI\n"
	start := strings.Index(readme, title)
	require.GreaterOrEqual(t, start, 0, "README.md has no section %q", strings.TrimSpace(title))
	section := readme[start+len(title):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestReadmeWalkthroughRunsAsWritten runs the shell blocks of the README's
// walkthrough with bash, as written except for the port, against the
// built `askbridge serve` on a free loopback port, with the built command
// on PATH as `make install` puts it there. Where the walkthrough answers
// in another terminal, the test runs that block beside the waiting one;
// where it leaves the answer to the reader (`askbridge ask`), the test
// answers with the CLI. A walkthrough that no longer works fails here.
func TestReadmeWalkthroughRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's walkthrough against the built binary")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough needs %s", tool)
		}
	}
	blocks := walkthroughBlocks(t)
	require.Len(t, blocks, 5, "the walkthrough's shell blocks changed (environment, ask, wait, answer, askbridge ask): update this test with them")
	env, ask, wait, answer, script := blocks[0], blocks[1], blocks[2], blocks[3], blocks[4]
	require.Contains(t, env, "export BRIDGE_URL=http://127.0.0.1:8080", "the first block says where the bridge is")

	b := startBridge(t)
	port := b.URL[strings.LastIndex(b.URL, ":")+1:]
	work := t.TempDir()
	path := filepath.Dir(bridgeBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	bash := func(ctx context.Context, blocks ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		src := "set -euo pipefail\n" + strings.ReplaceAll(strings.Join(blocks, "\n"), ":8080", ":"+port)
		cmd := exec.CommandContext(ctx, "bash", "-c", src)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + path, "HOME=" + work, "LANG=C.UTF-8"}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		return cmd, &out, &errb
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	// Terminal 2: steps 1 and 2, the ask and the wait.
	agent, agentOut, agentErr := bash(ctx, env, ask, wait)
	require.NoError(t, agent.Start())
	agentDone := make(chan error, 1)
	go func() { agentDone <- agent.Wait() }()
	var id string
	storetest.WaitFor(ctx, 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(work, ".question-id"))
		id = strings.TrimSpace(string(b))
		return id != ""
	})
	require.NotEmpty(t, id, "step 1 kept no question id")

	// Terminal 3: step 3, the CLI answers.
	person, personOut, personErr := bash(ctx, env, answer)
	require.NoError(t, person.Run(), "step 3 failed:\n%s%s", personOut, personErr)
	assert.Contains(t, personOut.String(), "Which auth method?", "questions list and show print the question")
	assert.Contains(t, personOut.String(), "OAuth 2.0")

	// Step 4: the waiter wakes with the answer.
	select {
	case err := <-agentDone:
		require.NoError(t, err, "steps 1-2 failed:\n%s%s", agentOut, agentErr)
	case <-ctx.Done():
		t.Fatal("the wait of step 2 did not wake")
	}
	assert.Contains(t, agentOut.String(), `"status":"answered"`)
	assert.Contains(t, agentOut.String(), `"response":"oauth"`)
	assert.Contains(t, agentOut.String(), `"answers":{"Which auth method?":"OAuth 2.0"}`)

	// Step 5: askbridge ask waits until the test answers it, as the reader would.
	asker, askerOut, askerErr := bash(ctx, env, script)
	require.NoError(t, asker.Start())
	askerDone := make(chan error, 1)
	go func() { askerDone <- asker.Wait() }()
	var pending string
	storetest.WaitFor(ctx, 20*time.Second, func() bool {
		res, err := http.Get(b.URL + "/api/projects/demo/agent-questions?status=pending")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var list struct {
			Questions []struct {
				ID        string `json:"id"`
				Questions []struct {
					Question string `json:"question"`
				} `json:"questions"`
			} `json:"questions"`
		}
		if json.NewDecoder(res.Body).Decode(&list) != nil {
			return false
		}
		for _, q := range list.Questions {
			if len(q.Questions) > 0 && strings.HasPrefix(q.Questions[0].Question, "Deploy api") {
				pending = q.ID
			}
		}
		return pending != ""
	})
	require.NotEmpty(t, pending, "step 5 asked nothing")
	reply := exec.CommandContext(ctx, bridgeBin, "questions", "answer", pending, "1")
	reply.Env = []string{"BRIDGE_URL=" + b.URL, "BRIDGE_PROJECT=demo"}
	out, err := reply.CombinedOutput()
	require.NoError(t, err, "%s", out)
	select {
	case err := <-askerDone:
		require.NoError(t, err, "step 5 failed:\n%s%s", askerOut, askerErr)
	case <-ctx.Done():
		t.Fatal("askbridge ask of step 5 did not return")
	}
	assert.Equal(t, "Deploy now\n", askerOut.String())
}
