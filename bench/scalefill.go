package main

import "fmt"

// hostsOnTheFill prints (a) with 100,000 MCP hosts of a kind waiting on
// Redis, their questions the fill's 100,000 pending, as the long-polls'
// (a) counts its waiters: the bridge with no host (rss0), + 100,000 × what
// a host added to the bridge (its question's share on the bridge's side
// included), + redis-server as the fill left it (redisFill). The upper
// bound beside it takes redis-server as it is then, holding every question
// the run asked before (the asks of (c), the other kinds' hosts) besides
// the fill's.
func hostsOnTheFill(tag, kind string, pending int, rss0 int64, perHost float64, redisFill int64) {
	const hosts = 100_000
	if pending < hosts {
		fmt.Printf("%s (a) for MCP hosts (%s), their questions the pending ones: not computed (the fill left %d pending, not %d: -records, -scale-pending)\n", tag, kind, pending, hosts)
		return
	}
	at := float64(rss0) + perHost*hosts + float64(redisFill)
	fmt.Printf("%s (a) for MCP hosts (%s), their questions the %d pending (as the long-polls wait on them): the bridge with no host, %.0f MB, + %d × %.2f KB a host, + redis-server holding the fill, %.0f MB: %.0f MB; target ≤ 600 MB: %s\n",
		tag, kind, pending, mB(rss0), hosts, perHost/1024, mB(redisFill), at/1e6, verdict(at <= 600e6))
}
