package domain

import (
	"math/rand/v2"
	"testing"
)

// TestTheASCIISkeletonIsTheSkeleton: the fast path for plain ASCII gives
// exactly what the full one gives.
func TestTheASCIISkeletonIsTheSkeleton(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = " aAbZz01lo.,-!?:()  xyDENY"
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		s := string(b)
		fast, ok := asciiSkeleton(s)
		if !ok {
			t.Fatalf("%q is ASCII", s)
		}
		if full := fullSkeleton(s); fast != full {
			t.Fatalf("Skeleton(%q): fast %q, full %q", s, fast, full)
		}
	}
}
