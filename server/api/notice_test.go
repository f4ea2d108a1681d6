package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"demo", "demo", 0}, {"dmeo", "demo", 1}, {"dem", "demo", 1}, {"demoo", "demo", 1}, {"ops", "demo", 4}, {"", "ab", 2}, {"ca", "abc", 3}} {
		assert.Equal(t, c.d, editDistance(c.a, c.b), "%s %s", c.a, c.b)
	}
}
