package fairclaim

import (
	"errors"
	"fmt"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/require"
)

// queues is a fake of due deliveries: project → lane → how many are due.
type queues map[string]map[string]int

func (q queues) claim(log *[]string) ClaimFunc {
	return func(p string, asked map[string]int) ([]lifecycle.Delivery, map[string]int, error) {
		counts := map[string]int{}
		var got []lifecycle.Delivery
		for l, w := range asked {
			n := min(w, q[p][l])
			q[p][l] -= n
			counts[l] = n
			for i := range n {
				got = append(got, lifecycle.Delivery{ID: fmt.Sprintf("%s/%s/%d", p, l, i), ProjectID: p})
			}
			*log = append(*log, fmt.Sprintf("%s %s %d", p, l, w))
		}
		return got, counts, nil
	}
}

func perProject(ds []lifecycle.Delivery) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		out[d.ProjectID]++
	}
	return out
}

func TestALongQueueDoesNotStarveTheOthers(t *testing.T) {
	q := queues{"a": {"x": 1000}, "b": {"x": 3}, "c": {"x": 1000}}
	var log []string
	got, err := Claim([]string{"a", "b", "c"}, 0, map[string]int{"x": 30}, q.claim(&log))
	require.NoError(t, err)
	require.Len(t, got, 30, "the whole want is claimed when enough is due")
	n := perProject(got)
	require.Equal(t, 3, n["b"], "the short queue is served in the first pass")
	require.GreaterOrEqual(t, n["a"], 10, "each project gets its share first")
	require.GreaterOrEqual(t, n["c"], 10, "each project gets its share first")
}

func TestTheSecondPassSkipsProjectsThatRanDry(t *testing.T) {
	q := queues{"a": {"x": 1}, "b": {"x": 100}}
	var log []string
	got, err := Claim([]string{"a", "b"}, 1, map[string]int{"x": 10}, q.claim(&log))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"a": 1, "b": 9}, perProject(got))
	require.Equal(t, []string{"b x 5", "a x 5", "b x 4"}, log, "b first (start 1); a, short of its share, not asked again")
}

func TestLanesAreSharedApart(t *testing.T) {
	q := queues{"a": {"web": 5, "mail": 50}, "b": {"web": 5, "mail": 50}}
	var log []string
	got, err := Claim([]string{"a", "b"}, 0, map[string]int{"web": 100, "mail": 4}, q.claim(&log))
	require.NoError(t, err)
	web, mail := 0, 0
	for _, d := range got {
		if len(d.ID) > 4 && d.ID[2:5] == "web" {
			web++
		} else {
			mail++
		}
	}
	require.Equal(t, 10, web, "every due webhook, whatever the mail lane's want")
	require.Equal(t, 4, mail, "the mail lane stops at its own want")
}

func TestAnErrorReturnsWhatWasClaimed(t *testing.T) {
	boom := errors.New("store away")
	calls := 0
	got, err := Claim([]string{"a", "b"}, 0, map[string]int{"x": 4}, func(p string, asked map[string]int) ([]lifecycle.Delivery, map[string]int, error) {
		calls++
		if p == "b" {
			return nil, nil, boom
		}
		return []lifecycle.Delivery{{ID: "1", ProjectID: p}}, map[string]int{"x": 1}, nil
	})
	require.ErrorIs(t, err, boom)
	require.Len(t, got, 1)
	require.Equal(t, 2, calls)
}
