package termsafe

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriterShowsWhatATerminalWouldDo: every probe is shown, none acts.
func TestWriterShowsWhatATerminalWouldDo(t *testing.T) {
	for in, want := range map[string]string{
		"erase\x1b[9A\x1b[J":        `erase\x1b[9A\x1b[J`,
		"clip\x1b]52;c;aGk=\x07":    `clip\x1b]52;c;aGk=\x07`,
		"csi\u009b2J":               "csi⟨U+009B⟩2J",
		"cr\rback\bdel\x7f":         `cr\x0dback\x08del\x7f`,
		"rtl\u202eabc\u2066x\u2069": "rtl⟨U+202E⟩abc⟨U+2066⟩x⟨U+2069⟩",
		"zero\u200bwidth\ufeff":     "zero⟨U+200B⟩width⟨U+FEFF⟩",
		"lines\nand\ttabs stay":     "lines\nand\ttabs stay",
		"bad \xff byte":             `bad \xff byte`,
		"sep\u2028x":                "sep⟨U+2028⟩x",
		"plain ünïcode — fine ✓ 日本": "plain ünïcode — fine ✓ 日本",
	} {
		var b bytes.Buffer
		w := New(&b)
		// One byte at a time: a character split across writes is held
		// back until it is whole.
		for i := range len(in) {
			_, err := w.Write([]byte{in[i]})
			require.NoError(t, err)
		}
		require.NoError(t, w.Flush())
		assert.Equal(t, want, b.String(), "%q", in)
	}
}

func TestJSONEscapesWhatTheWriterWouldShow(t *testing.T) {
	in := map[string]string{"q": "a\u009bb\u202ec\U000E0041d\x1b"}
	doc, err := json.Marshal(in)
	require.NoError(t, err)
	out := JSON(doc)
	assert.NotContains(t, string(out), "\u009b")
	assert.NotContains(t, string(out), "\u202e")
	assert.NotContains(t, string(out), "\U000E0041")
	var back map[string]string
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, in, back, "the same document")
}
