package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/askbridge/askbridge/domain"
	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the data file to w while the store
// serves: everything committed when it starts, nothing after. The copy is
// made in one read transaction into a file beside the data file (so the
// transaction, which holds back the file's growth, lasts as long as the
// local copy and not as long as w takes), checked (Verify), then copied
// to w.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if s.db == nil {
		return 0, domain.Errorf(domain.EConflict, "this bridge keeps its state in memory (no data directory): "+
			"there is no data file to back up; give it one with --data-dir (BRIDGE_DATA_DIR) to keep its state")
	}
	tmp, err := os.CreateTemp(s.opts.Dir, FileName+".backup-*")
	if err != nil {
		return 0, &unavailable{cause: fmt.Errorf("cannot make the backup copy in %s: %w", s.opts.Dir, err)}
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	err = s.db.View(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(tmp)
		return err
	})
	if err != nil {
		return 0, &unavailable{cause: diskProblem(s.opts.Dir, err)}
	}
	if err := Verify(tmp.Name()); err != nil {
		return 0, &unavailable{cause: fmt.Errorf("the backup copy did not verify: %w", err)}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return io.Copy(w, tmp)
}

// Summary is what a data file holds (Check).
type Summary struct {
	Bytes     int64
	Projects  int
	Questions map[string]int // by status
	// Newest is when the newest question was asked or last changed.
	Newest time.Time
}

// Check verifies the data file at path (Verify) and counts what it holds,
// without writing to it. It is refused with ErrInUse while a running
// bridge holds the file: check a backup instead.
func Check(path string) (Summary, error) {
	var sum Summary
	st, err := os.Stat(path)
	if err != nil {
		return sum, fmt.Errorf("cannot read the data file %s: %w", path, err)
	}
	sum.Bytes = st.Size()
	err = readLocked(path, 0, func() error {
		if err := Verify(path); err != nil {
			return err
		}
		db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 300 * time.Millisecond})
		if err != nil {
			return fmt.Errorf("cannot open the data file %s: %w", path, err)
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error { return sum.count(tx) })
	})
	if errors.Is(err, errLocked) {
		return sum, fmt.Errorf("%w: a running bridge holds %s; check a backup of it instead (askbridge backup FILE)", ErrInUse, path)
	}
	return sum, err
}

func (sum *Summary) count(tx *bolt.Tx) error {
	sum.Questions = map[string]int{}
	if b := tx.Bucket(bProj); b != nil {
		sum.Projects = b.Stats().KeyN
	}
	b := tx.Bucket(bQ)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error {
		line, _, _ := bytes.Cut(v, []byte{'\n'})
		var m struct {
			Status  string `json:"st"`
			Updated int64  `json:"u"`
		}
		if json.Unmarshal(line, &m) != nil {
			m.Status = "unreadable"
		}
		sum.Questions[m.Status]++
		if t := time.Unix(0, m.Updated); t.After(sum.Newest) {
			sum.Newest = t
		}
		return nil
	})
}
