package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// freePorts returns n UDP ports that were free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var conns []*net.UDPConn
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	for _, c := range conns {
		c.Close()
	}
	return ports
}

// TestPeerProcesses plays a 3-player match as three "rewind peer"
// processes (the test binary started as the command) over loopback UDP,
// each sending through a link conditioner (10 ms, 5% loss), with a fourth
// process spectating peer 0. Every process must exit 0 having finished the match, and print the
// same digest over states 0..90.
func TestPeerProcesses(t *testing.T) {
	// Not parallel: its four processes (each with its own runtime and
	// garbage collector) would compete for the CPU with the real-time
	// demos of this process just as they start; it runs before them.
	bin, err := os.Executable() // the test binary, which is the command under asRewind
	if err != nil {
		t.Fatal(err)
	}
	const peers, frames = 3, 90
	ports := freePorts(t, peers+1)
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[i]) }
	common := []string{"--frames", fmt.Sprint(frames), "--seed", "5", "--latency", "10ms", "--loss", "0.05",
		"--drain", "500ms", "--timeout", "30s", "--stats", "0", "--json"}
	var args [][]string
	for i := range peers {
		var remotes []string
		for j := range peers {
			if j != i {
				remotes = append(remotes, addr(j))
			}
		}
		a := []string{"peer", "--listen", addr(i), "--handle", fmt.Sprint(i), "--remote", strings.Join(remotes, ",")}
		if i == 0 {
			a = append(a, "--spectators", addr(peers))
		}
		args = append(args, a)
	}
	args = append(args, []string{"peer", "--listen", addr(peers), "--spectate", addr(0), "--players", fmt.Sprint(peers)})

	cmds := make([]*exec.Cmd, len(args))
	outs := make([]*bytes.Buffer, len(args))
	for i, a := range args {
		cmds[i] = exec.Command(bin, append(a, common...)...)
		cmds[i].Env = append(os.Environ(), asRewind+"=1")
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], io.Discard
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var first peerResult
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("process %d: %v, output %s", i, err, outs[i])
			continue
		}
		res := peerResult{demoSummary: &demoSummary{}}
		if err := json.Unmarshal(outs[i].Bytes(), &res); err != nil {
			t.Fatalf("process %d printed %q: %v", i, outs[i], err)
		}
		t.Logf("%s %d: digest %s over %d frames, %d rollbacks, score %v", res.Mode, res.Handle, res.Digest, res.DigestFrames, res.Rollbacks, res.Score)
		handle := i
		if i == peers {
			handle = -1
		}
		if res.Handle != handle || res.DigestFrames != frames+1 || res.Desyncs != 0 || len(res.Score) != peers || !res.FramesReached || !res.Finished {
			t.Errorf("process %d: %s", i, outs[i])
		}
		if i == 0 {
			first = res
		} else if res.Digest != first.Digest {
			t.Errorf("process %d digest %s, peer 0 %s", i, res.Digest, first.Digest)
		}
	}
}

func TestPeerUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"peer"}, "--remote is required"},
		{[]string{"peer", "--remote", "127.0.0.1:9", "--handle", "2"}, "--handle 2"},
		{[]string{"peer", "--remote", "localhost"}, "want IP:PORT"},
		{[]string{"peer", "--remote", "127.0.0.1:9", "--loss", "3"}, "probabilities"},
		{[]string{"peer", "--spectate", "127.0.0.1:9", "--remote", "127.0.0.1:8"}, "has no --remote"},
		{[]string{"peer", "--spectate", "127.0.0.1:9,127.0.0.1:8"}, "one address"},
		{[]string{"peer", "--remote", "127.0.0.1:9", "--rejoin", "--rejoin-bytes", "0"}, "--rejoin needs"},
		{[]string{"peer", "--remote", "127.0.0.1:9", "--rejoin-bytes", "9999999"}, "--rejoin-bytes"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errOut); code != 2 || !bytes.Contains(errOut.Bytes(), []byte(c.want)) {
			t.Errorf("rewind %q: exit %d, stderr %q (want 2 and %q)", c.args, code, errOut.String(), c.want)
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"help", "peer"}, &out, &out); code != 0 || !bytes.Contains(out.Bytes(), []byte("--handle 1 --remote")) {
		t.Errorf("help peer: exit %d, %q", code, out.String())
	}
}
