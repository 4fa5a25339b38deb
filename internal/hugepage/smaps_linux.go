package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Kernel reports whether the kernel has transparent huge pages: then
// advice marks the memory (Advised), whatever its "enabled" setting.
func Kernel() bool {
	_, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil
}

// Advised reports whether the mapping that holds address a is advised to
// use huge pages (the "hg" flag of /proc/self/smaps). For tests and
// diagnostics: it reads the whole file.
func Advised(a uintptr) (bool, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		// A mapping's first line: "lo-hi perms offset dev inode path".
		if span, _, _ := strings.Cut(line, " "); !strings.HasSuffix(span, ":") {
			if lo, hi, ok := strings.Cut(span, "-"); ok {
				l, err1 := strconv.ParseUint(lo, 16, 64)
				h, err2 := strconv.ParseUint(hi, 16, 64)
				if err1 == nil && err2 == nil {
					in = uint64(a) >= l && uint64(a) < h
					continue
				}
			}
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			for _, fl := range strings.Fields(line)[1:] {
				if fl == "hg" {
					return true, nil
				}
			}
			return false, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return false, fmt.Errorf("hugepage: no mapping holds %#x", a)
}
