package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApproveBashMatchesEveryCommand: --approve 'Bash(rm *)' asks for rm
// wherever the line runs it, and not for lines that only mention it.
func TestApproveBashMatchesEveryCommand(t *testing.T) {
	cases := []struct {
		command string
		want    bool
	}{
		{"rm -rf build", true},
		{"rm", true},
		{"cd . && rm -rf build", true},
		{"make || rm -rf build", true},
		{"ls; rm -rf build", true},
		{"ls\nrm -rf build", true},
		{"find . -name '*.o' | xargs rm -f", true},
		{"(cd build && rm -rf out)", true},
		{"echo $(rm -rf build)", true},
		{`echo "now: $(rm -rf build)"`, true},
		{"echo `rm -rf build`", true},
		{"FOO=1 rm -rf build", true},
		{"FOO=1 BAR=x sudo -u root rm -rf build", true},
		{"sudo rm -rf build", true},
		{"sudo -E -- rm -rf build", true},
		{"/bin/rm -rf build", true},
		{"/usr/bin/env rm -rf build", true},
		{"env -i PATH=/bin rm x", true},
		{"nohup rm -rf build &", true},
		{"timeout 10 rm -rf build", true},
		{`bash -c "cd /tmp && rm -rf x"`, true},
		{`sh -c 'rm -rf x'`, true},
		{"if true; then rm -rf x; fi", true},
		{"r\\m -rf build", true},
		{`"rm" -rf build`, true},
		{"ls > out.txt && rm out.txt", true},
		// Mentioned, not run.
		{"echo rm", false},
		{"grep rm file", false},
		{"grep -r 'rm -rf' .", false},
		{`echo "rm -rf build"`, false},
		{`echo 'a; rm b'`, false},
		{`git commit -m "cd x && rm y"`, false},
		{"rmdir build", false},
		{"ls # rm -rf build", false},
		{"FOO=rm ls", false},
		{"echo \\; rm x", false}, // an escaped ; is an argument: echo prints "; rm x"
		{"ls 2> rm", false},
		{"", false},
	}
	p, err := parsePattern("Bash(rm *)")
	require.NoError(t, err)
	for _, c := range cases {
		in, _ := json.Marshal(map[string]string{"command": c.command})
		assert.Equal(t, c.want, p.match("Bash", in), "%q", c.command)
	}
}

func TestApprovePrefixForm(t *testing.T) {
	p, err := parsePattern("Bash(git push:*)")
	require.NoError(t, err)
	for cmd, want := range map[string]bool{
		"git push": true, "git push origin main": true, "cd repo && git push -f": true,
		"git pushy": false, "git status": false,
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		assert.Equal(t, want, p.match("Bash", in), "%q", cmd)
	}
	p, _ = parsePattern("Bash(rm:*)")
	assert.False(t, p.match("Bash", json.RawMessage(`{"command":"rmdir x"}`)), "a word boundary, as in Claude Code")
	assert.True(t, p.match("Bash", json.RawMessage(`{"command":"sudo rm x"}`)))
}

// TestTimeoutHelpShowsOneDefault: the --timeout help once said "(default
// 10m) (default 9m0s)".
func TestTimeoutHelpShowsOneDefault(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"-h"}, Env{}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, ExitOK, code)
	help := errb.String()
	i := strings.Index(help, "  -timeout duration\n")
	require.GreaterOrEqual(t, i, 0, help)
	section, _, _ := strings.Cut(help[i+len("  -timeout duration\n"):], "\n  -")
	assert.Equal(t, 1, strings.Count(section, "(default"), section)
	assert.Contains(t, section, "(default 9m0s)")
}

func FuzzShellCommands(f *testing.F) {
	for _, s := range []string{"cd . && rm -rf build", `echo "$(rm x)"`, "a | b || c; (d) `e` $(f $(g))",
		`bash -c "sh -c 'rm x'"`, "sudo -u", "'unterminated", `"also $(`, "\\", "env -"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range shellCommands(s) {
			if c == "" {
				t.Fatalf("empty command from %q", s)
			}
		}
	})
}
