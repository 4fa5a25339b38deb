//go:build !amd64

package gpu

import "runtime"

// callerPC returns the program counter of the user code that called the
// exported runtime method which called callerPC.
func callerPC() uintptr {
	var pc [1]uintptr
	if runtime.Callers(3, pc[:]) == 0 {
		return 0
	}
	return pc[0]
}
