package storetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Cluster is a Redis Cluster of masters on loopback, one redis-server each.
type Cluster struct {
	// URL selects the cluster through store.ParseURL:
	// redis+cluster://<first>?addr=<second>&addr=<third>.
	URL   string
	Nodes []*Server
}

// StartCluster starts masters (at least 3) redis-servers with cluster mode
// on, joins them with `redis-cli --cluster create`, and waits until every
// node reports cluster_state:ok. Each node lives in a directory under dir.
// Call Close when done.
func StartCluster(dir string, masters int) (*Cluster, error) {
	if masters < 3 {
		return nil, errors.New("a Redis Cluster needs at least 3 masters")
	}
	c := &Cluster{}
	var addrs []string
	for i := range masters {
		nd := filepath.Join(dir, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(nd, 0o700); err != nil {
			c.Close()
			return nil, err
		}
		bus, err := freePortErr()
		if err != nil {
			c.Close()
			return nil, err
		}
		s, err := StartServer(nd, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--cluster-port", fmt.Sprint(bus))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	if _, err := cli(append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...); err != nil {
		c.Close()
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, _ := n.Cli("cluster", "info")
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				return nil, fmt.Errorf("cluster did not become ready: node %s: %s", n.Addr, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.URL = "redis+cluster://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	return c, nil
}

// Close kills every node.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}

// Sentinel is a master, a replica and three Sentinels on loopback.
type Sentinel struct {
	// URL selects the master through the Sentinels:
	// redis+sentinel://<s1>?master_name=<Master>&addr=<s2>&addr=<s3>.
	URL       string
	Master    string // the monitored master's name
	Primary   *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinel starts a master with AOF, one replica of it and three
// Sentinels (quorum 2, master down after 1 s) and waits until the
// Sentinels see the replica, so a failover can happen. Call Close.
func StartSentinel(dir string) (*Sentinel, error) {
	sn := &Sentinel{Master: "askbridge-test"}
	mk := func(name string) (string, error) {
		d := filepath.Join(dir, name)
		return d, os.MkdirAll(d, 0o700)
	}
	d, err := mk("primary")
	if err != nil {
		return nil, err
	}
	if sn.Primary, err = StartServer(d, "--appendonly", "yes", "--appendfsync", "everysec"); err != nil {
		return nil, err
	}
	if d, err = mk("replica"); err != nil {
		sn.Close()
		return nil, err
	}
	if sn.Replica, err = StartServer(d, "--appendonly", "yes", "--appendfsync", "everysec",
		"--replicaof", "127.0.0.1", fmt.Sprint(sn.Primary.Port)); err != nil {
		sn.Close()
		return nil, err
	}
	var addrs []string
	for i := range 3 {
		d, err := mk(fmt.Sprintf("sentinel%d", i))
		if err != nil {
			sn.Close()
			return nil, err
		}
		port, err := freePortErr()
		if err != nil {
			sn.Close()
			return nil, err
		}
		// Sentinel rewrites its configuration file, so each has its own.
		conf := filepath.Join(d, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
			port, d, sn.Master, sn.Primary.Port, sn.Master, sn.Master, sn.Master)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			sn.Close()
			return nil, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, Dir: d, args: []string{conf, "--sentinel"}}
		s.URL = "redis://" + s.Addr
		if err := s.start(); err != nil {
			sn.Close()
			return nil, err
		}
		sn.Sentinels = append(sn.Sentinels, s)
		addrs = append(addrs, s.Addr)
	}
	sn.URL = "redis+sentinel://" + addrs[0] + "?master_name=" + sn.Master + "&addr=" + strings.Join(addrs[1:], "&addr=")
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range sn.Sentinels {
		for {
			out, _ := s.Cli("sentinel", "replicas", sn.Master)
			other, _ := s.Cli("sentinel", "sentinels", sn.Master)
			if strings.Contains(out, fmt.Sprint(sn.Replica.Port)) && strings.Count(other, "127.0.0.1") >= 2 {
				break
			}
			if time.Now().After(deadline) {
				sn.Close()
				return nil, fmt.Errorf("sentinel %s does not see the replica and the other sentinels: %s / %s", s.Addr, out, other)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return sn, nil
}

// MasterAddr asks the first live Sentinel which address is the master now.
func (sn *Sentinel) MasterAddr() (string, error) {
	var last error
	for _, s := range sn.Sentinels {
		out, err := s.Cli("sentinel", "get-master-addr-by-name", sn.Master)
		if err != nil {
			last = err
			continue
		}
		f := strings.Fields(out)
		if len(f) == 2 {
			return f[0] + ":" + f[1], nil
		}
	}
	return "", fmt.Errorf("no sentinel names a master: %v", last)
}

// Close kills every process.
func (sn *Sentinel) Close() {
	for _, s := range append([]*Server{sn.Primary, sn.Replica}, sn.Sentinels...) {
		if s != nil {
			s.Kill()
		}
	}
}

// HaveRedisCli reports whether redis-cli (package redis-tools) is installed.
func HaveRedisCli() bool {
	_, err := exec.LookPath("redis-cli")
	return err == nil
}
