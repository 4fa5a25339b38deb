package recorder

import (
	"errors"
	"strings"
	"testing"
)

// TestIsTorchrun: torchrun by name, and python -m torch.distributed.run or
// .launch; nothing else.
func TestIsTorchrun(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want bool
	}{
		{[]string{"/usr/bin/torchrun", "--nproc_per_node", "2", "train.py"}, true},
		{[]string{"torchrun"}, true},
		{[]string{"/usr/bin/python3", "-m", "torch.distributed.run", "train.py"}, true},
		{[]string{"python3.11", "-m", "torch.distributed.launch", "train.py"}, true},
		{[]string{"/usr/bin/python3", "train.py"}, false},
		{[]string{"/usr/bin/python3", "-m", "torch.distributed"}, false},
		{[]string{"./torchrun.sh"}, false},
		{[]string{"./testdata/train/ring", "-m", "torch.distributed.run"}, false},
	} {
		if got := IsTorchrun(tc.cmd[0], tc.cmd[1:]); got != tc.want {
			t.Errorf("IsTorchrun(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestTorchrunRanks: the rank count of a torchrun command line, from its
// options only (not the script's), its environment defaults, or -n; and
// the usage errors: several nodes, -n disagreeing, a count p2ptrace cannot
// know without -n.
func TestTorchrunRanks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  string
		ranks int               // -n
		env   map[string]string // PET_*
		want  int
		err   string
	}{
		{name: "nproc_per_node", args: "--standalone --nproc_per_node 4 --redirects 1 --tee 2 train.py", want: 4},
		{name: "dashes and =", args: "--nproc-per-node=3 train.py", want: 3},
		{name: "default one", args: "--standalone train.py", want: 1},
		{name: "short option values", args: "-r1 -t 2 --nproc_per_node 2 train.py", want: 2},
		{name: "script's own flags", args: "--nproc_per_node 2 train.py --nproc_per_node 5 --nnodes 3", want: 2},
		{name: "module script", args: "-m --nproc_per_node 2 pkg.train", want: 2},
		{name: "environment default", args: "train.py", env: map[string]string{"PET_NPROC_PER_NODE": "3"}, want: 3},
		{name: "flag over environment", args: "--nproc_per_node 2 train.py", env: map[string]string{"PET_NPROC_PER_NODE": "3"}, want: 2},
		{name: "-n agrees", args: "--nproc_per_node 2 train.py", ranks: 2, want: 2},
		{name: "nnodes 1:1", args: "--nnodes 1:1 --nproc_per_node 2 train.py", want: 2},
		{name: "auto with -n", args: "--nproc_per_node auto train.py", ranks: 3, want: 3},
		{name: "-n disagrees", args: "--nproc_per_node 2 train.py", ranks: 3, err: "-n 3, but torchrun --nproc_per_node 2 starts 2 ranks"},
		{name: "-n against the default", args: "train.py", ranks: 2, err: "-n 2, but torchrun --nproc_per_node (default) 1 starts 1 ranks"},
		{name: "auto without -n", args: "--nproc_per_node auto train.py", err: "torchrun --nproc_per_node auto: p2ptrace cannot tell how many ranks that starts: give the number with -n N too"},
		{name: "not a count", args: "--nproc_per_node=0 train.py", err: `torchrun --nproc_per_node "0": want a number of ranks`},
		{name: "two nodes", args: "--nnodes 2 --nproc_per_node 2 train.py", err: "torchrun --nnodes 2: p2ptrace record watches the ranks of one node: give --nnodes 1"},
		{name: "elastic nodes", args: "--nnodes=1:4 train.py", err: "torchrun --nnodes 1:4: p2ptrace record watches the ranks of one node"},
		{name: "nodes from the environment", args: "train.py", env: map[string]string{"PET_NNODES": "2"}, err: "torchrun PET_NNODES 2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := torchrunRanks(strings.Fields(tc.args), tc.ranks, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %d, %v; want a usage error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestTorchrunHint: the failure of Debian's torchrun 1.13 under Python 3.11
// (its stderr's last lines, as measured) gets the workaround; another
// failure does not.
func TestTorchrunHint(t *testing.T) {
	debian := `  File "/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py", line 162, in to_map
    map[i] = val_or_map.get(i, Std.NONE)
             ^^^^^^^^^^^^^^
AttributeError: 'NoneType' object has no attribute 'get'
`
	if h := torchrunHint(debian); !strings.Contains(h, "give it --redirects 1 --tee 1") {
		t.Errorf("hint %q, want the --redirects 1 --tee 1 workaround", h)
	}
	if h := torchrunHint("ModuleNotFoundError: No module named 'torch'\n"); h != "" {
		t.Errorf("hint %q for another failure, want none", h)
	}
}
