package recorder

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// notExecutable is the usage error of a program that is a file without
// execute permission. A Python script given as the program (`p2ptrace
// record -n 2 train.py`, a user's first try) gets the command line that
// records it: its interpreter runs it, under the launcher its imports call
// for.
func notExecutable(prog string, ranks int) error {
	hint := pythonHint(prog, ranks)
	return fmt.Errorf("%w: %s is not executable%s", ErrUsage, prog, hint)
}

// pythonHint says how to record prog if it is a Python script (by its name
// or its #! line) with ranks ranks (0: not given), else "".
func pythonHint(prog string, ranks int) string {
	f, err := os.Open(prog)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	first, _, _ := bytes.Cut(head, []byte("\n"))
	if !strings.HasSuffix(prog, ".py") && !(bytes.HasPrefix(first, []byte("#!")) && bytes.Contains(first, []byte("python"))) {
		return ""
	}
	n := "N"
	if ranks > 0 {
		n = strconv.Itoa(ranks)
	}
	torch := fmt.Sprintf("p2ptrace record -n %s --launcher torch -- /usr/bin/python3 %s", n, prog)
	mpi := fmt.Sprintf("p2ptrace record -n %s -- /usr/bin/python3 %s", n, prog)
	switch hasTorch, hasMPI := bytes.Contains(head, []byte("torch.distributed")), bytes.Contains(head, []byte("mpi4py")); {
	case hasTorch && !hasMPI:
		return "; it is a Python script of torch.distributed: record it with `" + torch + "`"
	case hasMPI && !hasTorch:
		return "; it is a Python script of mpi4py: record it with `" + mpi + "`"
	}
	return "; it is a Python script: record torch.distributed with `" + torch + "`, mpi4py with `" + mpi + "`"
}
