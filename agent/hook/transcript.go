package hook

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// transcript follows a Claude Code session transcript (transcript_path:
// JSONL, appended as the session goes on) to learn two things the
// PermissionRequest event does not carry: which tool call it is about (its
// tool_use_id) and whether the person has already decided in the terminal
// (a tool_result for that call, or the tool's own progress, appeared).
// Claude Code neither stops nor tells a PermissionRequest hook when that
// happens, so the hook reads it here.
type transcript struct {
	path    string
	off     int64
	partial []byte
	seq     int
	// open holds the tool calls not yet resolved, by id.
	open map[string]toolCall
	// done holds the ids resolved since the transcript was first read.
	done map[string]bool
	// lines counts the lines read (names a message without an id).
	lines int
}

type toolCall struct {
	name  string
	input [32]byte // hash of the canonical input
	seq   int
	// msg names the assistant message that made the call (its message.id,
	// else its transcript line): the calls of one message are siblings,
	// parallel tool calls of one turn.
	msg string
	// raw is the call's input as written (nil when too large to ask about).
	raw json.RawMessage
}

func newTranscript(path string) *transcript {
	return &transcript{path: path, open: map[string]toolCall{}, done: map[string]bool{}}
}

// maxTranscriptLine bounds one line kept in memory; longer lines (a huge
// file written by a tool) are skipped, they carry no tool_use we look for
// in their tail.
const maxTranscriptLine = 16 << 20

// poll reads what was appended since the last call.
func (t *transcript) poll() error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < t.off {
		// Rewritten (compacted) under us: start over.
		t.off, t.partial = 0, nil
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		chunk, err := r.ReadSlice('\n')
		t.off += int64(len(chunk))
		if len(t.partial)+len(chunk) <= maxTranscriptLine {
			t.partial = append(t.partial, chunk...)
		} else {
			t.partial = append(t.partial[:0], '!') // poison: skipped at its end
		}
		switch {
		case err == nil:
			t.line(t.partial)
			t.partial = t.partial[:0]
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil // a partial last line waits for its end
		default:
			return err
		}
	}
}

// line records one transcript entry's tool calls and results.
func (t *transcript) line(b []byte) {
	if !bytes.Contains(b, []byte(`"tool_use`)) && !bytes.Contains(b, []byte(`"tool_result"`)) &&
		!bytes.Contains(b, []byte(`parentToolUseID`)) {
		return
	}
	t.lines++
	var e struct {
		Type    string `json:"type"`
		UUID    string `json:"uuid"`
		Message struct {
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		ParentToolUseID string `json:"parentToolUseID"`
		Data            struct {
			Type string `json:"type"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &e) != nil {
		return
	}
	// A tool's own progress (a running Bash command, an MCP call) means it
	// was allowed; a hook's progress (this very hook) means nothing.
	if e.Type == "progress" && e.ParentToolUseID != "" && e.Data.Type != "hook_progress" {
		t.resolve(e.ParentToolUseID)
		return
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if json.Unmarshal(e.Message.Content, &blocks) != nil {
		return
	}
	msg := e.Message.ID
	if msg == "" {
		msg = "line:" + strconv.Itoa(t.lines)
	}
	for _, bl := range blocks {
		switch {
		case bl.Type == "tool_use" && bl.ID != "" && !t.done[bl.ID]:
			t.seq++
			c := toolCall{name: bl.Name, input: inputHash(bl.Input), seq: t.seq, msg: msg}
			if len(bl.Input) <= domain.MaxActionInput {
				c.raw = append(json.RawMessage(nil), bl.Input...)
			}
			t.open[bl.ID] = c
		case bl.Type == "tool_result" && bl.ToolUseID != "":
			t.resolve(bl.ToolUseID)
		}
	}
}

func (t *transcript) resolve(id string) {
	delete(t.open, id)
	t.done[id] = true
}

// sibling is an unresolved tool call of the same assistant message as
// another: a parallel tool call of the same turn.
type sibling struct {
	id, name string
	input    json.RawMessage
}

// siblings returns the unresolved calls of the assistant message that made
// call id, in the order they were written, id itself included.
func (t *transcript) siblings(id string) []sibling {
	own, ok := t.open[id]
	if !ok {
		return nil
	}
	type ordered struct {
		sibling
		seq int
	}
	var all []ordered
	for sid, c := range t.open {
		if sid == id || (c.msg == own.msg && c.raw != nil) {
			all = append(all, ordered{sibling{id: sid, name: c.name, input: c.raw}, c.seq})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	out := make([]sibling, len(all))
	for i, o := range all {
		out[i] = o.sibling
	}
	return out
}

// find returns the id of the unresolved call of tool with this input: the
// latest one with exactly this input, else (loose: Claude Code may have
// filled in defaults) the only unresolved call of the tool, else "".
func (t *transcript) find(tool string, input json.RawMessage, loose bool) string {
	h := inputHash(input)
	best, bestSeq, only, n := "", -1, "", 0
	for id, c := range t.open {
		if c.name != tool {
			continue
		}
		n++
		only = id
		if c.input == h && c.seq > bestSeq {
			best, bestSeq = id, c.seq
		}
	}
	if best != "" {
		return best
	}
	if loose && n == 1 {
		return only
	}
	return ""
}

// inputHash hashes a tool input in canonical form (keys sorted), so the
// transcript's copy and the hook event's copy compare equal.
func inputHash(raw json.RawMessage) [32]byte {
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			raw = b
		}
	}
	return sha256.Sum256(raw)
}

// Transcript polling: how often, and how long the hook waits at start for
// the tool call to show up in the transcript (Claude Code writes it before
// asking for permission, but the write may lag the hook's start a little).
var (
	transcriptPoll   = 200 * time.Millisecond
	transcriptSettle = time.Second
	// transcriptQuiet is the pause between reads while the first hook of a
	// turn waits for its assistant message's lines (two quiet reads in a
	// row: the message is written).
	transcriptQuiet = 40 * time.Millisecond
)

// lookup finds the tool call's id, waiting up to transcriptSettle for it
// to be written.
func (t *transcript) lookup(ctx context.Context, tool string, input json.RawMessage) string {
	deadline := time.Now().Add(transcriptSettle)
	for {
		last := time.Now().After(deadline)
		if err := t.poll(); err == nil {
			if id := t.find(tool, input, last); id != "" {
				return id
			}
		} else if errors.Is(err, os.ErrNotExist) && t.off == 0 {
			return ""
		}
		if last {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(transcriptPoll / 2):
		}
	}
}

// watch calls decided once the call id (or, while id is "", the call of
// tool with input, once it appears) is resolved in the transcript, and
// returns when ctx ends.
func (t *transcript) watch(ctx context.Context, id, tool string, input json.RawMessage, decided func()) {
	tick := time.NewTicker(transcriptPoll)
	defer tick.Stop()
	for {
		if t.poll() == nil {
			if id == "" {
				id = t.find(tool, input, false)
			}
			if id != "" && t.done[id] {
				decided()
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
