package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/store/native"
)

const backupUsage = `usage: askbridge backup [--url URL] FILE

Asks the running bridge for a consistent copy of its embedded store's data
file, taken while it serves (everything committed when the copy starts),
checks it and writes it to FILE. FILE is replaced only by a complete copy
that checked whole. The bridge is BRIDGE_URL, else http://BRIDGE_ADDR.

It needs the token of an operator of every project (BRIDGE_TOKEN; in the
configuration operators[].projects: ["*"]); a bridge without tokens hands a
backup only to a request from its own host. A bridge on Redis keeps no data
file: back up Redis instead. To restore, stop the bridge, put the backup in
place of askbridge.db in its data directory, and start it.`

const checkDataUsage = `usage: askbridge check-data FILE

Checks a data file of the embedded store (a backup, or askbridge.db of a
stopped bridge) without changing it: exits 0 and says what it holds when it
is whole, 1 and says what is wrong and what to do when it is not.`

// clientTokenVar is the client commands' token (agent/cli), which backup
// sends; it is not one of serve's, so its help does not list it.
const clientTokenVar = "BRIDGE_TOKEN"

func backupCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("url", "", "the bridge (default BRIDGE_URL, else http://BRIDGE_ADDR)")
	if code, ok := parseCommand(fs, args, backupUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "askbridge backup: give the file to write the backup to\n\n%s\n", backupUsage)
		return 2
	}
	file := fs.Arg(0)
	if *base == "" {
		*base = getenv(clientURLVar)
	}
	if *base == "" {
		*base = "http://" + localAddr(envOr(getenv, "BRIDGE_ADDR", "127.0.0.1:8080"))
	}
	url := strings.TrimRight(*base, "/") + api.BackupPath
	sum, err := fetchBackup(ctx, url, getenv(clientTokenVar), file)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: a backup of the embedded store, checked whole; %s\n", file, describeData(sum))
	return 0
}

// fetchBackup downloads the backup at url into a file beside file, checks
// it, and renames it to file.
func fetchBackup(ctx context.Context, url, token, file string) (native.Summary, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return native.Summary{}, fmt.Errorf("--url: %q is not a URL", url)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return native.Summary{}, fmt.Errorf("no answer from %s (%v): is the bridge running there? (BRIDGE_URL)", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e) == nil && e.Error.Message != "" {
			return native.Summary{}, fmt.Errorf("the bridge refused (%s): %s", resp.Status, e.Error.Message)
		}
		return native.Summary{}, fmt.Errorf("the bridge answered %s", resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".partial-*")
	if err != nil {
		return native.Summary{}, fmt.Errorf("cannot write beside %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, resp.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return native.Summary{}, fmt.Errorf("the copy did not arrive whole (%v); nothing was written to %s", err, file)
	}
	sum, err := native.Check(tmp.Name())
	if err != nil {
		return native.Summary{}, fmt.Errorf("the copy did not check whole, so %s was left as it was: %v", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return native.Summary{}, err
	}
	if d, err := os.Open(filepath.Dir(file)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return sum, nil
}

func checkDataCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-data", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if code, ok := parseCommand(fs, args, checkDataUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "askbridge check-data: give the data file to check\n\n%s\n", checkDataUsage)
		return 2
	}
	sum, err := native.Check(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "askbridge check-data: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s is whole: %s\n", fs.Arg(0), describeData(sum))
	return 0
}

// parseCommand parses a command's flags, printing its usage for --help
// (code 0) or a bad flag (code 2).
func parseCommand(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (int, bool) {
	err := fs.Parse(args)
	if err == nil {
		return 0, true
	}
	w, code := stderr, 2
	if errors.Is(err, flag.ErrHelp) {
		w, code = stdout, 0
	} else {
		fmt.Fprintf(stderr, "askbridge %s: %v\n\n", fs.Name(), err)
	}
	fmt.Fprintln(w, usage)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	return code, false
}

// describeData says what a data file holds.
func describeData(s native.Summary) string {
	total := 0
	statuses := make([]string, 0, len(s.Questions))
	for st, n := range s.Questions {
		total += n
		statuses = append(statuses, st)
	}
	sort.Strings(statuses)
	parts := make([]string, 0, len(statuses))
	for _, st := range statuses {
		parts = append(parts, fmt.Sprintf("%d %s", s.Questions[st], st))
	}
	out := fmt.Sprintf("%d bytes, %d project(s), %d question(s)", s.Bytes, s.Projects, total)
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	if !s.Newest.IsZero() {
		out += ", the newest change at " + s.Newest.UTC().Format(time.RFC3339)
	}
	return out
}
